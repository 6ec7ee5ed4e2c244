#!/usr/bin/env bash
# Builds hipkit's libFuzzer targets with clang and runs each for a fixed
# time over a seed corpus of files the test suite wrote (plugin images,
# test plugins, cache entries) plus a few written here. Any crash, leak or
# sanitizer report fails the run; the reproducer is left in the work folder.
#
#   tools/fuzz/run.sh [SECONDS_PER_TARGET [BUILD_DIR]]
#
# CI runs it for a few seconds per target (.ci/run); run it for hours by
# hand: tools/fuzz/run.sh 3600. Corpora grow in BUILD_DIR/fuzz/corpus and
# are reused by the next run.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-5}
build=${2:-build}
work=$build/fuzz
targets="signature elf bundle cache npy gguf"
# comgr's metadata reader behind hip_comgr.c's checks: needs comgr (the hip
# backend's library), else said and left out
comgr_ok=0
for h in /usr/include/amd_comgr.h /usr/include/amd_comgr/amd_comgr.h /opt/rocm/include/amd_comgr.h \
         /opt/rocm/include/amd_comgr/amd_comgr.h; do
    [ -f "$h" ] && comgr_ok=1 && comgr_inc=-I$(dirname "$h")
done
if [ $comgr_ok = 1 ]; then
    targets="$targets comgr"
else
    echo "fuzz: comgr: SKIP: no amd_comgr.h (Debian: libamd-comgr-dev)"
fi

cc=
for c in clang-15 clang-14 clang; do
    if command -v "$c" >/dev/null &&
        echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; (void)n; return 0; }' |
        "$c" -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
        cc=$c
        break
    fi
done
if [ -z "$cc" ]; then
    echo "fuzz: SKIP: no clang with libFuzzer (clang-15, clang-14, clang)"
    exit 0
fi
if [ ! -f "$build/src/core/plugin_config.h" ] || [ ! -f "$build/src/core/backends/host/host_headers.c" ]; then
    echo "fuzz: $build is not a built hipkit tree (run meson setup $build && ninja -C $build)"
    exit 1
