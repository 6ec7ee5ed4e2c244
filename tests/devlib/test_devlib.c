/* Real kernel sources load unchanged (issue 17): a kernel that includes the
 * C and C++ standard headers (std_headers.hip) and a CUDA source as it is
 * (cuda_source.cu) run on the backend under test (host, or
 * HIPKIT_TEST_BACKEND=cuda/hip on a GPU) and must give the values written
 * beside each check; with the hip backend built they also compile with
 * hiprtc for gfx90a (no AMD GPU needed). HIP's device library has its own
 * test (test_devlib_funcs.c); NVRTC without a GPU is test_devlib_nvrtc.c. */
#include "../testutil.h"

#ifndef HK_DEVLIB_DIR
#define HK_DEVLIB_DIR "tests/devlib"
#endif

static hk_context *ctx;

static char *read_source(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", HK_DEVLIB_DIR, file);
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = calloc((size_t)n + 1, 1)) && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    if (f)
        fclose(f);
    if (!text)
        tap_ok(0, "read %s", path);
    return text;
}

/* Runs kernel `name` of `file` (compiled with the given -D/-I flags) on one
 * block of `threads` as name(double *out, const double *in); out has nout
 * elements, poisoned with NaN first. Returns 0 when it ran. */
static int run_out_in(const char *file, const char *name, const char *const *defines, int ndefines,
                      const double *in, int nin, double *out, int nout, unsigned threads)
{
    char *src = read_source(file);
    if (!src)
        return -1;
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = file;
    o.defines = defines;
    o.ndefines = ndefines;
    hk_module *m = NULL;
    hk_kernel *k = NULL;
    int r = hk_module_compile(ctx, src, &o, &m);
    free(src);
    if (r == 0)
        r = hk_module_kernel(m, name, &k);
    if (r != 0) {
        tap_diag("%s: %s", file, hk_errmsg(ctx));
        hk_module_free(m);
        return r;
    }
    hk_buffer *dout = NULL, *din = NULL;
    r = hk_buffer_alloc(ctx, (size_t)nout, HK_F64, HK_MEM_DEVICE, &dout);
    if (r == 0)
        r = hk_buffer_alloc(ctx, (size_t)nin, HK_F64, HK_MEM_DEVICE, &din);
    for (int i = 0; i < nout; i++)
        out[i] = NAN;
    if (r == 0)
        r = hk_buffer_upload(dout, 0, out, (size_t)nout * sizeof *out);
    if (r == 0)
        r = hk_buffer_upload(din, 0, in, (size_t)nin * sizeof *in);
    hk_launch_config cfg = tu_cfg(1, 1, 1, threads, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(dout), hk_arg_buffer(din)};
    if (r == 0)
        r = hk_launch(k, &cfg, args, 2);
    if (r == 0)
        r = hk_synchronize(ctx);
    if (r == 0)
        r = hk_buffer_download(dout, 0, out, (size_t)nout * sizeof *out);
    if (r != 0)
        tap_diag("%s: %s", name, hk_errmsg(ctx));
    if (din)
        hk_buffer_free(din);
    if (dout)
        hk_buffer_free(dout);
    hk_module_free(m);
    return r;
}

/* The values std_headers.hip writes, in its order. */
static const double std_want[] = {
    1.4142135623730951, 1.41421356f, 1024, 5, 8, 2, 1, 1, 1, 1, 1, 7, 10,
    9223372036854775807.0, 4294967295.0, 3.14159265358979323846, 1, 1, 8, 42, -1, 7,
};

static void test_std_headers(void)
{
    enum { N = sizeof std_want / sizeof std_want[0] };
    double out[N + 2], in[1] = {2.0};
    int r = run_out_in("std_headers.hip", "std_headers", NULL, 0, in, 1, out, N + 2, 1);
    if (!tap_ok(r == 0, "std_headers.hip (stdint, stddef, stdlib, math, limits, float, <limits>, "
                        "<type_traits>, assert) compiles and runs on %s", tu_backend()))
        return;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        /* exact but for the libraries' last-bit freedom in sqrt/exp/log */
        double tol = fabs(std_want[i]) * 4e-16;
        if (!(fabs(out[i] - std_want[i]) <= tol)) {
            tap_diag("out[%d] = %.17g, want %.17g", i, out[i], std_want[i]);
            bad++;
        }
    }
    tap_ok(bad == 0 && isnan(out[N]), "its %d values are right (%d wrong)", N, bad);
}

/* The sources compile with hiprtc for an AMD target, GPU or not. */
static void test_hiprtc(const char *file)
{
    char *src = read_source(file);
    if (!src)
        return;
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = file;
    void *code = NULL;
    size_t size = 0;
    int r = hk_compile_for_target(ctx, "hip", "gfx90a", src, &o, &code, &size, NULL);
    free(src);
    free(code);
    if (r == HK_ENOTFOUND || r == HK_EUNSUPPORTED) {
        tap_skip(file, "the hip backend is not built here");
        return;
    }
    if (!tap_ok(r == 0, "%s compiles with hiprtc for gfx90a", file))
        tap_diag("%s", hk_errmsg(ctx));
}

int main(void)
{
    tap_init();
    if (!tu_have_cxx()) {
        printf("1..0 # SKIP no C++ compiler for the host backend\n");
        return 0;
    }
    hk_context_options opt;
    hk_context_options_defaults(&opt);
    opt.backend = tu_backend();
    opt.quiet = 1;
    if (hk_context_create(&opt, &ctx) != 0) {
        printf("1..0 # SKIP no %s backend here: %s\n", tu_backend(), hk_errmsg(NULL));
        return 0;
    }
    test_std_headers();
    test_hiprtc("std_headers.hip");
    hk_context_destroy(ctx);
    return tap_done();
}
