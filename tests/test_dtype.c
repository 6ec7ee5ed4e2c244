/* dtype names and sizes, memory mode and origin names, and the f16/bf16
 * conversions (exhaustive over every 16-bit pattern).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

static uint32_t bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return x;
}

static float from_bits(uint32_t x)
{
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static void test_names(void)
{
    static const struct {
        const char *name;
        hk_dtype t;
        size_t size;
    } want[] = {
        {"f16", HK_F16, 2}, {"bf16", HK_BF16, 2}, {"f32", HK_F32, 4}, {"f64", HK_F64, 8},
        {"i8", HK_I8, 1},   {"i16", HK_I16, 2},   {"i32", HK_I32, 4}, {"i64", HK_I64, 8},
        {"u8", HK_U8, 1},   {"u16", HK_U16, 2},   {"u32", HK_U32, 4}, {"u64", HK_U64, 8},
    };
    int good = 1;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        hk_dtype t = HK_DTYPE_COUNT;
        const char *n = hk_dtype_name(want[i].t);
        if (!n || strcmp(n, want[i].name) || hk_dtype_size(want[i].t) != want[i].size ||
            hk_dtype_parse(want[i].name, &t) != 0 || t != want[i].t) {
            tap_diag("dtype %s wrong", want[i].name);
            good = 0;
        }
    }
    tap_ok(good, "every dtype: name, size and parse agree");

    hk_dtype t = HK_F32;
    tap_ok(hk_dtype_name(HK_DTYPE_COUNT) == NULL && hk_dtype_name((hk_dtype)-1) == NULL,
           "invalid dtype has no name");
    tap_ok(hk_dtype_size(HK_DTYPE_COUNT) == 0 && hk_dtype_size((hk_dtype)99) == 0,
           "invalid dtype has size 0");
    tap_ok(hk_dtype_parse("float", &t) == HK_EINVAL && hk_dtype_parse("F32", &t) == HK_EINVAL &&
               hk_dtype_parse("", &t) == HK_EINVAL && hk_dtype_parse(NULL, &t) == HK_EINVAL &&
               t == HK_F32,
           "bad dtype names are refused and leave *out alone");

    static const char *const modes[] = {"device", "managed", "host", "mmap"};
    good = 1;
    for (int i = 0; i < 4; i++) {
        hk_mem_mode m = HK_MEM_MODE_COUNT;
        const char *n = hk_mem_mode_name((hk_mem_mode)i);
        if (!n || strcmp(n, modes[i]) || hk_mem_mode_parse(modes[i], &m) || m != (hk_mem_mode)i)
            good = 0;
    }
    hk_mem_mode m;
    tap_ok(good && hk_mem_mode_name(HK_MEM_MODE_COUNT) == NULL &&
               hk_mem_mode_parse("pinned", &m) == HK_EINVAL &&
               hk_mem_mode_parse(NULL, &m) == HK_EINVAL,
           "memory modes: names, parse, invalid");

    static const char *const origins[] = {"jit", "cache", "memory", "aot", "file"};
    good = 1;
    for (int i = 0; i < 5; i++) {
        const char *n = hk_code_origin_name((hk_code_origin)i);
        if (!n || strcmp(n, origins[i]))
            good = 0;
    }
    tap_ok(good && hk_code_origin_name((hk_code_origin)5) == NULL, "code origin names");
}

static int is_f16_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
static int is_bf16_nan(uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x7f); }

static void test_f16(void)
{
    /* Every pattern: f16 -> f32 is exact, and back gives the same bits;
     * NaN stays NaN (quiet, same sign). */
    int bad = 0, nan_bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = hkc_f16_to_f32((uint16_t)h);
        uint16_t back = hkc_f32_to_f16(f);
        if (is_f16_nan((uint16_t)h)) {
            if (!isnan(f) || !is_f16_nan(back) || !(back & 0x200) || (back & 0x8000) != (h & 0x8000))
                nan_bad++;
        } else if (back != h) {
            if (bad++ < 5)
                tap_diag("f16 %04x -> %a -> %04x", h, f, back);
        }
    }
    tap_ok(bad == 0, "f16 -> f32 -> f16 round trips all 63490 non-NaN patterns");
    tap_ok(nan_bad == 0, "f16 NaN patterns stay quiet NaN with their sign");
    tap_ok(isnan(hkc_f16_to_f32(0x7c01)) && (bits(hkc_f16_to_f32(0x7c01)) & 0x400000),
           "signalling f16 NaN becomes a quiet f32 NaN");

    /* Known values. */
    tap_ok(hkc_f16_to_f32(0x3c00) == 1.0f && hkc_f16_to_f32(0xc000) == -2.0f &&
               hkc_f16_to_f32(0x7bff) == 65504.0f && hkc_f16_to_f32(0x0001) == ldexpf(1, -24) &&
               hkc_f16_to_f32(0x03ff) == ldexpf(1023, -24) && hkc_f16_to_f32(0x0400) == ldexpf(1, -14),
           "f16 decode: 1, -2, max, smallest subnormal, largest subnormal, smallest normal");
    tap_ok(hkc_f16_to_f32(0x7c00) == INFINITY && hkc_f16_to_f32(0xfc00) == -INFINITY &&
               bits(hkc_f16_to_f32(0x8000)) == 0x80000000u,
           "f16 decode: +-Inf, -0");

    /* Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10. */
    float one_ulp = ldexpf(1, -10);
    tap_ok(hkc_f32_to_f16(1.0f + one_ulp / 2) == 0x3c00, "f16 tie 1+half ulp rounds down to even");
    tap_ok(hkc_f32_to_f16(1.0f + one_ulp * 1.5f) == 0x3c02, "f16 tie 1+1.5 ulp rounds up to even");
    tap_ok(hkc_f32_to_f16(nextafterf(1.0f + one_ulp / 2, 2.0f)) == 0x3c01,
           "f16 just above a tie rounds up");
    tap_ok(hkc_f32_to_f16(-(1.0f + one_ulp / 2)) == 0xbc00, "f16 negative tie");

    /* Overflow: 65504 is the max; 65520 is the tie between it and 65536
     * (which is Inf), and rounds to even, i.e. to Inf. */
    tap_ok(hkc_f32_to_f16(65504.0f) == 0x7bff && hkc_f32_to_f16(65519.0f) == 0x7bff,
           "f16 max and just under the overflow tie");
    tap_ok(hkc_f32_to_f16(65520.0f) == 0x7c00 && hkc_f32_to_f16(1e10f) == 0x7c00 &&
               hkc_f32_to_f16(-1e10f) == 0xfc00 && hkc_f32_to_f16(3.4e38f) == 0x7c00,
           "f16 overflow to +-Inf");
    tap_ok(hkc_f32_to_f16(INFINITY) == 0x7c00 && hkc_f32_to_f16(-INFINITY) == 0xfc00,
           "f16 from +-Inf");
    uint16_t qn = hkc_f32_to_f16(NAN), sn = hkc_f32_to_f16(from_bits(0x7f800001));
    tap_ok(is_f16_nan(qn) && is_f16_nan(sn) && (sn & 0x200) &&
               is_f16_nan(hkc_f32_to_f16(from_bits(0xffc00000))) &&
               (hkc_f32_to_f16(from_bits(0xffc00000)) & 0x8000),
           "f16 from NaN (quiet, signalling with low payload, negative) is quiet NaN");

    /* Subnormals. */
    float tiny = ldexpf(1, -24);
    tap_ok(hkc_f32_to_f16(tiny) == 0x0001 && hkc_f32_to_f16(tiny * 0.5f) == 0x0000 &&
               hkc_f32_to_f16(nextafterf(tiny * 0.5f, 1.0f)) == 0x0001 &&
               hkc_f32_to_f16(tiny * 1.5f) == 0x0002 && hkc_f32_to_f16(tiny * 2.5f) == 0x0002,
           "f16 subnormal rounding: exact, half-tie to 0, above tie, 1.5 and 2.5 ties to even");
    tap_ok(hkc_f32_to_f16(-tiny * 0.5f) == 0x8000 && hkc_f32_to_f16(ldexpf(1, -30)) == 0 &&
               hkc_f32_to_f16(from_bits(0x00000001)) == 0 && hkc_f32_to_f16(-0.0f) == 0x8000,
           "f16 underflow to signed zero, f32 subnormal to zero");
    tap_ok(hkc_f32_to_f16(ldexpf(1023.5f, -24)) == 0x0400 &&
               hkc_f32_to_f16(ldexpf(1023.25f, -24)) == 0x03ff,
           "f16 rounding from subnormal range into the smallest normal");

    /* Against the compiler's own conversion, where it has one. */
