/* `hipkit info`: backends (with the reason one is unavailable), devices,
 * the compile cache and the plugin families, in one screen. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* "key": "value", with the separator before it unless first. */
static void json_kv(const char *key, const char *value, int first)
{
    printf("%s\"%s\": ", first ? "" : ", ", key);
    json_str(value);
}

static void json_backends(hk_context *ctx)
{
    printf("  \"backends\": [");
    for (int i = 0; i < hk_backend_count(ctx); i++) {
        hk_backend_info b;
        if (hk_backend_get(ctx, i, &b) != 0)
            continue;
        printf("%s\n    {", i ? "," : "");
        json_kv("name", b.name, 1);
        printf(", \"available\": %s, \"devices\": %d", b.available ? "true" : "false", b.device_count);
        json_kv("reason", b.reason, 0);
        json_kv("toolchain", b.toolchain, 0);
        printf("}");
    }
    printf("\n  ],\n  \"devices\": [");
    int cur = hk_device_current(ctx);
    for (int i = 0; i < hk_device_count(ctx); i++) {
        hk_device_info d;
        if (hk_device_get(ctx, i, &d) != 0)
            continue;
        printf("%s\n    {\"id\": %d", i ? "," : "", i);
        json_kv("backend", d.backend, 0);
        printf(", \"index\": %d", d.index);
        json_kv("name", d.name, 0);
        json_kv("target", d.target, 0);
        printf(", \"memory\": %llu, \"compute_units\": %d, \"warp_size\": %d, \"managed_memory\": %s,"
               " \"max_threads_per_block\": %u, \"current\": %s}",
               (unsigned long long)d.total_memory, d.compute_units, d.warp_size,
               d.managed_memory ? "true" : "false", d.max_threads_per_block, i == cur ? "true" : "false");
    }
    printf("\n  ],\n");
}

/* `hipkit info --json`: the same facts for scripts. */
static void json_info(hk_context *ctx)
{
    printf("{\n  ");
    json_kv("version", HK_VERSION_STRING, 1);
    printf(",\n");
    json_backends(ctx);
    hk_cache_stats st;
    if (hk_cache_get_stats(ctx, &st) == 0) {
        printf("  \"cache\": {");
        json_kv("dir", st.dir, 1);
        json_kv("mode", st.mode, 0);
        printf(", \"entries\": %llu, \"bytes\": %llu, \"max_bytes\": %llu},\n",
               (unsigned long long)st.entries, (unsigned long long)st.bytes, (unsigned long long)st.max_bytes);
    }
    printf("  \"plugins\": [");
    for (int i = 0; i < hk_plugin_count(ctx); i++) {
        hk_plugin_info p;
        if (hk_plugin_get(ctx, i, &p) != 0)
            continue;
        printf("%s\n    {", i ? "," : "");
        json_kv("name", p.name, 1);
        json_kv("version", p.version, 0);
        json_kv("description", p.description, 0);
        json_kv("path", p.path, 0);
        json_kv("error", p.error, 0);
        printf(", \"kernels\": %d, \"ops\": %d}", p.nkernels, p.nops);
    }
    printf("\n  ]\n}\n");
}

int hkl_cmd_info(int argc, char **argv)
{
    int json = argc == 3 && strcmp(argv[2], "--json") == 0;
    if (argc > 2 && !json)
        return hkl_cli_bad_usage("'info' takes only --json: '%s'", argv[2]);
    hk_context *ctx = hkl_cli_context(HKL_PROBE_PLUGINS);
    if (ctx == NULL)
        return 1;
    if (json) {
        json_info(ctx);
        hk_context_destroy(ctx);
        return 0;
    }
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
