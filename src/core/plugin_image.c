/* Which code a plugin source runs as on a device: the AOT image (add_image)
 * that fits the device best and was built from the source the plugin
 * embeds, else the source compiled by the JIT. */
#include <stdio.h>

#include "env_values.h"
#include "cache.h"
#include "plugin_internal.h"

/* The source key an image records: its source, module name and options,
 * hashed as the compile cache hashes them, but without the backend, target
 * and toolchain, which the image names on its own. A version field first,
 * so a change of what is hashed never matches an older key. */
HK_API int hk_plugin_source_key(const char *source, const hk_compile_options *o, char out[33])
{
    if (!source || !out)
        return HK_EINVAL;
    hk_compile_options d;
    hk_compile_options_defaults(&d);
    if (!o)
        o = &d;
    hkc_key_builder *kb = hkc_key_begin();
    if (!kb)
        return HK_ENOMEM;
    static const uint32_t version = 1;
    hkc_key_add(kb, "image-source-key", &version, sizeof version);
    for (int i = 0; i < o->nflags; i++)
        hkc_key_add_str(kb, "flag", o->flags[i]);
    for (int i = 0; i < o->ndefines; i++)
        hkc_key_add_str(kb, "define", o->defines[i]);
    for (int i = 0; i < o->ninclude_dirs; i++)
        hkc_key_add_str(kb, "include", o->include_dirs[i]);
    hkc_key_add_str(kb, "name", o->name ? o->name : "module");
    hkc_key_add_str(kb, "source", source);
    hkc_cache_key k = hkc_key_end(kb);
    hkc_key_hex(&k, out);
    return 0;
}

/* The source key at the end of an image's toolchain tag ("TOOLCHAIN
 * source-key=HEX", what hkc-aot and `hipkit compile --plugin` write), or
 * NULL when the tag has none (a hand-made image: nothing to check). */
static const char *tag_source_key(const char *tag)
{
    static const char mark[] = "source-key=";
    size_t n = strlen(tag), m = sizeof mark - 1;
    if (n < m + 32)
        return NULL;
    const char *k = tag + n - 32;
    if (strncmp(k - m, mark, m) || (k - m != tag && k[-(long)m - 1] != ' '))
        return NULL;
    for (int i = 0; i < 32; i++)
        if (!strchr("0123456789abcdef", k[i]))
            return NULL;
    return k;
}

/* Whether image im was built from the source text whose key is `have`
 * (the key of what the plugin embeds now). An image left over from an
 * older source would run the old code. Images with no key in their tag
 * (hand-made) cannot be checked and count as current. */
static int image_is_current(const pl_image *im, const char *have)
{
    const char *want = tag_source_key(im->toolchain);
    return !want || !have || !strncmp(have, want, 32);
}

/* Says that the stale image that would have been used is ignored, naming
 * the plugin, the image and why, and what runs instead. */
static void warn_stale(hk_context *ctx, const pl_family *f, const pl_source *src,
                       const pl_image *stale, const char *have, const pl_image *used)
{
    char instead[160];
    if (used)
        snprintf(instead, sizeof instead, "using the %s %s image instead", used->backend,
                 used->target);
    else
        snprintf(instead, sizeof instead, "compiling the source instead");
    hkc_warn(ctx, "plugin family '%s' (%s): the %s %s image of %s is stale (built from another "
             "source: key %.32s, the embedded source's %s); %s; rebuild the plugin's images",
             f->name, f->path, stale->backend, stale->target, src->name,
             tag_source_key(stale->toolchain), have, instead);
}

/* How well an image for `target` fits a device whose target id is `dev`: 0
 * not at all, 1000 exactly, else the backend's rank among compatible ones
 * (higher is closer). A backend may rank an image above the exact name (a
 * CUDA sm_90a cubin on an sm_90 device: what its JIT makes there). */
static int image_fit(const hkc_backend *be, const char *target, const char *dev)
{
    int rank = be->ops->image_rank ? be->ops->image_rank(target, dev) : 0;
    if (!strcmp(target, dev))
        return rank > 1000 ? rank : 1000;
    return rank;
}

/* image_fit by backend name, for tests: -1 when that backend's module is
 * not loaded (its rule is unknown). */
int hkc_plugin_image_fit(const hk_context *ctx, const char *backend, const char *target,
                         const char *dev)
{
    for (int i = 0; i < ctx->nbackends; i++)
        if (!strcmp(ctx->backends[i].ops->name, backend))
            return ctx->backends[i].ops->probe ? image_fit(&ctx->backends[i], target, dev) : -1;
    return -1;
}

