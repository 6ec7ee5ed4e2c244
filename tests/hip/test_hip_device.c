/* The AMD backend on an AMD GPU: launch against a CPU reference, every
 * memory mode, mmap of a file, events, kernel info from the metadata, and
 * loading a code object built for another target. Written for the first
 * user with an AMD GPU; with none, it prints one SKIP line and its reason.
 * (The general suite runs on the GPU too: HIPKIT_TEST_BACKEND=hip, see
 * tests/gpu/run.sh.) */
#include <fcntl.h>
#include <sys/stat.h>

#include "../testutil.h"

static hk_context *ctx;

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void block_sum(const float *x, float *out, int n) {\n"
    "  __shared__ float part[256];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  part[threadIdx.x] = i < n ? x[i] : 0.0f;\n"
    "  __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s /= 2) {\n"
    "    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = part[0];\n"
    "}\n";

static int launch_axpb(hk_kernel *k, float a, hk_buffer *x, float b, hk_buffer *y, int n)
{
    hk_arg args[] = {hk_arg_float(a), hk_arg_buffer(x), hk_arg_float(b), hk_arg_buffer(y), hk_arg_int(n)};
    hk_launch_config cfg = {.grid = {(uint32_t)(n + 255) / 256, 1, 1}, .block = {256, 1, 1}};
    return hk_launch(k, &cfg, args, 5);
}

/* axpb in one memory mode, checked against a CPU loop, output poisoned. */
static void test_mode(hk_kernel *k, hk_mem_mode mode)
{
    const int n = 1 << 20;
    float *x = malloc(n * 4), *y = malloc(n * 4);
    for (int i = 0; i < n; i++)
        x[i] = tu_uniform(-100, 100);
    float a = tu_uniform(-2, 2), b = tu_uniform(-2, 2), nan = NAN;
    hk_buffer *bx = NULL, *by = NULL;
    int r = hk_buffer_alloc(ctx, n, HK_F32, mode, &bx);
    if (!r)
        r = hk_buffer_alloc(ctx, n, HK_F32, mode, &by);
    if (!r)
        r = hk_buffer_upload(bx, 0, x, n * 4);
    if (!r)
        r = hk_buffer_fill(by, &nan);
    if (!r)
        r = launch_axpb(k, a, bx, b, by, n);
    if (!r)
        r = hk_synchronize(ctx);
    if (!r)
        r = hk_buffer_download(by, 0, y, n * 4);
    int bad = 0;
    for (int i = 0; !r && i < n; i++)
        bad += !(fabsf(y[i] - (a * x[i] + b)) <= 1e-5f * (1 + fabsf(a * x[i] + b)));
    tap_ok(r == 0 && bad == 0, "axpb with %s memory: %d of %d wrong%s%s", hk_mem_mode_name(mode), bad,
           n, r ? ": " : "", r ? hk_errmsg(ctx) : "");
    hk_buffer_free(bx);
    hk_buffer_free(by);
    free(x);
    free(y);
}

static void test_mmap(hk_kernel *k)
{
    const int n = 1 << 18;
    char path[] = "/tmp/hipkit-mmap-XXXXXX";
    int fd = mkstemp(path);
    float *x = malloc(n * 4), *y = malloc(n * 4);
    for (int i = 0; i < n; i++)
        x[i] = tu_uniform(-10, 10);
    int ok = fd >= 0 && write(fd, x, n * 4) == n * 4;
    if (fd >= 0)
        close(fd);
    hk_buffer *bx = NULL, *by = NULL;
    int r = ok ? hk_buffer_mmap(ctx, path, HK_F32, NULL, &bx) : HK_EIO;
    float nan = NAN, a = 3, b = -1;
    if (!r)
        r = hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &by);
    if (!r)
        r = hk_buffer_fill(by, &nan);
    if (!r)
        r = launch_axpb(k, a, bx, b, by, n);
    if (!r)
        r = hk_synchronize(ctx);
    if (!r)
        r = hk_buffer_download(by, 0, y, n * 4);
    int bad = 0;
    for (int i = 0; !r && i < n; i++)
        bad += y[i] != a * x[i] + b;
    tap_ok(r == 0 && bad == 0, "a kernel reads a read-only file mapping: %d wrong%s%s", bad,
           r ? ": " : "", r ? hk_errmsg(ctx) : "");
    hk_buffer_free(bx);
    hk_buffer_free(by);
    unlink(path);
    free(x);
    free(y);
}

