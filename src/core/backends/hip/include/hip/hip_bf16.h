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
