/* Parameter-list parsing, C layout, HIP source scanning and argument packing. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "int_expr.h"
#include "internal.h"
#include "tap.h"


static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int contains(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

/* ------------------------------------------------------------ parsing */

typedef struct type_case {
    const char *text;
    const char *type; /* normalised */
    const char *name;
    hk_param_kind kind;
    hk_dtype dtype;
    int is_const, is_bool;
    uint32_t size;
} type_case;

#define S HK_PARAM_SCALAR
#define P HK_PARAM_POINTER
#define NONE HK_DTYPE_COUNT

static const type_case type_cases[] = {
    {"bool b", "bool", "b", S, HK_U8, 0, 1, 1},
    {"_Bool b", "_Bool", "b", S, HK_U8, 0, 1, 1},
    {"char c", "char", "c", S, HK_I8, 0, 0, 1},
    {"signed char c", "signed char", "c", S, HK_I8, 0, 0, 1},
    {"unsigned char c", "unsigned char", "c", S, HK_U8, 0, 0, 1},
    {"char unsigned c", "char unsigned", "c", S, HK_U8, 0, 0, 1},
    {"short s", "short", "s", S, HK_I16, 0, 0, 2},
    {"short int s", "short int", "s", S, HK_I16, 0, 0, 2},
    {"unsigned short s", "unsigned short", "s", S, HK_U16, 0, 0, 2},
    {"int n", "int", "n", S, HK_I32, 0, 0, 4},
    {"signed n", "signed", "n", S, HK_I32, 0, 0, 4},
    {"unsigned n", "unsigned", "n", S, HK_U32, 0, 0, 4},
    {"unsigned int n", "unsigned int", "n", S, HK_U32, 0, 0, 4},
    {"long n", "long", "n", S, HK_I64, 0, 0, 8},
    {"long int n", "long int", "n", S, HK_I64, 0, 0, 8},
    {"unsigned long n", "unsigned long", "n", S, HK_U64, 0, 0, 8},
    {"long long n", "long long", "n", S, HK_I64, 0, 0, 8},
    {"unsigned long long n", "unsigned long long", "n", S, HK_U64, 0, 0, 8},
    {"long unsigned long int n", "long unsigned long int", "n", S, HK_U64, 0, 0, 8},
    {"int8_t v", "int8_t", "v", S, HK_I8, 0, 0, 1},
    {"int16_t v", "int16_t", "v", S, HK_I16, 0, 0, 2},
    {"int32_t v", "int32_t", "v", S, HK_I32, 0, 0, 4},
    {"int64_t v", "int64_t", "v", S, HK_I64, 0, 0, 8},
    {"uint8_t v", "uint8_t", "v", S, HK_U8, 0, 0, 1},
    {"uint16_t v", "uint16_t", "v", S, HK_U16, 0, 0, 2},
    {"uint32_t v", "uint32_t", "v", S, HK_U32, 0, 0, 4},
    {"uint64_t v", "uint64_t", "v", S, HK_U64, 0, 0, 8},
    {"size_t n", "size_t", "n", S, HK_U64, 0, 0, 8},
    {"ssize_t n", "ssize_t", "n", S, HK_I64, 0, 0, 8},
    {"ptrdiff_t d", "ptrdiff_t", "d", S, HK_I64, 0, 0, 8},
    {"intptr_t d", "intptr_t", "d", S, HK_I64, 0, 0, 8},
    {"uintptr_t d", "uintptr_t", "d", S, HK_U64, 0, 0, 8},
    {"float a", "float", "a", S, HK_F32, 0, 0, 4},
    {"double a", "double", "a", S, HK_F64, 0, 0, 8},
    {"half h", "half", "h", S, HK_F16, 0, 0, 2},
    {"__half h", "__half", "h", S, HK_F16, 0, 0, 2},
    {"_Float16 h", "_Float16", "h", S, HK_F16, 0, 0, 2},
    {"hip_bfloat16 h", "hip_bfloat16", "h", S, HK_BF16, 0, 0, 2},
    {"__hip_bfloat16 h", "__hip_bfloat16", "h", S, HK_BF16, 0, 0, 2},
    {"__bf16 h", "__bf16", "h", S, HK_BF16, 0, 0, 2},
    {"bfloat16 h", "bfloat16", "h", S, HK_BF16, 0, 0, 2},
    /* unnamed */
    {"float", "float", "", S, HK_F32, 0, 0, 4},
    {"unsigned long long", "unsigned long long", "", S, HK_U64, 0, 0, 8},
    {"size_t", "size_t", "", S, HK_U64, 0, 0, 8},
    {"const float *", "const float *", "", P, HK_F32, 1, 0, 8},
    /* a typedef name used as a parameter name */
    {"int half", "int", "half", S, HK_I32, 0, 0, 4},
    /* qualifiers */
    {"const int n", "int", "n", S, HK_I32, 0, 0, 4},
    {"volatile int n", "int", "n", S, HK_I32, 0, 0, 4},
    {"const float* __restrict__ x", "const float *", "x", P, HK_F32, 1, 0, 8},
    {"const float *__restrict x", "const float *", "x", P, HK_F32, 1, 0, 8},
    {"float * restrict x", "float *", "x", P, HK_F32, 0, 0, 8},
    {"float const *x", "const float *", "x", P, HK_F32, 1, 0, 8},
    {"float *const x", "float *", "x", P, HK_F32, 0, 0, 8},
    {"const float *const __restrict__ x", "const float *", "x", P, HK_F32, 1, 0, 8},
    {"__restrict__ float *x", "float *", "x", P, HK_F32, 0, 0, 8},
    {"volatile unsigned int *flag", "volatile unsigned int *", "flag", P, HK_U32, 0, 0, 8},
    {"const volatile int *p", "const volatile int *", "p", P, HK_I32, 1, 0, 8},
    {"double*y", "double *", "y", P, HK_F64, 0, 0, 8},
    {"__half *h", "__half *", "h", P, HK_F16, 0, 0, 8},
    {"const __hip_bfloat16 *__restrict__ w", "const __hip_bfloat16 *", "w", P, HK_BF16, 1, 0, 8},
    {"uint8_t *q", "uint8_t *", "q", P, HK_U8, 0, 0, 8},
    {"char *s", "char *", "s", P, HK_I8, 0, 0, 8},
    {"bool *mask", "bool *", "mask", P, HK_U8, 0, 0, 8},
    {"const long long *idx", "const long long *", "idx", P, HK_I64, 1, 0, 8},
    /* arrays are pointers */
    {"float x[]", "float *", "x", P, HK_F32, 0, 0, 8},
    {"const int x[16]", "const int *", "x", P, HK_I32, 1, 0, 8},
    /* void and opaque pointers */
    {"void *p", "void *", "p", P, NONE, 0, 0, 8},
    {"const void *p", "const void *", "p", P, NONE, 1, 0, 8},
    {"void*", "void *", "", P, NONE, 0, 0, 8},
    {"MyStruct *s", "MyStruct *", "s", P, NONE, 0, 0, 8},
    {"const struct Node *n", "const struct Node *", "n", P, NONE, 1, 0, 8},
    {"float4 *v", "float4 *", "v", P, NONE, 0, 0, 8},
    {"ns::Thing *t", "ns::Thing *", "t", P, NONE, 0, 0, 8},
    /* comments inside */
    {"const float * /* in */ x // trailing\n", "const float *", "x", P, HK_F32, 1, 0, 8},
};

static void test_types(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof(type_cases) / sizeof(type_cases[0]); i++) {
        const type_case *c = &type_cases[i];
        hkc_signature s;
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        int rc = hkc_signature_parse(c->text, &s, &err);
        int good = rc == 0 && s.count == 1;
        if (good) {
            const hkc_param *p = &s.params[0];
            good = !strcmp(p->type, c->type) && !strcmp(p->name, c->name) && p->kind == c->kind &&
                   p->dtype == c->dtype && p->is_const == c->is_const &&
                   p->is_bool == c->is_bool && p->size == c->size && p->align == c->size &&
                   p->offset == 0 && s.kernarg_size == c->size;
            if (!good)
                tap_diag("'%s': type '%s' name '%s' kind %d dtype %d const %d bool %d size %u "
                         "align %u", c->text, p->type, p->name, p->kind, p->dtype, p->is_const,
                         p->is_bool, p->size, p->align);
        } else {
            tap_diag("'%s': rc %d count %d: %s", c->text, rc, rc ? -1 : s.count, err.data);
        }
        bad += !good;
        if (rc == 0)
            hkc_signature_free(&s);
        hkc_strbuf_free(&err);
    }
    tap_ok(bad == 0, "%zu spellings parse to the right type, name, kind, dtype, const, size",
           sizeof(type_cases) / sizeof(type_cases[0]));
}

