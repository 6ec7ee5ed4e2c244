/* Test plugin: dupa and dupb both register family "dupfam"; the second is
 * refused. It also keeps the api table to show late registration fails. */
#include <hipkit/plugin.h>
HK_PLUGIN_DEFINE(dupb);
HK_PLUGIN_EXPORT const hk_plugin_api *hk_plugin_dupb_kept;
const hk_plugin_api *hk_plugin_dupb_kept;
HK_PLUGIN_EXPORT int hk_plugin_dupb_init(const hk_plugin_api *api);
int hk_plugin_dupb_init(const hk_plugin_api *api)
{
    hk_plugin_dupb_kept = api;
    int r = api->register_family(api, "dupfam", "b", "registered by dupb");
    if (r == 0)
        r = api->add_source(api, "dupfam", "s.hip", "extern \"C\" __global__ void k(int *p) { p[0] = 1; }");
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0};
    if (r == 0)
        r = api->add_kernel(api, "dupfam", "s.hip", "k", "int *p", &g, "sets p[0] = 1");
    return r;
}
