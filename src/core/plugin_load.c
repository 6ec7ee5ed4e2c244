/* Plugins: finding, checking and loading hipkit-plugin-NAME.so files, the
 * API table they register through, and their kernels, compiled lazily. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin_internal.h"
#include "plugin_config.h"

_Static_assert(HK_PLUGIN_ABI_MAJOR == HK_ABI_VERSION_MAJOR &&
                   HK_PLUGIN_ABI_MINOR == HK_ABI_VERSION_MINOR,
               "plugin.h and version.h disagree on the plugin ABI");

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return p;
    int n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(p, (size_t)n * elem);
    if (q)
        *cap = n;
    return q;
}

static int push_family(hkc_plugins *ps, pl_family *f)
{
    pl_family **v = grow(ps->fams, &ps->capfams, ps->nfams + 1, sizeof *v);
    if (!v)
        return HK_ENOMEM;
    ps->fams = v;
    ps->fams[ps->nfams++] = f;
    return 0;
}

static void family_free(hk_context *ctx, pl_family *f)
{
    for (int i = 0; i < f->nsrcs; i++) {
        if (f->srcs[i].mods)
            for (int d = 0; d < ctx->ndevices; d++)
                hk_module_free(f->srcs[i].mods[d]);
        free(f->srcs[i].mods);
        for (int j = 0; j < f->srcs[i].nimgs; j++) {
            free(f->srcs[i].imgs[j].backend);
            free(f->srcs[i].imgs[j].target);
            free(f->srcs[i].imgs[j].toolchain);
        }
        free(f->srcs[i].imgs);
        free(f->srcs[i].name);
        free(f->srcs[i].text);
    }
    for (int i = 0; i < f->nks; i++) {
        free(f->ks[i].name);
        free(f->ks[i].source);
        free(f->ks[i].signature);
        free(f->ks[i].doc);
        free(f->ks[i].ks);
    }
    for (int i = 0; i < f->nops; i++) {
        free(f->ops[i].name);
        free(f->ops[i].usage);
        free(f->ops[i].doc);
    }
    free(f->ops);
    free(f->srcs);
    free(f->ks);
    free(f->name);
    free(f->version);
    free(f->description);
    free(f->path);
    free(f->error);
    free(f);
}

/* Records a refusal and warns. */
static void refuse(hkc_plugins *ps, const char *name, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refuse(hkc_plugins *ps, const char *name, const char *path, const char *fmt, ...)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    va_list ap;
    va_start(ap, fmt);
    hkc_strbuf_vprintf(&msg, fmt, ap);
    va_end(ap);
    hkc_warn(ps->ctx, "plugin %s: %s", name, msg.data);
    pl_family *f = calloc(1, sizeof *f);
    if (f) {
        f->name = pl_dupstr(name);
        f->version = pl_dupstr("");
        f->description = pl_dupstr("");
        f->path = pl_dupstr(path);
        f->error = hkc_strbuf_take(&msg);
        if (!f->name || !f->path || !f->error || push_family(ps, f) != 0)
            family_free(ps->ctx, f);
    }
    hkc_strbuf_free(&msg);
}

/* ------------------------------------------------------------ the API */

static pl_session *session_of(const hk_plugin_api *api) { return (pl_session *)(void *)api; }

static void api_error(const hk_plugin_api *api, const char *fmt, ...)
{
    pl_session *s = session_of(api);
    if (!s->open)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (s->err.len)
        hkc_strbuf_puts(&s->err, "; ");
    hkc_strbuf_vprintf(&s->err, fmt, ap);
    va_end(ap);
}

#define API_FAIL(s, ...) (api_error(&(s)->api, __VA_ARGS__), HK_EINVAL)

