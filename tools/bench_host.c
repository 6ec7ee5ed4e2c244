/* Backend benchmarks for docs/RESULTS.md (the CPU backend by default). Each figure is printed with the
 * reference it is compared against, measured in the same run.
 *   bench-host [memhit|diskhit|launch|vecadd|tiled|all]
 * Uses the cache folder the environment says (HIPKIT_CACHE_DIR). */
#include <hipkit/hipkit.h>

#include "bench_util.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static hk_context *ctx;

static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, hk_errmsg(ctx));
    exit(1);
}

static hk_kernel *compile(const char *src, const char *name, hk_module **m)
{
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = name;
    hk_kernel *k;
    if (hk_module_compile(ctx, src, &o, m) || hk_module_kernel(*m, name, &k))
        die(name);
    return k;
}

static const char *empty_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void empty(int *p) { (void)p; }\n";

static void bench_memhit(void)
{
    hk_module *m;
    compile(empty_src, "empty", &m);
    hk_module_free(m);
    enum { N = 20000 };
    static double t[N];
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "empty";
    for (int i = 0; i < N; i++) {
        double t0 = now_us();
        if (hk_module_compile(ctx, empty_src, &o, &m))
            die("memhit");
        t[i] = now_us() - t0;
        hk_module_free(m);
    }
    printf("memhit: in-memory hit (hk_module_compile of a seen source): median %.2f us over %d (target <= 2 us)\n",
           median(t, N), N);
}

/* Child: context creation excluded, time one compile that hits the disk. */
static void diskhit_child(void)
{
    hk_module *m;
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "empty";
    double t0 = now_us();
    if (hk_module_compile(ctx, empty_src, &o, &m))
        die("diskhit");
    double t = now_us() - t0;
    hk_kernel *k;
    hk_module_kernel(m, "empty", &k);
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    printf("%.1f %s\n", t, hk_code_origin_name(info.origin));
    hk_module_free(m);
}

static void bench_diskhit(const char *self)
{
    hk_module *m;
    compile(empty_src, "empty", &m); /* make sure the entry exists */
    hk_module_free(m);
    enum { N = 21 };
    double t[N];
    int hits = 0;
    for (int i = 0; i < N; i++) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "%s diskhit-child", self);
        FILE *p = popen(cmd, "r");
        char origin[32] = "";
        if (!p || fscanf(p, "%lf %31s", &t[i], origin) != 2)
            die("diskhit child");
        pclose(p);
        hits += !strcmp(origin, "cache");
    }
    printf("diskhit: disk-cache hit in a new process (context creation excluded): median %.1f us over %d runs, %d/%d were cache hits (target <= 1000 us)\n",
           median(t, N), N, hits, N);
}

static void bench_launch(void)
{
    hk_module *m;
    hk_kernel *k = compile(empty_src, "empty", &m);
    hk_buffer *b;
    hk_buffer_alloc(ctx, 1, HK_I32, HK_MEM_DEVICE, &b);
    hk_launch_config cfg = {{1, 1, 1}, {1, 1, 1}, 0};
    hk_arg a = hk_arg_buffer(b);
    enum { N = 200000, R = 9 };
    double rounds[R];
    for (int r = 0; r < R; r++) {
        double t0 = now_us();
        for (int i = 0; i < N; i++)
            if (hk_launch(k, &cfg, &a, 1))
                die("launch");
        rounds[r] = (now_us() - t0) / N;
    }
    printf("launch: empty one-block kernel through hk_launch: median %.3f us per launch (%d x %d) (target <= 2 us)\n",
           median(rounds, R), R, N);
    hk_buffer_free(b);
    hk_module_free(m);
}

