/* The compile pipeline: source -> (memory table | disk cache | JIT) -> loaded
 * module. Kernels and module variables are looked up in kernel.c. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "name_expr.h"
#include "pp_text.h"

HK_API void hk_compile_options_defaults(hk_compile_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

/* ------------------------------------------------------------ includes */

/* The user headers a source pulls in: their text goes into the cache key (so
 * editing a header recompiles) and into the barrier scan. Headers not found in
 * the given folders are system or hipkit headers, covered by the toolchain
 * identity. */
typedef struct include_set {
    hkc_strbuf text;  /* every header's contents, concatenated */
    hkc_strbuf paths; /* "path\n" per header, to avoid reading one twice */
    int count;
} include_set;

#define MAX_INCLUDES 256

static int seen_path(include_set *inc, const char *path)
{
    size_t n = strlen(path);
    const char *p = inc->paths.data;
    while ((p = strstr(p, path))) {
        if ((p == inc->paths.data || p[-1] == '\n') && p[n] == '\n')
            return 1;
        p += n;
    }
    return 0;
}

static void gather_includes(include_set *inc, const char *text, const char *const *dirs, int ndirs,
                            int depth)
{
    if (depth > 32)
        return;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '#')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "include", 7))
            continue;
        p += 7;
        while (*p == ' ' || *p == '\t')
            p++;
        char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
        if (!close)
            continue;
        const char *start = p + 1, *end = strchr(start, close);
        const char *eol = strchr(start, '\n');
        if (!end || (eol && end > eol) || end - start > 1000)
            continue;
        char rel[1024];
        memcpy(rel, start, (size_t)(end - start));
        rel[end - start] = 0;
        for (int d = 0; d < ndirs; d++) {
            hkc_strbuf path;
            hkc_strbuf_init(&path);
            hkc_strbuf_printf(&path, "%s/%s", dirs[d], rel);
            char *data = NULL;
            size_t len = 0;
            int found = !seen_path(inc, path.data) && inc->count < MAX_INCLUDES &&
                        hkc_read_file(path.data, &data, &len) == 0;
            if (found) {
                inc->count++;
                hkc_strbuf_printf(&inc->paths, "%s\n", path.data);
                hkc_strbuf_printf(&inc->text, "\n//@%s\n", path.data);
                hkc_strbuf_append(&inc->text, data, len);
                gather_includes(inc, data, dirs, ndirs, depth + 1);
                free(data);
            }
            hkc_strbuf_free(&path);
            if (found)
                break;
        }
    }
}

/* ------------------------------------------------------ the memory table */

static void entry_unload(hk_context *ctx, hkc_modentry **link);

void hkc_module_table_clear(hk_context *ctx)
{
    while (ctx->modules)
        entry_unload(ctx, &ctx->modules);
}

static hkc_modentry *table_find(hk_context *ctx, hkc_device *dev, const hkc_cache_key *key)
{
    for (hkc_modentry *e = ctx->modules; e; e = e->next)
        if (e->has_key && e->dev == dev && !memcmp(e->key.bytes, key->bytes, sizeof key->bytes))
            return e;
    return NULL;
}

/* Loads code into a new table entry (owned by the context from then on). */
int hkc_entry_load(hk_context *ctx, hkc_device *dev, const void *code, size_t size,
                   hkc_modentry **out)
{
    hkc_modentry *e = calloc(1, sizeof *e);
    if (!e)
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    e->dev = dev;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    const hkc_backend_ops *ops = dev->be->ops;
    int r = ops->module_load(dev->be, dev->index, code, size, &e->bmod, &err);
    if (r == 0)
        r = ops->module_kernels(dev->be, e->bmod, &e->metas, &e->nmetas);
    if (r != 0) {
        hkc_fail(ctx, r, "%s", err.len ? err.data : hk_strerror(r));
        hkc_strbuf_free(&err);
        if (e->bmod)
            ops->module_unload(dev->be, e->bmod);
        free(e->metas);
        free(e);
        return r;
    }
    hkc_strbuf_free(&err);
    e->code = malloc(size ? size : 1);
    if (e->code) {
        memcpy(e->code, code, size);
        e->code_size = size;
    }
    e->next = ctx->modules;
    ctx->modules = e;
    *out = e;
    return 0;
}

/* The code object's kernels that the compiler named by mangled symbols
 * take the names they were asked for by (ns::kern, reduce<float, 4>). */
static void name_metas(hkc_modentry *e)
{
    for (int i = 0; i < e->nsrc_kernels; i++) {
        const hkc_source_kernel *k = &e->src_kernels[i];
        if (!k->symbol || strlen(k->name) >= sizeof e->metas[0].name)
            continue;
        for (int j = 0; j < e->nmetas; j++) {
            hkc_kernel_meta *m = &e->metas[j];
            if (!strcmp(m->symbol[0] ? m->symbol : m->name, k->symbol)) {
                if (!m->symbol[0])
                    snprintf(m->symbol, sizeof m->symbol, "%s", m->name);
                snprintf(m->name, sizeof m->name, "%s", k->name);
            }
        }
    }
}

int hkc_module_new(hk_context *ctx, hkc_modentry *e, const char *name, hk_code_origin origin,
                   double ms, hk_module **out)
{
    hk_module *m = calloc(1, sizeof *m);
    if (!m || !(m->name = strdup(name))) {
        free(m);
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    }
    m->ctx = ctx;
    m->entry = e;
    m->origin = origin;
    m->compile_ms = ms;
    e->refs++;
    *out = m;
    return 0;
}

