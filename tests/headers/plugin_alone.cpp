// plugin.h must compile on its own, first, in C++ with -Werror.
#include <hipkit/plugin.h>
#include <cstdio>

HK_PLUGIN_DEFINE(alone);

int main()
{
    hk_plugin_api api = {sizeof api, HK_PLUGIN_ABI_MAJOR, HK_PLUGIN_ABI_MINOR, 0, 0, 0, 0};
    std::printf("ok 1 - plugin.h compiles alone in C++\n");
    std::printf("%s 2 - the table has its error field\n", HK_PLUGIN_API_HAS(&api, error) ? "ok" : "not ok");
    std::printf("%s 3 - the exported ABI is the header's\n", hk_plugin_alone_abi[1] == HK_PLUGIN_ABI_MINOR ? "ok" : "not ok");
    std::printf("1..3\n");
    return 0;
}