static int valid_name(const char *n)
{
    if (!n || !*n || strlen(n) > 64)
        return 0;
    for (const char *p = n; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return 1;
}

static pl_family *find_family(hkc_plugins *ps, const char *name)
{
    int i = hkc_plugin_family_index(ps, name);
    return i < 0 ? NULL : ps->fams[i];
}

/* The family of this session named `name`, or NULL with the reason said. */
static pl_family *own_family(pl_session *s, const char *name, const char *what)
{
    pl_family *f = name ? find_family(s->owner, name) : NULL;
    if (!f || f->owner != s) {
        api_error(&s->api, "%s: family '%s' was not registered by this plugin", what,
                  name ? name : "(null)");
        return NULL;
    }
    return f;
}

static int api_register_family(const hk_plugin_api *api, const char *name, const char *version,
                               const char *description)
{
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    if (!valid_name(name))
        return API_FAIL(s, "family name '%s' is not [a-z0-9_]+", name ? name : "(null)");
    pl_family *old = find_family(s->owner, name);
    if (old)
        return API_FAIL(s, "family '%s' is already registered by %s", name, old->path);
    pl_family *f = calloc(1, sizeof *f);
    if (!f)
        return HK_ENOMEM;
    f->owner = s;
    f->name = pl_dupstr(name);
    f->version = pl_dupstr(version);
    f->description = pl_dupstr(description);
    f->path = pl_dupstr("");
    if (!f->name || !f->version || !f->description || !f->path || push_family(s->owner, f)) {
        family_free(s->owner->ctx, f);
        return HK_ENOMEM;
    }
    return 0;
}

static int api_add_source(const hk_plugin_api *api, const char *family, const char *name,
                          const char *hip_source)
{
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    pl_family *f = own_family(s, family, "add_source");
    if (!f)
        return HK_EINVAL;
    if (!name || !*name || !hip_source)
        return API_FAIL(s, "add_source: family '%s': a source needs a name and text", family);
    for (int i = 0; i < f->nsrcs; i++)
        if (!strcmp(f->srcs[i].name, name))
            return API_FAIL(s, "add_source: family '%s' already has a source '%s'", family, name);
    pl_source *v = realloc(f->srcs, (size_t)(f->nsrcs + 1) * sizeof *v);
    if (!v)
        return HK_ENOMEM;
    f->srcs = v;
    pl_source *src = &f->srcs[f->nsrcs];
    memset(src, 0, sizeof *src);
    src->name = pl_dupstr(name);
    src->text = pl_dupstr(hip_source);
    if (!src->name || !src->text) {
        free(src->name);
        free(src->text);
        return HK_ENOMEM;
    }
    f->nsrcs++;
    return 0;
}

/* A target id: what a backend's hk_device_info.target says, [A-Za-z0-9_.:+-]. */
static int valid_target(const char *t)
{
    if (!t || !*t || strlen(t) >= sizeof ((hk_device_info *)0)->target)
        return 0;
    for (const char *p = t; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("_.:+-", *p)))
            return 0;
    return 1;
}

static int api_add_image(const hk_plugin_api *api, const char *family, const char *source_name,
                         const char *backend, const char *target, const char *toolchain_tag,
                         const void *data, size_t size)
{
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    pl_family *f = own_family(s, family, "add_image");
    if (!f)
        return HK_EINVAL;
    pl_source *src = NULL;
    for (int i = 0; i < f->nsrcs && source_name; i++)
        if (!strcmp(f->srcs[i].name, source_name))
            src = &f->srcs[i];
    if (!src)
        return API_FAIL(s, "add_image: family '%s' has no source '%s'", family,
                        source_name ? source_name : "(null)");
    if (!valid_name(backend))
        return API_FAIL(s, "add_image: %s: backend '%s' is not [a-z0-9_]+", source_name,
                        backend ? backend : "(null)");
    if (!valid_target(target))
        return API_FAIL(s, "add_image: %s: target '%s' is not a target id", source_name,
                        target ? target : "(null)");
    if (!data || !size)
        return API_FAIL(s, "add_image: %s (%s %s): the image is empty", source_name, backend,
                        target);
    for (int i = 0; i < src->nimgs; i++)
        if (!strcmp(src->imgs[i].backend, backend) && !strcmp(src->imgs[i].target, target))
            return API_FAIL(s, "add_image: %s already has an image for %s %s", source_name,
                            backend, target);
    pl_image *v = realloc(src->imgs, (size_t)(src->nimgs + 1) * sizeof *v);
    if (!v)
        return HK_ENOMEM;
    src->imgs = v;
    pl_image *im = &v[src->nimgs];
    im->backend = pl_dupstr(backend);
    im->target = pl_dupstr(target);
    im->toolchain = pl_dupstr(toolchain_tag);
    im->data = data;
    im->size = size;
    if (!im->backend || !im->target || !im->toolchain) {
        free(im->backend);
        free(im->target);
        free(im->toolchain);
        return HK_ENOMEM;
    }
    src->nimgs++;
    return 0;
}

