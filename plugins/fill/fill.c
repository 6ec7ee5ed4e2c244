/* The fill family: y[i] = v, one kernel per element type
 * (kernels/fill/fill.hip, embedded at build time). */
#include <hipkit/plugin.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_fill_sources[];
extern const hk_plugin_image hk_fill_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(fill);
HK_PLUGIN_EXPORT int hk_plugin_fill_init(const hk_plugin_api *api);

static const struct {
    const char *name, *signature, *doc;
} kernels[] = {
    {"fill_f32", "float *y, float v, size_t n", "y[0..n) = v (f32)"},
    {"fill_f64", "double *y, double v, size_t n", "y[0..n) = v (f64)"},
    {"fill_f16", "__half *y, float v, size_t n", "y[0..n) = v rounded to f16"},
    {"fill_bf16", "__hip_bfloat16 *y, float v, size_t n", "y[0..n) = v rounded to bf16"},
    {"fill_i32", "int *y, int v, size_t n", "y[0..n) = v (i32)"},
    {"fill_i64", "long long *y, long long v, size_t n", "y[0..n) = v (i64)"},
    {"fill_u8", "unsigned char *y, unsigned char v, size_t n", "y[0..n) = v (u8, 0 to 255)"},
    {"fill_u32", "unsigned int *y, unsigned int v, size_t n", "y[0..n) = v (u32)"},
};

int hk_plugin_fill_init(const hk_plugin_api *api)
{
    int r = api->register_family(api, "fill", "0.1.0", "fill a buffer with one value");
    if (r == 0)
        r = api->add_source(api, "fill", "fill.hip", hk_fill_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "fill", hk_fill_images);
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 2, 256, 4096, 0, 0, 0, 0};
    for (size_t i = 0; r == 0 && i < sizeof kernels / sizeof kernels[0]; i++)
        r = api->add_kernel(api, "fill", "fill.hip", kernels[i].name, kernels[i].signature, &g,
                            kernels[i].doc);
    return r;
}
