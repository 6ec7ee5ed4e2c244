/* Test plugin whose rules are wrong in three ways; each registration must
 * be refused with its reason, and init then fails with all of them. */
#include <stddef.h>

#include <hipkit/plugin.h>

HK_PLUGIN_DEFINE(badrule);
HK_PLUGIN_EXPORT int hk_plugin_badrule_init(const hk_plugin_api *api);

static const char src[] =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void k(const float *x, float *y, int rows, int cols) {}\n";

int hk_plugin_badrule_init(const hk_plugin_api *api)
{
    const char *sig = "const float *x, float *y, int rows, int cols";
    int r = api->register_family(api, "badrule", "1", "refused rules");
    if (r == 0)
        r = api->add_source(api, "badrule", "k.hip", src);
    if (r != 0)
        return r;
    int refused = 0;
    /* a row kind needs add_kernel_rule */
    hk_plugin_geometry row = {HK_PLUGIN_GEOM_ROW_BLOCK, 0, 0, 0, 2, 3, 0, 0};
    refused += api->add_kernel(api, "badrule", "k.hip", "k", sig, &row, "") < 0;
    /* an extent must name a pointer, its factors integers */
    static const hk_plugin_extent on_scalar[] = {{2, {3, -1, -1}, 1}};
    hk_plugin_rule r1 = {sizeof r1, row, 4, 0, 0, on_scalar, 1};
    refused += api->add_kernel_rule(api, "badrule", "k.hip", "k", sig, &r1, "") < 0;
    static const hk_plugin_extent by_pointer[] = {{1, {0, -1, -1}, 1}};
    hk_plugin_rule r2 = {sizeof r2, row, 4, 0, 0, by_pointer, 1};
    refused += api->add_kernel_rule(api, "badrule", "k.hip", "k", sig, &r2, "") < 0;
    /* a size that does not even cover geom */
    hk_plugin_rule r3 = {offsetof(hk_plugin_rule, geom), row, 0, 0, 0, NULL, 0};
    refused += api->add_kernel_rule(api, "badrule", "k.hip", "k", sig, &r3, "") < 0;
    /* may_be_null (1.9) marks pointers only, and parameters that exist */
    hk_plugin_rule r4 = {sizeof r4, row, 4, 0, 0, NULL, 0, 1ull << 2};
    refused += api->add_kernel_rule(api, "badrule", "k.hip", "k", sig, &r4, "") < 0;
    hk_plugin_rule r5 = {sizeof r5, row, 4, 0, 0, NULL, 0, 1ull << 9};
    refused += api->add_kernel_rule(api, "badrule", "k.hip", "k", sig, &r5, "") < 0;
    api->error(api, "%d of 6 refused", refused);
    return 1;
}
