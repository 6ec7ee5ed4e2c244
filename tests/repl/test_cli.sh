#!/bin/sh
# The hipkit program's command line, end to end (TAP). $1: the hipkit binary.
# $2: the version it must report. $3: the folder of the test plugins of
# tests/plugins/launch. Exact outputs are compared, so a change of wording
# fails here first.
set -u
HIPKIT=$1
VERSION=$2
TEST_PLUGINS=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/hipkit-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state"
mkdir -p "$HOME"
n=0
failed=0

ok() { # ok COND-STATUS NAME
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=1
    fi
}
# run ARGS...: stdout to $T/out, stderr to $T/err, status to $rc
run() {
    "$HIPKIT" "$@" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
}
show() { # diagnostics for the last run
    sed 's/^/# stdout: /' "$T/out"
    sed 's/^/# stderr: /' "$T/err"
    echo "# status: $rc"
}
expect() { # expect NAME WANT-STATUS WANT-STDOUT-FILE
    if [ "$rc" -eq "$2" ] && cmp -s "$T/out" "$3"; then ok 0 "$1"; else ok 1 "$1"; show; fi
}

# --version: three exact lines.
run --version
if [ "$rc" -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 3 ] && [ ! -s "$T/err" ] &&
    [ "$(sed -n 1p "$T/out")" = "hipkit $VERSION" ] &&
    sed -n 2p "$T/out" | grep -Eqx 'Lua 5\.4\.[0-9]+' &&
    sed -n 3p "$T/out" | grep -Eqx 'line editing: (readline [0-9.]+|none)'; then
    ok 0 "--version"
else
    ok 1 "--version"; show
fi

# --help lists every option, subcommand and environment variable.
run --help
missing=
for w in '-e STMT' ' -i ' ' -q ' '--backend NAME' '--device N' '--help' '--version' \
    'hipkit info' 'cache stats|clear|prune [MAX]' 'HIPKIT_BACKEND' 'HIPKIT_DEVICE' \
    'HIPKIT_CXX' 'HIPKIT_HOST_THREADS' 'HIPKIT_CACHE ' 'HIPKIT_CACHE_DIR' 'HIPKIT_CACHE_MAX'; do
    grep -qF -- "$w" "$T/out" || missing="$missing [$w]"
done
if [ "$rc" -eq 0 ] && [ -z "$missing" ] && [ ! -s "$T/err" ]; then ok 0 "--help"; else
    ok 1 "--help"; echo "# missing:$missing"; show; fi

# -e runs statements in order, then exits.
run -e 'print(1+1)'
printf '2\n' >"$T/want"
expect "-e 'print(1+1)' prints 2" 0 "$T/want"

run -e 'x = 20' -e 'print(x + 1, type(hk))'
printf '21\ttable\n' >"$T/want"
expect "-e repeats and sees the hk global" 0 "$T/want"

# An error in -e: exit 1, the message on stderr after "hipkit: ", a traceback.
run -e 'error("boom")'
if [ "$rc" -eq 1 ] && [ ! -s "$T/out" ] &&
    [ "$(head -n 1 "$T/err")" = 'hipkit: (command line):1: boom' ] &&
    grep -q '^stack traceback:' "$T/err"; then ok 0 "-e error: exit 1, boom on stderr"; else
    ok 1 "-e error: exit 1, boom on stderr"; show; fi

