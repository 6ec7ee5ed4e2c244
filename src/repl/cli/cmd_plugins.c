/* `hipkit plugins`: every kernel family with its kernels, their signatures
 * and doc lines; `hipkit info` prints the short form. */
#include <stdio.h>
#include <string.h>

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

/* `hipkit plugins NAME`: the family NAME whole, else the kernels and ops
 * whose names hold NAME, under their family. Returns how many it printed. */
static int print_matching(hk_context *ctx, const char *name)
{
    int shown = 0;
    for (int i = 0; i < hk_plugin_count(ctx); i++) {
        hk_plugin_info p;
        if (hk_plugin_get(ctx, i, &p) != 0 || (p.error && p.error[0]))
            continue;
        int whole = strcmp(p.name, name) == 0, header = 0;
        for (int k = 0; k < p.nkernels + p.nops; k++) {
            hk_plugin_kernel_info ki;
            hk_plugin_op_info oi;
            int is_op = k >= p.nkernels;
            if (is_op ? hk_plugin_op_get(ctx, i, k - p.nkernels, &oi) != 0
                      : hk_plugin_kernel_get(ctx, i, k, &ki) != 0)
                continue;
            if (!whole && strstr(is_op ? oi.name : ki.name, name) == NULL)
                continue;
            if (!header++)
                printf("  %-8s %s: %s\n", p.name, p.version, p.description);
            if (is_op)
                printf("      op %s(%s)\n          %s\n", oi.name, oi.usage, oi.doc);
            else
                printf("      %s(%s)\n          %s\n", ki.name, ki.signature, ki.doc);
            shown++;
        }
    }
    return shown;
}

/* `hipkit plugins [NAME]`: every family with its kernels and their doc
 * lines, or those NAME picks. */
int hkl_cmd_plugins(int argc, char **argv)
{
    if (argc > 3 || (argc == 3 && argv[2][0] == '-'))
        return hkl_cli_bad_usage("'plugins' takes at most a family or kernel name: '%s'", argv[argc - 1]);
    hk_context *ctx = hkl_cli_context();
    if (ctx == NULL)
        return 1;
    int rc = 0;
    if (argc == 3) {
        if (print_matching(ctx, argv[2]) == 0) {
            fprintf(stderr, "hipkit: no kernel family or kernel named like '%s' ('hipkit plugins' lists them)\n",
                    argv[2]);
            rc = 1;
        }
    } else {
        hkl_cli_print_plugins(ctx, 1);
    }
    hk_context_destroy(ctx);
    return rc;
}
