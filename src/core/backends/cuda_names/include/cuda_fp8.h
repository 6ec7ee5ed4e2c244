/* CUDA's <cuda_fp8.h> on hipkit's CPU and AMD backends: the OCP 8-bit
 * floats under CUDA's names, so a .cu source that stores or converts them
 * compiles unchanged (the NVIDIA backend uses the toolkit's own header).
 *
 * e4m3: 4 exponent bits (bias 7), 3 mantissa bits, no infinity, NaN is
 * S.1111.111, largest 448. e5m2: 5 exponent bits (bias 15), 2 mantissa
 * bits, infinities and NaNs as in IEEE, largest 57344. Conversions to fp8
 * round to nearest even; with __NV_SATFINITE a finite value (or infinity)
 * past the largest finite one becomes it, with __NV_NOSAT it becomes NaN
 * (e4m3) or infinity (e5m2), as CUDA documents; NaN stays NaN. Every fp8
 * value is exact in half, bfloat16, float and double, so conversions out
 * of fp8 are exact. Written from the formats, in integer arithmetic, so
 * the same code runs on the CPU and on AMD GPUs. */
#ifndef __HK_CUDA_FP8_H
#define __HK_CUDA_FP8_H

#include "cuda_fp16.h"
#include "cuda_bf16.h"

#define __HK_FP8_FN static __host__ __device__ __forceinline__

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short int __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;

typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

/* x rounded to the nearest fp8 of the kind, ties to an even mantissa. */
__HK_FP8_FN __nv_fp8_storage_t __hk_fp8_from_double(double __x, __nv_saturation_t __sat,
                                                    __nv_fp8_interpretation_t __kind)
{
    const int __m = __kind == __NV_E4M3 ? 3 : 2, __bias = __kind == __NV_E4M3 ? 7 : 15;
    const unsigned __maxcode = __kind == __NV_E4M3 ? 0x7eu : 0x7bu;
    unsigned long long __b;
    __builtin_memcpy(&__b, &__x, 8);
    const unsigned __sign = (unsigned)(__b >> 56) & 0x80u;
    const unsigned long long __a = __b & 0x7fffffffffffffffull;
    if (__a > 0x7ff0000000000000ull) /* NaN */
        return (__nv_fp8_storage_t)(__sign | (__kind == __NV_E4M3 ? 0x7fu : 0x7eu | (unsigned)(__a >> 50 & 1u)));
    const int __e = (int)(__a >> 52) - 1023; /* floor(log2 |x|) for normal doubles */
    if (__e < 1 - __bias - __m - 2)          /* under a quarter of the least subnormal: 0 */
        return (__nv_fp8_storage_t)__sign;
    unsigned __code;
    if (__e > 16) { /* far past the largest finite value, or infinity */
        __code = __maxcode + 1;
    } else {
        /* |x| in units of the ulp of its binade (subnormals share the
         * least normal binade's ulp): an integer part and the rest */
        const int __eff = __e < 1 - __bias ? 1 - __bias : __e;
        const unsigned long long __sig = (__a & 0x000fffffffffffffull) | 0x0010000000000000ull;
        /* |x| = sig 2^(e - 52); in ulps of 2^(eff - m): sig 2^(e - 52 - eff + m) */
        const int __rs = 52 - __e + __eff - __m; /* 49..54: the early outs bound it */
        unsigned long long __n = __sig >> __rs;
        const unsigned long long __rest = __sig & ((1ull << __rs) - 1), __half_ulp = 1ull << (__rs - 1);
        if (__rest > __half_ulp || (__rest == __half_ulp && (__n & 1)))
            __n++;
        /* code = (eff + bias - 1) 2^m + n: a carry into the next binade, and
         * the subnormals (eff = 1 - bias), come out right */
        __code = (unsigned)((__eff + __bias - 1) << __m) + (unsigned)__n;
    }
    if (__code > __maxcode)
        __code = __sat == __NV_SATFINITE ? __maxcode : (__kind == __NV_E4M3 ? 0x7fu : 0x7cu);
    return (__nv_fp8_storage_t)(__sign | __code);
}

