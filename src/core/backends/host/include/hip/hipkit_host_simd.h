/* CUDA's SIMD-in-a-word intrinsics for hipkit's CPU backend: two 16-bit
 * (name2) or four 8-bit (name4) lanes of an unsigned int, lane by lane,
 * wrapping or saturating (ss: signed, us: unsigned), comparisons giving an
 * all-ones lane (__vcmp*) or 1 (__vset*), and sums of absolute differences
 * (__vsad*). HIP has none of them; CUDA sources use them, and the NVIDIA
 * backend has CUDA's own. Included by hipkit_host_device.h. */
#ifndef __HK_HOST_SIMD_H
#define __HK_HOST_SIMD_H

/* The lane limits of a _Hk_B-bit lane, signed and unsigned. */
template <int _Hk_B>
struct __hk_lane {
    static constexpr long long __smin = -(1ll << (_Hk_B - 1)), __smax = (1ll << (_Hk_B - 1)) - 1,
                               __umax = (1ll << _Hk_B) - 1;
    static auto __ss(long long __v) { return __v < __smin ? __smin : __v > __smax ? __smax : __v; }
    static auto __us(long long __v) { return __v < 0 ? 0 : __v > __umax ? __umax : __v; }
};

/* f(signed a, signed b, unsigned a, unsigned b) per lane; the result is
 * cut to the lane. */
template <int _Hk_B, typename _Hk_F>
static inline auto __hk_simd(unsigned int __a, unsigned int __b, _Hk_F __f)
{
    const unsigned int __m = (unsigned int)__hk_lane<_Hk_B>::__umax;
    unsigned int __r = 0;
    for (int __i = 0; __i < 32; __i += _Hk_B) {
        long long __ua = (__a >> __i) & __m, __ub = (__b >> __i) & __m;
        long long __sa = __ua > __hk_lane<_Hk_B>::__smax ? __ua - __m - 1 : __ua;
        long long __sb = __ub > __hk_lane<_Hk_B>::__smax ? __ub - __m - 1 : __ub;
        __r |= ((unsigned int)__f(__sa, __sb, __ua, __ub) & __m) << __i;
    }
    return __r;
}

#define __HK_SIMD_B_(name, expr)                                                               \
    static inline unsigned int name##2(unsigned int __a, unsigned int __b)                     \
    {                                                                                          \
        typedef __hk_lane<16> _L;                                                              \
        (void)sizeof(_L); /* not every expression needs the limits */                        \
        return __hk_simd<16>(__a, __b, [](long long __sa, long long __sb, long long __ua, long long __ub) { \
            (void)__sa, (void)__sb, (void)__ua, (void)__ub;                                    \
            return (long long)(expr);                                                          \
        });                                                                                    \
    }                                                                                          \
    static inline unsigned int name##4(unsigned int __a, unsigned int __b)                     \
    {                                                                                          \
        typedef __hk_lane<8> _L;                                                               \
        (void)sizeof(_L); /* not every expression needs the limits */                        \
        return __hk_simd<8>(__a, __b, [](long long __sa, long long __sb, long long __ua, long long __ub) { \
            (void)__sa, (void)__sb, (void)__ua, (void)__ub;                                    \
            return (long long)(expr);                                                          \
        });                                                                                    \
    }