/* The launch scripts-lua/bench/launch.lua makes from Lua, from C. */
static void bench_launch5(void)
{
    static const char *src =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void k5(float *a, const float *b, float s, int n, unsigned flags) {\n"
        "    (void)a; (void)b; (void)s; (void)n; (void)flags;\n"
        "}\n";
    hk_module *m;
    hk_kernel *k = compile(src, "k5", &m);
    hk_buffer *a, *b;
    hk_buffer_alloc(ctx, 16, HK_F32, HK_MEM_DEVICE, &a);
    hk_buffer_alloc(ctx, 16, HK_F32, HK_MEM_DEVICE, &b);
    hk_launch_config cfg = {{1, 1, 1}, {1, 1, 1}, 0};
    enum { N = 200000 };
    for (int i = 0; i < 1000; i++) {
        hk_arg args[] = {hk_arg_buffer(a), hk_arg_buffer(b), hk_arg_float(1.5), hk_arg_int(16), hk_arg_int(3)};
        hk_launch(k, &cfg, args, 5);
    }
    hk_synchronize(ctx);
    double t0 = now_us();
    for (int i = 0; i < N; i++) {
        /* built per launch, as a binding would */
        hk_arg args[] = {hk_arg_buffer(a), hk_arg_buffer(b), hk_arg_float(1.5), hk_arg_int(16), hk_arg_int(3)};
        if (hk_launch(k, &cfg, args, 5))
            die("launch5");
    }
    hk_synchronize(ctx);
    double us = (now_us() - t0) / N;
    printf("c hk_launch: %.3f us per launch (5 arguments, %d launches, wall time to the last one's end)\n", us, N);
    hk_buffer_free(a);
    hk_buffer_free(b);
    hk_module_free(m);
}

/* ---- vector add against a plain C loop on the same number of threads ---- */

typedef struct vjob {
    const float *a, *b;
    float *c;
    size_t lo, hi;
} vjob;

static void *vadd_thread(void *p)
{
    vjob *j = p;
    for (size_t i = j->lo; i < j->hi; i++)
        j->c[i] = j->a[i] + j->b[i];
    return NULL;
}

static double plain_vadd(const float *a, const float *b, float *c, size_t n, int nthreads)
{
    pthread_t th[256];
    vjob jobs[256];
    double t0 = now_us();
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = (vjob){a, b, c, n * t / nthreads, n * (t + 1) / nthreads};
        pthread_create(&th[t], NULL, vadd_thread, &jobs[t]);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    return now_us() - t0;
}

static void bench_vecadd(void)
{
    static const char *src =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) c[i] = a[i] + b[i];\n"
        "}\n";
    hk_module *m;
    hk_kernel *k = compile(src, "vadd", &m);
    const int n = 1 << 26;
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    int nthreads = di.compute_units;
    hk_buffer *a, *b, *c;
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &a);
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &b);
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &c);
    float one = 1, two = 2;
    hk_buffer_fill(a, &one);
    hk_buffer_fill(b, &two);
    hk_buffer_fill(c, &one);
    float *pa = malloc((size_t)n * 4), *pb = malloc((size_t)n * 4), *pc = malloc((size_t)n * 4);
    for (int i = 0; i < n; i++) {
        pa[i] = 1;
        pb[i] = 2;
        pc[i] = 0;
    }
    hk_launch_config cfg = {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0};
    hk_arg args[] = {hk_arg_buffer(a), hk_arg_buffer(b), hk_arg_buffer(c), hk_arg_int(n)};
    enum { R = 11 };
    double th[R], tc[R];
    hk_launch(k, &cfg, args, 4);
    plain_vadd(pa, pb, pc, (size_t)n, nthreads);
    for (int r = 0; r < R; r++) {
        double t0 = now_us();
        if (hk_launch(k, &cfg, args, 4))
            die("vadd");
        th[r] = now_us() - t0;
        tc[r] = plain_vadd(pa, pb, pc, (size_t)n, nthreads);
    }
    float *hc = hk_buffer_host_ptr(c);
    int ok = hc[0] == 3 && hc[n - 1] == 3 && pc[n / 2] == 3;
    double mh = median(th, R), mc = median(tc, R);
    printf("vecadd: 2^26 f32 on %d threads: hipkit %.2f ms (%.1f GB/s), plain C -O2 loop %.2f ms (%.1f GB/s): ratio %.2f (target >= 0.8)%s\n",
           nthreads, mh / 1e3, 12.0 * n / mh / 1e3, mc / 1e3, 12.0 * n / mc / 1e3, mc / mh,
           ok ? "" : " RESULT WRONG");
    free(pa);
    free(pb);
    free(pc);
    hk_buffer_free(a);
    hk_buffer_free(b);
    hk_buffer_free(c);
    hk_module_free(m);
}

