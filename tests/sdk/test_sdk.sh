#!/bin/sh
# The plugin SDK end to end (TAP): install a build into a temporary DESTDIR,
# build plugins/example out of tree with only `pkg-config hipkit-plugin`,
# and load it with the INSTALLED hipkit through HIPKIT_PLUGIN_PATH.
# $1: the build folder (already built). $2: the source folder.
# MESON, CC and PKG_CONFIG may name the programs to use.
set -u
BUILD=$(cd "$1" && pwd) || exit 1
SRC=$(cd "$2" && pwd) || exit 1
MESON=${MESON:-meson}
CC=${CC:-cc}
PKG_CONFIG_PROG=${PKG_CONFIG:-pkg-config}
unset PKG_CONFIG CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH PKG_CONFIG_SYSROOT_DIR \
    PKG_CONFIG_LIBDIR HIPKIT_PLUGIN_PATH

for prog in "$PKG_CONFIG_PROG" make "$CC" "$MESON"; do
    if ! command -v "$prog" >/dev/null 2>&1; then
        echo "1..0 # SKIP $prog not found"
        exit 0
    fi
done
if [ ! -x "$BUILD/src/repl/hipkit" ]; then
    echo "1..0 # SKIP this build has no hipkit program (Lua disabled)"
    exit 0
fi

umask 022
T=$(mktemp -d "${TMPDIR:-/tmp}/hipkit-sdk.XXXXXX") || exit 1
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
export HIPKIT_CACHE_DIR="$T/cache" HOME="$T/home" XDG_STATE_HOME="$T/state"
mkdir -p "$HOME"
D=$T/destdir
n=0
failed=0
ok() { # ok STATUS NAME
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
diag() { sed 's/^/# /' "$@"; }
finish() { echo "1..$n"; exit "$failed"; }

# 1. Install into DESTDIR (no rebuild: meson test has built it already).
"$MESON" install -C "$BUILD" --no-rebuild --destdir "$D" >"$T/install.log" 2>&1
rc=$?
pc=$(find "$D" -name hipkit-plugin.pc -path '*/pkgconfig/*' | head -n 1)
if [ "$rc" -eq 0 ] && [ -n "$pc" ] && [ -f "$(dirname "$pc")/hipkit.pc" ]; then
    ok 0 "meson install --destdir installs hipkit-plugin.pc and hipkit.pc"
else
    ok 1 "meson install --destdir installs hipkit-plugin.pc and hipkit.pc"; diag "$T/install.log"
    finish
fi

# The .pc files say the real prefix (/usr/local...); point it into DESTDIR.
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
prefix=$("$PKG_CONFIG_PROG" --variable=prefix hipkit-plugin)
P=$D$prefix
PKG_CONFIG="$PKG_CONFIG_PROG --define-variable=prefix=$P"
pkgc() { $PKG_CONFIG "$@"; }
trim() { printf '%s' "$1" | sed 's/^ *//; s/ *$//'; }

cflags=$(pkgc --cflags hipkit-plugin)
includedir=$(pkgc --variable=includedir hipkit-plugin)
libdir=$(pkgc --variable=libdir hipkit-plugin)
plugindir=$(pkgc --variable=plugindir hipkit-plugin)
if [ "$(trim "$cflags")" = "-I$includedir" ] && [ -f "$includedir/hipkit/plugin.h" ] &&
    [ -z "$(pkgc --libs hipkit-plugin | tr -d ' ')" ] &&
    [ "$plugindir" = "$libdir/hipkit/plugins" ] && [ -d "$plugindir" ]; then
    ok 0 "hipkit-plugin.pc: Cflags the installed include folder, no Libs, plugindir LIBDIR/hipkit/plugins"
else
    ok 1 "hipkit-plugin.pc: Cflags the installed include folder, no Libs, plugindir LIBDIR/hipkit/plugins"
    echo "# cflags '$cflags' includedir '$includedir' libs '$(pkgc --libs hipkit-plugin)' plugindir '$plugindir'"
fi
libs=$(pkgc --libs hipkit)
case " $libs " in
*" -lhipkit "*) [ "$(trim "$(pkgc --cflags hipkit)")" = "-I$includedir" ]; ok $? "hipkit.pc: -lhipkit, Cflags the include folder" ;;
*) ok 1 "hipkit.pc: -lhipkit, Cflags the include folder"; echo "# libs '$libs'" ;;
esac

