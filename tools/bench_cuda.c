/* NVIDIA-backend benchmarks against the raw vendor APIs, in one run:
 *   launch  a 5-argument empty kernel: cuLaunchKernel vs hk_launch
 *   jit     NVRTC compile of a small kernel: raw NVRTC vs hk_module_compile
 *           with the cache off (both include loading the cubin)
 *   mmap    a kernel reading a 1 GiB read-only registered file mapping vs
 *           a pinned host-to-device copy of the same size
 * Usage: bench-cuda [launch|jit|mmap|all] (device 0). */
#include <cuda.h>
#include <hipkit/hipkit.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"


#define CU(call)                                                             \
    do {                                                                     \
        CUresult r_ = (call);                                                \
        if (r_ != CUDA_SUCCESS) {                                            \
            const char *s_ = "?";                                            \
            cuGetErrorName(r_, &s_);                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static hk_context *ctx;
static CUdevice cudev;
static int cc_major, cc_minor;

static void hk_die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, hk_errmsg(ctx));
    exit(1);
}

/* Raw NVRTC: source to a loaded function; returns compile+load ms. */
static double raw_compile(const char *src, const char *name, CUmodule *mod, CUfunction *fn)
{
    double t0 = now_us();
    nvrtcProgram prog;
    nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", cc_major, cc_minor);
    const char *opts[] = {arch, "-default-device", "--std=c++17"};
    if (nvrtcCompileProgram(prog, 3, opts) != NVRTC_SUCCESS) {
        size_t n;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "raw nvrtc failed:\n%s\n", log);
        exit(1);
    }
    size_t n;
    nvrtcGetCUBINSize(prog, &n);
    char *cubin = malloc(n);
    nvrtcGetCUBIN(prog, cubin);
    nvrtcDestroyProgram(&prog);
    CU(cuModuleLoadData(mod, cubin));
    CU(cuModuleGetFunction(fn, *mod, name));
    free(cubin);
    return (now_us() - t0) / 1e3;
}

static const char *k5_cuda =
    "extern \"C\" __global__ void k5(float *a, const float *b, float s, int n, unsigned flags) {\n"
    "    (void)a; (void)b; (void)s; (void)n; (void)flags;\n"
    "}\n";
