/* The table a plugin's init registers through (hk_plugin_api): each call
 * checks what it is given, so a faulty plugin is refused with a reason
 * rather than crashing hipkit later, and works only while init runs. */
#include <stdarg.h>

#include "plugin_internal.h"

/* The table is the session's first member (plugin_internal.h). */
static pl_session *session_of(const hk_plugin_api *api) { return (pl_session *)(void *)api; }

/* Reasons pile up in the session for the loader to show; after init no one
 * reads them, so they are dropped. */
static void api_error(const hk_plugin_api *api, const char *fmt, ...)
{
    if (!api || !fmt)
        return;
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

int hkc_plugin_valid_name(const char *n)
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
    if (!api) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    if (!hkc_plugin_valid_name(name))
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
    if (!f->name || !f->version || !f->description || !f->path ||
        hkc_plugin_family_push(s->owner, f)) {
        hkc_plugin_family_free(s->owner->ctx, f);
        return HK_ENOMEM;
    }
    return 0;
}

static int api_add_source(const hk_plugin_api *api, const char *family, const char *name,
                          const char *hip_source)
{
    if (!api) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
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

/* Sources are looked up by name: kernels and images name theirs. */
static int source_index(const pl_family *f, const char *name)
{
    for (int i = 0; name && i < f->nsrcs; i++)
        if (!strcmp(f->srcs[i].name, name))
            return i;
    return -1;
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
    if (!api) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    pl_family *f = own_family(s, family, "add_image");
    if (!f)
        return HK_EINVAL;
    int si = source_index(f, source_name);
    if (si < 0)
        return API_FAIL(s, "add_image: family '%s' has no source '%s'", family,
                        source_name ? source_name : "(null)");
    pl_source *src = &f->srcs[si];
    if (!hkc_plugin_valid_name(backend))
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

/* The rule's extents: pointer operands, integer factors, at most
 * PL_MAX_EXTENTS. */
static int check_extents(pl_session *s, const hkc_signature *sig, const char *kernel,
                         const hk_plugin_rule *rule)
{
    if (rule->nextents < 0 || rule->nextents > PL_MAX_EXTENTS || (rule->nextents && !rule->extents))
        return API_FAIL(s, "add_kernel_rule: %s: %d extents (at most %d, and a table for them)",
                        kernel, rule->nextents, PL_MAX_EXTENTS);
    for (int e = 0; e < rule->nextents; e++) {
        const hk_plugin_extent *x = &rule->extents[e];
        if (x->param < 0 || x->param >= sig->count || sig->params[x->param].kind != HK_PARAM_POINTER)
            return API_FAIL(s, "add_kernel_rule: %s: extent %d names parameter %d, not a pointer",
                            kernel, e + 1, x->param);
        for (int j = 0; j < 3 && x->factors[j] >= 0; j++) {
            int r = check_geom_param(s, sig, x->factors[j], "extent factor", kernel);
            if (r != 0)
                return r;
        }
    }
    return 0;
}

/* may_be_null (ABI 1.9) marks pointer parameters only: a bit on a scalar
 * or past the last parameter is a plugin's mistake (bits count from 0,
 * messages count arguments from 1). */
static int check_nullable(pl_session *s, const hkc_signature *sig, const char *kernel, unsigned long long bits)
{
    for (int i = 0; i < 64; i++) {
        if (!((bits >> i) & 1))
            continue;
        if (i >= sig->count)
            return API_FAIL(s, "add_kernel_rule: %s: may_be_null bit %d: the kernel has %d parameters", kernel, i,
                            sig->count);
        if (sig->params[i].kind != HK_PARAM_POINTER)
            return API_FAIL(s, "add_kernel_rule: %s: may_be_null bit %d: parameter %d (%s %s) is not a pointer",
                            kernel, i, i, sig->params[i].type, sig->params[i].name);
    }
    return 0;
}

/* A geometry rule must name integer parameters of the kernel's signature
 * and a block of at most 1024 threads; a row rule's block size may be left
 * to the rule (0). */
static int check_geometry(pl_session *s, const char *kernel_name, const char *signature,
                          const hk_plugin_rule *rule)
{
    const hk_plugin_geometry *g = &rule->geom;
    hkc_signature sig;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    if (hkc_signature_parse(signature, &sig, &err) != 0) {
        api_error(&s->api, "add_kernel: %s: %s", kernel_name, err.data);
        hkc_strbuf_free(&err);
        return HK_EINVAL;
    }
    hkc_strbuf_free(&err);
    int r = 0;
    if (g->kind == HK_PLUGIN_GEOM_1D) {
        r = check_geom_param(s, &sig, g->count_param, "count", kernel_name);
        if (r == 0 && (g->block == 0 || g->block > 1024))
            r = API_FAIL(s, "add_kernel: %s: block %u is not in 1..1024", kernel_name, g->block);
    } else if (g->kind == HK_PLUGIN_GEOM_2D || g->kind == HK_PLUGIN_GEOM_ROW_BLOCK ||
               g->kind == HK_PLUGIN_GEOM_ROW_WARP) {
        r = check_geom_param(s, &sig, g->rows_param, "rows", kernel_name);
        if (r == 0)
            r = check_geom_param(s, &sig, g->cols_param, "cols", kernel_name);
        if (r == 0 && g->kind == HK_PLUGIN_GEOM_2D &&
            (g->block_x == 0 || g->block_y == 0 || g->block_x * g->block_y > 1024))
            r = API_FAIL(s, "add_kernel: %s: block %ux%u is not 1..1024 threads", kernel_name,
                         g->block_x, g->block_y);
        if (r == 0 && g->kind != HK_PLUGIN_GEOM_2D && (g->block > 1024 || rule->max_block > 1024))
            r = API_FAIL(s, "add_kernel_rule: %s: block %u (at most %u) is over 1024 threads",
                         kernel_name, g->block, rule->max_block);
    } else if (g->kind != HK_PLUGIN_GEOM_EXPLICIT) {
        r = API_FAIL(s, "add_kernel: %s: unknown geometry kind %d", kernel_name, g->kind);
    }
    if (r == 0)
        r = check_extents(s, &sig, kernel_name, rule);
    if (r == 0)
        r = check_nullable(s, &sig, kernel_name, rule->may_be_null);
    hkc_signature_free(&sig);
    return r;
}

static int api_add_op(const hk_plugin_api *api, const char *family, const char *name,
                      const char *usage, hk_plugin_op_fn fn, const char *doc)
{
    if (!api) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    pl_family *f = own_family(s, family, "add_op");
    if (!f)
        return HK_EINVAL;
    if (!hkc_plugin_valid_name(name) || !fn)
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

/* add_kernel and add_kernel_rule: rule is complete (the caller's copy
 * padded with zeros). */
static int add_kernel(pl_session *s, const char *family, const char *source_name,
                      const char *kernel_name, const char *signature, const hk_plugin_rule *rule,
                      const char *doc)
{
    if (!s->open)
        return HK_ESTATE;
    pl_family *f = own_family(s, family, "add_kernel");
    if (!f)
        return HK_EINVAL;
    if (!kernel_name || !*kernel_name || !signature)
        return API_FAIL(s, "add_kernel: family '%s': a kernel needs a name, a signature and a geometry",
                        family);
    int src = source_index(f, source_name);
    if (src < 0)
        return API_FAIL(s, "add_kernel: %s: family '%s' has no source '%s'", kernel_name, family,
                        source_name ? source_name : "(null)");
    for (int i = 0; i < f->nks; i++)
        if (!strcmp(f->ks[i].name, kernel_name))
            return API_FAIL(s, "add_kernel: family '%s' already has a kernel '%s'", family,
                            kernel_name);
    int r = check_geometry(s, kernel_name, signature, rule);
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
    k->geom = rule->geom;
    k->shared_per_thread = rule->shared_per_thread;
    k->shared_fixed = rule->shared_fixed;
    k->max_block = rule->max_block;
    k->next = rule->nextents;
    if (rule->nextents)
        memcpy(k->ext, rule->extents, (size_t)rule->nextents * sizeof *k->ext);
    k->may_be_null = rule->may_be_null;
    k->null_any = s->abi_minor < 9;
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

static int api_add_kernel(const hk_plugin_api *api, const char *family, const char *source_name,
                          const char *kernel_name, const char *signature,
                          const hk_plugin_geometry *geometry, const char *doc)
{
    if (!api) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    if (!geometry)
        return API_FAIL(s, "add_kernel: family '%s': a kernel needs a name, a signature and a geometry",
                        family ? family : "(null)");
    hk_plugin_rule rule;
    memset(&rule, 0, sizeof rule);
    rule.size = sizeof rule;
    if (geometry) {
        rule.geom = *geometry;
        if (geometry->kind > HK_PLUGIN_GEOM_2D)
            return API_FAIL(s, "add_kernel: %s: geometry kind %d needs add_kernel_rule",
                            kernel_name ? kernel_name : "(null)", geometry->kind);
    }
    return add_kernel(s, family, source_name, kernel_name, signature, &rule, doc);
}

/* A rule from a plugin built for an older minor is shorter: what it lacks
 * reads as zero. */
static int api_add_kernel_rule(const hk_plugin_api *api, const char *family,
                               const char *source_name, const char *kernel_name,
                               const char *signature, const hk_plugin_rule *rule, const char *doc)
{
    if (!api) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
    pl_session *s = session_of(api);
    if (!s->open)
        return HK_ESTATE;
    size_t min = offsetof(hk_plugin_rule, geom) + sizeof rule->geom;
    if (!rule || rule->size < min)
        return API_FAIL(s, "add_kernel_rule: %s: the rule is missing or its size (%zu) is under %zu",
                        kernel_name ? kernel_name : "(null)", rule ? rule->size : 0, min);
    hk_plugin_rule full;
    memset(&full, 0, sizeof full);
    memcpy(&full, rule, rule->size < sizeof full ? rule->size : sizeof full);
    return add_kernel(s, family, source_name, kernel_name, signature, &full, doc);
}

/* Slots only ever grow at the end (plugin.h): size tells a plugin which
 * it may call. */
void hkc_plugin_api_fill(hk_plugin_api *api)
{
    api->size = sizeof *api;
    api->abi_major = HK_PLUGIN_ABI_MAJOR;
    api->abi_minor = HK_PLUGIN_ABI_MINOR;
    api->register_family = api_register_family;
    api->add_source = api_add_source;
    api->add_kernel = api_add_kernel;
    api->error = api_error;
    api->add_image = api_add_image;
    api->add_op = api_add_op;
    api->add_kernel_rule = api_add_kernel_rule;
}
