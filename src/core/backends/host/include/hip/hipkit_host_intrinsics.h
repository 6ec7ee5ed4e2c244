/* HIP's device intrinsics beyond the basics, for hipkit's CPU backend:
 * arithmetic and conversions with a rounding direction (_rz, _rd, _ru), the
 * bit intrinsics (__bitextract, __bitinsert, __fns, __funnelshift,
 * __byte_perm), lane masks and counts, the dot products of amd_mixed_dot,
 * CUDA's SIMD-in-a-word intrinsics (__vadd2 ... __vsubss4) and a few
 * helpers HIP declares. Included by hipkit_host_device.h. */
#ifndef __HK_HOST_INTRINSICS_H
#define __HK_HOST_INTRINSICS_H

#include <sched.h>

/* ------------------------------------------------------------------------ */
/* Directed rounding. The round-to-nearest result r and the sign of what it
 * left out (exact, from an error-free transform) give the result in each
 * direction: one step toward it where the error points that way.
 * __dir: 1 toward zero, 2 down, 3 up. */

template <typename _Hk_T>
static inline auto __hk_dir(_Hk_T __r, int __sgn, int __dir)
{
    if (__sgn == 0 || !std::isfinite(__r))
        return __r;
    const _Hk_T __inf = std::numeric_limits<_Hk_T>::infinity();
    if (__dir == 2 && __sgn < 0)
        return std::nextafter(__r, -__inf);
    if (__dir == 3 && __sgn > 0)
        return std::nextafter(__r, __inf);
    if (__dir == 1 && ((__r > 0 && __sgn < 0) || (__r < 0 && __sgn > 0)))
        return std::nextafter(__r, (_Hk_T)0);
    return __r;
}
static inline int __hk_sgn(long double __v) { return (__v > 0) - (__v < 0); }

template <typename _Hk_T>
static inline auto __hk_add_dir(_Hk_T __a, _Hk_T __b, int __dir)
{
    _Hk_T __s = __a + __b, __bb = __s - __a;
    _Hk_T __e = (__a - (__s - __bb)) + (__b - __bb); /* TwoSum: a + b = s + e exactly */
    return __hk_dir(__s, __hk_sgn(__e), __dir);
}
template <typename _Hk_T>
static inline auto __hk_mul_dir(_Hk_T __a, _Hk_T __b, int __dir)
{
    _Hk_T __p = __a * __b;
    return __hk_dir(__p, __hk_sgn(std::fma(__a, __b, -__p)), __dir);
}
template <typename _Hk_T>
static inline auto __hk_div_dir(_Hk_T __a, _Hk_T __b, int __dir)
{
    _Hk_T __q = __a / __b;
    /* a - q b is exact; the quotient's error has its sign times b's */
    return __hk_dir(__q, __hk_sgn(std::fma(-__q, __b, __a)) * (__b < 0 ? -1 : 1), __dir);
}
template <typename _Hk_T>
static inline auto __hk_sqrt_dir(_Hk_T __a, int __dir)
{
    _Hk_T __s = std::sqrt(__a);
    return __hk_dir(__s, __hk_sgn(std::fma(-__s, __s, __a)), __dir);
}
/* fma's error is not exact in its own type: it is judged in long double
 * (exact for float; for double, right unless the result lies within 2^-64
 * of a double). */
template <typename _Hk_T>
static inline auto __hk_fma_dir(_Hk_T __a, _Hk_T __b, _Hk_T __c, int __dir)
{
    _Hk_T __r = std::fma(__a, __b, __c);
    long double __w = fmal((long double)__a, (long double)__b, (long double)__c);
    return __hk_dir(__r, __hk_sgn(__w - (long double)__r), __dir);
}