/* A geometry parameter must be an integer scalar. */
static int check_geom_param(pl_session *s, const hkc_signature *sig, int idx, const char *role,
                            const char *kernel)
{
    if (idx < 0 || idx >= sig->count)
        return API_FAIL(s, "add_kernel: %s: %s parameter %d is out of range (it has %d)", kernel,
                        role, idx, sig->count);
    const hkc_param *p = &sig->params[idx];
    int integral = p->kind == HK_PARAM_SCALAR && !p->is_bool && p->dtype >= HK_I8 &&
                   p->dtype <= HK_U64;
    if (!integral)
        return API_FAIL(s, "add_kernel: %s: %s parameter %d (%s %s) is not an integer", kernel,
                        role, idx, p->type, p->name);
    return 0;
}

static int api_add_op(const hk_plugin_api *api, const char *family, const char *name,
                      const char *usage, hk_plugin_op_fn fn, const char *doc)
{
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    pl_family *f = own_family(s, family, "add_op");
    if (!f)
        return HK_EINVAL;
    if (!valid_name(name) || !fn)
        return API_FAIL(s, "add_op: family '%s': an op needs a name ([a-z0-9_]+) and a function",
                        family);
    for (int i = 0; i < f->nops; i++)
        if (!strcmp(f->ops[i].name, name))
            return API_FAIL(s, "add_op: family '%s' already has an op '%s'", family, name);
    for (int i = 0; i < f->nks; i++)
        if (!strcmp(f->ks[i].name, name))
            return API_FAIL(s, "add_op: family '%s' has a kernel named '%s'", family, name);
    pl_op *v = realloc(f->ops, (size_t)(f->nops + 1) * sizeof *v);
    if (!v)
        return HK_ENOMEM;
    f->ops = v;
    pl_op *o = &f->ops[f->nops];
    o->name = pl_dupstr(name);
    o->usage = pl_dupstr(usage);
    o->doc = pl_dupstr(doc);
    o->fn = fn;
    if (!o->name || !o->usage || !o->doc) {
        free(o->name);
        free(o->usage);
        free(o->doc);
        return HK_ENOMEM;
    }
    f->nops++;
    return 0;
}

static int api_add_kernel(const hk_plugin_api *api, const char *family, const char *source_name,
                          const char *kernel_name, const char *signature,
                          const hk_plugin_geometry *geometry, const char *doc)
{
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    pl_family *f = own_family(s, family, "add_kernel");
    if (!f)
        return HK_EINVAL;
    if (!kernel_name || !*kernel_name || !signature || !geometry)
        return API_FAIL(s, "add_kernel: family '%s': a kernel needs a name, a signature and a geometry",
                        family);
    int src = -1;
    for (int i = 0; i < f->nsrcs && source_name; i++)
        if (!strcmp(f->srcs[i].name, source_name))
            src = i;
    if (src < 0)
        return API_FAIL(s, "add_kernel: %s: family '%s' has no source '%s'", kernel_name, family,
                        source_name ? source_name : "(null)");
    for (int i = 0; i < f->nks; i++)
        if (!strcmp(f->ks[i].name, kernel_name))
            return API_FAIL(s, "add_kernel: family '%s' already has a kernel '%s'", family,
                            kernel_name);
    hkc_signature sig;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    if (hkc_signature_parse(signature, &sig, &err) != 0) {
        api_error(api, "add_kernel: %s: %s", kernel_name, err.data);
        hkc_strbuf_free(&err);
        return HK_EINVAL;
    }
    hkc_strbuf_free(&err);
    int r = 0;
    const hk_plugin_geometry *g = geometry;
    if (g->kind == HK_PLUGIN_GEOM_1D) {
        r = check_geom_param(s, &sig, g->count_param, "count", kernel_name);
        if (r == 0 && (g->block == 0 || g->block > 1024))
            r = API_FAIL(s, "add_kernel: %s: block %u is not in 1..1024", kernel_name, g->block);
    } else if (g->kind == HK_PLUGIN_GEOM_2D) {
        r = check_geom_param(s, &sig, g->rows_param, "rows", kernel_name);
        if (r == 0)
            r = check_geom_param(s, &sig, g->cols_param, "cols", kernel_name);
        if (r == 0 && (g->block_x == 0 || g->block_y == 0 || g->block_x * g->block_y > 1024))
            r = API_FAIL(s, "add_kernel: %s: block %ux%u is not 1..1024 threads", kernel_name,
                         g->block_x, g->block_y);
    } else if (g->kind != HK_PLUGIN_GEOM_EXPLICIT) {
        r = API_FAIL(s, "add_kernel: %s: unknown geometry kind %d", kernel_name, g->kind);
    }
    hkc_signature_free(&sig);
    if (r != 0)
        return r;
    pl_kernel *v = realloc(f->ks, (size_t)(f->nks + 1) * sizeof *v);
    if (!v)
        return HK_ENOMEM;
    f->ks = v;
    pl_kernel *k = &f->ks[f->nks];
    memset(k, 0, sizeof *k);
    k->name = pl_dupstr(kernel_name);
    k->source = pl_dupstr(source_name);
    k->signature = pl_dupstr(signature);
    k->doc = pl_dupstr(doc);
    k->geom = *g;
    k->src = src;
    if (!k->name || !k->source || !k->signature || !k->doc) {
        free(k->name);
        free(k->source);
        free(k->signature);
        free(k->doc);
        return HK_ENOMEM;
    }
    f->nks++;
    return 0;
}

