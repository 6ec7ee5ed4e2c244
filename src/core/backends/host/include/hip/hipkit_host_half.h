/* HIP's half (and bfloat16) library beyond arithmetic, for hipkit's CPU
 * backend: the math functions (hsqrt ... and the h2 forms), comparisons
 * (ordered, unordered, per lane, both lanes), saturated arithmetic, the
 * conversions with every rounding mode, max/min, the cache-hint loads and
 * atomicAdd on __half. Included by hipkit_host_device.h after the types.
 *
 * Values are computed in float or double and rounded once to the 16-bit
 * type (round to nearest even), which is at least as accurate as the GPU's
 * own instructions. */
#ifndef __HK_HOST_HALF_H
#define __HK_HOST_HALF_H

/* Rounds a double to an integer in one of the four directions. */
static inline double __hk_round_dir(double __x, int __dir)
{
    switch (__dir) {
    case 0: return nearbyint(__x);
    case 1: return trunc(__x);
    case 2: return floor(__x);
    default: return ceil(__x);
    }
}
/* The double nearest an integer in a direction, for int -> half with _rz,
 * _rd, _ru: the half nearest below or above. */
template <typename _Hk_H>
static inline auto __hk_h_from_dir(double __x, int __dir)
{
    _Hk_H __r = _Hk_H(__x);
    double __v = (double)float(__r);
    if (__v == __x || __dir == 0)
        return __r;
    bool __down = __dir == 2 || (__dir == 1 && __x > 0);
    if (__down ? __v > __x : __v < __x) {
        unsigned short __b = __hk_f16_bits(__r);
        /* one unit toward the wanted side: away from zero is +1 in the bits */
        bool __away = (__v < 0) == __down;
        __hk_f16_bits(__r) = (unsigned short)(__away ? __b + 1 : __b - 1);
    }
    return __r;
}

#define __HK_HCONV_DIR_(sfx, dir)                                                              \
    static inline int __half2int_##sfx(__half __h) { return (int)__hk_round_dir(float(__h), dir); } \
    static inline unsigned int __half2uint_##sfx(__half __h)                                   \
    {                                                                                          \
        return (unsigned int)__hk_round_dir(float(__h), dir);                                  \
    }                                                                                          \
    static inline short __half2short_##sfx(__half __h) { return (short)__hk_round_dir(float(__h), dir); } \
    static inline unsigned short __half2ushort_##sfx(__half __h)                               \
    {                                                                                          \
        return (unsigned short)__hk_round_dir(float(__h), dir);                                \
    }                                                                                          \
    static inline long long __half2ll_##sfx(__half __h) { return (long long)__hk_round_dir(float(__h), dir); } \
    static inline unsigned long long __half2ull_##sfx(__half __h)                              \
    {                                                                                          \
        return (unsigned long long)__hk_round_dir(float(__h), dir);                            \
    }                                                                                          \
    static inline __half __short2half_##sfx(short __i) { return __hk_h_from_dir<__half>(__i, dir); } \
    static inline __half __ushort2half_##sfx(unsigned short __i) { return __hk_h_from_dir<__half>(__i, dir); } \
    static inline __half __uint2half_##sfx(unsigned int __i) { return __hk_h_from_dir<__half>(__i, dir); } \
    static inline __half __ll2half_##sfx(long long __i) { return __hk_h_from_dir<__half>((double)__i, dir); } \
    static inline __half __ull2half_##sfx(unsigned long long __i)                              \
    {                                                                                          \
        return __hk_h_from_dir<__half>((double)__i, dir);                                      \
    }                                                                                          \
    static inline __half __float2half_##sfx(float __f) { return __hk_h_from_dir<__half>(__f, dir); }
__HK_HCONV_DIR_(rz, 1)
__HK_HCONV_DIR_(rd, 2)
__HK_HCONV_DIR_(ru, 3)
#undef __HK_HCONV_DIR_
static inline __half __int2half_rz(int __i) { return __hk_h_from_dir<__half>(__i, 1); }
static inline __half __int2half_rd(int __i) { return __hk_h_from_dir<__half>(__i, 2); }
static inline __half __int2half_ru(int __i) { return __hk_h_from_dir<__half>(__i, 3); }
static inline unsigned int __half2uint_rn(__half __h) { return (unsigned int)nearbyintf(float(__h)); }
static inline short __half2short_rn(__half __h) { return (short)nearbyintf(float(__h)); }
static inline unsigned short __half2ushort_rn(__half __h) { return (unsigned short)nearbyintf(float(__h)); }
static inline long long __half2ll_rn(__half __h) { return (long long)nearbyintf(float(__h)); }
static inline unsigned long long __half2ull_rn(__half __h) { return (unsigned long long)nearbyintf(float(__h)); }
static inline __half __short2half_rn(short __i) { return __half(__i); }
static inline __half __ushort2half_rn(unsigned short __i) { return __half(__i); }
static inline __half __uint2half_rn(unsigned int __i) { return __half(__i); }
static inline __half __ll2half_rn(long long __i) { return __half(__i); }
static inline __half __ull2half_rn(unsigned long long __i) { return __half(__i); }

