/* Which code a plugin source runs as on a device: the AOT image (add_image)
 * that fits the device best, else the source compiled by the JIT. */
#include <stdio.h>

#include "plugin_internal.h"

/* How well an image for `target` fits a device whose target id is `dev`: 0
 * not at all, 1000 exactly, else the backend's rank among compatible ones
 * (higher is closer). */
static int image_fit(const hkc_backend *be, const char *target, const char *dev)
{
    if (!strcmp(target, dev))
        return 1000;
    return be->ops->image_rank ? be->ops->image_rank(target, dev) : 0;
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
    const char *e = getenv("HIPKIT_PLUGIN_AOT");
    return !(e && (!strcmp(e, "off") || !strcmp(e, "0") || !strcmp(e, "no")));
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
    const pl_image *best = NULL;
    int best_fit = 0;
    for (int i = 0; i < src->nimgs; i++) {
        const pl_image *im = &src->imgs[i];
        int fit = strcmp(im->backend, backend) ? 0
                                               : image_fit(dev->be, im->target, target);
        if (fit > best_fit) {
            best = im;
            best_fit = fit;
        }
    }
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
        int r = load_image(ctx, f, src, name, &src->mods[dev]) == 0
                    ? 0
                    : hk_module_compile(ctx, src->text, &o, &src->mods[dev]);
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
