/* Graphs: kernel launches recorded once and replayed (hk_graph_*).
 *
 * Recording runs nothing: launch.c checks and packs each launch as usual
 * and hands it here, where the kernel, its configuration and a copy of the
 * packed bytes become a node. At hk_graph_end a backend with graph slots
 * builds its native graph from the nodes (CUDA graph, hipGraph); the host
 * backend has none, and a replay walks the nodes through its `launch`.
 *
 * A graph does not own the buffers and modules its nodes use (the C API
 * frees them whenever the caller says), so it remembers them: freeing one
 * marks every graph using it invalid, with the reason, and a later launch
 * fails with that reason instead of running kernels on freed memory. The
 * Lua binding keeps them alive for as long as the graph lives.
 *
 * The one memory a graph owns is the raw scratch its recorded ops asked
 * for (host->scratch_raw: memory the op's kernels write whole before they
 * read it): a buffer of its own per request, since every replay uses it,
 * freed with the graph or as the context ends. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct graph_node {
    hk_kernel *k;
    hk_launch_config cfg;
    void *kernarg; /* malloc'd copy of the packed bytes */
    size_t size;
} graph_node;

/* Something a node uses, with the first node that uses it (for messages). */
typedef struct graph_use {
    const void *obj;
    int is_buffer;
    int node;
} graph_use;

struct hk_graph {
    hk_context *ctx; /* NULL once the context is destroyed */
    int device;
    graph_node *nodes;
    int n, cap;
    graph_use *uses;
    int nuses, capuses, nbuffers;
    void *bgraph;  /* the backend's native graph, or NULL */
    int error;     /* recording: the first capture error (its text in invalid) */
    char *invalid; /* why it can no longer launch (malloc'd), or NULL */
    hkc_kernel_writes writes; /* recording: what its last node may write */
    hk_buffer **owned;        /* raw scratch of its recorded ops */
    int nowned, capowned;
    hk_graph *next;
};

hkc_kernel_writes *hkc_graph_writes(hk_graph *g) { return &g->writes; }

static const char *replay_kind(const hkc_backend *be)
{
    if (!be->ops->graph_create)
        return "recorded list";
    return strcmp(be->ops->name, "cuda") == 0 ? "CUDA graph"
           : strcmp(be->ops->name, "hip") == 0 ? "hipGraph" : "native graph";
}

/* Frees g's raw scratch while its context lives (a freed buffer tells the
 * graphs that captured g's nodes). */
static void free_owned(hk_graph *g)
{
    for (int i = 0; i < g->nowned; i++)
        hk_buffer_free(g->owned[i]);
    free(g->owned);
    g->owned = NULL;
    g->nowned = g->capowned = 0;
}

static void graph_free(hk_graph *g)
{
    free_owned(g); /* none left once the context has ended */
    for (int i = 0; i < g->n; i++)
        free(g->nodes[i].kernarg);
    free(g->nodes);
    free(g->uses);
    free(g->invalid);
    free(g);
}