static inline __half2 make_half2(__half __a, __half __b) { return __half2(__a, __b); }
static inline __half2 __low2half2(__half2 __a) { return __half2(__a.x, __a.x); }
static inline __half2 __high2half2(__half2 __a) { return __half2(__a.y, __a.y); }
static inline __half2 __lowhigh2highlow(__half2 __a) { return __half2(__a.y, __a.x); }

/* Cache hints mean nothing on a CPU. */
#define __HK_LDHINT_(name)                                                                     \
    static inline __half name(const __half *__p) { return *__p; }                              \
    static inline __half2 name(const __half2 *__p) { return *__p; }
__HK_LDHINT_(__ldcg)
__HK_LDHINT_(__ldca)
__HK_LDHINT_(__ldcs)
#undef __HK_LDHINT_

/* The per-type library: math, unordered comparisons, saturation, NaN-
 * propagating max/min. */
static inline float __hk_sat01(float __f) { return __f > 0.0f ? (__f < 1.0f ? __f : 1.0f) : 0.0f; }
#define __HK_HMATH1_(_Hk_H, name, expr)                                                        \
    static inline _Hk_H name(_Hk_H __a)                                                        \
    {                                                                                          \
        double __x = (double)float(__a);                                                       \
        return _Hk_H(expr);                                                                    \
    }
#define __HK_HLIB_(_Hk_H)                                                                      \
    __HK_HMATH1_(_Hk_H, htrunc, trunc(__x))                                                    \
    __HK_HMATH1_(_Hk_H, hceil, ceil(__x))                                                      \
    __HK_HMATH1_(_Hk_H, hfloor, floor(__x))                                                    \
    __HK_HMATH1_(_Hk_H, hrint, nearbyint(__x))                                                 \
    __HK_HMATH1_(_Hk_H, hsin, sin(__x))                                                        \
    __HK_HMATH1_(_Hk_H, hcos, cos(__x))                                                        \
    __HK_HMATH1_(_Hk_H, hexp, exp(__x))                                                        \
    __HK_HMATH1_(_Hk_H, hexp2, exp2(__x))                                                      \
    __HK_HMATH1_(_Hk_H, hexp10, exp10(__x))                                                    \
    __HK_HMATH1_(_Hk_H, hlog2, log2(__x))                                                      \
    __HK_HMATH1_(_Hk_H, hlog, log(__x))                                                        \
    __HK_HMATH1_(_Hk_H, hlog10, log10(__x))                                                    \
    __HK_HMATH1_(_Hk_H, hrcp, 1.0 / __x)                                                       \
    __HK_HMATH1_(_Hk_H, hrsqrt, 1.0 / sqrt(__x))                                               \
    __HK_HMATH1_(_Hk_H, hsqrt, sqrt(__x))                                                      \
    static inline bool __hequ(_Hk_H __a, _Hk_H __b) { return !(__a < __b || __a > __b); }     \
    static inline bool __hneu(_Hk_H __a, _Hk_H __b) { return !(__a == __b); }                  \
    static inline bool __hleu(_Hk_H __a, _Hk_H __b) { return !(__a > __b); }                   \
    static inline bool __hgeu(_Hk_H __a, _Hk_H __b) { return !(__a < __b); }                   \
    static inline bool __hltu(_Hk_H __a, _Hk_H __b) { return !(__a >= __b); }                  \
    static inline bool __hgtu(_Hk_H __a, _Hk_H __b) { return !(__a <= __b); }                  \
    static inline _Hk_H __hadd_sat(_Hk_H __a, _Hk_H __b) { return _Hk_H(__hk_sat01(float(__a + __b))); } \
    static inline _Hk_H __hsub_sat(_Hk_H __a, _Hk_H __b) { return _Hk_H(__hk_sat01(float(__a - __b))); } \
    static inline _Hk_H __hmul_sat(_Hk_H __a, _Hk_H __b) { return _Hk_H(__hk_sat01(float(__a * __b))); } \
    static inline _Hk_H __hfma_sat(_Hk_H __a, _Hk_H __b, _Hk_H __c)                            \
    {                                                                                          \
        return _Hk_H(__hk_sat01(float(__hfma(__a, __b, __c))));                                \
    }                                                                                          \
    static inline _Hk_H __hmax_nan(_Hk_H __a, _Hk_H __b)                                       \
    {                                                                                          \
        return __hisnan(__a) || __hisnan(__b) ? _Hk_H(NAN) : __hmax(__a, __b);                 \
    }                                                                                          \
    static inline _Hk_H __hmin_nan(_Hk_H __a, _Hk_H __b)                                       \
    {                                                                                          \
        return __hisnan(__a) || __hisnan(__b) ? _Hk_H(NAN) : __hmin(__a, __b);                 \
    }