/* -------------------------------------------------------------- compile */

static void sanitize_name(const char *in, char *out, size_t cap)
{
    size_t i = 0;
    for (; in[i] && i + 1 < cap; i++) {
        char c = in[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || c == '.';
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

/* What one compile request is made of, decided once and shared by
 * hk_module_compile (for a device) and hk_compile_for_target (for a named
 * target, no device needed). */
typedef struct compile_req {
    hk_context *ctx;
    hkc_backend *be;
    const char *target;     /* full target id: the device's or the normalised name */
    const char *const *offline_targets; /* set: the offline compiler builds for these */
    int noffline;
    const char *path;       /* the file the source came from, or NULL */
    int dev;                /* backend device index, -1 for a target alone */
    const char *name;
    const char *source;
    const char **flags;     /* the user's, then -D defines, then -I folders */
    const char *const *instantiate; /* template instantiations asked for */
    int ninstantiate;
    char **globals;         /* module variables discovery found */
    int nglobals;
    char **owned;           /* the flags made here */
    int nflags;
    include_set inc;
    hkc_cache_key key;
    int skip_cache_get;     /* the cached code would not load: compile, then store */
} compile_req;

static void req_free(compile_req *q)
{
    if (q->owned)
        for (int i = 0; i < q->nflags; i++)
            free(q->owned[i]);
    free(q->owned);
    free(q->flags);
    hkc_source_globals_free(q->globals, q->nglobals);
    hkc_strbuf_free(&q->inc.text);
    hkc_strbuf_free(&q->inc.paths);
}

static char *flag_printf(const char *fmt, const char *value)
{
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    hkc_strbuf_printf(&s, fmt, value);
    return hkc_strbuf_take(&s);
}

/* Flags, the headers the source pulls in, and the cache key. */
static int req_prepare(compile_req *q, const hk_compile_options *o)
{
    hkc_strbuf_init(&q->inc.text);
    hkc_strbuf_init(&q->inc.paths);
    if (o->size >= offsetof(hk_compile_options, ninstantiate) + sizeof o->ninstantiate &&
        o->ninstantiate > 0) {
        q->instantiate = o->instantiate;
        q->ninstantiate = o->ninstantiate;
        for (int i = 0; i < q->ninstantiate; i++)
            if (!q->instantiate || !q->instantiate[i])
                return hkc_fail(q->ctx, HK_EINVAL, "compile options: instantiate[%d] is NULL", i);
    }
    int cap = o->nflags + o->ndefines + o->ninclude_dirs;
    q->flags = calloc((size_t)cap + 1, sizeof *q->flags);
    q->owned = calloc((size_t)cap + 1, sizeof *q->owned);
    if (!q->flags || !q->owned)
        return hkc_fail(q->ctx, HK_ENOMEM, "out of memory");
    for (int i = 0; i < o->nflags; i++)
        q->flags[q->nflags++] = o->flags[i];
    for (int i = 0; i < o->ndefines; i++, q->nflags++)
        q->flags[q->nflags] = q->owned[q->nflags] = flag_printf("-D%s", o->defines[i]);
    for (int i = 0; i < o->ninclude_dirs; i++, q->nflags++)
        q->flags[q->nflags] = q->owned[q->nflags] = flag_printf("-I%s", o->include_dirs[i]);

    gather_includes(&q->inc, q->source, o->include_dirs, o->ninclude_dirs, 0);

    hkc_key_builder *kb = hkc_key_begin();
    if (!kb)
        return hkc_fail(q->ctx, HK_ENOMEM, "out of memory");
    uint32_t fmt = HK_CACHE_FORMAT_VERSION;
    hkc_key_add(kb, "format", &fmt, sizeof fmt);
    hkc_key_add_str(kb, "backend", q->be->ops->name);
    hkc_key_add_str(kb, "target", q->target);
    hkc_key_add_str(kb, "toolchain", q->be->ops->toolchain(q->be, q->ctx->cache));
    for (int i = 0; i < q->nflags; i++)
        hkc_key_add_str(kb, "flag", q->flags[i]);
    for (int i = 0; i < q->ninstantiate; i++)
        hkc_key_add_str(kb, "instantiate", q->instantiate[i]);
    hkc_key_add_str(kb, "name", q->name);
    hkc_key_add_str(kb, "source", q->source);
    hkc_key_add_str(kb, "includes", q->inc.text.data);
    q->key = hkc_key_end(kb);
    return 0;
}

/* A compile that failed on a backend where __CUDA_ARCH__ is undefined (all
 * but the NVIDIA one, as HIP leaves it), of a source that tests it: CUDA
 * code such as candle's compatibility.cuh then takes its branches for old
 * NVIDIA GPUs, which redefine what HIP already has. Say so, and how to
 * choose a branch. */
static void note_cuda_arch(const compile_req *q, hkc_strbuf *msg)
{
    if (!strcmp(q->be->ops->name, "cuda") ||
        !(strstr(q->source, "__CUDA_ARCH__") ||
          (q->inc.text.data && strstr(q->inc.text.data, "__CUDA_ARCH__"))))
        return;
    for (int i = 0; i < q->nflags; i++)
        if (!strncmp(q->flags[i], "-D__CUDA_ARCH__", 15))
            return;
    hkc_strbuf_printf(msg, "\nnote: %s tests __CUDA_ARCH__, which the %s backend leaves undefined "
                           "(as HIP does), so `#if __CUDA_ARCH__ < N` blocks are compiled; to take "
                           "the branches for a recent NVIDIA GPU instead, pass defines = "
                           "{\"__CUDA_ARCH__=800\"} (hk.compile) or -D__CUDA_ARCH__=800",
                      q->name, q->be->ops->name);
}

/* Whether text defines `int main(`: a whole program, not a kernel file. */
static int has_main(const char *text)
{
    for (const char *p = text; (p = strstr(p, "main")) != NULL; p += 4) {
        const char *b = p, *a = p + 4;
        while (*a == ' ' || *a == '\t')
            a++;
        while (b > text && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (*a == '(' && b - text >= 3 && p - b < 16 && !strncmp(b - 3, "int", 3) &&
            (b - 3 == text || !(isalnum((unsigned char)b[-4]) || b[-4] == '_')))
            return 1;
    }
    return 0;
}

/* A compile that failed on a whole program (rocm-examples' main.hip: host
 * code, main, kernel<<<...>>> launches): hipkit compiles device code, so
 * say so once, after the compiler's messages. */
static void note_whole_program(const compile_req *q, hkc_strbuf *msg)
{
    if (!strstr(q->source, "<<<") && !has_main(q->source))
        return;
    hkc_strbuf_printf(msg, "\nnote: %s looks like a whole program (int main, or kernel<<<...>>> "
                           "launches); hipkit compiles device code and launches kernels itself "
                           "(m.NAME:launch in Lua): give it the kernels and the device code they "
                           "use, e.g. put the host part under #ifndef KERNELS_ONLY and pass "
                           "defines = {\"KERNELS_ONLY\"}",
                      q->name);
}

/* A compile or preprocess of q that failed (r, the compiler's messages in
 * msg): hkc_fail with the notes above after a compiler's error. */
static int fail_noted(const compile_req *q, int r, hkc_strbuf *msg)
{
    if (r == HK_ECOMPILE) {
        note_cuda_arch(q, msg);
        note_whole_program(q, msg);
    }
    return hkc_fail(q->ctx, r, "%s", msg->data);
}

/* Kernels a compiler of this backend names by a mangled symbol the core
 * must keep (backend.h, lowers_names). */
static int needs_symbols(const hkc_backend *be, const hkc_source_kernel *k, int n)
{
    for (int i = 0; be->ops->lowers_names && i < n; i++)
        if (hkc_name_is_expression(k[i].name))
            return 1;
    return 0;
}

/* The symbols of a names entry ("name\tsymbol\n" lines) given to the
 * kernels; 1 when every kernel named by an expression got one. */
static int symbols_apply(const char *text, size_t len, hkc_source_kernel *k, int n)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *tab = memchr(p, '\t', (size_t)(end - p));
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!tab || !nl || tab > nl)
            return 0;
        for (int i = 0; i < n; i++)
            if (!k[i].symbol && strlen(k[i].name) == (size_t)(tab - p) &&
                !memcmp(k[i].name, p, (size_t)(tab - p)))
                k[i].symbol = strndup(tab + 1, (size_t)(nl - tab - 1));
        p = nl + 1;
    }
    for (int i = 0; i < n; i++)
        if (hkc_name_is_expression(k[i].name) && !k[i].symbol)
            return 0;
    return 1;
}

/* The compiler's symbols (job.lowered) given to the kernels and stored
 * beside the code object. A kernel named by an expression and given none
 * cannot be found in the code: said as an error. */
static int symbols_keep(compile_req *q, const hkc_cache_entry_id *id, char **lowered,
                        hkc_source_kernel *k, int n, int no_cache)
{
    hkc_strbuf text;
    hkc_strbuf_init(&text);
    int r = 0;
    for (int i = 0; i < n; i++) {
        k[i].symbol = lowered[i];
        lowered[i] = NULL;
        if (k[i].symbol)
            hkc_strbuf_printf(&text, "%s\t%s\n", k[i].name, k[i].symbol);
        else if (hkc_name_is_expression(k[i].name) && !r)
            r = hkc_fail(q->ctx, HK_EBACKEND, "%s: the compiler gave no symbol for kernel '%s'",
                         q->name, k[i].name);
    }
    if (r == 0 && !no_cache) {
        hkc_strbuf msg;
        hkc_strbuf_init(&msg);
        hkc_cache_put(q->ctx->cache, id, text.data, text.len, &msg);
        if (msg.len)
            hkc_warn(q->ctx, "%s", msg.data);
        hkc_strbuf_free(&msg);
    }
    hkc_strbuf_free(&text);
    return r;
}

/* Drops the symbols a cached code object gave its kernels, before they
 * are compiled again. */
static void forget_symbols(hkc_source_kernel *kernels, int nkernels)
{
    for (int i = 0; i < nkernels; i++) {
        free(kernels[i].symbol);
        kernels[i].symbol = NULL;
    }
}

/* The code object from the disk cache, or compiled (and stored). Kernels
 * the compiler names by mangled symbols get them (from the cache's names
 * entry beside the code, or from the compile). */
static int req_fetch(compile_req *q, hkc_source_kernel *kernels, int nkernels, int no_cache,
                     void **code, size_t *code_size, hk_code_origin *origin)
{
    nkernels = hkc_source_launchable(kernels, nkernels); /* overloads: in no table */
    hkc_backend *be = q->be;
    char sub[512], safe_name[128];
    snprintf(sub, sizeof sub, "%s-%s-%s", be->ops->name, q->target, be->ops->toolchain(be, q->ctx->cache));
    sanitize_name(q->name, safe_name, sizeof safe_name);
    hkc_cache_entry_id id = {.sub = sub, .name = safe_name, .ext = be->ops->code_ext, .key = q->key};
    hkc_cache_entry_id names_id = id;
    names_id.ext = "names.txt";
    int symbols = !q->noffline && needs_symbols(be, kernels, nkernels);
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    char **lowered = NULL;
    int r = 0;
    *origin = HK_ORIGIN_JIT;
    if (!no_cache && !q->skip_cache_get && hkc_cache_get(q->ctx->cache, &id, code, code_size, &msg)) {
        void *names = NULL;
        size_t nsize = 0;
        if (!symbols || (hkc_cache_get(q->ctx->cache, &names_id, &names, &nsize, &msg) &&
                         symbols_apply(names, nsize, kernels, nkernels))) {
            free(names);
            *origin = HK_ORIGIN_CACHE;
            goto done;
        }
        free(names); /* no symbols for its kernels: compiled again */
        free(*code);
        *code = NULL;
        forget_symbols(kernels, nkernels);
    }
    if (msg.len)
        hkc_warn(q->ctx, "%s", msg.data);
    hkc_strbuf_clear(&msg);
    lowered = calloc(nkernels > 0 ? (size_t)nkernels : 1, sizeof *lowered);
    if (!lowered) {
        r = hkc_fail(q->ctx, HK_ENOMEM, "out of memory");
        goto done;
    }
    hkc_compile_job job = {
        .name = q->name, .source = q->source, .path = q->path, .flags = q->flags,
        .nflags = q->nflags, .kernels = kernels, .nkernels = nkernels, .lowered = lowered,
        .globals = (const char *const *)q->globals, .nglobals = q->nglobals,
    };
    if (q->noffline)
        r = be->ops->compile_offline(be, q->offline_targets, q->noffline, &job, code, code_size,
                                     &msg);
    else if (q->dev >= 0)
        r = be->ops->compile(be, q->dev, &job, code, code_size, &msg);
    else
        r = be->ops->compile_target(be, q->target, &job, code, code_size, &msg);
    if (r != 0) {
        r = fail_noted(q, r, &msg);
        goto done;
    }
    if (msg.len) /* warnings from the compiler: keep them visible */
        hkc_warn(q->ctx, "%s: compiler said:\n%s", q->name, msg.data);
    hkc_strbuf_clear(&msg);
    if (symbols)
        r = symbols_keep(q, &names_id, lowered, kernels, nkernels, no_cache);
    if (r != 0) {
        free(*code);
        *code = NULL;
        goto done;
    }
    if (!no_cache) {
        hkc_cache_put(q->ctx->cache, &id, *code, *code_size, &msg);
        if (msg.len)
            hkc_warn(q->ctx, "%s", msg.data);
    }
done:
    for (int i = 0; lowered && i < nkernels; i++)
        free(lowered[i]);
    free(lowered);
    hkc_strbuf_free(&msg);
    return r;
}

/* "kernel 'k' (line 40): ..." of a scan of preprocessed text, with the line
 * named in the user's file instead. */
static void locate_scan_error(const char *filtered, hkc_strbuf *msg)
{
    const char *at = strstr(msg->data, "(line ");
    int line = at ? atoi(at + 6) : 0;
    char file[1024];
    int orig = line ? hkc_pp_locate(filtered, line, file, sizeof file) : 0;
    if (!orig)
        return;
    hkc_strbuf fixed;
    hkc_strbuf_init(&fixed);
    const char *close = strchr(at, ')');
    hkc_strbuf_printf(&fixed, "%.*s(%s:%d%s", (int)(at - msg->data), msg->data, file, orig,
                      close ? close : ")");
    hkc_strbuf_free(msg);
    *msg = fixed;
}

/* The cache entry that holds q's preprocessed source, beside its code
 * object (sub and name are the caller's buffers). */
static hkc_cache_entry_id pp_entry(const compile_req *q, char *sub, size_t subcap, char *name,
                                   size_t namecap)
{
    hkc_backend *be = q->be;
    snprintf(sub, subcap, "%s-%s-%s", be->ops->name, q->target,
             be->ops->toolchain(be, q->ctx->cache));
    sanitize_name(q->name, name, namecap);
    return (hkc_cache_entry_id){.sub = sub, .name = name, .ext = "kernels.txt", .key = q->key};
}

/* The preprocessed source from the disk cache, if there (1). */
static int pp_cached(const compile_req *q, int no_cache, hkc_strbuf *text)
{
    char sub[512], safe_name[128];
    hkc_cache_entry_id id = pp_entry(q, sub, sizeof sub, safe_name, sizeof safe_name);
    void *data = NULL;
    size_t size = 0;
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    int hit = !no_cache && hkc_cache_get(q->ctx->cache, &id, &data, &size, &warn);
    if (hit)
        hkc_strbuf_append(text, data, size);
    else if (warn.len) /* a damaged entry, removed */
        hkc_warn(q->ctx, "%s", warn.data);
    free(data);
    hkc_strbuf_free(&warn);
    return hit;
}

static void pp_store(const compile_req *q, int no_cache, const hkc_strbuf *text)
{
    if (no_cache)
        return;
    char sub[512], safe_name[128];
    hkc_cache_entry_id id = pp_entry(q, sub, sizeof sub, safe_name, sizeof safe_name);
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    hkc_cache_put(q->ctx->cache, &id, text->data, text->len, &warn);
    if (warn.len)
        hkc_warn(q->ctx, "%s", warn.data);
    hkc_strbuf_free(&warn);
}

/* The backend's preprocess slot on q's source. */
static int pp_run(const compile_req *q, hkc_strbuf *text, hkc_strbuf *msg)
{
    hkc_compile_job job = {
        .name = q->name, .source = q->source, .path = q->path, .flags = q->flags,
        .nflags = q->nflags,
    };
    return q->be->ops->preprocess(q->be, q->dev, &job, text, msg);
}

/* The source as the backend's compiler preprocesses it, cut to the user's
 * lines (backend.h, preprocess): from the disk cache beside the code
 * object when there, so a cache hit runs no compiler. */
static int req_preprocessed(compile_req *q, int no_cache, hkc_strbuf *text, hkc_strbuf *msg)
{
    if (pp_cached(q, no_cache, text))
        return 0;
    int r = pp_run(q, text, msg);
    if (r == 0)
        pp_store(q, no_cache, text);
    return r;
}

/* A scan of preprocessed text (r, msg) finished: kernels at the user's
 * lines, a scan error said in hkc_fail naming the user's line. */
static int req_scan_done(compile_req *q, const hkc_strbuf *text, int r, hkc_strbuf *msg,
                         hkc_source_kernel **kernels, int *count)
{
    char file[1024];
    for (int i = 0; r == 0 && i < *count; i++) {
        int line = hkc_pp_locate(text->data, (*kernels)[i].line, file, sizeof file);
        (*kernels)[i].line = line ? line : (*kernels)[i].line;
    }
    if (r != 0) {
        locate_scan_error(text->data, msg);
        r = hkc_fail(q->ctx, HK_ECOMPILE, "%s: %s", q->name, msg->data);
    }
    return r;
}

/* The kernels (and module variables) in preprocessed text. */
static int req_scan(compile_req *q, const hkc_strbuf *text, hkc_source_kernel **kernels,
                    int *count)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    int r = hkc_source_scan_all(text->data, NULL, q->instantiate, q->ninstantiate, kernels, count,
                                &q->globals, &q->nglobals, &msg);
    r = req_scan_done(q, text, r, &msg, kernels, count);
    hkc_strbuf_free(&msg);
    return r;
}

