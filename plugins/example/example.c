/* hipkit-plugin-example: a minimal third-party hipkit plugin.
 *
 * One family, "example", with one kernel, scale_add (example.hip). It
 * includes only <hipkit/plugin.h> (found through `pkg-config --cflags
 * hipkit-plugin`) and does not link libhipkit. See README.md. */
#include <hipkit/plugin.h>

/* example.hip as a C string literal, written by the Makefile. */
static const char example_hip[] =
#include "example_hip.h"
    ;

/* The ABI it was built for, and the entry point: both named after the
 * file, hipkit-plugin-example.so. */
HK_PLUGIN_DEFINE(example);
HK_PLUGIN_EXPORT int hk_plugin_example_init(const hk_plugin_api *api);

int hk_plugin_example_init(const hk_plugin_api *api)
{
    /* 1-D launch over parameter 4 (n, counting from 0): 256 threads a
     * block, at most 4096 blocks. */
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 4, 256, 4096, 0, 0, 0, 0};
    int r = api->register_family(api, "example", "0.1.0", "an out-of-tree example: y = a*x + b");
    if (r == 0)
        r = api->add_source(api, "example", "example.hip", example_hip);
    if (r == 0)
        r = api->add_kernel(api, "example", "example.hip", "scale_add",
                            "const float *x, float *y, float a, float b, size_t n", &g,
                            "y[i] = a * x[i] + b for i in [0, n) (f32)");
    if (r != 0)
        api->error(api, "registering the example family failed (%d)", r);
    return r;
}
