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

/* CUDA's half max and min, which ROCm 5.2 lacks (5.7 has some): __hmax /
 * __hmin return the other operand when one is NaN (fmaxf), the _nan forms
 * return NaN then. Templates for __half only (hipkit_amd_pick.h). */
#include <hip/hipkit_amd_pick.h>
template <typename _T>
static __device__ __forceinline__ typename __hk_if_same<_T, __half>::type __hmax(_T a, _T b)
{
    return __float2half(fmaxf(__half2float(a), __half2float(b)));
}
template <typename _T>
static __device__ __forceinline__ typename __hk_if_same<_T, __half>::type __hmin(_T a, _T b)
{
    return __float2half(fminf(__half2float(a), __half2float(b)));
}
template <typename _T>
static __device__ __forceinline__ typename __hk_if_same<_T, __half>::type __hmax_nan(_T a, _T b)
{
    return __hisnan(a) || __hisnan(b) ? __float2half(__builtin_nanf("")) : __hmax(a, b);
}
template <typename _T>
static __device__ __forceinline__ typename __hk_if_same<_T, __half>::type __hmin_nan(_T a, _T b)
{
    return __hisnan(a) || __hisnan(b) ? __float2half(__builtin_nanf("")) : __hmin(a, b);
}
template <typename _T>
static __device__ __forceinline__ typename __hk_if_same<_T, __half2>::type __hmax2(_T a, _T b)
{
    return __halves2half2(__hmax(__low2half(a), __low2half(b)), __hmax(__high2half(a), __high2half(b)));
}
template <typename _T>
static __device__ __forceinline__ typename __hk_if_same<_T, __half2>::type __hmin2(_T a, _T b)
{
    return __halves2half2(__hmin(__low2half(a), __low2half(b)), __hmin(__high2half(a), __high2half(b)));
}

#endif