/* The kernels of q's source as written (with the user headers it pulls in
 * as outside text), where the backend has no preprocessor. */
static int scan_as_written(compile_req *q, hkc_source_kernel **kernels, int *count)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    int r = hkc_source_scan_all(q->source, q->inc.text.data, q->instantiate, q->ninstantiate,
                                kernels, count, &q->globals, &q->nglobals, &msg);
    if (r != 0)
        r = hkc_fail(q->ctx, HK_ECOMPILE, "%s: %s", q->name, msg.data);
    hkc_strbuf_free(&msg);
    return r;
}

/* The kernels of q's source with their parameters: found in the
 * preprocessed source where the backend can preprocess, else in the source
 * as written (with the user headers it pulls in as outside text). */
static int req_discover(compile_req *q, int no_cache, hkc_source_kernel **kernels, int *count)
{
    hkc_strbuf msg, text;
    hkc_strbuf_init(&msg);
    hkc_strbuf_init(&text);
    int r;
    r = q->be->ops->preprocess ? req_preprocessed(q, no_cache, &text, &msg) : HK_EUNSUPPORTED;
    if (r == HK_EUNSUPPORTED) {
        r = scan_as_written(q, kernels, count);
    } else if (r != 0) {
        r = fail_noted(q, r, &msg);
    } else {
        r = req_scan(q, &text, kernels, count);
    }
    hkc_strbuf_free(&msg);
    hkc_strbuf_free(&text);
    return r;
}