#define __HK_ARITH_DIR_(sfx, dir)                                                              \
    static inline float __fadd_##sfx(float __a, float __b) { return __hk_add_dir(__a, __b, dir); } \
    static inline float __fsub_##sfx(float __a, float __b) { return __hk_add_dir(__a, -__b, dir); } \
    static inline float __fmul_##sfx(float __a, float __b) { return __hk_mul_dir(__a, __b, dir); } \
    static inline float __fdiv_##sfx(float __a, float __b) { return __hk_div_dir(__a, __b, dir); } \
    static inline float __frcp_##sfx(float __a) { return __hk_div_dir(1.0f, __a, dir); }       \
    static inline float __fsqrt_##sfx(float __a) { return __hk_sqrt_dir(__a, dir); }           \
    static inline float __fmaf_##sfx(float __a, float __b, float __c) { return __hk_fma_dir(__a, __b, __c, dir); } \
    static inline double __dadd_##sfx(double __a, double __b) { return __hk_add_dir(__a, __b, dir); } \
    static inline double __dsub_##sfx(double __a, double __b) { return __hk_add_dir(__a, -__b, dir); } \
    static inline double __dmul_##sfx(double __a, double __b) { return __hk_mul_dir(__a, __b, dir); } \
    static inline double __ddiv_##sfx(double __a, double __b) { return __hk_div_dir(__a, __b, dir); } \
    static inline double __drcp_##sfx(double __a) { return __hk_div_dir(1.0, __a, dir); }      \
    static inline double __dsqrt_##sfx(double __a) { return __hk_sqrt_dir(__a, dir); }         \
    static inline double __fma_##sfx(double __a, double __b, double __c) { return __hk_fma_dir(__a, __b, __c, dir); } \
    static inline float __double2float_##sfx(double __d)                                       \
    {                                                                                          \
        float __f = (float)__d;                                                                \
        return __hk_dir(__f, __hk_sgn((long double)__d - __f), dir);                           \
    }                                                                                          \
    static inline float __int2float_##sfx(int __i) { return __hk_dir((float)__i, __hk_sgn((long double)__i - (float)__i), dir); } \
    static inline float __uint2float_##sfx(unsigned int __i)                                   \
    {                                                                                          \
        return __hk_dir((float)__i, __hk_sgn((long double)__i - (float)__i), dir);             \
    }                                                                                          \
    static inline float __ll2float_##sfx(long long __i)                                        \
    {                                                                                          \
        return __hk_dir((float)__i, __hk_sgn((long double)__i - (float)__i), dir);             \
    }                                                                                          \
    static inline float __ull2float_##sfx(unsigned long long __i)                              \
    {                                                                                          \
        return __hk_dir((float)__i, __hk_sgn((long double)__i - (float)__i), dir);             \
    }                                                                                          \
    static inline double __ll2double_##sfx(long long __i)                                      \
    {                                                                                          \
        return __hk_dir((double)__i, __hk_sgn((long double)__i - (double)__i), dir);           \
    }                                                                                          \
    static inline double __ull2double_##sfx(unsigned long long __i)                            \
    {                                                                                          \
        return __hk_dir((double)__i, __hk_sgn((long double)__i - (double)__i), dir);           \
    }
__HK_ARITH_DIR_(rz, 1)
__HK_ARITH_DIR_(rd, 2)
__HK_ARITH_DIR_(ru, 3)
#undef __HK_ARITH_DIR_

/* To integers: the direction is the rounding of the value itself. */
static inline long long __double2ll_rd(double __x) { return (long long)floor(__x); }
static inline long long __double2ll_ru(double __x) { return (long long)ceil(__x); }
static inline unsigned int __double2uint_rd(double __x) { return (unsigned int)floor(__x); }
static inline unsigned int __double2uint_ru(double __x) { return (unsigned int)ceil(__x); }
static inline unsigned long long __double2ull_rn(double __x) { return (unsigned long long)nearbyint(__x); }
static inline unsigned long long __double2ull_rz(double __x) { return (unsigned long long)__x; }
static inline unsigned long long __double2ull_rd(double __x) { return (unsigned long long)floor(__x); }
static inline unsigned long long __double2ull_ru(double __x) { return (unsigned long long)ceil(__x); }
static inline long long __float2ll_rd(float __x) { return (long long)floorf(__x); }
static inline long long __float2ll_ru(float __x) { return (long long)ceilf(__x); }
static inline unsigned long long __float2ull_rd(float __x) { return (unsigned long long)floorf(__x); }
static inline unsigned long long __float2ull_ru(float __x) { return (unsigned long long)ceilf(__x); }

/* ------------------------------------------------------------------------ */
/* Bits, as HIP defines them on AMD (offsets and widths taken mod 32/64). */

static inline unsigned int __bitextract_u32(unsigned int __src, unsigned int __off, unsigned int __w)
{
    __off &= 31;
    __w &= 31;
    return __w == 0 ? 0 : (unsigned int)((__src >> __off) & ((1u << __w) - 1));
}
static inline uint64_t __bitextract_u64(uint64_t __src, unsigned int __off, unsigned int __w)
{
    __off &= 63;
    __w &= 63;
    return __w == 0 ? 0 : (__src >> __off) & ((1ull << __w) - 1);
}
static inline unsigned int __bitinsert_u32(unsigned int __dst, unsigned int __src, unsigned int __off,
                                           unsigned int __w)
{
    unsigned int __m = (1u << (__w & 31)) - 1;
    __off &= 31;
    return (__dst & ~(__m << __off)) | ((__src & __m) << __off);
}
static inline uint64_t __bitinsert_u64(uint64_t __dst, uint64_t __src, unsigned int __off, unsigned int __w)
{
    uint64_t __m = (1ull << (__w & 63)) - 1;
    __off &= 63;
    return (__dst & ~(__m << __off)) | ((__src & __m) << __off);
}
/* The position of the offset-th set bit of mask counting from base (up for
 * offset > 0, down for offset < 0; offset 0: base itself if set), or -1. */
