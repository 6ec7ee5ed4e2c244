/* hipkit's <hip/hip_runtime.h> for ROCm 5: the runtime header, plus the
 * parts of HIP's device API that arrived in ROCm 6 and that hipkit's other
 * backends have: the hipThreadIdx_x family, the _sync warp intrinsics (64-bit masks, as HIP declares
 * them), __activemask, __syncwarp and __reduce_*_sync. hiprtc 5 has the
 * runtime header built in, so there only the additions remain. Served only
 * where the HIP runtime is older than 6.0 (hip_compile.c). */
#ifndef HIPKIT_AMD_HIP_RUNTIME_H
#define HIPKIT_AMD_HIP_RUNTIME_H

#if !defined(__HIPCC_RTC__)
#include_next <hip/hip_runtime.h>
#endif

#if defined(__HIP_DEVICE_COMPILE__) || defined(__HIPCC_RTC__)

/* HIP's older coordinate names, which hiprtc 5's built-in header lacks. */
#ifndef hipThreadIdx_x
#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z
#endif

/* The lanes named by a mask must all take part; these forms then equal the
 * unmasked ones, which act on the lanes that are active. */
template <typename T>
static __device__ __forceinline__ T __shfl_sync(unsigned long long mask, T v, int src, int width = warpSize)
{
    (void)mask;
    return __shfl(v, src, width);
}
template <typename T>
static __device__ __forceinline__ T __shfl_up_sync(unsigned long long mask, T v, unsigned int d, int width = warpSize)
{
    (void)mask;
    return __shfl_up(v, d, width);
}
template <typename T>
static __device__ __forceinline__ T __shfl_down_sync(unsigned long long mask, T v, unsigned int d, int width = warpSize)
{
    (void)mask;
    return __shfl_down(v, d, width);
}
template <typename T>
static __device__ __forceinline__ T __shfl_xor_sync(unsigned long long mask, T v, int m, int width = warpSize)
{
    (void)mask;
    return __shfl_xor(v, m, width);
}
static __device__ __forceinline__ unsigned long long __activemask(void) { return __ballot(1); }
static __device__ __forceinline__ unsigned long long __ballot_sync(unsigned long long mask, int p)
{
    return __ballot(p) & mask;
}
static __device__ __forceinline__ int __any_sync(unsigned long long mask, int p)
{
    return (__ballot(p) & mask) != 0;
}
static __device__ __forceinline__ int __all_sync(unsigned long long mask, int p)
{
    return (__ballot(p) & mask) == (__activemask() & mask);
}
/* A wavefront runs in lockstep; memory still needs ordering across it. */
static __device__ __forceinline__ void __syncwarp(unsigned long long mask = ~0ull)
{
    (void)mask;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
    __builtin_amdgcn_wave_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

/* Over the lanes of mask, whatever the operation: each lane reads every
 * lane's value (all active lanes must reach it, as with any _sync form). */
#define HKC_REDUCE_SYNC(NAME, T, OP)                                                       \
    static __device__ __forceinline__ T __reduce_##NAME##_sync(unsigned long long mask, T v) \
    {                                                                                      \
        T a = 0;                                                                           \
        int first = 1;                                                                     \
        for (int l = 0; l < warpSize; l++) {                                               \
            T b = __shfl(v, l);                                                            \
            if ((mask >> l) & 1ull) {                                                      \
                a = first ? b : (OP);                                                      \
                first = 0;                                                                 \
            }                                                                              \
        }                                                                                  \
        return a;                                                                          \
    }
HKC_REDUCE_SYNC(add, int, a + b)
HKC_REDUCE_SYNC(add, unsigned, a + b)
HKC_REDUCE_SYNC(min, int, (b < a ? b : a))
HKC_REDUCE_SYNC(min, unsigned, (b < a ? b : a))
HKC_REDUCE_SYNC(max, int, (b > a ? b : a))
HKC_REDUCE_SYNC(max, unsigned, (b > a ? b : a))
HKC_REDUCE_SYNC(and, unsigned, a & b)
HKC_REDUCE_SYNC(or, unsigned, a | b)
HKC_REDUCE_SYNC(xor, unsigned, a ^ b)
#undef HKC_REDUCE_SYNC

/* min / max of an unsigned and a coordinate (min(n, blockDim.x), as CUDA
 * sources write it): ROCm 5's coordinates are proxy objects, which make
 * such a call ambiguous between the int, unsigned and float overloads.
 * Templates for the coordinate types only (hipkit_amd_pick.h). */
#include <hip/hipkit_amd_pick.h>
template <typename _C> struct __hk_coord {};
#define HKC_COORD(F)                                                                             \
    template <> struct __hk_coord<__HIP_Coordinates<F>::__X> { typedef unsigned int type; };     \
    template <> struct __hk_coord<__HIP_Coordinates<F>::__Y> { typedef unsigned int type; };     \
    template <> struct __hk_coord<__HIP_Coordinates<F>::__Z> { typedef unsigned int type; };
HKC_COORD(__HIP_ThreadIdx)
HKC_COORD(__HIP_BlockIdx)
HKC_COORD(__HIP_BlockDim)
HKC_COORD(__HIP_GridDim)
#undef HKC_COORD
template <typename _C>
static __device__ __forceinline__ typename __hk_coord<_C>::type min(unsigned int a, _C b)
{
    unsigned int c = b;
    return a < c ? a : c;
}
template <typename _C>
static __device__ __forceinline__ typename __hk_coord<_C>::type min(_C b, unsigned int a)
{
    return min(a, b);
}
template <typename _C>
static __device__ __forceinline__ typename __hk_coord<_C>::type max(unsigned int a, _C b)
{
    unsigned int c = b;
    return a > c ? a : c;
}
template <typename _C>
static __device__ __forceinline__ typename __hk_coord<_C>::type max(_C b, unsigned int a)
{
    return max(a, b);
}

#endif
#endif
