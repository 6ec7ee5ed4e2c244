/* hipkit's <hip/hip_bf16.h> for the NVIDIA backend: HIP's bfloat16 names
 * for CUDA's __nv_bfloat16 (the conversions, __float2bfloat16 and
 * __bfloat162float, already have the same names). */
#ifndef __HK_CUDA_HIP_BF16_H
#define __HK_CUDA_HIP_BF16_H

#include <cuda_bf16.h>

typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
typedef __nv_bfloat16 hip_bfloat16;

/* HIP (clang's _Float16/__bf16) promotes __nv_bfloat16 mixed with float or double
 * to that type; with CUDA's __nv_bfloat16 both the built-in operator and __nv_bfloat16's own
 * match, an ambiguity. These exact overloads give HIP's answer. */
#define __HKC_BF16_MIXED(_Hk_F)                                                               \
    static __device__ __forceinline__ _Hk_F operator+(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a + __b; }  \
    static __device__ __forceinline__ _Hk_F operator-(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a - __b; }  \
    static __device__ __forceinline__ _Hk_F operator*(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a * __b; }  \
    static __device__ __forceinline__ _Hk_F operator/(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a / __b; }  \
    static __device__ __forceinline__ _Hk_F operator+(_Hk_F __a, __nv_bfloat16 __b) { return __a + (_Hk_F)__b; }  \
    static __device__ __forceinline__ _Hk_F operator-(_Hk_F __a, __nv_bfloat16 __b) { return __a - (_Hk_F)__b; }  \
    static __device__ __forceinline__ _Hk_F operator*(_Hk_F __a, __nv_bfloat16 __b) { return __a * (_Hk_F)__b; }  \
    static __device__ __forceinline__ _Hk_F operator/(_Hk_F __a, __nv_bfloat16 __b) { return __a / (_Hk_F)__b; }  \
    static __device__ __forceinline__ bool operator==(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a == __b; } \
    static __device__ __forceinline__ bool operator!=(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a != __b; } \
    static __device__ __forceinline__ bool operator<(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a < __b; }   \
    static __device__ __forceinline__ bool operator>(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a > __b; }   \
    static __device__ __forceinline__ bool operator<=(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a <= __b; } \
    static __device__ __forceinline__ bool operator>=(__nv_bfloat16 __a, _Hk_F __b) { return (_Hk_F)__a >= __b; } \
    static __device__ __forceinline__ bool operator==(_Hk_F __a, __nv_bfloat16 __b) { return __a == (_Hk_F)__b; } \
    static __device__ __forceinline__ bool operator!=(_Hk_F __a, __nv_bfloat16 __b) { return __a != (_Hk_F)__b; } \
    static __device__ __forceinline__ bool operator<(_Hk_F __a, __nv_bfloat16 __b) { return __a < (_Hk_F)__b; }   \
    static __device__ __forceinline__ bool operator>(_Hk_F __a, __nv_bfloat16 __b) { return __a > (_Hk_F)__b; }   \
    static __device__ __forceinline__ bool operator<=(_Hk_F __a, __nv_bfloat16 __b) { return __a <= (_Hk_F)__b; } \
    static __device__ __forceinline__ bool operator>=(_Hk_F __a, __nv_bfloat16 __b) { return __a >= (_Hk_F)__b; }
__HKC_BF16_MIXED(float)
__HKC_BF16_MIXED(double)
#undef __HKC_BF16_MIXED

/* HIP's hip_bfloat16 class has these as free functions. */
static __device__ __forceinline__ bool isinf(__nv_bfloat16 __a) { return __hisinf(__a) != 0; }
static __device__ __forceinline__ bool isnan(__nv_bfloat16 __a) { return __hisnan(__a); }
static __device__ __forceinline__ bool iszero(__nv_bfloat16 __a) { return (__bfloat16_as_ushort(__a) & 0x7fffu) == 0; }

#endif
