/* Test plugin whose declared signature disagrees with its source: scale_f32
 * takes float pointers, but is registered as taking doubles. The check at
 * first compile and `hipkit plugins --check badsig` must refuse it, naming
 * the parameter and both types; ok_f32 is right and passes. */
#include <hipkit/plugin.h>

HK_PLUGIN_DEFINE(badsig);
HK_PLUGIN_EXPORT int hk_plugin_badsig_init(const hk_plugin_api *api);

static const char src[] =
    "#include <hip/hip_runtime.h>\n"
    "typedef float real;\n"
    "extern \"C\" __global__ void scale_f32(const real *x, real *y, float a, size_t n) {\n"
    "  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x) y[i] = a * x[i];\n"
    "}\n"
    "extern \"C\" __global__ void ok_f32(float *y, size_t n) {\n"
    "  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x) y[i] = 1.0f;\n"
    "}\n";

int hk_plugin_badsig_init(const hk_plugin_api *api)
{
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 3, 64, 16, 0, 0, 0, 0};
    hk_plugin_geometry g1 = {HK_PLUGIN_GEOM_1D, 1, 64, 16, 0, 0, 0, 0};
    int r = api->register_family(api, "badsig", "1", "a wrong pointer type in a signature");
    if (r == 0)
        r = api->add_source(api, "badsig", "badsig.hip", src);
    if (r == 0)
        r = api->add_kernel(api, "badsig", "badsig.hip", "scale_f32",
                            "const double *x, double *y, float a, size_t n", &g, "wrong: doubles");
    if (r == 0)
        r = api->add_kernel(api, "badsig", "badsig.hip", "ok_f32", "float *y, size_t n", &g1,
                            "right");
    return r;
}
