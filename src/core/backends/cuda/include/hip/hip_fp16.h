/* hipkit's <hip/hip_fp16.h> for the NVIDIA backend: HIP's __half and
 * __half2 are CUDA's, with the same names and intrinsics. */
#ifndef HIPKIT_CUDA_HIP_FP16_H
#define HIPKIT_CUDA_HIP_FP16_H

#include <cuda_fp16.h>

/* HIP (clang's _Float16/__bf16) promotes __half mixed with float or double
 * to that type; with CUDA's __half both the built-in operator and __half's own
 * match, an ambiguity. These exact overloads give HIP's answer. */
#define HKC_HALF_MIXED(F)                                                               \
    static __device__ __forceinline__ F operator+(__half a, F b) { return (F)a + b; }  \
    static __device__ __forceinline__ F operator-(__half a, F b) { return (F)a - b; }  \
    static __device__ __forceinline__ F operator*(__half a, F b) { return (F)a * b; }  \
    static __device__ __forceinline__ F operator/(__half a, F b) { return (F)a / b; }  \
    static __device__ __forceinline__ F operator+(F a, __half b) { return a + (F)b; }  \
    static __device__ __forceinline__ F operator-(F a, __half b) { return a - (F)b; }  \
    static __device__ __forceinline__ F operator*(F a, __half b) { return a * (F)b; }  \
    static __device__ __forceinline__ F operator/(F a, __half b) { return a / (F)b; }  \
    static __device__ __forceinline__ bool operator==(__half a, F b) { return (F)a == b; } \
    static __device__ __forceinline__ bool operator!=(__half a, F b) { return (F)a != b; } \
    static __device__ __forceinline__ bool operator<(__half a, F b) { return (F)a < b; }   \
    static __device__ __forceinline__ bool operator>(__half a, F b) { return (F)a > b; }   \
    static __device__ __forceinline__ bool operator<=(__half a, F b) { return (F)a <= b; } \
    static __device__ __forceinline__ bool operator>=(__half a, F b) { return (F)a >= b; } \
    static __device__ __forceinline__ bool operator==(F a, __half b) { return a == (F)b; } \
    static __device__ __forceinline__ bool operator!=(F a, __half b) { return a != (F)b; } \
    static __device__ __forceinline__ bool operator<(F a, __half b) { return a < (F)b; }   \
    static __device__ __forceinline__ bool operator>(F a, __half b) { return a > (F)b; }   \
    static __device__ __forceinline__ bool operator<=(F a, __half b) { return a <= (F)b; } \
    static __device__ __forceinline__ bool operator>=(F a, __half b) { return a >= (F)b; }
HKC_HALF_MIXED(float)
HKC_HALF_MIXED(double)
#undef HKC_HALF_MIXED

#endif