/* Discovery beside the compile. A backend that lowers names compiles from
 * the source alone: the kernels it is given only name what to lower. When
 * none can need it (no instantiation asked for, no `namespace` in the
 * user's text), the preprocessor runs on a thread of its own while the
 * compiler runs, and discovery adds no wall time (issue 17's target: at
 * most 5% over the compile). */
static int overlap_pays(const compile_req *q)
{
    return q->be->ops->preprocess && q->be->ops->lowers_names && !q->ninstantiate &&
           !q->noffline && !strstr(q->source, "namespace") &&
           !(q->inc.text.data && strstr(q->inc.text.data, "namespace"));
}

/* Preprocess and scan, on a thread of their own: nothing here touches the
 * context (errors are said by the caller). */
typedef struct pp_task {
    const compile_req *q;
    hkc_strbuf text, msg, scan_msg;
    int r, scan_r;
    hkc_source_kernel *kernels;
    int count;
    char **globals;
    int nglobals;
} pp_task;

static void *pp_task_run(void *arg)
{
    pp_task *t = arg;
    t->r = pp_run(t->q, &t->text, &t->msg);
    if (t->r == 0)
        t->scan_r = hkc_source_scan_all(t->text.data, NULL, NULL, 0, &t->kernels, &t->count,
                                        &t->globals, &t->nglobals, &t->scan_msg);
    return NULL;
}

