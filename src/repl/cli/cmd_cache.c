/* `hipkit cache stats|clear|prune [MAX]`: the compile cache from the
 * shell. MAX is read by hk_size_parse, the grammar of HIPKIT_CACHE_MAX. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void human_size(char *out, size_t n, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, n, "%llu B", (unsigned long long)bytes);
    else
        snprintf(out, n, "%.1f %s", v, units[u]);
}

void hkl_cli_print_cache(const hk_cache_stats *st)
{
    char size[32], cap[32];
    human_size(size, sizeof size, st->bytes);
    human_size(cap, sizeof cap, st->max_bytes);
    printf("  mode:    %s\n", st->mode);
    printf("  folder:  %s\n", st->dir[0] ? st->dir : "(none)");
    printf("  entries: %llu\n", (unsigned long long)st->entries);
    printf("  size:    %s (%llu bytes)\n", size, (unsigned long long)st->bytes);
    printf("  cap:     %s\n", st->max_bytes ? cap : "none");
}

int hkl_cmd_cache(int argc, char **argv)
{
    if (argc < 3)
        return hkl_cli_bad_usage("%s", "'cache' needs one of: stats, clear, prune [MAX]");
    const char *what = argv[2];
    uint64_t max = 0;
    if (strcmp(what, "prune") == 0) {
        if (argc > 4)
            return hkl_cli_bad_usage("'cache prune' takes one MAX: '%s'", argv[4]);
        if (argc == 4 && hk_size_parse(argv[3], &max) != 0)
            return hkl_cli_bad_usage("'cache prune': %s", hk_errmsg(NULL));
    } else if (strcmp(what, "stats") == 0 || strcmp(what, "clear") == 0) {
        if (argc > 3)
            return hkl_cli_bad_usage("'cache %s' takes no arguments", what);
    } else {
        return hkl_cli_bad_usage("unknown cache command '%s'", what);
    }

    hk_context *ctx = hkl_cli_context(HKL_NO_PLUGINS);
    if (ctx == NULL)
        return 1;
    int status = 0;
    hk_cache_stats before, after;
    if (hk_cache_get_stats(ctx, &before) != 0) {
        fprintf(stderr, "hipkit: cache: %s\n", hk_errmsg(ctx));
        hk_context_destroy(ctx);
        return 1;
    }
    if (strcmp(what, "stats") == 0) {
        printf("cache:\n");
        hkl_cli_print_cache(&before);
    } else {
        int rc = what[0] == 'c' ? hk_cache_clear(ctx) : hk_cache_prune(ctx, max);
        if (rc != 0 || hk_cache_get_stats(ctx, &after) != 0) {
            fprintf(stderr, "hipkit: cache %s: %s\n", what,
                    hk_errmsg(ctx)[0] ? hk_errmsg(ctx) : hk_strerror(rc));
            status = 1;
        } else {
            char b0[32], b1[32];
            human_size(b0, sizeof b0, before.bytes - (before.bytes >= after.bytes ? after.bytes : before.bytes));
            human_size(b1, sizeof b1, after.bytes);
            uint64_t gone = before.entries >= after.entries ? before.entries - after.entries : 0;
            printf("%s %s: removed %llu entr%s (%s); %llu left (%s)\n",
                   what[0] == 'c' ? "cleared" : "pruned", before.dir[0] ? before.dir : "the cache",
                   (unsigned long long)gone, gone == 1 ? "y" : "ies", b0,
                   (unsigned long long)after.entries, b1);
        }
    }
    hk_context_destroy(ctx);
    return status;
}
