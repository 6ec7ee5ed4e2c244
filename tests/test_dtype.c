/* dtype names and sizes, memory mode and origin names, the f16/bf16
 * conversions (exhaustive over every 16-bit pattern), and the element codec
 * (hk_dtype_store_* / hk_dtype_load_*) on random values and range edges,
 * against C's own conversions and limits.
 */
#include <float.h>
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


/* ------------------------------------------------------------ element codec */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The limits from <stdint.h>, and the width. */
static const struct {
    hk_dtype t;
    int64_t lo;
    uint64_t hi;
    int bits, is_signed;
} int_limits[] = {
    {HK_I8, INT8_MIN, INT8_MAX, 8, 1},     {HK_I16, INT16_MIN, INT16_MAX, 16, 1},
    {HK_I32, INT32_MIN, INT32_MAX, 32, 1}, {HK_I64, INT64_MIN, INT64_MAX, 64, 1},
    {HK_U8, 0, UINT8_MAX, 8, 0},           {HK_U16, 0, UINT16_MAX, 16, 0},
    {HK_U32, 0, UINT32_MAX, 32, 0},        {HK_U64, 0, UINT64_MAX, 64, 0},
};
#define NLIMITS (sizeof(int_limits) / sizeof(int_limits[0]))

/* The element at p read as its C type, widened: into *s for a signed dtype
 * (returns 1), into *u for an unsigned one (returns 0). */
static int native_int(hk_dtype t, const void *p, int64_t *s, uint64_t *u)
{
    switch (t) {
    case HK_I8: { int8_t x; memcpy(&x, p, 1); *s = x; return 1; }
    case HK_I16: { int16_t x; memcpy(&x, p, 2); *s = x; return 1; }
    case HK_I32: { int32_t x; memcpy(&x, p, 4); *s = x; return 1; }
    case HK_I64: { int64_t x; memcpy(&x, p, 8); *s = x; return 1; }
    case HK_U8: { uint8_t x; memcpy(&x, p, 1); *u = x; return 0; }
    case HK_U16: { uint16_t x; memcpy(&x, p, 2); *u = x; return 0; }
    case HK_U32: { uint32_t x; memcpy(&x, p, 4); *u = x; return 0; }
    default: { uint64_t x; memcpy(&x, p, 8); *u = x; return 0; }
    }
}

/* C's own conversion of the element to double. */
static double native_double(hk_dtype t, const void *p)
{
    int64_t s;
    uint64_t u;
    return native_int(t, p, &s, &u) ? (double)s : (double)u;
}

static int native_is_i64(hk_dtype t, const void *p, int64_t v)
{
    int64_t s;
    uint64_t u;
    return native_int(t, p, &s, &u) ? s == v : v >= 0 && u == (uint64_t)v;
}

static int native_is_u64(hk_dtype t, const void *p, uint64_t v)
{
    int64_t s;
    uint64_t u;
    return native_int(t, p, &s, &u) ? s >= 0 && (uint64_t)s == v : u == v;
}

/* A random 64-bit pattern: anywhere, near a limit of the dtype, or small. */
static uint64_t pick_bits(int64_t lo, uint64_t hi)
{
    uint64_t r = rnd();
    uint64_t jitter = (r >> 60) - 8; /* -8..7, wrapping: sums wrap too, without UB */
    switch (r & 3) {
    case 0: return (uint64_t)lo + jitter;
    case 1: return (hi == UINT64_MAX ? UINT64_MAX - 8 : hi) + jitter;
    case 2: return jitter;
    default: return rnd();
    }
}