/* req_discover and req_fetch at once (overlap_pays said they may be). The
 * errors come in the order the sequential path gives them: the
 * preprocessor's, the scan's, then the compiler's. */
static int req_discover_and_fetch(compile_req *q, int no_cache, hkc_source_kernel **kernels,
                                  int *count, void **code, size_t *code_size,
                                  hk_code_origin *origin)
{
    pp_task t = {.q = q};
    hkc_strbuf_init(&t.text);
    hkc_strbuf_init(&t.msg);
    hkc_strbuf_init(&t.scan_msg);
    pthread_t th;
    if (pp_cached(q, no_cache, &t.text)) { /* nothing to overlap */
        int r = req_scan(q, &t.text, kernels, count);
        hkc_strbuf_free(&t.text);
        hkc_strbuf_free(&t.msg);
        return r ? r : req_fetch(q, *kernels, *count, no_cache, code, code_size, origin);
    }
    if (pthread_create(&th, NULL, pp_task_run, &t) != 0) {
        hkc_strbuf_free(&t.text);
        hkc_strbuf_free(&t.msg);
        int r = req_discover(q, no_cache, kernels, count);
        return r ? r : req_fetch(q, *kernels, *count, no_cache, code, code_size, origin);
    }
    int rf = req_fetch(q, NULL, 0, no_cache, code, code_size, origin);
    char *fetch_err = rf ? strdup(hk_errmsg(q->ctx)) : NULL;
    pthread_join(th, NULL);
    int r = t.r;
    if (r == HK_EUNSUPPORTED) { /* no preprocessor here */
        r = scan_as_written(q, kernels, count);
    } else if (r != 0) {
        r = fail_noted(q, r, &t.msg);
    } else {
        pp_store(q, no_cache, &t.text);
        *kernels = t.kernels;
        *count = t.count;
        q->globals = t.globals;
        q->nglobals = t.nglobals;
        r = req_scan_done(q, &t.text, t.scan_r, &t.scan_msg, kernels, count);
    }
    if (r == 0 && rf != 0)
        r = hkc_fail(q->ctx, rf, "%s", fetch_err ? fetch_err : hk_strerror(rf));
    if (r == 0 && needs_symbols(q->be, *kernels, *count)) { /* a namespace from a macro */
        free(*code);
        *code = NULL;
        r = req_fetch(q, *kernels, *count, no_cache, code, code_size, origin);
    }
    if (r != 0) {
        free(*code);
        *code = NULL;
    }
    free(fetch_err);
    hkc_strbuf_free(&t.text);
    hkc_strbuf_free(&t.msg);
    hkc_strbuf_free(&t.scan_msg);
    return r;
}

