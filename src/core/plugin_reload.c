/* A plugin loaded again in a running session (hk_plugin_reload), after its
 * author rebuilt it. dlopen of the same path would hand back the library
 * already loaded, so a private copy of the new file is opened (and unlinked
 * at once: the mapping stays); its init runs in a new session and its
 * families take the old ones' places in the list. The old families are
 * retired, not freed: kernels, modules and names taken from them stay
 * valid, running the old code, until the context ends; the new families
 * compile (or take their AOT images) on first use. The old library stays
 * mapped, as every plugin does. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_internal.h"

/* Copies fd `in` to a new private file made from tmpl (mkstemps, ".so"
 * kept); 0, or -1 with the file removed. */
static int copy_into(int in, char *tmpl)
{
    int out = mkstemps(tmpl, 3);
    if (out < 0)
        return -1;
    char buf[1 << 16];
    ssize_t n = 0;
    int ok = lseek(in, 0, SEEK_SET) == 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0)
        ok = write(out, buf, (size_t)n) == n;
    ok = ok && n == 0;
    if (close(out) != 0 || !ok) {
        unlink(tmpl);
        return -1;
    }
    return 0;
}

/* A private copy of file: beside it as a hidden file (its folder is known
 * to allow running code, and the scanner skips dot files), else in
 * TMPDIR. The copy's path in out. */
static int private_copy(const char *file, const char *name, char *out, size_t cap,
                        hkc_strbuf *why)
{
    int in = open(file, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        hkc_strbuf_printf(why, "cannot read %s: %s", file, strerror(errno));
        return -1;
    }
    const char *slash = strrchr(file, '/'), *tmp = getenv("TMPDIR");
    int dirlen = slash ? (int)(slash - file) : 1;
    snprintf(out, cap, "%.*s/.hipkit-plugin-%s-XXXXXX.so", dirlen, slash ? file : ".", name);
    int r = copy_into(in, out);
    if (r != 0) {
        snprintf(out, cap, "%s/hipkit-plugin-%s-XXXXXX.so", tmp && *tmp ? tmp : "/tmp", name);
        r = copy_into(in, out);
    }
    if (r != 0)
        hkc_strbuf_printf(why, "cannot copy %s to load it again: %s", file, strerror(errno));
    close(in);
    return r;
}

/* The entries a reload of this plugin replaces: the families its last
 * session registered, or the entry that refused it. */
typedef struct reload_target {
    const pl_session *owner; /* NULL: a refused plugin */
    const pl_family *refusal;
} reload_target;

static int replaced(const reload_target *t, const pl_family *f)
{
    return t->owner ? f->owner == t->owner && !f->error : f == t->refusal;
}

/* The plugin `name` names: a family's, else a plugin's file name (a
 * refused plugin's entry is named so). Sets its plugin name and file. */
static int find_target(const hkc_plugins *ps, const char *name, reload_target *t,
                       const char **plugin, const char **file)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < ps->nfams; i++) {
            const pl_family *f = ps->fams[i];
            if (f->error ? strcmp(f->name, name) != 0
                         : strcmp(pass ? f->owner->plugin : f->name, name) != 0)
                continue;
            if (f->error && !hkc_plugin_valid_name(f->name))
                continue; /* a refused folder, not a plugin */
            t->owner = f->error ? NULL : f->owner;
            t->refusal = f->error ? f : NULL;
            *plugin = f->error ? f->name : f->owner->plugin;
            *file = f->path;
            return 0;
        }
    return HK_ENOTFOUND;
}

/* After a successful init: each replaced family's place goes to the new
 * family of the same name, if any; the other new ones follow at the end.
 * orig is the list before (n entries), the new families are those after
 * index `kept` of ps->fams. */
