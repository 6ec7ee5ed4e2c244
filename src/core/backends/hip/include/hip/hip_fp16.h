/* hipkit's <hip/hip_fp16.h> for ROCm 5: hiprtc 5 has hip_fp16 built in (the
 * file system's header would define it twice), and ROCm 5 lacks
 * __double2half. Served to hiprtc as a header and to `hipkit compile` as an
 * include folder, only where the HIP runtime is older than 6.0. */
#ifndef HIPKIT_AMD_HIP_FP16_H
#define HIPKIT_AMD_HIP_FP16_H

#if !defined(__HIPCC_RTC__)
#include_next <hip/hip_fp16.h>
#endif
/* the roundings below use the runtime's device functions (__float_as_uint),
 * which a file that includes hip_fp16.h first has not declared yet */
#include <hip/hip_runtime.h>
#include <hip/hipkit_amd_round.h>

static __device__ __forceinline__ __half __double2half(double d)
{
    return __float2half(hkc_double_to_float_odd(d));
}

#endif