static const char *k5_hip =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void k5(float *a, const float *b, float s, int n, unsigned flags) {\n"
    "    (void)a; (void)b; (void)s; (void)n; (void)flags;\n"
    "}\n";

static void bench_launch(void)
{
    CUmodule mod;
    CUfunction fn;
    raw_compile(k5_cuda, "k5", &mod, &fn);
    CUdeviceptr a, b;
    CU(cuMemAlloc(&a, 64));
    CU(cuMemAlloc(&b, 64));
    float s = 1.5f;
    int n = 16;
    unsigned flags = 3;
    void *params[] = {&a, &b, &s, &n, &flags};

    hk_module *m;
    hk_kernel *k;
    if (hk_module_compile(ctx, k5_hip, NULL, &m) || hk_module_kernel(m, "k5", &k))
        hk_die("compile k5");
    hk_buffer *ha, *hb;
    hk_buffer_alloc(ctx, 16, HK_F32, HK_MEM_DEVICE, &ha);
    hk_buffer_alloc(ctx, 16, HK_F32, HK_MEM_DEVICE, &hb);
    hk_launch_config cfg = {{1, 1, 1}, {1, 1, 1}, 0};

    /* Raw and hipkit rounds alternate, and the figure is the median of the
     * ratios of neighbouring rounds: the GPU's drain rate drifts by 30%
     * between runs, and a ratio of two rounds a few ms apart cancels it. */
    enum { N = 20000, R = 21 };
    double raw[R], hk[R], ratio[R];
    for (int r = 0; r < R; r++) {
        CU(cuCtxSynchronize());
        double t0 = now_us();
        for (int i = 0; i < N; i++)
            CU(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
        CU(cuCtxSynchronize());
        raw[r] = (now_us() - t0) / N;

        hk_synchronize(ctx);
        t0 = now_us();
        for (int i = 0; i < N; i++) {
            hk_arg args[] = {hk_arg_buffer(ha), hk_arg_buffer(hb), hk_arg_float(1.5), hk_arg_int(16),
                             hk_arg_int(3)};
            if (hk_launch(k, &cfg, args, 5))
                hk_die("hk_launch");
        }
        if (hk_synchronize(ctx))
            hk_die("sync");
        hk[r] = (now_us() - t0) / N;
        ratio[r] = hk[r] / raw[r];
    }
    double mq = median(ratio, R), mr = median(raw, R), mh = median(hk, R);
    printf("launch: 5-argument empty kernel, %d launches x %d paired rounds: raw cuLaunchKernel %.3f us, "
           "hk_launch %.3f us: median paired ratio %.3f (target <= 1.05)\n", N, R, mr, mh, mq);
    hk_buffer_free(ha);
    hk_buffer_free(hb);
    hk_module_free(m);
    cuMemFree(a);
    cuMemFree(b);
    cuModuleUnload(mod);
}

static void bench_jit(void)
{
    static const char *cuda_src =
        "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = a * x[i] + b;\n"
        "}\n";
    static const char *hip_src =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = a * x[i] + b;\n"
        "}\n";
    enum { R = 7 };
    double raw[R], hk[R];
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "axpb";
    o.no_cache = 1;
    for (int r = 0; r < R; r++) {
        CUmodule mod;
        CUfunction fn;
        raw[r] = raw_compile(cuda_src, "axpb", &mod, &fn);
        cuModuleUnload(mod);
        /* a different define each round: a true cold compile, not a memory hit */
        char def[32];
        snprintf(def, sizeof def, "ROUND=%d", r);
        const char *defs[] = {def};
        o.defines = defs;
        o.ndefines = 1;
        hk_module *m;
        hk_kernel *k;
        double t0 = now_us();
        if (hk_module_compile(ctx, hip_src, &o, &m) || hk_module_kernel(m, "axpb", &k))
            hk_die("compile axpb");
        hk[r] = (now_us() - t0) / 1e3;
        hk_module_free(m);
    }
    double mr = median(raw, R), mh = median(hk, R);
    printf("jit: axpb, compile + load, %d rounds: raw NVRTC %.1f ms, hk_module_compile (cache off) %.1f ms: "
           "ratio %.3f (target <= 1.1)\n", R, mr, mh, mh / mr);
}

static void bench_mmap(void)
{
    const size_t bytes = (size_t)1 << 30, n = bytes / 4;
    char path[] = "/tmp/hk-bench-mmap-XXXXXX";
    int fd = mkstemp(path);
    unsigned *chunk = malloc(1 << 24);
    for (size_t i = 0; i < (1 << 22); i++)
        chunk[i] = (unsigned)i;
    for (size_t off = 0; off < bytes; off += 1 << 24)
        if (write(fd, chunk, 1 << 24) != 1 << 24) {
            perror("write");
            exit(1);
        }
    close(fd);
    free(chunk);

    static const char *src =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void sum(const uint4 *v, unsigned long long n4, unsigned long long *out) {\n"
        "    unsigned long long acc = 0;\n"
        "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4;\n"
        "         i += (unsigned long long)blockDim.x * gridDim.x) {\n"
        "        uint4 q = v[i]; acc += q.x + q.y + q.z + q.w; }\n"
        "    atomicAdd(out, acc);\n"
        "}\n";
    hk_module *m;
    hk_kernel *k;
    if (hk_module_compile(ctx, src, NULL, &m) || hk_module_kernel(m, "sum", &k))
        hk_die("compile sum");
    hk_buffer *map, *out;
    if (hk_buffer_mmap(ctx, path, HK_U32, NULL, &map))
        hk_die("mmap");
    hk_buffer_alloc(ctx, 1, HK_U64, HK_MEM_DEVICE, &out);
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    hk_launch_config cfg = {{(uint32_t)di.compute_units * 8, 1, 1}, {512, 1, 1}, 0};
    hk_event *e0, *e1;
    hk_event_create(ctx, &e0);
    hk_event_create(ctx, &e1);
    enum { R = 5 };
    double kt[R], ct[R];
    unsigned long long zero = 0, got = 0;
    /* pinned host-to-device copy, the reference */
    void *pinned;
    CUdeviceptr dst;
    CU(cuMemHostAlloc(&pinned, bytes, 0));
    memset(pinned, 1, bytes);
    CU(cuMemAlloc(&dst, bytes));
    CUevent c0, c1;
    CU(cuEventCreate(&c0, 0));
    CU(cuEventCreate(&c1, 0));
    for (int r = 0; r < R; r++) {
        hk_buffer_fill(out, &zero);
        hk_arg args[] = {hk_arg_buffer(map), hk_arg_uint(n / 4), hk_arg_buffer(out)};
        hk_event_record(e0);
        if (hk_launch(k, &cfg, args, 3))
            hk_die("sum");
        hk_event_record(e1);
        if (hk_event_synchronize(e1))
            hk_die("sync");
        hk_event_elapsed_ms(e0, e1, &kt[r]);
        hk_buffer_download(out, 0, &got, 8);

        CU(cuEventRecord(c0, NULL));
        CU(cuMemcpyHtoD(dst, pinned, bytes));
        CU(cuEventRecord(c1, NULL));
        CU(cuEventSynchronize(c1));
        float ms;
        CU(cuEventElapsedTime(&ms, c0, c1));
        ct[r] = ms;
    }
    /* the file holds 0..2^22-1 repeated 64 times (1 GiB of 16 MiB chunks) */
    unsigned long long want = 64ull * ((1ull << 22) * ((1ull << 22) - 1) / 2);
    double mk = median(kt, R), mc = median(ct, R);
    printf("mmap: 1 GiB read-only file mapping summed by a kernel %.1f ms (%.1f GB/s)%s; pinned HtoD copy %.1f ms "
           "(%.1f GB/s): ratio %.3f (target >= 0.8)\n", mk, bytes / mk / 1e6, got == want ? "" : " WRONG SUM",
           mc, bytes / mc / 1e6, mc / mk);
    cuMemFreeHost(pinned);
    cuMemFree(dst);
    hk_event_destroy(e0);
    hk_event_destroy(e1);
    hk_buffer_free(map);
    hk_buffer_free(out);
    hk_module_free(m);
    unlink(path);
}

int main(int argc, char **argv)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = "cuda";
    if (hk_context_create(&o, &ctx)) {
        fprintf(stderr, "%s\n", hk_errmsg(NULL));
        return 1;
    }
    CU(cuInit(0));
    CU(cuDeviceGet(&cudev, 0));
    CU(cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cudev));
    CU(cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cudev));
    CUcontext cctx;
    CU(cuDevicePrimaryCtxRetain(&cctx, cudev));
    CU(cuCtxSetCurrent(cctx));
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    printf("device: %s (%s)\n", di.name, di.target);
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    if (all || !strcmp(what, "launch"))
        bench_launch();
    if (all || !strcmp(what, "jit"))
        bench_jit();
    if (all || !strcmp(what, "mmap"))
        bench_mmap();
    hk_context_destroy(ctx);
    cuDevicePrimaryCtxRelease(cudev);
    return 0;
}