#if defined(__FLT16_MAX__)
    {
        uint32_t seed = 12345;
        int diff = 0;
        for (int i = 0; i < 2000000; i++) {
            seed = seed * 1664525u + 1013904223u;
            uint32_t x = seed;
            /* Mostly in and around the f16 range. */
            if (i & 1)
                x = (x & 0x807fffff) | ((uint32_t)(100 + (x >> 24) % 50) << 23);
            float f = from_bits(x);
            if (isnan(f))
                continue;
            _Float16 ref = (_Float16)f;
            uint16_t rb;
            memcpy(&rb, &ref, 2);
            if (rb != hkc_f32_to_f16(f) && diff++ < 5)
                tap_diag("f16 of %a: got %04x want %04x", f, hkc_f32_to_f16(f), rb);
        }
        tap_ok(diff == 0, "f16 agrees with _Float16 on 2M random floats");
    }
#else
    tap_skip("f16 agrees with _Float16", "compiler has no _Float16");
#endif
}

static void test_bf16(void)
{
    int bad = 0, nan_bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = hkc_bf16_to_f32((uint16_t)h);
        uint16_t back = hkc_f32_to_bf16(f);
        if (is_bf16_nan((uint16_t)h)) {
            if (!isnan(f) || !is_bf16_nan(back) || !(back & 0x40) || (back & 0x8000) != (h & 0x8000))
                nan_bad++;
        } else if (back != h || bits(f) != h << 16) {
            if (bad++ < 5)
                tap_diag("bf16 %04x -> %a -> %04x", h, f, back);
        }
    }
    tap_ok(bad == 0, "bf16 -> f32 -> bf16 round trips every non-NaN pattern exactly");
    tap_ok(nan_bad == 0, "bf16 NaN patterns stay quiet NaN with their sign");

    tap_ok(hkc_f32_to_bf16(1.0f) == 0x3f80 && hkc_f32_to_bf16(-2.0f) == 0xc000,
           "bf16 of 1 and -2");
    float ulp = ldexpf(1, -7);
    tap_ok(hkc_f32_to_bf16(1.0f + ulp / 2) == 0x3f80 && hkc_f32_to_bf16(1.0f + ulp * 1.5f) == 0x3f82 &&
               hkc_f32_to_bf16(nextafterf(1.0f + ulp / 2, 2.0f)) == 0x3f81,
           "bf16 ties to even, above tie rounds up");
    tap_ok(hkc_f32_to_bf16(from_bits(0x7f7fffff)) == 0x7f80 &&
               hkc_f32_to_bf16(from_bits(0x7f7f7fff)) == 0x7f7f &&
               hkc_f32_to_bf16(from_bits(0xff7fffff)) == 0xff80,
           "bf16 overflow from near FLT_MAX to +-Inf, just below stays finite");
    tap_ok(hkc_f32_to_bf16(INFINITY) == 0x7f80 && hkc_f32_to_bf16(-INFINITY) == 0xff80,
           "bf16 from +-Inf");
    tap_ok(is_bf16_nan(hkc_f32_to_bf16(NAN)) && is_bf16_nan(hkc_f32_to_bf16(from_bits(0x7f800001))) &&
               is_bf16_nan(hkc_f32_to_bf16(from_bits(0xff800001))) &&
               (hkc_f32_to_bf16(from_bits(0xff800001)) & 0x8000),
           "bf16 from NaN with payload only in the low bits stays NaN");
    tap_ok(hkc_f32_to_bf16(from_bits(0x00008000)) == 0x0000 &&
               hkc_f32_to_bf16(from_bits(0x00018000)) == 0x0002 &&
               hkc_f32_to_bf16(from_bits(0x00010001)) == 0x0001 &&
               hkc_f32_to_bf16(from_bits(0x80008001)) == 0x8001,
           "bf16 subnormals round to nearest even");
    tap_ok(isnan(hkc_bf16_to_f32(0x7f81)) && (bits(hkc_bf16_to_f32(0x7f81)) & 0x400000),
           "signalling bf16 NaN becomes a quiet f32 NaN");
}

int main(void)
{
    tap_init();
    test_names();
    test_f16();
    test_bf16();
    return tap_done();
}
