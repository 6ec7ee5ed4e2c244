/* sgemm on the CPU for docs/RESULTS.md: C = A B, row-major f32, n x n x n
 * (default 1024), GFLOP/s (2 n^3 flops, best of 3) of
 *   - the gemm family's hk.ops.gemm.matmul on hipkit's CPU backend,
 *   - a plain triple loop compiled with this build's flags (-O2),
 *   - cblas_sgemm where the build found a CBLAS (Debian's libblas: the
 *     netlib reference BLAS unless OpenBLAS provides it),
 * each checked against the triple loop.
 *   bench-gemm-cpu [n] */
#include <hipkit/hipkit.h>

#include "bench_util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HK_HAVE_CBLAS
#include <cblas.h>
#endif

static hk_context *ctx;

static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, hk_errmsg(ctx));
    exit(1);
}

/* The textbook loop: one dot product per element of C. */
static void triple_loop(const float *a, const float *b, float *c, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float s = 0;
            for (int k = 0; k < n; k++)
                s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
            c[(size_t)i * n + j] = s;
        }
}

static double worst_diff(const float *x, const float *y, size_t len)
{
    double w = 0;
    for (size_t i = 0; i < len; i++)
        w = fmax(w, fabs((double)x[i] - y[i]));
    return w;
}

static void report(const char *what, double best_us, int n, double diff)
{
    printf("  %-34s %9.1f ms %8.2f GFLOP/s  max |C - loop| %.2g\n", what, best_us / 1e3,
           2.0 * n * n * (double)n / (best_us * 1e-6) / 1e9, diff);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = "host";
    if (n < 1 || hk_context_create(&o, &ctx)) {
        fprintf(stderr, "usage: bench-gemm-cpu [n >= 1]: %s\n", hk_errmsg(NULL));
        return 1;
    }
    size_t len = (size_t)n * n;
    hk_buffer *a, *b, *c;
    if (hk_buffer_alloc(ctx, len, HK_F32, HK_MEM_DEVICE, &a) || hk_buffer_alloc(ctx, len, HK_F32, HK_MEM_DEVICE, &b) ||
        hk_buffer_alloc(ctx, len, HK_F32, HK_MEM_DEVICE, &c))
        die("alloc");
    float *pa = hk_buffer_host_ptr(a), *pb = hk_buffer_host_ptr(b), *pc = hk_buffer_host_ptr(c);
    float *ref = malloc(len * sizeof *ref), *other = malloc(len * sizeof *other);
    if (!pa || !pb || !pc || !ref || !other)
        die("host pointers");
    srand(1);
    for (size_t i = 0; i < len; i++) {
        pa[i] = (float)rand() / RAND_MAX * 2 - 1;
        pb[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    printf("sgemm %d x %d x %d on %s, %d threads\n", n, n, n, di.name, di.compute_units);
    double t0 = now_us();
    triple_loop(pa, pb, ref, n);
    report("triple loop (-O2, one thread)", now_us() - t0, n, 0);
    hk_arg args[6] = {hk_arg_buffer(c), hk_arg_buffer(a), hk_arg_buffer(b), hk_arg_int(n), hk_arg_int(n),
                      hk_arg_int(n)};
    double best = 1e300;
    for (int r = 0; r < 3; r++) {
        t0 = now_us();
        if (hk_plugin_call_op(ctx, "gemm", "matmul", args, 6) || hk_synchronize(ctx))
            die("gemm.matmul");
        best = fmin(best, now_us() - t0);
    }
    report("hk.ops.gemm.matmul (CPU backend)", best, n, worst_diff(pc, ref, len));
#ifdef HK_HAVE_CBLAS
    best = 1e300;
    for (int r = 0; r < 3; r++) {
        t0 = now_us();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, pa, n, pb, n, 0.0f, other, n);
        best = fmin(best, now_us() - t0);
    }
    report("cblas_sgemm (the system's libblas)", best, n, worst_diff(other, ref, len));
#else
    printf("  cblas_sgemm: no CBLAS found at build time\n");
#endif
    free(ref);
    free(other);
    hk_buffer_free(a);
    hk_buffer_free(b);
    hk_buffer_free(c);
    hk_context_destroy(ctx);
    return 0;
}