static void test_codec_int(void)
{
    int range_ok = 1, bad_i = 0, bad_u = 0, untouched = 1;
    for (size_t d = 0; d < NLIMITS; d++) {
        hk_dtype t = int_limits[d].t;
        int64_t lo = int_limits[d].lo, rlo;
        uint64_t hi = int_limits[d].hi, rhi;
        if (hk_dtype_int_range(t, &rlo, &rhi) != 0 || rlo != lo || rhi != hi)
            range_ok = 0;
        for (int i = 0; i < 20000; i++) {
            uint64_t b = pick_bits(lo, hi);
            unsigned char e[8];
            memset(e, 0xa5, sizeof e);
            /* As a signed value. */
            int64_t sv = (int64_t)b;
            int fits = sv >= lo && (sv < 0 || (uint64_t)sv <= hi);
            int rc = hk_dtype_store_i64(t, e, sv);
            if (fits ? rc != 0 || !native_is_i64(t, e, sv) || hk_dtype_load_i64(t, e) != sv
                     : rc != HK_ERANGE) {
                if (bad_i++ < 5)
                    tap_diag("store_i64(%s, %lld): rc %d", hk_dtype_name(t), (long long)sv, rc);
            }
            if (!fits && e[0] != 0xa5)
                untouched = 0;
            /* As an unsigned value. */
            fits = b <= hi;
            rc = hk_dtype_store_u64(t, e, b);
            if (fits ? rc != 0 || !native_is_u64(t, e, b) || hk_dtype_load_u64(t, e) != b
                     : rc != HK_ERANGE) {
                if (bad_u++ < 5)
                    tap_diag("store_u64(%s, %llu): rc %d", hk_dtype_name(t), (unsigned long long)b, rc);
            }
        }
    }
    tap_ok(range_ok, "hk_dtype_int_range matches <stdint.h> for every integer dtype");
    int64_t lo = 7;
    uint64_t hi = 7;
    tap_ok(hk_dtype_int_range(HK_F32, &lo, &hi) == HK_EINVAL &&
               hk_dtype_int_range(HK_DTYPE_COUNT, &lo, &hi) == HK_EINVAL &&
               hk_dtype_int_range(HK_I8, NULL, &hi) == HK_EINVAL && lo == 7 && hi == 7,
           "hk_dtype_int_range refuses float and invalid dtypes");
    tap_ok(bad_i == 0, "store_i64: 160000 random and edge values stored exactly or HK_ERANGE");
    tap_ok(bad_u == 0, "store_u64: 160000 random and edge values stored exactly or HK_ERANGE");
    tap_ok(untouched, "a refused store writes nothing");

    /* Signed loads sign-extend, unsigned ones do not; u64 wraps through i64. */
    unsigned char ff[8];
    memset(ff, 0xff, sizeof ff);
    tap_ok(hk_dtype_load_i64(HK_I8, ff) == -1 && hk_dtype_load_i64(HK_U16, ff) == 65535 &&
               hk_dtype_load_i64(HK_U64, ff) == -1 && hk_dtype_load_u64(HK_U64, ff) == UINT64_MAX &&
               hk_dtype_load_u64(HK_I32, ff) == UINT64_MAX && hk_dtype_load_u64(HK_U32, ff) == UINT32_MAX,
           "integer loads: sign- and zero-extension, two's complement between i64 and u64");
}

/* f64 into integer dtypes: integral values only, within [-2^(bits-1),
 * 2^(bits-1)) or [0, 2^bits), powers of two that doubles hold exactly. */
static void test_codec_f64_to_int(void)
{
    int bad = 0;
    for (size_t d = 0; d < NLIMITS; d++) {
        hk_dtype t = int_limits[d].t;
        int64_t lo = int_limits[d].lo;
        uint64_t hi = int_limits[d].hi;
        int bits = int_limits[d].bits;
        double min = int_limits[d].is_signed ? -ldexp(1, bits - 1) : 0;
        double end = ldexp(1, bits - int_limits[d].is_signed);
        const double edges[] = {
            (double)lo, (double)hi, (double)lo - 1, (double)hi + 1, nextafter((double)lo, -INFINITY),
            nextafter((double)hi, INFINITY), nextafter((double)hi, 0), 9223372036854775808.0,
            -9223372036854775808.0, 18446744073709551616.0, nextafter(-9223372036854775808.0, -INFINITY),
            nextafter(18446744073709551616.0, 0), 0.5, -0.5, 1e300, -1e300, NAN, INFINITY, -INFINITY,
            -0.0, 2.5,
        };
        for (int i = 0; i < 20000 + (int)(sizeof(edges) / sizeof(edges[0])); i++) {
            double x;
            if (i < (int)(sizeof(edges) / sizeof(edges[0])))
                x = edges[i];
            else if (i & 1) /* integral, around the dtype's range */
                x = (double)(int64_t)pick_bits(lo, hi) * ((rnd() & 1) ? 1.0 : 1.0 + 0x1p-20);
            else /* anything, fractions included */
                x = ldexp((double)(int64_t)rnd(), -(int)(rnd() % 70));
            unsigned char e[8];
            memset(e, 0xa5, sizeof e);
            int want = !isfinite(x) || x != floor(x)     ? HK_EINVAL
                       : x < min || x >= end                 ? HK_ERANGE
                                                                 : 0;
            int rc = hk_dtype_store_f64(t, e, x);
            if (rc != want || (rc == 0 && native_double(t, e) != x) ||
                (rc != 0 && e[0] != 0xa5)) {
                if (bad++ < 5)
                    tap_diag("store_f64(%s, %.17g): rc %d, want %d", hk_dtype_name(t), x, rc, want);
            }
        }
    }
    tap_ok(bad == 0, "store_f64 into integer dtypes: exact, HK_EINVAL for fractions, NaN and "
           "infinities, HK_ERANGE past the limits (2^63, 2^64 and their neighbours)");
}