static int aot_enabled(void)
{
    return hkc_env_flag("HIPKIT_PLUGIN_AOT", 1);
}

/* Loads the best image of src for the current device as an AOT module.
 * Returns 0 with *out set, or 1 when no image fits or the one that fits
 * does not load (then the caller compiles the source). */
static int load_image(hk_context *ctx, const pl_family *f, const pl_source *src,
                      const char *name, hk_module **out)
{
    if (!src->nimgs || !aot_enabled())
        return 1;
    hkc_device *dev = hkc_current_device(ctx);
    const char *backend = dev->be->ops->name, *target = dev->info.target;
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = name;
    char key[33];
    const char *have = hk_plugin_source_key(src->text, &o, key) == 0 ? key : NULL;
    const pl_image *best = NULL, *stale = NULL;
    int best_fit = 0, stale_fit = 0;
    for (int i = 0; i < src->nimgs; i++) {
        const pl_image *im = &src->imgs[i];
        int fit = strcmp(im->backend, backend) ? 0
                                               : image_fit(dev->be, im->target, target);
        int current = image_is_current(im, have);
        if (current && fit > best_fit) {
            best = im;
            best_fit = fit;
        } else if (!current && fit > stale_fit) {
            stale = im;
            stale_fit = fit;
        }
    }
    /* one warning, for the stale image that would have won */
    if (stale && stale_fit > best_fit)
        warn_stale(ctx, f, src, stale, have, best);
    if (!best)
        return 1;
    hk_module *m;
    if (hk_module_load_bytes(ctx, best->data, best->size, name, &m) != 0) {
        /* e.g. a host image from another hipkit host ABI: JIT instead */
        hkc_warn(ctx, "plugin family '%s': the %s %s image of %s does not load (%s); compiling "
                 "the source instead", f->name, best->backend, best->target, src->name,
                 hk_errmsg(ctx));
        return 1;
    }
    m->origin = HK_ORIGIN_AOT;
    /* the declarations the plugin's signatures are checked against
     * (plugin_check.c): discovery alone, no compile. Where it cannot run (no
     * preprocessor here) the image still runs, unchecked, as before. */
    (void)hkc_module_discover(m, src->text, &o);
    *out = m;
    return 0;
}

/* The images of a family's sources, for tests and tools: the i-th of all,
 * in source then registration order. */
int hkc_plugin_image_get(const hk_context *ctx, const char *family, int i, const char **source,
                         const char **backend, const char **target, const char **toolchain,
                         const void **data, size_t *size)
{
    hkc_plugins *ps = ctx ? ctx->plugins : NULL;
    hkc_plugin_need(ps, family);
    for (int fi = 0; ps && family && fi < ps->nfams; fi++) {
        const pl_family *f = ps->fams[fi];
        if (f->error || strcmp(f->name, family))
            continue;
        for (int s = 0; s < f->nsrcs; s++) {
            if (i < f->srcs[s].nimgs) {
                const pl_image *im = &f->srcs[s].imgs[i];
                *source = f->srcs[s].name;
                *backend = im->backend;
                *target = im->target;
                *toolchain = im->toolchain;
                *data = im->data;
                *size = im->size;
                return 0;
            }
            i -= f->srcs[s].nimgs;
        }
    }
    return HK_ENOTFOUND;
}

int hkc_plugin_source_module(hk_context *ctx, const pl_family *f, pl_source *src, hk_module **out)
{
    int dev = ctx->current;
    size_t nd = ctx->ndevices ? (size_t)ctx->ndevices : 1;
    if (!src->mods && !(src->mods = calloc(nd, sizeof *src->mods)))
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    if (!src->mods[dev]) {
        char name[256];
        snprintf(name, sizeof name, "plugin-%s-%s", f->name, src->name);
        hk_compile_options o;
        hk_compile_options_defaults(&o);
        o.name = name;
        /* tools/aot/hkc_aot.c compiles images exactly this way: keep them in step */
        ctx->graph_paused++; /* a first use compiles while recording: the launch is what is recorded */
        int r = load_image(ctx, f, src, name, &src->mods[dev]) == 0
                    ? 0
                    : hk_module_compile(ctx, src->text, &o, &src->mods[dev]);
        ctx->graph_paused--;
        if (r != 0) {
            char *why = strdup(hk_errmsg(ctx));
            hkc_fail(ctx, r, "plugin family '%s', source '%s' (%s): %s", f->name, src->name,
                     f->path, why ? why : hk_strerror(r));
            free(why);
            return r;
        }
    }
    *out = src->mods[dev];
    return 0;
}
