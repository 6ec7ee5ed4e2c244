/* __half and __hip_bfloat16 (and their 2-vectors): the types, conversions
 * and operators; their math is in hipkit_host_half.h. Included by
 * hipkit_host_device.h. */
#ifndef __HK_HOST_F16_H
#define __HK_HOST_F16_H

/* ------------------------------------------------------------------------ */
/* Binary16 and bfloat16: storage only, arithmetic through float, conversions
 * rounded to nearest even (NaN stays NaN, quiet; overflow gives infinity;
 * subnormals are kept). */

static inline uint64_t __hk_rne_shr(uint64_t __m, int __s)
{
    if (__s <= 0)
        return __m << -__s;
    if (__s > 64)
        return 0;
    uint64_t __r = __s == 64 ? 0 : __m >> __s;
    uint64_t __rem = __s == 64 ? __m : __m & ((1ull << __s) - 1);
    uint64_t half = 1ull << (__s - 1);
    if (__rem > half || (__rem == half && (__r & 1)))
        __r++;
    return __r;
}

/* Rounds m * 2^e (m != 0) to a binary format with `mb` stored mantissa bits
 * and exponents emin..emax; returns the bits without the sign. */
static inline uint32_t __hk_round_to(uint64_t __m, int __e, int __mb, int __emin, int __emax)
{
    int __p = 63 - __builtin_clzll(__m);
    int _Hk_E = __p + __e;
    if (_Hk_E < __emin) /* subnormal, in units of 2^(emin - mb); may round up to the smallest normal */
        return (uint32_t)__hk_rne_shr(__m, (__emin - __mb) - __e);
    uint64_t __q = __hk_rne_shr(__m, __p - __mb);
    if (__q >> (__mb + 1)) {
        __q >>= 1;
        _Hk_E++;
    }
    if (_Hk_E > __emax)
        return (uint32_t)(2 * __emax + 1) << __mb;
    return ((uint32_t)(_Hk_E + __emax) << __mb) | (uint32_t)(__q & ((1ull << __mb) - 1));
}

static inline unsigned short __hk_f2h(float __f)
{
    uint32_t __u = __hk_bit_cast<uint32_t>(__f);
    unsigned short __sign = (unsigned short)((__u >> 16) & 0x8000u);
    uint32_t __ex = (__u >> 23) & 0xffu, __mant = __u & 0x7fffffu;
    if (__ex == 0xff)
        return (unsigned short)(__sign | 0x7c00u | (__mant ? 0x200u | (__mant >> 13) : 0u));
    if (__ex == 0 && __mant == 0)
        return __sign;
    uint64_t __m = __ex ? (__mant | 0x800000u) : __mant;
    int __e = __ex ? (int)__ex - 150 : -149;
    return (unsigned short)(__sign | __hk_round_to(__m, __e, 10, -14, 15));
}

static inline unsigned short __hk_d2h(double __d)
{
    uint64_t __u = __hk_bit_cast<uint64_t>(__d);
    unsigned short __sign = (unsigned short)((__u >> 48) & 0x8000u);
    uint32_t __ex = (uint32_t)(__u >> 52) & 0x7ffu;
    uint64_t __mant = __u & 0xfffffffffffffull;
    if (__ex == 0x7ff)
        return (unsigned short)(__sign | 0x7c00u | (__mant ? 0x200u | (uint32_t)(__mant >> 42) : 0u));
    if (__ex == 0 && __mant == 0)
        return __sign;
    uint64_t __m = __ex ? (__mant | (1ull << 52)) : __mant;
    int __e = __ex ? (int)__ex - 1075 : -1074;
    return (unsigned short)(__sign | __hk_round_to(__m, __e, 10, -14, 15));
}

static inline float __hk_h2f(unsigned short __h)
{
    uint32_t __sign = (uint32_t)(__h & 0x8000u) << 16;
    uint32_t __ex = (__h >> 10) & 0x1fu, __mant = __h & 0x3ffu;
    uint32_t __u;
    if (__ex == 0x1f) {
        __u = __sign | 0x7f800000u | (__mant << 13);
    } else if (__ex == 0) {
        if (__mant == 0) {
            __u = __sign;
        } else { /* subnormal: normalise */
            int __e = 113;
            while (!(__mant & 0x400u)) {
                __mant <<= 1;
                __e--;
            }
            __u = __sign | ((uint32_t)__e << 23) | ((__mant & 0x3ffu) << 13);
        }
    } else {
        __u = __sign | ((__ex + 112) << 23) | (__mant << 13);
    }
    return __hk_bit_cast<float>(__u);
}

