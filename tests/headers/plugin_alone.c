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
    printf("1..3\n");
    return 0;
}
