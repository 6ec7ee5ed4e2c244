/* The NVIDIA backend's graphs: the recorded launches as a CUDA graph of
 * kernel nodes, each depending on the one before (the order a stream keeps),
 * instantiated once and launched with cuGraphLaunch on the default stream,
 * where hkc_cuda_launch queues its launches too.
 *
 * A fault resets the device's primary context (cuda_device.c), which takes
 * every graph made in it along; the launches are kept, so the next launch
 * of the graph builds it again in the new context. */
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

typedef struct cuda_graph {
    int dev;
    unsigned generation; /* of the context graph and exec were made in */
    CUgraph graph;
    CUgraphExec exec;
    int n;
    hkc_graph_launch *launches; /* with malloc'd copies of the argument bytes */
    const char **names;         /* the distinct kernel names, for fault messages */
    int nnames;
} cuda_graph;

/* One kernel node after prev (NULL: the first), as hkc_cuda_launch passes
 * arguments: by address into the packed bytes, or the whole buffer past 64
 * parameters. The driver copies the values into the node. */
/* A node after *prev; a launch with early start (HK_LAUNCH_EARLY_START) on a
 * device that can gets a programmatic edge, which lets it start as the node
 * before triggers (as the stream attribute does outside a graph). */
static CUresult add_node(CUgraph graph, const hkc_graph_launch *l, CUgraphNode *prev, const cuda_device *cd)
{
    cuda_function *f = l->k.bfn;
    void *params[64];
    int np = l->k.sig->count;
    size_t sz = f->param_end && f->param_end <= l->size ? f->param_end : l->size;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)l->kernarg, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     CU_LAUNCH_PARAM_END};
    for (int i = 0; i < np && np <= 64; i++)
        params[i] = (char *)l->kernarg + l->k.sig->params[i].offset;
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f->fn;
    p.gridDimX = l->cfg.grid.x;
    p.gridDimY = l->cfg.grid.y;
    p.gridDimZ = l->cfg.grid.z;
    p.blockDimX = l->cfg.block.x;
    p.blockDimY = l->cfg.block.y;
    p.blockDimZ = l->cfg.block.z;
    p.sharedMemBytes = (unsigned)l->cfg.shared_bytes;
    p.kernelParams = np <= 64 ? (np ? params : NULL) : NULL;
    p.extra = np <= 64 ? NULL : extra;
    CUgraphNode node;
    int early = *prev && (l->cfg.flags & HK_LAUNCH_EARLY_START) && hkc_cuda_can_start_early(cd, f);
    CUresult cr = cuGraphAddKernelNode(&node, graph, *prev && !early ? prev : NULL, *prev && !early ? 1 : 0, &p);
    if (cr == CUDA_SUCCESS && early) {
        CUgraphEdgeData e;
        memset(&e, 0, sizeof e);
        e.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
        e.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
        cr = cuGraphAddDependencies_v2(graph, prev, &node, &e, 1);
    }
    if (cr == CUDA_SUCCESS)
        *prev = node;
    return cr;
}

/* Drops the driver's objects; those of a context reset since are gone
 * with it and are only forgotten. */
static void release(cuda_impl *c, cuda_graph *cg)
{
    if (cg->generation == hkc_cuda_epoch(&c->devs[cg->dev]) && hkc_cuda_use_dev(c, cg->dev) == CUDA_SUCCESS) {
        if (cg->exec)
            cuGraphExecDestroy(cg->exec);
        if (cg->graph)
            cuGraphDestroy(cg->graph);
    }
    cg->exec = NULL;
    cg->graph = NULL;
}

static int build(hkc_backend *be, cuda_graph *cg)
{
    cuda_impl *c = cuda_impl_of(be);
    int r = 0;
    for (int i = 0; i < cg->n && !r; i++) /* as each launch would, before the graph holds them */
        r = hkc_cuda_launch_prepare(be, &cg->launches[i].k, &cg->launches[i].cfg, cg->launches[i].kernarg,
                                    cg->launches[i].size);
    if (r)
        return r;
    cg->generation = hkc_cuda_epoch(&c->devs[cg->dev]);
    CUresult cr = hkc_cuda_use_dev(c, cg->dev);
    if (cr == CUDA_SUCCESS)
        cr = cuGraphCreate(&cg->graph, 0);
    CUgraphNode prev = NULL;
    int i = 0;
    for (; i < cg->n && cr == CUDA_SUCCESS; i++)
        cr = add_node(cg->graph, &cg->launches[i], &prev, &c->devs[cg->dev]);
    if (cr != CUDA_SUCCESS) {
        release(c, cg);
        return hkc_cuda_fail(be, cg->dev, cr, NULL, HK_EBACKEND,
                             "cuGraphAddKernelNode / cuGraphAddDependencies (node %d, kernel %s)", i - 1,
                             i > 0 ? cg->launches[i - 1].k.name : "-");
    }
    cr = cuGraphInstantiate(&cg->exec, cg->graph, 0);
    if (cr != CUDA_SUCCESS) {
        release(c, cg);
        return hkc_cuda_fail(be, cg->dev, cr, NULL, HK_EBACKEND, "cuGraphInstantiate (%d kernel nodes)", cg->n);
    }
    return 0;
}

