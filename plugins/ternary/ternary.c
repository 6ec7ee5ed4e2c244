/* The ternary family: where, y = cond ? t : f, over eight element types,
 * contiguous (where_T) and strided (where_T_strided, candle's layout)
 * (kernels/ternary/ternary.hip, embedded at build time). */
#include <hipkit/plugin.h>

#include <stdio.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_ternary_sources[];
extern const hk_plugin_image hk_ternary_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(ternary);
HK_PLUGIN_EXPORT int hk_plugin_ternary_init(const hk_plugin_api *api);

static const struct {
    const char *name, *ctype;
} types[] = {
    {"f32", "float"},  {"f16", "__half"},    {"bf16", "__hip_bfloat16"}, {"f64", "double"},
    {"i32", "int"},    {"i64", "long long"}, {"u8", "unsigned char"},    {"u32", "unsigned int"},
};

int hk_plugin_ternary_init(const hk_plugin_api *api)
{
    int r = api->register_family(api, "ternary", "0.1.0", "y = cond ? t : f, elementwise (where)");
    if (r == 0)
        r = api->add_source(api, "ternary", "ternary.hip", hk_ternary_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "ternary", hk_ternary_images);
    /* contiguous: over n (parameter 4); strided: over numel (parameter 0) */
    const hk_plugin_geometry contiguous = {HK_PLUGIN_GEOM_1D, 4, 256, 4096, 0, 0, 0, 0};
    const hk_plugin_geometry strided = {HK_PLUGIN_GEOM_1D, 0, 256, 4096, 0, 0, 0, 0};
    char name[64], sig[256], doc[256];
    for (size_t t = 0; r == 0 && t < sizeof types / sizeof types[0]; t++) {
        const char *T = types[t].ctype;
        snprintf(name, sizeof name, "where_%s", types[t].name);
        snprintf(sig, sizeof sig,
                 "const unsigned char *cond, const %s *t, const %s *f, %s *y, size_t n", T, T, T);
        snprintf(doc, sizeof doc, "y[0..n) = cond ? t : f (u8 cond, %s values), contiguous",
                 types[t].name);
        r = api->add_kernel(api, "ternary", "ternary.hip", name, sig, &contiguous, doc);
        if (r != 0)
            break;
        snprintf(name, sizeof name, "where_%s_strided", types[t].name);
        snprintf(sig, sizeof sig,
                 "size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, "
                 "const %s *t, const %s *f, %s *y",
                 T, T, T);
        snprintf(doc, sizeof doc,
                 "y[0..numel) = cond ? t : f (%s); info = dims, cond/t/f strides (elements; "
                 "NULL: contiguous)",
                 types[t].name);
        r = api->add_kernel(api, "ternary", "ternary.hip", name, sig, &strided, doc);
    }
    return r;
}
