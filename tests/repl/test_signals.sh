#!/bin/sh
# Signals and temporary folders, end to end (TAP). $1: the hipkit binary.
# A script stopped by Ctrl-C (SIGINT) exits 130 after cleaning up; SIGTERM
# the same with 143; os.exit closes the session; a folder left by a killed
# session is swept by the next one, and a live session's is left alone.
# Everything runs with TMPDIR private to this test.
set -u
HIPKIT=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/hipkit-sig.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state" TMPDIR="$T/tmp"
mkdir -p "$HOME" "$TMPDIR"
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
show() {
    sed 's/^/# stdout: /' "$T/out"
    sed 's/^/# stderr: /' "$T/err"
    echo "# status: $rc; left in TMPDIR: $(ls "$TMPDIR" | tr '\n' ' ')"
}
leftovers() { ls "$TMPDIR" | grep -c '^hipkit-'; }

# A script that compiles a kernel (the backend's folder now exists), says
# so, then runs $1 until stopped.
cat >"$T/long.lua" <<'LUA'
local m = hk.compile([[
extern "C" __global__ void spin(float *v, int n) {
  float a = 0; for (int k = 0; k < n; k++) a = a * 0.999f + 1.0f;
  if (threadIdx.x == 0) v[blockIdx.x] = a; }
]])
local v = hk.alloc(200000, "f32")
io.write("ready\n"); io.flush()
if arg[1] == "kernel" then
  for _ = 1, 1000 do m.spin:launch(200000, 64, v, 1000000) end
elseif arg[1] == "graph" then -- replays of an empty graph: a loop in C
  hk.graph(function() end):launch(math.maxinteger)
else
  while true do end
end
LUA

# start_long MODE: runs long.lua in the background until it says ready.
start_long() {
    "$HIPKIT" --backend=host "$T/long.lua" "$1" >"$T/out" 2>"$T/err" </dev/null &
    pid=$!
    i=0
    while ! grep -q ready "$T/out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.2
}

start_long loop
kill -INT $pid; wait $pid; rc=$?
if [ $rc -eq 130 ] && grep -q 'interrupted' "$T/err" && [ "$(leftovers)" -eq 0 ]; then
    ok 0 "Ctrl-C in a Lua loop of a script: exit 130, no folder left"
else ok 1 "Ctrl-C in a Lua loop of a script: exit 130, no folder left"; show; fi

start_long kernel
kill -INT $pid; wait $pid; rc=$?
if [ $rc -eq 130 ] && grep -q 'kernel spin interrupted: [0-9]* of 200000 blocks ran' "$T/err" &&
    [ "$(leftovers)" -eq 0 ]; then
    ok 0 "Ctrl-C during a kernel: the launch stops, exit 130, no folder left"
else ok 1 "Ctrl-C during a kernel: the launch stops, exit 130, no folder left"; show; fi

start_long loop
kill -TERM $pid; wait $pid; rc=$?
if [ $rc -eq 143 ] && [ "$(leftovers)" -eq 0 ]; then ok 0 "SIGTERM: exit 143, no folder left"
else ok 1 "SIGTERM: exit 143, no folder left"; show; fi

# A replay loop that missed the signal would never end: a watchdog kills it
# (status 137), so the test fails instead of hanging.
watchdog() { (sleep 30; kill -KILL "$1" 2>/dev/null) >/dev/null 2>&1 & }
start_long graph
watchdog $pid
kill -INT $pid; wait $pid; rc=$?
if [ $rc -eq 130 ] && grep -q 'interrupted' "$T/err"; then ok 0 "Ctrl-C during g:launch(math.maxinteger): exit 130"
else ok 1 "Ctrl-C during g:launch(math.maxinteger): exit 130"; show; fi

start_long graph
watchdog $pid
kill -TERM $pid; wait $pid; rc=$?
if [ $rc -eq 143 ] && [ "$(leftovers)" -eq 0 ]; then ok 0 "SIGTERM during g:launch(math.maxinteger): exit 143"
else ok 1 "SIGTERM during g:launch(math.maxinteger): exit 143"; show; fi

"$HIPKIT" --backend=host -e 'hk.compile("__global__ void k() {}") os.exit(3)' >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ $rc -eq 3 ] && [ "$(leftovers)" -eq 0 ]; then ok 0 "os.exit(3) cleans up"
else ok 1 "os.exit(3) cleans up"; show; fi

# A killed session leaves its folder; the next session sweeps it, but not
# the folder of a session still running, nor folders named otherwise.
start_long loop
kill -KILL $pid; wait $pid
mkdir "$TMPDIR/hipkit-other.abcdef" "$TMPDIR/hipkit-host-1-abc"
killed=$(ls "$TMPDIR" | grep -c '^hipkit-host-[0-9]*-......$')
start_long loop
live=$(ls "$TMPDIR" | grep -c "^hipkit-host-$pid-......\$")
"$HIPKIT" -e '' >"$T/out" 2>"$T/err" </dev/null
rc=$?
left=$(ls "$TMPDIR" | tr '\n' ' ')
kill -INT $pid; wait $pid
case "$left" in
*"hipkit-host-$pid-"*) keep=0 ;;
*) keep=1 ;;
esac
if [ $killed -eq 1 ] && [ $live -eq 1 ] && [ $rc -eq 0 ] && [ $keep -eq 0 ] &&
    [ "$(echo "$left" | wc -w)" -eq 3 ] && [ -d "$TMPDIR/hipkit-other.abcdef" ] && [ -d "$TMPDIR/hipkit-host-1-abc" ]; then
    ok 0 "a killed session's folder is swept at the next start; a live one's is kept"
else
    ok 1 "a killed session's folder is swept at the next start; a live one's is kept"
    echo "# killed=$killed live=$live rc=$rc left: $left"
fi

echo "1..$n"
exit $failed
