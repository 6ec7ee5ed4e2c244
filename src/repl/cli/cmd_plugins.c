/* `hipkit plugins`: every kernel family with its kernels, their signatures
 * and doc lines; `hipkit info` prints the short form. `hipkit plugins
 * --check NAME` compiles a family's sources and checks every kernel's
 * declared signature against the source. */
#include <stdio.h>
#include <stdlib.h>
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

/* One line per kernel of family `name`: ok, mismatch (the reason),
 * unchecked (why) or failed (its source did not compile), then a summary.
 * 0 when every kernel is ok or unchecked, else 1. */
static int check_family(hk_context *ctx, const char *name)
{
    int fi = hk_plugin_find(ctx, name);
    hk_plugin_info p;
    if (fi < 0 || hk_plugin_get(ctx, fi, &p) != 0) {
        fprintf(stderr, "hipkit: %s\n", hk_errmsg(ctx));
        return 1;
    }
    printf("%s %s (%s): %d kernel%s against the source\n", p.name, p.version, p.path, p.nkernels,
           p.nkernels == 1 ? "" : "s");
    int nok = 0, nbad = 0, nunchecked = 0, nfailed = 0;
    for (int k = 0; k < p.nkernels; k++) {
        hk_plugin_kernel_info ki;
        if (hk_plugin_kernel_get(ctx, fi, k, &ki) != 0)
            continue;
        int r = hk_plugin_check_kernel(ctx, name, ki.name);
        /* the message names plugin and kernel: the line says them already */
        const char *why = hk_errmsg(ctx), *at = strstr(why, ki.name);
        if (at && !strncmp(at + strlen(ki.name), ": ", 2))
            why = at + strlen(ki.name) + 2;
        if (r == 0) {
            printf("  ok         %s\n", ki.name);
            nok++;
        } else if (r == HK_ENOTFOUND) {
            printf("  unchecked  %s: %s\n", ki.name, why);
            nunchecked++;
        } else if (r == HK_EARG) {
            printf("  MISMATCH   %s: %s\n", ki.name, why);
            nbad++;
        } else { /* the source did not compile, or memory ran out */
            printf("  FAILED     %s: %s\n", ki.name, why);
            nfailed++;
        }
    }
    printf("%s: %d ok, %d mismatched, %d unchecked", p.name, nok, nbad, nunchecked);
    if (nfailed)
        printf(", %d failed", nfailed);
    printf("\n");
    return nbad || nfailed ? 1 : 0;
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

/* `hipkit plugins [NAME | --check NAME]`: every family with its kernels and
 * their doc lines, those NAME picks, or family NAME checked. */
int hkl_cmd_plugins(int argc, char **argv)
{
    int check = argc > 2 && !strcmp(argv[2], "--check");
    if (check && argc != 4)
        return hkl_cli_bad_usage("'plugins --check' takes one family name%s", "");
    if (!check && (argc > 3 || (argc == 3 && argv[2][0] == '-')))
        return hkl_cli_bad_usage("'plugins' takes a family or kernel name, or --check NAME: '%s'",
                                 argv[argc - 1]);
    /* images carry no declarations: every source is compiled to be checked */
    if (check)
        setenv("HIPKIT_PLUGIN_AOT", "off", 1);
    hk_context *ctx = hkl_cli_context(HKL_PROBE_PLUGINS);
    if (ctx == NULL)
        return 1;
    int rc = 0;
    if (check) {
        rc = check_family(ctx, argv[3]);
    } else if (argc == 3) {
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
