/* The affine family: y = a * x + b over contiguous buffers
 * (kernels/affine/affine.hip, embedded at build time). */
#include <hipkit/plugin.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_affine_sources[];
extern const hk_plugin_image hk_affine_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(affine);
HK_PLUGIN_EXPORT int hk_plugin_affine_init(const hk_plugin_api *api);

static const struct {
    const char *name, *signature, *doc;
} kernels[] = {
    {"affine_f32", "const float *x, float *y, float a, float b, size_t n", "y = a*x + b (f32)"},
    {"affine_f64", "const double *x, double *y, double a, double b, size_t n", "y = a*x + b (f64)"},
    {"affine_f16", "const __half *x, __half *y, float a, float b, size_t n",
     "y = a*x + b (f16 storage, f32 arithmetic)"},
    {"affine_bf16", "const __hip_bfloat16 *x, __hip_bfloat16 *y, float a, float b, size_t n",
     "y = a*x + b (bf16 storage, f32 arithmetic)"},
};

int hk_plugin_affine_init(const hk_plugin_api *api)
{
    int r = api->register_family(api, "affine", "0.1.0", "y = a * x + b, elementwise");
    if (r == 0)
        r = api->add_source(api, "affine", "affine.hip", hk_affine_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "affine", hk_affine_images);
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 4, 256, 4096, 0, 0, 0, 0};
    for (size_t i = 0; r == 0 && i < sizeof kernels / sizeof kernels[0]; i++)
        r = api->add_kernel(api, "affine", "affine.hip", kernels[i].name, kernels[i].signature,
                            &g, kernels[i].doc);
    return r;
}