static void graph_free(cuda_graph *cg)
{
    for (int i = 0; i < cg->n; i++)
        free((void *)cg->launches[i].kernarg);
    free(cg->launches);
    free(cg->names);
    free(cg);
}

/* Copies what the core frees after the call: the argument bytes (the
 * kernel handles and names live as long as the graph may launch). */
static int copy_launches(cuda_graph *cg, const hkc_graph_launch *launches, int n)
{
    cg->launches = calloc((size_t)n, sizeof *cg->launches);
    cg->names = calloc((size_t)n, sizeof *cg->names);
    if (!cg->launches || !cg->names)
        return -1;
    for (int i = 0; i < n; i++) {
        void *copy = malloc(launches[i].size ? launches[i].size : 1);
        if (!copy)
            return -1;
        memcpy(copy, launches[i].kernarg, launches[i].size);
        cg->launches[i] = launches[i];
        cg->launches[i].kernarg = copy;
        cg->n = i + 1;
        int seen = 0;
        for (int j = 0; j < cg->nnames && !seen; j++)
            seen = strcmp(cg->names[j], launches[i].k.name) == 0;
        if (!seen)
            cg->names[cg->nnames++] = launches[i].k.name;
    }
    return 0;
}

int hkc_cuda_graph_create(hkc_backend *be, int dev, const hkc_graph_launch *launches, int n, void **bgraph)
{
    cuda_graph *cg = calloc(1, sizeof *cg);
    if (!cg)
        return hkc_fail(be->ctx, HK_ENOMEM, "out of memory");
    cg->dev = dev;
    if (copy_launches(cg, launches, n) != 0) {
        graph_free(cg);
        return hkc_fail(be->ctx, HK_ENOMEM, "out of memory");
    }
    int r = build(be, cg);
    if (r) {
        graph_free(cg);
        return r;
    }
    *bgraph = cg;
    return 0;
}

int hkc_cuda_graph_launch(hkc_backend *be, int dev, void *bgraph)
{
    (void)dev; /* the graph's own */
    cuda_graph *cg = bgraph;
    cuda_impl *c = cuda_impl_of(be);
    if (cg->generation != hkc_cuda_epoch(&c->devs[cg->dev])) { /* reset since: build it again */
        release(c, cg);
        int r = build(be, cg);
        if (r)
            return r;
    }
    CUresult cr = hkc_cuda_use_dev(c, cg->dev);
    if (cr == CUDA_SUCCESS)
        cr = cuGraphLaunch(cg->exec, NULL);
    if (cr == CUDA_SUCCESS) {
        for (int i = 0; i < cg->nnames; i++)
            hkc_cuda_launch_noted(be, cg->dev, cg->names[i]);
        hkc_gpu_buffers_mark_all_dirty(&c->buffers, cg->dev);
        return 0;
    }
    if (hkc_cuda_is_sticky(cr)) { /* an earlier kernel faulted */
        hkc_strbuf msg;
        hkc_strbuf_init(&msg);
        hkc_cuda_fault_reset(be, cg->dev, cr, &msg);
        int r = hkc_fail(be->ctx, HK_EFAULT, "%s; the graph (%d kernels) was not launched", msg.data, cg->n);
        hkc_strbuf_free(&msg);
        return r;
    }
    char eb[256];
    return hkc_fail(be->ctx, HK_ELAUNCH, "cuGraphLaunch (%d kernel nodes): %s", cg->n,
                    hkc_cuda_error(cr, eb, sizeof eb));
}

void hkc_cuda_graph_destroy(hkc_backend *be, void *bgraph)
{
    cuda_graph *cg = bgraph;
    release(cuda_impl_of(be), cg);
    graph_free(cg);
}
