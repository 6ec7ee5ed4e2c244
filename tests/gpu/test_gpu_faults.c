/* A GPU fault does not end the session: the faulting kernel is named, the
 * buffers of that device then fail on use with a message that says why, and
 * the session goes on. Whether the device itself can be used again depends
 * on the driver: CUDA keeps an illegal-address error for the life of the
 * process (measured on an H100, driver 580), so there the message must say
 * to restart, and another backend (the CPU) must still work. Runs on
 * HIPKIT_TEST_BACKEND (a GPU backend); skips where it is unavailable. */
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
    tap_ok(strstr(hk_errmsg(ctx), "reset") != NULL || strstr(hk_errmsg(ctx), "restart") != NULL,
           "the message says what became of the device (reset, or restart needed)");

    r = hk_buffer_download(old, 0, back, sizeof back);
    tap_ok(r != 0 && (strstr(hk_errmsg(ctx), "reset") || strstr(hk_errmsg(ctx), "restart")),
           "a buffer from before the fault fails on use, saying why: %s", hk_errmsg(ctx));

    hk_buffer *fresh = NULL;
    r = hk_buffer_alloc(ctx, n, HK_I32, HK_MEM_DEVICE, &fresh);
    if (r != 0) {
        /* the device is gone for this process: say so, and how to get it back */
        tap_ok(strstr(hk_errmsg(ctx), "restart") != NULL,
               "a new allocation on the faulted device says to restart: %s", hk_errmsg(ctx));
    } else {
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
    }

    /* the session goes on: the CPU backend in the same context still works */
    int hostdev = hk_device_find(ctx, "host");
    hk_buffer *hb = NULL;
    hk_module *hm = NULL;
    hk_kernel *hk_add1 = NULL;
    r = hostdev < 0 ? hostdev : hk_device_select(ctx, hostdev);
    if (r == 0)
        r = hk_buffer_alloc(ctx, n, HK_I32, HK_MEM_DEVICE, &hb);
    if (r == 0)
        r = hk_buffer_upload(hb, 0, host, sizeof host);
    if (r == 0 && tu_have_host_cxx())
        r = hk_module_compile(ctx, src, &co, &hm);
    if (r == 0 && hm)
        r = hk_module_kernel(hm, "add1", &hk_add1);
    hk_launch_config hcfg = tu_cfg((n + 255) / 256, 1, 1, 256, 1, 1, 0);
    hk_arg ha[] = {hk_arg_buffer(hb), hk_arg_int(n)};
    if (r == 0 && hk_add1)
        r = hk_launch(hk_add1, &hcfg, ha, 2);
    if (r == 0)
        r = hk_buffer_download(hb, 0, back, sizeof back);
    int hbad = 0;
    for (int i = 0; hk_add1 && i < n; i++)
        hbad += back[i] != host[i] + 1;
    tap_ok(r == 0 && !hbad, "the session goes on: the host backend in the same context works (%s)",
           r ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(hb);
    hk_module_free(hm);

    hk_buffer_free(fresh);
    hk_buffer_free(old);
    hk_buffer_free(p);
    hk_module_free(m);
    hk_context_destroy(ctx);
    return tap_done();
}
