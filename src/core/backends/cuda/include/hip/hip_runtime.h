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
#ifndef HIPKIT_CUDA_HIP_RUNTIME_H
#define HIPKIT_CUDA_HIP_RUNTIME_H

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

/* ------------------------------------------------------ shared memory */
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[]

/* --------------------------------------------------- warp operations */
/* HIP's non-_sync forms name the whole warp, as the _sync forms do with a
 * full mask on NVIDIA (warpSize 32). */
#define HKC_FULL_MASK 0xffffffffu

#if !defined(__HIPKIT_LEAN__) || defined(__HIPKIT_USES_SHFL__)
#define HKC_SHFL_FOR(T)                                                              \
    static __device__ __forceinline__ T __shfl(T var, int src, int width = warpSize) \
    {                                                                                \
        return __shfl_sync(HKC_FULL_MASK, var, src, width);                          \
    }                                                                                \
    static __device__ __forceinline__ T __shfl_up(T var, unsigned int delta,         \
                                                  int width = warpSize)              \
    {                                                                                \
        return __shfl_up_sync(HKC_FULL_MASK, var, delta, width);                     \
    }                                                                                \
    static __device__ __forceinline__ T __shfl_down(T var, unsigned int delta,       \
                                                    int width = warpSize)            \
    {                                                                                \
        return __shfl_down_sync(HKC_FULL_MASK, var, delta, width);                   \
    }                                                                                \
    static __device__ __forceinline__ T __shfl_xor(T var, int mask,                  \
                                                   int width = warpSize)             \
    {                                                                                \
        return __shfl_xor_sync(HKC_FULL_MASK, var, mask, width);                     \
    }

HKC_SHFL_FOR(int)
HKC_SHFL_FOR(unsigned int)
HKC_SHFL_FOR(long)
HKC_SHFL_FOR(unsigned long)
HKC_SHFL_FOR(long long)
HKC_SHFL_FOR(unsigned long long)
HKC_SHFL_FOR(float)
HKC_SHFL_FOR(double)
#undef HKC_SHFL_FOR
#endif

/* HIP's ballot is 64 bits wide (a wavefront of 64 on AMD). CUDA still
 * declares deprecated non-_sync __ballot (32-bit), __any and __all that
 * sm_70 cannot run, so these names are macros for hipkit's versions. */
static __device__ __forceinline__ unsigned long long __hkc_ballot(int pred)
{
    return (unsigned long long)__ballot_sync(HKC_FULL_MASK, pred);
}
static __device__ __forceinline__ int __hkc_any(int pred) { return __any_sync(HKC_FULL_MASK, pred); }
static __device__ __forceinline__ int __hkc_all(int pred) { return __all_sync(HKC_FULL_MASK, pred); }
#define __ballot(pred) __hkc_ballot(pred)
#define __any(pred) __hkc_any(pred)
#define __all(pred) __hkc_all(pred)

static __device__ __forceinline__ unsigned int __lane_id(void)
{
    unsigned int r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
}

#if !defined(__HIPKIT_LEAN__) || defined(__HIPKIT_USES_FATOMICS__)
/* ------------------------------------------------------------- atomics */
/* atomicMin/atomicMax on float and double (CUDA has only integer forms), as
 * compare-and-swap loops on the bits; NaN operands are ignored, as fminf and
 * fmaxf do. */
#define HKC_ATOMIC_FMINMAX(NAME, SUFFIX, T, I, PICK, AS_I, AS_T)                  \
    static __device__ __forceinline__ T NAME##SUFFIX(T *addr, T val)               \
    {                                                                              \
        I *p = (I *)addr;                                                          \
        I old = *(volatile I *)p, assumed;                                         \
        do {                                                                       \
            assumed = old;                                                         \
            I want = AS_I(PICK(AS_T(assumed), val));                               \
            if (want == assumed)                                                   \
                break;                                                             \
            old = atomicCAS##SUFFIX(p, assumed, want);                             \
        } while (old != assumed);                                                  \
        return AS_T(old);                                                          \
    }
#define HKC_ATOMIC_FMINMAX_ALL(SUFFIX)                                                         \
    HKC_ATOMIC_FMINMAX(atomicMin, SUFFIX, float, int, fminf, __float_as_int, __int_as_float)   \
    HKC_ATOMIC_FMINMAX(atomicMax, SUFFIX, float, int, fmaxf, __float_as_int, __int_as_float)   \
    HKC_ATOMIC_FMINMAX(atomicMin, SUFFIX, double, unsigned long long, fmin,                    \
                       (unsigned long long)__double_as_longlong, __hkc_ull_as_double)         \
    HKC_ATOMIC_FMINMAX(atomicMax, SUFFIX, double, unsigned long long, fmax,                    \
                       (unsigned long long)__double_as_longlong, __hkc_ull_as_double)