# A script with arguments: arg[0], arg[1..], negative indices, and `...`.
cat >"$T/args.lua" <<'EOF'
print(arg[0], arg[1], arg[2], #arg, select('#', ...), ...)
print(arg[-1], arg[-2])
EOF
run -q "$T/args.lua" one "two words"
printf '%s\tone\ttwo words\t2\t2\tone\ttwo words\n-q\t%s\n' "$T/args.lua" "$HIPKIT" >"$T/want"
expect "a script sees arg and ..." 0 "$T/want"

# `-` reads the script from stdin.
echo 'print("from stdin", arg[1])' | "$HIPKIT" - x >"$T/out" 2>"$T/err"
rc=$?
printf 'from stdin\tx\n' >"$T/want"
expect "'-' runs stdin" 0 "$T/want"

# A runtime error in a script: exit 1, message and traceback through the
# script's functions.
cat >"$T/bad.lua" <<'EOF'
local function inner() error("deep trouble") end
local function outer() inner() end
print("before")
outer()
print("after")
EOF
run "$T/bad.lua"
printf 'before\n' >"$T/want"
if [ "$rc" -eq 1 ] && cmp -s "$T/out" "$T/want" &&
    [ "$(head -n 1 "$T/err")" = "hipkit: $T/bad.lua:1: deep trouble" ] &&
    grep -q '^stack traceback:' "$T/err" && grep -q "bad.lua:2: in .*outer" "$T/err"; then
    ok 0 "a script error exits 1 with a traceback"; else
    ok 1 "a script error exits 1 with a traceback"; show; fi

# A syntax error in a script: exit 1, the parser's message.
printf 'x = = 1\n' >"$T/syntax.lua"
run "$T/syntax.lua"
if [ "$rc" -eq 1 ] && [ "$(cat "$T/err")" = "hipkit: $T/syntax.lua:1: unexpected symbol near '='" ]; then
    ok 0 "a syntax error exits 1"; else ok 1 "a syntax error exits 1"; show; fi

# A missing script.
run "$T/nope.lua"
if [ "$rc" -eq 1 ] && grep -q "^hipkit: cannot open $T/nope.lua" "$T/err"; then
    ok 0 "a missing script exits 1"; else ok 1 "a missing script exits 1"; show; fi

# Misuse: exit 2 with the message and the usage.
run --frobnicate
if [ "$rc" -eq 2 ] && [ ! -s "$T/out" ] && [ "$(head -n 1 "$T/err")" = "hipkit: unknown option '--frobnicate'" ] &&
    grep -q '^usage: hipkit' "$T/err"; then ok 0 "unknown option: exit 2 and usage"; else
    ok 1 "unknown option: exit 2 and usage"; show; fi

run frobnicate
if [ "$rc" -eq 2 ] && grep -q "^hipkit: unknown command 'frobnicate'" "$T/err" &&
    grep -q '^usage: hipkit' "$T/err"; then ok 0 "unknown subcommand: exit 2"; else
    ok 1 "unknown subcommand: exit 2"; show; fi

run cache frobnicate
if [ "$rc" -eq 2 ] && grep -q "^hipkit: unknown cache command 'frobnicate'" "$T/err"; then
    ok 0 "unknown cache command: exit 2"; else ok 1 "unknown cache command: exit 2"; show; fi

run -e
if [ "$rc" -eq 2 ] && [ "$(head -n 1 "$T/err")" = "hipkit: '-e' needs an argument" ]; then
    ok 0 "-e without a statement: exit 2"; else ok 1 "-e without a statement: exit 2"; show; fi

# --backend reaches the context: an unknown one fails to open it.
run --backend nosuch -e 'print(1)'
if [ "$rc" -eq 1 ] && [ ! -s "$T/out" ] && grep -q '^hipkit: .*nosuch' "$T/err"; then
    ok 0 "--backend nosuch: exit 1 naming it"; else ok 1 "--backend nosuch: exit 1 naming it"; show; fi

run --backend host --device 0 -e 'print("on host")'
printf 'on host\n' >"$T/want"
expect "--backend host --device 0" 0 "$T/want"

# Environment values: a device index that is no number fails the context,
# naming it; a thread count or mode hipkit cannot take is warned about,
# saying what is used instead, and the session runs.
HIPKIT_DEVICE=abc run --backend host -e 'print("ran")'
if [ "$rc" -eq 1 ] && [ ! -s "$T/out" ] && grep -q '^hipkit: HIPKIT_DEVICE=abc is not a device index' "$T/err"; then
    ok 0 "HIPKIT_DEVICE=abc: exit 1 naming it"; else ok 1 "HIPKIT_DEVICE=abc: exit 1 naming it"; show; fi
HIPKIT_HOST_THREADS=lots HIPKIT_HOST_MODE=fiberz HIPKIT_EARLY_START=maybe run --backend host -e 'print("ran")'
if [ "$rc" -eq 0 ] && [ "$(cat "$T/out")" = "ran" ] &&
    grep -q '^hipkit: warning: HIPKIT_HOST_THREADS=lots is not a whole number from 1 to 4096; using one worker a core$' "$T/err" &&
    grep -q '^hipkit: warning: HIPKIT_HOST_MODE=fiberz is none of auto, loops, fibers; using auto$' "$T/err" &&
    grep -q '^hipkit: warning: HIPKIT_EARLY_START=maybe is not 0 or 1' "$T/err"; then
    ok 0 "bad HIPKIT_HOST_THREADS, HIPKIT_HOST_MODE, HIPKIT_EARLY_START: warned, the session runs"
else ok 1 "bad HIPKIT_HOST_THREADS, HIPKIT_HOST_MODE, HIPKIT_EARLY_START: warned, the session runs"; show; fi
HIPKIT_HOST_THREADS=3 HIPKIT_HOST_MODE=fibers run --backend host -e 'print("ran")'
if [ "$rc" -eq 0 ] && [ ! -s "$T/err" ]; then
    ok 0 "good values: no warning"; else ok 1 "good values: no warning"; show; fi

# stdin that is not a terminal, no script: run it as a program.
printf 'local t = {}\nfor i = 1, 3 do t[i] = i * i end\nprint(table.concat(t, ","))\n' |
    "$HIPKIT" >"$T/out" 2>"$T/err"
rc=$?
printf '1,4,9\n' >"$T/want"
expect "stdin as a program" 0 "$T/want"

# -i with stdin not a terminal: the loop without prompts; expressions print,
# errors go to stderr and the session goes on.
printf 'y = 5\ny * 2\nerror("oops")\ny + 1, "two"\nfunction f(a)\nreturn a * 3\nend\nf(y)\n' |
    "$HIPKIT" -q -i >"$T/out" 2>"$T/err"
rc=$?
printf '10\n6\ttwo\n15\n' >"$T/want"
if [ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/want" && [ "$(cat "$T/err")" = 'stdin:1: oops' ]; then
    ok 0 "-i reads, evaluates and prints"; else ok 1 "-i reads, evaluates and prints"; show; fi

# hipkit info: the host backend available, cuda and hip unavailable with a reason.
run info
if [ "$rc" -eq 0 ] && grep -Eq '^  host +available \([0-9]+ devices?\); toolchain: .+' "$T/out"; then
    ok 0 "info: host available"; else ok 1 "info: host available"; show; fi
for b in cuda hip; do
    if grep -Eq "^  $b +available" "$T/out"; then
        echo "ok $((n = n + 1)) - info: $b unavailable with a reason # SKIP $b is available here"
    elif grep -Eq "^  $b +unavailable: .+" "$T/out"; then
        ok 0 "info: $b unavailable with a reason"
    else
        ok 1 "info: $b unavailable with a reason"; show
    fi
done
if grep -Eq '^  [0-9]+\*? host:0  .+' "$T/out" &&
    grep -Eq '^      target x86_64, [0-9.]+ GiB, [0-9]+ compute units, warp size [0-9]+, managed memory (yes|no), max [0-9]+ threads per block$' "$T/out" &&
    grep -q '^plugins (folders: ' "$T/out" && grep -Eq '^  fill +[0-9.]+, [0-9]+ kernels: ' "$T/out"; then
    ok 0 "info: devices and plugins"; else ok 1 "info: devices and plugins"; show; fi

run plugins
if [ "$rc" -eq 0 ] && grep -q '^      fill_f32(float \*y, float v, size_t n)$' "$T/out" &&
    grep -q 'y\[0..n) = v (f32)' "$T/out"; then
    ok 0 "plugins: every family's kernels with signature and doc line"
else
    ok 1 "plugins: every family's kernels with signature and doc line"; show
fi

# plugins --check: each kernel's declared signature against its source.
HIPKIT_PLUGIN_PATH=$TEST_PLUGINS run plugins --check badsig
cat >"$T/want" <<EOF
badsig 1 ($TEST_PLUGINS/hipkit-plugin-badsig.so): 2 kernels against the source
  MISMATCH   scale_f32: parameter 1 'x' is declared 'const double *', but the source (badsig.hip, line 3) has 'const float *'
  ok         ok_f32
badsig: 1 ok, 1 mismatched, 0 unchecked
EOF
expect "plugins --check: a wrong pointer type is a mismatch naming both types, status 1" 1 "$T/want"
HIPKIT_PLUGIN_PATH=$TEST_PLUGINS run plugins --check stats
if [ "$rc" -eq 0 ] && grep -qx '  ok         row_stats_f32' "$T/out" &&
    grep -qx 'stats: 6 ok, 0 mismatched, 0 unchecked' "$T/out"; then
    ok 0 "plugins --check: every kernel of a right family is ok, status 0"
else
    ok 1 "plugins --check: every kernel of a right family is ok, status 0"; show
fi
run plugins --check nosuch
if [ "$rc" -eq 1 ] && grep -q "no plugin family 'nosuch'" "$T/err"; then
    ok 0 "plugins --check: an unknown family is an error"; else ok 1 "plugins --check: an unknown family is an error"; show; fi

# hipkit cache in a private folder.
export HIPKIT_CACHE_DIR="$T/cache"
unset HIPKIT_CACHE HIPKIT_CACHE_MAX
run cache stats
if [ "$rc" -eq 0 ] && grep -qx "  folder:  $T/cache" "$T/out" && grep -qx '  entries: 0' "$T/out" &&
    grep -qx '  size:    0 B (0 bytes)' "$T/out" && grep -qx '  mode:    rw' "$T/out"; then
    ok 0 "cache stats in an empty HIPKIT_CACHE_DIR"; else ok 1 "cache stats in an empty HIPKIT_CACHE_DIR"; show; fi

run cache prune 1M
printf 'pruned %s: removed 0 entries (0 B); 0 left (0 B)\n' "$T/cache" >"$T/want"
expect "cache prune 1M" 0 "$T/want"

run cache prune 12Q
if [ "$rc" -eq 2 ] && grep -q "bad size '12Q'" "$T/err"; then ok 0 "cache prune: a bad size exits 2"; else
    ok 1 "cache prune: a bad size exits 2"; show; fi

run cache clear
printf 'cleared %s: removed 0 entries (0 B); 0 left (0 B)\n' "$T/cache" >"$T/want"
expect "cache clear" 0 "$T/want"

# A usage error is one line saying what, and one pointing to --help.
run --frobnicate
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 2 ] && grep -q "'hipkit --help' says more" "$T/err"; then
    ok 0 "a usage error: two lines, pointing to --help"; else ok 1 "a usage error: two lines, pointing to --help"; show; fi

# plugins NAME: a family whole, or the kernels whose names hold NAME.
run plugins affine
if [ "$rc" -eq 0 ] && grep -q '^  affine ' "$T/out" && grep -q '^      affine_f32(' "$T/out" &&
    grep -q '^      op affine_twice(' "$T/out" && ! grep -q 'binary' "$T/out"; then
    ok 0 "plugins NAME: that family"; else ok 1 "plugins NAME: that family"; show; fi
run plugins add_f64
if [ "$rc" -eq 0 ] && grep -q '^  binary ' "$T/out" && grep -q '^      add_f64(' "$T/out" &&
    grep -q '^      add_f64_strided(' "$T/out" && [ "$(grep -c '^      [a-z]' "$T/out")" -eq 2 ]; then
    ok 0 "plugins NAME: the kernels named like it"; else ok 1 "plugins NAME: the kernels named like it"; show; fi
run plugins no_such_thing
if [ "$rc" -eq 1 ] && grep -q "no kernel family or kernel named like 'no_such_thing'" "$T/err"; then
    ok 0 "plugins NAME: none matches, exit 1"; else ok 1 "plugins NAME: none matches, exit 1"; show; fi

# info --json: one object with the same facts, for scripts.
run info --json
if [ "$rc" -eq 0 ] && [ "$(head -c 1 "$T/out")" = "{" ] && [ "$(tail -n 1 "$T/out")" = "}" ] &&
    grep -q '"name": "host", "available": true, "devices": 1' "$T/out" &&
    grep -q '"backend": "host", "index": 0' "$T/out" && grep -q '"cache": {"dir": ' "$T/out" &&
    grep -q '"name": "binary", "version": ' "$T/out"; then
    ok 0 "info --json"; else ok 1 "info --json"; show; fi
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["devices"] and d["backends"]' "$T/out"
    ok $? "info --json parses as JSON"
fi

echo "1..$n"
exit $failed
