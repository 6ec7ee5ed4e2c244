/* hipkit's <math.h> for NVRTC and hiprtc 5 (see <stdint.h>). Both compilers
 * declare the C math functions (float and double overloads) themselves;
 * this adds the macros and the few functions one or the other lacks. The
 * std:: names are in <cmath>. */
#if !defined(__CUDACC_RTC__) && !defined(__HIPCC_RTC__)
#include_next <math.h>
#else
#ifndef __HK_RTC_MATH_H
#define __HK_RTC_MATH_H

#ifndef INFINITY
#define INFINITY (__builtin_bit_cast(float, 0x7f800000u))
#endif
#ifndef NAN
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
#endif
#ifndef HUGE_VALF
#define HUGE_VALF INFINITY
#endif
#ifndef HUGE_VAL
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ull))
#endif
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
#define FP_ILOGB0 (-2147483647 - 1)
#define FP_ILOGBNAN (-2147483647 - 1)
#define MATH_ERRNO 1
#define MATH_ERREXCEPT 2
#define math_errhandling 0
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif

/* fpclassify (neither compiler has it), isnormal and the quiet
 * comparisons (NVRTC lacks them), as C++ declares them. */
#define __HK_MATH_CLASSIFY(__type, __bits, __exp_mask, __mant_mask)                            \
    static __device__ inline int fpclassify(__type __x)                                       \
    {                                                                                         \
        __bits __u = __builtin_bit_cast(__bits, __x);                                         \
        __bits __e = __u & __exp_mask, __m = __u & __mant_mask;                               \
        return __e == __exp_mask ? (__m ? FP_NAN : FP_INFINITE)                               \
                                 : __e ? FP_NORMAL : __m ? FP_SUBNORMAL : FP_ZERO;            \
    }
__HK_MATH_CLASSIFY(float, unsigned int, 0x7f800000u, 0x007fffffu)
__HK_MATH_CLASSIFY(double, unsigned long long, 0x7ff0000000000000ull, 0x000fffffffffffffull)
#undef __HK_MATH_CLASSIFY
#ifdef __CUDACC_RTC__
#define __HK_MATH_QUIET(__type)                                                                \
    static __device__ inline bool isnormal(__type __x) { return fpclassify(__x) == FP_NORMAL; } \
    static __device__ inline bool isunordered(__type __x, __type __y)                          \
    {                                                                                          \
        return __x != __x || __y != __y;                                                       \
    }                                                                                          \
    static __device__ inline bool isgreater(__type __x, __type __y)                            \
    {                                                                                          \
        return !isunordered(__x, __y) && __x > __y;                                            \
    }                                                                                          \
    static __device__ inline bool isgreaterequal(__type __x, __type __y)                       \
    {                                                                                          \
        return !isunordered(__x, __y) && __x >= __y;                                           \
    }                                                                                          \
    static __device__ inline bool isless(__type __x, __type __y)                               \
    {                                                                                          \
        return !isunordered(__x, __y) && __x < __y;                                            \
    }                                                                                          \
    static __device__ inline bool islessequal(__type __x, __type __y)                          \
    {                                                                                          \
        return !isunordered(__x, __y) && __x <= __y;                                           \
    }                                                                                          \
    static __device__ inline bool islessgreater(__type __x, __type __y)                        \
    {                                                                                          \
        return !isunordered(__x, __y) && __x != __y;                                           \
    }
__HK_MATH_QUIET(float)
__HK_MATH_QUIET(double)
#undef __HK_MATH_QUIET
#endif

#endif
#endif
