/* hipkit's <hip/hip_runtime.h> for the NVIDIA backend: a device-only shim
 * served to NVRTC (CUDA 13, sm_70 and newer) as a virtual header. It maps
 * the HIP device language onto CUDA's: HIP's index macros, dynamic shared
 * memory macros, the non-_sync warp operations (HIP's __ballot is 64-bit),
 * __lane_id, vector arithmetic, float/double atomicMin/Max and abort.
 *
 * The shuffles, the float atomics and the vector operators cost NVRTC about
 * 7 ms of every compile (measured on the H100 machine). When the backend sees
 * that a source includes no other header, it defines __HIPKIT_LEAN__ and,
 * for each group whose names the source mentions, __HIPKIT_USES_SHFL__,
 * __HIPKIT_USES_FATOMICS__ or __HIPKIT_USES_VECTORS__: the rest is skipped.
 * There is no HIP host API here: hipkit's C API is the host side. */
#ifndef __HK_CUDA_HIP_RUNTIME_H
#define __HK_CUDA_HIP_RUNTIME_H

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "hipkit's NVIDIA backend needs sm_70 or newer"
#endif

#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
#ifndef __HIP_DEVICE_COMPILE__
#define __HIP_DEVICE_COMPILE__ 1
#endif
#define __HIPKIT_CUDA__ 1

/* ------------------------------------------------------------ indexing */
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

/* ------------------------------------------------------- early start */
/* hk_grid_wait(): the wait of a kernel launched with early start
 * (HK_LAUNCH_EARLY_START, hipkit.h): returns once the kernel before it has
 * finished and its writes are visible, then lets the kernel after it start
 * early in turn. Before sm_90, and without early start, it costs nothing. */
static __device__ __forceinline__ void __hk_grid_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
#define hk_grid_wait() __hk_grid_wait()

/* ------------------------------------------------------ shared memory */
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#define HIP_DYNAMIC_SHARED(type, __var) extern __shared__ type __var[]

/* --------------------------------------------------- warp operations */
/* HIP's non-_sync forms name the whole warp, as the _sync forms do with a
 * full mask on NVIDIA (warpSize 32). */
#define __HKC_FULL_MASK 0xffffffffu

#if !defined(__HIPKIT_LEAN__) || defined(__HIPKIT_USES_SHFL__)
#define __HKC_SHFL_FOR(_Hk_T)                                                              \
    static __device__ __forceinline__ _Hk_T __shfl(_Hk_T __var, int __src, int __width = warpSize) \
    {                                                                                \
        return __shfl_sync(__HKC_FULL_MASK, __var, __src, __width);                          \
    }                                                                                \
    static __device__ __forceinline__ _Hk_T __shfl_up(_Hk_T __var, unsigned int __delta,         \
                                                  int __width = warpSize)              \
    {                                                                                \
        return __shfl_up_sync(__HKC_FULL_MASK, __var, __delta, __width);                     \
    }                                                                                \
    static __device__ __forceinline__ _Hk_T __shfl_down(_Hk_T __var, unsigned int __delta,       \
                                                    int __width = warpSize)            \
    {                                                                                \
        return __shfl_down_sync(__HKC_FULL_MASK, __var, __delta, __width);                   \
    }                                                                                \
    static __device__ __forceinline__ _Hk_T __shfl_xor(_Hk_T __var, int __mask,                  \
                                                   int __width = warpSize)             \
    {                                                                                \
        return __shfl_xor_sync(__HKC_FULL_MASK, __var, __mask, __width);                     \
    }

__HKC_SHFL_FOR(int)
__HKC_SHFL_FOR(unsigned int)
__HKC_SHFL_FOR(long)
__HKC_SHFL_FOR(unsigned long)
__HKC_SHFL_FOR(long long)
__HKC_SHFL_FOR(unsigned long long)
__HKC_SHFL_FOR(float)
__HKC_SHFL_FOR(double)
#undef __HKC_SHFL_FOR
#endif

/* HIP's ballot is 64 bits wide (a wavefront of 64 on AMD). CUDA still
 * declares deprecated non-_sync __ballot (32-bit), __any and __all that
 * sm_70 cannot run, so these names are macros for hipkit's versions. */
static __device__ __forceinline__ unsigned long long __hkc_ballot(int __pred)
{
    return (unsigned long long)__ballot_sync(__HKC_FULL_MASK, __pred);
}
static __device__ __forceinline__ int __hkc_any(int __pred) { return __any_sync(__HKC_FULL_MASK, __pred); }
static __device__ __forceinline__ int __hkc_all(int __pred) { return __all_sync(__HKC_FULL_MASK, __pred); }
#define __ballot(__pred) __hkc_ballot(__pred)
#define __any(__pred) __hkc_any(__pred)
#define __all(__pred) __hkc_all(__pred)

static __device__ __forceinline__ unsigned int __lane_id(void)
{
    unsigned int __r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(__r));
    return __r;
}

