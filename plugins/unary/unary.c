/* The unary family: y = op(x) elementwise for f32, f16, bf16 and f64, a
 * contiguous and a strided (candle's convention) kernel each
 * (kernels/unary/unary.hip, embedded at build time). */
#include <stdio.h>

#include <hipkit/plugin.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_unary_sources[];
extern const hk_plugin_image hk_unary_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(unary);
HK_PLUGIN_EXPORT int hk_plugin_unary_init(const hk_plugin_api *api);

static const struct {
    const char *name, *doc;
} ops[] = {
    {"neg", "-x"},
    {"abs", "|x|"},
    {"exp", "e^x"},
    {"log", "ln x"},
    {"sqrt", "sqrt x"},
    {"rsqrt", "1 / sqrt x"},
    {"tanh", "tanh x"},
    {"sin", "sin x"},
    {"cos", "cos x"},
    {"gelu_erf", "0.5 x (1 + erf(x / sqrt 2))"},
    {"gelu", "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (tanh form)"},
    {"relu", "max(x, 0), NaN kept"},
    {"silu", "x / (1 + e^-x)"},
    {"sigmoid", "1 / (1 + e^-x)"},
};

static const struct {
    const char *name, *ctype, *note;
} types[] = {
    {"f32", "float", "f32; float4 when x and y are 16-byte aligned"},
    {"f16", "__half", "f16 storage, f32 math"},
    {"bf16", "__hip_bfloat16", "bf16 storage, f32 math"},
    {"f64", "double", "f64"},
};

int hk_plugin_unary_init(const hk_plugin_api *api)
{
    int r = api->register_family(api, "unary", "0.1.0",
                                 "y = op(x) elementwise: neg abs exp log sqrt rsqrt tanh sin cos "
                                 "gelu_erf gelu relu silu sigmoid");
    if (r == 0)
        r = api->add_source(api, "unary", "unary.hip", hk_unary_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "unary", hk_unary_images);
    /* contiguous: 1-D over n (parameter 2); strided: over numel (parameter 0) */
    hk_plugin_geometry gc = {HK_PLUGIN_GEOM_1D, 2, 256, 65536, 0, 0, 0, 0};
    hk_plugin_geometry gs = {HK_PLUGIN_GEOM_1D, 0, 256, 4096, 0, 0, 0, 0};
    char name[64], sig[192], doc[256];
    for (size_t o = 0; r == 0 && o < sizeof ops / sizeof ops[0]; o++) {
        for (size_t t = 0; r == 0 && t < sizeof types / sizeof types[0]; t++) {
            const char *c = types[t].ctype;
            snprintf(name, sizeof name, "%s_%s", ops[o].name, types[t].name);
            snprintf(sig, sizeof sig, "const %s *x, %s *y, size_t n", c, c);
            snprintf(doc, sizeof doc, "y = %s (%s)", ops[o].doc, types[t].note);
            r = api->add_kernel(api, "unary", "unary.hip", name, sig, &gc, doc);
            if (r != 0)
                break;
            snprintf(name, sizeof name, "%s_%s_strided", ops[o].name, types[t].name);
            snprintf(sig, sizeof sig,
                     "size_t numel, size_t num_dims, const size_t *info, const %s *x, %s *y", c, c);
            snprintf(doc, sizeof doc,
                     "y = %s (%s); x strided: info = dims[num_dims] then strides[num_dims], "
                     "y contiguous",
                     ops[o].doc, types[t].name);
            r = api->add_kernel(api, "unary", "unary.hip", name, sig, &gs, doc);
        }
    }
    return r;
}
