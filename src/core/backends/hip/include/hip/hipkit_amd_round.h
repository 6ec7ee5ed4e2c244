/* The roundings hipkit's ROCm 5 headers (hip_fp16.h, hip_bf16.h) build on,
 * kept apart so they can be tested on the CPU backend (tests/hip/
 * test_amd_round.c), which has the same device functions. */
#ifndef HIPKIT_AMD_ROUND_H
#define HIPKIT_AMD_ROUND_H

static __device__ __forceinline__ unsigned short hkc_f2bf_bits(float f)
{
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN, quiet */
        return (unsigned short)((u >> 16) | 0x40u);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* A double to float rounded toward zero with a sticky last bit ("round to
 * odd"): rounding that once more to a narrower format (half, bfloat16) then
 * gives the same result as rounding the double directly. */
static __device__ __forceinline__ float hkc_double_to_float_odd(double d)
{
    float f = (float)d;
    if (fabsf(f) > fabs(d) || (isinf(f) && !isinf(d)))
        f = nextafterf(f, 0.0f);
    unsigned u = __float_as_uint(f);
    if ((double)f != d && d == d)
        u |= 1u;
    return __uint_as_float(u);
}

#endif
