/* `hipkit info`: backends (with the reason one is unavailable), devices,
 * the compile cache and the plugin families, in one screen. */
#include <stdio.h>

#include "cli.h"

int hkl_cmd_info(int argc, char **argv)
{
    if (argc > 2)
        return hkl_cli_bad_usage("'info' takes no arguments: '%s'", argv[2]);
    hk_context *ctx = hkl_cli_context();
    if (ctx == NULL)
        return 1;
    printf("hipkit %s\n\nbackends:\n", HK_VERSION_STRING);
    for (int i = 0; i < hk_backend_count(ctx); i++) {
        hk_backend_info b;
        if (hk_backend_get(ctx, i, &b) != 0)
            continue;
        if (b.available)
            printf("  %-6s available (%d device%s); toolchain: %s\n", b.name, b.device_count,
                   b.device_count == 1 ? "" : "s", b.toolchain && b.toolchain[0] ? b.toolchain : "none");
        else
            printf("  %-6s unavailable: %s\n", b.name, b.reason && b.reason[0] ? b.reason : "unknown reason");
    }
    printf("\ndevices:\n");
    int cur = hk_device_current(ctx);
    for (int i = 0; i < hk_device_count(ctx); i++) {
        hk_device_info d;
        if (hk_device_get(ctx, i, &d) != 0)
            continue;
        printf("  %d%s %s:%d  %s\n", i, i == cur ? "*" : " ", d.backend, d.index, d.name);
        printf("      target %s, %.1f GiB, %d compute units, warp size %d, managed memory %s,"
               " max %u threads per block\n",
               d.target, (double)d.total_memory / (1024.0 * 1024 * 1024), d.compute_units,
               d.warp_size, d.managed_memory ? "yes" : "no", d.max_threads_per_block);
    }
    printf("\ncache:\n");
    hk_cache_stats st;
    if (hk_cache_get_stats(ctx, &st) == 0)
        hkl_cli_print_cache(&st);
    else
        printf("  unknown: %s\n", hk_errmsg(ctx));
    printf("\nplugins (folders: the build's or the install's, then HIPKIT_PLUGIN_PATH):\n");
    hkl_cli_print_plugins(ctx, 0);
    hk_context_destroy(ctx);
    return 0;
}