int hkc_module_discover(hk_module *m, const char *source, const hk_compile_options *o)
{
    hkc_modentry *e = m->entry;
    if (e->src_kernels)
        return 0;
    hkc_device *dev = e->dev;
    compile_req q = {
        .ctx = m->ctx, .be = dev->be, .target = dev->info.target, .dev = dev->index,
        .name = o->name && *o->name ? o->name : "module", .source = source,
    };
    hkc_source_kernel *k = NULL;
    int n = 0;
    int r = req_prepare(&q, o);
    if (r == 0)
        r = req_discover(&q, o->no_cache, &k, &n);
    if (r == 0) {
        e->src_kernels = k;
        e->nsrc_kernels = n;
        e->src_globals = q.globals;
        e->nsrc_globals = q.nglobals;
        q.globals = NULL;
        q.nglobals = 0;
    }
    req_free(&q);
    return r;
}

static const hk_compile_options *options_or_defaults(const hk_compile_options *o,
                                                     hk_compile_options *defaults)
{
    if (o)
        return o;
    hk_compile_options_defaults(defaults);
    return defaults;
}

/* o->path, where the caller's struct is new enough to have it. */
static const char *options_path(const hk_compile_options *o)
{
    return o->size >= offsetof(hk_compile_options, path) + sizeof o->path ? o->path : NULL;
}

/* The backend named `name`, loaded; else fails naming why. */
static int find_backend(hk_context *ctx, const char *name, hkc_backend **out)
{
    hkc_backend *be = NULL;
    for (int i = 0; i < ctx->nbackends; i++)
        if (!strcmp(ctx->backends[i].ops->name, name))
            be = &ctx->backends[i];
    if (!be) {
        hkc_strbuf names;
        hkc_strbuf_init(&names);
        for (int i = 0; i < ctx->nbackends; i++)
            hkc_strbuf_printf(&names, "%s%s", i ? ", " : "", ctx->backends[i].ops->name);
        int r = hkc_fail(ctx, HK_ENOTFOUND, "no backend named '%s' (%s)", name, names.data);
        hkc_strbuf_free(&names);
        return r;
    }
    if (!be->impl)
        return hkc_fail(ctx, HK_ENOTFOUND, "the %s backend is not loaded: %s", name,
                        be->reason.data);
    *out = be;
    return 0;
}

