/* CUDA's SIMD-in-a-word intrinsics for hipkit's CPU and AMD backends: two 16-bit
 * (name2) or four 8-bit (name4) lanes of an unsigned int, lane by lane,
 * wrapping or saturating (ss: signed, us: unsigned), comparisons giving an
 * all-ones lane (__vcmp*) or 1 (__vset*), and sums of absolute differences
 * (__vsad*). HIP has none of them; CUDA sources use them (ggml's quantized
 * kernels, __vsubss4), and the NVIDIA backend has CUDA's own. Included by
 * hipkit_host_device.h and, on AMD, by the header every compile starts
 * with (hipkit_amd_prelude.h). Plain integer code, so the CPU backend's
 * tests check what AMD runs.
 * Each intrinsic is a template with one defaulted parameter: its arguments
 * still convert as a plain function's do, and a source that defines its
 * own (ggml's HIP code once defined __dp4a and __vsubss4) declares a plain
 * function, which overloading prefers to a template: the source's wins,
 * with no redefinition error. */
#ifndef __HK_SIMD_H
#define __HK_SIMD_H

#define __HK_SIMD_IN static __host__ __device__ inline
#define __HK_SIMD_FN template <typename = void> __HK_SIMD_IN

/* The lane limits of a _Hk_B-bit lane, signed and unsigned. */
template <int _Hk_B>
struct __hk_lane {
    static constexpr long long __smin = -(1ll << (_Hk_B - 1)), __smax = (1ll << (_Hk_B - 1)) - 1,
                               __umax = (1ll << _Hk_B) - 1;
    static __host__ __device__ auto __ss(long long __v) { return __v < __smin ? __smin : __v > __smax ? __smax : __v; }
    static __host__ __device__ auto __us(long long __v) { return __v < 0 ? 0 : __v > __umax ? __umax : __v; }
};

/* f(signed a, signed b, unsigned a, unsigned b) per lane; the result is
 * cut to the lane. */
template <int _Hk_B, typename _Hk_F>
__HK_SIMD_IN auto __hk_simd(unsigned int __a, unsigned int __b, _Hk_F __f)
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
    __HK_SIMD_FN unsigned int name##2(unsigned int __a, unsigned int __b)                     \
    {                                                                                          \
        typedef __hk_lane<16> _L;                                                              \
        (void)sizeof(_L); /* not every expression needs the limits */                        \
        return __hk_simd<16>(__a, __b, [](long long __sa, long long __sb, long long __ua, long long __ub) { \
            (void)__sa, (void)__sb, (void)__ua, (void)__ub;                                    \
            return (long long)(expr);                                                          \
        });                                                                                    \
    }                                                                                          \
    __HK_SIMD_FN unsigned int name##4(unsigned int __a, unsigned int __b)                     \
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
    __HK_SIMD_FN unsigned int name##2(unsigned int __a) { return __hk_simd_##name##2(__a, 0); } \
    __HK_SIMD_FN unsigned int name##4(unsigned int __a) { return __hk_simd_##name##4(__a, 0); }
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
__HK_SIMD_IN auto __hk_sad(unsigned int __a, unsigned int __b)
{
    unsigned int __d = _Hk_Signed ? (_Hk_B == 16 ? __vabsdiffs2(__a, __b) : __vabsdiffs4(__a, __b))
                                  : (_Hk_B == 16 ? __vabsdiffu2(__a, __b) : __vabsdiffu4(__a, __b));
    unsigned int __s = 0;
    for (int __i = 0; __i < 32; __i += _Hk_B)
        __s += (__d >> __i) & (unsigned int)__hk_lane<_Hk_B>::__umax;
    return __s;
}
__HK_SIMD_FN unsigned int __vsads2(unsigned int __a, unsigned int __b) { return __hk_sad<16, true>(__a, __b); }
__HK_SIMD_FN unsigned int __vsads4(unsigned int __a, unsigned int __b) { return __hk_sad<8, true>(__a, __b); }
__HK_SIMD_FN unsigned int __vsadu2(unsigned int __a, unsigned int __b) { return __hk_sad<16, false>(__a, __b); }
__HK_SIMD_FN unsigned int __vsadu4(unsigned int __a, unsigned int __b) { return __hk_sad<8, false>(__a, __b); }