static inline unsigned short __hk_f2bf(float __f)
{
    uint32_t __u = __hk_bit_cast<uint32_t>(__f);
    if ((__u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign and payload top, make quiet */
        return (unsigned short)((__u >> 16) | 0x40u);
    return (unsigned short)((__u + 0x7fffu + ((__u >> 16) & 1u)) >> 16);
}

static inline unsigned short __hk_d2bf(double __d)
{
    uint64_t __u = __hk_bit_cast<uint64_t>(__d);
    unsigned short __sign = (unsigned short)((__u >> 48) & 0x8000u);
    uint32_t __ex = (uint32_t)(__u >> 52) & 0x7ffu;
    uint64_t __mant = __u & 0xfffffffffffffull;
    if (__ex == 0x7ff)
        return (unsigned short)(__sign | 0x7f80u | (__mant ? 0x40u | (uint32_t)(__mant >> 45) : 0u));
    if (__ex == 0 && __mant == 0)
        return __sign;
    uint64_t __m = __ex ? (__mant | (1ull << 52)) : __mant;
    int __e = __ex ? (int)__ex - 1075 : -1074;
    return (unsigned short)(__sign | __hk_round_to(__m, __e, 7, -126, 127));
}

static inline float __hk_bf2f(unsigned short __b)
{
    return __hk_bit_cast<float>((uint32_t)__b << 16);
}

struct __half_raw {
    unsigned short x;
};
struct __half2_raw {
    unsigned short x, y;
};

/* HIP's conversion rules: a __half is made from, and converts to, every
 * arithmetic type through templates, so each conversion is an exact match
 * to its own type (maxg(__half, double) picks the double overload of float
 * and double ones, maxg(__half, int) the int one, as with HIP). */
struct __half {
    unsigned short __x;
    __half() = default;
    constexpr __half(const __half_raw &__r) : __x(__r.x) {}
    template <typename _Hk_F, std::enable_if_t<std::is_floating_point<_Hk_F>::value, int> = 0>
    __half(_Hk_F __f) : __x(sizeof(_Hk_F) == sizeof(float) ? __hk_f2h((float)__f) : __hk_d2h((double)__f))
    {
    }
    template <typename _Hk_I, std::enable_if_t<std::is_integral<_Hk_I>::value, int> = 0>
    __half(_Hk_I __i) : __x(__hk_d2h((double)__i))
    {
    }
    template <typename _Hk_T, std::enable_if_t<std::is_arithmetic<_Hk_T>::value, int> = 0>
    operator _Hk_T() const
    {
        return (_Hk_T)__hk_h2f(__x);
    }
    constexpr operator __half_raw() const { return __half_raw{__x}; }
    __half &operator=(const __half_raw &__r)
    {
        __x = __r.x;
        return *this;
    }
};
typedef __half half;

struct __hip_bfloat16 {
    unsigned short data;
    __hip_bfloat16() = default;
    __hip_bfloat16(float __f) : data(__hk_f2bf(__f)) {}
    __hip_bfloat16(double __d) : data(__hk_d2bf(__d)) {}
    template <typename _Hk_I, std::enable_if_t<std::is_integral<_Hk_I>::value, int> = 0>
    __hip_bfloat16(_Hk_I __i) : data(__hk_d2bf((double)__i))
    {
    }
    operator float() const { return __hk_bf2f(data); }
};
typedef __hip_bfloat16 hip_bfloat16;

/* Operators of the 16-bit types: both 16-bit gives the 16-bit type (computed
 * in float and rounded, which for + - * / is the correctly rounded result);
 * mixed with a C arithmetic type, the arithmetic happens in float (or wider)
 * and the result is that type, where HIP would call the mix ambiguous. */
#define __HK_F16_OPS_(_Hk_H)                                                            \
    static inline _Hk_H operator+(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) + float(__b)); }             \
    static inline _Hk_H operator-(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) - float(__b)); }             \
    static inline _Hk_H operator*(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) * float(__b)); }             \
    static inline _Hk_H operator/(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) / float(__b)); }             \
    static inline _Hk_H operator-(_Hk_H __a)                                                     \
    {                                                                                  \
        _Hk_H __r = __a;                                                                       \
        __hk_f16_bits(__r) ^= 0x8000u;                                                \
        return __r;                                                                      \
    }                                                                                  \
    static inline _Hk_H operator+(_Hk_H __a) { return __a; }                                       \
    static inline _Hk_H &operator+=(_Hk_H &__a, _Hk_H __b) { return __a = __a + __b; }                       \
    static inline _Hk_H &operator-=(_Hk_H &__a, _Hk_H __b) { return __a = __a - __b; }                       \
    static inline _Hk_H &operator*=(_Hk_H &__a, _Hk_H __b) { return __a = __a * __b; }                       \
    static inline _Hk_H &operator/=(_Hk_H &__a, _Hk_H __b) { return __a = __a / __b; }                       \
    static inline _Hk_H &operator++(_Hk_H &__a) { return __a = __a + _Hk_H(1.0f); }                      \
    static inline _Hk_H &operator--(_Hk_H &__a) { return __a = __a - _Hk_H(1.0f); }                      \
    static inline _Hk_H operator++(_Hk_H &__a, int)                                              \
    {                                                                                  \
        _Hk_H __r = __a;                                                                       \
        ++__a;                                                                           \
        return __r;                                                                      \
    }                                                                                  \
    static inline _Hk_H operator--(_Hk_H &__a, int)                                              \
    {                                                                                  \
        _Hk_H __r = __a;                                                                       \
        --__a;                                                                           \
        return __r;                                                                      \
    }                                                                                  \
    static inline bool operator==(_Hk_H __a, _Hk_H __b) { return float(__a) == float(__b); }           \
    static inline bool operator!=(_Hk_H __a, _Hk_H __b) { return float(__a) != float(__b); }           \
    static inline bool operator<(_Hk_H __a, _Hk_H __b) { return float(__a) < float(__b); }             \
    static inline bool operator<=(_Hk_H __a, _Hk_H __b) { return float(__a) <= float(__b); }           \
    static inline bool operator>(_Hk_H __a, _Hk_H __b) { return float(__a) > float(__b); }             \
    static inline bool operator>=(_Hk_H __a, _Hk_H __b) { return float(__a) >= float(__b); }           \
    __HK_F16_MIXED_(_Hk_H, +) __HK_F16_MIXED_(_Hk_H, -) __HK_F16_MIXED_(_Hk_H, *)         \
    __HK_F16_MIXED_(_Hk_H, /) __HK_F16_MIXED_(_Hk_H, ==) __HK_F16_MIXED_(_Hk_H, !=)       \
    __HK_F16_MIXED_(_Hk_H, <) __HK_F16_MIXED_(_Hk_H, <=) __HK_F16_MIXED_(_Hk_H, >)        \
    __HK_F16_MIXED_(_Hk_H, >=)

