/* hipkit's <hip/hip_bf16.h> for ROCm releases that lack it (ROCm 5.x ships
 * only the class hip_bfloat16 in <hip/hip_bfloat16.h>): HIP's __hip_bfloat16
 * device API as storage in 16 bits, arithmetic through float (what HIP's own
 * type does), conversions rounding to nearest even. hiprtc gets it as an
 * added header, `hipkit compile` as an include folder. */
#ifndef HIPKIT_AMD_HIP_BF16_H
#define HIPKIT_AMD_HIP_BF16_H

#include <hip/hip_runtime.h>
#include <hip/hipkit_amd_round.h>

/* double to bf16 in one rounding (see hipkit_amd_round.h) */
static __device__ __forceinline__ unsigned short hkc_d2bf_bits(double d)
{
    return hkc_f2bf_bits(hkc_double_to_float_odd(d));
}

struct __hip_bfloat16 {
    unsigned short data;
    __hip_bfloat16() = default;
    __device__ __hip_bfloat16(float f) : data(hkc_f2bf_bits(f)) {}
    __device__ __hip_bfloat16(double d) : data(hkc_d2bf_bits(d)) {}
    __device__ __hip_bfloat16(int i) : data(hkc_d2bf_bits((double)i)) {}
    __device__ __hip_bfloat16(unsigned i) : data(hkc_d2bf_bits((double)i)) {}
    __device__ __hip_bfloat16(long long i) : data(hkc_d2bf_bits((double)i)) {}
    __device__ __hip_bfloat16(unsigned long long i) : data(hkc_d2bf_bits((double)i)) {}
    __device__ __hip_bfloat16(long i) : data(hkc_d2bf_bits((double)i)) {}
    __device__ __hip_bfloat16(unsigned long i) : data(hkc_d2bf_bits((double)i)) {}
    __device__ __hip_bfloat16(short i) : data(hkc_f2bf_bits((float)i)) {}
    __device__ __hip_bfloat16(unsigned short i) : data(hkc_f2bf_bits((float)i)) {}
    __device__ __hip_bfloat16(signed char i) : data(hkc_f2bf_bits((float)i)) {}
    __device__ __hip_bfloat16(unsigned char i) : data(hkc_f2bf_bits((float)i)) {}
    __device__ __hip_bfloat16(bool b) : data(b ? 0x3f80 : 0) {}
    __device__ operator float() const { return __uint_as_float((unsigned)data << 16); }
};

/* hipkit's other backends name the same type hip_bfloat16; ROCm's own class
 * of that name (hip/hip_bfloat16.h) wins where it is included first. */
#ifndef _HIP_BFLOAT16_H_
typedef __hip_bfloat16 hip_bfloat16;
#endif

struct alignas(4) __hip_bfloat162 {
    __hip_bfloat16 x, y;
};

/* The bfloat16 forms of CUDA's half functions that CUDA sources call
 * (candle's kernels for sm_80): classification and sign on the bits, the
 * rest through float with one rounding, as on hipkit's other backends.
 * __hmax / __hmin return the other operand when one is NaN (fmaxf);
 * the _nan forms return NaN then. */
static __device__ __forceinline__ __hip_bfloat16 hkc_bf_bits(unsigned short u)
{
    __hip_bfloat16 b;
    b.data = u;
    return b;
}
static __device__ __forceinline__ bool __hisnan(__hip_bfloat16 a) { return (a.data & 0x7fff) > 0x7f80; }
static __device__ __forceinline__ int __hisinf(__hip_bfloat16 a)
{
    return (a.data & 0x7fff) == 0x7f80 ? (a.data & 0x8000 ? -1 : 1) : 0;
}
static __device__ __forceinline__ __hip_bfloat16 __habs(__hip_bfloat16 a) { return hkc_bf_bits(a.data & 0x7fff); }
static __device__ __forceinline__ __hip_bfloat16 __hneg(__hip_bfloat16 a) { return hkc_bf_bits(a.data ^ 0x8000); }
static __device__ __forceinline__ __hip_bfloat16 __hmax(__hip_bfloat16 a, __hip_bfloat16 b)
{
    return __hip_bfloat16(fmaxf((float)a, (float)b));
}
static __device__ __forceinline__ __hip_bfloat16 __hmin(__hip_bfloat16 a, __hip_bfloat16 b)
{
    return __hip_bfloat16(fminf((float)a, (float)b));
}
static __device__ __forceinline__ __hip_bfloat16 __hmax_nan(__hip_bfloat16 a, __hip_bfloat16 b)
{
    return __hisnan(a) || __hisnan(b) ? hkc_bf_bits(0x7fc0) : __hmax(a, b);
}
static __device__ __forceinline__ __hip_bfloat16 __hmin_nan(__hip_bfloat16 a, __hip_bfloat16 b)
{
    return __hisnan(a) || __hisnan(b) ? hkc_bf_bits(0x7fc0) : __hmin(a, b);
}
#define HKC_BF16_UNARY(NAME, F)                                                              \
    static __device__ __forceinline__ __hip_bfloat16 NAME(__hip_bfloat16 a) { return __hip_bfloat16(F((float)a)); }