static void test_lists(void)
{
    hkc_signature s;
    hkc_strbuf err, f;
    hkc_strbuf_init(&err);
    hkc_strbuf_init(&f);

    static const char *const empty[] = {"", "()", "void", "(void)", "  ( )  ", "/* none */"};
    int good = 1;
    for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
        if (hkc_signature_parse(empty[i], &s, &err) != 0 || s.count != 0 || s.kernarg_size != 0)
            good = 0;
        hkc_signature_free(&s);
    }
    tap_ok(good, "empty lists: \"\", (), void, (void), comment only");
    tap_ok(hkc_signature_parse(NULL, &s, &err) == 0 && s.count == 0, "NULL text is an empty list");

    int rc = hkc_signature_parse("(float a, const float *__restrict__ x, float *y, int n)", &s, &err);
    tap_ok(rc == 0 && s.count == 4, "axpy list with parentheses parses");
    if (rc == 0) {
        hkc_signature_format(&s, &f);
        tap_ok(!strcmp(f.data, "(float a, const float *x, float *y, int n)"), "format: %s", f.data);
        tap_ok(s.params[0].offset == 0 && s.params[1].offset == 8 && s.params[2].offset == 16 &&
                   s.params[3].offset == 24 && s.kernarg_size == 32,
               "axpy offsets 0 8 16 24, size 32");
        hkc_signature c;
        rc = hkc_signature_copy(&s, &c);
        int same = rc == 0 && c.count == s.count && c.kernarg_size == s.kernarg_size;
        for (int i = 0; same && i < s.count; i++)
            same = !strcmp(c.params[i].name, s.params[i].name) &&
                   !strcmp(c.params[i].type, s.params[i].type) &&
                   c.params[i].name != s.params[i].name && c.params[i].offset == s.params[i].offset;
        tap_ok(same, "copy is deep and equal");
        if (rc == 0)
            hkc_signature_free(&c);
        hkc_signature_free(&s);
    }
    hkc_strbuf_clear(&f);

    rc = hkc_signature_parse("const float *, int", &s, &err);
    if (rc == 0) {
        hkc_signature_format(&s, &f);
        hkc_signature_free(&s);
    }
    tap_ok(rc == 0 && !strcmp(f.data, "(const float *, int)"), "format of unnamed params: %s",
           f.data);
    hkc_signature empty_sig = {0};
    hkc_strbuf_clear(&f);
    hkc_signature_format(&empty_sig, &f);
    tap_ok(!strcmp(f.data, "()"), "format of empty list");
    tap_ok(hkc_signature_copy(&empty_sig, &s) == 0 && s.count == 0 && s.params == NULL,
           "copy of empty list");

    hkc_strbuf_free(&err);
    hkc_strbuf_free(&f);
}

/* Layouts against the compiler's own struct layout. */
struct lay1 { char a; double b; int c; uint16_t d; void *e; };
struct lay2 { uint8_t a; uint16_t b; uint8_t c; };
struct lay3 { int a; char b; };
struct lay4 { double a; char b; };
struct lay5 { char a; float *b; short c; char d; int64_t e; bool f; };
struct lay6 { uint16_t a; };

static void check_layout(const char *text, const uint32_t *want_off, const uint32_t *c_off, int n,
                         uint32_t want_size, size_t c_size)
{
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_signature_parse(text, &s, &err);
    int good = rc == 0 && s.count == n && s.kernarg_size == want_size && want_size == c_size;
    for (int i = 0; good && i < n; i++)
        good = s.params[i].offset == want_off[i] && want_off[i] == c_off[i];
    if (!good && rc == 0) {
        for (int i = 0; i < s.count; i++)
            tap_diag("  param %d offset %u", i, s.params[i].offset);
        tap_diag("  size %u (C %zu)", s.kernarg_size, c_size);
    }
    tap_ok(good, "layout of (%s) matches by hand and offsetof", text);
    if (rc == 0)
        hkc_signature_free(&s);
    else
        tap_diag("%s", err.data);
    hkc_strbuf_free(&err);
}

static void test_layouts(void)
{
    {
        /* char@0, double@8, int@16, half@20, void*@24, size 32 */
        const uint32_t o[] = {0, 8, 16, 20, 24};
        const uint32_t c[] = {offsetof(struct lay1, a), offsetof(struct lay1, b),
                              offsetof(struct lay1, c), offsetof(struct lay1, d),
                              offsetof(struct lay1, e)};
        check_layout("char a, double b, int c, half d, void *e", o, c, 5, 32, sizeof(struct lay1));
    }
    {
        const uint32_t o[] = {0, 2, 4};
        const uint32_t c[] = {offsetof(struct lay2, a), offsetof(struct lay2, b),
                              offsetof(struct lay2, c)};
        check_layout("uint8_t a, __bf16 b, bool c", o, c, 3, 6, sizeof(struct lay2));
    }
    {
        const uint32_t o[] = {0, 4};
        const uint32_t c[] = {offsetof(struct lay3, a), offsetof(struct lay3, b)};
        check_layout("int a, char b", o, c, 2, 8, sizeof(struct lay3));
    }
    {
        const uint32_t o[] = {0, 8};
        const uint32_t c[] = {offsetof(struct lay4, a), offsetof(struct lay4, b)};
        check_layout("double a, signed char b", o, c, 2, 16, sizeof(struct lay4));
    }
    {
        const uint32_t o[] = {0, 8, 16, 18, 24, 32};
        const uint32_t c[] = {offsetof(struct lay5, a), offsetof(struct lay5, b),
                              offsetof(struct lay5, c), offsetof(struct lay5, d),
                              offsetof(struct lay5, e), offsetof(struct lay5, f)};
        check_layout("char a, float *b, short c, char d, int64_t e, bool f", o, c, 6, 40,
                     sizeof(struct lay5));
    }
    {
        const uint32_t o[] = {0};
        const uint32_t c[] = {offsetof(struct lay6, a)};
        check_layout("_Float16 a", o, c, 1, 2, sizeof(struct lay6));
    }
}

/* Every vector type by value: element, lanes, size and alignment. */
static void test_vector_types(void)
{
    static const struct {
        const char *base;
        hk_dtype dtype;
    } bases[] = {
        {"char", HK_I8},      {"uchar", HK_U8},         {"short", HK_I16},  {"ushort", HK_U16},
        {"int", HK_I32},      {"uint", HK_U32},         {"long", HK_I64},   {"ulong", HK_U64},
        {"longlong", HK_I64}, {"ulonglong", HK_U64},    {"float", HK_F32},  {"double", HK_F64},
    };
    int bad = 0, count = 0;
    for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
        for (unsigned lanes = 1; lanes <= 4; lanes++) {
            char text[64], type[32];
            snprintf(type, sizeof type, "%s%u", bases[b].base, lanes);
            snprintf(text, sizeof text, "const %s v", type);
            uint32_t esize = (uint32_t)hk_dtype_size(bases[b].dtype), size = esize * lanes;
            uint32_t align = lanes == 3 ? esize : size < 16 ? size : 16;
            hkc_signature s;
            hkc_strbuf err;
            hkc_strbuf_init(&err);
            int rc = hkc_signature_parse(text, &s, &err);
            int good = rc == 0 && s.count == 1 && s.params[0].kind == HK_PARAM_VECTOR &&
                       s.params[0].dtype == bases[b].dtype && !strcmp(s.params[0].type, type) &&
                       !strcmp(s.params[0].name, "v") && s.params[0].size == size &&
                       s.params[0].align == align && !s.params[0].is_bool &&
                       s.kernarg_size == (size + align - 1) / align * align;
            if (!good)
                tap_diag("'%s': rc %d %s", text, rc,
                         rc ? err.data : "wrong kind, dtype, type, size or alignment");
            bad += !good;
            count++;
            if (rc == 0)
                hkc_signature_free(&s);
            hkc_strbuf_free(&err);
        }
    static const struct {
        const char *type;
        hk_dtype dtype;
    } pairs[] = {{"half2", HK_F16}, {"__half2", HK_F16}, {"__hip_bfloat162", HK_BF16},
                 {"__nv_bfloat162", HK_BF16}};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        hkc_signature s;
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        int rc = hkc_signature_parse(pairs[i].type, &s, &err); /* unnamed */
        int good = rc == 0 && s.count == 1 && s.params[0].kind == HK_PARAM_VECTOR &&
                   s.params[0].dtype == pairs[i].dtype && s.params[0].size == 4 &&
                   s.params[0].align == 4 && !s.params[0].name[0] &&
                   !strcmp(s.params[0].type, pairs[i].type);
        if (!good)
            tap_diag("'%s': rc %d %s", pairs[i].type, rc, err.data);
        bad += !good;
        count++;
        if (rc == 0)
            hkc_signature_free(&s);
        hkc_strbuf_free(&err);
    }
    tap_ok(bad == 0, "%d vector types parse by value: element, lanes, size, alignment", count);

    hkc_signature s;
    hkc_strbuf err, f;
    hkc_strbuf_init(&err);
    hkc_strbuf_init(&f);
    int rc = hkc_signature_parse("(float4 v, const float4 *p, float2)", &s, &err);
    if (rc == 0) {
        hkc_signature_format(&s, &f);
        tap_ok(!strcmp(f.data, "(float4 v, const float4 *p, float2)") &&
                   s.params[1].kind == HK_PARAM_POINTER && s.params[1].dtype == HK_DTYPE_COUNT,
               "format keeps the vector type names; a pointer to a vector stays opaque: %s",
               f.data);
        hkc_signature_free(&s);
    } else {
        tap_ok(0, "format of vectors: %s", err.data);
    }
    hkc_strbuf_free(&err);
    hkc_strbuf_free(&f);
}

/* The vector types as C structs with the alignments HIP and CUDA give them. */
typedef struct { _Alignas(16) float x; float y, z, w; } c_float4;
typedef struct { float x, y, z; } c_float3;
typedef struct { _Alignas(16) double x; double y; } c_double2;
typedef struct { _Alignas(4) unsigned char x; unsigned char y, z, w; } c_uchar4;
typedef struct { _Alignas(8) int x; int y; } c_int2;
typedef struct { _Alignas(32) double x; double y, z, w; } c_double4_hip;
typedef struct { _Alignas(16) double x; double y, z, w; } c_double4_cuda;
struct lay_vec { char c; c_float4 v; double d; c_float3 w; short s; c_double2 q; c_uchar4 u; };
struct lay_vec2 { char c; c_int2 i; short s; c_float3 w; };
struct lay_wide16 { float a; c_double4_cuda v; int n; };
struct lay_wide32 { float a; c_double4_hip v; int n; };

