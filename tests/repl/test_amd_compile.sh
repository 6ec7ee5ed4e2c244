#!/bin/sh
# `hipkit compile --offload-arch` and `hipkit inspect` (TAP): AMD code
# objects built ahead by hipcc and read back with no GPU, a raw ELF for one
# target, an offload bundle for several, each mistake refused clearly; and
# hk.inspect, the same description as a Lua table.
# Usage: test_amd_compile.sh HIPKIT
hipkit=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/hipkit-amd.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0
fail=0
# ok STATUS NAME; returns STATUS, so `ok ... || show` shows a failure's output
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; return "$1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
show() { sed 's/^/# stdout: /' "$T/out"; sed 's/^/# stderr: /' "$T/err"; }
# run ARGS...: stdout to $T/out, stderr to $T/err, status to $rc
run() { "$hipkit" "$@" >"$T/out" 2>"$T/err" </dev/null; rc=$?; }
magic() { od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' \n'; }
# "offset:size ..." of the explicit parameters in `hipkit inspect` output
params() { awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { printf "%s:%s ", $2, $3 }' "$1"; }
names() { awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { printf "%s ", $6 }' "$1"; }

hipcc_dir=
for d in ${ROCM_PATH:+"$ROCM_PATH/bin"} $(echo "$PATH" | tr ':' ' ') /opt/rocm/bin; do
    if [ -x "$d/hipcc" ]; then hipcc_dir=$d; break; fi
done
if [ -z "$hipcc_dir" ] && [ -z "${HIPKIT_HIPCC:-}" ]; then
    echo "1..0 # SKIP hipcc not found"
    exit 0
fi
# Compiling for AMD goes through the AMD backend module (its compile
# driver, then comgr for inspection): a hipkit built without it has nothing
# here to test (test_compile.sh checks its refusal).
"$hipkit" info >"$T/info" 2>&1
nomodule=
grep -q "no hip backend module" "$T/info" && nomodule="this hipkit has no AMD backend module"
if [ -n "$nomodule" ]; then
    echo "1..0 # SKIP $nomodule"
    exit 0
fi

cat >"$T/k.hip" <<'HIP'
#include <hip/hip_runtime.h>
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
#ifdef WITH_SCALE
extern "C" __global__ void scale(float *v, float s) { v[threadIdx.x] *= s; }
#endif
HIP

# One target: a raw AMDGPU ELF beside the source.
run compile "$T/k.hip" --offload-arch gfx90a
ok $([ $rc -eq 0 ] && grep -q "^wrote $T/k.co: AMDGPU code object for gfx90a, [0-9]* bytes" "$T/out"; echo $?) \
    "one target: exit 0, says what it wrote" || show
m=$(magic "$T/k.co")
ok $([ "$m" = 7f454c46 ]; echo $?) "it is a raw ELF ($m)"
ok $(nm "$T/k.co" 2>/dev/null | grep -q ' vector_add$'; echo $?) "nm finds vector_add in it"
ok $(grep -q "^  kernel vector_add$" "$T/out"; echo $?) "compile lists the kernel"

run inspect "$T/k.co"
cp "$T/out" "$T/inspect1"
ok $([ $rc -eq 0 ] && grep -q "AMDGPU code object (amdgpu-elf), 1 entry" "$T/out"; echo $?) \
    "inspect: exit 0, the format" || show
p=$(params "$T/inspect1")
ok $([ "$p" = "0:8 8:8 16:8 24:4 " ]; echo $?) "inspect: four parameters at offsets 0, 8, 16, 24, sizes 8, 8, 8, 4 ($p)"
p=$(names "$T/inspect1")
ok $([ "$p" = "a b c n " ]; echo $?) "inspect: their names ($p)"
ok $(grep -q "  0  *0  *8  global_buffer  *global  *a" "$T/out" && grep -q "  3  *24  *4  by_value  *-  *n" "$T/out"; echo $?) \
    "inspect: value kinds and address spaces"
ok $(grep -q "entry 1: target gfx90a," "$T/out" && grep -q "kernel vector_add (symbol vector_add.kd)" "$T/out";
        echo $?) "inspect: the target and the kernel with its symbol"
ok $(grep -q "wavefront 64$" "$T/out" && grep -q "kernarg segment: [0-9]* bytes, align [0-9]*" "$T/out" &&
        grep -q "registers: [0-9]* SGPRs, [0-9]* VGPRs, [0-9]* AGPRs" "$T/out"; echo $?) \
    "inspect: wavefront 64, kernarg segment, registers with AGPRs (gfx90a)"

run inspect "$T/k.co" --disasm
ok $([ $rc -eq 0 ] && grep -q "vector_add" "$T/out" && grep -q "s_endpgm" "$T/out"; echo $?) \
    "--disasm: vector_add's code, ending in s_endpgm"
run inspect "$T/k.co" --kernel nope
ok $([ $rc -eq 1 ] && grep -q "no kernel 'nope'" "$T/err" && grep -q "vector_add" "$T/err"; echo $?) \
    "--kernel nope: exit 1 listing vector_add"

# Several targets: a clang offload bundle (.hipfb), each entry extracted.
run compile "$T/k.hip" --offload-arch gfx90a,gfx1030 -DWITH_SCALE -O2
ok $([ $rc -eq 0 ] && grep -q "offload bundle with 2 entries" "$T/out" && [ -s "$T/k.hipfb" ] &&
     [ "$(head -c 24 "$T/k.hipfb")" = __CLANG_OFFLOAD_BUNDLE__ ]; echo $?) \
    "two targets: an offload bundle with 2 entries beside the source" || show
ok $(grep -q "^  kernel scale (" "$T/out"; echo $?) "-D reaches the compiler (kernel scale)"
run inspect "$T/k.hipfb"
ok $([ $rc -eq 0 ] && grep -q "clang offload bundle (offload-bundle), 2 entries" "$T/out" &&
        grep -q "target gfx90a, id hipv4-amdgcn-amd-amdhsa--gfx90a" "$T/out" &&
        grep -q "target gfx1030, id hipv4-amdgcn-amd-amdhsa--gfx1030" "$T/out"; echo $?) \
    "inspect: the bundle's 2 entries with target and bundle id"
for t in gfx90a gfx1030; do
    run inspect "$T/k.hipfb" --extract $t -o "$T/$t.co"
    m=$(magic "$T/$t.co")
    ok $([ $rc -eq 0 ] && [ "$m" = 7f454c46 ]; echo $?) "--extract $t: a raw ELF ($m)"
    run inspect "$T/$t.co"
    wave=64
    [ $t = gfx1030 ] && wave=32
    ok $([ $rc -eq 0 ] && grep -q "entry 1: target $t," "$T/out" && grep -q "kernel vector_add " "$T/out" &&
            grep -q "wavefront $wave$" "$T/out"; echo $?) "the $t entry: its target, vector_add, wavefront $wave"
done
run inspect "$T/k.hipfb" --extract hipv4-amdgcn-amd-amdhsa--gfx1030 -o "$T/byid.co"
ok $([ $rc -eq 0 ] && cmp -s "$T/byid.co" "$T/gfx1030.co"; echo $?) "--extract by bundle id gives the same bytes"
run inspect "$T/k.hipfb" --extract gfx942 -o "$T/none.co"
ok $([ $rc -eq 1 ] && grep -q "^hipkit inspect: " "$T/err" && [ ! -e "$T/none.co" ]; echo $?) \
    "--extract of an entry the bundle lacks: exit 1, nothing written"
run inspect "$T/k.hipfb" --kernel scale --disasm
ok $([ $rc -eq 0 ] && grep -q "kernel scale" "$T/out" && ! grep -q "kernel vector_add" "$T/out" &&
        grep -q "s_endpgm" "$T/out"; echo $?) "--kernel scale --disasm: that kernel only"

# Mistakes.
printf '#include <hip/hip_runtime.h>\n__global__ void f(int *p) {\n  p[0] = nope;\n}\n' >"$T/bad.hip"
run compile "$T/bad.hip" --offload-arch gfx90a
ok $([ $rc -eq 1 ] && grep -q "bad.hip:3" "$T/err" && grep -q "nope" "$T/err" && [ ! -e "$T/bad.co" ]; echo $?) \
    "a compile error: exit 1 with the compiler's file:line"
run compile "$T/k.hip" --offload-arch gfx90a:foo+
ok $([ $rc -eq 2 ] && grep -q "gfx90a:foo+" "$T/err" && grep -q "foo" "$T/err"; echo $?) \
    "a bad target id: exit 2 naming it"
run compile "$T/k.hip" --offload-arch sm_90
ok $([ $rc -eq 2 ] && grep -q "'sm_90'" "$T/err"; echo $?) "an NVIDIA architecture given as AMD target: exit 2"
run compile "$T/k.hip" --offload-arch gfx90a,gfx90a
ok $([ $rc -eq 2 ] && grep -q "given twice" "$T/err"; echo $?) "a target given twice: exit 2"
run compile "$T/k.hip" --offload-arch gfx90a -O0 -o "$T/o0.co"
ok $([ $rc -eq 0 ] && [ "$(magic "$T/o0.co")" = 7f454c46 ]; echo $?) "-O0 and -o OUT"
echo 'just some text' >"$T/notes.txt"
run inspect "$T/notes.txt"
ok $([ $rc -eq 1 ] && grep -q "^hipkit inspect: .*text" "$T/err"; echo $?) "inspect of a text file: exit 1 saying it is text" || show
run inspect "$T/missing.co"
ok $([ $rc -eq 1 ] && grep -q "^hipkit inspect: cannot read" "$T/err"; echo $?) "inspect of a missing file: exit 1"
run inspect "$T/k.co" --extract gfx90a
ok $([ $rc -eq 2 ] && grep -q "usage: hipkit inspect" "$T/err"; echo $?) "--extract without -o: usage"

# hk.inspect: a path, or {bytes = ...}.
cat >"$T/t.lua" <<'LUA'
local path = ...
local function check(i)
    local e = i.entries[1]
    local k = e.kernels[1]
    local explicit = {}
    for _, a in ipairs(k.args) do
        if not a.hidden then explicit[#explicit + 1] = a.name .. "@" .. a.offset .. ":" .. a.size end
    end
    assert(i.format == "amdgpu-elf", i.format)
    assert(#i.entries == 1 and e.target == "gfx90a" and e.id == nil, tostring(e.target))
    assert(k.name == "vector_add" and k.symbol == "vector_add.kd", k.name)
    assert(table.concat(explicit, " ") == "a@0:8 b@8:8 c@16:8 n@24:4", table.concat(explicit, " "))
    assert(k.args[1].kind == "global_buffer" and k.args[1].space == "global" and k.args[4].space == nil)
    assert(k.wavefront == 64 and k.kernarg_size >= 28 and k.sgprs > 0 and k.agprs ~= nil)
end
check(hk.inspect(path))
local f = assert(io.open(path, "rb"))
check(hk.inspect{bytes = f:read("a")})
f:close()
local okp, err = pcall(hk.inspect, {bytes = "not a code object"})
assert(not okp and err:find("text"), err)
print("lua ok")
LUA
run "$T/t.lua" "$T/k.co"
ok $([ $rc -eq 0 ] && grep -q "lua ok" "$T/out"; echo $?) "hk.inspect(path) and hk.inspect{bytes=}: the same table" ||
    show

# A bare clang works too (-x hip, the ROCm folder found from its own).
clang=
for c in clang++-15 clang++-16 clang++-17 clang++-18; do
    if command -v $c >/dev/null 2>&1; then clang=$(command -v $c); break; fi
done
if [ -n "$clang" ]; then
    HIPKIT_HIPCC=$clang "$hipkit" compile "$T/k.hip" --offload-arch gfx1030 -o "$T/clang.co" >"$T/out" 2>"$T/err"
    rc=$?
    ok $([ $rc -eq 0 ] && nm "$T/clang.co" 2>/dev/null | grep -q ' vector_add$'; echo $?) \
        "HIPKIT_HIPCC=$(basename "$clang"): a code object with vector_add" || show
else
    skip "HIPKIT_HIPCC=clang++" "no versioned clang++ here"
fi
# hipkit's own kernels build with ROCm 5's hipcc too: bfloat16, the _sync
# warp intrinsics and __double2half come from hipkit's compatibility headers
# where this ROCm lacks them.
cat >"$T/compat.hip" <<'HIP'
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
extern "C" __global__ void compat(const double *x, __hip_bfloat16 *b, __half *h, float *s) {
    int i = threadIdx.x;
    b[i] = __double2bfloat16(x[i]);
    h[i] = __double2half(x[i]);
    float v = (float)x[i];
    for (int o = warpSize / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(~0ull, v, o);
    __syncwarp();
    s[i] = v + (float)__activemask();
}
HIP
"$hipkit" compile "$T/compat.hip" --offload-arch gfx90a -o "$T/compat.co" >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && nm "$T/compat.co" 2>/dev/null | grep -q ' compat$'; echo $?) \
    "bf16, __double2half and _sync intrinsics compile for gfx90a" || show
"$hipkit" compile "$(dirname "$0")/../../kernels/cast/cast.hip" --offload-arch gfx1030 -o "$T/cast.co" >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && grep -q "kernel cast_f64_bf16" "$T/out"; echo $?) \
    "the cast family (every dtype pair) compiles for gfx1030" || show
# Headers in the orders real files use: hip_fp16.h before the runtime, and
# <cstddef> (whose system header includes <stddef.h> twice, the first time
# asking only for size_t).
cat >"$T/order.hip" <<'HIP'
#include <hip/hip_fp16.h>
#include <cstddef>
#include <hip/hip_runtime.h>
extern "C" __global__ void order(const __half *x, float *y, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __half2float(x[i]) + (float)sizeof(std::max_align_t);
}
HIP
"$hipkit" compile "$T/order.hip" --offload-arch gfx90a -o "$T/order.co" >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 0 ] && nm "$T/order.co" 2>/dev/null | grep -q ' order$'; echo $?) \
    "hip_fp16.h before hip_runtime.h, and <cstddef>'s max_align_t, compile for gfx90a" || show
# A C++ kernel (a mangled symbol): listed, found and disassembled by the
# name the source gives it, as a cubin's kernels are.
cat >"$T/cxx.hip" <<'HIP'
#include <hip/hip_runtime.h>
__global__ void scale(float *v, float s) { v[threadIdx.x] *= s; }
HIP
run compile "$T/cxx.hip" --offload-arch gfx90a -o "$T/cxx.co"
ok $([ $rc -eq 0 ] && grep -q "^  kernel scale (symbol _Z5scalePff)$" "$T/out"; echo $?) \
    "a mangled kernel is listed by its source name, with its symbol" || show
run inspect "$T/cxx.co" --kernel scale --disasm
ok $([ $rc -eq 0 ] && grep -q "^  kernel scale (symbol _Z5scalePff)$" "$T/out" && grep -q "^_Z5scalePff:" "$T/out" &&
     grep -q "s_load\|v_mul" "$T/out"; echo $?) "inspect --kernel scale --disasm finds it by that name" || show
run inspect "$T/cxx.co" --kernel _Z5scalePff
ok $([ $rc -eq 0 ] && grep -q "^  kernel scale" "$T/out"; echo $?) "... and by its symbol" || show
echo "1..$n"
exit $fail