/* A random double: mostly around the narrow floats' ranges, some anywhere. */
static double pick_double(void)
{
    uint64_t r = rnd();
    double m = (double)(r >> 11) * 0x1p-53 + 1.0; /* [1, 2) */
    int e = (int)(rnd() % 300) - 150;
    if ((r & 7) == 0)
        e = (int)(rnd() % 2000) - 1000;
    double x = ldexp(m, e);
    return (r & 8) ? -x : x;
}

/* Float dtypes: through float with C's conversion, then (f16) the compiler's
 * _Float16 or (bf16) the bfloat16 conversion tested above; a finite value
 * that becomes infinity is HK_ERANGE, except that a double below 65520 which
 * float rounds up to it is the largest f16. */
static void test_codec_floats(void)
{
    const double edge[] = {65504.0, 65519.999, 65520.0, nextafter(65520.0, 0), -65519.9999,
                           (double)FLT_MAX, nextafter((double)FLT_MAX, INFINITY),
                           (double)FLT_MAX * (1 + 0x1p-25), 3.3895313892515355e38,
                           3.3961e38, INFINITY, -INFINITY, NAN, 0.0, -0.0, 1e-50};
    const int nedge = (int)(sizeof(edge) / sizeof(edge[0]));
    int bad64 = 0, bad32 = 0, bad16 = 0, badb = 0;
    for (int i = 0; i < 400000; i++) {
        double x = i < nedge ? edge[i] : pick_double();
        unsigned char e[8];
        memset(e, 0xa5, sizeof e);

        double y;
        int rc = hk_dtype_store_f64(HK_F64, e, x);
        memcpy(&y, e, 8);
        if (rc || memcmp(&y, &x, 8) || !(hk_dtype_load_f64(HK_F64, e) == x || isnan(x)))
            bad64++;

        float g = (float)x, gy;
        int over = isinf(g) && !isinf(x);
        rc = hk_dtype_store_f64(HK_F32, e, x);
        memcpy(&gy, e, 4);
        if (over ? rc != HK_ERANGE : rc != 0 || memcmp(&gy, &g, 4) ||
                                         !(hk_dtype_load_f64(HK_F32, e) == (double)g || isnan(x))) {
            if (bad32++ < 5)
                tap_diag("f32 of %.17g: rc %d", x, rc);
        }

        uint16_t want, got;
#if defined(__FLT16_MAX__)
        _Float16 h = (_Float16)g;
        memcpy(&want, &h, 2);
#else
        want = hk_f32_to_f16(g);
#endif
        if ((want & 0x7fff) == 0x7c00 && fabs(x) < 65520.0)
            want = (uint16_t)((want & 0x8000) | 0x7bff);
        over = (want & 0x7fff) == 0x7c00 && !isinf(x);
        memset(e, 0xa5, sizeof e);
        rc = hk_dtype_store_f64(HK_F16, e, x);
        memcpy(&got, e, 2);
        if (over ? rc != HK_ERANGE || got != 0xa5a5
                 : rc != 0 || !(got == want || (isnan(x) && (got & 0x7fff) > 0x7c00)) ||
                       !(hk_dtype_load_f64(HK_F16, e) == (double)hk_f16_to_f32(got) || isnan(x))) {
            if (bad16++ < 5)
                tap_diag("f16 of %.17g: rc %d got %04x want %04x", x, rc, got, want);
        }

        want = hk_f32_to_bf16(g);
        over = (want & 0x7fff) == 0x7f80 && !isinf(x);
        rc = hk_dtype_store_f64(HK_BF16, e, x);
        memcpy(&got, e, 2);
        if (over ? rc != HK_ERANGE : rc != 0 || got != want) {
            if (badb++ < 5)
                tap_diag("bf16 of %.17g: rc %d got %04x want %04x", x, rc, got, want);
        }
    }
    tap_ok(bad64 == 0, "store_f64 to f64 keeps every bit, NaN included");
    tap_ok(bad32 == 0, "store_f64 to f32 agrees with (float) on 400000 values; overflow is HK_ERANGE");
    tap_ok(bad16 == 0, "store_f64 to f16 agrees with _Float16 through float; 65519.999 is 65504, "
           "overflow is HK_ERANGE and writes nothing");
    tap_ok(badb == 0, "store_f64 to bf16 agrees with hk_f32_to_bf16 through float; overflow is HK_ERANGE");

    /* Integers into float dtypes follow the same rules as their double. */
    unsigned char e[8];
    uint16_t h;
    tap_ok(hk_dtype_store_i64(HK_F16, e, 65504) == 0 && (memcpy(&h, e, 2), h == 0x7bff) &&
               hk_dtype_store_i64(HK_F16, e, 65520) == HK_ERANGE &&
               hk_dtype_store_u64(HK_F16, e, UINT64_MAX) == HK_ERANGE &&
               hk_dtype_store_u64(HK_F32, e, UINT64_MAX) == 0 &&
               hk_dtype_load_f64(HK_F32, e) == 18446744073709551616.0 &&
               hk_dtype_store_i64(HK_F64, e, INT64_MIN) == 0 &&
               hk_dtype_load_f64(HK_F64, e) == -9223372036854775808.0,
           "integers into float dtypes: f16 max, f16 overflow, u64 max in f32, i64 min in f64");

    /* Loads of every integer dtype as double: C's conversion. */
    int badl = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t b = rnd();
        hk_dtype t = int_limits[i % NLIMITS].t;
        if (hk_dtype_load_f64(t, &b) != native_double(t, &b))
            badl++;
    }
    tap_ok(badl == 0, "hk_dtype_load_f64 of integer dtypes agrees with C's conversion");

    double one = 1;
    tap_ok(hk_dtype_store_f64(HK_DTYPE_COUNT, e, 1) == HK_EINVAL &&
               hk_dtype_store_i64((hk_dtype)-1, e, 1) == HK_EINVAL &&
               hk_dtype_store_u64(HK_F32, NULL, 1) == HK_EINVAL &&
               hk_dtype_load_f64(HK_DTYPE_COUNT, &one) == 0 && hk_dtype_load_i64(HK_F64, &one) == 0 &&
               hk_dtype_load_u64(HK_I8, NULL) == 0,
           "invalid dtypes and NULL pointers: HK_EINVAL, loads read 0");
}