/* ---------------------------------------------------------- the loader */

static int world_writable(const char *path, struct stat *st)
{
    return stat(path, st) == 0 && (st->st_mode & S_IWOTH);
}

static void load_file(hkc_plugins *ps, const char *path, const char *name)
{
    struct stat st;
    if (world_writable(path, &st)) {
        refuse(ps, name, path, "%s is world-writable; refused", path);
        return;
    }
    char *real = realpath(path, NULL);
    if (!real)
        return;
    for (int i = 0; i < ps->nseen; i++)
        if (!strcmp(ps->seen[i], real)) {
            free(real);
            return;
        }
    char **seen = realloc(ps->seen, (size_t)(ps->nseen + 1) * sizeof *seen);
    if (!seen) {
        free(real);
        return;
    }
    ps->seen = seen;
    ps->seen[ps->nseen++] = real;

    /* never dlclose'd: a plugin may keep state, and its text is cheap */
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        refuse(ps, name, path, "cannot be loaded: %s", dlerror());
        return;
    }
    char sym[128];
    snprintf(sym, sizeof sym, "hk_plugin_%s_abi", name);
    const unsigned *abi = dlsym(dl, sym);
    snprintf(sym, sizeof sym, "hk_plugin_%s_init", name);
    hk_plugin_init_fn *init = (hk_plugin_init_fn *)dlsym(dl, sym);
    if (!abi || !init) {
        refuse(ps, name, path, "exports no hk_plugin_%s_abi and hk_plugin_%s_init", name, name);
        return;
    }
    if (abi[0] != HK_PLUGIN_ABI_MAJOR || abi[1] > HK_PLUGIN_ABI_MINOR) {
        refuse(ps, name, path,
               "plugin '%s' was built for plugin ABI %u.%u; this hipkit has ABI %u.%u", name,
               abi[0], abi[1], HK_PLUGIN_ABI_MAJOR, HK_PLUGIN_ABI_MINOR);
        return;
    }
    pl_session *s = calloc(1, sizeof *s);
    pl_session **sv = grow(ps->sess, &ps->capsess, ps->nsess + 1, sizeof *sv);
    if (!s || !sv) {
        free(s);
        if (sv)
            ps->sess = sv;
        return;
    }
    ps->sess = sv;
    ps->sess[ps->nsess++] = s;
    s->api.size = sizeof s->api;
    s->api.abi_major = HK_PLUGIN_ABI_MAJOR;
    s->api.abi_minor = HK_PLUGIN_ABI_MINOR;
    s->api.register_family = api_register_family;
    s->api.add_source = api_add_source;
    s->api.add_kernel = api_add_kernel;
    s->api.error = api_error;
    s->api.add_image = api_add_image;
    s->api.add_op = api_add_op;
    s->owner = ps;
    s->plugin = pl_dupstr(name);
    hkc_strbuf_init(&s->err);
    int first = ps->nfams;
    s->open = 1;
    int r = init(&s->api);
    s->open = 0;
    int nfam = 0;
    for (int i = first; i < ps->nfams; i++)
        if (ps->fams[i]->owner == s)
            nfam++;
    if (r == 0 && nfam == 0) {
        r = -1;
        api_error(&s->api, "registered no family");
    }
    if (r != 0) {
        /* drop what it registered: a half-made family is worse than none */
        int w = first;
        for (int i = first; i < ps->nfams; i++) {
            if (ps->fams[i]->owner == s)
                family_free(ps->ctx, ps->fams[i]);
            else
                ps->fams[w++] = ps->fams[i];
        }
        ps->nfams = w;
        s->open = 1; /* so the message below lands */
        if (!s->err.len)
            hkc_strbuf_puts(&s->err, "no reason given");
        s->open = 0;
        refuse(ps, name, path, "init failed (%d): %s", r, s->err.data);
        return;
    }
    if (s->err.len) /* errors it said but chose to survive */
        hkc_warn(ps->ctx, "plugin %s: %s", name, s->err.data);
    for (int i = first; i < ps->nfams; i++)
        if (ps->fams[i]->owner == s) {
            free(ps->fams[i]->path);
            ps->fams[i]->path = pl_dupstr(path);
        }
}

