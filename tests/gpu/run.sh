#!/bin/sh
# Every test that can run on a GPU, and every scripts-lua example, on the GPU
# backend (default: the one present, hip before cuda), with nothing but a build folder: the device
# machines have no Lua headers and no package registry, so build elsewhere,
# carry the build folder, run this there. Prints one TAP stream and ends with
# "N passed, N failed".
# Usage: tests/gpu/run.sh [BUILD_DIR] [BACKEND]
build=${1:-build}
backend=${2:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "$backend" ]; then
    backend=cuda
    "$build/src/repl/hipkit" info 2>/dev/null | grep -q '^  hip *available' && backend=hip
fi
export HIPKIT_TEST_BACKEND=$backend
export HIPKIT_CACHE_DIR=${HIPKIT_CACHE_DIR:-$(mktemp -d)}
hipkit="$build/src/repl/hipkit"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
n=0
pass=0
fail=0

# Re-numbers one program's TAP lines into the combined stream.
emit() { # name, then the program's output on stdin
    while IFS= read -r line; do
        case "$line" in
        "ok "*|"not ok "*)
            n=$((n + 1))
            rest=${line#ok }
            status=ok
            case "$line" in "not ok "*) status="not ok"; rest=${line#not ok } ;; esac
            rest=${rest#* }
            case "$status $rest" in
            "not ok "*"# TODO"*) pass=$pass ;;
            "ok "*) pass=$((pass + 1)) ;;
            *) fail=$((fail + 1)) ;;
            esac
            echo "$status $n - [$1] ${rest#- }" ;;
        1..*) ;;
        *) echo "$line" ;;
        esac
    done
}

run() { # name, command...
    name=$1
    shift
    "$@" >"$tmp" 2>&1
    rc=$?
    emit "$name" <"$tmp" # not in a pipe: the counters must survive
    # a program that died without a failing point still fails
    if [ $rc -ne 0 ] && ! grep -q '^not ok' "$tmp"; then
        n=$((n + 1)); fail=$((fail + 1))
        echo "not ok $n - [$name] exited $rc"
    fi
}

echo "# backend $backend; build $build; $(date -u)"
"$hipkit" info 2>&1 | sed 's/^/# /'
for t in test_kernels test_memory test_gpu_faults test_devlib test_devlib_funcs; do
    run "$t" "$build/tests/$t"
done
# graphs: a CUDA graph / hipGraph replay against the host's arithmetic
run test_graph "$build/tests/test_graph"
# early start: the decision on every launch path, in a CUDA graph's nodes
run test_early_graph "$build/tests/test_early_graph"
run test_streams "$build/tests/test_streams" # streams, events between them, async copies
# a file mapping truncated by another process: copies fail naming it, no SIGBUS
run test_gpu_mmap "$build/tests/test_gpu_mmap"
# the AMD backend's own device test (launch, memory modes, mmap, events)
[ "$backend" = hip ] && run test_hip_device "$build/tests/hip/test_hip_device"
# the NVIDIA backend's opt-in to dynamic shared memory past 48 KiB
[ "$backend" = cuda ] && run test_cuda_shared "$build/tests/test_cuda_shared"
for t in test_buffers test_npy_plot test_plugins test_ops_binary test_ops_ternary test_ops_unary test_ops_cast test_ops_reduce test_ops_scan_rope test_ops_gemm test_ops_conv test_ops_sort test_ops_quantized test_gguf test_ops_indexing test_deferred_checks test_vectors test_real_sources test_cuda_sources test_templates test_early_start; do
    run "lua $t" "$hipkit" --backend "$backend" "$src/tests/lua/$t.lua"
done
run "lua test_graph" "$hipkit" --backend "$backend" "$src/tests/lua/test_graph.lua"
# hk.autotune, hk.bench{...}, hk.peaks
run "lua test_autotune" "$hipkit" --backend "$backend" "$src/tests/lua/test_autotune.lua"
# the plugin launch model (per-row rules, explicit launches) with its test plugins
run test_plugin_launch "$build/tests/test_plugin_launch"
run "lua test_plugin_launch" env HIPKIT_PLUGIN_PATH="$build/tests/plugins/launch" \
    "$hipkit" --backend "$backend" "$src/tests/lua/test_plugin_launch.lua"
cubin=$build/tests/axpb_sm80.cubin
[ -f "$cubin" ] || cubin=
run "lua test_streams" "$hipkit" --backend "$backend" "$src/tests/lua/test_streams.lua"
run "lua test_load" "$hipkit" --backend "$backend" "$src/tests/gpu/test_load.lua" $cubin
for s in "$src"/scripts-lua/0*.lua; do
    name=$(basename "$s")
    out=$("$hipkit" --backend "$backend" "$s" 2>&1)
    rc=$?
    n=$((n + 1))
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "ok $n - [scripts-lua] $name"
    else fail=$((fail + 1)); echo "not ok $n - [scripts-lua] $name exited $rc"; fi
    printf '%s\n' "$out" | tail -n 6 | sed 's/^/# /'
done
echo "1..$n"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
