/* Element types, memory modes and code origins by name, and the f16/bf16
 * conversions the argument packer and the host backend use. */
#include <string.h>

#include "internal.h"

/* size is of one element, or of one block of `block` elements for ggml's
 * quantized formats (their layouts: docs/families/quantized.md); align is
 * what a block's widest field needs (its f16 or f32 scales). */
static const struct {
    const char *name;
    size_t size, block, align;
} dtypes[HK_DTYPE_COUNT] = {
    [HK_F16] = {"f16", 2, 1, 2}, [HK_BF16] = {"bf16", 2, 1, 2},
    [HK_F32] = {"f32", 4, 1, 4}, [HK_F64] = {"f64", 8, 1, 8},
    [HK_I8] = {"i8", 1, 1, 1},   [HK_I16] = {"i16", 2, 1, 2},
    [HK_I32] = {"i32", 4, 1, 4}, [HK_I64] = {"i64", 8, 1, 8},
    [HK_U8] = {"u8", 1, 1, 1},   [HK_U16] = {"u16", 2, 1, 2},
    [HK_U32] = {"u32", 4, 1, 4}, [HK_U64] = {"u64", 8, 1, 8},
    [HK_Q4_0] = {"q4_0", 18, 32, 2},   [HK_Q4_1] = {"q4_1", 20, 32, 2},
    [HK_Q5_0] = {"q5_0", 22, 32, 2},   [HK_Q5_1] = {"q5_1", 24, 32, 2},
    [HK_Q8_0] = {"q8_0", 34, 32, 2},   [HK_Q8_1] = {"q8_1", 36, 32, 2},
    [HK_Q2_K] = {"q2_K", 84, 256, 2},  [HK_Q3_K] = {"q3_K", 110, 256, 2},
    [HK_Q4_K] = {"q4_K", 144, 256, 2}, [HK_Q5_K] = {"q5_K", 176, 256, 2},
    [HK_Q6_K] = {"q6_K", 210, 256, 2}, [HK_Q8_K] = {"q8_K", 292, 256, 4},
    [HK_Q4_0R] = {"q4_0r", 144, 256, 2},
};

static const char *const mem_modes[HK_MEM_MODE_COUNT] = {
    [HK_MEM_DEVICE] = "device",
    [HK_MEM_MANAGED] = "managed",
    [HK_MEM_HOST] = "host",
    [HK_MEM_MMAP] = "mmap",
};

static const char *const origins[] = {
    [HK_ORIGIN_JIT] = "jit",
    [HK_ORIGIN_CACHE] = "cache",
    [HK_ORIGIN_MEMORY] = "memory",
    [HK_ORIGIN_AOT] = "aot",
    [HK_ORIGIN_FILE] = "file",
};

const char *hk_dtype_name(hk_dtype t)
{
    /* The enum may be unsigned: compare as unsigned so a negative value
     * stored in it is rejected too. */
    if ((unsigned)t >= HK_DTYPE_COUNT)
        return NULL;
    return dtypes[t].name;
}

size_t hk_dtype_size(hk_dtype t)
{
    if ((unsigned)t >= HK_DTYPE_COUNT)
        return 0;
    return dtypes[t].size;
}

size_t hk_dtype_block(hk_dtype t)
{
    if ((unsigned)t >= HK_DTYPE_COUNT)
        return 0;
    return dtypes[t].block;
}

size_t hkc_dtype_align(hk_dtype t)
{
    if ((unsigned)t >= HK_DTYPE_COUNT)
        return 1;
    return dtypes[t].align;
}

int hkc_dtype_bytes(hk_dtype t, size_t count, size_t *bytes)
{
    if ((unsigned)t >= HK_DTYPE_COUNT || count % dtypes[t].block)
        return HK_EINVAL;
    size_t blocks = count / dtypes[t].block;
    if (blocks > SIZE_MAX / dtypes[t].size)
        return HK_ERANGE;
    *bytes = blocks * dtypes[t].size;
    return 0;
}

