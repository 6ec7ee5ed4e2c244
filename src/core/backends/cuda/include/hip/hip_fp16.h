/* hipkit's <hip/hip_fp16.h> for the NVIDIA backend: HIP's __half and
 * __half2 are CUDA's, with the same names and intrinsics. */
#ifndef __HK_CUDA_HIP_FP16_H
#define __HK_CUDA_HIP_FP16_H

#include <cuda_fp16.h>

/* HIP (clang's _Float16/__bf16) promotes __half mixed with float or double
 * to that type; with CUDA's __half both the built-in operator and __half's own
 * match, an ambiguity. These exact overloads give HIP's answer. */
#define __HKC_HALF_MIXED(_Hk_F)                                                               \
    static __device__ __forceinline__ _Hk_F operator+(__half __a, _Hk_F __b) { return (_Hk_F)__a + __b; }  \
    static __device__ __forceinline__ _Hk_F operator-(__half __a, _Hk_F __b) { return (_Hk_F)__a - __b; }  \
    static __device__ __forceinline__ _Hk_F operator*(__half __a, _Hk_F __b) { return (_Hk_F)__a * __b; }  \
    static __device__ __forceinline__ _Hk_F operator/(__half __a, _Hk_F __b) { return (_Hk_F)__a / __b; }  \
    static __device__ __forceinline__ _Hk_F operator+(_Hk_F __a, __half __b) { return __a + (_Hk_F)__b; }  \
    static __device__ __forceinline__ _Hk_F operator-(_Hk_F __a, __half __b) { return __a - (_Hk_F)__b; }  \
    static __device__ __forceinline__ _Hk_F operator*(_Hk_F __a, __half __b) { return __a * (_Hk_F)__b; }  \
    static __device__ __forceinline__ _Hk_F operator/(_Hk_F __a, __half __b) { return __a / (_Hk_F)__b; }  \
    static __device__ __forceinline__ bool operator==(__half __a, _Hk_F __b) { return (_Hk_F)__a == __b; } \
    static __device__ __forceinline__ bool operator!=(__half __a, _Hk_F __b) { return (_Hk_F)__a != __b; } \
    static __device__ __forceinline__ bool operator<(__half __a, _Hk_F __b) { return (_Hk_F)__a < __b; }   \
    static __device__ __forceinline__ bool operator>(__half __a, _Hk_F __b) { return (_Hk_F)__a > __b; }   \
    static __device__ __forceinline__ bool operator<=(__half __a, _Hk_F __b) { return (_Hk_F)__a <= __b; } \
    static __device__ __forceinline__ bool operator>=(__half __a, _Hk_F __b) { return (_Hk_F)__a >= __b; } \
    static __device__ __forceinline__ bool operator==(_Hk_F __a, __half __b) { return __a == (_Hk_F)__b; } \
    static __device__ __forceinline__ bool operator!=(_Hk_F __a, __half __b) { return __a != (_Hk_F)__b; } \
    static __device__ __forceinline__ bool operator<(_Hk_F __a, __half __b) { return __a < (_Hk_F)__b; }   \
    static __device__ __forceinline__ bool operator>(_Hk_F __a, __half __b) { return __a > (_Hk_F)__b; }   \
    static __device__ __forceinline__ bool operator<=(_Hk_F __a, __half __b) { return __a <= (_Hk_F)__b; } \
    static __device__ __forceinline__ bool operator>=(_Hk_F __a, __half __b) { return __a >= (_Hk_F)__b; }
__HKC_HALF_MIXED(float)
__HKC_HALF_MIXED(double)
#undef __HKC_HALF_MIXED

/* HIP's half functions CUDA lacks: __hisinf2 (1.0 or 0.0 per lane) and
 * AMD's v_dot2 of two halves onto a float (sat clamps to [0, 1]). */
static __device__ __forceinline__ __half2 __hisinf2(__half2 __a)
{
    return __halves2half2(__float2half(__hisinf(__low2half(__a)) ? 1.0f : 0.0f),
                          __float2half(__hisinf(__high2half(__a)) ? 1.0f : 0.0f));
}
static __device__ __forceinline__ float amd_mixed_dot(__half2 __a, __half2 __b, float __c, bool __sat)
{
    float __r = __low2float(__a) * __low2float(__b) + __high2float(__a) * __high2float(__b) + __c;
    return __sat ? __saturatef(__r) : __r;
}

#endif
