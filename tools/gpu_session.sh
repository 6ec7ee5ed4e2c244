#!/bin/sh
# Everything hipkit checks and measures on a GPU machine, in one go, from a
# build folder made elsewhere (the device machines have no Lua headers and no
# package registry). Writes its logs to OUT (default ./gpu-out).
# Usage: tools/gpu_session.sh [BUILD_DIR] [OUT]
build=${1:-build}
out=${2:-gpu-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
# libraries the build machine had and a GPU machine may lack, as a fallback
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$build/devlibs"
export HIPKIT_CACHE_DIR=$(mktemp -d)
{
    date -u
    nvidia-smi -L 2>&1
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1
    uname -r
    "$build/src/repl/hipkit" --version
    "$build/src/repl/hipkit" info
} >"$out/env.txt" 2>&1
timeout 400 sh "$here/tests/gpu/run.sh" "$build" cuda >"$out/gpu_tests.txt" 2>&1
timeout 300 "$build/tools/bench-cuda" all >"$out/bench_cuda.txt" 2>&1
timeout 120 sh "$here/tools/bench_lua_launch.sh" "$build" cuda >"$out/bench_launch.txt" 2>&1
HIPKIT_BENCH_BACKEND=cuda timeout 120 "$build/tools/bench-host" memhit >>"$out/bench_launch.txt" 2>&1
HIPKIT_BENCH_BACKEND=cuda timeout 120 "$build/tools/bench-host" diskhit >>"$out/bench_launch.txt" 2>&1
timeout 200 python3 "$here/tools/bench_cupy_launch.py" >"$out/bench_cupy.txt" 2>&1
tail -n 1 "$out/gpu_tests.txt"
cat "$out/bench_cuda.txt" "$out/bench_launch.txt" "$out/bench_cupy.txt"
