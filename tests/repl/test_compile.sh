#!/bin/sh
# `hipkit compile`: its command line for both kinds of target, then cubins
# and fatbins built ahead by nvcc against hipkit's HIP headers, with the
# kernels listed, and each mistake refused clearly.
# Usage: test_compile.sh HIPKIT
hipkit=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
fail=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

cat >"$T/k.hip" <<'HIP'
#include <hip/hip_runtime.h>
extern "C" __global__ void axpb(float a, const float *x, float b, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
__global__ void reduce(float *v) {
    float s = v[threadIdx.x];
    for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down(s, o);
    if (threadIdx.x == 0) v[0] = s;
}
HIP

# The command line, checked before any compiler runs.
"$hipkit" compile "$T/k.hip" >"$T/out" 2>"$T/err"
ok $([ $? -eq 2 ] && grep -q "usage: hipkit compile" "$T/err" && grep -q -- "--offload-arch" "$T/err"; echo $?) \
    "without --cuda-arch or --offload-arch: usage naming both"
"$hipkit" compile "$T/k.hip" --cuda-arch sm_90 --offload-arch gfx90a >"$T/out" 2>"$T/err"
ok $([ $? -eq 2 ] && grep -q "one kind of target per run" "$T/err" && [ ! -e "$T/k.cubin" ] && [ ! -e "$T/k.co" ]; echo $?) \
    "both kinds at once are refused, and nothing is written"
"$hipkit" compile "$T/k.hip" --cuda-arch sm_90 -O7 >"$T/out" 2>"$T/err"
ok $([ $? -eq 2 ] && grep -q "unknown option '-O7'" "$T/err"; echo $?) "an optimisation level past -O3 is refused"
"$hipkit" compile "$T/none.hip" --cuda-arch sm_90 >"$T/out" 2>"$T/err"
ok $([ $? -eq 1 ] && grep -q "cannot read" "$T/err"; echo $?) "a missing file is named"

# An AMD target is built by hipcc where ROCm is (test_amd_compile.sh goes
# further), else refused saying what is missing; never by nvcc.
"$hipkit" compile "$T/k.hip" --offload-arch gfx90a >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ]; then
    ok $(grep -q "wrote $T/k.co: AMDGPU code object for gfx90a" "$T/out"; echo $?) \
        "an AMD target: an AMDGPU code object beside the source"
elif grep -q "no hip backend module" "$T/err"; then
    ok $([ $rc -eq 1 ] && [ ! -e "$T/k.co" ]; echo $?) \
        "an AMD target without the AMD backend module: exit 1 naming the module, nothing written"
else
    ok $([ $rc -eq 1 ] && grep -q "no AMD compiler found" "$T/err" && [ ! -e "$T/k.co" ]; echo $?) \
        "an AMD target without ROCm: exit 1 saying so, nothing written"
fi

"$hipkit" compile "$T/k.hip" --cuda-arch sm_90 -o "$T/k.cubin" >"$T/out" 2>"$T/err"
rc=$?
skip=
grep -q "built without the CUDA toolkit" "$T/err" && skip="this hipkit was built without the CUDA toolkit"
grep -q "is the CUDA toolkit installed" "$T/err" && skip="nvcc is not installed here"
grep -q "no cuda backend module" "$T/err" && skip="this hipkit has no cuda backend module"
if [ -n "$skip" ]; then
    n=$((n + 1))
    echo "ok $n - hipkit compile --cuda-arch # SKIP $skip"
    echo "1..$n"
    exit $fail
fi
ok $rc "one architecture: exit 0"
magic=$(od -An -tx1 -N4 "$T/k.cubin" 2>/dev/null | tr -d ' ')
ok $([ "$magic" = 7f454c46 ]; echo $?) "it wrote an ELF cubin ($magic)"
ok $(grep -q "cubin for sm_90" "$T/out"; echo $?) "it says which architecture"
ok $(grep -q "kernel axpb$" "$T/out" && grep -q "kernel reduce (symbol _Z6reducePf)" "$T/out"; echo $?) \
    "it lists the kernels, a C++ one with its symbol"
