/* The contexts subcommands work in. None needs a GPU, so each falls back
 * to the host backend rather than fail when the default cannot be used. */
#include <stdio.h>

#include "cli.h"
#include "inspect.h"

hk_context *hkl_cli_context(int plugins)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.no_plugins = plugins == HKL_NO_PLUGINS;
    o.probe_plugins = plugins == HKL_PROBE_PLUGINS;
    hk_context *ctx = NULL;
    int rc = hk_context_create(&o, &ctx);
    if (rc != 0) {
        const char *msg = hk_errmsg(NULL);
        fprintf(stderr, "hipkit: %s\n", msg[0] ? msg : hk_strerror(rc));
        o.backend = "host";
        o.device = 0;
        if (hk_context_create(&o, &ctx) != 0)
            return NULL;
        fprintf(stderr, "hipkit: using the host backend instead\n");
    }
    return ctx;
}

hk_context *hkl_inspect_context(char *why, size_t cap)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.quiet = 1;
    hk_context *ctx = NULL;
    if (hk_context_create(&o, &ctx) == 0)
        return ctx;
    snprintf(why, cap, "%s", hk_errmsg(NULL));
    o.backend = "host";
    o.device = 0;
    return hk_context_create(&o, &ctx) == 0 ? ctx : NULL;
}