HK_API int hk_module_compile(hk_context *ctx, const char *source, const hk_compile_options *o,
                             hk_module **out)
{
    hk_compile_options defaults;
    o = options_or_defaults(o, &defaults);
    if (!ctx || !source || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_module_compile: context, source or out is NULL");
    *out = NULL;
    int rr = hkc_graph_refuse(ctx, "hk_module_compile", "a compile runs on the host, once");
    if (rr)
        return rr;
    double t0 = hkc_now_ms();
    hkc_device *dev = hkc_current_device(ctx);
    compile_req q = {
        .ctx = ctx, .be = dev->be, .target = dev->info.target, .dev = dev->index,
        .path = options_path(o), .name = o->name && *o->name ? o->name : "module", .source = source,
    };
    hkc_source_kernel *kernels = NULL;
    int nkernels = 0;
    void *code = NULL;
    size_t code_size = 0;
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);

    int r = req_prepare(&q, o);
    if (r != 0)
        goto done;
    hkc_modentry *e = table_find(ctx, dev, &q.key);
    if (e) {
        r = hkc_module_new(ctx, e, q.name, HK_ORIGIN_MEMORY, hkc_now_ms() - t0, out);
        goto done;
    }
    /* Past the memory table: find the kernels and their parameters. */
    hk_code_origin origin;
    if (overlap_pays(&q)) {
        r = req_discover_and_fetch(&q, o->no_cache, &kernels, &nkernels, &code, &code_size,
                                   &origin);
    } else {
        r = req_discover(&q, o->no_cache, &kernels, &nkernels);
        if (r == 0)
            r = req_fetch(&q, kernels, nkernels, o->no_cache, &code, &code_size, &origin);
    }
    if (r != 0)
        goto done;
    r = hkc_entry_load(ctx, dev, code, code_size, &e);
    if (r != 0 && origin == HK_ORIGIN_CACHE) {
        /* Whole and checksummed, yet not loadable (written by another
         * toolchain, or damaged before it was stored): the cache only ever
         * saves time, so compile again and store the new code over it. */
        char why[300];
        snprintf(why, sizeof why, "%s", hk_errmsg(ctx));
        hkc_warn(ctx, "compile cache: the entry for '%s' would not load (%s); compiling again", q.name, why);
        free(code);
        code = NULL;
        forget_symbols(kernels, nkernels);
        q.skip_cache_get = 1;
        r = req_fetch(&q, kernels, nkernels, o->no_cache, &code, &code_size, &origin);
        if (r == 0)
            r = hkc_entry_load(ctx, dev, code, code_size, &e);
    }
    if (r != 0)
        goto done;
    e->key = q.key;
    e->has_key = 1;
    e->src_kernels = kernels;
    e->nsrc_kernels = nkernels;
    e->src_globals = q.globals;
    e->nsrc_globals = q.nglobals;
    q.globals = NULL;
    q.nglobals = 0;
    name_metas(e);
    kernels = NULL;
    nkernels = 0;
    r = hkc_module_new(ctx, e, q.name, origin, hkc_now_ms() - t0, out);

done:
    req_free(&q);
    free(code);
    hkc_source_kernels_free(kernels, nkernels);
    hkc_strbuf_free(&msg);
    return r;
}

HK_API int hk_compile_for_target(hk_context *ctx, const char *backend, const char *target,
                                 const char *source, const hk_compile_options *o, void **code,
                                 size_t *size, hk_code_origin *origin)
{
    hk_compile_options defaults;
    o = options_or_defaults(o, &defaults);
    if (!ctx || !backend || !target || !source || !code || !size)
        return hkc_fail(ctx, HK_EINVAL,
                        "hk_compile_for_target: context, backend, target, source or out is NULL");
    *code = NULL;
    *size = 0;
    hkc_backend *be = NULL;
    int r = find_backend(ctx, backend, &be);
    if (r != 0)
        return r;
    if (!be->ops->compile_target || !be->ops->target_normalize)
        return hkc_fail(ctx, HK_EUNSUPPORTED,
                        "the %s backend compiles only for a device it has (no compile for a named target)",
                        backend);
    char norm[96];
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    r = be->ops->target_normalize(be, target, norm, sizeof norm, &msg);
    if (r != 0) {
        r = hkc_fail(ctx, r, "%s", msg.data);
        hkc_strbuf_free(&msg);
        return r;
    }
    compile_req q = {
        .ctx = ctx, .be = be, .target = norm, .dev = -1, .path = options_path(o),
        .name = o->name && *o->name ? o->name : "module", .source = source,
    };
    hkc_source_kernel *kernels = NULL;
    int nkernels = 0;
    hk_code_origin got = HK_ORIGIN_JIT;
    r = req_prepare(&q, o);
    if (r == 0)
        r = req_discover(&q, o->no_cache, &kernels, &nkernels);
    if (r == 0)
        r = req_fetch(&q, kernels, nkernels, o->no_cache, code, size, &got);
    if (r == 0 && origin)
        *origin = got;
    req_free(&q);
    hkc_source_kernels_free(kernels, nkernels);
    hkc_strbuf_free(&msg);
    return r;
}

#define MAX_OFFLINE_TARGETS 16

