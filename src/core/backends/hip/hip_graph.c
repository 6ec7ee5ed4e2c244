/* The AMD backend's graphs: the recorded launches as a hipGraph of kernel
 * nodes, each depending on the one before (the order a stream keeps),
 * instantiated once and launched with hipGraphLaunch on the null stream,
 * where hkc_hip_launch queues too. Arguments go in as hkc_hip_launch
 * passes them, the packed buffer whole (HIP appends the hidden ones); the
 * copies stay with the graph for as long as it lives, whether or not the
 * runtime copies them into its nodes.
 *
 * Compile-checked only: no AMD GPU was available to run it (docs/amd-backend.md). */
#include <stdlib.h>
#include <string.h>

#include "hip_backend.h"

typedef struct hip_graph {
    int dev;
    hipGraph_t graph;
    hipGraphExec_t exec;
    int n;
    void **kernargs; /* the argument bytes, one copy per node */
    size_t *sizes;
    void *(*extras)[5]; /* each node's launch parameters, pointing at the two above */
} hip_graph;

static void graph_free(hip_graph *hg)
{
    if (hg->exec)
        hipGraphExecDestroy(hg->exec);
    if (hg->graph)
        hipGraphDestroy(hg->graph);
    for (int i = 0; i < hg->n; i++)
        free(hg->kernargs[i]);
    free(hg->kernargs);
    free(hg->sizes);
    free(hg->extras);
    free(hg);
}

static hipError_t add_node(hip_graph *hg, const hkc_graph_launch *l, int i, hipGraphNode_t *prev)
{
    hg->sizes[i] = l->size;
    void **extra = hg->extras[i];
    extra[0] = HIP_LAUNCH_PARAM_BUFFER_POINTER;
    extra[1] = hg->kernargs[i];
    extra[2] = HIP_LAUNCH_PARAM_BUFFER_SIZE;
    extra[3] = &hg->sizes[i];
    extra[4] = HIP_LAUNCH_PARAM_END;
    hipKernelNodeParams p;
    memset(&p, 0, sizeof p);
    p.func = (void *)((hip_function *)l->k.bfn)->fn;
    p.gridDim = (dim3){l->cfg.grid.x, l->cfg.grid.y, l->cfg.grid.z};
    p.blockDim = (dim3){l->cfg.block.x, l->cfg.block.y, l->cfg.block.z};
    p.sharedMemBytes = (unsigned)l->cfg.shared_bytes;
    p.extra = extra;
    hipGraphNode_t node;
    hipError_t e = hipGraphAddKernelNode(&node, hg->graph, *prev ? prev : NULL, *prev ? 1 : 0, &p);
    if (e == hipSuccess)
        *prev = node;
    return e;
}

int hkc_hip_graph_create(hkc_backend *be, int dev, const hkc_graph_launch *launches, int n, void **bgraph)
{
    hip_graph *hg = calloc(1, sizeof *hg);
    if (!hg || !(hg->kernargs = calloc((size_t)n, sizeof *hg->kernargs)) ||
        !(hg->sizes = calloc((size_t)n, sizeof *hg->sizes)) ||
        !(hg->extras = calloc((size_t)n, sizeof *hg->extras))) {
        if (hg)
            graph_free(hg);
        return hkc_fail(be->ctx, HK_ENOMEM, "out of memory");
    }
    hg->dev = dev;
    for (; hg->n < n; hg->n++) {
        if (!(hg->kernargs[hg->n] = malloc(launches[hg->n].size ? launches[hg->n].size : 1))) {
            graph_free(hg);
            return hkc_fail(be->ctx, HK_ENOMEM, "out of memory");
        }
        memcpy(hg->kernargs[hg->n], launches[hg->n].kernarg, launches[hg->n].size);
    }
    hipError_t e = hkc_hip_use_dev(be, dev);
    if (e == hipSuccess)
        e = hipGraphCreate(&hg->graph, 0);
    hipGraphNode_t prev = NULL;
    int i = 0;
    for (; i < n && e == hipSuccess; i++)
        e = add_node(hg, &launches[i], i, &prev);
    const char *what = e == hipSuccess ? "hipGraphInstantiate" : "hipGraphAddKernelNode";
    if (e == hipSuccess)
        e = hipGraphInstantiate(&hg->exec, hg->graph, NULL, NULL, 0);
    if (e != hipSuccess) {
        char eb[256];
        int r = hkc_fail(be->ctx, HK_EBACKEND, "%s (%d kernel nodes, at node %d): %s", what, n, i,
                         hkc_hip_error(e, eb, sizeof eb));
        graph_free(hg);
        return r;
    }
    *bgraph = hg;
    return 0;
}

int hkc_hip_graph_launch(hkc_backend *be, int dev, void *bgraph)
{
    hip_graph *hg = bgraph;
    hipError_t e = hkc_hip_use_dev(be, dev);
    if (e == hipSuccess)
        e = hipGraphLaunch(hg->exec, NULL);
    if (e == hipSuccess) {
        hkc_gpu_buffers_mark_all_dirty(&hip_impl_of(be)->buffers, dev);
        return 0;
    }
    char eb[256];
    return hkc_fail(be->ctx, HK_ELAUNCH, "hipGraphLaunch (%d kernel nodes): %s", hg->n,
                    hkc_hip_error(e, eb, sizeof eb));
}

void hkc_hip_graph_destroy(hkc_backend *be, void *bgraph)
{
    hip_graph *hg = bgraph;
    (void)hkc_hip_use_dev(be, hg->dev); /* its device current for the runtime's destroy calls */
    graph_free(hg);
}
