#!/bin/sh
# Issue 12 defect 5: one plugin whose init segfaults takes down no command.
# `hipkit cache stats` loads no plugin; `hipkit info` and `hipkit plugins`
# run each plugin's init in a child first and list the crashing one as
# refused, with the signal. Usage: test_plugin_crash.sh HIPKIT CRASHDIR
hipkit=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
fail=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
show() { sed 's/^/#   /' "$T/out" "$T/err" | head -n 8; }
export HIPKIT_BACKEND=host HIPKIT_CACHE_DIR="$T/cache" HIPKIT_PLUGIN_PATH="$2"

timeout 60 "$hipkit" cache stats >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && grep -q "entries" "$T/out"; echo $?) "hipkit cache stats prints normally (rc $rc)"
[ $rc -eq 0 ] || show

timeout 60 "$hipkit" info >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && grep -q "crashinit" "$T/out" "$T/err" &&
     grep -q "crashed a child process" "$T/out" "$T/err"; echo $?) \
    "hipkit info lists the crashing plugin as refused, saying why (rc $rc)"
[ $rc -eq 0 ] || show
ok $(grep -q "fill" "$T/out"; echo $?) "... and the other plugins as loaded"

timeout 60 "$hipkit" info --json >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && grep -q '"error": "its init crashed a child process' "$T/out"; echo $?) \
    "hipkit info --json: the plugin's error says its init crashed (rc $rc)"
[ $rc -eq 0 ] || show

timeout 60 "$hipkit" plugins >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && grep -q "crashinit" "$T/out" "$T/err"; echo $?) "hipkit plugins lists it too (rc $rc)"
[ $rc -eq 0 ] || show

# Plugins load when their family is first needed: a session or script that
# never uses the crashing plugin runs; one that uses it is what it takes down.
timeout 60 "$hipkit" -e 'local b = hk.alloc(4, "f32"); hk.ops.fill.fill(b, 2); print("sum " .. b:stats().mean * 4)' \
    >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && grep -q "^sum 8" "$T/out"; echo $?) \
    "a script using another family runs: the crashing plugin's init never ran (rc $rc)"
[ $rc -eq 0 ] || show
printf 'print(1 + 1)\n' | timeout 60 "$hipkit" -i >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && grep -q "2" "$T/out"; echo $?) "the REPL starts and runs a line (rc $rc)"
[ $rc -eq 0 ] || show
timeout 60 "$hipkit" -e 'print(hk.ops.crashinit)' >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -ne 0 ]; echo $?) "using the crashing family is what runs its init (rc $rc: it crashed)"

echo "1..$n"
exit $fail