static void test_vector_layouts(void)
{
    {
        /* c@0, v@16, d@32, w@40 (12 bytes, aligned to 4), s@52, q@64, u@80; 96 */
        const uint32_t o[] = {0, 16, 32, 40, 52, 64, 80};
        const uint32_t c[] = {offsetof(struct lay_vec, c), offsetof(struct lay_vec, v),
                              offsetof(struct lay_vec, d), offsetof(struct lay_vec, w),
                              offsetof(struct lay_vec, s), offsetof(struct lay_vec, q),
                              offsetof(struct lay_vec, u)};
        check_layout("char c, float4 v, double d, float3 w, short s, double2 q, uchar4 u", o, c, 7,
                     96, sizeof(struct lay_vec));
    }
    {
        /* c@0, i@8, s@16, w@20; 32, aligned to int2's 8 */
        const uint32_t o[] = {0, 8, 16, 20};
        const uint32_t c[] = {offsetof(struct lay_vec2, c), offsetof(struct lay_vec2, i),
                              offsetof(struct lay_vec2, s), offsetof(struct lay_vec2, w)};
        check_layout("char c, int2 i, short s, float3 w", o, c, 4, 32, sizeof(struct lay_vec2));
    }
    {
        /* double4: 16 as parsed (CUDA), 32 once a HIP backend lays it out */
        const uint32_t o[] = {0, 16, 48};
        const uint32_t c[] = {offsetof(struct lay_wide16, a), offsetof(struct lay_wide16, v),
                              offsetof(struct lay_wide16, n)};
        check_layout("float a, double4 v, int n", o, c, 3, 64, sizeof(struct lay_wide16));
    }
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_signature_parse("float a, double4 v, int n, double3 t, ulong4 u, float4 f", &s, &err);
    int good = rc == 0 && hkc_param_is_wide_vector(&s.params[1]) &&
               !hkc_param_is_wide_vector(&s.params[3]) && hkc_param_is_wide_vector(&s.params[4]) &&
               !hkc_param_is_wide_vector(&s.params[5]);
    if (rc == 0) {
        hkc_signature_align_wide_vectors(&s, 32);
        /* a@0 v@32 n@64 t@72 (24, aligned to 8) u@96 f@128; 160 */
        good = good && s.params[1].align == 32 && s.params[1].offset == offsetof(struct lay_wide32, v) &&
               s.params[2].offset == offsetof(struct lay_wide32, n) && s.params[3].align == 8 &&
               s.params[3].offset == 72 && s.params[4].offset == 96 && s.params[4].align == 32 &&
               s.params[5].offset == 128 && s.params[5].align == 16 && s.kernarg_size == 160;
        hkc_signature_align_wide_vectors(&s, 16);
        good = good && s.params[1].offset == 16 && s.params[4].offset == 80 &&
               s.params[5].offset == 112 && s.kernarg_size == 128;
        hkc_signature_free(&s);
    }
    tap_ok(good, "32-byte vectors (double4, ulong4) are laid out at 16 or 32 on demand; "
                 "double3 and float4 stay%s%s", rc ? ": " : "", err.data);
    hkc_strbuf_free(&err);
}

typedef struct err_case {
    const char *text;
    const char *want; /* substring of the message */
} err_case;

static void test_parse_errors(void)
{
    static const err_case cases[] = {
        {"float a, float **pp", "parameter 2 'float **pp': pointers to pointers"},
        {"float *x[]", "parameter 1 'float *x[]': pointers to pointers"},
        {"int n, Foo f", "parameter 2 'Foo f': unknown type 'Foo'"},
        {"Foo", "parameter 1 'Foo': unknown type 'Foo'"},
        {"dim3 g", "parameter 1 'dim3 g': dim3 cannot be passed by value"},
        {"float a, struct P p", "parameter 2 'struct P p': by-value struct parameters are not supported yet ('struct P')"},
        {"union U u", "by-value struct parameters are not supported yet ('union U')"},
        {"float5 v", "parameter 1 'float5 v': unknown type 'float5'"},
        {"float0 v", "unknown type 'float0'"},
        {"half4 v", "unknown type 'half4'"},
        {"unsigned int4 v", "unknown type 'unsigned int4'"},
        {"int n = 4", "parameter 1 'int n = 4': default arguments are not supported"},
        {"float a,, int n", "parameter 2 is empty"},
        {"float a,", "parameter 2 is empty"},
        {"int &r", "reference parameters are not supported"},
        {"void (*fn)(int)", "function pointer parameters are not supported"},
        {"int n, ...", "variadic parameters are not supported"},
        {"void x", "a parameter cannot have type void"},
        {"int a, void", "void is only valid as the whole parameter list"},
        {"long double x", "invalid combination of type keywords"},
        {"unsigned float x", "invalid combination of type keywords"},
        {"long long long x", "invalid combination of type keywords"},
        {"int int x", "invalid combination of type keywords"},
        {"float a b", "unknown type 'float a'"},
        {"float *x y", "unexpected 'y'"},
        {"const", "missing type"},
        {"const *p", "missing type"},
        {"float *x const", "qualifier after the parameter name"},
        {"float *int", "'int' cannot name a parameter"},
        {"int *x *y", "'*' after the parameter name"},
        {"std::vector<int> v", "template types are not supported"},
        {"float a; int b", "unexpected ';'"},
        {"float x[4", "unbalanced '['"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hkc_signature s;
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        int rc = hkc_signature_parse(cases[i].text, &s, &err);
        if (rc != HK_EINVAL || !contains(err.data, cases[i].want)) {
            tap_diag("'%s': rc %d message '%s', want '%s'", cases[i].text, rc, err.data,
                     cases[i].want);
            bad++;
            if (rc == 0)
                hkc_signature_free(&s);
        }
        hkc_strbuf_free(&err);
    }
    tap_ok(bad == 0, "%zu malformed lists give HK_EINVAL with the expected message",
           sizeof(cases) / sizeof(cases[0]));
}

/* ------------------------------------------------------------ source scan */

static const hkc_source_kernel *find_kernel(const hkc_source_kernel *k, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(k[i].name, name))
            return &k[i];
    return NULL;
}

static const char source1[] =
    "#include <hip/hip_runtime.h>\n"                                      /* 1 */
    "// __global__ void fake_line(int x) {}\n"                            /* 2 */
    "/* __global__ void fake_block(int x) { __syncthreads(); }\n"         /* 3 */
    "   still a comment */\n"                                             /* 4 */
    "#define BLOCK 256 \\\n"                                              /* 5 */
    "   /* __global__ void fake_macro(int) {} */\n"                       /* 6 */
    "static const char *msg = \"__global__ void fake_str(int) {}\";\n"   /* 7 */
    "static const char q = '\"';\n"                                       /* 8 */
    "extern \"C\" __global__ void axpy(float a, const float *__restrict__ x,\n" /* 9 */
    "                                float *y, int n)\n"                  /* 10 */
    "{\n"                                                                 /* 11 */
    "    int i = blockIdx.x * blockDim.x + threadIdx.x; // { unbalanced\n" /* 12 */
    "    if (i < n) { y[i] = a * x[i] + y[i]; }\n"                        /* 13 */
    "}\n"                                                                 /* 14 */
    "\n"                                                                  /* 15 */
    "__global__ void __launch_bounds__(256, 2)\n"                         /* 16 */
    "scale(double *v, /* factor */ double f, size_t n) {\n"               /* 17 */
    "    const char *s = \"}\"; (void)s;\n"                               /* 18 */
    "    for (size_t i = 0; i < n; i++) v[i] *= f;\n"                     /* 19 */
    "}\n"                                                                 /* 20 */
    "template <typename T>\n"                                             /* 21 */
    "__global__ void tmpl(T *p, int n) { __syncthreads(); }\n"            /* 22 */
    "namespace ns {\n"                                                    /* 23 */
    "__global__ void inside(int n) {}\n"                                  /* 24 */
    "}\n"                                                                 /* 25 */
    "__global__ void only_declared(int n);\n"                             /* 26 */
    "__global__ void later(float *p);\n"                                  /* 27 */
    "static __attribute__((unused)) inline __global__ void\n"             /* 28 */
    "later(float *p) { p[0] = 1.0f; }\n"                                  /* 29 */
    "__global__ void noparams() {}\n"                                     /* 30 */
    "__global__ void voidparams(void) { }\n"                              /* 31 */
    "auto r = R\"x(__global__ void fake_raw(int) {})x\";\n"               /* 32 */
    "__global__ void after_raw(unsigned n) {}\n";                         /* 33 */