/* The value of an fp8 as a double (exact). */
__HK_FP8_FN double __hk_fp8_to_double(__nv_fp8_storage_t __v, __nv_fp8_interpretation_t __kind)
{
    const int __m = __kind == __NV_E4M3 ? 3 : 2, __bias = __kind == __NV_E4M3 ? 7 : 15;
    const unsigned __mag = __v & 0x7fu, __field = __mag >> __m, __mant = __mag & ((1u << __m) - 1);
    unsigned long long __b = (unsigned long long)(__v & 0x80u) << 56;
    if (__kind == __NV_E4M3 && __mag == 0x7fu) {
        __b |= 0x7ff8000000000000ull;
    } else if (__kind == __NV_E5M2 && __field == 31) {
        __b |= __mant ? 0x7ff8000000000000ull : 0x7ff0000000000000ull;
    } else if (__field == 0) { /* subnormal: mant 2^(1 - bias - m), built as a power of two times mant */
        double __p;
        unsigned long long __pb = (unsigned long long)(1023 + 1 - __bias - __m) << 52;
        __builtin_memcpy(&__p, &__pb, 8);
        double __r = (double)__mant * __p;
        return (__v & 0x80u) ? -__r : __r;
    } else {
        __b |= (unsigned long long)(__field - __bias + 1023) << 52 | (unsigned long long)__mant << (52 - __m);
    }
    double __r;
    __builtin_memcpy(&__r, &__b, 8);
    return __r;
}

__HK_FP8_FN __nv_fp8_storage_t __nv_cvt_double_to_fp8(double __x, __nv_saturation_t __s,
                                                      __nv_fp8_interpretation_t __k)
{
    return __hk_fp8_from_double(__x, __s, __k);
}
__HK_FP8_FN __nv_fp8_storage_t __nv_cvt_float_to_fp8(float __x, __nv_saturation_t __s,
                                                     __nv_fp8_interpretation_t __k)
{
    return __hk_fp8_from_double((double)__x, __s, __k);
}
__HK_FP8_FN __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(__half_raw __x, __nv_saturation_t __s,
                                                       __nv_fp8_interpretation_t __k)
{
    return __hk_fp8_from_double((double)__half2float(__half(__x)), __s, __k);
}
__HK_FP8_FN __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t __v, __nv_fp8_interpretation_t __k)
{
    return (__half_raw)__float2half((float)__hk_fp8_to_double(__v, __k));
}
__HK_FP8_FN __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(float2 __x, __nv_saturation_t __s,
                                                          __nv_fp8_interpretation_t __k)
{
    return (__nv_fp8x2_storage_t)(__nv_cvt_float_to_fp8(__x.x, __s, __k) |
                                  (unsigned)__nv_cvt_float_to_fp8(__x.y, __s, __k) << 8);
}
__HK_FP8_FN __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(double2 __x, __nv_saturation_t __s,
                                                           __nv_fp8_interpretation_t __k)
{
    return (__nv_fp8x2_storage_t)(__nv_cvt_double_to_fp8(__x.x, __s, __k) |
                                  (unsigned)__nv_cvt_double_to_fp8(__x.y, __s, __k) << 8);
}

/* The scalar types: storage and conversions only, as CUDA's (arithmetic
 * goes through float or half). Conversions in are explicit and saturate,
 * as CUDA's constructors do; to an integer type is through float,
 * truncated and clamped, NaN to 0. */
#define __HK_FP8_TYPE(T, KIND)                                                                  \
    struct T {                                                                                  \
        __nv_fp8_storage_t __x;                                                                 \
        T() = default;                                                                          \
        __host__ __device__ explicit T(double __f)                                              \
            : __x(__hk_fp8_from_double(__f, __NV_SATFINITE, KIND)) {}                           \
        __host__ __device__ explicit T(float __f) : T((double)__f) {}                           \
        __host__ __device__ explicit T(__half __f) : T((double)__half2float(__f)) {}            \
        __host__ __device__ explicit T(__nv_bfloat16 __f) : T((double)__bfloat162float(__f)) {} \
        __host__ __device__ explicit T(int __v) : T((double)__v) {}                             \
        __host__ __device__ explicit T(unsigned int __v) : T((double)__v) {}                    \
        __host__ __device__ explicit T(long __v) : T((double)__v) {}                            \
        __host__ __device__ explicit T(unsigned long __v) : T((double)__v) {}                   \
        __host__ __device__ explicit T(long long __v) : T((double)__v) {}                       \
        __host__ __device__ explicit T(unsigned long long __v) : T((double)__v) {}              \
        __host__ __device__ explicit T(short __v) : T((double)__v) {}                           \
        __host__ __device__ explicit T(unsigned short __v) : T((double)__v) {}                  \
        __host__ __device__ explicit operator double() const { return __hk_fp8_to_double(__x, KIND); } \
        __host__ __device__ explicit operator float() const { return (float)__hk_fp8_to_double(__x, KIND); } \
        __host__ __device__ explicit operator __half() const { return __float2half((float)*this); } \
        __host__ __device__ explicit operator __nv_bfloat16() const { return __float2bfloat16((float)*this); } \
        __host__ __device__ explicit operator bool() const { return (__x & 0x7fu) != 0; }      \
        template <typename _I, typename = typename __hk_fp8_int<_I>::type>                      \
        __host__ __device__ explicit operator _I() const { return __hk_fp8_int<_I>::from((double)*this); } \
    };

