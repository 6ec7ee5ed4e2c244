/* hipkit's <hip/hip_bf16.h> for the NVIDIA backend: HIP's bfloat16 names
 * for CUDA's __nv_bfloat16 (the conversions, __float2bfloat16 and
 * __bfloat162float, already have the same names). */
#ifndef HIPKIT_CUDA_HIP_BF16_H
#define HIPKIT_CUDA_HIP_BF16_H

#include <cuda_bf16.h>

typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
typedef __nv_bfloat16 hip_bfloat16;

/* HIP (clang's _Float16/__bf16) promotes __nv_bfloat16 mixed with float or double
 * to that type; with CUDA's __nv_bfloat16 both the built-in operator and __nv_bfloat16's own
 * match, an ambiguity. These exact overloads give HIP's answer. */
#define HKC_BF16_MIXED(F)                                                               \
    static __device__ __forceinline__ F operator+(__nv_bfloat16 a, F b) { return (F)a + b; }  \
    static __device__ __forceinline__ F operator-(__nv_bfloat16 a, F b) { return (F)a - b; }  \
    static __device__ __forceinline__ F operator*(__nv_bfloat16 a, F b) { return (F)a * b; }  \
    static __device__ __forceinline__ F operator/(__nv_bfloat16 a, F b) { return (F)a / b; }  \
    static __device__ __forceinline__ F operator+(F a, __nv_bfloat16 b) { return a + (F)b; }  \
    static __device__ __forceinline__ F operator-(F a, __nv_bfloat16 b) { return a - (F)b; }  \
    static __device__ __forceinline__ F operator*(F a, __nv_bfloat16 b) { return a * (F)b; }  \
    static __device__ __forceinline__ F operator/(F a, __nv_bfloat16 b) { return a / (F)b; }  \
    static __device__ __forceinline__ bool operator==(__nv_bfloat16 a, F b) { return (F)a == b; } \
    static __device__ __forceinline__ bool operator!=(__nv_bfloat16 a, F b) { return (F)a != b; } \
    static __device__ __forceinline__ bool operator<(__nv_bfloat16 a, F b) { return (F)a < b; }   \
    static __device__ __forceinline__ bool operator>(__nv_bfloat16 a, F b) { return (F)a > b; }   \
    static __device__ __forceinline__ bool operator<=(__nv_bfloat16 a, F b) { return (F)a <= b; } \
    static __device__ __forceinline__ bool operator>=(__nv_bfloat16 a, F b) { return (F)a >= b; } \
    static __device__ __forceinline__ bool operator==(F a, __nv_bfloat16 b) { return a == (F)b; } \
    static __device__ __forceinline__ bool operator!=(F a, __nv_bfloat16 b) { return a != (F)b; } \
    static __device__ __forceinline__ bool operator<(F a, __nv_bfloat16 b) { return a < (F)b; }   \
    static __device__ __forceinline__ bool operator>(F a, __nv_bfloat16 b) { return a > (F)b; }   \
    static __device__ __forceinline__ bool operator<=(F a, __nv_bfloat16 b) { return a <= (F)b; } \
    static __device__ __forceinline__ bool operator>=(F a, __nv_bfloat16 b) { return a >= (F)b; }
HKC_BF16_MIXED(float)
HKC_BF16_MIXED(double)
#undef HKC_BF16_MIXED

#endif