static void test_scan_basic(void)
{
    hkc_source_kernel *k = NULL;
    int n = 0;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_source_scan(source1, NULL, &k, &n, &err);
    tap_ok(rc == 0, "scan of a realistic source succeeds%s%s", rc ? ": " : "", err.data);
    tap_ok(n == 7, "finds 7 kernels (got %d)", n);
    for (int i = 0; i < n; i++)
        tap_diag("  %s line %d extern_c %d sync %d params %d", k[i].name, k[i].line, k[i].extern_c,
                 k[i].uses_sync, k[i].sig.count);
    int fakes = 0;
    for (int i = 0; i < n; i++)
        fakes += !strncmp(k[i].name, "fake", 4) || !strcmp(k[i].name, "tmpl") ||
                 !strcmp(k[i].name, "inside") || !strcmp(k[i].name, "only_declared");
    tap_ok(fakes == 0, "nothing from comments, strings, macros, templates, declarations");
    const hkc_source_kernel *in = find_kernel(k, n, "ns::inside");
    tap_ok(in && in->line == 24 && in->sig.count == 1, "a kernel in a namespace is ns::inside");

    const hkc_source_kernel *a = find_kernel(k, n, "axpy");
    tap_ok(a && a->line == 9 && a->extern_c && a->sig.count == 4 && a->sig.kernarg_size == 32 &&
               a->sig.params[1].is_const && a->sig.params[1].dtype == HK_F32 &&
               !strcmp(a->sig.params[3].name, "n") && !a->uses_sync,
           "axpy: line 9, extern C, 4 params, no sync");
    const hkc_source_kernel *s = find_kernel(k, n, "scale");
    tap_ok(s && s->line == 16 && !s->extern_c && s->sig.count == 3 &&
               s->sig.params[1].dtype == HK_F64 && !strcmp(s->sig.params[1].name, "f") &&
               s->sig.params[2].offset == 16,
           "scale: after __launch_bounds__, comment inside params, line 16");
    const hkc_source_kernel *l = find_kernel(k, n, "later");
    tap_ok(l && l->line == 28 && l->sig.count == 1, "declaration then definition counts once, at the definition");
    const hkc_source_kernel *np = find_kernel(k, n, "noparams");
    const hkc_source_kernel *vp = find_kernel(k, n, "voidparams");
    tap_ok(np && vp && np->sig.count == 0 && vp->sig.count == 0 && np->sig.kernarg_size == 0,
           "() and (void) kernels have no parameters");
    const hkc_source_kernel *ar = find_kernel(k, n, "after_raw");
    tap_ok(ar && ar->line == 33 && ar->sig.params[0].dtype == HK_U32,
           "a raw string does not hide the next kernel; line counting holds");
    /* Only the skipped template kernel and a comment mention a barrier. */
    int any_sync = 0;
    for (int i = 0; i < n; i++)
        any_sync |= k[i].uses_sync;
    tap_ok(!any_sync, "a skipped template kernel's barrier and a commented one mark no kernel");
    hkc_source_kernels_free(k, n);
    hkc_strbuf_free(&err);
}

static void test_scan_extern_block_and_sync(void)
{
    static const char src[] =
        "#ifdef __cplusplus\n"
        "extern \"C\" {\n"
        "#endif\n"
        "__global__ void reduce(const float *in, float *out, int n)\n"
        "{\n"
        "    __shared__ float tile[256];\n"
        "    tile[threadIdx.x] = in[threadIdx.x];\n"
        "    __syncthreads();\n"
        "    if (threadIdx.x == 0) { out[0] = tile[0]; }\n"
        "}\n"
        "__global__ void warp(float *v) { v[0] = __shfl_down_sync(0xffffffff, v[0], 1); }\n"
        "__global__ void vote(int *v) { v[0] = __ballot(v[0] > 0); }\n"
        "__global__ void plain(int *v) { v[0] = 1; /* __syncthreads(); */ }\n"
        "__global__ void strsync(int *v) { const char *s = \"__syncwarp\"; (void)s; }\n"
        "#ifdef __cplusplus\n"
        "}\n"
        "#endif\n"
        "__global__ void outside_block(int *v) { }\n";
    hkc_source_kernel *k = NULL;
    int n = 0;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_source_scan(src, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 6, "extern \"C\" block source: 6 kernels");
    const hkc_source_kernel *r = find_kernel(k, n, "reduce"), *w = find_kernel(k, n, "warp"),
                            *v = find_kernel(k, n, "vote"), *p = find_kernel(k, n, "plain"),
                            *s = find_kernel(k, n, "strsync"), *o = find_kernel(k, n, "outside_block");
    tap_ok(r && w && v && p && s && o && r->extern_c && w->extern_c && p->extern_c && !o->extern_c,
           "extern \"C\" { } marks the kernels inside it, not after it");
    tap_ok(r && r->uses_sync && w && w->uses_sync && v && v->uses_sync,
           "__syncthreads, __shfl_down_sync, __ballot mark their kernels");
    tap_ok(p && !p->uses_sync && s && !s->uses_sync && o && !o->uses_sync,
           "sync names in comments and strings do not count; other kernels stay clear");
    tap_ok(r && r->line == 4, "line of a kernel after preprocessor lines");
    hkc_source_kernels_free(k, n);

    /* A device helper outside every kernel marks all of them. */
    static const char helper[] =
        "__device__ float warp_sum(float v) {\n"
        "    for (int o = 16; o > 0; o /= 2) v += __shfl_xor(v, o);\n"
        "    return v;\n"
        "}\n"
        "__global__ void a(float *v) { v[0] = warp_sum(v[0]); }\n"
        "__global__ void b(float *v) { v[0] = 0; }\n";
    rc = hkc_source_scan(helper, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 2 && k[0].uses_sync && k[1].uses_sync,
           "a sync call in a device helper marks every kernel");
    hkc_source_kernels_free(k, n);

    static const char macro[] =
        "#define BARRIER() \\\n"
        "    __syncthreads()\n"
        "__global__ void a(float *v) { BARRIER(); }\n";
    rc = hkc_source_scan(macro, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 1 && k[0].uses_sync, "a sync name in a continued macro counts");
    hkc_source_kernels_free(k, n);

    static const char quiet[] = "__global__ void a(float *v) { v[0] = 0; }\n";
    rc = hkc_source_scan(quiet, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 1 && !k[0].uses_sync, "no sync anywhere: clear");
    hkc_source_kernels_free(k, n);
    rc = hkc_source_scan(quiet, "// __syncthreads\ninline void f() { __activemask(); }", &k, &n, &err);
    tap_ok(rc == 0 && n == 1 && k[0].uses_sync, "extra_text (an included header) counts as outside text");
    hkc_source_kernels_free(k, n);
    rc = hkc_source_scan(quiet, "/* __syncthreads */ \"__syncwarp\"", &k, &n, &err);
    tap_ok(rc == 0 && n == 1 && !k[0].uses_sync, "extra_text comments and strings do not count");
    hkc_source_kernels_free(k, n);

    static const char prefixes[] =
        "__global__ void a(int *v) { v[0] = __any_sync(~0u, 1); }\n"
        "__global__ void b(int *v) { v[0] = __all(1); }\n"
        "__global__ void c(int *v) { v[0] = __activemask(); }\n"
        "__global__ void d(int *v) { v[0] = __reduce_add_sync(~0u, 1); }\n"
        "__global__ void e(int *v) { __syncwarp(); }\n"
        "__global__ void f(int *v) { if (1) { { __syncthreads(); } } }\n"
        "__global__ void g(int *v) { int syncthreads = 0; v[0] = syncthreads; }\n";
    rc = hkc_source_scan(prefixes, NULL, &k, &n, &err);
    int good = rc == 0 && n == 7;
    for (int i = 0; good && i < 6; i++)
        good = k[i].uses_sync;
    tap_ok(good && !k[6].uses_sync, "__any*, __all*, __activemask, __reduce_*, __syncwarp, nested blocks; "
           "a lookalike name does not count");
    hkc_source_kernels_free(k, n);

    static const char empty[] = "// nothing here\n#pragma once\n";
    rc = hkc_source_scan(empty, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 0 && k == NULL, "a source without kernels gives none");
    rc = hkc_source_scan("", NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 0, "an empty source gives none");
    hkc_strbuf_free(&err);
}

static void test_scan_errors_and_linkage(void)
{
    hkc_source_kernel *k = NULL;
    int n = 0;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    static const char bad[] =
        "__global__ void ok(int n) {}\n"
        "\n"
        "__global__ void broken(dim3 v, int n) {}\n";
    int rc = hkc_source_scan(bad, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 2 && !k[0].unresolved && k[1].unresolved && k[1].line == 3 &&
               contains(k[1].unresolved, "parameter 1 'dim3 v'") &&
               contains(k[1].unresolved, "dim3 cannot be passed by value") && !k[1].by_value_class,
           "a bad parameter list leaves that kernel unresolved, naming the parameter, and the other "
           "kernel usable: %s", n == 2 && k[1].unresolved ? k[1].unresolved : err.data);
    hkc_source_kernels_free(k, n);
    hkc_strbuf_clear(&err);
    static const char unusual[] =
        "struct P { float a; int b; };\n"
        "__global__ void fine(float *y) {}\n"
        "__global__ void ptrs(float **p) {}\n"
        "__global__ void dflt(float *y, int n = 3) {}\n"
        "__global__ void sbv(float *y, P p) {}\n";
    k = NULL;
    n = 0;
    rc = hkc_source_scan(unusual, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 4 && !k[0].unresolved && k[1].unresolved && contains(k[1].unresolved, "pointers to pointers") &&
               k[2].unresolved && contains(k[2].unresolved, "default arguments") && k[3].unresolved &&
               k[3].by_value_class && !k[1].by_value_class && !k[2].by_value_class,
           "float **, a default argument and a struct by value: each kernel unresolved, saying why (the struct "
           "as a class by value), the module scanned");
    hkc_source_kernels_free(k, n);
    hkc_strbuf_clear(&err);

    static const char decl[] =
        "extern \"C\" __global__ void k1(int n);\n"
        "__global__ void k1(int n) { }\n"
        "extern \"C\" {\n"
        "  __global__ void k2(int n);\n"
        "}\n"
        "__global__ void k2(int n) { }\n"
        "__global__ void k3(int n) { }\n";
    rc = hkc_source_scan(decl, NULL, &k, &n, &err);
    const hkc_source_kernel *k1 = find_kernel(k, n, "k1"), *k2 = find_kernel(k, n, "k2"),
                            *k3 = find_kernel(k, n, "k3");
    tap_ok(rc == 0 && n == 3 && k1 && k1->extern_c && k2 && k2->extern_c && k3 && !k3->extern_c,
           "a definition keeps the C linkage of an earlier extern \"C\" declaration");
    hkc_source_kernels_free(k, n);

    static const char odd[] =
        "struct S { int x; };\n"
        "class C { public: void m() {} };\n"
        "namespace { __global__ void anon(int) {} }\n"
        "namespace a::b { __global__ void nested(int) {} }\n"
        "using namespace std;\n"
        "__global__ void after_using(int n) {}\n"
        "__global__ void unterminated(int n\n";
    rc = hkc_source_scan(odd, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 3 && !strcmp(k[0].name, "anon") && !strcmp(k[1].name, "a::b::nested") &&
               !strcmp(k[2].name, "after_using"),
           "namespaces: anonymous unqualified, a::b qualified; using-directive harmless; "
           "truncated source ignored (%d: %s %s)", n, n > 0 ? k[0].name : "", n > 1 ? k[1].name : "");
    hkc_source_kernels_free(k, n);
    hkc_strbuf_free(&err);
}


