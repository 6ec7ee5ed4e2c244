/* Graphs (hk_graph_*): launches recorded once and replayed. On the host
 * backend by default, on a GPU with HIPKIT_TEST_BACKEND (tests/gpu/run.sh):
 * a recording runs nothing; a replay N times gives what the arithmetic
 * computed on the host gives, and what launching one by one gives; the
 * captured argument bytes are the values passed then; what cannot be
 * captured is refused by name and discards the recording; freeing what a
 * graph uses makes it refuse to launch. */
#include "testutil.h"

static hk_context *ctx;

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void scale_add(float *v, float s, float t, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) v[i] = v[i] * s + t;\n"
    "}\n"
    "extern \"C\" __global__ void axpy(float *y, const float *x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] += a * x[i];\n"
    "}\n";

#define N 1000

static hk_kernel *ks, *ka;

static int bump(hk_buffer *v, float s, float t)
{
    hk_launch_config cfg = tu_cfg((N + 127) / 128, 1, 1, 128, 1, 1, 0);
    hk_arg a[] = {hk_arg_buffer(v), hk_arg_float(s), hk_arg_float(t), hk_arg_int(N)};
    return hk_launch(ks, &cfg, a, 4);
}

static int accumulate(hk_buffer *y, hk_buffer *x, float alpha)
{
    hk_launch_config cfg = tu_cfg((N + 255) / 256, 1, 1, 256, 1, 1, 0);
    hk_arg a[] = {hk_arg_buffer(y), hk_arg_buffer(x), hk_arg_float(alpha), hk_arg_int(N)};
    return hk_launch(ka, &cfg, a, 4);
}

static hk_buffer *buffer_of(const float *h)
{
    hk_buffer *b = NULL;
    if (hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &b) == 0)
        hk_buffer_upload(b, 0, h, N * sizeof(float));
    return b;
}

static int same(hk_buffer *b, const float *want)
{
    float got[N];
    hk_synchronize(ctx);
    if (hk_buffer_download(b, 0, got, sizeof got) != 0)
        return 0;
    for (int i = 0; i < N; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i])))) {
            tap_diag("element %d: %g, want %g", i, got[i], want[i]);
            return 0;
        }
    return 1;
}

/* Records bump(v, s, t), accumulate(y, v, alpha) with its values in locals
 * that change after: the graph keeps what was passed. */
static hk_graph *record_pair(hk_buffer *v, hk_buffer *y, float s, float t, float alpha)
{
    hk_graph *g = NULL;
    int r = hk_graph_begin(ctx);
    if (!r)
        r = bump(v, s, t);
    s = t = alpha = -99.0f; /* by value: no effect on what was recorded */
    (void)s;
    if (!r)
        r = accumulate(y, v, alpha == -99.0f ? 0.25f : 0.0f);
    int e = hk_graph_end(ctx, &g);
    if (r || e)
        tap_diag("recording: %s", hk_errmsg(ctx));
    return g;
}

