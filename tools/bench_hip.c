/* bench-hip: the AMD backend's compile figures, measurable with no AMD GPU.
 *
 *   bench-hip [TARGET]      (default gfx90a)
 *
 * Cold hiprtc compile of y = a*x + b through hk_compile_for_target (disk
 * cache bypassed, fresh source text each run so nothing is reused), against
 * a disk-cache hit of the same request in a new process (context creation
 * excluded, as a user's second session would see it). Prints both medians
 * and their ratio (the target in docs/RESULTS.md: >= 100x). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hipkit/hipkit.h>

#include "bench_util.h"

static hk_context *ctx;

static void die(const char *what)
{
    fprintf(stderr, "bench-hip: %s: %s\n", what, hk_errmsg(ctx));
    exit(1);
}

static void source(char *out, size_t cap, unsigned salt)
{
    snprintf(out, cap,
             "#include <hip/hip_runtime.h>\n"
             "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n) {\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "  if (i < n) y[i] = a * x[i] + b; // %u\n"
             "}\n",
             salt);
}

/* One compile; returns microseconds, checks where the code came from. */
static double one(const char *target, const char *src, int no_cache, int want /* -1: any */)
{
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "axpb";
    o.no_cache = no_cache;
    void *code;
    size_t size;
    hk_code_origin got;
    double t0 = now_us();
    if (hk_compile_for_target(ctx, "hip", target, src, &o, &code, &size, &got) != 0)
        die("compile");
    double t = now_us() - t0;
    free(code);
    if (want >= 0 && (int)got != want) {
        fprintf(stderr, "bench-hip: expected %s, got %s\n", hk_code_origin_name((hk_code_origin)want),
                hk_code_origin_name(got));
        exit(1);
    }
    return t;
}

int main(int argc, char **argv)
{
    const char *target = argc > 1 && strcmp(argv[1], "child") ? argv[1] : "gfx90a";
    int child = argc > 1 && !strcmp(argv[argc - 1], "child");
    hk_context_options opt;
    hk_context_options_defaults(&opt);
    opt.quiet = 1;
    if (hk_context_create(&opt, &ctx) != 0)
        die("context");
    char src[1024];
    source(src, sizeof src, 0);
    if (child) {
        printf("%.1f\n", one(target, src, 0, HK_ORIGIN_CACHE));
        hk_context_destroy(ctx);
        return 0;
    }
    enum { N = 11 };
    double cold[N], hit[N];
    for (int i = 0; i < N; i++) {
        char fresh[1024];
        source(fresh, sizeof fresh, (unsigned)i + 1);
        cold[i] = one(target, fresh, 1, HK_ORIGIN_JIT);
    }
    one(target, src, 0, -1); /* the entry the children hit */
    for (int i = 0; i < N; i++) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' '%s' child", argv[0], target);
        FILE *p = popen(cmd, "r");
        if (!p || fscanf(p, "%lf", &hit[i]) != 1) {
            fprintf(stderr, "bench-hip: the child run (%s) gave no figure\n", cmd);
            return 1;
        }
        pclose(p);
    }
    double c = median(cold, N), h = median(hit, N);
    printf("hiprtc compile of y = a*x + b for %s: median %.1f ms over %d (cache bypassed)\n", target,
           c / 1000, N);
    printf("disk-cache hit in a new process (context creation excluded): median %.1f us over %d\n",
           h, N);
    printf("ratio: the hit is %.0fx faster (target >= 100x)\n", c / h);
    hk_context_destroy(ctx);
    return 0;
}
