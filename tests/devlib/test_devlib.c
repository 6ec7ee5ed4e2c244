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

/* A user's short macro names: hipkit's headers use reserved names only, so
 * none of these reaches them (on cuda, defines reach NVRTC after its own
 * built-in header, whose templates name a parameter T). The lowercase ones
 * are for the host backend only: NVIDIA's cuda_fp16.hpp names its
 * parameters a, b... */
static const char *const user_macros[] = {
    "T=float", "N=8", "A=1", "B=2", "C=3", "D=4", "E=5", "F=6", "H=7", "I=8", "K=9",
    "S=10", "V=11", "P=12", "M=13", "W=14", "TILE=16", "BLOCK=256",
};
static const char *const user_macros_lower[] = {
    "n=11", "a=12", "p=13", "width=14", "src=15", "mask=16", "var=17", "pred=18", "limit=19",
    "rt=20", "loop=21", "msg=24", /* not what or offset: libstdc++ has members of those names */
};

static void test_cuda_source(void)
{
    const int warp = strcmp(tu_backend(), "cuda") ? 64 : 32;
    double in[64], out[7], sum = 0;
    for (int i = 0; i < warp; i++)
        sum += in[i] = i + 1;
    const int arch = strcmp(tu_backend(), "cuda") ? 0 : 1;
    const double want[5] = {sum, 63.75, 3.140625, 8, arch};
    for (int pass = 0; pass < 3; pass++) {
        const char *const *defs = pass == 0 ? NULL : pass == 1 ? user_macros : user_macros_lower;
        int ndefs = pass == 0 ? 0
                    : pass == 1 ? (int)(sizeof user_macros / sizeof *user_macros)
                                : (int)(sizeof user_macros_lower / sizeof *user_macros_lower);
        const char *what = pass == 0 ? "" : pass == 1 ? " with -DT=float -DN=8 -DA=1 ..."
                                                     : " with -Dn=11 -Da=12 -Dwidth=14 ...";
        if (pass == 2 && !tu_on_host()) {
            tap_skip("cuda_source.cu with lowercase user macros",
                     "the vendor's own fp16 headers use those names");
            continue;
        }
        int r = run_out_in("cuda_source.cu", "cuda_source", defs, ndefs, in, warp, out, 7,
                           (unsigned)warp);
        if (!tap_ok(r == 0, "cuda_source.cu (cuda_runtime.h, cuda_fp16.h, cuda_bf16.h, "
                            "__shfl_xor_sync, __CUDA_ARCH__) runs unchanged%s", what))
            continue;
        int bad = 0;
        for (int i = 0; i < 5; i++)
            if (out[i] != want[i]) {
                tap_diag("out[%d] = %.17g, want %.17g", i, out[i], want[i]);
                bad++;
            }
        tap_ok(bad == 0, "its warp sum, __half2, __nv_bfloat16 and arch values are right%s", what);
    }
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
    test_cuda_source();
    test_hiprtc("cuda_source.cu");
    hk_context_destroy(ctx);
    return tap_done();
}
