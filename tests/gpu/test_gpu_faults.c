/* A GPU fault does not end the session: the faulting kernel is named, the
 * context is reset, buffers from before fail with a message that says why,
 * and new allocations and launches work. Runs on HIPKIT_TEST_BACKEND (a GPU
 * backend); skips where that backend is unavailable. */
#include "../testutil.h"

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void wild(float *p, unsigned long long stride) {\n"
    "  p[(threadIdx.x + 1) * stride] = 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void add1(int *v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) v[i] += 1;\n"
    "}\n";

int main(void)
{
    tap_init();
    const char *backend = tu_backend();
    if (!strcmp(backend, "host")) {
        tap_skip("GPU fault recovery", "HIPKIT_TEST_BACKEND names no GPU backend (tests/gpu/run.sh sets it)");
        return tap_done();
    }
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = backend;
    hk_context *ctx = NULL;
    if (hk_context_create(&o, &ctx) != 0) {
        tap_skip("GPU fault recovery", hk_errmsg(NULL));
        return tap_done();
    }
    tu_seed();
    hk_module *m = NULL;
    hk_kernel *wild = NULL, *add1 = NULL;
    hk_compile_options co;
    hk_compile_options_defaults(&co);
    co.name = "faults";
    int r = hk_module_compile(ctx, src, &co, &m);
    if (!tap_ok(r == 0, "the module compiles (%s)", r ? hk_errmsg(ctx) : "ok"))
        return tap_done();
    hk_module_kernel(m, "wild", &wild);
    hk_module_kernel(m, "add1", &add1);

    const int n = 1000;
    int host[1000], back[1000];
    for (int i = 0; i < n; i++)
        host[i] = (int)(tu_next() % 100000);
    hk_buffer *old = NULL, *p = NULL;
    hk_buffer_alloc(ctx, n, HK_I32, HK_MEM_DEVICE, &old);
    hk_buffer_alloc(ctx, 16, HK_F32, HK_MEM_DEVICE, &p);
    hk_buffer_upload(old, 0, host, sizeof host);

    hk_launch_config one = tu_cfg(1, 1, 1, 32, 1, 1, 0);
    hk_arg wa[] = {hk_arg_buffer(p), hk_arg_uint(1ull << 40)};
    r = hk_launch(wild, &one, wa, 2);
    int s = r == 0 ? hk_synchronize(ctx) : r;
    tap_ok(s == HK_EFAULT && strstr(hk_errmsg(ctx), "wild"),
           "a wild write is reported as a fault naming the kernel: %s", hk_errmsg(ctx));
    tap_ok(strstr(hk_errmsg(ctx), "reset") != NULL, "the message says the context was reset");

    r = hk_buffer_download(old, 0, back, sizeof back);
    tap_ok(r != 0 && strstr(hk_errmsg(ctx), "reset"),
           "a buffer from before the reset fails on use, saying why: %s", hk_errmsg(ctx));

    hk_buffer *fresh = NULL;
    r = hk_buffer_alloc(ctx, n, HK_I32, HK_MEM_DEVICE, &fresh);
    if (r == 0)
        r = hk_buffer_upload(fresh, 0, host, sizeof host);
    hk_launch_config cfg = tu_cfg((n + 255) / 256, 1, 1, 256, 1, 1, 0);
    hk_arg aa[] = {hk_arg_buffer(fresh), hk_arg_int(n)};
    if (r == 0)
        r = hk_launch(add1, &cfg, aa, 2);
    if (r == 0)
        r = hk_synchronize(ctx);
    if (r == 0)
        r = hk_buffer_download(fresh, 0, back, sizeof back);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[i] != host[i] + 1;
    tap_ok(r == 0 && !bad, "after the reset, a new buffer and the same kernel work (%s, %d wrong)",
           r ? hk_errmsg(ctx) : "ok", bad);

    hk_buffer_free(fresh);
    hk_buffer_free(old);
    hk_buffer_free(p);
    hk_module_free(m);
    hk_context_destroy(ctx);
    return tap_done();
}
