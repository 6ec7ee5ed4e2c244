/* Context: probes the backends, lists their devices, selects one, and owns
 * the compile cache. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_values.h"
#include "internal.h"

/* Backends in selection order. hip and cuda are modules
 * (hipkit-backend-NAME.so) loaded when present, so libhipkit itself needs
 * no vendor library; one that is missing or cannot load is still listed,
 * with the reason, so `hipkit info` can say why it is absent. */
typedef struct backend_slot {
    const char *name;
    const hkc_backend_ops *ops; /* built in; NULL for modules */
} backend_slot;

static const backend_slot backend_slots[] = {
    {"hip", NULL},
    {"cuda", NULL},
    {"host", &hkc_backend_host},
};
#define NSLOTS ((int)(sizeof backend_slots / sizeof backend_slots[0]))

/* Where modules are looked for: HIPKIT_BACKEND_PATH (a folder), then beside
 * libhipkit, its hipkit/ subfolder (the install layout) and
 * backends/NAME/ (the build tree). Modules stay loaded: the ops tables they
 * export are used until the process ends. */
static const hkc_backend_ops *load_module(const char *name, hkc_strbuf *reason)
{
    char file[64], path[4096];
    snprintf(file, sizeof file, "hipkit-backend-%s.so", name);
    const char *dirs[4];
    int ndirs = 0;
    const char *env = getenv("HIPKIT_BACKEND_PATH");
    if (env && *env)
        dirs[ndirs++] = env;
    Dl_info info;
    char self[4096] = "";
    if (dladdr((void *)load_module, &info) && info.dli_fname) {
        snprintf(self, sizeof self, "%s", info.dli_fname);
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(self, sizeof self, ".");
        dirs[ndirs++] = self;
    }
    hkc_strbuf tried;
    hkc_strbuf_init(&tried);
    for (int pass = 0; pass < ndirs * 3; pass++) {
        const char *dir = dirs[pass / 3];
        if (pass % 3 == 0)
            snprintf(path, sizeof path, "%s/%s", dir, file);
        else if (pass % 3 == 1)
            snprintf(path, sizeof path, "%s/hipkit/%s", dir, file);
        else
            snprintf(path, sizeof path, "%s/backends/%s/%s", dir, name, file);
        FILE *f = fopen(path, "rb");
        if (!f) {
            hkc_strbuf_printf(&tried, "%s%s", tried.len ? ", " : "", path);
            continue;
        }
        fclose(f);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
            hkc_strbuf_printf(reason, "%s cannot be loaded: %s", path, dlerror());
            hkc_strbuf_free(&tried);
            return NULL;
        }
        char sym[64];
        snprintf(sym, sizeof sym, "hkc_backend_%s_ops", name);
        const unsigned *abi = dlsym(dl, "hkc_backend_module_abi");
        const hkc_backend_ops *ops = dlsym(dl, sym);
        if (!abi || !ops || *abi != HKC_BACKEND_MODULE_ABI) {
            hkc_strbuf_printf(reason, "%s was built for another hipkit (module ABI %u, this one %u)",
                              path, abi ? *abi : 0, HKC_BACKEND_MODULE_ABI);
            hkc_strbuf_free(&tried);
            return NULL; /* left loaded: never unload what may hold state */
        }
        hkc_strbuf_free(&tried);
        return ops;
    }
    hkc_strbuf_printf(reason, "this hipkit has no %s backend module (looked for %s)", name,
                      tried.data);
    hkc_strbuf_free(&tried);
    return NULL;
}

/* Stand-ins for backends that could not be loaded: a name for listing. */
static const hkc_backend_ops absent_ops[NSLOTS] = {
    {.name = "hip"}, {.name = "cuda"}, {.name = "host"},
};

HK_API void hk_context_options_defaults(hk_context_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->device = -1;
}

static void probe_all(hk_context *ctx)
{
    for (int i = 0; i < NSLOTS; i++) {
        hkc_backend *be = &ctx->backends[ctx->nbackends++];
        be->ctx = ctx;
        be->guarded = hkc_host_guarded;
        hkc_strbuf_init(&be->reason);
        be->ops = backend_slots[i].ops ? backend_slots[i].ops
                                       : load_module(backend_slots[i].name, &be->reason);
        if (!be->ops) {
            be->ops = &absent_ops[i];
            continue;
        }
        int n = be->ops->probe(be, &be->reason);
        be->ndev = n > 0 ? n : 0;
        if (n <= 0 && !be->reason.len)
            hkc_strbuf_puts(&be->reason, "no devices");
    }
}

