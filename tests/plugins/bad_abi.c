/* Test plugin built for a future minor ABI: must be refused. */
#include <hipkit/plugin.h>
HK_PLUGIN_EXPORT const unsigned hk_plugin_badabi_abi[2] = {HK_PLUGIN_ABI_MAJOR, HK_PLUGIN_ABI_MINOR + 7};
HK_PLUGIN_EXPORT int hk_plugin_badabi_init(const hk_plugin_api *api);
int hk_plugin_badabi_init(const hk_plugin_api *api)
{
    return api->register_family(api, "badabi", "1", "never loaded");
}