HKC_BF16_UNARY(hsqrt, sqrtf)
HKC_BF16_UNARY(hrsqrt, rsqrtf)
HKC_BF16_UNARY(hrcp, 1.0f /)
HKC_BF16_UNARY(hexp, expf)
HKC_BF16_UNARY(hexp2, exp2f)
HKC_BF16_UNARY(hexp10, exp10f)
HKC_BF16_UNARY(hlog, logf)
HKC_BF16_UNARY(hlog2, log2f)
HKC_BF16_UNARY(hlog10, log10f)
HKC_BF16_UNARY(hsin, sinf)
HKC_BF16_UNARY(hcos, cosf)
HKC_BF16_UNARY(hceil, ceilf)
HKC_BF16_UNARY(hfloor, floorf)
HKC_BF16_UNARY(htrunc, truncf)
HKC_BF16_UNARY(hrint, rintf)
#undef HKC_BF16_UNARY
#define HKC_BF16_BINARY(NAME, OP)                                                            \
    static __device__ __forceinline__ __hip_bfloat16 NAME(__hip_bfloat16 a, __hip_bfloat16 b) \
    {                                                                                        \
        return __hip_bfloat16((float)a OP (float)b);                                         \
    }
HKC_BF16_BINARY(__hadd, +)
HKC_BF16_BINARY(__hsub, -)
HKC_BF16_BINARY(__hmul, *)
HKC_BF16_BINARY(__hdiv, /)
#undef HKC_BF16_BINARY
/* CUDA's compound assignments, rounded once from float. */
#define HKC_BF16_ASSIGN(OP)                                                                     \
    static __device__ __forceinline__ __hip_bfloat16 &operator OP##=(__hip_bfloat16 &a, __hip_bfloat16 b) \
    {                                                                                        \
        a = __hip_bfloat16((float)a OP (float)b);                                            \
        return a;                                                                            \
    }
HKC_BF16_ASSIGN(+)
HKC_BF16_ASSIGN(-)
HKC_BF16_ASSIGN(*)
HKC_BF16_ASSIGN(/)
#undef HKC_BF16_ASSIGN
static __device__ __forceinline__ __hip_bfloat16 __hfma(__hip_bfloat16 a, __hip_bfloat16 b, __hip_bfloat16 c)
{
    return __hip_bfloat16(fmaf((float)a, (float)b, (float)c));
}

static __device__ __forceinline__ __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }
static __device__ __forceinline__ __hip_bfloat16 __float2bfloat16_rn(float f) { return __hip_bfloat16(f); }
static __device__ __forceinline__ __hip_bfloat16 __double2bfloat16(double d) { return __hip_bfloat16(d); }
static __device__ __forceinline__ float __bfloat162float(__hip_bfloat16 b) { return (float)b; }
static __device__ __forceinline__ unsigned short __bfloat16_as_ushort(__hip_bfloat16 b) { return b.data; }
static __device__ __forceinline__ __hip_bfloat16 __ushort_as_bfloat16(unsigned short u)
{
    __hip_bfloat16 b;
    b.data = u;
    return b;
}
static __device__ __forceinline__ __hip_bfloat162 __floats2bfloat162_rn(float a, float b)
{
    return {__hip_bfloat16(a), __hip_bfloat16(b)};
}
static __device__ __forceinline__ float __low2float(__hip_bfloat162 h) { return (float)h.x; }
static __device__ __forceinline__ float __high2float(__hip_bfloat162 h) { return (float)h.y; }

#endif