static void test_replay(void)
{
    float hv[N], hy[N], rv[N], ry[N];
    for (int i = 0; i < N; i++) {
        rv[i] = hv[i] = tu_uniform(-1, 1);
        ry[i] = hy[i] = tu_uniform(-1, 1);
    }
    hk_buffer *v = buffer_of(hv), *y = buffer_of(hy), *v2 = buffer_of(hv), *y2 = buffer_of(hy);
    hk_graph *g = record_pair(v, y, 0.5f, 1.0f, 0.25f);
    tap_ok(g != NULL, "a graph of two launches is recorded");
    tap_ok(same(v, hv) && same(y, hy), "recording ran nothing");
    hk_graph_info info = {0};
    int ir = hk_graph_get_info(g, &info); /* before tap_ok: its arguments print what this fills */
    tap_ok(ir == 0 && info.nodes == 2 && info.buffers == 2 && info.valid &&
               !strcmp(info.backend, tu_backend()),
           "info: 2 nodes, 2 buffers, valid, on %s (%s)", info.backend, info.replay);
    tap_ok(!strcmp(info.replay, tu_on_host() ? "recorded list"
                                : !strcmp(tu_backend(), "cuda") ? "CUDA graph" : "hipGraph"),
           "replayed as a %s", info.replay);

    const int reps = 7;
    int r = 0;
    for (int k = 0; k < reps && !r; k++)
        r = hk_graph_launch(g);
    for (int k = 0; k < reps; k++)
        for (int i = 0; i < N; i++) {
            rv[i] = rv[i] * 0.5f + 1.0f;
            ry[i] += 0.25f * rv[i];
        }
    tap_ok(r == 0 && same(v, rv) && same(y, ry), "%d replays give the host's arithmetic", reps);
    for (int k = 0; k < reps && !r; k++) {
        r = bump(v2, 0.5f, 1.0f);
        if (!r)
            r = accumulate(y2, v2, 0.25f);
    }
    tap_ok(r == 0 && same(v2, rv) && same(y2, ry), "and what launching them one by one gives");

    hk_graph_node_info nd;
    hk_param_info p1, p2;
    float s = 0, t = 0, alpha = 0;
    int ok = hk_graph_node_get(g, 0, &nd) == 0 && !strcmp(nd.kernel, "scale_add") &&
             nd.config.grid.x == (N + 127) / 128 && nd.config.block.x == 128 &&
             hk_kernel_param(ks, 1, &p1) == 0 && hk_kernel_param(ks, 2, &p2) == 0;
    if (ok) {
        memcpy(&s, (const char *)nd.args + p1.offset, 4);
        memcpy(&t, (const char *)nd.args + p2.offset, 4);
    }
    tap_ok(ok && s == 0.5f && t == 1.0f, "node 1: scale_add, its grid and block, s = %g, t = %g captured",
           s, t);
    ok = hk_graph_node_get(g, 1, &nd) == 0 && !strcmp(nd.kernel, "axpy") && hk_kernel_param(ka, 2, &p1) == 0;
    if (ok)
        memcpy(&alpha, (const char *)nd.args + p1.offset, 4);
    tap_ok(ok && alpha == 0.25f, "node 2: axpy with a = %g as passed then", alpha);
    tap_ok(hk_graph_node_get(g, 2, &nd) == HK_ERANGE, "node 3 of 2 is HK_ERANGE");

    /* a graph launched while recording joins the new one */
    hk_graph *g2 = NULL;
    r = hk_graph_begin(ctx);
    if (!r)
        r = hk_graph_launch(g);
    if (!r)
        r = hk_graph_launch(g);
    if (!r)
        r = bump(v, 1.0f, -1.0f);
    int e = hk_graph_end(ctx, &g2);
    ir = e ? e : hk_graph_get_info(g2, &info);
    tap_ok(!r && !ir && info.nodes == 5,
           "a graph launched twice while recording, then a kernel: 5 nodes (%d)", info.nodes);
    r = hk_graph_launch(g2);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < N; i++) {
            rv[i] = rv[i] * 0.5f + 1.0f;
            ry[i] += 0.25f * rv[i];
        }
    for (int i = 0; i < N; i++)
        rv[i] -= 1.0f;
    tap_ok(r == 0 && same(v, rv) && same(y, ry), "the composed graph replays all five");

    /* freeing a buffer it uses: the graph refuses, naming it */
    hk_buffer_free(y);
    r = hk_graph_launch(g);
    tap_ok(r == HK_ESTATE && strstr(hk_errmsg(ctx), "was freed") && strstr(hk_errmsg(ctx), "axpy"),
           "a freed buffer: launch refused (%s)", hk_errmsg(ctx));
    tap_ok(hk_graph_get_info(g, &info) == 0 && !info.valid && strstr(info.invalid, "node 2"),
           "info says invalid, and why");
    tap_ok(hk_graph_node_get(g, 0, &nd) == HK_ESTATE, "its nodes are not read once invalid");
    tap_ok(hk_graph_launch(g2) == HK_ESTATE, "the composed graph used it too: refused");
    hk_graph_destroy(g);
    hk_graph_destroy(g2);
    hk_buffer_free(v);
    hk_buffer_free(v2);
    hk_buffer_free(y2);
}