"$hipkit" compile "$T/k.hip" --cuda-arch sm_90a -o "$T/k90a.cubin" >"$T/out" 2>"$T/err"
ok $([ $? -eq 0 ] && grep -q "cubin for sm_90a," "$T/out" && "$hipkit" inspect "$T/k90a.cubin" |
    grep -q "target sm_90a"; echo $?) "sm_90a (Hopper's architecture-specific target): a cubin inspect reads as sm_90a"

"$hipkit" compile "$T/k.hip" --cuda-arch sm_80,sm_90 >"$T/out" 2>"$T/err"
rc=$?
magic=$(od -An -tx1 -N4 "$T/k.fatbin" 2>/dev/null | tr -d ' ')
ok $([ $rc -eq 0 ] && [ "$magic" = 50ed55ba ]; echo $?) "two architectures: a fatbin beside the source ($magic)"
ok $(grep -q "kernels are not listed: the driver picks a fatbin's code" "$T/out"; echo $?) \
    "... and it says why its kernels are not listed" || sed 's/^/# /' "$T/out"
"$hipkit" inspect "$T/k90a.cubin" >"$T/out" 2>"$T/err"
ok $([ $? -eq 0 ] && grep -q "not read from a cubin here" "$T/out" && ! grep -q "\-1 SGPRs\|kernarg segment: 0" "$T/out"; echo $?) \
    "inspect of a cubin says what it does not read, rather than printing zeros" || sed 's/^/# /' "$T/out"
# axpb(float a, const float *x, float b, float *y, int n): C offsets 0 8 16 24 32, 36 bytes
ok $(awk '/kernel axpb/{on=1;next} /kernel /{on=0} on' "$T/out" | tr -s ' ' |
    grep -c "^ [0-4] \(0 4\|8 8\|16 4\|24 8\|32 4\)$" | grep -q "^5$" &&
    grep -q "parameter space: 36 bytes" "$T/out"; echo $?) \
    "inspect of a cubin lists axpb's parameters at their C offsets (.nv.info)" || sed 's/^/# /' "$T/out"
CUBIN="$T/k90a.cubin" "$hipkit" -e 'local i = hk.inspect(os.getenv("CUBIN"))
local a
for _, k in ipairs(i.entries[1].kernels) do if k.name == "axpb" then a = k.args end end
assert(a and #a == 5 and a[4].offset == 24 and a[4].size == 8 and a[5].offset == 32 and not a[1].name, "args")' \
    >"$T/out" 2>&1
ok $? "hk.inspect of a cubin: args with offsets and sizes, no names" || sed 's/^/# /' "$T/out"

printf '#include <hip/hip_runtime.h>\n__global__ void f(int *p) {\n  p[0] = nope;\n}\n' >"$T/bad.hip"
"$hipkit" compile "$T/bad.hip" --cuda-arch sm_90 >"$T/out" 2>"$T/err"
rc=$?
ok $([ $rc -eq 1 ] && grep -q "bad.hip(3)" "$T/err" && grep -q "nope" "$T/err"; echo $?) \
    "a compile error: exit 1 with nvcc's message and line"

"$hipkit" compile "$T/k.hip" --cuda-arch sm_60 >"$T/out" 2>"$T/err"
ok $([ $? -eq 2 ] && grep -q "sm_70 or newer" "$T/err"; echo $?) "an architecture older than sm_70 is refused"
"$hipkit" compile "$T/k.hip" --cuda-arch sm_90 -O1 -o "$T/o1.cubin" >"$T/out" 2>"$T/err"
ok $([ $? -eq 0 ] && grep -q "cubin for sm_90" "$T/out"; echo $?) "-O1 is accepted (ptxas gets it)"
echo "1..$n"
exit $fail