__HK_HLIB_(__half)
__HK_HLIB_(__hip_bfloat16)
#undef __HK_HLIB_
#undef __HK_HMATH1_

/* __half2: lane by lane. Comparisons give 1.0 or 0.0 per lane (__heq2),
 * or one bool for both lanes (__hbeq2). */
#define __HK_H2MAP1_(name, f1)                                                                 \
    static inline __half2 name(__half2 __a) { return __half2(f1(__a.x), f1(__a.y)); }
#define __HK_H2MAP2_(name, f1)                                                                 \
    static inline __half2 name(__half2 __a, __half2 __b) { return __half2(f1(__a.x, __b.x), f1(__a.y, __b.y)); }
__HK_H2MAP1_(h2trunc, htrunc) __HK_H2MAP1_(h2ceil, hceil) __HK_H2MAP1_(h2floor, hfloor)
__HK_H2MAP1_(h2rint, hrint) __HK_H2MAP1_(h2sin, hsin) __HK_H2MAP1_(h2cos, hcos)
__HK_H2MAP1_(h2exp, hexp) __HK_H2MAP1_(h2exp2, hexp2) __HK_H2MAP1_(h2exp10, hexp10)
__HK_H2MAP1_(h2log2, hlog2) __HK_H2MAP1_(h2log, hlog) __HK_H2MAP1_(h2log10, hlog10)
__HK_H2MAP1_(h2rcp, hrcp) __HK_H2MAP1_(h2rsqrt, hrsqrt) __HK_H2MAP1_(h2sqrt, hsqrt)
__HK_H2MAP2_(__hadd2_sat, __hadd_sat) __HK_H2MAP2_(__hsub2_sat, __hsub_sat)
__HK_H2MAP2_(__hmul2_sat, __hmul_sat) __HK_H2MAP2_(__hmax2, __hmax) __HK_H2MAP2_(__hmin2, __hmin)
__HK_H2MAP2_(__hmax2_nan, __hmax_nan) __HK_H2MAP2_(__hmin2_nan, __hmin_nan)
#undef __HK_H2MAP1_
#undef __HK_H2MAP2_
static inline __half2 __hfma2_sat(__half2 __a, __half2 __b, __half2 __c)
{
    return __half2(__hfma_sat(__a.x, __b.x, __c.x), __hfma_sat(__a.y, __b.y, __c.y));
}
static inline __half __hk_hbool(bool __b) { return __half(__b ? 1.0f : 0.0f); }
static inline __half2 __hisnan2(__half2 __a) { return __half2(__hk_hbool(__hisnan(__a.x)), __hk_hbool(__hisnan(__a.y))); }
static inline __half2 __hisinf2(__half2 __a)
{
    return __half2(__hk_hbool(__hisinf(__a.x) != 0), __hk_hbool(__hisinf(__a.y) != 0));
}
#define __HK_H2CMP_(op)                                                                        \
    static inline __half2 __h##op##2(__half2 __a, __half2 __b)                                 \
    {                                                                                          \
        return __half2(__hk_hbool(__h##op(__a.x, __b.x)), __hk_hbool(__h##op(__a.y, __b.y)));  \
    }                                                                                          \
    static inline bool __hb##op##2(__half2 __a, __half2 __b) { return __h##op(__a.x, __b.x) && __h##op(__a.y, __b.y); }
__HK_H2CMP_(eq) __HK_H2CMP_(ne) __HK_H2CMP_(le) __HK_H2CMP_(ge) __HK_H2CMP_(lt) __HK_H2CMP_(gt)
__HK_H2CMP_(equ) __HK_H2CMP_(neu) __HK_H2CMP_(leu) __HK_H2CMP_(geu) __HK_H2CMP_(ltu) __HK_H2CMP_(gtu)
#undef __HK_H2CMP_

/* atomicAdd on a 16-bit float: a compare-and-swap on the bits. */
static inline __half atomicAdd(__half *__p, __half __v)
{
    return __hk_atomic_update(__p, [__v](__half __o) { return __o + __v; });
}
static inline __hip_bfloat16 atomicAdd(__hip_bfloat16 *__p, __hip_bfloat16 __v)
{
    return __hk_atomic_update(__p, [__v](__hip_bfloat16 __o) { return __o + __v; });
}
static inline __half2 atomicAdd(__half2 *__p, __half2 __v)
{
    return __hk_atomic_update(__p, [__v](__half2 __o) { return __o + __v; });
}

#endif
