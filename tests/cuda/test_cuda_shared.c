/* Dynamic shared memory past CUDA's default 48 KiB per block: the cuda
 * backend opts the function in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
 * up to the device's opt-in maximum, and a launch past that fails naming
 * the kernel and both sizes. Needs an NVIDIA GPU: every point skips
 * without one. */
#include "../testutil.h"

static hk_context *ctx;

/* The block reverses its whole dynamic shared array: every element read
 * back was written by another thread, so a short array or a wrong size
 * shows in the result. */
static const char *rev_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void shared_rev(const float *in, float *out, int n) {\n"
    "  extern __shared__ float s[];\n"
    "  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = in[i] * 2.0f;\n"
    "  __syncthreads();\n"
    "  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = s[n - 1 - i];\n"
    "}\n";

/* Launches shared_rev over n floats of shared memory; 1 if out is in
 * reversed and doubled. */
static int run_rev(hk_kernel *k, hk_buffer *din, hk_buffer *dout, const float *in, float *out, int n,
                   int *rc)
{
    float nan = NAN;
    hk_buffer_fill(dout, &nan);
    hk_launch_config cfg = tu_cfg(1, 1, 1, 256, 1, 1, (size_t)n * sizeof(float));
    hk_arg a[] = {hk_arg_buffer(din), hk_arg_buffer(dout), hk_arg_int(n)};
    *rc = hk_launch(k, &cfg, a, 3);
    if (*rc)
        return 0;
    hk_buffer_download(dout, 0, out, (size_t)n * sizeof(float));
    for (int i = 0; i < n; i++)
        if (out[i] != in[n - 1 - i] * 2.0f)
            return 0;
    return 1;
}

static void test_big_shared(void)
{
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    tap_ok(di.max_shared_per_block > 49152, "device info reports the opt-in maximum: %zu bytes per block",
           di.max_shared_per_block);
    hk_module *m = NULL;
    hk_kernel *k = tu_kernel(ctx, &m, rev_src, "shared_rev");
    if (!tap_ok(k != NULL, "shared_rev compiles"))
        return;
    int nmax = (int)(di.max_shared_per_block / sizeof(float));
    float *in = malloc((size_t)nmax * 4), *out = malloc((size_t)nmax * 4);
    for (int i = 0; i < nmax; i++)
        in[i] = tu_uniform(-1, 1);
    hk_buffer *din = NULL, *dout = NULL;
    hk_buffer_alloc(ctx, (size_t)nmax, HK_F32, HK_MEM_DEVICE, &din);
    hk_buffer_alloc(ctx, (size_t)nmax, HK_F32, HK_MEM_DEVICE, &dout);
    hk_buffer_upload(din, 0, in, (size_t)nmax * 4);
    int rc;
    /* 100 KiB, then a smaller size (the attribute already covers it), then
     * the whole opt-in maximum (set again, larger), then 16 KiB */
    static const int kib[] = {100, 40, 0, 16};
    for (int t = 0; t < 4; t++) {
        int n = kib[t] ? kib[t] * 256 : nmax;
        int ok = run_rev(k, din, dout, in, out, n, &rc);
        tap_ok(ok, "%zu bytes of dynamic shared memory: every element reversed (%s)", (size_t)n * 4,
               rc ? hk_errmsg(ctx) : "launched");
    }
    /* one float past the maximum: the core's check, before the driver */
    hk_launch_config cfg = tu_cfg(1, 1, 1, 256, 1, 1, di.max_shared_per_block + 4);
    hk_arg a[] = {hk_arg_buffer(din), hk_arg_buffer(dout), hk_arg_int(nmax + 1)};
    rc = hk_launch(k, &cfg, a, 3);
    char asked[32], avail[32];
    snprintf(asked, sizeof asked, "%zu", di.max_shared_per_block + 4);
    snprintf(avail, sizeof avail, "%zu", di.max_shared_per_block);
    const char *msg = hk_errmsg(ctx);
    tap_ok(rc == HK_ELAUNCH && strstr(msg, "shared_rev") && strstr(msg, asked) && strstr(msg, avail),
           "past the maximum: HK_ELAUNCH naming the kernel, asked and available bytes (%s)", msg);
    /* the kernel still launches after the refusal */
    tap_ok(run_rev(k, din, dout, in, out, 100 * 256, &rc), "100 KiB again after the refusal");
    hk_buffer_free(din);
    hk_buffer_free(dout);
    hk_module_free(m);
    free(in);
    free(out);
}

int main(void)
{
    tap_init();
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = "cuda";
    if (hk_context_create(&o, &ctx) != 0 || hk_device_count(ctx) < 1) {
        tap_skip("dynamic shared memory past 48 KiB", "no NVIDIA GPU (the cuda backend has no device)");
        hk_context_destroy(ctx);
        return tap_done();
    }
    tu_seed();
    test_big_shared();
    hk_context_destroy(ctx);
    return tap_done();
}
