/* HIP device functions that CUDA lacks or names otherwise, for the NVIDIA
 * backend (included by hip/hip_runtime.h): the AMD bit intrinsics, lane
 * masks and counts, clocks, barriers under HIP's names, amd_mixed_dot,
 * powi, and the atomics HIP has on more types (unsigned long, float and
 * double compare-and-swap, subtraction). Kept small: NVRTC parses all of
 * it on every compile. */
#ifndef __HK_CUDA_INTRINSICS_H
#define __HK_CUDA_INTRINSICS_H

/* Every function with parameters is a template with nothing to deduce:
 * NVRTC checks a template's body only when a kernel calls it, which keeps
 * what this header costs a compile that uses none of it small. Calls and
 * overload resolution are as for plain functions. (Those without
 * parameters stay plain: they are short, and a template there would tie
 * with another template of the same name.) */
#define __HKC_LAZY template <typename _Hk_Lazy = void>

/* ------------------------------------------------------------ bits */
/* HIP's AMD semantics: offsets and widths taken mod 32 (64). */
__HKC_LAZY static __device__ __forceinline__ unsigned int __bitextract_u32(unsigned int __s, unsigned int __o, unsigned int __w)
{
    return (__w & 31) ? (__s >> (__o & 31)) & ((1u << (__w & 31)) - 1) : 0u;
}
__HKC_LAZY static __device__ __forceinline__ unsigned long long __bitextract_u64(unsigned long long __s, unsigned int __o,
                                                                    unsigned int __w)
{
    return (__w & 63) ? (__s >> (__o & 63)) & ((1ull << (__w & 63)) - 1) : 0ull;
}
__HKC_LAZY static __device__ __forceinline__ unsigned int __bitinsert_u32(unsigned int __d, unsigned int __s, unsigned int __o,
                                                             unsigned int __w)
{
    const unsigned int __m = ((1u << (__w & 31)) - 1) << (__o & 31);
    return (__d & ~__m) | ((__s << (__o & 31)) & __m);
}
__HKC_LAZY static __device__ __forceinline__ unsigned long long __bitinsert_u64(unsigned long long __d, unsigned long long __s,
                                                                   unsigned int __o, unsigned int __w)
{
    const unsigned long long __m = ((1ull << (__w & 63)) - 1) << (__o & 63);
    return (__d & ~__m) | ((__s << (__o & 63)) & __m);
}
/* The offset-th set bit of mask from base (downward for a negative
 * offset; offset 0: base itself if set), or -1. CUDA's __fns is 32-bit. */
__HKC_LAZY static __device__ __forceinline__ int __fns64(unsigned long long __mask, unsigned int __base, int __off)
{
    if (__base > 63)
        return -1;
    if (__off == 0)
        return (int)((__mask >> __base) & 1) ? (int)__base : -1;
    unsigned long long __m = __off > 0 ? __mask & (~0ull << __base) : __mask & (~0ull >> (63 - __base));
    int __n = __off > 0 ? __off : -__off;
    if (__popcll(__m) < __n)
        return -1;
    for (; __n > 1; __n--) /* drop the nearer set bits */
        __m = __off > 0 ? __m & (__m - 1) : __m & ~(1ull << (63 - __clzll((long long)__m)));
    return __off > 0 ? __ffsll((long long)__m) - 1 : 63 - __clzll((long long)__m);
}
__HKC_LAZY static __device__ __forceinline__ int __fns32(unsigned long long __mask, unsigned int __base, int __off)
{
    return __fns64(__mask, __base, __off);
}

/* ----------------------------------------------------------- lanes */
/* HIP's masks are 64-bit and name only the lanes still running. */
__HKC_LAZY static __device__ __forceinline__ unsigned long long __hkc_lanemask(unsigned int __m)
{
    return (unsigned long long)(__m & __activemask());
}
static __device__ __forceinline__ unsigned long long __lanemask_lt(void)
{
    unsigned int __r;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(__r));
    return __hkc_lanemask(__r);
}
static __device__ __forceinline__ unsigned long long __lanemask_gt(void)
{
    unsigned int __r;
    asm("mov.u32 %0, %%lanemask_gt;" : "=r"(__r));
    return __hkc_lanemask(__r);
}
static __device__ __forceinline__ unsigned long long __lanemask_eq(void)
{
    unsigned int __r;
    asm("mov.u32 %0, %%lanemask_eq;" : "=r"(__r));
    return __r;
}
/* A lane's rank among mask's lanes: low half (lanes 0-31, all of an
 * NVIDIA warp) and high half (lanes 32-63: none here, so only acc). */