#if !defined(__HIPKIT_LEAN__) || defined(__HIPKIT_USES_FATOMICS__)
/* ------------------------------------------------------------- atomics */
/* atomicMin/atomicMax on float and double (CUDA has only integer forms), as
 * compare-and-swap loops on the bits; NaN operands are ignored, as fminf and
 * fmaxf do. */
#define __HKC_ATOMIC_FMINMAX(NAME, SUFFIX, _Hk_T, _Hk_I, PICK, AS_I, AS_T)                  \
    static __device__ __forceinline__ _Hk_T NAME##SUFFIX(_Hk_T *__addr, _Hk_T __val)               \
    {                                                                              \
        _Hk_I *__p = (_Hk_I *)__addr;                                                          \
        _Hk_I __old = *(volatile _Hk_I *)__p, __assumed;                                         \
        do {                                                                       \
            __assumed = __old;                                                         \
            _Hk_I __want = AS_I(PICK(AS_T(__assumed), __val));                               \
            if (__want == __assumed)                                                   \
                break;                                                             \
            __old = atomicCAS##SUFFIX(__p, __assumed, __want);                             \
        } while (__old != __assumed);                                                  \
        return AS_T(__old);                                                          \
    }
#define __HKC_ATOMIC_FMINMAX_ALL(SUFFIX)                                                         \
    __HKC_ATOMIC_FMINMAX(atomicMin, SUFFIX, float, int, fminf, __float_as_int, __int_as_float)   \
    __HKC_ATOMIC_FMINMAX(atomicMax, SUFFIX, float, int, fmaxf, __float_as_int, __int_as_float)   \
    __HKC_ATOMIC_FMINMAX(atomicMin, SUFFIX, double, unsigned long long, fmin,                    \
                       (unsigned long long)__double_as_longlong, __hkc_ull_as_double)         \
    __HKC_ATOMIC_FMINMAX(atomicMax, SUFFIX, double, unsigned long long, fmax,                    \
                       (unsigned long long)__double_as_longlong, __hkc_ull_as_double)

static __device__ __forceinline__ double __hkc_ull_as_double(unsigned long long __v)
{
    return __longlong_as_double((long long)__v);
}
__HKC_ATOMIC_FMINMAX_ALL()
__HKC_ATOMIC_FMINMAX_ALL(_block)
__HKC_ATOMIC_FMINMAX_ALL(_system)
#undef __HKC_ATOMIC_FMINMAX_ALL
#undef __HKC_ATOMIC_FMINMAX
#endif

/* --------------------------------------------------------------- abort */
/* Device code has no C library: abort() traps, as HIP's does. Under NVRTC
 * only: nvcc (hipkit compile) declares the C library's own abort. */
#if defined(__CUDACC_RTC__) && !defined(__HK_RTC_ABORT) /* the same in <stdlib.h> */
#define __HK_RTC_ABORT 1
static __device__ __forceinline__ void abort(void) { __trap(); }
namespace std {
using ::abort;
}
#endif

#if !defined(__HIPKIT_LEAN__) || defined(__HIPKIT_USES_VECTORS__)
/* --------------------------------------------------- vector arithmetic */
/* HIP defines component-wise operators on its vector types; CUDA does not.
 * Vector op vector, vector op scalar, scalar op vector, the compound
 * assignments, unary minus and plus, and (for integers) % & | ^ << >> ~.
 * They are templates over a trait that only the vector types have, so the
 * compiler parses them once and instantiates only what a kernel uses:
 * written out per type, they cost NVRTC about 80 ms on every compile. The
 * 4-wide 64-bit types are deprecated in CUDA 13 and left out. */
template <typename _Hk_V> struct __hkc_vec;     /* arithmetic vectors: elem, n */
template <typename _Hk_V> struct __hkc_int_vec; /* integer vectors only */
#define __HKC_VEC(_Hk_V, _Hk_T, _Hk_N) template <> struct __hkc_vec<_Hk_V> { typedef _Hk_T __elem; enum { __n = _Hk_N }; };
#define __HKC_IVEC(_Hk_V, _Hk_T, _Hk_N) __HKC_VEC(_Hk_V, _Hk_T, _Hk_N) template <> struct __hkc_int_vec<_Hk_V> { typedef _Hk_T __elem; };
#define __HKC_IVEC4(_Hk_P, _Hk_T) __HKC_IVEC(_Hk_P##1, _Hk_T, 1) __HKC_IVEC(_Hk_P##2, _Hk_T, 2) __HKC_IVEC(_Hk_P##3, _Hk_T, 3) __HKC_IVEC(_Hk_P##4, _Hk_T, 4)
#define __HKC_IVEC3(_Hk_P, _Hk_T) __HKC_IVEC(_Hk_P##1, _Hk_T, 1) __HKC_IVEC(_Hk_P##2, _Hk_T, 2) __HKC_IVEC(_Hk_P##3, _Hk_T, 3)
__HKC_IVEC4(char, signed char)
__HKC_IVEC4(uchar, unsigned char)
__HKC_IVEC4(short, short)
__HKC_IVEC4(ushort, unsigned short)
__HKC_IVEC4(int, int)
__HKC_IVEC4(uint, unsigned int)
__HKC_IVEC3(long, long)
__HKC_IVEC3(ulong, unsigned long)
__HKC_IVEC3(longlong, long long)
__HKC_IVEC3(ulonglong, unsigned long long)
__HKC_VEC(float1, float, 1)
__HKC_VEC(float2, float, 2)
__HKC_VEC(float3, float, 3)
__HKC_VEC(float4, float, 4)
__HKC_VEC(double1, double, 1)
__HKC_VEC(double2, double, 2)
__HKC_VEC(double3, double, 3)
#undef __HKC_IVEC3
#undef __HKC_IVEC4
#undef __HKC_IVEC
#undef __HKC_VEC

