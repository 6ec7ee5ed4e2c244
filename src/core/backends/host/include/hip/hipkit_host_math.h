/* HIP's math functions that the C library lacks, for hipkit's CPU backend:
 * normcdf, the inverse error functions, erfcx, sinpi/cospi, the norms and
 * powi, in double and float (computed in double, rounded once). Included by
 * hipkit_host_device.h. */
#ifndef __HK_HOST_MATH_H
#define __HK_HOST_MATH_H

/* erfinv by Newton's method on erf from a logarithmic first guess: three
 * steps reach double precision on (-1, 1). */
static inline double erfinv(double __y)
{
    if (!(__y > -1.0 && __y < 1.0))
        return __y == 1.0 ? INFINITY : __y == -1.0 ? -INFINITY : NAN;
    double __w = -log((1.0 - __y) * (1.0 + __y));
    double __x = copysign(0.8 * sqrt(__w), __y);
    for (int __i = 0; __i < 60; __i++) {
        double __e = erf(__x) - __y;
        double __step = __e / (1.1283791670955126 * exp(-__x * __x));
        __x -= __step;
        if (fabs(__step) <= 1e-17 * fabs(__x))
            break;
    }
    return __x;
}
/* erfcinv(y) = erfinv(1 - y), but solved on erfc for small y, where 1 - y
 * has lost the digits. */
static inline double erfcinv(double __y)
{
    if (!(__y > 0.0 && __y < 2.0))
        return __y == 0.0 ? INFINITY : __y == 2.0 ? -INFINITY : NAN;
    if (__y > 0.0625 && __y < 1.9375)
        return erfinv(1.0 - __y);
    bool __neg = __y > 1.0;
    double __t = __neg ? 2.0 - __y : __y;
    double __x = sqrt(-log(__t));
    for (int __i = 0; __i < 80; __i++) {
        double __e = erfc(__x) - __t;
        double __step = -__e / (1.1283791670955126 * exp(-__x * __x));
        __x -= __step;
        if (fabs(__step) <= 1e-17 * fabs(__x))
            break;
    }
    return __neg ? -__x : __x;
}
/* exp(x^2) erfc(x) without the overflow of the product: a continued
 * fraction for large x. */
static inline double erfcx(double __x)
{
    if (__x < 25.0)
        return exp(__x * __x) * erfc(__x);
    double __f = __x;
    for (int __k = 60; __k >= 1; __k--)
        __f = __x + (__k / 2.0) / __f;
    return 0.5641895835477563 / __f;
}
static inline double normcdf(double __x) { return 0.5 * erfc(-__x * 0.7071067811865476); }
static inline double normcdfinv(double __p) { return -1.4142135623730951 * erfcinv(2.0 * __p); }
/* sin(pi x) and cos(pi x) exact where they are 0 (pi x rounded is not a
 * multiple of pi/2). */
static inline double sinpi(double __x)
{
    double __r = fmod(__x, 2.0);
    return __r == trunc(__r) ? copysign(0.0, __x) : sin(M_PI * __r);
}
static inline double cospi(double __x)
{
    double __r = fabs(fmod(__x, 2.0));
    return __r == 0.5 || __r == 1.5 ? 0.0 : cos(M_PI * __r);
}
static inline void sincospi(double __x, double *__s, double *__c)
{
    *__s = sinpi(__x);
    *__c = cospi(__x);
}
static inline double rhypot(double __a, double __b) { return 1.0 / hypot(__a, __b); }
static inline double norm3d(double __a, double __b, double __c) { return sqrt(__a * __a + __b * __b + __c * __c); }
static inline double rnorm3d(double __a, double __b, double __c) { return 1.0 / norm3d(__a, __b, __c); }
static inline double norm4d(double __a, double __b, double __c, double __d)
{
    return sqrt(__a * __a + __b * __b + __c * __c + __d * __d);
}
static inline double rnorm4d(double __a, double __b, double __c, double __d)
{
    return 1.0 / norm4d(__a, __b, __c, __d);
}
static inline double norm(int __n, const double *__v)
{
    double __s = 0;
    for (int __i = 0; __i < __n; __i++)
        __s += __v[__i] * __v[__i];
    return sqrt(__s);
}
static inline double rnorm(int __n, const double *__v) { return 1.0 / norm(__n, __v); }
static inline double powi(double __x, int __n) { return pow(__x, (double)__n); }

/* Modified Bessel functions of the first kind, orders 0 and 1: the power
 * series, which converges for every x (terms peak near k = |x|/2). */
static inline double __hk_bessel_i(double __x, int __order)
{
    double __q = __x * __x / 4, __t = __order ? __x / 2 : 1.0, __s = __t;
    for (int __k = 1; __k < 2000 && __t > __s * 1e-17; __k++) {
        __t *= __q / ((double)__k * (__k + __order));
        __s += __t;
    }
    return __s;
}
static inline double cyl_bessel_i0(double __x) { return __hk_bessel_i(fabs(__x), 0); }
static inline double cyl_bessel_i1(double __x) { return copysign(__hk_bessel_i(fabs(__x), 1), __x); }

/* clang's _Float16 overloads, where the host compiler has the type (g++ 12
 * on x86-64 does): computed in double, the product exact, then rounded. */
#ifdef __FLT16_MAX__
static inline _Float16 fma(_Float16 __a, _Float16 __b, _Float16 __c)
{
    return (_Float16)((double)__a * (double)__b + (double)__c);
}
static inline _Float16 pow(_Float16 __x, int __n) { return (_Float16)pow((double)__x, (double)__n); }
#endif

#define __HK_MATHF1_(name) static inline float name##f(float __x) { return (float)name((double)__x); }
__HK_MATHF1_(erfinv) __HK_MATHF1_(erfcinv) __HK_MATHF1_(erfcx) __HK_MATHF1_(normcdf)
__HK_MATHF1_(normcdfinv) __HK_MATHF1_(sinpi) __HK_MATHF1_(cospi) __HK_MATHF1_(cyl_bessel_i0)
__HK_MATHF1_(cyl_bessel_i1)
#undef __HK_MATHF1_
static inline void sincospif(float __x, float *__s, float *__c)
{
    *__s = sinpif(__x);
    *__c = cospif(__x);
}
static inline float rhypotf(float __a, float __b) { return (float)rhypot(__a, __b); }
static inline float norm3df(float __a, float __b, float __c) { return (float)norm3d(__a, __b, __c); }
static inline float rnorm3df(float __a, float __b, float __c) { return (float)rnorm3d(__a, __b, __c); }
static inline float norm4df(float __a, float __b, float __c, float __d) { return (float)norm4d(__a, __b, __c, __d); }
static inline float rnorm4df(float __a, float __b, float __c, float __d) { return (float)rnorm4d(__a, __b, __c, __d); }
static inline float normf(int __n, const float *__v)
{
    double __s = 0;
    for (int __i = 0; __i < __n; __i++)
        __s += (double)__v[__i] * __v[__i];
    return (float)sqrt(__s);
}
static inline float rnormf(int __n, const float *__v) { return 1.0f / normf(__n, __v); }
static inline float powif(float __x, int __n) { return (float)pow((double)__x, (double)__n); }
static inline float fdividef(float __a, float __b) { return __a / __b; }

#endif