# 2. The example, copied out of the tree and built with pkg-config's flags only.
W=$T/work
mkdir -p "$W"
cp -R "$SRC/plugins/example" "$W/example"
rm -f "$W/example/hipkit-plugin-example.so" "$W/example/example_hip.h"
make -C "$W/example" CC="$CC" PKG_CONFIG="$PKG_CONFIG" >"$T/make.log" 2>&1
rc=$?
so=$W/example/hipkit-plugin-example.so
if [ "$rc" -eq 0 ] && [ -f "$so" ]; then ok 0 "make builds hipkit-plugin-example.so out of tree"
else ok 1 "make builds hipkit-plugin-example.so out of tree"; diag "$T/make.log"; fi

# The compile line has pkg-config's -I and no other, and nothing from the
# source tree; the header it read is the installed one.
compile=$(grep -e ' -shared' "$T/make.log")
others=$(printf '%s\n' "$compile" | tr ' ' '\n' | grep '^-I' | grep -vx -- "-I$includedir")
# shellcheck disable=SC2086,SC1003 # $cflags is a list of words
deps=$(cd "$W/example" && "$CC" $cflags -M example.c 2>&1 | tr -s ' \\' '\n' | grep 'plugin\.h$')
if [ -n "$compile" ] && [ -z "$others" ] && ! grep -qF "$SRC" "$T/make.log" &&
    printf '%s\n' "$compile" | grep -qF -- "-I$includedir" &&
    [ "$deps" = "$includedir/hipkit/plugin.h" ]; then
    ok 0 "the compile used only pkg-config's flags (plugin.h from the install)"
else
    ok 1 "the compile used only pkg-config's flags (plugin.h from the install)"
    diag "$T/make.log"; echo "# plugin.h read from: $deps"
fi

# 3. The installed hipkit, with the installed libhipkit, loads it.
hipkit_bin=$(pkgc --variable=prefix hipkit-plugin)/bin/hipkit
[ -x "$hipkit_bin" ] || hipkit_bin=$(find "$D" -path '*/bin/hipkit' | head -n 1)
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
run_hk() { # run_hk PLUGIN_PATH LUA: stdout $T/out, stderr $T/err, status $rc
    HIPKIT_PLUGIN_PATH=$1 "$hipkit_bin" -e "$2" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
}
check_lua='
local f = io.open("/proc/self/maps")
for l in (f and f:lines() or function() end) do
  local p = l:match("(/%S*libhipkit%.so%S*)")
  if p then print("lib " .. p) break end
end
if f then f:close() end
for _, p in ipairs(hk.plugins()) do
  print("plugin " .. p.name .. " " .. (p.error or "-") .. " " .. #p.kernels)
  for _, k in ipairs(p.kernels) do print("kernel " .. k.name .. "(" .. k.signature .. ")") end
end
local x = hk.from({1, 2, 3}, "f32")
local y = hk.alloc(3, "f32")
hk.ops.example.scale_add(x, y, 2, 0.5, 3)
print("small", y[1], y[2], y[3])
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
print("seed " .. seed)
for _, n in ipairs({1, 1000003}) do
  local xs = hk.alloc(n, "f32"):rand{lo = -3, hi = 3}
  local ys = hk.alloc(n, "f32"):fill(0 / 0)
  local a, b = math.random() * 4 - 2, math.random() * 4 - 2
  hk.ops.example.scale_add(xs, ys, a, b, n)
  print("ref " .. n .. " " .. tostring(ys:allclose(function(i) return a * xs[i] + b end, 1e-6, 1e-6)))
end'
run_hk "$W/example" "$check_lua"
if [ "$rc" -eq 0 ] && grep -qx 'plugin example - 1' "$T/out" &&
    [ "$(grep -c '^plugin ' "$T/out")" -eq 1 ] &&
    grep -qxF 'kernel scale_add(const float *x, float *y, float a, float b, size_t n)' "$T/out"; then
    ok 0 "installed hipkit lists the example family (HIPKIT_PLUGIN_PATH), and no other"
else
    ok 1 "installed hipkit lists the example family (HIPKIT_PLUGIN_PATH), and no other"
    diag "$T/out" "$T/err"; echo "# status $rc"
fi
lib=$(sed -n 's/^lib //p' "$T/out")
if [ ! -r /proc/self/maps ]; then
    echo "ok $((n += 1)) - the installed libhipkit ran # SKIP no /proc/self/maps"
else
    case $lib in
    "$libdir"/libhipkit.so*) ok 0 "the installed libhipkit ran ($lib)" ;;
    *) ok 1 "the installed libhipkit ran (got '$lib')" ;;
    esac
