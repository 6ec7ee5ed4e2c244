/* A plugin kernel's declared signature against its declaration in the
 * family's source, as kernel discovery reads it from the preprocessed text
 * (source_scan.c, type_alias.c): the code object only knows parameter
 * sizes, so `const double *x` registered for a float kernel would otherwise
 * pass and read wrong numbers. Checked when a plugin's module is compiled,
 * and for every kernel at once by hk_plugin_check_kernel (`hipkit plugins
 * --check`). */
#include <stdio.h>

#include "plugin_internal.h"

/* Do declared parameter d and the source's s take the same arguments? */
static int same_param(const hkc_param *d, const hkc_param *s)
{
    if (d->kind != s->kind || d->size != s->size || d->is_bool != s->is_bool)
        return 0;
    if (d->kind == HK_PARAM_POINTER) {
        if (d->is_const != s->is_const)
            return 0;
        /* pointees hipkit knows compare by dtype (size_t and unsigned long
         * alike); the rest (structs, void) by their spelling */
        if (d->dtype != HK_DTYPE_COUNT || s->dtype != HK_DTYPE_COUNT)
            return d->dtype == s->dtype;
        return !strcmp(d->type, s->type);
    }
    return d->dtype == s->dtype;
}

static const char *plugin_of(const pl_family *f)
{
    return f->owner && f->owner->plugin ? f->owner->plugin : f->name;
}

/* Compares k's declared signature with sk, the declaration discovery found:
 * 0, or HK_EARG with a message naming plugin, kernel, parameter and both
 * types. */
static int compare(hk_context *ctx, const pl_family *f, const pl_kernel *k,
                   const hkc_source_kernel *sk)
{
    hkc_signature d;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = hkc_signature_parse(k->signature, &d, &err);
    hkc_strbuf_free(&err);
    if (r != 0) /* add_kernel parsed it already: only memory can fail */
        return hkc_fail(ctx, r, "out of memory");
    const hkc_signature *s = &sk->sig;
    if (d.count != s->count) {
        r = hkc_fail(ctx, HK_EARG,
                     "plugin '%s': kernel %s.%s is declared with %d parameters (%s), but its "
                     "source (%s, line %d) has %d",
                     plugin_of(f), f->name, k->name, d.count, k->signature, k->source, sk->line,
                     s->count);
    }
    for (int i = 0; r == 0 && i < d.count; i++) {
        const hkc_param *dp = &d.params[i], *sp = &s->params[i];
        if (!same_param(dp, sp))
            r = hkc_fail(ctx, HK_EARG,
                         "plugin '%s': kernel %s.%s: parameter %d '%s' is declared '%s', but the "
                         "source (%s, line %d) has '%s'",
                         plugin_of(f), f->name, k->name, i + 1, dp->name, dp->type, k->source,
                         sk->line, sp->type);
    }
    hkc_signature_free(&d);
    return r;
}

int hkc_plugin_check_module(hk_context *ctx, const pl_family *f, const pl_kernel *k,
                            const hk_module *m)
{
    const hkc_modentry *e = m->entry;
    for (int i = 0; i < e->nsrc_kernels; i++)
        if (!strcmp(e->src_kernels[i].name, k->name))
            return e->src_kernels[i].unresolved ? 0 : compare(ctx, f, k, &e->src_kernels[i]);
    return 1;
}

HK_API int hk_plugin_check_kernel(hk_context *ctx, const char *family, const char *kernel)
{
    if (!ctx || !family || !kernel)
        return hkc_fail(ctx, HK_EINVAL, "hk_plugin_check_kernel: NULL argument");
    int fi = hk_plugin_find(ctx, family);
    if (fi < 0)
        return fi;
    pl_family *f = ctx->plugins->fams[fi];
    const pl_kernel *k = NULL;
    for (int i = 0; i < f->nks; i++)
        if (!strcmp(f->ks[i].name, kernel))
            k = &f->ks[i];
    if (!k) {
        hk_kernel *none;
        return hk_plugin_kernel(ctx, family, kernel, &none); /* the message lists the kernels */
    }
    /* the source's module of this device knows the declarations when it
     * was compiled (not an image): then nothing is compiled again */
    pl_source *src = &f->srcs[k->src];
    hk_module *m = src->mods ? src->mods[ctx->current] : NULL;
    int r = 0, keep = 1;
    if (!m || !m->entry->nsrc_kernels) {
        /* compiled as plugin_image.c compiles it; kept as the source's
         * module when it has none yet (the same code a JIT gives) */
        char name[256];
        snprintf(name, sizeof name, "plugin-%s-%s", f->name, src->name);
        hk_compile_options o;
        hk_compile_options_defaults(&o);
        o.name = name;
        keep = !m;
        size_t nd = ctx->ndevices ? (size_t)ctx->ndevices : 1;
        if (keep && !src->mods && !(src->mods = calloc(nd, sizeof *src->mods)))
            return hkc_fail(ctx, HK_ENOMEM, "out of memory");
        m = NULL;
        r = hk_module_compile(ctx, src->text, &o, &m);
    }
    if (r != 0) {
        char *why = strdup(hk_errmsg(ctx));
        hkc_fail(ctx, r, "plugin '%s': family '%s', source '%s': %s", plugin_of(f), f->name,
                 src->name, why ? why : hk_strerror(r));
        free(why);
        return r;
    }
    if (keep)
        src->mods[ctx->current] = m;
    r = hkc_plugin_check_module(ctx, f, k, m);
    if (r == 1)
        r = hkc_fail(ctx, HK_ENOTFOUND,
                     "plugin '%s': kernel %s.%s: discovery found no declaration of it in source "
                     "'%s' (a template or a name made by the preprocessor that the scan cannot "
                     "follow): not checked",
                     plugin_of(f), f->name, k->name, k->source);
    if (!keep)
        hk_module_free(m);
    return r;
}
