/* One element of a dtype written from a double or a 64-bit integer, with the
 * checks that refuse a value the dtype cannot hold, and read back. The
 * argument packer and the Lua buffers share these rules, so a kernel
 * argument and a buffer element take the same values. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"

/* Compared as unsigned: an out-of-range value stored in the enum fails. */
static int is_int_dtype(hk_dtype t) { return (unsigned)t - HK_I8 <= (unsigned)(HK_U64 - HK_I8); }
static int is_unsigned_dtype(hk_dtype t) { return (unsigned)t - HK_U8 <= (unsigned)(HK_U64 - HK_U8); }
static int is_float_dtype(hk_dtype t) { return (unsigned)t <= HK_F64; }

HK_API int hk_dtype_int_range(hk_dtype t, int64_t *lo, uint64_t *hi)
{
    if (!is_int_dtype(t) || !lo || !hi)
        return HK_EINVAL;
    unsigned bits = (unsigned)hk_dtype_size(t) * 8;
    if (is_unsigned_dtype(t)) {
        *lo = 0;
        *hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    } else {
        *lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
        *hi = (UINT64_C(1) << (bits - 1)) - 1;
    }
    return 0;
}

double hkc_dtype_float_max(hk_dtype t)
{
    switch (t) {
    case HK_F16: return 65504.0;
    case HK_BF16: return 3.3895313892515355e38;
    case HK_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}

/* The low bits of an integer, two's complement, as one element of t. */
static void store_int_bits(hk_dtype t, void *dst, uint64_t bits)
{
    switch (hk_dtype_size(t)) {
    case 1: { uint8_t x = (uint8_t)bits; memcpy(dst, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)bits; memcpy(dst, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)bits; memcpy(dst, &x, 4); break; }
    default: memcpy(dst, &bits, 8); break;
    }
}

/* Narrow floats go through float, rounding to nearest even at each step.
 * Overflow is a finite f that becomes infinity; infinities and NaN pass. */
static int store_float(hk_dtype t, void *dst, double f)
{
    if (t == HK_F64) {
        memcpy(dst, &f, 8);
        return 0;
    }
    float g = (float)f;
    int overflow = isinf(g) && !isinf(f);
    uint16_t h = 0;
    if (t == HK_F16) {
        h = hkc_f32_to_f16(g);
        /* Through float, a double just under f16's rounding edge (65520) can
         * round up to it and on to infinity: it belongs to the largest f16. */
        if ((h & 0x7fff) == 0x7c00 && fabs(f) < 65520.0)
            h = (uint16_t)((h & 0x8000) | 0x7bff);
        overflow = overflow || ((h & 0x7fff) == 0x7c00 && !isinf(f));
    } else if (t == HK_BF16) {
        h = hkc_f32_to_bf16(g);
        overflow = overflow || ((h & 0x7fff) == 0x7f80 && !isinf(f));
    }
    if (overflow)
        return HK_ERANGE;
    if (t == HK_F32)
        memcpy(dst, &g, 4);
    else
        memcpy(dst, &h, 2);
    return 0;
}

HK_API int hk_dtype_store_i64(hk_dtype t, void *dst, int64_t v)
{
    int64_t lo;
    uint64_t hi;
    if (!dst || (unsigned)t >= HK_DTYPE_COUNT)
        return HK_EINVAL;
    if (is_float_dtype(t))
        return store_float(t, dst, (double)v);
    if (hk_dtype_int_range(t, &lo, &hi) != 0)
        return HK_EINVAL; /* a block dtype (q4_0, ...) has no one-element store */
    if (v < lo || (v > 0 && (uint64_t)v > hi))
        return HK_ERANGE;
    store_int_bits(t, dst, (uint64_t)v);
    return 0;
}

HK_API int hk_dtype_store_u64(hk_dtype t, void *dst, uint64_t v)
{
    int64_t lo;
    uint64_t hi;
    if (!dst || (unsigned)t >= HK_DTYPE_COUNT)
        return HK_EINVAL;
    if (is_float_dtype(t))
        return store_float(t, dst, (double)v);
    if (hk_dtype_int_range(t, &lo, &hi) != 0)
        return HK_EINVAL;
    if (v > hi)
        return HK_ERANGE;
    store_int_bits(t, dst, v);
    return 0;
}

HK_API int hk_dtype_store_f64(hk_dtype t, void *dst, double x)
{
    if (!dst || (unsigned)t >= HK_DTYPE_COUNT)
        return HK_EINVAL;
    if (is_float_dtype(t))
        return store_float(t, dst, x);
    if (!is_int_dtype(t) || !isfinite(x) || x != floor(x))
        return HK_EINVAL;
    /* -2^63 and 2^64 are exact doubles: compare before converting. */
    if (x < 0)
        return x < -9223372036854775808.0 ? HK_ERANGE : hk_dtype_store_i64(t, dst, (int64_t)x);
    return x >= 18446744073709551616.0 ? HK_ERANGE : hk_dtype_store_u64(t, dst, (uint64_t)x);
}

/* An integer element as 64 bits: sign-extended for signed dtypes. */
static uint64_t load_int_bits(hk_dtype t, const void *src)
{
    if (!src)
        return 0;
    switch (t) {
    case HK_I8: { int8_t v; memcpy(&v, src, 1); return (uint64_t)(int64_t)v; }
    case HK_I16: { int16_t v; memcpy(&v, src, 2); return (uint64_t)(int64_t)v; }
    case HK_I32: { int32_t v; memcpy(&v, src, 4); return (uint64_t)(int64_t)v; }
    case HK_U8: { uint8_t v; memcpy(&v, src, 1); return v; }
    case HK_U16: { uint16_t v; memcpy(&v, src, 2); return v; }
    case HK_U32: { uint32_t v; memcpy(&v, src, 4); return v; }
    case HK_I64:
    case HK_U64: { uint64_t v; memcpy(&v, src, 8); return v; }
    default: return 0;
    }
}

HK_API double hk_dtype_load_f64(hk_dtype t, const void *src)
{
    if (!src)
        return 0;
    switch (t) {
    case HK_F16: { uint16_t v; memcpy(&v, src, 2); return hkc_f16_to_f32(v); }
    case HK_BF16: { uint16_t v; memcpy(&v, src, 2); return hkc_bf16_to_f32(v); }
    case HK_F32: { float v; memcpy(&v, src, 4); return v; }
    case HK_F64: { double v; memcpy(&v, src, 8); return v; }
    case HK_U64: return (double)load_int_bits(t, src);
    default: return (double)(int64_t)load_int_bits(t, src); /* 0 when invalid */
    }
}

HK_API int64_t hk_dtype_load_i64(hk_dtype t, const void *src)
{
    return (int64_t)load_int_bits(t, src);
}

HK_API uint64_t hk_dtype_load_u64(hk_dtype t, const void *src)
{
    return load_int_bits(t, src);
}
