/* Test plugin whose ABI symbol is one byte, not the two unsigned ints of a
 * version: must be refused, not read past its end. */
#include <hipkit/plugin.h>
HK_PLUGIN_EXPORT const unsigned char hk_plugin_shortabi_abi = 1;
HK_PLUGIN_EXPORT int hk_plugin_shortabi_init(const hk_plugin_api *api);
int hk_plugin_shortabi_init(const hk_plugin_api *api)
{
    return api->register_family(api, "shortabi", "1", "never loaded");
}
