/* Test plugin whose init fails after registering: nothing of it stays. */
#include <hipkit/plugin.h>
HK_PLUGIN_DEFINE(initfail);
HK_PLUGIN_EXPORT int hk_plugin_initfail_init(const hk_plugin_api *api);
int hk_plugin_initfail_init(const hk_plugin_api *api)
{
    api->register_family(api, "initfail", "1", "half made");
    api->error(api, "deliberate failure number %d", 42);
    return 1;
}