static int plugin_file_name(const char *file, char *name, size_t cap)
{
    static const char pre[] = "hipkit-plugin-", suf[] = ".so";
    size_t n = strlen(file), np = sizeof pre - 1, ns = sizeof suf - 1;
    if (n <= np + ns || strncmp(file, pre, np) || strcmp(file + n - ns, suf))
        return 0;
    size_t len = n - np - ns;
    if (len >= cap)
        return 0;
    memcpy(name, file + np, len);
    name[len] = 0;
    return valid_name(name);
}

static int skip_entry(const struct dirent *e) { return e->d_name[0] != '.'; }

/* A folder: its hipkit-plugin-*.so files and those of its subfolders
 * (one level: the build tree has plugins/NAME/hipkit-plugin-NAME.so). */
static void scan_folder(hkc_plugins *ps, const char *dir, int depth)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    if (st.st_mode & S_IWOTH) {
        refuse(ps, dir, dir, "folder %s is world-writable; its plugins are not loaded", dir);
        return;
    }
    struct dirent **list = NULL;
    int n = scandir(dir, &list, skip_entry, alphasort);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX], name[80];
        snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
        if (plugin_file_name(list[i]->d_name, name, sizeof name))
            load_file(ps, path, name);
        else if (depth == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            scan_folder(ps, path, 1);
        free(list[i]);
    }
    free(list);
}

/* The build's folder counts only when this libhipkit is the build tree's. */
static int in_build_tree(void)
{
    Dl_info info;
    if (!dladdr((void *)in_build_tree, &info) || !info.dli_fname)
        return 0;
    char *self = realpath(info.dli_fname, NULL), *core = realpath(HKC_CORE_BUILD_DIR, NULL);
    int yes = 0;
    if (self && core) {
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        yes = !strcmp(self, core);
    }
    free(self);
    free(core);
    return yes;
}

void hkc_plugins_load(hk_context *ctx)
{
    hkc_plugins *ps = calloc(1, sizeof *ps);
    if (!ps)
        return;
    ps->ctx = ctx;
    ctx->plugins = ps;
    if (in_build_tree())
        scan_folder(ps, HKC_PLUGIN_BUILD_DIR, 0);
    else
        scan_folder(ps, HKC_PLUGIN_INSTALL_DIR, 0);
    const char *env = getenv("HIPKIT_PLUGIN_PATH");
    if (env && *env) {
        char *copy = strdup(env), *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save))
            scan_folder(ps, d, 0);
        free(copy);
    }
}

void hkc_plugins_unload(hk_context *ctx)
{
    hkc_plugins *ps = ctx->plugins;
    if (!ps)
        return;
    for (int i = 0; i < ps->nfams; i++)
        family_free(ctx, ps->fams[i]);
    for (int i = 0; i < ps->nsess; i++) {
        hkc_strbuf_free(&ps->sess[i]->err);
        free(ps->sess[i]->plugin);
        free(ps->sess[i]);
    }
    for (int i = 0; i < ps->nseen; i++)
        free(ps->seen[i]);
    free(ps->seen);
    free(ps->fams);
    free(ps->sess);
    free(ps);
    ctx->plugins = NULL;
}