static __device__ __forceinline__ double __hkc_ull_as_double(unsigned long long v)
{
    return __longlong_as_double((long long)v);
}
HKC_ATOMIC_FMINMAX_ALL()
HKC_ATOMIC_FMINMAX_ALL(_block)
HKC_ATOMIC_FMINMAX_ALL(_system)
#undef HKC_ATOMIC_FMINMAX_ALL
#undef HKC_ATOMIC_FMINMAX
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
template <typename V> struct hkc_vec;     /* arithmetic vectors: elem, n */
template <typename V> struct hkc_int_vec; /* integer vectors only */
#define HKC_VEC(V, T, N) template <> struct hkc_vec<V> { typedef T elem; enum { n = N }; };
#define HKC_IVEC(V, T, N) HKC_VEC(V, T, N) template <> struct hkc_int_vec<V> { typedef T elem; };
#define HKC_IVEC4(P, T) HKC_IVEC(P##1, T, 1) HKC_IVEC(P##2, T, 2) HKC_IVEC(P##3, T, 3) HKC_IVEC(P##4, T, 4)
#define HKC_IVEC3(P, T) HKC_IVEC(P##1, T, 1) HKC_IVEC(P##2, T, 2) HKC_IVEC(P##3, T, 3)
HKC_IVEC4(char, signed char)
HKC_IVEC4(uchar, unsigned char)
HKC_IVEC4(short, short)
HKC_IVEC4(ushort, unsigned short)
HKC_IVEC4(int, int)
HKC_IVEC4(uint, unsigned int)
HKC_IVEC3(long, long)
HKC_IVEC3(ulong, unsigned long)
HKC_IVEC3(longlong, long long)
HKC_IVEC3(ulonglong, unsigned long long)
HKC_VEC(float1, float, 1)
HKC_VEC(float2, float, 2)
HKC_VEC(float3, float, 3)
HKC_VEC(float4, float, 4)
HKC_VEC(double1, double, 1)
HKC_VEC(double2, double, 2)
HKC_VEC(double3, double, 3)
#undef HKC_IVEC3
#undef HKC_IVEC4
#undef HKC_IVEC
#undef HKC_VEC

/* Component i of a vector: the members are laid out as an array of elem. */
#define HKC_C(v, i) (reinterpret_cast<E *>(&(v))[i])
#define HKC_CC(v, i) (reinterpret_cast<const E *>(&(v))[i])

#define HKC_VOP(TRAIT, OP, OPEQ)                                                              \
    template <typename V, typename E = typename TRAIT<V>::elem>                               \
    __device__ __forceinline__ V &operator OPEQ(V &a, const V &b)                             \
    {                                                                                         \
        for (int i = 0; i < hkc_vec<V>::n; i++)                                               \
            HKC_C(a, i) OPEQ HKC_CC(b, i);                                                    \
        return a;                                                                             \
    }                                                                                         \
    template <typename V, typename E = typename TRAIT<V>::elem>                               \
    __device__ __forceinline__ V &operator OPEQ(V &a, typename TRAIT<V>::elem s)              \
    {                                                                                         \
        for (int i = 0; i < hkc_vec<V>::n; i++)                                               \
            HKC_C(a, i) OPEQ s;                                                               \
        return a;                                                                             \
    }                                                                                         \
    template <typename V, typename E = typename TRAIT<V>::elem>                               \
    __device__ __forceinline__ V operator OP(V a, const V &b) { return a OPEQ b; }            \
    template <typename V, typename E = typename TRAIT<V>::elem>                               \
    __device__ __forceinline__ V operator OP(V a, typename TRAIT<V>::elem s) { return a OPEQ s; } \
    template <typename V, typename E = typename TRAIT<V>::elem>                               \
    __device__ __forceinline__ V operator OP(typename TRAIT<V>::elem s, const V &b)           \
    {                                                                                         \
        V a;                                                                                  \
        for (int i = 0; i < hkc_vec<V>::n; i++)                                               \
            HKC_C(a, i) = s;                                                                  \
        return a OPEQ b;                                                                      \
    }

HKC_VOP(hkc_vec, +, +=)
HKC_VOP(hkc_vec, -, -=)
HKC_VOP(hkc_vec, *, *=)
HKC_VOP(hkc_vec, /, /=)
HKC_VOP(hkc_int_vec, %, %=)
HKC_VOP(hkc_int_vec, &, &=)
HKC_VOP(hkc_int_vec, |, |=)
HKC_VOP(hkc_int_vec, ^, ^=)
HKC_VOP(hkc_int_vec, <<, <<=)
HKC_VOP(hkc_int_vec, >>, >>=)

template <typename V, typename E = typename hkc_vec<V>::elem>
__device__ __forceinline__ V operator-(const V &a)
{
    V r;
    for (int i = 0; i < hkc_vec<V>::n; i++)
        HKC_C(r, i) = (E)-HKC_CC(a, i);
    return r;
}
template <typename V, typename E = typename hkc_vec<V>::elem>
__device__ __forceinline__ V operator+(const V &a) { return a; }
template <typename V, typename E = typename hkc_int_vec<V>::elem>
__device__ __forceinline__ V operator~(const V &a)
{
    V r;
    for (int i = 0; i < hkc_vec<V>::n; i++)
        HKC_C(r, i) = (E)~HKC_CC(a, i);
    return r;
}

#undef HKC_VOP
#undef HKC_CC
#undef HKC_C
#endif

#endif