#define __HK_F16_MIXED_(_Hk_H, op)                                                      \
    template <typename _Hk_S, __hk_if_scalar<_Hk_S> = 0>                                    \
    static inline auto operator op(_Hk_H __a, _Hk_S __b)->decltype(float(__a) op __b)                  \
    {                                                                                  \
        return float(__a) op __b;                                                          \
    }                                                                                  \
    template <typename _Hk_S, __hk_if_scalar<_Hk_S> = 0>                                    \
    static inline auto operator op(_Hk_S __a, _Hk_H __b)->decltype(__a op float(__b))                  \
    {                                                                                  \
        return __a op float(__b);                                                          \
    }

static inline unsigned short &__hk_f16_bits(__half &__h) { return __h.__x; }
static inline unsigned short &__hk_f16_bits(__hip_bfloat16 &__h) { return __h.data; }
__HK_F16_OPS_(__half)
__HK_F16_OPS_(__hip_bfloat16)
#undef __HK_F16_OPS_
#undef __HK_F16_MIXED_

struct alignas(4) __half2 {
    __half x, y;
    __half2() = default;
    constexpr __half2(const __half2_raw &__r) : x(__half_raw{__r.x}), y(__half_raw{__r.y}) {}
    __half2(__half __a, __half __b) : x(__a), y(__b) {}
    constexpr operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};