/* Dot products of byte (dp4a) or 16-bit-by-byte (dp2a) lanes, plus c:
 * the signed form when both words are int, the unsigned form when both
 * are unsigned, as CUDA declares them. dp2a takes a's two 16-bit lanes
 * against b's low (_lo) or high (_hi) two bytes. */
template <typename _Hk_T, int _Hk_S>
__HK_SIMD_IN long long __hk_lane_of(_Hk_T __w, int __i)
{
    const unsigned long long __m = (1ull << _Hk_S) - 1, __u = ((unsigned long long)(unsigned int)__w >> (__i * _Hk_S)) & __m;
    return (_Hk_T)-1 < 0 && (__u >> (_Hk_S - 1)) ? (long long)__u - (long long)(__m + 1) : (long long)__u;
}
__HK_SIMD_FN int __dp4a(int __a, int __b, int __c)
{
    long long __s = __c;
    for (int __i = 0; __i < 4; __i++)
        __s += __hk_lane_of<int, 8>(__a, __i) * __hk_lane_of<int, 8>(__b, __i);
    return (int)(unsigned int)__s;
}
__HK_SIMD_FN unsigned int __dp4a(unsigned int __a, unsigned int __b, unsigned int __c)
{
    unsigned long long __s = __c;
    for (int __i = 0; __i < 4; __i++)
        __s += (unsigned long long)(__hk_lane_of<unsigned int, 8>(__a, __i) * __hk_lane_of<unsigned int, 8>(__b, __i));
    return (unsigned int)__s;
}
/* CUDA's char4 / uchar4 forms: byte x is lane 0. */
template <typename _Hk_V>
__HK_SIMD_IN unsigned int __hk_word_of(_Hk_V __v)
{
    return (unsigned int)(unsigned char)__v.x | (unsigned int)(unsigned char)__v.y << 8 |
           (unsigned int)(unsigned char)__v.z << 16 | (unsigned int)(unsigned char)__v.w << 24;
}
__HK_SIMD_FN int __dp4a(char4 __a, char4 __b, int __c)
{
    return __dp4a((int)__hk_word_of(__a), (int)__hk_word_of(__b), __c);
}
__HK_SIMD_FN unsigned int __dp4a(uchar4 __a, uchar4 __b, unsigned int __c)
{
    return __dp4a(__hk_word_of(__a), __hk_word_of(__b), __c);
}
template <typename _Hk_T>
__HK_SIMD_IN _Hk_T __hk_dp2a(_Hk_T __a, _Hk_T __b, _Hk_T __c, int __hi)
{
    long long __s = (long long)__c;
    for (int __i = 0; __i < 2; __i++)
        __s += __hk_lane_of<_Hk_T, 16>(__a, __i) * __hk_lane_of<_Hk_T, 8>(__b, 2 * __hi + __i);
    return (_Hk_T)(unsigned int)__s;
}
__HK_SIMD_FN int __dp2a_lo(int __a, int __b, int __c) { return __hk_dp2a<int>(__a, __b, __c, 0); }
__HK_SIMD_FN int __dp2a_hi(int __a, int __b, int __c) { return __hk_dp2a<int>(__a, __b, __c, 1); }
__HK_SIMD_FN unsigned int __dp2a_lo(unsigned int __a, unsigned int __b, unsigned int __c)
{
    return __hk_dp2a<unsigned int>(__a, __b, __c, 0);
}
__HK_SIMD_FN unsigned int __dp2a_hi(unsigned int __a, unsigned int __b, unsigned int __c)
{
    return __hk_dp2a<unsigned int>(__a, __b, __c, 1);
}

#undef __HK_SIMD_FN
#undef __HK_SIMD_IN

#endif
