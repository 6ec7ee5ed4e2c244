/* The cast family: y = (TO)x elementwise between every two of f16 bf16 f32
 * f64 i8 i16 i32 i64 u8 u16 u32 u64, contiguous and strided (candle's
 * convention) (kernels/cast/cast.hip, embedded at build time; its header
 * gives the rounding, saturation and wrapping rules). */
#include <stdio.h>

#include <hipkit/plugin.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_cast_sources[];
extern const hk_plugin_image hk_cast_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(cast);
HK_PLUGIN_EXPORT int hk_plugin_cast_init(const hk_plugin_api *api);

static const struct {
    const char *name, *ctype;
    int is_float;
} types[] = {
    {"f16", "__half", 1},         {"bf16", "__hip_bfloat16", 1}, {"f32", "float", 1},
    {"f64", "double", 1},         {"i8", "signed char", 0},     {"i16", "short", 0},
    {"i32", "int", 0},            {"i64", "long long", 0},      {"u8", "unsigned char", 0},
    {"u16", "unsigned short", 0}, {"u32", "unsigned int", 0},   {"u64", "unsigned long long", 0},
};

static const char *rule(int from_float, int to_float)
{
    if (to_float)
        return "rounded to nearest even";
    if (from_float)
        return "truncated toward zero; out of range saturates, NaN gives 0";
    return "modulo 2^bits";
}

int hk_plugin_cast_init(const hk_plugin_api *api)
{
    int r = api->register_family(api, "cast", "0.1.0",
                                 "y = (TO)x elementwise between f16 bf16 f32 f64 i8..i64 u8..u64");
    if (r == 0)
        r = api->add_source(api, "cast", "cast.hip", hk_cast_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "cast", hk_cast_images);
    /* contiguous: 1-D over n (parameter 2); strided: over numel (parameter 0) */
    hk_plugin_geometry gc = {HK_PLUGIN_GEOM_1D, 2, 256, 65536, 0, 0, 0, 0};
    hk_plugin_geometry gs = {HK_PLUGIN_GEOM_1D, 0, 256, 4096, 0, 0, 0, 0};
    const size_t nt = sizeof types / sizeof types[0];
    char name[64], sig[192], doc[256];
    for (size_t a = 0; r == 0 && a < nt; a++) {
        for (size_t b = 0; r == 0 && b < nt; b++) {
            if (a == b)
                continue;
            const char *ta = types[a].ctype, *tb = types[b].ctype;
            const char *why = rule(types[a].is_float, types[b].is_float);
            snprintf(name, sizeof name, "cast_%s_%s", types[a].name, types[b].name);
            snprintf(sig, sizeof sig, "const %s *x, %s *y, size_t n", ta, tb);
            snprintf(doc, sizeof doc, "y = (%s)x, x %s (%s)", types[b].name, types[a].name, why);
            r = api->add_kernel(api, "cast", "cast.hip", name, sig, &gc, doc);
            if (r != 0)
                break;
            snprintf(name, sizeof name, "cast_%s_%s_strided", types[a].name, types[b].name);
            snprintf(sig, sizeof sig,
                     "size_t numel, size_t num_dims, const size_t *info, const %s *x, %s *y", ta,
                     tb);
            snprintf(doc, sizeof doc,
                     "y = (%s)x, x %s strided: info = dims[num_dims] then strides[num_dims], "
                     "y contiguous (%s)",
                     types[b].name, types[a].name, why);
            r = api->add_kernel(api, "cast", "cast.hip", name, sig, &gs, doc);
        }
    }
    return r;
}