static int place_families(hkc_plugins *ps, pl_family **orig, int n, int kept,
                          const reload_target *t)
{
    int nnew = ps->nfams - kept, total = ps->nfams, w = 0;
    pl_family **fresh = ps->fams + kept, **list = malloc((size_t)total * sizeof *list);
    pl_family **ret = realloc(ps->retired, (size_t)(ps->nretired + n) * sizeof *ret);
    if (!list || !ret) {
        free(list);
        if (ret)
            ps->retired = ret;
        return HK_ENOMEM;
    }
    ps->retired = ret;
    char *taken = calloc((size_t)nnew + 1, 1);
    for (int i = 0; taken && i < n; i++) {
        if (!replaced(t, orig[i])) {
            list[w++] = orig[i];
            continue;
        }
        for (int j = 0; j < nnew; j++)
            if (!taken[j] && !strcmp(fresh[j]->name, orig[i]->name)) {
                taken[j] = 1;
                list[w++] = fresh[j];
                break;
            }
        ps->retired[ps->nretired++] = orig[i];
    }
    for (int j = 0; taken && j < nnew; j++)
        if (!taken[j])
            list[w++] = fresh[j];
    if (taken)
        memcpy(ps->fams, list, (size_t)w * sizeof *list);
    ps->nfams = taken ? w : ps->nfams;
    free(taken);
    free(list);
    return taken ? 0 : HK_ENOMEM;
}

/* Runs the new init with the replaced entries out of the list (so its
 * family names are free), then places its families, or puts the old list
 * back when it fails. */
static int swap_in(hk_context *ctx, hk_plugin_init_fn *init, unsigned abi_minor, const char *plugin,
                   const char *file, const reload_target *t, hkc_strbuf *why)
{
    hkc_plugins *ps = ctx->plugins;
    int n = ps->nfams, kept = 0;
    pl_family **orig = malloc((size_t)(n ? n : 1) * sizeof *orig);
    if (!orig)
        return HK_ENOMEM;
    memcpy(orig, ps->fams, (size_t)n * sizeof *orig);
    for (int i = 0; i < n; i++)
        if (!replaced(t, orig[i]))
            ps->fams[kept++] = orig[i];
    ps->nfams = kept;
    /* an init's own nonzero code means nothing to callers: its reason is in why */
    int r = hkc_plugin_run_init(ps, init, abi_minor, plugin, file, why) != 0 ? HK_EINVAL : 0;
    if (r == 0)
        r = place_families(ps, orig, n, kept, t);
    if (r != 0) { /* the new families are gone (or never were): the old list stands */
        for (int i = kept; i < ps->nfams; i++)
            hkc_plugin_family_free(ctx, ps->fams[i]);
        memcpy(ps->fams, orig, (size_t)n * sizeof *orig);
        ps->nfams = n;
    }
    free(orig);
    return r;
}

HK_API int hk_plugin_reload(hk_context *ctx, const char *name)
{
    if (!ctx || !name)
        return hkc_fail(ctx, HK_EINVAL, "hk_plugin_reload: context or name is NULL");
    hkc_plugins *ps = ctx->plugins;
    reload_target t;
    const char *plugin0, *file0;
    hkc_plugin_need(ps, name); /* a plugin not loaded yet loads as it is first */
    if (!ps || find_target(ps, name, &t, &plugin0, &file0) != 0)
        return hkc_fail(ctx, HK_ENOTFOUND, "no plugin '%s' to reload (hk_plugin_find lists the "
                        "families)", name);
    /* entries may be retired below: keep the names */
    char *plugin = pl_dupstr(plugin0), *file = pl_dupstr(file0), copy[4096];
    hkc_strbuf why;
    hkc_strbuf_init(&why);
    struct stat st;
    int r = HK_EFORMAT;
    if (!plugin || !file)
        r = HK_ENOMEM;
    else if (stat(file, &st) == 0 && (st.st_mode & S_IWOTH))
        hkc_strbuf_printf(&why, "%s is world-writable; refused", file);
    else if (private_copy(file, plugin, copy, sizeof copy, &why) == 0) {
        unsigned minor = 0;
        hk_plugin_init_fn *init = hkc_plugin_open(copy, plugin, &why, &minor);
        unlink(copy); /* mapped now, or refused: the file has no further use */
        r = init ? swap_in(ctx, init, minor, plugin, file, &t, &why) : HK_EFORMAT;
    }
    if (r != 0)
        r = hkc_fail(ctx, r, "plugin %s (%s) was not reloaded: %s; what is loaded stays as it was",
                     plugin, file, why.len ? why.data : hk_strerror(r));
    hkc_strbuf_free(&why);
    free(plugin);
    free(file);
    return r;
}
