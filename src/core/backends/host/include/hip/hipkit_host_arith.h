/* Integer intrinsics and the math library of hipkit's CPU backend.
 * Included by hipkit_host_device.h. */
#ifndef __HK_HOST_ARITH_H
#define __HK_HOST_ARITH_H

/* ------------------------------------------------------------------------ */
/* Integer intrinsics */

static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
static inline int __clzll(long long x)
{
    return x ? __builtin_clzll((unsigned long long)x) : 64;
}
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffs(unsigned int x) { return __builtin_ffs((int)x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
static inline unsigned int __brev(unsigned int x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x)
{
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
static inline int __mul24(int __a, int __b)
{
    /* Low 32 bits of the product of the sign-extended low 24 bits. */
    long long x = (long long)(int32_t)((uint32_t)__a << 8) >> 8;
    long long y = (long long)(int32_t)((uint32_t)__b << 8) >> 8;
    return (int)(uint32_t)(uint64_t)(x * y);
}
static inline unsigned int __umul24(unsigned int __a, unsigned int __b)
{
    return (__a & 0xffffffu) * (__b & 0xffffffu);
}
static inline int __mulhi(int __a, int __b) { return (int)(((long long)__a * __b) >> 32); }
static inline unsigned int __umulhi(unsigned int __a, unsigned int __b)
{
    return (unsigned int)(((unsigned long long)__a * __b) >> 32);
}
__extension__ typedef __int128 __hk_i128;
__extension__ typedef unsigned __int128 __hk_u128;
static inline long long __mul64hi(long long __a, long long __b)
{
    return (long long)(((__hk_i128)__a * __b) >> 64);
}
static inline unsigned long long __umul64hi(unsigned long long __a, unsigned long long __b)
{
    return (unsigned long long)(((__hk_u128)__a * __b) >> 64);
}
static inline unsigned int __sad(int __a, int __b, unsigned int __c)
{
    return __c + (unsigned int)(__a > __b ? (long long)__a - __b : (long long)__b - __a);
}
static inline unsigned int __usad(unsigned int __a, unsigned int __b, unsigned int __c)
{
    return __c + (__a > __b ? __a - __b : __b - __a);
}
static inline int __hadd(int __a, int __b) { return (int)(((long long)__a + __b) >> 1); }
static inline int __rhadd(int __a, int __b) { return (int)(((long long)__a + __b + 1) >> 1); }

/* ------------------------------------------------------------------------ */
/* Math */

#define __HK_MINMAX_(_Hk_T)                                                     \
    static inline constexpr _Hk_T min(_Hk_T __a, _Hk_T __b) { return __b < __a ? __b : __a; }        \
    static inline constexpr _Hk_T max(_Hk_T __a, _Hk_T __b) { return __a < __b ? __b : __a; }
__HK_MINMAX_(int)
__HK_MINMAX_(unsigned int)
__HK_MINMAX_(long)
__HK_MINMAX_(unsigned long)
__HK_MINMAX_(long long)
__HK_MINMAX_(unsigned long long)
#undef __HK_MINMAX_
static inline float min(float __a, float __b) { return fminf(__a, __b); }
static inline float max(float __a, float __b) { return fmaxf(__a, __b); }
static inline double min(double __a, double __b) { return fmin(__a, __b); }
static inline double max(double __a, double __b) { return fmax(__a, __b); }

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
/* glibc declares these names (extern "C", not exported by libm): define
 * them to match that declaration. */
#define __HK_LIBM_FAST_(name, call)                                          \
    extern "C" inline float name(float x) noexcept { return call(x); }
__HK_LIBM_FAST_(__expf, expf)
__HK_LIBM_FAST_(__exp10f, exp10f)
__HK_LIBM_FAST_(__logf, logf)
__HK_LIBM_FAST_(__log2f, log2f)
__HK_LIBM_FAST_(__log10f, log10f)
__HK_LIBM_FAST_(__sinf, sinf)
__HK_LIBM_FAST_(__cosf, cosf)
__HK_LIBM_FAST_(__tanf, tanf)
#undef __HK_LIBM_FAST_
extern "C" inline void __sincosf(float x, float *__s, float *__c) noexcept
{
    *__s = sinf(x);
    *__c = cosf(x);
}
extern "C" inline float __powf(float x, float y) noexcept { return powf(x, y); }
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fmaf_rn(float __a, float __b, float __c) { return fmaf(__a, __b, __c); }
static inline float __fadd_rn(float __a, float __b) { return __a + __b; }
static inline float __fsub_rn(float __a, float __b) { return __a - __b; }
static inline float __fmul_rn(float __a, float __b) { return __a * __b; }
static inline float __fdiv_rn(float __a, float __b) { return __a / __b; }
static inline double __dadd_rn(double __a, double __b) { return __a + __b; }
static inline double __dsub_rn(double __a, double __b) { return __a - __b; }
static inline double __dmul_rn(double __a, double __b) { return __a * __b; }
static inline double __ddiv_rn(double __a, double __b) { return __a / __b; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline double __fma_rn(double __a, double __b, double __c) { return fma(__a, __b, __c); }
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

template <typename _Hk_To, typename _Hk_From>
static inline auto __hk_bit_cast(_Hk_From __v)
{
    static_assert(sizeof(_Hk_To) == sizeof(_Hk_From), "bit cast between sizes");
    _Hk_To __r;
    memcpy(&__r, &__v, sizeof __r);
    return __r;
}
static inline float __int_as_float(int x) { return __hk_bit_cast<float>(x); }
static inline int __float_as_int(float x) { return __hk_bit_cast<int>(x); }
static inline float __uint_as_float(unsigned int x) { return __hk_bit_cast<float>(x); }
static inline unsigned int __float_as_uint(float x) { return __hk_bit_cast<unsigned int>(x); }
static inline double __longlong_as_double(long long x) { return __hk_bit_cast<double>(x); }
static inline long long __double_as_longlong(double x) { return __hk_bit_cast<long long>(x); }
static inline int __double2hiint(double x)
{
    return (int)(__hk_bit_cast<unsigned long long>(x) >> 32);
}
static inline int __double2loint(double x) { return (int)__hk_bit_cast<unsigned long long>(x); }
static inline double __hiloint2double(int __hi, int __lo)
{
    return __hk_bit_cast<double>(((unsigned long long)(unsigned int)__hi << 32) |
                                    (unsigned int)__lo);
}

/* Conversions with a rounding mode; out-of-range values are undefined, as on
 * the GPU. */
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned int __float2uint_rn(float x) { return (unsigned int)nearbyintf(x); }
static inline unsigned int __float2uint_rz(float x) { return (unsigned int)x; }
static inline unsigned int __float2uint_rd(float x) { return (unsigned int)floorf(x); }
static inline unsigned int __float2uint_ru(float x) { return (unsigned int)ceilf(x); }
static inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
static inline long long __float2ll_rz(float x) { return (long long)x; }
static inline unsigned long long __float2ull_rn(float x)
{
    return (unsigned long long)nearbyintf(x);
}
static inline unsigned long long __float2ull_rz(float x) { return (unsigned long long)x; }
static inline int __double2int_rn(double x) { return (int)nearbyint(x); }
static inline int __double2int_rz(double x) { return (int)x; }
static inline int __double2int_rd(double x) { return (int)floor(x); }
static inline int __double2int_ru(double x) { return (int)ceil(x); }
static inline unsigned int __double2uint_rn(double x) { return (unsigned int)nearbyint(x); }
static inline unsigned int __double2uint_rz(double x) { return (unsigned int)x; }
static inline long long __double2ll_rn(double x) { return (long long)nearbyint(x); }
static inline long long __double2ll_rz(double x) { return (long long)x; }
static inline float __double2float_rn(double x) { return (float)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned int x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline float __ull2float_rn(unsigned long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned int x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }

template <typename _Hk_T>
static inline _Hk_T __ldg(const _Hk_T *__p)
{
    return *__p;
}

static inline long long clock64(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return (long long)__builtin_ia32_rdtsc();
#else
    struct timespec __ts;
    clock_gettime(CLOCK_MONOTONIC, &__ts);
    return (long long)__ts.tv_sec * 1000000000LL + __ts.tv_nsec;
#endif
}
static inline long long wall_clock64(void) { return clock64(); }
static inline long long __clock64(void) { return clock64(); }

#endif