typedef __half2 half2;

struct alignas(4) __hip_bfloat162 {
    __hip_bfloat16 x, y;
    __hip_bfloat162() = default;
    __hip_bfloat162(__hip_bfloat16 __a, __hip_bfloat16 __b) : x(__a), y(__b) {}
};

static inline __half __float2half(float __f) { return __half(__f); }
static inline __half __float2half_rn(float __f) { return __half(__f); }
static inline __half __double2half(double __d) { return __half(__d); }
static inline float __half2float(__half __h) { return __hk_h2f(__h.__x); }
static inline __half __int2half_rn(int __i) { return __half(__i); }
static inline int __half2int_rn(__half __h) { return (int)nearbyintf(__half2float(__h)); }
static inline unsigned short __half_as_ushort(__half __h) { return __h.__x; }
static inline short __half_as_short(__half __h) { return (short)__h.__x; }
static inline __half __ushort_as_half(unsigned short x) { return __half(__half_raw{x}); }
static inline __half __short_as_half(short x)
{
    return __half(__half_raw{(unsigned short)x});
}

static inline __hip_bfloat16 __float2bfloat16(float __f) { return __hip_bfloat16(__f); }
static inline __hip_bfloat16 __float2bfloat16_rn(float __f) { return __hip_bfloat16(__f); }
static inline __hip_bfloat16 __double2bfloat16(double __d) { return __hip_bfloat16(__d); }
static inline float __bfloat162float(__hip_bfloat16 __b) { return __hk_bf2f(__b.data); }
static inline unsigned short __bfloat16_as_ushort(__hip_bfloat16 __b) { return __b.data; }
static inline __hip_bfloat16 __ushort_as_bfloat16(unsigned short x)
{
    __hip_bfloat16 __b;
    __b.data = x;
    return __b;
}

#define __HK_F16_FUNCS_(_Hk_H)                                                          \
    static inline _Hk_H __hadd(_Hk_H __a, _Hk_H __b) { return __a + __b; }                                 \
    static inline _Hk_H __hsub(_Hk_H __a, _Hk_H __b) { return __a - __b; }                                 \
    static inline _Hk_H __hmul(_Hk_H __a, _Hk_H __b) { return __a * __b; }                                 \
    static inline _Hk_H __hdiv(_Hk_H __a, _Hk_H __b) { return __a / __b; }                                 \
    static inline _Hk_H __hneg(_Hk_H __a) { return -__a; }                                         \
    static inline _Hk_H __habs(_Hk_H __a)                                                        \
    {                                                                                  \
        __hk_f16_bits(__a) &= 0x7fffu;                                                \
        return __a;                                                                      \
    }                                                                                  \
    /* Product exact in double; one more rounding to double is harmless at 11 bits. */ \
    static inline _Hk_H __hfma(_Hk_H __a, _Hk_H __b, _Hk_H __c)                                              \
    {                                                                                  \
        return _Hk_H((double)float(__a) * (double)float(__b) + (double)float(__c));             \
    }                                                                                  \
    static inline bool __heq(_Hk_H __a, _Hk_H __b) { return __a == __b; }                              \
    static inline bool __hne(_Hk_H __a, _Hk_H __b) { return __a != __b; }                              \
    static inline bool __hlt(_Hk_H __a, _Hk_H __b) { return __a < __b; }                               \
    static inline bool __hle(_Hk_H __a, _Hk_H __b) { return __a <= __b; }                              \
    static inline bool __hgt(_Hk_H __a, _Hk_H __b) { return __a > __b; }                               \
    static inline bool __hge(_Hk_H __a, _Hk_H __b) { return __a >= __b; }                              \
    static inline _Hk_H __hmax(_Hk_H __a, _Hk_H __b) { return _Hk_H(fmaxf(float(__a), float(__b))); }          \
    static inline _Hk_H __hmin(_Hk_H __a, _Hk_H __b) { return _Hk_H(fminf(float(__a), float(__b))); }          \
    static inline bool __hisnan(_Hk_H __a) { return std::isnan(float(__a)); }                  \
    static inline int __hisinf(_Hk_H __a)                                                    \
    {                                                                                  \
        float __f = float(__a);                                                            \
        return std::isinf(__f) ? (__f < 0 ? -1 : 1) : 0;                                   \
    }