fi
grep '^seed ' "$T/out" | sed 's/^/# /'
[ "$(grep '^small' "$T/out")" = "$(printf 'small\t2.5\t4.5\t6.5')" ]
ok $? "scale_add(x, y, 2, 0.5, 3) on {1, 2, 3} gives {2.5, 4.5, 6.5}"
grep -qx 'ref 1 true' "$T/out" && grep -qx 'ref 1000003 true' "$T/out"
ok $? "scale_add matches the Lua reference a*x+b over 1 and 1000003 elements"

# 4. A world-writable folder, then a world-writable plugin file: refused.
cp -R "$W/example" "$T/open"
chmod 777 "$T/open"
run_hk "$T/open" 'print(pcall(function() return hk.ops.example end))'
if grep -qF "folder $T/open is world-writable; its plugins are not loaded" "$T/err" &&
    grep -q '^false' "$T/out"; then
    ok 0 "a world-writable folder is refused with its message"
else
    ok 1 "a world-writable folder is refused with its message"; diag "$T/out" "$T/err"
fi
cp -R "$W/example" "$T/openfile"
chmod 666 "$T/openfile/hipkit-plugin-example.so"
run_hk "$T/openfile" 'print(pcall(function() return hk.ops.example end))'
if grep -qF "$T/openfile/hipkit-plugin-example.so is world-writable; refused" "$T/err" &&
    grep -q '^false' "$T/out"; then
    ok 0 "a world-writable plugin file is refused with its message"
else
    ok 1 "a world-writable plugin file is refused with its message"; diag "$T/out" "$T/err"
fi

# 5. make install puts it in plugindir (here, inside the DESTDIR tree).
if make -C "$W/example" PKG_CONFIG="$PKG_CONFIG" install >"$T/install2.log" 2>&1 &&
    [ -f "$plugindir/hipkit-plugin-example.so" ]; then
    ok 0 "make install copies it into plugindir"
else
    ok 1 "make install copies it into plugindir"; diag "$T/install2.log"
fi

# 6. The uninstalled twin (BUILD/meson-uninstalled): the same example built
# against this build tree, nothing installed; plugin.h from the source's
# include/, and the build's own hipkit (its variable) runs it.
U=$T/uninstalled
cp -R "$SRC/plugins/example" "$U"
rm -f "$U/hipkit-plugin-example.so" "$U/example_hip.h"
upc() { PKG_CONFIG_PATH=$BUILD/meson-uninstalled "$PKG_CONFIG_PROG" "$@"; }
PKG_CONFIG_PATH=$BUILD/meson-uninstalled make -C "$U" CC="$CC" PKG_CONFIG="$PKG_CONFIG_PROG" >"$T/make3.log" 2>&1
rc=$?
ucflags=$(upc --cflags hipkit-plugin)
# shellcheck disable=SC2086,SC1003 # $ucflags is a list of words
udeps=$(cd "$U" && "$CC" $ucflags -M example.c 2>&1 | tr -s ' \\' '\n' | grep 'plugin\.h$')
uhipkit=$(upc --variable=hipkit hipkit-plugin)
if [ "$rc" -eq 0 ] && [ -f "$U/hipkit-plugin-example.so" ] && [ "$udeps" = "$SRC/include/hipkit/plugin.h" ] &&
    [ "$uhipkit" = "$BUILD/src/repl/hipkit" ] && [ "$(upc --variable=plugindir hipkit-plugin)" = "$BUILD/plugins" ]; then
    ok 0 "hipkit-plugin-uninstalled.pc builds the example against the build tree (plugin.h from the source)"
else
    ok 1 "hipkit-plugin-uninstalled.pc builds the example against the build tree (plugin.h from the source)"
    diag "$T/make3.log"; echo "# cflags '$ucflags' plugin.h '$udeps' hipkit '$uhipkit'"
fi
LD_LIBRARY_PATH= HIPKIT_PLUGIN_PATH=$U "$uhipkit" -e "$check_lua" >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ "$rc" -eq 0 ] && grep -qx 'plugin example - 1' "$T/out" && grep -qx 'ref 1000003 true' "$T/out"; then
    ok 0 "the build's hipkit loads and runs that plugin"
else
    ok 1 "the build's hipkit loads and runs that plugin"; diag "$T/out" "$T/err"; echo "# status $rc"
fi
finish