static void test_events_and_info(hk_module *m)
{
    hk_kernel *k = NULL;
    int r = hk_module_kernel(m, "block_sum", &k);
    hk_kernel_info info;
    if (!tap_ok(r == 0 && hk_kernel_get_info(k, &info) == 0, "block_sum found (%s)", hk_errmsg(ctx)))
        return;
    tap_ok(info.registers > 0 && info.static_shared == 256 * 4 && info.local_bytes >= 0,
           "k:info from the metadata: %d VGPRs, %lld LDS bytes, %lld scratch bytes", info.registers,
           (long long)info.static_shared, (long long)info.local_bytes);
    const int n = 1 << 16, blocks = n / 256;
    float *x = malloc(n * 4), *out = malloc(blocks * 4);
    for (int i = 0; i < n; i++)
        x[i] = tu_uniform(0, 1);
    hk_buffer *bx = NULL, *bo = NULL;
    hk_event *e0 = NULL, *e1 = NULL;
    float nan = NAN;
    r = hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &bx);
    if (!r)
        r = hk_buffer_alloc(ctx, blocks, HK_F32, HK_MEM_DEVICE, &bo);
    if (!r)
        r = hk_buffer_upload(bx, 0, x, n * 4);
    if (!r)
        r = hk_buffer_fill(bo, &nan);
    if (!r)
        r = hk_event_create(ctx, &e0);
    if (!r)
        r = hk_event_create(ctx, &e1);
    hk_arg args[] = {hk_arg_buffer(bx), hk_arg_buffer(bo), hk_arg_int(n)};
    hk_launch_config cfg = {.grid = {blocks, 1, 1}, .block = {256, 1, 1}};
    if (!r)
        r = hk_event_record(e0);
    if (!r)
        r = hk_launch(k, &cfg, args, 3);
    if (!r)
        r = hk_event_record(e1);
    if (!r)
        r = hk_event_synchronize(e1);
    double ms = -1;
    if (!r)
        r = hk_event_elapsed_ms(e0, e1, &ms);
    tap_ok(r == 0 && ms >= 0 && ms < 10000, "events time a launch: %.3f ms", ms);
    if (!r)
        r = hk_buffer_download(bo, 0, out, blocks * 4);
    int bad = 0;
    for (int b = 0; !r && b < blocks; b++) {
        double want = 0;
        for (int i = 0; i < 256; i++)
            want += x[b * 256 + i];
        bad += fabs(out[b] - want) > 1e-3 * want + 1e-3;
    }
    tap_ok(r == 0 && bad == 0, "block_sum (shared memory, barriers): %d of %d blocks wrong", bad, blocks);
    hk_event_destroy(e0);
    hk_event_destroy(e1);
    hk_buffer_free(bx);
    hk_buffer_free(bo);
    free(x);
    free(out);
}

/* A code object for a target the device is not: the message says what the
 * file holds, what the device needs, and how to rebuild. */
static void test_wrong_target(const char *dev_target)
{
    const char *other = strncmp(dev_target, "gfx1030", 7) ? "gfx1030" : "gfx90a";
    void *code = NULL;
    size_t size = 0;
    int r = hk_compile_for_target(ctx, "hip", other, src, NULL, &code, &size, NULL);
    hk_module *m = NULL;
    if (!r)
        r = hk_module_load_bytes(ctx, code, size, "other", &m);
    const char *msg = hk_errmsg(ctx);
    tap_ok(r == HK_EFORMAT && strstr(msg, other) && strstr(msg, "hipkit compile"),
           "loading code for %s on %s is refused with the way out: %s", other, dev_target, msg);
    hk_module_free(m);
    free(code);
}

int main(void)
{
    tap_init();
    tu_seed();
    hk_context_options opt;
    hk_context_options_defaults(&opt);
    opt.backend = "hip";
    opt.quiet = 1;
    if (hk_context_create(&opt, &ctx) != 0) {
        printf("1..0 # SKIP no AMD GPU: %s\n", hk_errmsg(NULL));
        return 0;
    }
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    tap_diag("device %s, target %s, %d CUs, wave %d", di.name, di.target, di.compute_units, di.warp_size);
    tap_ok(!strncmp(di.target, "gfx", 3) && (di.warp_size == 32 || di.warp_size == 64),
           "the device has a full target id (%s) and a wavefront size", di.target);
    hk_module *m = NULL;
    int r = hk_module_compile(ctx, src, NULL, &m);
    hk_kernel *k = NULL;
    if (!r)
        r = hk_module_kernel(m, "axpb", &k);
    if (tap_ok(r == 0, "hiprtc compiles and the device loads the module (%s)", r ? hk_errmsg(ctx) : "ok")) {
        test_mode(k, HK_MEM_DEVICE);
        test_mode(k, HK_MEM_MANAGED);
        test_mode(k, HK_MEM_HOST);
        test_mmap(k);
        test_events_and_info(m);
    }
    test_wrong_target(di.target);
    hk_module_free(m);
    hk_context_destroy(ctx);
    return tap_done();
}