int hk_dtype_parse(const char *name, hk_dtype *out)
{
    if (!name || !out)
        return HK_EINVAL;
    for (int i = 0; i < HK_DTYPE_COUNT; i++) {
        if (strcmp(name, dtypes[i].name) == 0) {
            *out = (hk_dtype)i;
            return 0;
        }
    }
    return HK_EINVAL;
}

const char *hk_mem_mode_name(hk_mem_mode m)
{
    if ((unsigned)m >= HK_MEM_MODE_COUNT)
        return NULL;
    return mem_modes[m];
}

int hk_mem_mode_parse(const char *name, hk_mem_mode *out)
{
    if (!name || !out)
        return HK_EINVAL;
    for (int i = 0; i < HK_MEM_MODE_COUNT; i++) {
        if (strcmp(name, mem_modes[i]) == 0) {
            *out = (hk_mem_mode)i;
            return 0;
        }
    }
    return HK_EINVAL;
}

const char *hk_code_origin_name(hk_code_origin o)
{
    if ((unsigned)o >= sizeof(origins) / sizeof(origins[0]))
        return NULL;
    return origins[o];
}

/* ------------------------------------------------------ half precision */

static uint32_t f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    return x;
}

static float bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

/* Drops the low `shift` bits of v, rounding to nearest, ties to even. */
static uint32_t round_shift(uint32_t v, unsigned shift)
{
    uint32_t kept = v >> shift;
    uint32_t rest = v & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++;
    return kept;
}

uint16_t hkc_f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t exp = (x >> 23) & 0xff;
    uint32_t mant = x & 0x7fffff;

    if (exp == 0xff) /* Inf, or NaN made quiet keeping the top payload bits */
        return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));

    int e = (int)exp - 127 + 15; /* biased f16 exponent */
    if (e >= 31)
        return sign | 0x7c00;
    if (e <= 0) {
        /* f16 subnormal (or zero): the value in units of 2^-24 is
         * (1.mant) * 2^(e - 1 + 10), i.e. the 24-bit significand shifted
         * right by 14 - e. Below half the smallest subnormal it is zero;
         * f32 subnormals (exp 0) land here too and round to zero. */
        if (e < -10)
            return sign;
        /* A carry out of the subnormal range yields the smallest normal,
         * which is the right encoding. */
        return (uint16_t)(sign | round_shift(mant | 0x800000, (unsigned)(14 - e)));
    }
    /* A carry out of the mantissa bumps the exponent, up to Inf: correct. */
    return (uint16_t)(sign | round_shift(((uint32_t)e << 23) | mant, 13));
}

float hkc_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;

    if (exp == 0x1f)
        return bits_f32(sign | 0x7f800000 | (mant ? 0x400000 | (mant << 13) : 0));
    if (exp == 0) {
        if (!mant)
            return bits_f32(sign);
        /* Subnormal: normalise into an f32 normal. */
        uint32_t e = 127 - 15 + 1;
        while (!(mant & 0x400)) {
            mant <<= 1;
            e--;
        }
        return bits_f32(sign | (e << 23) | ((mant & 0x3ff) << 13));
    }
    return bits_f32(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

uint16_t hkc_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffff) > 0x7f800000) /* NaN: quiet, keep sign and payload top */
        return (uint16_t)((x >> 16) | 0x40);
    /* Same exponent range as f32, so only the mantissa rounds; a carry
     * reaches Inf exactly when the value overflows. Subnormals need no
     * special case. */
    return (uint16_t)round_shift(x, 16);
}

float hkc_bf16_to_f32(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    if ((x & 0x7fffffff) > 0x7f800000)
        x |= 0x400000;
    return bits_f32(x);
}

HK_API uint16_t hk_f32_to_f16(float f) { return hkc_f32_to_f16(f); }
HK_API float hk_f16_to_f32(uint16_t h) { return hkc_f16_to_f32(h); }
HK_API uint16_t hk_f32_to_bf16(float f) { return hkc_f32_to_bf16(f); }
HK_API float hk_bf16_to_f32(uint16_t h) { return hkc_bf16_to_f32(h); }