__HKC_LAZY static __device__ __forceinline__ unsigned int __mbcnt_lo(unsigned int __mask, unsigned int __acc)
{
    unsigned int __lt;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(__lt));
    return __acc + (unsigned int)__popc(__mask & __lt);
}
__HKC_LAZY static __device__ __forceinline__ unsigned int __mbcnt_hi(unsigned int __mask, unsigned int __acc)
{
    (void)__mask;
    return __acc;
}
__HKC_LAZY static __device__ __forceinline__ unsigned long long __ballot64(int __pred)
{
    return (unsigned long long)__ballot_sync(0xffffffffu, __pred);
}
static __device__ __forceinline__ unsigned int __smid(void)
{
    unsigned int __r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(__r));
    return __r;
}

/* ------------------------------------------- clocks, barriers, misc */
static __device__ __forceinline__ long long __clock64(void) { return clock64(); }
static __device__ __forceinline__ long long __clock(void) { return clock64(); }
/* A constant-rate clock: the global timer, in nanoseconds. */
static __device__ __forceinline__ long long wall_clock64(void)
{
    unsigned long long __t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(__t));
    return (long long)__t;
}
__HKC_LAZY static __device__ __forceinline__ void __named_sync(int __a, int __b)
{
    (void)__a, (void)__b;
    __syncthreads();
}
__HKC_LAZY static __device__ __forceinline__ void __barrier(int __n)
{
    (void)__n;
    __syncthreads();
}
__HKC_LAZY static __device__ __forceinline__ void *__local_to_generic(void *__p) { return __p; }
/* glibc's assert hook, as CUDA's own; nvcc (hipkit compile) declares
 * glibc's already. */
#if defined(__CUDACC_RTC__)
__HKC_LAZY static __device__ __forceinline__ void __assert_fail(const char *__e, const char *__f, unsigned int __l, const char *__fn)
{
    __assertfail(__e, __f, __l, __fn, 1);
}
#endif
__HKC_LAZY static __device__ __forceinline__ float powif(float __x, int __n) { return powf(__x, (float)__n); }
__HKC_LAZY static __device__ __forceinline__ double powi(double __x, int __n) { return pow(__x, (double)__n); }

/* ------------------------------------------------------ dot products */
/* AMD's v_dot: lanes multiplied and summed onto c; sat clamps instead of
 * wrapping. The byte forms are CUDA's __dp4a; the int forms take eight
 * 4-bit lanes per word. */
__HKC_LAZY static __device__ __forceinline__ int __hkc_sat_int(long long __s, bool __sat)
{
    return __sat ? (int)max(min(__s, 2147483647ll), -2147483647ll - 1) : (int)__s;
}
__HKC_LAZY static __device__ __forceinline__ unsigned int __hkc_sat_uint(unsigned long long __s, bool __sat)
{
    return __sat && __s > 0xffffffffull ? 0xffffffffu : (unsigned int)__s;
}
__HKC_LAZY static __device__ __forceinline__ int amd_mixed_dot(short2 __a, short2 __b, int __c, bool __sat)
{
    return __hkc_sat_int((long long)__c + (long long)__a.x * __b.x + (long long)__a.y * __b.y, __sat);
}
__HKC_LAZY static __device__ __forceinline__ unsigned int amd_mixed_dot(ushort2 __a, ushort2 __b, unsigned int __c, bool __sat)
{
    return __hkc_sat_uint((unsigned long long)__c + (unsigned long long)__a.x * __b.x +
                              (unsigned long long)__a.y * __b.y, __sat);
}
__HKC_LAZY static __device__ __forceinline__ int amd_mixed_dot(char4 __a, char4 __b, int __c, bool __sat)
{
    /* the products fit in 17 bits: their sum, exact, then c */
    long long __p = (long long)__dp4a(*(int *)&__a, *(int *)&__b, 0);
    return __hkc_sat_int(__p + __c, __sat);
}
__HKC_LAZY static __device__ __forceinline__ unsigned int amd_mixed_dot(uchar4 __a, uchar4 __b, unsigned int __c, bool __sat)
{
    unsigned long long __p = __dp4a(*(unsigned int *)&__a, *(unsigned int *)&__b, 0u);
    return __hkc_sat_uint(__p + __c, __sat);
}
__HKC_LAZY static __device__ __forceinline__ int amd_mixed_dot(int __a, int __b, int __c, bool __sat)
{
    long long __s = __c;
    for (int __i = 0; __i < 32; __i += 4)
        __s += (long long)((__a << (28 - __i)) >> 28) * ((__b << (28 - __i)) >> 28);
    return __hkc_sat_int(__s, __sat);
}
__HKC_LAZY static __device__ __forceinline__ unsigned int amd_mixed_dot(unsigned int __a, unsigned int __b, unsigned int __c,
                                                           bool __sat)
{
    unsigned long long __s = __c;
    for (int __i = 0; __i < 32; __i += 4)
        __s += (unsigned long long)((__a >> __i) & 15u) * ((__b >> __i) & 15u);
    return __hkc_sat_uint(__s, __sat);
}

