/* `hipkit plugins`: every kernel family with its kernels, their signatures
 * and doc lines; `hipkit info` prints the short form. */
#include <stdio.h>

#include "cli.h"

void hkl_cli_print_plugins(hk_context *ctx, int kernels)
{
    int n = hk_plugin_count(ctx);
    if (n == 0)
        printf("  none found\n");
    for (int i = 0; i < n; i++) {
        hk_plugin_info p;
        if (hk_plugin_get(ctx, i, &p) != 0)
            continue;
        if (p.error && p.error[0]) {
            printf("  %s: refused: %s\n", p.name, p.error);
            continue;
        }
        printf("  %-8s %s, %d kernel%s: %s (%s)\n", p.name, p.version, p.nkernels,
               p.nkernels == 1 ? "" : "s", p.description, p.path);
        for (int k = 0; kernels && k < p.nkernels; k++) {
            hk_plugin_kernel_info ki;
            if (hk_plugin_kernel_get(ctx, i, k, &ki) == 0)
                printf("      %s(%s)\n          %s\n", ki.name, ki.signature, ki.doc);
        }
        for (int o = 0; kernels && o < p.nops; o++) {
            hk_plugin_op_info oi;
            if (hk_plugin_op_get(ctx, i, o, &oi) == 0)
                printf("      op %s(%s)\n          %s\n", oi.name, oi.usage, oi.doc);
        }
    }
}

/* `hipkit plugins`: every family with its kernels and their doc lines. */
int hkl_cmd_plugins(int argc, char **argv)
{
    if (argc > 2)
        return hkl_cli_bad_usage("'plugins' takes no arguments: '%s'", argv[2]);
    hk_context *ctx = hkl_cli_context();
    if (ctx == NULL)
        return 1;
    hkl_cli_print_plugins(ctx, 1);
    hk_context_destroy(ctx);
    return 0;
}
