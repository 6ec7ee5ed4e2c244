#!/bin/sh
# The same 5-argument launch from C (bench-host launch5) and from Lua
# (scripts-lua/bench/launch.lua), in one run, on one backend.
# Usage: tools/bench_lua_launch.sh [BUILD_DIR] [BACKEND]
build=${1:-build}
backend=${2:-host}
here=$(dirname "$0")/..
HIPKIT_BENCH_BACKEND=$backend "$build/tools/bench-host" launch5
"$build/src/repl/hipkit" --backend "$backend" "$here/scripts-lua/bench/launch.lua"