/* Each call that cannot be captured fails by name and discards the recording. */
static void test_refusals(hk_module *m)
{
    hk_buffer *b = NULL, *c = NULL;
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &b);
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &c);
    float x = 1, host[4];
    hk_module *m2 = NULL;
    for (int which = 0; which < 8; which++) {
        static const char *const names[] = {"hk_buffer_download", "hk_buffer_upload", "hk_buffer_copy",
                                            "hk_buffer_fill", "hk_synchronize", "hk_module_compile",
                                            "hk_buffer_host_ptr", "hk_event_record"};
        hk_graph *g = (hk_graph *)&x; /* must come back NULL */
        hk_event *ev = NULL;
        hk_event_create(ctx, &ev);
        int r0 = hk_graph_begin(ctx), r1 = bump(b, 1, 1), r = 0;
        switch (which) {
        case 0: r = hk_buffer_download(b, 0, host, sizeof host); break;
        case 1: r = hk_buffer_upload(b, 0, host, sizeof host); break;
        case 2: r = hk_buffer_copy(c, 0, b, 0, 16); break;
        case 3: r = hk_buffer_fill(b, &x); break;
        case 4: r = hk_synchronize(ctx); break;
        case 5: r = hk_module_compile(ctx, src, NULL, &m2); break;
        case 6: r = hk_buffer_host_ptr(b) == NULL ? HK_ESTATE : 0; break;
        case 7: r = hk_event_record(ev); break;
        }
        char msg[512];
        snprintf(msg, sizeof msg, "%s", hk_errmsg(ctx));
        int later = bump(b, 1, 1);
        int e = hk_graph_end(ctx, &g);
        tap_ok(!r0 && !r1 && r == HK_ESTATE && strstr(msg, names[which]) && strstr(msg, "cannot be captured"),
               "%s while recording: refused by name (%s)", names[which], msg);
        tap_ok(later == HK_ESTATE && e == HK_ESTATE && g == NULL && !hk_graph_recording(ctx),
               "later launches fail too, and the recording is discarded");
        hk_event_destroy(ev);
    }
    tap_ok((hk_buffer_host_ptr(b) != NULL) == tu_on_host() && hk_synchronize(ctx) == 0,
           "after a discarded recording the context works as before");

    hk_graph *g = NULL;
    int b1 = hk_graph_begin(ctx), b2 = hk_graph_begin(ctx);
    tap_ok(b1 == 0 && b2 == HK_ESTATE && strstr(hk_errmsg(ctx), "already being recorded"),
           "graphs do not nest: %s", hk_errmsg(ctx));
    hk_buffer_free(c); /* not used by the recording: no effect on it */
    int r = bump(b, 2, 0);
    hk_buffer *tmp = NULL;
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &tmp);
    int r2 = bump(tmp, 2, 0);
    hk_buffer_free(tmp); /* used: the recording is discarded */
    int e = hk_graph_end(ctx, &g);
    tap_ok(!r && !r2 && e == HK_ESTATE && !g && strstr(hk_errmsg(ctx), "while recording a graph"),
           "freeing a buffer a recorded launch uses discards the recording: %s", hk_errmsg(ctx));
    tap_ok(hk_graph_end(ctx, &g) == HK_ESTATE && strstr(hk_errmsg(ctx), "no graph is being recorded"),
           "hk_graph_end without a recording: HK_ESTATE");
    tap_ok(hk_graph_launch(NULL) == HK_EINVAL, "hk_graph_launch(NULL): HK_EINVAL");

    /* an empty graph, and a packed launch */
    r = hk_graph_begin(ctx);
    e = hk_graph_end(ctx, &g);
    hk_graph_info info;
    tap_ok(!r && !e && g && hk_graph_get_info(g, &info) == 0 && info.nodes == 0 && hk_graph_launch(g) == 0,
           "an empty graph records and launches");
    hk_graph_destroy(g);
    hk_kernel *k = NULL;
    hk_module_kernel(m, "scale_add", &k);
    hk_param_info pv, ps, pt, pn;
    hk_kernel_param(k, 0, &pv);
    hk_kernel_param(k, 1, &ps);
    hk_kernel_param(k, 2, &pt);
    hk_kernel_param(k, 3, &pn);
    hk_kernel_info ki;
    hk_kernel_get_info(k, &ki);
    _Alignas(16) unsigned char packed[64] = {0};
    float fill[N], s = 3, t = -2, want[N];
    for (int i = 0; i < N; i++)
        fill[i] = (float)i, want[i] = (float)i * s + t;
    hk_buffer_upload(b, 0, fill, sizeof fill);
    hk_synchronize(ctx);
    /* the device address a kernel sees: what hk_launch packs for a buffer */
    hk_graph *gp = NULL;
    r = hk_graph_begin(ctx);
    int rr = bump(b, s, t);
    e = hk_graph_end(ctx, &gp);
    hk_graph_node_info nd;
    int ok = !r && !rr && !e && hk_graph_node_get(gp, 0, &nd) == 0 && nd.args_size <= sizeof packed;
    if (ok)
        memcpy(packed, nd.args, nd.args_size);
    hk_graph_destroy(gp);
    hk_launch_config cfg = tu_cfg((N + 127) / 128, 1, 1, 128, 1, 1, 0);
    r = hk_graph_begin(ctx);
    rr = hk_launch_packed(k, &cfg, packed, ki.kernarg_size);
    e = hk_graph_end(ctx, &g);
    tap_ok(ok && !r && !rr && !e && hk_graph_launch(g) == 0 && same(b, want),
           "a hk_launch_packed launch is recorded and replays");
    hk_graph_destroy(g);

    /* a module freed after the recording */
    hk_module *m3 = NULL;
    hk_kernel *k3 = tu_kernel(ctx, &m3, src, "scale_add");
    r = hk_graph_begin(ctx);
    hk_arg a[] = {hk_arg_buffer(b), hk_arg_float(1), hk_arg_float(0), hk_arg_int(N)};
    rr = k3 ? hk_launch(k3, &cfg, a, 4) : -1;
    e = hk_graph_end(ctx, &g);
    hk_module_free(m3);
    r = hk_graph_launch(g);
    tap_ok(!rr && !e && r == HK_ESTATE && strstr(hk_errmsg(ctx), "module of kernel scale_add"),
           "a freed module: launch refused (%s)", hk_errmsg(ctx));
    hk_graph_destroy(g);

    /* a graph outliving its context */
    r = hk_graph_begin(ctx);
    rr = bump(b, 1, 0);
    e = hk_graph_end(ctx, &g);
    tap_ok(!r && !rr && !e && g, "a graph kept past the context");
    hk_buffer_free(b);
    hk_module_free(m);
    hk_context_destroy(ctx);
    ctx = NULL;
    r = hk_graph_launch(g);
    tap_ok(r == HK_ESTATE && strstr(hk_errmsg(NULL), "context was destroyed"),
           "after hk_context_destroy its launch is refused: %s", hk_errmsg(NULL));
    hk_graph_destroy(g);
}

int main(void)
{
    tap_init();
    tu_seed();
    if (!tu_have_cxx()) {
        tap_skip("graphs", "no C++ compiler for the host backend");
        return tap_done();
    }
    ctx = tu_context();
    hk_module *m = NULL;
    ks = tu_kernel(ctx, &m, src, "scale_add");
    hk_module_kernel(m, "axpy", &ka);
    if (!tap_ok(ks && ka, "kernels compile"))
        return tap_done();
    test_replay();
    test_refusals(m);
    return tap_done();
}