#define __HK_SIMD_U_(name, expr)                                                               \
    __HK_SIMD_B_(__hk_simd_##name, expr)                                                       \
    static inline unsigned int name##2(unsigned int __a) { return __hk_simd_##name##2(__a, 0); } \
    static inline unsigned int name##4(unsigned int __a) { return __hk_simd_##name##4(__a, 0); }
#define __HK_SIMD_CMP_(op, sfx, expr)                                                          \
    __HK_SIMD_B_(__vcmp##op##sfx, (expr) ? -1 : 0)                                             \
    __HK_SIMD_B_(__vset##op##sfx, (expr) ? 1 : 0)

__HK_SIMD_U_(__vabs, __sa < 0 ? -__sa : __sa)
__HK_SIMD_U_(__vabsss, _L::__ss(__sa < 0 ? -__sa : __sa))
__HK_SIMD_U_(__vneg, -__sa)
__HK_SIMD_U_(__vnegss, _L::__ss(-__sa))
__HK_SIMD_B_(__vabsdiffs, __sa > __sb ? __sa - __sb : __sb - __sa)
__HK_SIMD_B_(__vabsdiffu, __ua > __ub ? __ua - __ub : __ub - __ua)
__HK_SIMD_B_(__vadd, __ua + __ub)
__HK_SIMD_B_(__vaddss, _L::__ss(__sa + __sb))
__HK_SIMD_B_(__vaddus, _L::__us(__ua + __ub))
__HK_SIMD_B_(__vsub, __ua - __ub)
__HK_SIMD_B_(__vsubss, _L::__ss(__sa - __sb))
__HK_SIMD_B_(__vsubus, _L::__us(__ua - __ub))
/* rounded averages: halves round away from zero (signed), up (unsigned) */
__HK_SIMD_B_(__vavgs, (__sa + __sb + (__sa + __sb >= 0 ? 1 : -1)) / 2)
__HK_SIMD_B_(__vavgu, (__ua + __ub + 1) >> 1)
__HK_SIMD_B_(__vhaddu, (__ua + __ub) >> 1)
__HK_SIMD_B_(__vmaxs, __sa > __sb ? __sa : __sb)
__HK_SIMD_B_(__vmaxu, __ua > __ub ? __ua : __ub)
__HK_SIMD_B_(__vmins, __sa < __sb ? __sa : __sb)
__HK_SIMD_B_(__vminu, __ua < __ub ? __ua : __ub)
__HK_SIMD_CMP_(eq, , __ua == __ub)
__HK_SIMD_CMP_(ne, , __ua != __ub)
__HK_SIMD_CMP_(ges, , __sa >= __sb)
__HK_SIMD_CMP_(geu, , __ua >= __ub)
__HK_SIMD_CMP_(gts, , __sa > __sb)
__HK_SIMD_CMP_(gtu, , __ua > __ub)
__HK_SIMD_CMP_(les, , __sa <= __sb)
__HK_SIMD_CMP_(leu, , __ua <= __ub)
__HK_SIMD_CMP_(lts, , __sa < __sb)
__HK_SIMD_CMP_(ltu, , __ua < __ub)
#undef __HK_SIMD_CMP_
#undef __HK_SIMD_U_
#undef __HK_SIMD_B_

/* Sums of the lanes' absolute differences, as one unsigned int. */
template <int _Hk_B, bool _Hk_Signed>
static inline auto __hk_sad(unsigned int __a, unsigned int __b)
{
    unsigned int __d = _Hk_Signed ? (_Hk_B == 16 ? __vabsdiffs2(__a, __b) : __vabsdiffs4(__a, __b))
                                  : (_Hk_B == 16 ? __vabsdiffu2(__a, __b) : __vabsdiffu4(__a, __b));
    unsigned int __s = 0;
    for (int __i = 0; __i < 32; __i += _Hk_B)
        __s += (__d >> __i) & (unsigned int)__hk_lane<_Hk_B>::__umax;
    return __s;
}
static inline unsigned int __vsads2(unsigned int __a, unsigned int __b) { return __hk_sad<16, true>(__a, __b); }
static inline unsigned int __vsads4(unsigned int __a, unsigned int __b) { return __hk_sad<8, true>(__a, __b); }
static inline unsigned int __vsadu2(unsigned int __a, unsigned int __b) { return __hk_sad<16, false>(__a, __b); }
static inline unsigned int __vsadu4(unsigned int __a, unsigned int __b) { return __hk_sad<8, false>(__a, __b); }

#endif
