/* Early start as the launch paths apply it (launch.c, graph.c): a graph's
 * nodes keep the flags each launch was given after the core's check, on
 * every backend, so a recording shows the decisions. Packed launches make
 * what they write unknown; a buffer the node before wrote, or a module
 * variable, cannot be read early; a graph replayed inside a recording loses
 * its first node's early start; malformed requests fail by name. */
#include <string.h>

#include "testutil.h"

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "__device__ float bias;\n"
    "extern \"C\" __global__ void step(float *out, const float *in, const float *w, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  float wi = i < n ? w[i] : 0.0f;\n"
    "  hk_grid_wait();\n"
    "  if (i < n) out[i] = in[i] * wi + bias;\n"
    "}\n";

#define N 256

static hk_kernel *k;

static int step(hk_buffer *out, hk_buffer *in, hk_buffer *w, uint32_t early_reads)
{
    hk_launch_config cfg = tu_cfg(N / 64, 1, 1, 64, 1, 1, 0);
    cfg.flags = HK_LAUNCH_EARLY_START;
    cfg.early_reads = early_reads;
    hk_arg a[] = {hk_arg_buffer(out), hk_arg_buffer(in), hk_arg_buffer(w), hk_arg_int(N)};
    return hk_launch(k, &cfg, a, 4);
}

/* step(out, in, w, N)'s argument bytes, as a recording captures them */
static unsigned char packed_args[64];
static size_t packed_size;
static int pack(hk_context *ctx, hk_buffer *out, hk_buffer *in, hk_buffer *w)
{
    hk_graph *g = NULL;
    int r = hk_graph_begin(ctx);
    if (!r)
        r = step(out, in, w, 0);
    int e = hk_graph_end(ctx, &g);
    hk_graph_node_info nd;
    int ok = !r && !e && hk_graph_node_get(g, 0, &nd) == 0 && nd.args_size <= sizeof packed_args;
    if (ok) {
        memcpy(packed_args, nd.args, nd.args_size);
        packed_size = nd.args_size;
    }
    hk_graph_destroy(g);
    return ok ? 0 : -1;
}

static int packed(void)
{
    hk_launch_config cfg = tu_cfg(N / 64, 1, 1, 64, 1, 1, 0);
    cfg.flags = HK_LAUNCH_EARLY_START;
    return hk_launch_packed(k, &cfg, packed_args, packed_size);
}

static uint32_t flags_of(const hk_graph *g, int i)
{
    hk_graph_node_info info;
    memset(&info, 0, sizeof info);
    if (hk_graph_node_get(g, i, &info) != 0)
        return 0xdead;
    return info.config.flags;
}