/* Overloads (two kernels of one name) are kept unresolved, last; a
 * __launch_bounds__ maximum is read where it is a constant. */
static void test_scan_overloads_and_bounds(void)
{
    hkc_source_kernel *k = NULL;
    int n = 0;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    static const char over[] =
        "__global__ void over(float *y, int n) {}\n"
        "__global__ void mid(float *y) {}\n"
        "__global__ void over(int *y, int n) {}\n"
        "namespace a { __global__ void over(double *y) {} }\n"
        "__global__ void last(int n) {}\n";
    int rc = hkc_source_scan(over, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 5 && hkc_source_launchable(k, n) == 3 && !strcmp(k[0].name, "mid") &&
               !strcmp(k[1].name, "a::over") && !strcmp(k[2].name, "last") && !k[2].overloaded &&
               k[3].overloaded && k[4].overloaded && k[3].line == 1 && k[4].line == 3 &&
               k[3].unresolved && contains(k[3].unresolved, "2 kernels named over") && k[3].sig.count == 0,
           "two kernels named over: both unresolved (overloads), moved last in their order; a::over "
           "and the others launchable (%d, %d launchable)", n, n ? hkc_source_launchable(k, n) : 0);
    hkc_source_kernels_free(k, n);
    static const char branches[] =
        "#ifdef WIDE\n__global__ void k(double *y) {}\n#else\n__global__ void k(float *y) {}\n#endif\n";
    rc = hkc_source_scan(branches, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 2 && !k[0].overloaded && !k[1].overloaded,
           "text not preprocessed (both #if branches): a name twice is no overload");
    hkc_source_kernels_free(k, n);

    static const char bounds[] =
        "__global__ void __launch_bounds__(256) a(float *y) {}\n"
        "__global__ void __launch_bounds__((4 << 6) + 2 * 64, 2) b(float *y) {}\n"
        "__launch_bounds__(0x80u) __global__ void c(float *y) {}\n"
        "__global__ void __launch_bounds__(THREADS) d(float *y) {}\n"
        "__global__ void e(float *y) {}\n"
        "template <int B> __global__ void __launch_bounds__(B) f(float *y) {}\n"
        "__global__ void __launch_bounds__(1 << 40) g(float *y) {}\n"
        "extern \"C\" __global__ void __attribute__((x)) __launch_bounds__(64 / 2) h(float *y) {}\n";
    rc = hkc_source_scan(bounds, NULL, &k, &n, &err);
    tap_ok(rc == 0 && n == 7 && k[0].max_threads == 256 && k[1].max_threads == 384 &&
               k[2].max_threads == 128 && k[3].max_threads == 0 && k[4].max_threads == 0 &&
               k[5].max_threads == 0 && k[6].max_threads == 32 && !strcmp(k[6].name, "h"),
           "__launch_bounds__: 256, (4 << 6) + 2 * 64, 0x80u before __global__, 64 / 2 after an "
           "attribute read; a name, none, or past 2^31 give 0 (%d kernels)", n);
    hkc_source_kernels_free(k, n);
    static const char tbounds[] =
        "template <int W, int M = 2> __global__ void __launch_bounds__(W * 32, M) mv(float *y) {}\n"
        "template <typename T> __global__ void __launch_bounds__(sizeof(T) * 64) sz(T *y) {}\n";
    const char *const inst[] = {"mv<4>", "mv<8, 1>", "sz<float>"};
    rc = hkc_source_scan_all(tbounds, NULL, inst, 3, &k, &n, NULL, NULL, &err);
    tap_ok(rc == 0 && n == 3 && k[0].max_threads == 128 && k[1].max_threads == 256 && k[2].max_threads == 0,
           "a template's __launch_bounds__(W * 32) with its argument put in: mv<4> 128, mv<8, 1> 256; "
           "sizeof(T) left to the compiler (%d: %u %u)", n, n > 1 ? k[0].max_threads : 0,
           n > 1 ? k[1].max_threads : 0);
    hkc_source_kernels_free(k, n);
    hkc_strbuf_free(&err);
}

/* Random expression trees, printed and evaluated: their value by the tree
 * (the reference) and by hkc_int_expr_eval must agree. */
typedef struct ex_node {
    char op; /* 0: a literal */
    long long v;
} ex_node;

static long long ex_build(char *out, size_t cap, int depth, int *ok)
{
    static const char ops[] = "+-*/%<>&^|";
    if (depth == 0 || rng_next() % 3 == 0) {
        long long v = (long long)(rng_next() % 1000);
        int hex = rng_next() % 4 == 0;
        snprintf(out, cap, hex ? "0x%llx" : "%lld", v);
        return v;
    }
    char a[240], b[240]; /* (a op b) fits the caller's 512 */
    char op = ops[rng_next() % 10];
    long long x = ex_build(a, sizeof a, depth - 1, ok), y = ex_build(b, sizeof b, depth - 1, ok);
    long long r = 0;
    switch (op) {
    case '+': *ok &= !__builtin_add_overflow(x, y, &r); break;
    case '-': *ok &= !__builtin_sub_overflow(x, y, &r); break;
    case '*': *ok &= !__builtin_mul_overflow(x, y, &r); break;
    case '/': if (y == 0 || !*ok) *ok = 0; else r = x / y; break;
    case '%': if (y == 0 || !*ok) *ok = 0; else r = x % y; break;
    case '<': y &= 7; if (x < 0 || (x >> (62 - y)) != 0) *ok = 0; else r = x << y; snprintf(b, sizeof b, "%lld", y); break;
    case '>': y &= 7; if (x < 0) *ok = 0; else r = x >> y; snprintf(b, sizeof b, "%lld", y); break;
    case '&': r = x & y; break;
    case '^': r = x ^ y; break;
    case '|': r = x | y; break;
    }
    const char *sym = op == '<' ? "<<" : op == '>' ? ">>" : (char[]){op, 0};
    int neg = rng_next() % 8 == 0;
    snprintf(out, cap, "%s(%s %s %s)", neg ? "-" : "", a, sym, b);
    if (neg && r == -0x7fffffffffffffffLL - 1)
        *ok = 0;
    return neg && *ok ? -r : r;
}