/* ggml's block formats: block sizes in elements and bytes as ggml's
 * block_* structs have them (ggml-common.h). */
static void test_quantized(void)
{
    static const struct {
        const char *name;
        hk_dtype t;
        size_t block, size;
    } want[] = {
        {"q4_0", HK_Q4_0, 32, 18},   {"q4_1", HK_Q4_1, 32, 20},   {"q5_0", HK_Q5_0, 32, 22},
        {"q5_1", HK_Q5_1, 32, 24},   {"q8_0", HK_Q8_0, 32, 34},   {"q8_1", HK_Q8_1, 32, 36},
        {"q2_K", HK_Q2_K, 256, 84},  {"q3_K", HK_Q3_K, 256, 110}, {"q4_K", HK_Q4_K, 256, 144},
        {"q5_K", HK_Q5_K, 256, 176}, {"q6_K", HK_Q6_K, 256, 210}, {"q8_K", HK_Q8_K, 256, 292},
        {"q4_0r", HK_Q4_0R, 256, 144}, /* hipkit's repacked q4_0 */
    };
    int good = 1;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        hk_dtype t = HK_DTYPE_COUNT;
        const char *n = hk_dtype_name(want[i].t);
        size_t bytes = 0;
        if (!n || strcmp(n, want[i].name) || hk_dtype_size(want[i].t) != want[i].size ||
            hk_dtype_block(want[i].t) != want[i].block || hk_dtype_parse(n, &t) || t != want[i].t ||
            hkc_dtype_bytes(t, want[i].block * 3, &bytes) || bytes != want[i].size * 3 ||
            hkc_dtype_bytes(t, want[i].block + 1, &bytes) != HK_EINVAL) {
            tap_diag("quantized dtype %s wrong", want[i].name);
            good = 0;
        }
    }
    tap_ok(good, "quantized dtypes: name, block of elements, block bytes, whole blocks only");
    tap_ok(hk_dtype_block(HK_F32) == 1 && hk_dtype_block(HK_U8) == 1 && hk_dtype_block(HK_DTYPE_COUNT) == 0,
           "plain dtypes are blocks of one, an invalid one has none");
    /* A block has no one-value store: before, the integer stores compared
     * against an unset range and wrote 8 bytes of an 18-byte block. */
    hk_dtype q;
    unsigned char blk[32];
    memset(blk, 0xa5, sizeof blk);
    int64_t lo = 7;
    uint64_t hi = 9;
    int stores = hk_dtype_parse("q4_0", &q) == 0 && hk_dtype_store_i64(q, blk, 1) == HK_EINVAL &&
                 hk_dtype_store_u64(q, blk, 1) == HK_EINVAL && hk_dtype_store_f64(q, blk, 1.0) == HK_EINVAL &&
                 hk_dtype_int_range(q, &lo, &hi) == HK_EINVAL && lo == 7 && hi == 9;
    for (size_t i = 0; i < sizeof blk; i++)
        stores = stores && blk[i] == 0xa5;
    tap_ok(stores, "a block dtype refuses one-value stores and its integer range, writing nothing");
}

int main(void)
{
    tap_init();
    test_names();
    test_quantized();
    test_f16();
    test_bf16();
    test_codec_int();
    test_codec_f64_to_int();
    test_codec_floats();
    return tap_done();
}