static int list_devices(hk_context *ctx)
{
    int total = 0;
    for (int i = 0; i < ctx->nbackends; i++)
        total += ctx->backends[i].ndev;
    ctx->devices = calloc(total ? (size_t)total : 1, sizeof *ctx->devices);
    if (!ctx->devices)
        return HK_ENOMEM;
    for (int i = 0; i < ctx->nbackends; i++) {
        hkc_backend *be = &ctx->backends[i];
        be->first_device = ctx->ndevices;
        for (int d = 0; d < be->ndev; d++) {
            hkc_device *dev = &ctx->devices[ctx->ndevices];
            dev->be = be;
            dev->index = d;
            if (be->ops->device_info(be, d, &dev->info) != 0)
                continue;
            dev->info.backend = be->ops->name;
            dev->info.index = d;
            ctx->ndevices++;
        }
    }
    return 0;
}

static hkc_backend *find_backend(hk_context *ctx, const char *name)
{
    for (int i = 0; i < ctx->nbackends; i++)
        if (!strcmp(ctx->backends[i].ops->name, name))
            return &ctx->backends[i];
    return NULL;
}

static void list_backend_names(hk_context *ctx, hkc_strbuf *s)
{
    for (int i = 0; i < ctx->nbackends; i++)
        hkc_strbuf_printf(s, "%s%s", i ? ", " : "", ctx->backends[i].ops->name);
}

/* Picks the device from the options and the environment. */
static int select_initial(hk_context *ctx, const hk_context_options *o)
{
    const char *want = o->backend && *o->backend ? o->backend : getenv("HIPKIT_BACKEND");
    const char *devenv = getenv("HIPKIT_DEVICE");
    int devidx = o->device >= 0 ? o->device : 0;
    if (o->device < 0 && devenv && *devenv) {
        long x = hkc_env_long("HIPKIT_DEVICE", 0, 1 << 20, -1);
        if (x < 0)
            return hkc_fail(NULL, HK_EINVAL,
                            "HIPKIT_DEVICE=%s is not a device index (0 is a backend's first device; "
                            "HIPKIT_BACKEND picks the backend)", devenv);
        devidx = (int)x;
    }
    if (want && *want) {
        hkc_backend *be = find_backend(ctx, want);
        if (!be) {
            hkc_strbuf s;
            hkc_strbuf_init(&s);
            list_backend_names(ctx, &s);
            int r = hkc_fail(NULL, HK_EUNAVAIL, "unknown backend '%s' (known: %s)", want, s.data);
            hkc_strbuf_free(&s);
            return r;
        }
        if (!be->ndev)
            return hkc_fail(NULL, HK_EUNAVAIL, "backend '%s' is unavailable: %s", want,
                            be->reason.data);
        if (devidx < 0 || devidx >= be->ndev)
            return hkc_fail(NULL, HK_ENODEV, "backend '%s' has %d device(s); device %d does not exist",
                            want, be->ndev, devidx);
        ctx->current = be->first_device + devidx;
        return 0;
    }
    if (!ctx->ndevices)
        return hkc_fail(NULL, HK_EUNAVAIL, "no backend has a usable device");
    /* Best present: the first backend with devices, in selection order. */
    hkc_backend *be = ctx->devices[0].be;
    if (devidx < 0 || devidx >= be->ndev)
        return hkc_fail(NULL, HK_ENODEV, "backend '%s' has %d device(s); device %d does not exist",
                        be->ops->name, be->ndev, devidx);
    ctx->current = be->first_device + devidx;
    return 0;
}

HK_API int hk_context_create(const hk_context_options *o, hk_context **out)
{
    hk_context_options defaults;
    if (!o) {
        hk_context_options_defaults(&defaults);
        o = &defaults;
    }
    if (!out)
        return hkc_fail(NULL, HK_EINVAL, "hk_context_create: out is NULL");
    *out = NULL;
    hk_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return hkc_fail(NULL, HK_ENOMEM, "out of memory creating a context");
    ctx->quiet = o->quiet;
    hkc_errkey_create(ctx);
    hkc_env_check(ctx);
    probe_all(ctx);
    int r = list_devices(ctx);
    if (r == 0)
        r = select_initial(ctx, o);
    if (r != 0)
        goto fail;
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    ctx->cache = hkc_cache_open(&warn);
    if (warn.len)
        hkc_warn(ctx, "%s", warn.data);
    hkc_strbuf_free(&warn);
    if (!ctx->cache) {
        r = hkc_fail(NULL, HK_ENOMEM, "out of memory opening the compile cache");
        goto fail;
    }
    int no_plugins = o->size >= offsetof(hk_context_options, no_plugins) + sizeof o->no_plugins &&
                     o->no_plugins;
    int probe = o->size >= offsetof(hk_context_options, probe_plugins) + sizeof o->probe_plugins &&
                o->probe_plugins;
    if (!no_plugins)
        hkc_plugins_load(ctx, probe);
    *out = ctx;
    return 0;
fail:
    hk_context_destroy(ctx);
    return r;
}