static inline int32_t __fns64(uint64_t __mask, uint32_t __base, int32_t __offset)
{
    if (__base > 63)
        return -1;
    if (__offset == 0)
        return (__mask >> __base) & 1 ? (int32_t)__base : -1;
    int __step = __offset > 0 ? 1 : -1, __left = __offset > 0 ? __offset : -__offset;
    for (int __b = (int)__base; __b >= 0 && __b < 64; __b += __step)
        if (((__mask >> __b) & 1) && --__left == 0)
            return __b;
    return -1;
}
static inline int32_t __fns32(uint64_t __mask, uint32_t __base, int32_t __offset)
{
    return __fns64(__mask, __base, __offset);
}
/* hi:lo shifted left (the high word out) or right (the low word out); the
 * shift is taken mod 32, or clamped to 32 by the _c forms. */
static inline unsigned int __hk_funnel(unsigned int __lo, unsigned int __hi, unsigned int __s, bool __left)
{
    uint64_t __v = ((uint64_t)__hi << 32) | __lo;
    return __left ? (unsigned int)((__v << __s) >> 32) : (unsigned int)(__v >> __s);
}
static inline unsigned int __funnelshift_l(unsigned int __lo, unsigned int __hi, unsigned int __s)
{
    return __hk_funnel(__lo, __hi, __s & 31, true);
}
static inline unsigned int __funnelshift_lc(unsigned int __lo, unsigned int __hi, unsigned int __s)
{
    return __hk_funnel(__lo, __hi, __s > 32 ? 32 : __s, true);
}
static inline unsigned int __funnelshift_r(unsigned int __lo, unsigned int __hi, unsigned int __s)
{
    return __hk_funnel(__lo, __hi, __s & 31, false);
}
static inline unsigned int __funnelshift_rc(unsigned int __lo, unsigned int __hi, unsigned int __s)
{
    return __hk_funnel(__lo, __hi, __s > 32 ? 32 : __s, false);
}
/* Byte i of the result is byte s[4i+2..4i] of y:x (CUDA's default mode). */
static inline unsigned int __byte_perm(unsigned int __x, unsigned int __y, unsigned int __s)
{
    uint64_t __v = ((uint64_t)__y << 32) | __x;
    unsigned int __r = 0;
    for (int __i = 0; __i < 4; __i++)
        __r |= (unsigned int)((__v >> (8 * ((__s >> (4 * __i)) & 7))) & 0xffu) << (8 * __i);
    return __r;
}
static inline unsigned int __uhadd(unsigned int __a, unsigned int __b)
{
    return (unsigned int)(((uint64_t)__a + __b) >> 1);
}
static inline unsigned int __urhadd(unsigned int __a, unsigned int __b)
{
    return (unsigned int)(((uint64_t)__a + __b + 1) >> 1);
}

/* ------------------------------------------------------------------------ */
/* Lanes. The masks name the lanes of the warp that exist (HIP ands them
 * with the lanes still running, which here are the same until a thread
 * returns). */

static inline uint64_t __hk_warp_lanes(void)
{
    const __hk_state &__s = __hk_tls;
    unsigned int __n = __s.__bdim.x * __s.__bdim.y * __s.__bdim.z;
    unsigned int __first = __hk_linear_tid() & ~(unsigned int)(HK_HOST_WARP_SIZE - 1);
    unsigned int __k = __n - __first >= HK_HOST_WARP_SIZE ? HK_HOST_WARP_SIZE : __n - __first;
    return __k == 64 ? ~0ull : (1ull << __k) - 1;
}
static inline uint64_t __lanemask_lt(void) { return ((1ull << __lane_id()) - 1) & __hk_warp_lanes(); }
static inline uint64_t __lanemask_eq(void) { return 1ull << __lane_id(); }
static inline uint64_t __lanemask_gt(void)
{
    return __lane_id() == 63 ? 0 : (~0ull << (__lane_id() + 1)) & __hk_warp_lanes();
}
/* Bits of mask below this lane, in the low (lanes 0-31) or high (32-63)
 * half, plus acc: together the lane's rank among mask's lanes. */
static inline unsigned int __mbcnt_lo(unsigned int __mask, unsigned int __acc)
{
    unsigned int __l = __lane_id();
    return __acc + (unsigned int)__builtin_popcount(__l >= 32 ? __mask : __mask & ((1u << __l) - 1));
}
static inline unsigned int __mbcnt_hi(unsigned int __mask, unsigned int __acc)
{
    unsigned int __l = __lane_id();
    return __acc + (unsigned int)__builtin_popcount(__l < 32 ? 0u : __l == 63 ? __mask & 0x7fffffffu
                                                                          : __mask & ((1u << (__l - 32)) - 1));
}
static inline unsigned long long __ballot64(int __pred) { return __ballot(__pred); }
/* The core a block runs on stands for the GPU's compute unit. */
static inline unsigned __smid(void)
{
    int __c = sched_getcpu();
    return __c < 0 ? 0u : (unsigned)__c;
}
static inline long long __clock(void) { return clock64(); }
static inline void *__local_to_generic(void *__p) { return __p; }
/* CUDA's name for the assert hook, which device code may call directly. */
static inline void __assertfail(const char *__expr, const char *__file, unsigned int __line,
                                const char *__func, size_t)
{
    __assert_fail(__expr, __file, __line, __func);
}