/* ---------------------------------------------------------- atomics */
/* unsigned long is 64 bits (LP64): CUDA's unsigned long long atomics. */
#define __HKC_ATOMIC_UL(NAME, SFX)                                                              \
    __HKC_LAZY static __device__ __forceinline__ unsigned long NAME##SFX(unsigned long *__p, unsigned long __v)  \
    {                                                                                          \
        return (unsigned long)NAME##SFX((unsigned long long *)__p, (unsigned long long)__v);   \
    }
#define __HKC_ATOMIC_SCOPES(SFX)                                                                \
    __HKC_ATOMIC_UL(atomicAdd, SFX) __HKC_ATOMIC_UL(atomicExch, SFX) __HKC_ATOMIC_UL(atomicMin, SFX) \
    __HKC_ATOMIC_UL(atomicMax, SFX) __HKC_ATOMIC_UL(atomicAnd, SFX) __HKC_ATOMIC_UL(atomicOr, SFX)   \
    __HKC_ATOMIC_UL(atomicXor, SFX)                                                             \
    __HKC_LAZY static __device__ __forceinline__ unsigned long atomicCAS##SFX(unsigned long *__p, unsigned long __c, \
                                                                  unsigned long __v)           \
    {                                                                                          \
        return (unsigned long)atomicCAS##SFX((unsigned long long *)__p, (unsigned long long)__c, \
                                             (unsigned long long)__v);                         \
    }                                                                                          \
    __HKC_LAZY static __device__ __forceinline__ float atomicCAS##SFX(float *__p, float __c, float __v)    \
    {                                                                                          \
        return __int_as_float(atomicCAS##SFX((int *)__p, __float_as_int(__c), __float_as_int(__v))); \
    }                                                                                          \
    __HKC_LAZY static __device__ __forceinline__ double atomicCAS##SFX(double *__p, double __c, double __v) \
    {                                                                                          \
        return __longlong_as_double((long long)atomicCAS##SFX(                                 \
            (unsigned long long *)__p, (unsigned long long)__double_as_longlong(__c),          \
            (unsigned long long)__double_as_longlong(__v)));                                   \
    }                                                                                          \
    __HKC_LAZY static __device__ __forceinline__ double atomicExch##SFX(double *__p, double __v)          \
    {                                                                                          \
        return __longlong_as_double((long long)atomicExch##SFX(                                \
            (unsigned long long *)__p, (unsigned long long)__double_as_longlong(__v)));        \
    }                                                                                          \
    __HKC_LAZY static __device__ __forceinline__ unsigned long long atomicSub##SFX(unsigned long long *__p, \
                                                                       unsigned long long __v) \
    {                                                                                          \
        return atomicAdd##SFX(__p, 0ull - __v);                                                \
    }                                                                                          \
    __HKC_LAZY static __device__ __forceinline__ unsigned long atomicSub##SFX(unsigned long *__p, unsigned long __v) \
    {                                                                                          \
        return (unsigned long)atomicAdd##SFX((unsigned long long *)__p, 0ull - __v);           \
    }                                                                                          \
    __HKC_LAZY static __device__ __forceinline__ float atomicSub##SFX(float *__p, float __v) { return atomicAdd##SFX(__p, -__v); } \
    __HKC_LAZY static __device__ __forceinline__ double atomicSub##SFX(double *__p, double __v) { return atomicAdd##SFX(__p, -__v); }
__HKC_ATOMIC_SCOPES()
__HKC_ATOMIC_SCOPES(_block)
__HKC_ATOMIC_SCOPES(_system)
#undef __HKC_ATOMIC_SCOPES
#undef __HKC_ATOMIC_UL

/* AMD's fast float atomics that may skip safety checks: CUDA's are the
 * same instruction either way. */
__HKC_LAZY static __device__ __forceinline__ float unsafeAtomicAdd(float *__p, float __v) { return atomicAdd(__p, __v); }
__HKC_LAZY static __device__ __forceinline__ double unsafeAtomicAdd(double *__p, double __v) { return atomicAdd(__p, __v); }
__HKC_LAZY static __device__ __forceinline__ float safeAtomicAdd(float *__p, float __v) { return atomicAdd(__p, __v); }
__HKC_LAZY static __device__ __forceinline__ double safeAtomicAdd(double *__p, double __v) { return atomicAdd(__p, __v); }

#undef __HKC_LAZY

#endif
