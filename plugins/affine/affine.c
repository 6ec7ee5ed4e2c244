/* The affine family: y = a * x + b over contiguous buffers
 * (kernels/affine/affine.hip, embedded at build time). */
#include <hipkit/plugin.h>
#include <stdio.h>

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

/* A host-side op: y = a*(a*x + b) + b, two launches of affine_<dtype>, the
 * second reading what the first wrote. */
static int affine_twice(const hk_plugin_host *host, const hk_plugin_call *call,
                        const hk_plugin_arg *args, int nargs)
{
    if (nargs != 4 || args[0].kind != HK_PLUGIN_ARG_BUFFER || args[1].kind != HK_PLUGIN_ARG_BUFFER)
        return host->fail(call, "expects two buffers and two numbers, got %d arguments", nargs);
    char kernel[32];
    snprintf(kernel, sizeof kernel, "affine_%s", host->dtype(call, args[0].v.buf));
    hk_plugin_arg a[5] = {args[0], args[1], args[2], args[3], {HK_PLUGIN_ARG_UINT, {0}}};
    a[4].v.u = host->length(call, args[1].v.buf);
    int r = host->launch(call, kernel, a, 5);
    if (r != 0)
        return r;
    a[0] = args[1];
    return host->launch(call, kernel, a, 5);
}

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
    if (r == 0 && HK_PLUGIN_API_HAS(api, add_op))
        r = api->add_op(api, "affine", "affine_twice", "x, y, a, b", affine_twice,
                        "y = a*(a*x + b) + b: two launches, the second on what the first wrote");
    return r;
}
