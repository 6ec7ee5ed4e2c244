/* Test plugin built as for plugin ABI 1.3 (before add_kernel_rule and the
 * ABI 1.4 host calls): it exports minor 3 and uses only what 1.3 had, so a
 * newer hipkit must load it and run its kernel and op unchanged. */
#include <hipkit/plugin.h>

HK_PLUGIN_EXPORT const unsigned hk_plugin_oldminor_abi[2];
HK_PLUGIN_EXPORT const unsigned hk_plugin_oldminor_abi[2] = {HK_PLUGIN_ABI_MAJOR, 3};
HK_PLUGIN_EXPORT int hk_plugin_oldminor_init(const hk_plugin_api *api);

static const char src[] =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void twice_f32(const float *x, float *y, size_t n) {\n"
    "  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x) y[i] = 2 * x[i];\n"
    "}\n";

/* four(x, y): y = 4x, two launches through the 1.3 host table */
static int four(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                int nargs)
{
    if (nargs != 2)
        return host->fail(call, "expects x and y");
    hk_plugin_arg a[3] = {args[0], args[1], {HK_PLUGIN_ARG_UINT, {0}}};
    a[2].v.u = host->length(call, args[1].v.buf);
    int r = host->launch(call, "twice_f32", a, 3);
    a[0] = args[1];
    return r ? r : host->launch(call, "twice_f32", a, 3);
}

int hk_plugin_oldminor_init(const hk_plugin_api *api)
{
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 2, 64, 32, 0, 0, 0, 0};
    int r = api->register_family(api, "oldminor", "1.3", "built for plugin ABI 1.3");
    if (r == 0)
        r = api->add_source(api, "oldminor", "old.hip", src);
    if (r == 0)
        r = api->add_kernel(api, "oldminor", "old.hip", "twice_f32",
                            "const float *x, float *y, size_t n", &g, "y = 2x");
    if (r == 0)
        r = api->add_op(api, "oldminor", "four", "x, y", four, "y = 4x in two launches");
    return r;
}
