/* Test plugin: hands NULL to every slot of the API table and of the host
 * table an op gets. Each must refuse it and go on; init then registers
 * family "nullfam" with op "poke", which reports how many refusals it saw,
 * op "lost", which fails the plugin way (-1) after a host call failed, op
 * "wild", which asks about an integer argument as if it were a buffer, and
 * op "mute", which fails without a message. */
#include <stddef.h>
#include <stdint.h>

#include <hipkit/plugin.h>
HK_PLUGIN_DEFINE(nullargs);

static int poke(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                int nargs)
{
    (void)args;
    (void)nargs;
    const char *volatile none = NULL;
    int refused = 0;
    refused += host->launch(NULL, "k", NULL, 0) < 0;
    refused += host->launch(call, NULL, NULL, 0) < 0;
    refused += host->launch(call, "k", NULL, 2) < 0;
    refused += host->launch(call, "k", NULL, -1) < 0;
    refused += host->length(call, NULL) == 0;
    refused += host->dtype(call, NULL) != NULL;
    refused += host->fail(NULL, "no call") < 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    refused += host->fail(call, none) < 0;
#pragma GCC diagnostic pop
    return host->fail(call, "refused %d of 8", refused);
}

/* A scratch buffer of a dtype that does not exist: the host fails the call
 * (HK_EARG, its message) and the op only says -1, as plugins do. */
static int lost(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    (void)args;
    (void)nargs;
    if (!host->scratch(call, "nope", 1))
        return -1;
    return 0;
}

/* Asks about an integer argument as if it were a buffer (its bits read as
 * a pointer): the host must answer "no buffer", not crash. */
static int wild(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    if (nargs < 1)
        return host->fail(call, "expects one argument");
    const void *p = args[0].v.buf;
    char byte = 0;
    int up = host->upload(call, (void *)(uintptr_t)p, 0, &byte, 1);
    return host->fail(call, "length %zu dtype '%s' overlap %d upload %d", host->length(call, p),
                      host->dtype(call, p), host->overlap(call, p, p), up < 0);
}

/* Fails without a message: the call must not show an earlier call's. */
static int mute(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    (void)host, (void)call, (void)args, (void)nargs;
    return -5;
}

HK_PLUGIN_EXPORT int hk_plugin_nullargs_init(const hk_plugin_api *api);
int hk_plugin_nullargs_init(const hk_plugin_api *api)
{
    hk_plugin_geometry g = {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0};
    int refused = 0;
    refused += api->register_family(NULL, "nullfam", "1", "d") < 0;
    refused += api->add_source(NULL, "nullfam", "s.hip", "") < 0;
    refused += api->add_kernel(NULL, "nullfam", "s.hip", "k", "int *p", &g, "") < 0;
    refused += api->add_image(NULL, "nullfam", "s.hip", "host", "x", "", "x", 1) < 0;
    refused += api->add_op(NULL, "nullfam", "poke", "", poke, "") < 0;
    api->error(NULL, "no api");
    const char *volatile none = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    api->error(api, none);
#pragma GCC diagnostic pop
    refused += api->register_family(api, NULL, NULL, NULL) < 0;
    if (refused != 6)
        return 1;
    /* NULL version and description are allowed: they read as "" */
    int r = api->register_family(api, "nullfam", NULL, NULL);
    if (r == 0)
        r = api->add_op(api, "nullfam", "poke", NULL, poke, NULL);
    if (r == 0)
        r = api->add_op(api, "nullfam", "lost", NULL, lost, NULL);
    if (r == 0)
        r = api->add_op(api, "nullfam", "wild", NULL, wild, NULL);
    if (r == 0)
        r = api->add_op(api, "nullfam", "mute", NULL, mute, NULL);
    return r;
}
