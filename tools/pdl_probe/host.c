/* PDL probe host: driver API, times back-to-back launches over rotating
 * weight copies, plain vs programmatic dependent launch, and graph replay. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorString(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1); } } while (0)
static CUmodule mod;
static CUstream st;
static CUdeviceptr g_mode_ptr;
static int cmpf(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return x < y ? -1 : x > y; }
typedef struct { CUfunction f; unsigned grid; void *args[8][5]; int nargs; int copies; } job;
static void launch_all(job *j, int pdl)
{
    for (int c = 0; c < j->copies; c++) {
        CUlaunchConfig cfg = {0};
        CUlaunchAttribute at[1];
        cfg.gridDimX = j->grid; cfg.gridDimY = 1; cfg.gridDimZ = 1;
        cfg.blockDimX = 256; cfg.blockDimY = 1; cfg.blockDimZ = 1;
        cfg.hStream = st;
        if (pdl) {
            at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            at[0].value.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = at; cfg.numAttrs = 1;
        }
        CK(cuLaunchKernelEx(&cfg, j->f, j->args[c], NULL));
    }
}
static int g_edges; /* 1: build graphs node by node, programmatic edges where pdl */
static CUgraph build_graph(job *j, int pdl)
{
    CUgraph g; CK(cuGraphCreate(&g, 0));
    CUgraphNode prev = NULL;
    for (int c = 0; c < j->copies; c++) {
        CUDA_KERNEL_NODE_PARAMS p; memset(&p, 0, sizeof p);
        p.func = j->f; p.gridDimX = j->grid; p.gridDimY = p.gridDimZ = 1; p.blockDimX = 256; p.blockDimY = p.blockDimZ = 1;
        p.kernelParams = j->args[c];
        CUgraphNode n;
        if (pdl && prev) {
            CK(cuGraphAddKernelNode(&n, g, NULL, 0, &p));
            CUgraphEdgeData e; memset(&e, 0, sizeof e);
            e.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC; e.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
            CK(cuGraphAddDependencies_v2(g, &prev, &n, &e, 1));
        } else
            CK(cuGraphAddKernelNode(&n, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
        prev = n;
    }
    return g;
}
/* median per-call ms of: 20 reps of (all copies back to back) */
static float time_job(job *j, int pdl, int graph)
{
    CUevent a, b; CK(cuEventCreate(&a, 0)); CK(cuEventCreate(&b, 0));
    CUgraphExec ge = NULL;
    if (graph) {
        CUgraph g;
        if (g_edges) g = build_graph(j, pdl); else {
        CK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL));
        launch_all(j, pdl);
        CK(cuStreamEndCapture(st, &g)); }
        CK(cuGraphInstantiate(&ge, g, 0));
        CK(cuGraphDestroy(g));
    }
    float t[20];
    for (int r = -3; r < 20; r++) {
        CK(cuEventRecord(a, st));
        if (graph) CK(cuGraphLaunch(ge, st)); else launch_all(j, pdl);
        CK(cuEventRecord(b, st));
        CK(cuEventSynchronize(b));
        float ms; CK(cuEventElapsedTime(&ms, a, b));
        if (r >= 0) t[r] = ms / j->copies;
    }
    if (ge) CK(cuGraphExecDestroy(ge));
    qsort(t, 20, sizeof *t, cmpf);
    CK(cuEventDestroy(a)); CK(cuEventDestroy(b));
    return (t[9] + t[10]) / 2;
}
static void set_mode(int m) { CK(cuMemcpyHtoD(g_mode_ptr, &m, sizeof m)); CK(cuCtxSynchronize()); }
static CUdeviceptr rnd(size_t bytes)
{
    CUdeviceptr p; CK(cuMemAlloc(&p, bytes));
    unsigned *h = malloc(bytes); unsigned s = 12345u + (unsigned)bytes;
    for (size_t i = 0; i < bytes / 4; i++) { s = s * 1664525u + 1013904223u; h[i] = s; }
    CK(cuMemcpyHtoD(p, h, bytes)); free(h); return p;
}
int main(int argc, char **argv)
{
    CUdevice dev; CUcontext ctx;
    CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuCtxCreate(&ctx, NULL, 0, dev));
    CK(cuModuleLoad(&mod, argc > 1 ? argv[1] : "pdl.cubin"));
    size_t sz; CK(cuModuleGetGlobal(&g_mode_ptr, &sz, mod, "g_mode"));
    CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    int quick = argc > 2;
    if (quick) { st = NULL; g_edges = 1; } /* the legacy default stream, graphs by nodes */
    /* copy bandwidth: 256 MiB device to device */
    size_t big = 256u << 20; CUdeviceptr s0, d0; CK(cuMemAlloc(&s0, big)); CK(cuMemAlloc(&d0, big));
    CUevent a, b; CK(cuEventCreate(&a, 0)); CK(cuEventCreate(&b, 0));
    float ct[20];
    for (int r = -3; r < 20; r++) {
        CK(cuEventRecord(a, st)); CK(cuMemcpyDtoDAsync(d0, s0, big, st)); CK(cuEventRecord(b, st));
        CK(cuEventSynchronize(b)); float ms; CK(cuEventElapsedTime(&ms, a, b)); if (r >= 0) ct[r] = ms;
    }
    qsort(ct, 20, sizeof *ct, cmpf);
    double copy_gbps = 2.0 * big / ((ct[9] + ct[10]) / 2 * 1e-3) / 1e9;
    printf("copy 256 MiB %.0f GB/s\n", copy_gbps);
    CK(cuMemFree(s0)); CK(cuMemFree(d0));
    struct { const char *name; unsigned bytes_per_256; unsigned grid_f32; } fm[] = {
        {"q4_0", 144, 896}, {"q8_0", 272, 256}, {"q4_K", 144, 256}, {"q6_K", 210, 256}};
    const int rows = 14336, cols = 4096;
    CUdeviceptr x = rnd(cols * 4), xq = rnd(cols / 32 * 36), y[8];
    for (int c = 0; c < 8; c++) CK(cuMemAlloc(&y[c], rows * 4));
    CUdeviceptr outp; CK(cuMemAlloc(&outp, 16));
    { /* x: uniform floats in [-1, 1] */
        float *hx = malloc(cols * 4); unsigned sd = 7;
        for (int i = 0; i < cols; i++) { sd = sd * 1664525u + 1013904223u; hx[i] = (float)((sd >> 8) / 8388608.0 - 1.0); }
        CK(cuMemcpyHtoD(x, hx, cols * 4)); free(hx);
    }
    for (int f = 0; f < 4; f++) {
        size_t wb = (size_t)rows * cols / 256 * fm[f].bytes_per_256;
        int copies = (int)((200e6 + wb - 1) / wb); if (copies > 8) copies = 8;
        CUdeviceptr w[8];
        for (int c = 0; c < copies; c++) w[c] = rnd(wb);
        /* PDL_GRIDS="g1,g2,...": the grids to try (at most 8) */
        unsigned grids[8] = {256, 528, 896, 1792};
        int ngrids = 4;
        if (getenv("PDL_GRIDS")) {
            ngrids = 0;
            for (char *p = getenv("PDL_GRIDS"); *p && ngrids < 8; p += *p == ',')
                grids[ngrids++] = (unsigned)strtoul(p, &p, 10);
        }
        if (quick && f != 0 && f != 2) { for (int c = 0; c < copies; c++) CK(cuMemFree(w[c])); continue; }
        for (int form = 0; form < 2; form++)
            for (int gi = 0; gi < ngrids; gi++) {
                if (form == 1 && gi == 0 && !getenv("PDL_GRIDS")) continue;
                if (quick && gi != 1 && gi != 2) continue;
                job j; memset(&j, 0, sizeof j); j.copies = copies; j.grid = grids[gi];
                char kn[32];
                static int rws, cls; rws = rows; cls = cols;
                snprintf(kn, sizeof kn, form ? "pm8_%s" : "pm_%s", fm[f].name);
                CK(cuModuleGetFunction(&j.f, mod, kn));
                for (int c = 0; c < copies; c++) {
                    j.args[c][0] = &w[c]; j.args[c][1] = form ? &xq : &x; j.args[c][2] = &y[c];
                    j.args[c][3] = &rws; j.args[c][4] = &cls;
                }
                printf("%s %-4s %4u", fm[f].name, form ? "q8_1" : "f32", j.grid);
                static const int modes[][2] = {{0, 0}, {2, 1}, {5, 1}, {1, 1}};
                for (int m = 0; m < (quick ? 2 : 4); m++) {
                    set_mode(modes[m][0]);
                    float tb = time_job(&j, modes[m][1], 0), tg = time_job(&j, modes[m][1], 1);
                    double rb = wb / (tb * 1e-3) / 1e9 / copy_gbps, rg = wb / (tg * 1e-3) / 1e9 / copy_gbps;
                    static float ref[14336], got[14336];
                    CK(cuMemcpyDtoH(m == 0 ? ref : got, y[copies - 1], sizeof ref));
                    int bad = 0;
                    if (m) for (int i = 0; i < rows; i++) bad += ref[i] != got[i] && !(ref[i] != ref[i] && got[i] != got[i]);
                    if (bad) printf(" [%d differ]", bad);
                    printf("  %s %.2f/g%.2f", m == 0 ? "plain" : m == 1 ? "mid" : m == 2 ? "mid-notrig" : "start", rb, rg);
                }
                printf("\n");
                fflush(stdout);
            }
        for (int c = 0; c < copies; c++) CK(cuMemFree(w[c]));
    }
    return 0;
}
