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

#endif
