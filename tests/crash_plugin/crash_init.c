/* Test plugin whose init segfaults: `hipkit cache stats` must not load it,
 * `hipkit info` must list it as refused (tests/repl/test_plugin_crash.sh). */
#include <hipkit/plugin.h>
HK_PLUGIN_DEFINE(crashinit);
HK_PLUGIN_EXPORT int hk_plugin_crashinit_init(const hk_plugin_api *api);
int hk_plugin_crashinit_init(const hk_plugin_api *api)
{
    api->register_family(api, "crashinit", "1", "crashes in its init");
    /* volatile: the compiler may not drop the faulting load */
    int *volatile null = 0;
    return *null;
}
