/* plugin.h must compile on its own, first, in strict C99 with -Werror. */
#include <hipkit/plugin.h>
#include <stdio.h>

HK_PLUGIN_DEFINE(alone);

int main(void)
{
    hk_plugin_api api = {sizeof api, HK_PLUGIN_ABI_MAJOR, HK_PLUGIN_ABI_MINOR, 0, 0, 0, 0};
    printf("ok 1 - plugin.h compiles alone in C\n");
    printf("%s 2 - the table has its error field\n", HK_PLUGIN_API_HAS(&api, error) ? "ok" : "not ok");
    printf("%s 3 - the exported ABI is the header's\n", hk_plugin_alone_abi[0] == HK_PLUGIN_ABI_MAJOR ? "ok" : "not ok");
    /* ABI 1.4: a rule with an extent, and a host table as an older host
     * would hand it (only up to fail) */
    static const hk_plugin_extent ext[] = {{1, {3, -1, -1}, 1}};
    hk_plugin_rule rule = {sizeof rule, {HK_PLUGIN_GEOM_ROW_BLOCK, 0, 0, 0, 3, 4, 0, 0}, 4, 0, 0, ext, 1};
    hk_plugin_host old_host = {offsetof(hk_plugin_host, launch_config), 0, 0, 0, 0, 0, 0};
    printf("%s 4 - a rule names its extents\n", rule.extents[0].factors[0] == 3 && rule.nextents == 1 ? "ok" : "not ok");
    printf("%s 5 - HK_PLUGIN_HOST_HAS sees an older host's table end\n",
                !HK_PLUGIN_HOST_HAS(&old_host, launch_config) && HK_PLUGIN_HOST_HAS(&old_host, fail) ? "ok" : "not ok");
    printf("1..5\n");
    return 0;
}