/* float to integer as CUDA's __float2int_rz family: toward zero, clamped
 * to the type's range, NaN to 0. */
template <typename _I> struct __hk_fp8_int {};
#define __HK_FP8_INT(I, LO, HI)                                                                 \
    template <> struct __hk_fp8_int<I> {                                                        \
        typedef I type;                                                                         \
        static __host__ __device__ I from(double __d)                                           \
        {                                                                                       \
            return __d != __d ? (I)0 : __d <= (double)(LO) ? (I)(LO) : __d >= (double)(HI) ? (I)(HI) : (I)__d; \
        }                                                                                       \
    };
#ifdef __CHAR_UNSIGNED__
__HK_FP8_INT(char, 0, 255)
#else
__HK_FP8_INT(char, -128, 127)
#endif
__HK_FP8_INT(signed char, -128, 127)
__HK_FP8_INT(unsigned char, 0, 255)
__HK_FP8_INT(short, -32768, 32767)
__HK_FP8_INT(unsigned short, 0, 65535)
__HK_FP8_INT(int, -2147483647 - 1, 2147483647)
__HK_FP8_INT(unsigned int, 0, 4294967295u)
__HK_FP8_INT(long, -__LONG_MAX__ - 1, __LONG_MAX__)
__HK_FP8_INT(unsigned long, 0, __LONG_MAX__ * 2ul + 1)
__HK_FP8_INT(long long, -9223372036854775807ll - 1, 9223372036854775807ll)
__HK_FP8_INT(unsigned long long, 0, 18446744073709551615ull)
#undef __HK_FP8_INT

__HK_FP8_TYPE(__nv_fp8_e4m3, __NV_E4M3)
__HK_FP8_TYPE(__nv_fp8_e5m2, __NV_E5M2)
#undef __HK_FP8_TYPE

/* Pairs: the first value in the low byte, as CUDA stores them. */
#define __HK_FP8X2_TYPE(T, KIND)                                                                \
    struct T {                                                                                  \
        __nv_fp8x2_storage_t __x;                                                               \
        T() = default;                                                                          \
        __host__ __device__ explicit T(float2 __f) : __x(__nv_cvt_float2_to_fp8x2(__f, __NV_SATFINITE, KIND)) {} \
        __host__ __device__ explicit T(double2 __f) : __x(__nv_cvt_double2_to_fp8x2(__f, __NV_SATFINITE, KIND)) {} \
        __host__ __device__ explicit T(__half2 __h)                                             \
        {                                                                                       \
            float2 __f;                                                                         \
            __f.x = __low2float(__h);                                                           \
            __f.y = __high2float(__h);                                                          \
            __x = __nv_cvt_float2_to_fp8x2(__f, __NV_SATFINITE, KIND);                          \
        }                                                                                       \
        __host__ __device__ explicit operator float2() const                                    \
        {                                                                                       \
            float2 __f;                                                                         \
            __f.x = (float)__hk_fp8_to_double((__nv_fp8_storage_t)(__x & 0xffu), KIND);         \
            __f.y = (float)__hk_fp8_to_double((__nv_fp8_storage_t)(__x >> 8), KIND);            \
            return __f;                                                                         \
        }                                                                                       \
        __host__ __device__ explicit operator __half2() const                                   \
        {                                                                                       \
            float2 __f = (float2)*this;                                                         \
            return __floats2half2_rn(__f.x, __f.y);                                             \
        }                                                                                       \
    };
__HK_FP8X2_TYPE(__nv_fp8x2_e4m3, __NV_E4M3)
__HK_FP8X2_TYPE(__nv_fp8x2_e5m2, __NV_E5M2)
#undef __HK_FP8X2_TYPE
#undef __HK_FP8_FN

#endif