int main(void)
{
    tap_init();
    if (!tu_have_cxx()) {
        tap_skip("early start in graphs", "no C++ compiler for the host backend");
        return tap_done();
    }
    hk_context *ctx = tu_context();
    hk_module *m = NULL;
    k = tu_kernel(ctx, &m, src, "step");
    if (!tap_ok(k != NULL, "a kernel calling hk_grid_wait() compiles"))
        return tap_done();
    hk_buffer *a = NULL, *b = NULL, *w1 = NULL, *w2 = NULL, *bias = NULL;
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &a);
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &b);
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &w1);
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &w2);
    int gr = hk_module_global(m, "bias", HK_F32, &bias);
    tap_ok(gr == 0 && bias, "the module variable as a buffer (%s)", gr ? hk_errmsg(ctx) : "ok");

    tap_ok(pack(ctx, b, a, w1) == 0, "step's argument bytes, for a packed launch");
    hk_graph *g = NULL;
    int r = hk_graph_begin(ctx);
    const uint32_t W = 1u << 2, IN = 1u << 1;
    if (!r) r = step(b, a, w1, W);   /* 0: nothing before it */
    if (!r) r = step(a, b, w2, IN);  /* 1: reads b early, which node 0 wrote */
    if (!r) r = step(b, a, w1, W);   /* 2: reads w1 early; node 1 wrote a */
    if (!r) r = step(a, b, w2, 0);   /* 3: reads nothing early */
    if (!r) r = packed();            /* 4: packed: its writes unknown, reads nothing early */
    if (!r) r = step(a, b, w2, W);   /* 5: reads w2 early after a packed launch */
    if (!r) r = step(b, a, w1, W);   /* 6: reads w1 early; node 5 wrote a */
    if (!r) r = step(a, b, bias, W); /* 7: reads the module variable early */
    int e = hk_graph_end(ctx, &g);
    if (!tap_ok(!r && !e && g, "a graph of 8 early launches is recorded (%s)", r || e ? hk_errmsg(ctx) : "ok"))
        return tap_done();
    static const uint32_t want[] = {1, 0, 1, 1, 1, 0, 1, 0};
    static const char *const why[] = {
        "nothing before it: early", "reads what the node before wrote: not early",
        "reads a buffer the node before did not write: early", "reads nothing early: early",
        "a packed launch reading nothing early: early", "reads early after a packed launch: not early",
        "after a launch with known writes again: early", "reads a module variable early: not early"};
    for (int i = 0; i < 8; i++)
        tap_ok(flags_of(g, i) == want[i], "node %d: %s (flags %u)", i, why[i], flags_of(g, i));

    hk_graph *outer = NULL;
    r = hk_graph_begin(ctx);
    if (!r) r = step(b, a, w1, W);
    if (!r) r = hk_graph_launch(g);
    e = hk_graph_end(ctx, &outer);
    tap_ok(!r && !e && outer && flags_of(outer, 1) == 0 && flags_of(outer, 3) == 1,
           "a graph replayed inside a recording: its first node loses early start, the others keep theirs");

    /* replays compute what one-by-one launches compute */
    float h[N], wv[N], got[N];
    for (int i = 0; i < N; i++) { h[i] = (float)(i % 7) - 3.0f; wv[i] = 0.5f; }
    float zero = 0.0f;
    hk_buffer_upload(bias, 0, &zero, sizeof zero);
    hk_buffer_upload(a, 0, h, sizeof h);
    hk_buffer_upload(w1, 0, wv, sizeof wv);
    hk_buffer_upload(w2, 0, wv, sizeof wv);
    r = hk_graph_launch(g);
    hk_synchronize(ctx);
    hk_buffer_download(b, 0, got, sizeof got);
    int ok = r == 0;
    /* 8 steps of x 0.5 (node 7's w is bias, 0: b = 0 ... then a) */
    for (int i = 0; i < N && ok; i++)
        ok = got[i] == h[i] * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f;
    tap_ok(ok, "the graph replays: b after 7 halvings (%g for %g)", got[1], h[1]);

    /* malformed: a bit naming the integer argument */
    hk_launch_config cfg = tu_cfg(N / 64, 1, 1, 64, 1, 1, 0);
    cfg.flags = HK_LAUNCH_EARLY_START;
    cfg.early_reads = 1u << 3;
    hk_arg args[] = {hk_arg_buffer(a), hk_arg_buffer(b), hk_arg_buffer(w1), hk_arg_int(N)};
    r = hk_launch(k, &cfg, args, 4);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "bit 3 names argument 4, which is not a buffer"),
           "early_reads naming the count: %s", hk_errmsg(ctx));
    cfg.early_reads = 1;
    r = hk_launch(k, &cfg, NULL, 4);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "args is NULL"), "NULL args say so: %s", hk_errmsg(ctx));

    hk_graph_destroy(outer);
    hk_graph_destroy(g);
    hk_buffer_free(a);
    hk_buffer_free(b);
    hk_buffer_free(w1);
    hk_buffer_free(w2);
    hk_buffer_free(bias);
    hk_module_free(m);
    hk_context_destroy(ctx);
    return tap_done();
}