/* Marks g unusable, keeping the first reason. */
static void invalidate(hk_graph *g, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void invalidate(hk_graph *g, int code, const char *fmt, ...)
{
    if (g->invalid)
        return;
    hkc_strbuf m;
    hkc_strbuf_init(&m);
    va_list ap;
    va_start(ap, fmt);
    hkc_strbuf_vprintf(&m, fmt, ap);
    va_end(ap);
    g->invalid = m.cap ? m.data : strdup("out of memory"); /* cap 0: the static empty text */
    g->error = code;
}

/* A recording that failed fails every later call the same way. */
static int recording_failed(hk_graph *g)
{
    return hkc_fail(g->ctx, g->error, "%s", g->invalid);
}

HK_API int hk_graph_begin(hk_context *ctx)
{
    if (!ctx)
        return hkc_fail(NULL, HK_EINVAL, "hk_graph_begin: context is NULL");
    if (ctx->graph_rec)
        return hkc_fail(ctx, HK_ESTATE, "hk_graph_begin: a graph is already being recorded (graphs do "
                                        "not nest; launch a finished graph inside instead)");
    hk_graph *g = calloc(1, sizeof *g);
    if (!g)
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    g->ctx = ctx;
    g->device = ctx->current;
    ctx->graph_rec = g;
    return 0;
}

HK_API int hk_graph_recording(const hk_context *ctx) { return ctx && ctx->graph_rec; }

int hkc_graph_refuse(hk_context *ctx, const char *call, const char *why)
{
    if (!ctx || !ctx->graph_rec || ctx->graph_paused)
        return 0;
    hk_graph *g = ctx->graph_rec;
    invalidate(g, HK_ESTATE, "%s cannot be captured in a graph (%s); the recording is discarded", call,
               why);
    return recording_failed(g);
}

int hkc_graph_scratch(hk_context *ctx, hk_dtype t, size_t count, hk_buffer **out)
{
    hk_graph *g = ctx->graph_rec;
    *out = NULL;
    if (g->invalid)
        return recording_failed(g);
    if (g->nowned == g->capowned) {
        int cap = g->capowned ? 2 * g->capowned : 4;
        hk_buffer **v = realloc(g->owned, (size_t)cap * sizeof *v);
        if (!v)
            return hkc_fail(ctx, HK_ENOMEM, "out of memory");
        g->owned = v;
        g->capowned = cap;
    }
    int r = hk_buffer_alloc(ctx, count, t, HK_MEM_DEVICE, out);
    if (r == 0)
        g->owned[g->nowned++] = *out;
    return r;
}

static int add_use(hk_graph *g, const void *obj, int is_buffer)
{
    for (int i = 0; i < g->nuses; i++)
        if (g->uses[i].obj == obj)
            return 0;
    if (g->nuses == g->capuses) {
        int cap = g->capuses ? 2 * g->capuses : 16;
        graph_use *u = realloc(g->uses, (size_t)cap * sizeof *u);
        if (!u)
            return HK_ENOMEM;
        g->uses = u;
        g->capuses = cap;
    }
    g->uses[g->nuses++] = (graph_use){obj, is_buffer, g->n};
    g->nbuffers += is_buffer;
    return 0;
}

/* Appends one launch to g: the node owns a copy of the bytes, and the
 * buffers of args and the kernel's module are remembered. */
static int add_node(hk_graph *g, hk_kernel *k, const hk_launch_config *cfg, const void *kernarg,
                    size_t size, const hk_arg *args, int nargs)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 16;
        graph_node *nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes)
            return hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
        g->nodes = nodes;
        g->cap = cap;
    }
    /* 16-byte aligned like the launch path's stack buffer: vectors of
     * doubles are read in place by the host backend */
    void *copy = aligned_alloc(16, size ? (size + 15) / 16 * 16 : 16);
    if (!copy)
        return hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    if (size)
        memcpy(copy, kernarg, size);
    int r = add_use(g, k->m, 0);
    for (int i = 0; i < nargs && !r; i++)
        if (args[i].kind == HK_ARG_BUFFER && args[i].v.buf)
            r = add_use(g, args[i].v.buf, 1);
    if (r) {
        free(copy);
        return hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    }
    g->nodes[g->n++] = (graph_node){k, *cfg, copy, size};
    return 0;
}

int hkc_graph_capture(hk_kernel *k, const hk_launch_config *cfg, const void *kernarg, size_t size,
                      const hk_arg *args, int nargs)
{
    hk_context *ctx = k->m->ctx;
    hk_graph *g = ctx->graph_rec;
    if (g->invalid)
        return recording_failed(g);
    int dev = (int)(k->m->entry->dev - ctx->devices);
    if (dev != g->device) {
        invalidate(g, HK_ESTATE, "kernel %s is on device %d, the graph is recorded on device %d; a "
                   "graph replays on one device; the recording is discarded", k->name, dev, g->device);
        return recording_failed(g);
    }
    return add_node(g, k, cfg, kernarg, size, args, nargs);
}