__HK_F16_FUNCS_(__half)
__HK_F16_FUNCS_(__hip_bfloat16)
#undef __HK_F16_FUNCS_

static inline __half2 __halves2half2(__half __a, __half __b) { return __half2(__a, __b); }
static inline __half2 __half2half2(__half __a) { return __half2(__a, __a); }
static inline __half2 __floats2half2_rn(float __a, float __b) { return __half2(__half(__a), __half(__b)); }
static inline __half2 __float2half2_rn(float __a) { return __half2(__half(__a), __half(__a)); }
static inline __half2 __float22half2_rn(float2 __f) { return __floats2half2_rn(__f.x, __f.y); }
static inline float2 __half22float2(__half2 __h) { return make_float2(float(__h.x), float(__h.y)); }
static inline float __low2float(__half2 __h) { return float(__h.x); }
static inline float __high2float(__half2 __h) { return float(__h.y); }
static inline __half __low2half(__half2 __h) { return __h.x; }
static inline __half __high2half(__half2 __h) { return __h.y; }
static inline __half2 __lows2half2(__half2 __a, __half2 __b) { return __half2(__a.x, __b.x); }
static inline __half2 __highs2half2(__half2 __a, __half2 __b) { return __half2(__a.y, __b.y); }
static inline __half2 __hadd2(__half2 __a, __half2 __b) { return __half2(__a.x + __b.x, __a.y + __b.y); }
static inline __half2 __hsub2(__half2 __a, __half2 __b) { return __half2(__a.x - __b.x, __a.y - __b.y); }
static inline __half2 __hmul2(__half2 __a, __half2 __b) { return __half2(__a.x * __b.x, __a.y * __b.y); }
static inline __half2 __h2div(__half2 __a, __half2 __b) { return __half2(__a.x / __b.x, __a.y / __b.y); }
static inline __half2 __hneg2(__half2 __a) { return __half2(-__a.x, -__a.y); }
static inline __half2 __habs2(__half2 __a) { return __half2(__habs(__a.x), __habs(__a.y)); }
static inline __half2 __hfma2(__half2 __a, __half2 __b, __half2 __c)
{
    return __half2(__hfma(__a.x, __b.x, __c.x), __hfma(__a.y, __b.y, __c.y));
}
static inline __half2 operator+(__half2 __a, __half2 __b) { return __hadd2(__a, __b); }
static inline __half2 operator-(__half2 __a, __half2 __b) { return __hsub2(__a, __b); }
static inline __half2 operator*(__half2 __a, __half2 __b) { return __hmul2(__a, __b); }
static inline __half2 operator/(__half2 __a, __half2 __b) { return __h2div(__a, __b); }
static inline __half2 operator-(__half2 __a) { return __hneg2(__a); }
static inline __half2 &operator+=(__half2 &__a, __half2 __b) { return __a = __a + __b; }
static inline __half2 &operator-=(__half2 &__a, __half2 __b) { return __a = __a - __b; }
static inline __half2 &operator*=(__half2 &__a, __half2 __b) { return __a = __a * __b; }
static inline __half2 &operator/=(__half2 &__a, __half2 __b) { return __a = __a / __b; }

static inline __hip_bfloat162 __floats2bfloat162_rn(float __a, float __b)
{
    return __hip_bfloat162(__hip_bfloat16(__a), __hip_bfloat16(__b));
}
static inline __hip_bfloat162 __float2bfloat162_rn(float __a)
{
    return __hip_bfloat162(__hip_bfloat16(__a), __hip_bfloat16(__a));
}
static inline float __low2float(__hip_bfloat162 __h) { return float(__h.x); }
static inline float __high2float(__hip_bfloat162 __h) { return float(__h.y); }

/* Shuffles of the 16-bit float types give the same type back, as CUDA's
 * overloads for __half, __half2 and __nv_bfloat16 do (not a float, which
 * would make maxg(h, __shfl_xor_sync(m, h, 1)) ambiguous). */
__HK_SHFL_(__half)
__HK_SHFL_(__half2)
__HK_SHFL_(__hip_bfloat16)
__HK_SHFL_(__hip_bfloat162)
#undef __HK_SHFL_

#endif