static void bench_tiled(void)
{
    static const char *src =
        "#include <hip/hip_runtime.h>\n"
        "#define TILE 16\n"
        "extern \"C\" __global__ void mm(const float *A, const float *B, float *C, int n) {\n"
        "  __shared__ float As[TILE][TILE], Bs[TILE][TILE];\n"
        "  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;\n"
        "  float acc = 0.0f;\n"
        "  for (int t = 0; t < n / TILE; t++) {\n"
        "    As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];\n"
        "    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];\n"
        "    __syncthreads();\n"
        "    for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n"
        "    __syncthreads();\n"
        "  }\n"
        "  C[row * n + col] = acc;\n"
        "}\n";
    hk_module *m;
    hk_kernel *k = compile(src, "mm", &m);
    const int n = 512;
    hk_buffer *a, *b, *c;
    hk_buffer_alloc(ctx, (size_t)n * n, HK_F32, HK_MEM_DEVICE, &a);
    hk_buffer_alloc(ctx, (size_t)n * n, HK_F32, HK_MEM_DEVICE, &b);
    hk_buffer_alloc(ctx, (size_t)n * n, HK_F32, HK_MEM_DEVICE, &c);
    float one = 1, half = 0.5f;
    hk_buffer_fill(a, &one);
    hk_buffer_fill(b, &half);
    hk_launch_config cfg = {{n / 16, n / 16, 1}, {16, 16, 1}, 0};
    hk_arg args[] = {hk_arg_buffer(a), hk_arg_buffer(b), hk_arg_buffer(c), hk_arg_int(n)};
    hk_launch(k, &cfg, args, 4);
    enum { R = 5 };
    double t[R];
    for (int r = 0; r < R; r++) {
        double t0 = now_us();
        if (hk_launch(k, &cfg, args, 4))
            die("tiled");
        t[r] = now_us() - t0;
    }
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    double med = median(t, R);
    /* every thread passes 2 barriers per tile step */
    double passes = (double)n * n * 2 * (n / 16);
    float *hc = hk_buffer_host_ptr(c);
    int ok = hc[0] == 256.0f && hc[n * n - 1] == 256.0f;
    printf("tiled: 512x512x512 f32, 16x16 tiles: %.1f ms, %.1f GFLOP/s, %.1f M thread-barrier passes/s on %d threads = %.1f M/s per core (target >= 20 M/s per core)%s\n",
           med / 1e3, 2.0 * n * n * n / med / 1e3, passes / med, di.compute_units,
           passes / med / di.compute_units, ok ? "" : " RESULT WRONG");
    hk_buffer_free(a);
    hk_buffer_free(b);
    hk_buffer_free(c);
    hk_module_free(m);
}

int main(int argc, char **argv)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    /* the CPU backend unless HIPKIT_BENCH_BACKEND names another (the GPU
     * figures of memhit, diskhit and launch5 come from the same code) */
    o.backend = getenv("HIPKIT_BENCH_BACKEND") ? getenv("HIPKIT_BENCH_BACKEND") : "host";
    if (hk_context_create(&o, &ctx)) {
        fprintf(stderr, "%s\n", hk_errmsg(NULL));
        return 1;
    }
    const char *what = argc > 1 ? argv[1] : "all";
    if (!strcmp(what, "diskhit-child")) {
        diskhit_child();
    } else {
        hk_device_info di;
        hk_device_get(ctx, hk_device_current(ctx), &di);
        printf("device: %s, %d threads\n", di.name, di.compute_units);
        int all = !strcmp(what, "all");
        if (all || !strcmp(what, "memhit"))
            bench_memhit();
        if (all || !strcmp(what, "diskhit"))
            bench_diskhit(argv[0]);
        if (all || !strcmp(what, "launch"))
            bench_launch();
        if (all || !strcmp(what, "launch5"))
            bench_launch5();
        if (all || !strcmp(what, "vecadd"))
            bench_vecadd();
        if (all || !strcmp(what, "tiled"))
            bench_tiled();
    }
    hk_context_destroy(ctx);
    return 0;
}
