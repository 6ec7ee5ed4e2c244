/* The binary family: c = a OP b for OP in add sub mul div minimum maximum,
 * over eight element types, contiguous (OP_T) and strided (OP_T_strided,
 * candle's layout) (kernels/binary/binary.hip, embedded at build time). */
#include <hipkit/plugin.h>

#include <stdio.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_binary_sources[];
extern const hk_plugin_image hk_binary_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(binary);
HK_PLUGIN_EXPORT int hk_plugin_binary_init(const hk_plugin_api *api);

static const struct {
    const char *name, *what;
} ops[] = {
    {"add", "a + b"},
    {"sub", "a - b"},
    {"mul", "a * b"},
    {"div", "a / b"},
    {"minimum", "min(a, b), NaN if either is NaN"},
    {"maximum", "max(a, b), NaN if either is NaN"},
};

static const struct {
    const char *name, *ctype, *note;
} types[] = {
    {"f32", "float", "f32"},
    {"f16", "__half", "f16 storage, f32 arithmetic"},
    {"bf16", "__hip_bfloat16", "bf16 storage, f32 arithmetic"},
    {"f64", "double", "f64"},
    {"i32", "int", "i32, wrapping; div truncates, x/0 undefined"},
    {"i64", "long long", "i64, wrapping; div truncates, x/0 undefined"},
    {"u8", "unsigned char", "u8, wrapping; x/0 undefined"},
    {"u32", "unsigned int", "u32, wrapping; x/0 undefined"},
};

int hk_plugin_binary_init(const hk_plugin_api *api)
{
    int r = api->register_family(api, "binary", "0.1.0",
                                 "c = a op b, elementwise (add sub mul div minimum maximum)");
    if (r == 0)
        r = api->add_source(api, "binary", "binary.hip", hk_binary_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "binary", hk_binary_images);
    /* contiguous: over n (parameter 3); strided: over numel (parameter 0) */
    const hk_plugin_geometry contiguous = {HK_PLUGIN_GEOM_1D, 3, 256, 65536, 0, 0, 0, 0};
    const hk_plugin_geometry strided = {HK_PLUGIN_GEOM_1D, 0, 256, 4096, 0, 0, 0, 0};
    char name[64], sig[256], doc[256];
    for (size_t o = 0; r == 0 && o < sizeof ops / sizeof ops[0]; o++) {
        for (size_t t = 0; r == 0 && t < sizeof types / sizeof types[0]; t++) {
            const char *T = types[t].ctype;
            snprintf(name, sizeof name, "%s_%s", ops[o].name, types[t].name);
            snprintf(sig, sizeof sig, "const %s *a, const %s *b, %s *c, size_t n", T, T, T);
            snprintf(doc, sizeof doc, "c[0..n) = %s, contiguous (%s)", ops[o].what, types[t].note);
            r = api->add_kernel(api, "binary", "binary.hip", name, sig, &contiguous, doc);
            if (r != 0)
                break;
            snprintf(name, sizeof name, "%s_%s_strided", ops[o].name, types[t].name);
            snprintf(sig, sizeof sig,
                     "size_t numel, size_t num_dims, const size_t *info, const %s *a, "
                     "const %s *b, %s *c",
                     T, T, T);
            snprintf(doc, sizeof doc,
                     "c[0..numel) = %s; info = dims, a strides, b strides (elements; "
                     "NULL: contiguous) (%s)",
                     ops[o].what, types[t].note);
            r = api->add_kernel(api, "binary", "binary.hip", name, sig, &strided, doc);
        }
    }
    return r;
}
