/* hipkit's <hip/hip_fp16.h> for ROCm 5: hiprtc 5 has hip_fp16 built in (the
 * file system's header would define it twice), and ROCm 5 lacks
 * __double2half. Served to hiprtc as a header and to `hipkit compile` as an
 * include folder, only where the HIP runtime is older than 6.0. */
#ifndef HIPKIT_AMD_HIP_FP16_H
#define HIPKIT_AMD_HIP_FP16_H

#if !defined(__HIPCC_RTC__)
#include_next <hip/hip_fp16.h>
#else
#include <hip/hip_runtime.h>
#endif

/* A double to float rounded toward zero with a sticky last bit ("round to
 * odd"): rounding that once more to a narrower format (half, bfloat16) then
 * gives the same result as rounding the double directly. */
static __device__ __forceinline__ float hkc_double_to_float_odd(double d)
{
    float f = (float)d;
    if (fabsf(f) > fabs(d) || (isinf(f) && !isinf(d)))
        f = nextafterf(f, 0.0f);
    unsigned u = __float_as_uint(f);
    if ((double)f != d && d == d)
        u |= 1u;
    return __uint_as_float(u);
}

static __device__ __forceinline__ __half __double2half(double d)
{
    return __float2half(hkc_double_to_float_odd(d));
}

#endif