fi
mkdir -p "$work/obj"
# Objects are rebuilt when their source is newer; all of them when any
# header is (a struct that changed makes every user of it stale).
stamp=$work/obj/.headers
if [ ! -f "$stamp" ] || [ -n "$(find src include "$build/src/core" -name '*.h' -newer "$stamp" | head -n 1)" ]; then
    rm -f "$work"/obj/*.o
fi
flags=(-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DHK_BUILDING_HIPKIT -Iinclude -Isrc/core
       -Isrc/core/backends/host -Isrc/core/backends/host/include -Isrc/core/backends/hip
       -I"$build/src/core" -I/usr/include/xxhash -I/usr/include/lua5.4 -Isrc/repl -Isrc/repl/lua)

# The library's sources, instrumented for coverage; rebuilt when newer.
srcs=$(ls src/core/*.c src/core/backends/host/*.c) 
srcs="$srcs $build/src/core/backends/host/host_headers.c src/core/backends/hip/hip_codeobj.c"
# The hk Lua module, for the .npy reader (fuzz_npy only), without libpng.
repl_srcs="$(ls src/repl/lua/*.c) src/repl/file_read.c $build/src/repl/lua/tune_lua.c"
compile() {
    local src=$1 obj=$work/obj/$(echo "$1" | tr / _).o
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ]; then
        "$cc" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" || return 1
    fi
}
export -f compile
export cc work
export flags_str="${flags[*]}"
fail=0
for s in $srcs $repl_srcs; do echo "$s"; done | xargs -P "$(nproc)" -I{} bash -c \
    'flags=($flags_str); compile "$@"' _ {} || { echo "fuzz: building the library failed"; exit 1; }

if [ $comgr_ok = 1 ]; then
    comgr_obj=$work/obj/comgr_hip_comgr.o
    if [ ! -f "$comgr_obj" ] || [ src/core/backends/hip/hip_comgr.c -nt "$comgr_obj" ]; then
        "$cc" "${flags[@]}" $comgr_inc -fsanitize=fuzzer-no-link -c src/core/backends/hip/hip_comgr.c \
            -o "$comgr_obj" || { echo "fuzz: building hip_comgr.c failed"; exit 1; }
    fi
    # its fallback disassembler (llvm-objdump) for processors comgr refuses
    objdump_obj=$work/obj/comgr_hip_objdump.o
    if [ ! -f "$objdump_obj" ] || [ src/core/backends/hip/hip_objdump.c -nt "$objdump_obj" ]; then
        "$cc" "${flags[@]}" -fsanitize=fuzzer-no-link -c src/core/backends/hip/hip_objdump.c \
            -o "$objdump_obj" || { echo "fuzz: building hip_objdump.c failed"; exit 1; }
    fi
fi
touch "$stamp"

# Seeds: what the tests wrote, and signatures.
seed() { mkdir -p "$work/corpus/$1"; }
for t in $targets; do seed "$t"; done
i=0
while IFS= read -r s; do
    i=$((i + 1))
    printf '%s' "$s" >"$work/corpus/signature/seed-$i"
done <<'SIGS'
float a, const float *x, float b, float *y, int n
const __half *__restrict__ in, float4 v, unsigned long long n
int2 p, double2 q, uchar4 u, float3 w, __hip_bfloat16 h, long long l
void
const float* __restrict__ a, const float* __restrict__ b, float* c, int m, int n, int k
SIGS
find "$build/tests/plugins" "$build/plugins" -name 'hipkit-plugin-*.so' 2>/dev/null | head -n 8 |
    while read -r f; do cp "$f" "$work/corpus/elf/"; done
find "$build/plugins" -name '*hip-gfx*.img' 2>/dev/null | head -n 8 |
    while read -r f; do cp "$f" "$work/corpus/bundle/"; done
find "$build/tests" -name '*.hipfb' -o -name '*.co' 2>/dev/null | head -n 4 |
    while read -r f; do cp "$f" "$work/corpus/bundle/" 2>/dev/null; done
# comgr: raw AMDGPU ELF code objects, the smallest plugin images and the
# code objects the tests wrote (bundles are refused at the ELF check)
find "$build/plugins" -name '*hip-gfx*.img' -size -64k 2>/dev/null | head -n 6 |
    while read -r f; do cp "$f" "$work/corpus/comgr/"; done
find "$build/tests" -name '*.co' -size -64k 2>/dev/null | head -n 4 |
    while read -r f; do cp "$f" "$work/corpus/comgr/" 2>/dev/null; done
find "$build/tests" -name '*.npy' -size -64k 2>/dev/null | head -n 8 |
    while read -r f; do cp "$f" "$work/corpus/npy/"; done
printf '\223NUMPY\001\000v\000{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (3,), }%*s\n\000\000\200?\000\000\000@\000\000@@' 53 '' >"$work/corpus/npy/seed-f4"
# a GGUF v3 file: key "k" = u32 1, tensor "w" of 8 f32 at offset 0
{ printf 'GGUF\x03\0\0\0\x01\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0'
  printf '\x01\0\0\0\0\0\0\0k\x04\0\0\0\x01\0\0\0'
  printf '\x01\0\0\0\0\0\0\0w\x01\0\0\0\x08\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0'
  head -c 54 /dev/zero; } >"$work/corpus/gguf/seed-v3"
find "$build/tests/cache" -type f -size -256k 2>/dev/null | head -n 8 |
    while read -r f; do cp "$f" "$work/corpus/cache/$(basename "$f")"; done

total=0
for t in $targets; do
    exe=$work/fuzz_$t
    objs=$(ls "$work"/obj/src_core*.o "$work"/obj/*host_headers.c.o)
    libs="-lxxhash -ldl -lpthread -lm"
    if [ "$t" = comgr ]; then
        objs="$objs $comgr_obj $objdump_obj"
        libs="$libs -lamd_comgr"
    fi
    if [ "$t" = npy ]; then
        objs="$objs $(ls "$work"/obj/src_repl*.o "$work"/obj/*tune_lua.c.o)"
        libs="$libs -llua5.4"
    fi
    if ! "$cc" "${flags[@]}" -fsanitize=fuzzer "tools/fuzz/fuzz_$t.c" $objs -o "$exe" $libs; then
        echo "fuzz: building fuzz_$t failed"
        fail=1
        continue
    fi
    (cd "$work" && ASAN_OPTIONS=detect_leaks=1 "./fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="./crash-$t-" "corpus/$t") >"$work/$t.log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t.log" | grep -o '[0-9]*$')
    total=$((total + ${runs:-0}))
    if [ $rc -ne 0 ]; then
        echo "fuzz: $t FAILED after ${runs:-?} executions (rc $rc); see $work/$t.log"
        grep -m 5 -E 'ERROR|SUMMARY|crash-' "$work/$t.log"
        fail=1
    else
        echo "fuzz: $t ok: ${runs:-0} executions in ${secs}s, corpus $(ls "$work/corpus/$t" | wc -l) files"
    fi
done
echo "fuzz: $total executions in all, $([ $fail -eq 0 ] && echo 0 || echo some) crashes"
exit $fail
