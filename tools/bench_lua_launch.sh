#!/bin/sh
# The same 5-argument launch from C (bench-host launch5) and from Lua
# (scripts-lua/bench/launch.lua), in one run, on the CPU backend.
# Usage: tools/bench_lua_launch.sh [BUILD_DIR]
build=${1:-build}
here=$(dirname "$0")/..
"$build/tools/bench-host" launch5
"$build/src/repl/hipkit" "$here/scripts-lua/bench/launch.lua"