static void test_int_expr(void)
{
    static const struct { const char *text; long long v; int ok; } cases[] = {
        {"256", 256, 1},          {"2 + 3 * 4", 14, 1},   {"(2 + 3) * 4", 20, 1},
        {"1 << 4 + 1", 32, 1},    {"64 / 2 / 2", 16, 1},  {"10 - 4 - 3", 3, 1},
        {"6 & 3 | 8", 10, 1},     {"1'024", 1024, 1},     {"0b101", 5, 1},
        {"010", 8, 1},            {"-(-3)", 3, 1},        {"~0 & 255", 255, 1},
        {"N", 0, 0},              {"1 / 0", 0, 0},        {"2.5", 0, 0},
        {"(1", 0, 0},             {"1 2", 0, 0},          {"9223372036854775807 + 1", 0, 0},
        {"1 << 63", 0, 0},        {"", 0, 0},             {"sizeof(float)", 0, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hkc_tokvec tv;
        hkc_tokenize(cases[i].text, strlen(cases[i].text), NULL, NULL, &tv);
        long long v = 0;
        int ok = hkc_int_expr_eval(tv.v, tv.n - 1, &v) == 0;
        if (ok != cases[i].ok || (ok && v != cases[i].v)) {
            tap_diag("'%s': ok %d value %lld, want ok %d value %lld", cases[i].text, ok, v,
                     cases[i].ok, cases[i].v);
            bad++;
        }
        free(tv.v);
    }
    tap_ok(bad == 0, "integer expressions: precedence, literals, and what is refused");
    int checked = 0;
    bad = 0;
    for (int t = 0; t < 2000; t++) {
        char text[512];
        int ok = 1;
        long long want = ex_build(text, sizeof text, 4, &ok);
        if (!ok || strlen(text) > 400)
            continue;
        hkc_tokvec tv;
        hkc_tokenize(text, strlen(text), NULL, NULL, &tv);
        long long v = 0;
        if (hkc_int_expr_eval(tv.v, tv.n - 1, &v) != 0 || v != want) {
            if (bad++ < 3)
                tap_diag("'%s': got %lld, want %lld", text, v, want);
        }
        checked++;
        free(tv.v);
    }
    tap_ok(bad == 0 && checked > 1000, "%d random expression trees evaluate as the tree does", checked);
}

/* Every prefix of a source (unterminated comments, strings, raw strings,
 * directives, parameter lists) and random byte damage: no crash, no leak,
 * and every result is either a list of kernels or HK_EINVAL with a message. */
static void test_scan_robust(void)
{
    size_t len = strlen(source1);
    char *buf = malloc(len + 1);
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t cut = 0; cut <= len; cut++) {
            memcpy(buf, source1, len + 1);
            if (pass == 0) {
                buf[cut] = 0;
            } else {
                static const char junk[] = "{}()\"/*'#\n,*;<>R";
                for (int q = 0; q < 3; q++)
                    buf[rng_next() % len] = junk[rng_next() % (sizeof(junk) - 1)];
            }
            hkc_source_kernel *k = NULL;
            int n = 0;
            hkc_strbuf err;
            hkc_strbuf_init(&err);
            int rc = hkc_source_scan(buf, buf, &k, &n, &err);
            if (rc == 0) {
                for (int i = 0; i < n; i++)
                    if (!k[i].name || !k[i].name[0] || k[i].line < 1)
                        bad++;
                hkc_source_kernels_free(k, n);
            } else if (rc != HK_EINVAL || !err.len) {
                bad++;
            }
            hkc_signature sig;
            hkc_strbuf_clear(&err);
            rc = hkc_signature_parse(buf + cut, &sig, &err);
            if (rc == 0)
                hkc_signature_free(&sig);
            else if (rc != HK_EINVAL || !err.len)
                bad++;
            hkc_strbuf_free(&err);
        }
    }
    free(buf);
    tap_ok(bad == 0, "scan and parse survive every truncation and random damage of a source");
}

static void test_messages_one_line(void)
{
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_signature_parse("float a,\n    float\n  **pp", &s, &err);
    tap_ok(rc == HK_EINVAL && contains(err.data, "parameter 2 'float **pp'"),
           "a parameter spread over lines is quoted on one line: %s", err.data);
    hkc_strbuf_free(&err);
}

/* ---------------------------------------------------------------- packing */

static hk_buffer make_buf(hk_dtype d, int device, uintptr_t addr)
{
    hk_buffer b;
    memset(&b, 0, sizeof(b));
    b.dtype = d;
    b.device = device;
    b.kptr = (void *)addr;
    return b;
}


static void test_pack_roundtrip(void)
{
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_signature_parse(
        "char c, double d, int i, half h, void *p, uint8_t u8, int16_t i16, uint16_t u16, "
        "unsigned u32, long i64, size_t u64, float f, __hip_bfloat16 bf, bool b, "
        "const float *x, signed char sc", &s, &err);
    tap_ok(rc == 0 && s.count == 16, "mixed signature parses");
    if (rc)
        return;
    unsigned char *ka = malloc(s.kernarg_size);
    int bad = 0;
    for (int iter = 0; iter < 2000; iter++) {
        int8_t c = (int8_t)rng_next();
        double d = (double)(int64_t)rng_next() / 3.0;
        int32_t i = (int32_t)rng_next();
        float hf = hkc_f16_to_f32((uint16_t)(rng_next() & 0x7bff)); /* finite */
        uintptr_t pa = (uintptr_t)(rng_next() & ~7ull);
        uint8_t u8 = (uint8_t)rng_next();
        int16_t i16 = (int16_t)rng_next();
        uint16_t u16 = (uint16_t)rng_next();
        uint32_t u32 = (uint32_t)rng_next();
        int64_t i64 = (int64_t)rng_next();
        uint64_t u64 = rng_next();
        float f = (float)((double)(int32_t)rng_next() / 7.0);
        float bff = hkc_bf16_to_f32((uint16_t)(rng_next() & 0x7f7f));
        int b = (int)(rng_next() & 1);
        uintptr_t xa = (uintptr_t)(rng_next() & ~7ull);
        int8_t sc = (int8_t)rng_next();
        hk_buffer pb = make_buf((hk_dtype)(rng_next() % HK_DTYPE_COUNT), 2, pa);
        hk_buffer xb = make_buf(HK_F32, 2, xa);
        hk_arg args[16] = {
            hk_arg_int(c), hk_arg_float(d), iter & 4 ? hk_arg_float(i) : hk_arg_int(i),
            hk_arg_float(hf),
            iter % 5 ? hk_arg_buffer(&pb) : hk_arg_null(),
            hk_arg_uint(u8), iter & 8 ? hk_arg_float(i16) : hk_arg_int(i16),
            iter & 1 ? hk_arg_uint(u16) : hk_arg_float(u16), hk_arg_uint(u32),
            hk_arg_int(i64), hk_arg_uint(u64), hk_arg_float(f), hk_arg_float(bff),
            iter & 2 ? hk_arg_bool(b) : hk_arg_int(b), hk_arg_buffer(&xb),
            iter & 16 ? hk_arg_float(sc) : hk_arg_int(sc),
        };
        memset(ka, 0xAB, s.kernarg_size);
        rc = hkc_signature_pack(&s, "mix", args, 16, 2, ka, &err);
        if (rc) {
            tap_diag("pack failed: %s", err.data);
            bad++;
            break;
        }
        int8_t gc; double gd; int32_t gi; uint16_t gh; uint64_t gp; uint8_t gu8; int16_t gi16;
        uint16_t gu16; uint32_t gu32; int64_t gi64; uint64_t gu64; float gf; uint16_t gbf;
        uint8_t gb; uint64_t gx; int8_t gsc;
#define GET(var, idx) memcpy(&var, ka + s.params[idx].offset, sizeof(var))
        GET(gc, 0); GET(gd, 1); GET(gi, 2); GET(gh, 3); GET(gp, 4); GET(gu8, 5); GET(gi16, 6);
        GET(gu16, 7); GET(gu32, 8); GET(gi64, 9); GET(gu64, 10); GET(gf, 11); GET(gbf, 12);
        GET(gb, 13); GET(gx, 14); GET(gsc, 15);
#undef GET
        int good = gc == c && gd == d && gi == i && hkc_f16_to_f32(gh) == hf &&
                   gp == (iter % 5 ? pa : 0) && gu8 == u8 && gi16 == i16 && gu16 == u16 &&
                   gu32 == u32 && gi64 == i64 && gu64 == u64 && gf == f &&
                   hkc_bf16_to_f32(gbf) == bff && gb == b && gx == xa && gsc == sc;
        /* Padding is zeroed. */
        unsigned char mark[256] = {0};
        for (int q = 0; q < s.count; q++)
            memset(mark + s.params[q].offset, 1, s.params[q].size);
        for (uint32_t q = 0; q < s.kernarg_size; q++)
            if (!mark[q] && ka[q] != 0)
                good = 0;
        if (!good && bad++ < 3)
            tap_diag("round trip mismatch at iteration %d", iter);
    }
    tap_ok(bad == 0, "2000 random argument sets pack and unpack identically, padding zeroed");
    free(ka);
    hkc_signature_free(&s);
    hkc_strbuf_free(&err);
}

static void test_pack_conversions(void)
{
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_signature_parse("half h, __bf16 b, float f, int8_t i8, uint64_t u, bool t, double d",
                                 &s, &err);
    if (rc)
        return;
    unsigned char ka[64];
    hk_arg args[7] = {hk_arg_float(1.0 + 1.0 / 2048), hk_arg_int(3), hk_arg_uint(16777217),
                      hk_arg_float(-128.0), hk_arg_float(18446744073709549568.0),
                      hk_arg_uint(1), hk_arg_bool(1)};
    rc = hkc_signature_pack(&s, "conv", args, 7, 0, ka, &err);
    uint16_t h, b;
    float f;
    int8_t i8;
    uint64_t u;
    uint8_t t;
    double d;
    memcpy(&h, ka + s.params[0].offset, 2);
    memcpy(&b, ka + s.params[1].offset, 2);
    memcpy(&f, ka + s.params[2].offset, 4);
    memcpy(&i8, ka + s.params[3].offset, 1);
    memcpy(&u, ka + s.params[4].offset, 8);
    memcpy(&t, ka + s.params[5].offset, 1);
    memcpy(&d, ka + s.params[6].offset, 8);
    if (rc)
        tap_diag("%s", err.data);
    tap_ok(rc == 0 && h == 0x3c00 && b == 0x4040 && f == 16777216.0f && i8 == -128 &&
               u == 18446744073709549568ull && t == 1 && d == 1.0,
           "conversions: f16 tie to even, int to bf16, uint to float rounds, integral floats "
           "to integers, bool from uint, bool to double");

    hk_arg inf_nan[7] = {hk_arg_float(INFINITY), hk_arg_float(-INFINITY), hk_arg_float(NAN),
                         hk_arg_int(0), hk_arg_int(0), hk_arg_int(0), hk_arg_float(1e300)};
    rc = hkc_signature_pack(&s, "conv", inf_nan, 7, 0, ka, &err);
    memcpy(&h, ka + s.params[0].offset, 2);
    memcpy(&b, ka + s.params[1].offset, 2);
    memcpy(&f, ka + s.params[2].offset, 4);
    tap_ok(rc == 0 && h == 0x7c00 && b == 0xff80 && isnan(f),
           "infinities and NaN pass through as themselves");
    hkc_signature_free(&s);
    hkc_strbuf_free(&err);
}