HK_API void hk_context_destroy(hk_context *ctx)
{
    if (!ctx)
        return;
    hkc_streams_destroy_all(ctx); /* waits for their queued work first */
    hkc_graph_context_end(ctx);
    hkc_plugins_unload(ctx);
    hkc_module_table_clear(ctx);
    /* the backends first: their destroy joins work still running in the
     * background (the host backend's early parse reads the cache) */
    for (int i = 0; i < ctx->nbackends; i++) {
        hkc_backend *be = &ctx->backends[i];
        if (be->ops->destroy && be->impl)
            be->ops->destroy(be);
        hkc_strbuf_free(&be->reason);
    }
    if (ctx->cache)
        hkc_cache_close(ctx->cache);
    free(ctx->devices);
    hkc_errkey_delete(ctx);
    free(ctx);
}

HK_API int hk_backend_count(const hk_context *ctx) { return ctx->nbackends; }

HK_API int hk_backend_get(const hk_context *ctx, int i, hk_backend_info *out)
{
    if (i < 0 || i >= ctx->nbackends)
        return hkc_fail(ctx, HK_EINVAL, "backend index %d out of range [0, %d)", i, ctx->nbackends);
    const hkc_backend *be = &ctx->backends[i];
    out->name = be->ops->name;
    out->available = be->ndev > 0;
    out->reason = be->ndev > 0 ? "" : be->reason.data;
    /* a backend with no device may still compile for named targets */
    out->toolchain = be->impl && be->ops->toolchain ? be->ops->toolchain((hkc_backend *)be, ctx->cache) : "";
    out->device_count = be->ndev;
    return 0;
}

HK_API int hk_device_count(const hk_context *ctx) { return ctx->ndevices; }

HK_API int hk_device_get(const hk_context *ctx, int i, hk_device_info *out)
{
    if (i < 0 || i >= ctx->ndevices)
        return hkc_fail(ctx, HK_ENODEV, "device %d does not exist (there are %d)", i, ctx->ndevices);
    *out = ctx->devices[i].info;
    return 0;
}

HK_API int hk_device_find(const hk_context *ctx, const char *spec)
{
    if (!spec || !*spec)
        return hkc_fail(ctx, HK_ENODEV, "empty device name");
    char *end;
    long n = strtol(spec, &end, 10);
    if (*end == 0) {
        if (n < 0 || n >= ctx->ndevices)
            return hkc_fail(ctx, HK_ENODEV, "device %ld does not exist (there are %d)", n, ctx->ndevices);
        return (int)n;
    }
    const char *colon = strchr(spec, ':');
    size_t blen = colon ? (size_t)(colon - spec) : strlen(spec);
    long idx = 0;
    if (colon) {
        idx = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end)
            return hkc_fail(ctx, HK_ENODEV, "bad device name '%s' (expected BACKEND[:N])", spec);
    }
    for (int i = 0; i < ctx->ndevices; i++) {
        const hkc_device *d = &ctx->devices[i];
        if (strlen(d->be->ops->name) == blen && !strncmp(d->be->ops->name, spec, blen) &&
            d->index == idx)
            return i;
    }
    return hkc_fail(ctx, HK_ENODEV, "no device '%s'", spec);
}

HK_API int hk_device_select(hk_context *ctx, int i)
{
    if (i < 0 || i >= ctx->ndevices)
        return hkc_fail(ctx, HK_ENODEV, "device %d does not exist (there are %d)", i, ctx->ndevices);
    ctx->current = i;
    return 0;
}

HK_API int hk_device_current(const hk_context *ctx) { return ctx->current; }

HK_API int hk_synchronize(hk_context *ctx)
{
    int r = hkc_graph_refuse(ctx, "hk_synchronize", "a wait for the device");
    if (r)
        return r;
    hkc_device *d = hkc_current_device(ctx);
    r = d->be->ops->synchronize(d->be, d->index);
    int rs = ctx->streams ? hkc_streams_take_errors(ctx, d) : 0;
    if (!r && !rs)
        rs = hkc_plugin_flags_wait(ctx, ctx->current);
    return r ? r : rs;
}

HK_API int hk_cache_get_stats(hk_context *ctx, hk_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->dir, sizeof out->dir, "%s", hkc_cache_dir(ctx->cache));
    out->mode = hkc_cache_mode_name(hkc_cache_mode_get(ctx->cache));
    hkc_cache_usage u;
    if (hkc_cache_usage_get(ctx->cache, &u) == 0) {
        out->entries = u.entries;
        out->bytes = u.bytes;
        out->max_bytes = u.max_bytes;
    }
    return 0;
}

HK_API int hk_cache_clear(hk_context *ctx)
{
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = hkc_cache_clear(ctx->cache, &err);
    if (r != 0)
        hkc_fail(ctx, r, "%s", err.data);
    hkc_strbuf_free(&err);
    return r;
}

HK_API int hk_cache_prune(hk_context *ctx, uint64_t max_bytes)
{
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = hkc_cache_prune(ctx->cache, max_bytes, &err);
    if (r != 0)
        hkc_fail(ctx, r, "%s", err.data);
    hkc_strbuf_free(&err);
    return r;
}