/* ------------------------------------------------------------------------ */
/* Dot products (AMD's v_dot instructions): lanes multiplied and summed onto
 * c; saturate clamps to the result type instead of wrapping. */

template <typename _Hk_R, typename _Hk_V>
static inline auto __hk_dot(const _Hk_V &__a, const _Hk_V &__b, _Hk_R __c, bool __sat, int __n)
{
    long long __s = (long long)__c;
    const typename _Hk_V::value_type *__pa = &__a.x, *__pb = &__b.x;
    for (int __i = 0; __i < __n; __i++)
        __s += (long long)__pa[__i] * __pb[__i];
    if (__sat)
        __s = __s < (long long)std::numeric_limits<_Hk_R>::min() ? (long long)std::numeric_limits<_Hk_R>::min()
              : __s > (long long)std::numeric_limits<_Hk_R>::max() ? (long long)std::numeric_limits<_Hk_R>::max()
                                                                   : __s;
    return (_Hk_R)__s;
}
static inline int amd_mixed_dot(short2 __a, short2 __b, int __c, bool __sat) { return __hk_dot(__a, __b, __c, __sat, 2); }
static inline unsigned int amd_mixed_dot(ushort2 __a, ushort2 __b, unsigned int __c, bool __sat)
{
    return __hk_dot(__a, __b, __c, __sat, 2);
}
static inline int amd_mixed_dot(char4 __a, char4 __b, int __c, bool __sat)
{
    /* char may be unsigned on the host: the lanes are signed bytes */
    short4 __x = make_short4((signed char)__a.x, (signed char)__a.y, (signed char)__a.z, (signed char)__a.w);
    short4 __y = make_short4((signed char)__b.x, (signed char)__b.y, (signed char)__b.z, (signed char)__b.w);
    return __hk_dot(__x, __y, __c, __sat, 4);
}
static inline unsigned int amd_mixed_dot(uchar4 __a, uchar4 __b, unsigned int __c, bool __sat)
{
    return __hk_dot(__a, __b, __c, __sat, 4);
}
/* The int forms: eight signed (unsigned) 4-bit lanes per word. */
static inline int amd_mixed_dot(int __a, int __b, int __c, bool __sat)
{
    long long __s = __c;
    for (int __i = 0; __i < 8; __i++)
        __s += (long long)((int32_t)((uint32_t)__a << (28 - 4 * __i)) >> 28) *
               ((int32_t)((uint32_t)__b << (28 - 4 * __i)) >> 28);
    return __sat ? (int)(__s < INT_MIN ? INT_MIN : __s > INT_MAX ? INT_MAX : __s) : (int)__s;
}
static inline unsigned int amd_mixed_dot(unsigned int __a, unsigned int __b, unsigned int __c, bool __sat)
{
    unsigned long long __s = __c;
    for (int __i = 0; __i < 8; __i++)
        __s += (unsigned long long)((__a >> (4 * __i)) & 15u) * ((__b >> (4 * __i)) & 15u);
    return __sat && __s > UINT_MAX ? UINT_MAX : (unsigned int)__s;
}
static inline float amd_mixed_dot(__half2 __a, __half2 __b, float __c, bool __sat)
{
    float __r = float(__a.x) * float(__b.x) + float(__a.y) * float(__b.y) + __c;
    return __sat ? __hk_sat01(__r) : __r;
}

/* HIP's mixed-sign min and max (compared as unsigned, as C compares them),
 * and the atomics that may skip the hardware's safety for speed (here they
 * are all the same atomic). */
static inline int min(unsigned int __a, int __b) { return (int)(__a < (unsigned int)__b ? __a : (unsigned int)__b); }
static inline int max(unsigned int __a, int __b) { return (int)(__a > (unsigned int)__b ? __a : (unsigned int)__b); }
static inline float unsafeAtomicAdd(float *__p, float __v) { return atomicAdd(__p, __v); }
static inline double unsafeAtomicAdd(double *__p, double __v) { return atomicAdd(__p, __v); }
static inline float safeAtomicAdd(float *__p, float __v) { return atomicAdd(__p, __v); }
static inline double safeAtomicAdd(double *__p, double __v) { return atomicAdd(__p, __v); }

#endif
