/* What kernel discovery costs next to the compile it precedes (issue 17):
 * a source of N macro-generated kernels (candle's style) is preprocessed and
 * scanned (the backend's preprocess slot and hkc_source_scan, as the compile
 * pipeline runs them) and compiled (the compile slot), each timed on its own,
 * median of R runs, no cache involved.
 *   bench-discovery [host|cuda] [N=500] [R=3] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "internal.h"
#include "source_scan.h"

static char *make_source(int n)
{
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    hkc_strbuf_puts(&s,
        "#include <hip/hip_runtime.h>\n"
        "#define UNARY(T, NAME, F) extern \"C\" __global__ void NAME(const size_t numel, "
        "const T *in, T *out) { \\\n"
        "  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; "
        "i += blockDim.x * gridDim.x) { T x = in[i]; out[i] = F; } }\n");
    static const char *const types[] = {"float", "double", "int", "unsigned int"};
    for (int i = 0; i < n; i++)
        hkc_strbuf_printf(&s, "UNARY(%s, k%d, x * (%s)%d + x)\n", types[i % 4], i, types[i % 4],
                          i % 7 + 1);
    return hkc_strbuf_take(&s);
}

int main(int argc, char **argv)
{
    const char *backend = argc > 1 ? argv[1] : "host";
    int n = argc > 2 ? atoi(argv[2]) : 500, reps = argc > 3 ? atoi(argv[3]) : 3;
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = backend;
    o.quiet = 1;
    o.no_plugins = 1;
    hk_context *ctx;
    if (hk_context_create(&o, &ctx) != 0) {
        fprintf(stderr, "bench-discovery: %s\n", hk_errmsg(NULL));
        return 1;
    }
    hkc_device *dev = hkc_current_device(ctx);
    hkc_backend *be = dev->be;
    char *src = make_source(n);
    const char *flags[1] = {NULL};
    hkc_compile_job job = {.name = "discovery.hip", .source = src, .flags = flags};
    double tp[16], tc[16], tl[16], tw[16];
    int found = 0;
    reps = reps < 1 ? 1 : reps > 16 ? 16 : reps;
    for (int r = 0; r < reps; r++) {
        hkc_strbuf pp, log;
        hkc_strbuf_init(&pp);
        hkc_strbuf_init(&log);
        double t0 = now_us();
        hkc_source_kernel *ks = NULL;
        int nk = 0;
        int e = be->ops->preprocess ? be->ops->preprocess(be, dev->index, &job, &pp, &log) : 0;
        if (e == 0)
            e = hkc_source_scan(be->ops->preprocess ? pp.data : src, NULL, &ks, &nk, &log);
        tp[r] = now_us() - t0;
        found = nk;
        job.kernels = ks;
        job.nkernels = nk;
        void *code = NULL;
        size_t size = 0;
        t0 = now_us();
        if (e == 0)
            e = be->ops->compile(be, dev->index, &job, &code, &size, &log);
        tc[r] = now_us() - t0;
        if (e != 0) {
            fprintf(stderr, "bench-discovery: %s\n", log.data);
            return 1;
        }
        /* the load the pipeline does after its compile */
        void *bmod = NULL;
        t0 = now_us();
        e = be->ops->module_load(be, dev->index, code, size, &bmod, &log);
        hkc_kernel_meta *metas = NULL;
        int nmetas = 0;
        if (e == 0) /* the kernel list the pipeline reads at load */
            be->ops->module_kernels(be, bmod, &metas, &nmetas);
        tl[r] = now_us() - t0;
        free(metas);
        if (e == 0)
            be->ops->module_unload(be, bmod);
        /* the whole pipeline, no cache: discovery (beside the compile where
         * the backend allows), compile, load */
        hk_compile_options co;
        hk_compile_options_defaults(&co);
        co.name = "discovery.hip";
        co.no_cache = 1;
        hk_module *m = NULL;
        t0 = now_us();
        e = hk_module_compile(ctx, src, &co, &m);
        tw[r] = now_us() - t0;
        if (e != 0) {
            fprintf(stderr, "bench-discovery: %s\n", hk_errmsg(ctx));
            return 1;
        }
        hk_module_free(m);
        hkc_module_table_clear(ctx);
        free(code);
        hkc_source_kernels_free(ks, nk);
        hkc_strbuf_free(&pp);
        hkc_strbuf_free(&log);
    }
    double p = median(tp, reps), c = median(tc, reps), l = median(tl, reps), w = median(tw, reps);
    printf("%s (%s): %d macro-generated kernels, %d found; discovery %.1f ms, compile %.1f ms: "
           "discovery alone is %.1f%% of the compile (median of %d)\n", backend, dev->info.name, n,
           found, p / 1e3, c / 1e3, 100.0 * p / c, reps);
    printf("  the pipeline (hk_module_compile, no cache) %.1f ms against compile + load with its "
           "kernel list %.1f ms: "
           "discovery adds %.1f%% of wall time\n", w / 1e3, (c + l) / 1e3,
           100.0 * (w - c - l) / (c + l));
    free(src);
    hk_context_destroy(ctx);
    return 0;
}