/* The nodes as the backend's graph_create takes them. */
static int build_native(hk_graph *g)
{
    hkc_device *dev = &g->ctx->devices[g->device];
    if (!dev->be->ops->graph_create || !g->n)
        return 0;
    hkc_graph_launch *l = calloc((size_t)g->n, sizeof *l);
    if (!l)
        return hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    for (int i = 0; i < g->n; i++) {
        const hk_kernel *k = g->nodes[i].k;
        l[i] = (hkc_graph_launch){{k->bfn, k->name, &k->sig, &k->info}, g->nodes[i].cfg,
                                  g->nodes[i].kernarg, g->nodes[i].size};
    }
    int r = dev->be->ops->graph_create(dev->be, dev->index, l, g->n, &g->bgraph);
    free(l);
    return r;
}

HK_API int hk_graph_end(hk_context *ctx, hk_graph **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_graph_end: context or out is NULL");
    hk_graph *g = ctx->graph_rec;
    if (!g)
        return hkc_fail(ctx, HK_ESTATE, "hk_graph_end: no graph is being recorded (hk_graph_begin)");
    ctx->graph_rec = NULL;
    int r = g->invalid ? recording_failed(g) : build_native(g);
    if (r) {
        graph_free(g);
        return r;
    }
    g->next = ctx->graphs;
    ctx->graphs = g;
    *out = g;
    return 0;
}

/* Replays g's nodes through the backend's launch, in order; the first
 * failure stops it (a fault, an interrupt on the host backend). */
static int replay_list(hk_graph *g)
{
    hkc_device *dev = &g->ctx->devices[g->device];
    for (int i = 0; i < g->n; i++) {
        const graph_node *nd = &g->nodes[i];
        const hkc_launch_kernel lk = {nd->k->bfn, nd->k->name, &nd->k->sig, &nd->k->info};
        hk_launch_config cfg = nd->cfg;
        if (i == 0) /* judged with nothing before it in the recording */
            cfg.flags &= ~HK_LAUNCH_EARLY_START;
        int r = dev->be->ops->launch(dev->be, dev->index, &lk, &cfg, nd->kernarg, nd->size);
        if (r)
            return r;
    }
    return 0;
}

/* Inside a recording a graph's nodes join the new graph, with what they use. */
static int capture_graph(hk_graph *g)
{
    hk_graph *rec = g->ctx->graph_rec;
    if (rec->invalid)
        return recording_failed(rec);
    if (g->device != rec->device) {
        invalidate(rec, HK_ESTATE, "a graph of device %d was launched while recording on device %d; the "
                   "recording is discarded", g->device, rec->device);
        return recording_failed(rec);
    }
    for (int i = 0; i < g->n; i++) {
        const graph_node *nd = &g->nodes[i];
        hk_launch_config cfg = nd->cfg;
        if (i == 0) /* its early start was judged with nothing before it */
            cfg.flags &= ~HK_LAUNCH_EARLY_START;
        int r = add_node(rec, nd->k, &cfg, nd->kernarg, nd->size, NULL, 0);
        if (r)
            return r;
    }
    if (g->n)
        rec->writes = g->writes;
    for (int i = 0; i < g->nuses; i++)
        if (add_use(rec, g->uses[i].obj, g->uses[i].is_buffer))
            return hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    return 0;
}

HK_API int hk_graph_launch(hk_graph *g)
{
    if (!g)
        return hkc_fail(NULL, HK_EINVAL, "hk_graph_launch: graph is NULL");
    if (!g->ctx)
        return hkc_fail(NULL, HK_ESTATE, "hk_graph_launch: the graph's context was destroyed");
    if (g->invalid)
        return hkc_fail(g->ctx, HK_ESTATE, "hk_graph_launch: %s", g->invalid);
    if (g->ctx->graph_rec)
        return capture_graph(g);
    hkc_device *dev = &g->ctx->devices[g->device];
    hkc_writes_forget(&dev->last_writes); /* (the backend starts nothing early after a graph) */
    if (g->bgraph)
        return dev->be->ops->graph_launch(dev->be, dev->index, g->bgraph);
    return replay_list(g);
}

static void destroy_native(hk_graph *g)
{
    if (g->bgraph) {
        hkc_device *dev = &g->ctx->devices[g->device];
        dev->be->ops->graph_destroy(dev->be, g->bgraph);
        g->bgraph = NULL;
    }
}

