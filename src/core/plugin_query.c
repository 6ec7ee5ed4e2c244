/* Queries: what the loaded plugins registered, for listings, docs and
 * callers that find a family by name. Entries are indexed in load order,
 * refused plugins included (their error set), so a listing shows why a
 * plugin is missing. Plugins load when first needed (plugin_load.c): a
 * family asked for by name loads its own plugin, a listing (the count)
 * every one; an index, once given, keeps naming the same entry. */
#include "plugin_internal.h"

int hkc_plugin_family_index(const hkc_plugins *ps, const char *name)
{
    for (int i = 0; ps && name && i < ps->nfams; i++)
        if (!ps->fams[i]->error && !strcmp(ps->fams[i]->name, name))
            return i;
    return -1;
}

HK_API int hk_plugin_count(const hk_context *ctx)
{
    if (!ctx || !ctx->plugins)
        return 0;
    hkc_plugins_load_all(ctx->plugins);
    return ctx->plugins->nfams;
}

/* The entry at index i, or NULL with the error said (out is checked here
 * too: every caller fills one). */
static const pl_family *entry_at(const hk_context *ctx, int i, const void *out)
{
    /* the entries loaded so far: an index came from the count or a find */
    int n = ctx && ctx->plugins ? ctx->plugins->nfams : 0;
    if (!ctx || !out || i < 0 || i >= n) {
        hkc_fail(ctx, HK_EINVAL, "plugin index %d out of range [0, %d)", i, n);
        return NULL;
    }
    return ctx->plugins->fams[i];
}

/* 0 when i indexes one of the n kernels or ops (`what`) of f. */
static int check_index(const hk_context *ctx, const pl_family *f, int i, int n, const char *what)
{
    if (i < 0 || i >= n)
        return hkc_fail(ctx, HK_EINVAL, "family '%s' has %d %s; %d is out of range", f->name, n,
                        what, i);
    return 0;
}

HK_API int hk_plugin_get(const hk_context *ctx, int i, hk_plugin_info *out)
{
    const pl_family *f = entry_at(ctx, i, out);
    if (!f)
        return HK_EINVAL;
    out->name = f->name;
    out->version = f->version;
    out->description = f->description;
    out->path = f->path;
    out->nkernels = f->nks;
    out->nops = f->nops;
    out->error = f->error ? f->error : "";
    return 0;
}

HK_API int hk_plugin_op_get(const hk_context *ctx, int plugin, int i, hk_plugin_op_info *out)
{
    const pl_family *f = entry_at(ctx, plugin, out);
    if (!f)
        return HK_EINVAL;
    int r = check_index(ctx, f, i, f->nops, "ops");
    if (r != 0)
        return r;
    out->name = f->ops[i].name;
    out->usage = f->ops[i].usage;
    out->doc = f->ops[i].doc;
    return 0;
}

HK_API int hk_plugin_kernel_get(const hk_context *ctx, int plugin, int i, hk_plugin_kernel_info *out)
{
    const pl_family *f = entry_at(ctx, plugin, out);
    if (!f)
        return HK_EINVAL;
    int r = check_index(ctx, f, i, f->nks, "kernels");
    if (r != 0)
        return r;
    out->name = f->ks[i].name;
    out->signature = f->ks[i].signature;
    out->doc = f->ks[i].doc;
    out->geometry = f->ks[i].geom.kind;
    return 0;
}

HK_API int hk_plugin_find(const hk_context *ctx, const char *family)
{
    if (!ctx)
        return HK_EINVAL;
    int i = hkc_plugin_need(ctx->plugins, family);
    if (i >= 0)
        return i;
    /* name the loaded families: the usual mistake is a typo or a plugin
     * that was refused (hk_plugin_get says why) */
    const hkc_plugins *ps = ctx->plugins;
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    for (int j = 0; ps && j < ps->nfams; j++)
        if (!ps->fams[j]->error)
            hkc_strbuf_printf(&s, "%s%s", s.len ? ", " : "", ps->fams[j]->name);
    int r = hkc_fail(ctx, HK_ENOTFOUND, "no plugin family '%s' (loaded: %s)",
                     family ? family : "(null)", s.len ? s.data : "none");
    hkc_strbuf_free(&s);
    return r;
}