/* Splits a comma-separated list into normalised, distinct targets. */
static int offline_targets(hk_context *ctx, hkc_backend *be, const char *list,
                           char out[][96], int *count, hkc_strbuf *joined)
{
    int n = 0;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = 0;
    for (const char *p = list; r == 0 && *p;) {
        size_t len = strcspn(p, ",");
        char one[256];
        snprintf(one, sizeof one, "%.*s", (int)(len < 255 ? len : 255), p);
        p += len + (p[len] == ',');
        if (!one[0])
            continue;
        if (n == MAX_OFFLINE_TARGETS) {
            r = hkc_fail(ctx, HK_EINVAL, "more than %d targets", MAX_OFFLINE_TARGETS);
        } else if (be->ops->target_normalize(be, one, out[n], sizeof out[n], &err) != 0) {
            r = hkc_fail(ctx, HK_EINVAL, "bad %s target '%s': %s", be->ops->name, one, err.data);
        } else {
            for (int i = 0; i < n && r == 0; i++)
                if (!strcmp(out[i], out[n]))
                    r = hkc_fail(ctx, HK_EINVAL, "target %s is given twice", out[n]);
            hkc_strbuf_printf(joined, "%s%s", n ? "," : "", out[n]);
            n++;
        }
    }
    if (r == 0 && n == 0)
        r = hkc_fail(ctx, HK_EINVAL, "no %s target given", be->ops->name);
    hkc_strbuf_free(&err);
    *count = n;
    return r;
}

HK_API int hk_compile_offline(hk_context *ctx, const char *backend, const char *targets,
                              const char *source, const hk_compile_options *o, void **code,
                              size_t *size)
{
    hk_compile_options defaults;
    o = options_or_defaults(o, &defaults);
    if (!ctx || !backend || !targets || !source || !code || !size)
        return hkc_fail(ctx, HK_EINVAL,
                        "hk_compile_offline: context, backend, targets, source or out is NULL");
    *code = NULL;
    *size = 0;
    hkc_backend *be = NULL;
    int r = find_backend(ctx, backend, &be);
    if (r != 0)
        return r;
    if (!be->ops->compile_offline || !be->ops->target_normalize)
        return hkc_fail(ctx, HK_EUNSUPPORTED, "the %s backend builds no code objects to ship",
                        backend);
    char norm[MAX_OFFLINE_TARGETS][96];
    const char *list[MAX_OFFLINE_TARGETS];
    int n = 0;
    hkc_strbuf joined;
    hkc_strbuf_init(&joined);
    r = offline_targets(ctx, be, targets, norm, &n, &joined);
    for (int i = 0; i < n; i++)
        list[i] = norm[i];
    compile_req q = {
        .ctx = ctx, .be = be, .target = joined.data, .dev = -1, .offline_targets = list,
        .noffline = n, .path = options_path(o),
        .name = o->name && *o->name ? o->name : "module", .source = source,
    };
    hk_code_origin got;
    if (r == 0)
        r = req_prepare(&q, o);
    if (r == 0)
        r = req_fetch(&q, NULL, 0, 1, code, size, &got);
    req_free(&q);
    hkc_strbuf_free(&joined);
    return r;
}

/* ----------------------------------------------------------------- load */

/* Code for another backend than the current device's (an AMD code object
 * while a CPU is selected): say so, rather than let the wrong loader fail
 * in its own words. */
void hkc_kernel_free(hk_kernel *k)
{
    hkc_signature_free(&k->sig);
    free(k->name);
    free(k);
}

/* Compiled code nobody holds stays in the table for the next compile of the
 * same source, up to this many entries; loaded files go when released. */
#define KEEP_UNUSED 32

static void entry_unload(hk_context *ctx, hkc_modentry **link)
{
    hkc_modentry *e = *link;
    *link = e->next;
    e->dev->be->ops->module_unload(e->dev->be, e->bmod);
    free(e->metas);
    free(e->code);
    hkc_source_kernels_free(e->src_kernels, e->nsrc_kernels);
    hkc_source_globals_free(e->src_globals, e->nsrc_globals);
    free(e);
    (void)ctx;
}

static void table_trim(hk_context *ctx)
{
    int unused = 0;
    for (hkc_modentry **link = &ctx->modules; *link;) {
        hkc_modentry *e = *link;
        /* newest first: the entries past the first KEEP_UNUSED idle ones go */
        if (e->refs == 0 && (!e->has_key || ++unused > KEEP_UNUSED)) {
            entry_unload(ctx, link);
            continue;
        }
        link = &e->next;
    }
}

HK_API void hk_module_free(hk_module *m)
{
    if (!m)
        return;
    hkc_graph_forget(m->ctx, m);
    for (int i = 0; i < m->nkernels; i++)
        hkc_kernel_free(m->kernels[i]);
    free(m->kernels);
    m->entry->refs--;
    hk_context *ctx = m->ctx;
    free(m->name);
    free(m);
    table_trim(ctx);
}

HK_API const char *hk_module_name(const hk_module *m) { return m->name; }

HK_API int hk_module_code(const hk_module *m, const void **data, size_t *size)
{
    if (!m || !data || !size)
        return hkc_fail(m ? m->ctx : NULL, HK_EINVAL, "hk_module_code: NULL argument");
    if (!m->entry->code)
        return hkc_fail(m->ctx, HK_ENOMEM, "the code object was not kept (out of memory)");
    *data = m->entry->code;
    *size = m->entry->code_size;
    return 0;
}
HK_API int hk_module_kernel_count(const hk_module *m) { return m->entry->nmetas; }

HK_API const char *hk_module_kernel_name(const hk_module *m, int i)
{
    return i >= 0 && i < m->entry->nmetas ? m->entry->metas[i].name : NULL;
}