HK_API void hk_graph_destroy(hk_graph *g)
{
    if (!g)
        return;
    if (g->ctx) {
        for (hk_graph **p = &g->ctx->graphs; *p; p = &(*p)->next)
            if (*p == g) {
                *p = g->next;
                break;
            }
        destroy_native(g);
    }
    graph_free(g);
}

/* Does buffer or module u stand on obj: obj itself, or (a buffer) one it
 * views? */
static int uses_obj(const graph_use *u, const void *obj)
{
    if (u->obj == obj)
        return 1;
    if (!u->is_buffer)
        return 0;
    for (const hk_buffer *b = ((const hk_buffer *)u->obj)->parent; b; b = b->parent)
        if (b == obj)
            return 1;
    return 0;
}

static void forget_in(hk_graph *g, const void *obj)
{
    if (g->invalid) /* its buffers may be gone already: never look at them again */
        return;
    for (int i = 0; i < g->nuses; i++) {
        const graph_use *u = &g->uses[i];
        if (!uses_obj(u, obj))
            continue;
        const char *kernel = u->node < g->n ? g->nodes[u->node].k->name : "?";
        if (u->is_buffer) {
            const hk_buffer *b = u->obj;
            invalidate(g, HK_ESTATE, "a buffer it uses (%s, %zu elements, passed to node %d, kernel %s) "
                       "was freed", hk_dtype_name(b->dtype), b->count, u->node + 1, kernel);
        } else {
            invalidate(g, HK_ESTATE, "the module of kernel %s (node %d) was freed", kernel, u->node + 1);
        }
        return;
    }
}

void hkc_graph_forget(hk_context *ctx, const void *obj)
{
    if (!ctx)
        return;
    for (hk_graph *g = ctx->graphs; g; g = g->next)
        forget_in(g, obj);
    if (ctx->graph_rec && !ctx->graph_rec->invalid) {
        forget_in(ctx->graph_rec, obj);
        if (ctx->graph_rec->invalid) { /* say so: "freed" alone would not */
            char *why = ctx->graph_rec->invalid;
            ctx->graph_rec->invalid = NULL;
            invalidate(ctx->graph_rec, HK_ESTATE, "while recording a graph, %s; the recording is discarded",
                       why);
            free(why);
        }
    }
}

void hkc_graph_context_end(hk_context *ctx)
{
    for (hk_graph *g = ctx->graphs; g; g = g->next)
        free_owned(g);
    if (ctx->graph_rec) {
        graph_free(ctx->graph_rec);
        ctx->graph_rec = NULL;
    }
    for (hk_graph *g = ctx->graphs, *next; g; g = next) {
        next = g->next;
        destroy_native(g);
        g->ctx = NULL;
        g->next = NULL;
    }
    ctx->graphs = NULL;
}

HK_API int hk_graph_get_info(const hk_graph *g, hk_graph_info *out)
{
    if (!g || !out)
        return hkc_fail(g ? g->ctx : NULL, HK_EINVAL, "hk_graph_get_info: NULL argument");
    const hkc_backend *be = g->ctx ? g->ctx->devices[g->device].be : NULL;
    *out = (hk_graph_info){.nodes = g->n,
                           .device = g->device,
                           .backend = be ? be->ops->name : "",
                           .replay = be ? replay_kind(be) : "",
                           .buffers = g->nbuffers,
                           .valid = g->ctx && !g->invalid,
                           .invalid = !g->ctx ? "the graph's context was destroyed"
                                              : g->invalid ? g->invalid : ""};
    return 0;
}

HK_API int hk_graph_node_get(const hk_graph *g, int i, hk_graph_node_info *out)
{
    if (!g || !out)
        return hkc_fail(g ? g->ctx : NULL, HK_EINVAL, "hk_graph_node_get: NULL argument");
    if (i < 0 || i >= g->n)
        return hkc_fail(g->ctx, HK_ERANGE, "hk_graph_node_get: node %d of %d", i, g->n);
    if (g->invalid) /* its kernels' modules may be gone */
        return hkc_fail(g->ctx, HK_ESTATE, "hk_graph_node_get: %s", g->invalid);
    const graph_node *nd = &g->nodes[i];
    *out = (hk_graph_node_info){nd->k->name, nd->cfg, nd->kernarg, nd->size};
    return 0;
}
