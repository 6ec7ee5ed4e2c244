/* Test plugin: its image of stale.hip was built from an older text
 * (stale_old.hip, p[0] = 1) than the source it embeds (p[0] = 2): the
 * loader must ignore the image and compile the source. */
#include <hipkit/plugin.h>
extern const hk_plugin_image hk_stale_images[];
HK_PLUGIN_DEFINE(stale);
HK_PLUGIN_EXPORT int hk_plugin_stale_init(const hk_plugin_api *api);
int hk_plugin_stale_init(const hk_plugin_api *api)
{
    int r = api->register_family(api, "stale", "1", "an image older than its source");
    if (r == 0)
        r = api->add_source(api, "stale", "stale.hip",
                            "// What the stale plugin's image was built from (tests/plugins/stale.c).\n"
                            "extern \"C\" __global__ void put(int *p) { p[0] = 2; }\n");
    if (r == 0)
        r = hk_plugin_add_images(api, "stale", hk_stale_images);
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0};
    if (r == 0)
        r = api->add_kernel(api, "stale", "stale.hip", "put", "int *p", &g, "sets p[0] = 2");
    return r;
}