typedef struct pack_err_case {
    const char *sig;
    hk_arg args[4];
    int nargs;
    const char *want; /* exact message */
} pack_err_case;

static void test_pack_errors(void)
{
    static hk_buffer f64buf, f32buf, dev1buf;
    f64buf = make_buf(HK_F64, 0, 0x1000);
    f32buf = make_buf(HK_F32, 0, 0x2000);
    dev1buf = make_buf(HK_F32, 1, 0x3000);
    const char *axpy = "float a, const float *x, float *y, int n";
    static const double big_y[4] = {1, 1e40, 0, 0}, half_x[2] = {2.5, 1}, w256[4] = {0, 0, 0, 256};
    static const double neg_y[2] = {1, -1}, over_h[2] = {1, 70000}, ok4[4] = {1, 2, 3, 4};
    static const double bool_z[3] = {1, 2, 3};
    const pack_err_case cases[] = {
        {"int n, float4 v", {hk_arg_int(1), hk_arg_vector(big_y)}, 2,
         "axpy: parameter 2 'v' (float4) lane y: value 1e+40 out of range [-3.4028235e+38, 3.4028235e+38]"},
        {"int2 i", {hk_arg_vector(half_x)}, 1, "axpy: parameter 1 'i' (int2) lane x: got 2.5, expects an integer"},
        {"uchar4 u", {hk_arg_vector(w256)}, 1, "axpy: parameter 1 'u' (uchar4) lane w: value 256 out of range [0, 255]"},
        {"ulonglong2 u", {hk_arg_vector(neg_y)}, 1,
         "axpy: parameter 1 'u' (ulonglong2) lane y: value -1 out of range [0, 18446744073709551615]"},
        {"__half2 h", {hk_arg_vector(over_h)}, 1, "axpy: parameter 1 'h' (__half2) lane y: value 70000 out of range [-65504, 65504]"},
        {"float3", {hk_arg_vector(bool_z), hk_arg_int(1)}, 2, "axpy: expects 1 argument (float3), got 2"},
        {"float4 v", {hk_arg_float(1)}, 1,
         "axpy: parameter 1 'v' (float4) got 1, expects a vector of 4 numbers (a table {x, y, z, w} in Lua)"},
        {"int2 i", {hk_arg_buffer(&f32buf)}, 1,
         "axpy: parameter 1 'i' (int2) got a buffer, expects a vector of 2 numbers (a table {x, y} in Lua)"},
        {"float3 w", {hk_arg_bool(1)}, 1,
         "axpy: parameter 1 'w' (float3) got true, expects a vector of 3 numbers (a table {x, y, z} in Lua)"},
        {"float4 v", {hk_arg_vector(NULL)}, 1,
         "axpy: parameter 1 'v' (float4) got a vector whose values pointer is NULL, expects a vector of 4 numbers (a table {x, y, z, w} in Lua)"},
        {"float a, float4 v", {hk_arg_vector(ok4), hk_arg_vector(ok4)}, 2,
         "axpy: parameter 1 'a' (float) got a vector, expects a number"},
        {"bool b", {hk_arg_vector(ok4)}, 1, "axpy: parameter 1 'b' (bool) got a vector, expects a boolean"},
        {"const float *x", {hk_arg_vector(ok4)}, 1, "axpy: parameter 1 'x' (const float *) got a vector, expects a buffer of f32"},
        {axpy, {hk_arg_float(1), hk_arg_buffer(&f32buf), hk_arg_buffer(&f32buf)}, 3,
         "axpy: expects 4 arguments (float a, const float *x, float *y, int n), got 3"},
        {"int n", {hk_arg_int(1), hk_arg_int(2)}, 2, "axpy: expects 1 argument (int n), got 2"},
        {axpy, {hk_arg_float(1), hk_arg_buffer(&f64buf), hk_arg_buffer(&f32buf), hk_arg_int(3)}, 4,
         "axpy: parameter 2 'x' (const float *) expects a buffer of f32, got a buffer of f64"},
        {axpy, {hk_arg_float(1), hk_arg_buffer(&f32buf), hk_arg_buffer(&f32buf), hk_arg_int(3000000000)}, 4,
         "axpy: parameter 4 'n' (int) value 3000000000 out of range [-2147483648, 2147483647]"},
        {axpy, {hk_arg_buffer(&f32buf), hk_arg_buffer(&f32buf), hk_arg_buffer(&f32buf), hk_arg_int(3)}, 4,
         "axpy: parameter 1 'a' (float) got a buffer, expects a number"},
        {axpy, {hk_arg_float(1), hk_arg_buffer(&f32buf), hk_arg_buffer(&f32buf), hk_arg_float(2.5)}, 4,
         "axpy: parameter 4 'n' (int) got 2.5, expects an integer"},
        {axpy, {hk_arg_float(1), hk_arg_buffer(&dev1buf), hk_arg_buffer(&f32buf), hk_arg_int(3)}, 4,
         "axpy: parameter 2 'x' (const float *) got a buffer on device 1, but the kernel runs on device 0"},
        {axpy, {hk_arg_float(1), hk_arg_buffer(&f32buf), hk_arg_buffer(NULL), hk_arg_int(3)}, 4,
         "axpy: parameter 3 'y' (float *) got a NULL hk_buffer pointer; use hk_arg_null() to pass a null pointer deliberately"},
        {axpy, {hk_arg_float(1), hk_arg_int(7), hk_arg_buffer(&f32buf), hk_arg_int(3)}, 4,
         "axpy: parameter 2 'x' (const float *) got 7, expects a buffer of f32"},
        {axpy, {hk_arg_null(), hk_arg_buffer(&f32buf), hk_arg_buffer(&f32buf), hk_arg_int(3)}, 4,
         "axpy: parameter 1 'a' (float) got a null pointer, expects a number"},
        {"unsigned n", {hk_arg_int(-1)}, 1, "axpy: parameter 1 'n' (unsigned) value -1 out of range [0, 4294967295]"},
        {"size_t n", {hk_arg_float(-0.0 - 1.0)}, 1, "axpy: parameter 1 'n' (size_t) value -1 out of range [0, 18446744073709551615]"},
        {"uint8_t v", {hk_arg_uint(256)}, 1, "axpy: parameter 1 'v' (uint8_t) value 256 out of range [0, 255]"},
        {"int8_t v", {hk_arg_int(-129)}, 1, "axpy: parameter 1 'v' (int8_t) value -129 out of range [-128, 127]"},
        {"short v", {hk_arg_float(40000)}, 1, "axpy: parameter 1 'v' (short) value 40000 out of range [-32768, 32767]"},
        {"long v", {hk_arg_uint(9223372036854775808ull)}, 1,
         "axpy: parameter 1 'v' (long) value 9223372036854775808 out of range [-9223372036854775808, 9223372036854775807]"},
        {"long v", {hk_arg_float(9223372036854775808.0)}, 1,
         "axpy: parameter 1 'v' (long) value 9.223372036854776e+18 out of range [-9223372036854775808, 9223372036854775807]"},
        {"uint64_t v", {hk_arg_float(1e20)}, 1,
         "axpy: parameter 1 'v' (uint64_t) value 1e+20 out of range [0, 18446744073709551615]"},
        {"int v", {hk_arg_float(NAN)}, 1, "axpy: parameter 1 'v' (int) got nan, expects an integer"},
        {"int v", {hk_arg_float(INFINITY)}, 1, "axpy: parameter 1 'v' (int) got inf, expects an integer"},
        {"half h", {hk_arg_float(65520)}, 1, "axpy: parameter 1 'h' (half) value 65520 out of range [-65504, 65504]"},
        {"__half h", {hk_arg_int(-100000)}, 1, "axpy: parameter 1 'h' (__half) value -100000 out of range [-65504, 65504]"},
        {"__bf16 h", {hk_arg_float(3.4e38)}, 1, "axpy: parameter 1 'h' (__bf16) value 3.4e+38 out of range [-3.3895314e+38, 3.3895314e+38]"},
        {"float f", {hk_arg_float(1e39)}, 1, "axpy: parameter 1 'f' (float) value 1e+39 out of range [-3.4028235e+38, 3.4028235e+38]"},
        {"bool b", {hk_arg_int(2)}, 1, "axpy: parameter 1 'b' (bool) got 2, expects a boolean (true, false, 0 or 1)"},
        {"bool b", {hk_arg_float(1.0)}, 1, "axpy: parameter 1 'b' (bool) got 1, expects a boolean (true, false, 0 or 1)"},
        {"bool b", {hk_arg_buffer(&f32buf)}, 1, "axpy: parameter 1 'b' (bool) got a buffer, expects a boolean"},
        {"void *p", {hk_arg_bool(1)}, 1, "axpy: parameter 1 'p' (void *) got true, expects a buffer"},
        {"int, float *", {hk_arg_int(1), hk_arg_buffer(&f64buf)}, 2,
         "axpy: parameter 2 (float *) expects a buffer of f32, got a buffer of f64"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hkc_signature s;
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        if (hkc_signature_parse(cases[i].sig, &s, &err)) {
            tap_diag("parse failed: %s", err.data);
            bad++;
            continue;
        }
        unsigned char ka[64];
        int rc = hkc_signature_pack(&s, "axpy", cases[i].args, cases[i].nargs, 0, ka, &err);
        if (rc != HK_EARG || strcmp(err.data, cases[i].want)) {
            tap_diag("case %zu: rc %d\n#   got:  %s\n#   want: %s", i, rc, err.data, cases[i].want);
            bad++;
        }
        hkc_signature_free(&s);
        hkc_strbuf_free(&err);
    }
    tap_ok(bad == 0, "%zu argument mistakes each give HK_EARG with their own message",
           sizeof(cases) / sizeof(cases[0]));

    /* Distinct messages for distinct mistakes. */
    int dup = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        for (size_t j = i + 1; j < sizeof(cases) / sizeof(cases[0]); j++)
            dup += !strcmp(cases[i].want, cases[j].want);
    tap_ok(dup == 0, "no two error cases share a message");

    /* Accepted edge values. */
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    hkc_signature_parse("int a, unsigned b, long c, uint64_t d, void *p, MyStruct *q, half h", &s, &err);
    hk_arg ok_args[7] = {hk_arg_int(INT32_MIN), hk_arg_uint(UINT32_MAX), hk_arg_int(INT64_MIN),
                         hk_arg_uint(UINT64_MAX), hk_arg_buffer(&f64buf), hk_arg_buffer(&f32buf),
                         hk_arg_float(65519)};
    unsigned char ka[64];
    int rc = hkc_signature_pack(&s, NULL, ok_args, 7, 0, ka, &err);
    tap_ok(rc == 0, "range limits, void* and opaque pointers take any dtype, 65519 rounds to half max%s%s",
           rc ? ": " : "", err.data);
    hkc_strbuf_clear(&err);
    rc = hkc_signature_pack(&s, NULL, ok_args, 2, 0, ka, &err);
    tap_ok(rc == HK_EARG && !strncmp(err.data, "expects 7 arguments", 19),
           "without a kernel name the message has no prefix: %s", err.data);
    hkc_signature_free(&s);
    hkc_strbuf_free(&err);

    hkc_signature_parse("", &s, &err);
    tap_ok(hkc_signature_pack(&s, "k", NULL, 0, 0, NULL, &err) == 0, "no parameters, no arguments");
    hkc_strbuf_free(&err);
}

/* Vectors among scalars: random lanes pack where C puts them, padding zeroed. */
static void test_pack_vectors(void)
{
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int rc = hkc_signature_parse("char c, float4 v, double d, float3 w, short s, double2 q, "
                                 "uchar4 u, int2 i2, __half2 h, __hip_bfloat162 b, "
                                 "longlong2 ll, ushort3 us, char1 c1", &s, &err);
    tap_ok(rc == 0 && s.count == 13, "a signature of vectors and scalars parses%s%s",
           rc ? ": " : "", err.data);
    if (rc)
        return;
    unsigned char *ka = malloc(s.kernarg_size);
    int bad = 0;
    for (int iter = 0; iter < 1000 && ka; iter++) {
        double v[4], w[3], q[2], u[4], i2[2], h[2], b[2], ll[2], us[3], c1[1];
        for (int l = 0; l < 4; l++) {
            v[l] = (double)(float)((double)(int32_t)rng_next() / 64.0);
            u[l] = (double)(rng_next() & 0xff);
        }
        for (int l = 0; l < 3; l++) {
            w[l] = (double)(float)((double)(int32_t)rng_next() / 3.0);
            us[l] = (double)(rng_next() & 0xffff);
        }
        for (int l = 0; l < 2; l++) {
            q[l] = (double)(int64_t)rng_next() / 7.0;
            i2[l] = (double)(int32_t)rng_next();
            h[l] = hkc_f16_to_f32((uint16_t)(rng_next() & 0xfbff)); /* finite */
            b[l] = hkc_bf16_to_f32((uint16_t)(rng_next() & 0xff7f));
            ll[l] = (double)((int64_t)rng_next() >> 11); /* exact in a double */
        }
        c1[0] = (double)(int8_t)rng_next();
        int8_t c = (int8_t)rng_next();
        double d = (double)(int64_t)rng_next() / 3.0;
        int16_t sh = (int16_t)rng_next();
        hk_arg args[13] = {hk_arg_int(c), hk_arg_vector(v), hk_arg_float(d), hk_arg_vector(w),
                           hk_arg_int(sh), hk_arg_vector(q), hk_arg_vector(u), hk_arg_vector(i2),
                           hk_arg_vector(h), hk_arg_vector(b), hk_arg_vector(ll),
                           hk_arg_vector(us), hk_arg_vector(c1)};
        memset(ka, 0xAB, s.kernarg_size);
        rc = hkc_signature_pack(&s, "vec", args, 13, 0, ka, &err);
        if (rc) {
            tap_diag("pack failed: %s", err.data);
            bad++;
            break;
        }
        const unsigned char *at[13];
        for (int p = 0; p < 13; p++)
            at[p] = ka + s.params[p].offset;
        int good = (int8_t)at[0][0] == c && (int8_t)at[12][0] == (int8_t)c1[0];
        double gd;
        int16_t gs;
        memcpy(&gd, at[2], 8);
        memcpy(&gs, at[4], 2);
        good = good && gd == d && gs == sh;
        for (int l = 0; l < 4; l++) {
            float f;
            memcpy(&f, at[1] + 4 * l, 4);
            good = good && f == (float)v[l] && at[6][l] == (unsigned char)u[l];
        }
        for (int l = 0; l < 3; l++) {
            float f;
            uint16_t x;
            memcpy(&f, at[3] + 4 * l, 4);
            memcpy(&x, at[11] + 2 * l, 2);
            good = good && f == (float)w[l] && x == (uint16_t)us[l];
        }
        for (int l = 0; l < 2; l++) {
            double gq;
            int32_t gi;
            uint16_t gh, gb;
            int64_t gl;
            memcpy(&gq, at[5] + 8 * l, 8);
            memcpy(&gi, at[7] + 4 * l, 4);
            memcpy(&gh, at[8] + 2 * l, 2);
            memcpy(&gb, at[9] + 2 * l, 2);
            memcpy(&gl, at[10] + 8 * l, 8);
            good = good && gq == q[l] && gi == (int32_t)i2[l] && hkc_f16_to_f32(gh) == h[l] &&
                   hkc_bf16_to_f32(gb) == b[l] && gl == (int64_t)ll[l];
        }
        unsigned char mark[256] = {0};
        for (int p = 0; p < s.count; p++)
            memset(mark + s.params[p].offset, 1, s.params[p].size);
        for (uint32_t p = 0; p < s.kernarg_size; p++)
            if (!mark[p] && ka[p] != 0)
                good = 0;
        if (!good && bad++ < 3)
            tap_diag("vector round trip mismatch at iteration %d", iter);
    }
    tap_ok(bad == 0 && ka, "1000 random sets of vector lanes pack and unpack identically, "
                           "padding zeroed");
    free(ka);

    /* Lanes follow the scalar rules: rounding to f16, integral floats. */
    static const double lanes[4] = {1.0 + 1.0 / 2048, 65519.999, -0.0, 3.0};
    hkc_signature s2;
    hkc_strbuf_clear(&err);
    rc = hkc_signature_parse("__half2 h, short2 t", &s2, &err);
    unsigned char k2[8] = {0};
    hk_arg a2[2] = {hk_arg_vector(lanes), hk_arg_vector(lanes + 2)};
    if (rc == 0)
        rc = hkc_signature_pack(&s2, "vec", a2, 2, 0, k2, &err);
    uint16_t hx, hy;
    int16_t tx, ty;
    memcpy(&hx, k2, 2);
    memcpy(&hy, k2 + 2, 2);
    memcpy(&tx, k2 + 4, 2);
    memcpy(&ty, k2 + 6, 2);
    tap_ok(rc == 0 && hx == 0x3c00 && hy == 0x7bff && tx == 0 && ty == 3,
           "lanes convert as scalars do: f16 ties to even, 65519.999 is the largest f16, "
           "integral doubles to short%s%s", rc ? ": " : "", err.data);
    if (s2.count)
        hkc_signature_free(&s2);
    hkc_signature_free(&s);
    hkc_strbuf_free(&err);
}

/* A double just under f16's rounding edge packs as the largest f16, not as
 * infinity (the conversion goes through float). */
static void test_pack_f16_edge(void)
{
    hkc_signature sig;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = hkc_signature_parse("__half h", &sig, &err);
    uint16_t out = 0;
    hk_arg a = hk_arg_float(65519.999);
    if (r == 0)
        r = hkc_signature_pack(&sig, "edge", &a, 1, 0, &out, &err);
    tap_ok(r == 0 && out == 0x7bff, "65519.999 packs as the largest f16 (0x%04x, %s)", out, err.data);
    a = hk_arg_float(65520.0);
    hkc_strbuf_clear(&err);
    r = hkc_signature_pack(&sig, "edge", &a, 1, 0, &out, &err);
    tap_ok(r == HK_EARG && strstr(err.data, "out of range"), "65520 rounds to infinity: refused");
    hkc_signature_free(&sig);
    hkc_strbuf_free(&err);
}

int main(void)
{
    tap_init();
    test_types();
    test_lists();
    test_layouts();
    test_vector_types();
    test_vector_layouts();
    test_parse_errors();
    test_scan_basic();
    test_scan_extern_block_and_sync();
    test_scan_errors_and_linkage();
    test_scan_overloads_and_bounds();
    test_int_expr();
    test_scan_robust();
    test_messages_one_line();
    test_pack_roundtrip();
    test_pack_conversions();
    test_pack_errors();
    test_pack_vectors();
    test_pack_f16_edge();
    return tap_done();
}
