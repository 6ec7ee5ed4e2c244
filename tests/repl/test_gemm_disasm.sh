#!/bin/sh
# The gemm family's matrix-unit paths as built (TAP): the plugin's AOT
# images for AMD targets, disassembled by `hipkit inspect --disasm`, hold
# MFMA instructions where the kernels use them (gfx908, gfx90a; gfx940
# compiled by the test) and none on
# the plain tiled path (gfx1030). SKIPs where the build made no AMD images
# (no ROCm toolchain) or hipkit has no AMD backend module to disassemble.
# Usage: test_gemm_disasm.sh HIPKIT PLUGIN_BUILD_DIR
hipkit=$1
dir=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/hipkit-gemm.XXXXXX")
trap 'rm -rf "$T"' EXIT
if ! ls "$dir"/gemm.hip-hip-*.img >/dev/null 2>&1; then
    echo "1..0 # SKIP no AMD images of gemm.hip in $dir (built without the ROCm toolchain)"
    exit 0
fi
if "$hipkit" info 2>&1 | grep -q "no hip backend module"; then
    echo "1..0 # SKIP this hipkit has no AMD backend module"
    exit 0
fi
n=0
fail=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# has TARGET INSTRUCTION...: every instruction is in TARGET's image
has() {
    target=$1
    shift
    img="$dir/gemm.hip-hip-$target.img"
    if [ ! -f "$img" ]; then
        skip "gemm on $target: $*" "no $target image (amd_targets)"
        return
    fi
    "$hipkit" inspect --disasm "$img" >"$T/$target.s" 2>&1
    miss=
    for i in "$@"; do grep -q "$i" "$T/$target.s" || miss="$miss $i"; done
    ok "$([ -z "$miss" ]; echo $?)" "gemm on $target disassembles with $*${miss:+ (missing:$miss)}"
}
has gfx90a v_mfma_f32_32x32x8f16 v_mfma_f32_32x32x8bf16_1k v_mfma_f32_32x32x2f32
has gfx908 v_mfma_f32_32x32x8f16 v_mfma_f32_32x32x4bf16 v_mfma_f32_32x32x2f32
# gfx940 (CDNA3, MI300): not among the default amd_targets, so compiled
# here from the family's source; ROCm 5.2's comgr cannot decode gfx940,
# so `hipkit inspect --disasm` goes through LLVM's llvm-objdump
src=$(dirname "$0")/../../kernels/gemm/gemm.hip
if "$hipkit" compile "$src" --offload-arch gfx940 -o "$T/gfx940.co" >"$T/gfx940.log" 2>&1; then
    "$hipkit" inspect --disasm "$T/gfx940.co" >"$T/gfx940.s" 2>&1
    if grep -q "no llvm-objdump" "$T/gfx940.s"; then
        skip "gemm on gfx940: MFMA in the disassembly" "no llvm-objdump for gfx940 (comgr cannot decode it)"
    else
        miss=
        for i in v_mfma_f32_32x32x8f16 v_mfma_f32_32x32x8_bf16 v_mfma_f32_32x32x2f32; do
            grep -q "$i" "$T/gfx940.s" || miss="$miss $i"
        done
        ok "$([ -z "$miss" ]; echo $?)" "gemm on gfx940 (compiled here) disassembles with f16, bf16 and f32 MFMA${miss:+ (missing:$miss)}"
    fi
else
    skip "gemm on gfx940: MFMA in the disassembly" "hipkit compile --offload-arch gfx940 failed: $(tail -n 1 "$T/gfx940.log")"
fi
img="$dir/gemm.hip-hip-gfx1030.img"
if [ -f "$img" ]; then
    "$hipkit" inspect --disasm "$img" >"$T/gfx1030.s" 2>&1
    grep -q "v_fma\|v_fmac\|v_mac" "$T/gfx1030.s" && ! grep -q "v_mfma" "$T/gfx1030.s"
    ok $? "gemm on gfx1030: the plain tiled path (FMAs, no MFMA)"
else
    skip "gemm on gfx1030: the plain tiled path" "no gfx1030 image (amd_targets)"
fi
echo "1..$n"
exit $fail