/* Component i of a vector: the members are laid out as an array of elem. */
#define __HKC_C(__v, __i) (reinterpret_cast<_Hk_E *>(&(__v))[__i])
#define __HKC_CC(__v, __i) (reinterpret_cast<const _Hk_E *>(&(__v))[__i])

#define __HKC_VOP(TRAIT, OP, OPEQ)                                                              \
    template <typename _Hk_V, typename _Hk_E = typename TRAIT<_Hk_V>::__elem>                               \
    __device__ __forceinline__ _Hk_V &operator OPEQ(_Hk_V &__a, const _Hk_V &__b)                             \
    {                                                                                         \
        for (int __i = 0; __i < __hkc_vec<_Hk_V>::__n; __i++)                                               \
            __HKC_C(__a, __i) OPEQ __HKC_CC(__b, __i);                                                    \
        return __a;                                                                             \
    }                                                                                         \
    template <typename _Hk_V, typename _Hk_E = typename TRAIT<_Hk_V>::__elem>                               \
    __device__ __forceinline__ _Hk_V &operator OPEQ(_Hk_V &__a, typename TRAIT<_Hk_V>::__elem __s)              \
    {                                                                                         \
        for (int __i = 0; __i < __hkc_vec<_Hk_V>::__n; __i++)                                               \
            __HKC_C(__a, __i) OPEQ __s;                                                               \
        return __a;                                                                             \
    }                                                                                         \
    template <typename _Hk_V, typename _Hk_E = typename TRAIT<_Hk_V>::__elem>                               \
    __device__ __forceinline__ _Hk_V operator OP(_Hk_V __a, const _Hk_V &__b) { return __a OPEQ __b; }            \
    template <typename _Hk_V, typename _Hk_E = typename TRAIT<_Hk_V>::__elem>                               \
    __device__ __forceinline__ _Hk_V operator OP(_Hk_V __a, typename TRAIT<_Hk_V>::__elem __s) { return __a OPEQ __s; } \
    template <typename _Hk_V, typename _Hk_E = typename TRAIT<_Hk_V>::__elem>                               \
    __device__ __forceinline__ _Hk_V operator OP(typename TRAIT<_Hk_V>::__elem __s, const _Hk_V &__b)           \
    {                                                                                         \
        _Hk_V __a;                                                                                  \
        for (int __i = 0; __i < __hkc_vec<_Hk_V>::__n; __i++)                                               \
            __HKC_C(__a, __i) = __s;                                                                  \
        return __a OPEQ __b;                                                                      \
    }

__HKC_VOP(__hkc_vec, +, +=)
__HKC_VOP(__hkc_vec, -, -=)
__HKC_VOP(__hkc_vec, *, *=)
__HKC_VOP(__hkc_vec, /, /=)
__HKC_VOP(__hkc_int_vec, %, %=)
__HKC_VOP(__hkc_int_vec, &, &=)
__HKC_VOP(__hkc_int_vec, |, |=)
__HKC_VOP(__hkc_int_vec, ^, ^=)
__HKC_VOP(__hkc_int_vec, <<, <<=)
__HKC_VOP(__hkc_int_vec, >>, >>=)

template <typename _Hk_V, typename _Hk_E = typename __hkc_vec<_Hk_V>::__elem>
__device__ __forceinline__ _Hk_V operator-(const _Hk_V &__a)
{
    _Hk_V __r;
    for (int __i = 0; __i < __hkc_vec<_Hk_V>::__n; __i++)
        __HKC_C(__r, __i) = (_Hk_E)-__HKC_CC(__a, __i);
    return __r;
}
template <typename _Hk_V, typename _Hk_E = typename __hkc_vec<_Hk_V>::__elem>
__device__ __forceinline__ _Hk_V operator+(const _Hk_V &__a) { return __a; }
template <typename _Hk_V, typename _Hk_E = typename __hkc_int_vec<_Hk_V>::__elem>
__device__ __forceinline__ _Hk_V operator~(const _Hk_V &__a)
{
    _Hk_V __r;
    for (int __i = 0; __i < __hkc_vec<_Hk_V>::__n; __i++)
        __HKC_C(__r, __i) = (_Hk_E)~__HKC_CC(__a, __i);
    return __r;
}

#undef __HKC_VOP
#undef __HKC_CC
#undef __HKC_C
#endif

#include <hip/hipkit_cuda_intrinsics.h>

#endif
