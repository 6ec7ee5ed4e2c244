/* HIP's device library on every backend (issue 17 item 7).
 *
 * tests/devlib/hip_device_functions.txt lists every device function HIP's
 * own headers declare (tools/devlib_list.py). From it this test generates:
 *
 * - a coverage probe: for each overload, a constexpr SFINAE check that the
 *   name can be called with exactly those argument types, gathered into a
 *   byte table behind the marker "HKCOV:". The table is run on the backend
 *   under test (host by default) and read back; for cuda it is compiled for
 *   sm_90 through the public API (no GPU needed) and read out of the cubin.
 *   Every overload a backend lacks must be named, with its reason, in
 *   hip_device_functions_missing.txt, and nothing named there may be present;
 * - value checks by signature class (half and half2 math, half arithmetic,
 *   float and double math with a C library counterpart): kernels calling the
 *   functions on random inputs, compared with a CPU reference in double.
 *
 * It prints "# coverage host N of M, cuda N of M". */
#include "../testutil.h"

#ifndef HK_DEVLIB_DIR
#define HK_DEVLIB_DIR "tests/devlib"
#endif

#include "devlib_funcs.h"

static hk_context *ctx;

/* ------------------------------------------------------------------ coverage */

/* Runs the probe on the backend under test; fills found[]. */
static int coverage_run(const fn_list *l, char *found)
{
    char *src = probe_source(l);
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "devlib_cov.hip";
    hk_module *m = NULL;
    hk_kernel *k = NULL;
    int r = hk_module_compile(ctx, src, &o, &m);
    free(src);
    if (r == 0)
        r = hk_module_kernel(m, "devlib_cov", &k);
    hk_buffer *out = NULL;
    int n = l->n;
    if (r == 0)
        r = hk_buffer_alloc(ctx, (size_t)n, HK_I32, HK_MEM_DEVICE, &out);
    hk_launch_config cfg = tu_cfg((uint32_t)(n + 63) / 64, 1, 1, 64, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(out), hk_arg_int(n)};
    if (r == 0)
        r = hk_launch(k, &cfg, args, 2);
    if (r == 0)
        r = hk_synchronize(ctx);
    int *v = calloc((size_t)n, sizeof *v);
    if (r == 0)
        r = hk_buffer_download(out, 0, v, (size_t)n * sizeof *v);
    for (int i = 0; r == 0 && i < n; i++)
        found[i] = v[i] == '1';
    if (r != 0)
        tap_diag("coverage probe on %s: %s", tu_backend(), hk_errmsg(ctx));
    free(v);
    if (out)
        hk_buffer_free(out);
    hk_module_free(m);
    return r;
}

/* Compiles the probe for cuda sm_90 and reads the table out of the cubin. */
static int coverage_cuda(const fn_list *l, char *found)
{
    char *src = probe_source(l);
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "devlib_cov.hip";
    void *code = NULL;
    size_t size = 0;
    hk_code_origin origin;
    int r = hk_compile_for_target(ctx, "cuda", "sm_90", src, &o, &code, &size, &origin);
    free(src);
    if (r != 0) {
        tap_diag("cuda: %s", hk_errmsg(ctx));
        return r;
    }
    const char *p = memmem_find(code, size, "HKCOV:", 6);
    if (!p || (size_t)(p - (const char *)code) + 6 + (size_t)l->n > size) {
        free(code);
        return -1;
    }
    for (int i = 0; i < l->n; i++)
        found[i] = p[6 + i] == '1';
    free(code);
    return 0;
}

/* Every absent overload of l->fn[from..to) is named in the missing file
 * for that backend, and every one named there is absent. */
static void coverage_check(const fn_list *l, int from, int to, const missing_list *ml,
                           const char *backend, const char *found, int *covered)
{
    int bad = 0, n = 0;
    for (int i = from; i < to; i++) {
        const char *why = missing_reason(ml, backend, l->fn[i].sig);
        n += found[i] != 0;
        if (!found[i] && !why) {
            tap_diag("%s lacks %s (not in hip_device_functions_missing.txt)", backend, l->fn[i].sig);
            bad++;
        } else if (found[i] && why) {
            tap_diag("%s has %s, listed as missing (%s)", backend, l->fn[i].sig, why);
            bad++;
        }
    }
    *covered = n;
    tap_ok(bad == 0, "%s: %d of %d %s present, every absent one named with its reason", backend, n,
           to - from, from ? "of CUDA's SIMD intrinsics" : "HIP device function overloads");
}

/* ------------------------------------------------------ half_extras.hip */

static char *read_text(const char *file)
{
    FILE *f = devlib_open(file);
    char *t = NULL;
    long n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (t = calloc((size_t)n + 1, 1)) && fread(t, 1, (size_t)n, f) != (size_t)n) {
        free(t);
        t = NULL;
    }
    if (f)
        fclose(f);
    return t;
}

/* Runs kernel(out, in) of file on one block of 64 and checks its values
 * (NaN: any NaN); with cuda built, compiles the file for sm_90 too. */
static void test_extras(const char *file, const char *what, const double *in, int nin,
                        const double *want, int n, int have_cuda)
{
    char *src = read_text(file), kernel[64];
    if (!tap_ok(src != NULL, "read %s", file))
        return;
    snprintf(kernel, sizeof kernel, "%.*s", (int)(strchr(file, '.') - file), file);
    hk_module *m = NULL;
    hk_kernel *k = tu_kernel(ctx, &m, src, kernel);
    hk_buffer *dout = NULL, *din = NULL;
    double *out = malloc((size_t)n * sizeof *out);
    int r = k ? 0 : -1;
    for (int i = 0; i < n; i++)
        out[i] = -12345;
    if (r == 0)
        r = hk_buffer_alloc(ctx, (size_t)n, HK_F64, HK_MEM_DEVICE, &dout);
    if (r == 0)
        r = hk_buffer_alloc(ctx, (size_t)nin, HK_F64, HK_MEM_DEVICE, &din);
    if (r == 0)
        r = hk_buffer_upload(din, 0, in, (size_t)nin * sizeof *in);
    if (r == 0)
        r = hk_buffer_upload(dout, 0, out, (size_t)n * sizeof *out);
    hk_launch_config cfg = tu_cfg(1, 1, 1, 64, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(dout), hk_arg_buffer(din)};
    if (r == 0)
        r = hk_launch(k, &cfg, args, 2);
    if (r == 0)
        r = hk_synchronize(ctx);
    if (r == 0)
        r = hk_buffer_download(dout, 0, out, (size_t)n * sizeof *out);
    int bad = 0;
    for (int i = 0; r == 0 && i < n; i++)
        if (isnan(want[i]) ? !isnan(out[i]) : fabs(out[i] - want[i]) > 1e-6 * fabs(want[i])) {
            tap_diag("%s out[%d] = %.17g, want %.17g", file, i, out[i], want[i]);
            bad++;
        }
    tap_ok(r == 0 && bad == 0, "%s on %s: %s", file, tu_backend(), what);
    if (din)
        hk_buffer_free(din);
    if (dout)
        hk_buffer_free(dout);
    hk_module_free(m);
    free(out);
    if (have_cuda) {
        hk_compile_options o;
        hk_compile_options_defaults(&o);
        o.name = file;
        void *code = NULL;
        size_t size = 0;
        hk_code_origin origin;
        r = hk_compile_for_target(ctx, "cuda", "sm_90", src, &o, &code, &size, &origin);
        if (!tap_ok(r == 0, "%s compiles for cuda sm_90", file))
            tap_diag("%s", hk_errmsg(ctx));
        free(code);
    }
    free(src);
}

static void test_half_extras(int have_cuda)
{
    static const double in[4] = {1.5, 2.25, 3.5, 4};
    static const double want[14] = {2.25, 2.25, 3.5, 3.5, 4, 32, 2.25, 1.5, NAN, 1.5, 1.5, 1, 0.5,
                                    0.8413447460685429};
    test_extras("half_extras.hip", "HIP's __half conversions in overload resolution, "
                "atomicAdd(__half *), __hmax/__hmin/__hmax_nan, bfloat16 math, normcdf",
                in, 4, want, 14, have_cuda);
}

static void test_bits_extras(int have_cuda)
{
    static const double in[1] = {1 + 0x1p-30};
    static const double want[20] = {0, 1, 1, 4, -1, 2, -1, 2, 15, 15, 0xf0000000000p0, 1, 2147483647,
                                    1800, 18, 0x1p64 - 0x1p40, 0x1p64, 1, 1 + 0x1p-23, 1};
    test_extras("bits_extras.hip", "__mbcnt, __ballot64, __lanemask_*, __fns, 64-bit bit fields, "
                "amd_mixed_dot, directed conversions at their edges", in, 1, want, 20, have_cuda);
}

/* ---------------------------------------------------------------- main */

int main(void)
{
    tap_init();
    if (!tu_have_cxx()) {
        tap_skip("devlib functions", "no C++ compiler for the host backend");
        return tap_done();
    }
    tu_seed();
    ctx = tu_context();
    fn_list l = {0};
    missing_list ml;
    int rl = fn_list_read("hip_device_functions.txt", &l);
    const int nhip = l.n;
    rl |= fn_list_read("cuda_simd_functions.txt", &l);
    if (!tap_ok(rl == 0 && nhip > 500 && l.n - nhip > 50,
                "the generated lists read: %d overloads of HIP's device functions, %d of CUDA's "
                "SIMD intrinsics", nhip, l.n - nhip) ||
        !tap_ok(missing_read("hip_device_functions_missing.txt", &ml) == 0,
                "the list of missing functions reads")) {
        hk_context_destroy(ctx);
        return tap_done();
    }
    char *found = calloc((size_t)l.n, 1), *found_cuda = calloc((size_t)l.n, 1);
    int host_n = -1, cuda_n = -1, host_v = -1, cuda_v = -1;
    if (tap_ok(coverage_run(&l, found) == 0, "coverage probe compiles and runs on %s", tu_backend())) {
        coverage_check(&l, 0, nhip, &ml, tu_backend(), found, &host_n);
        coverage_check(&l, nhip, l.n, &ml, tu_backend(), found, &host_v);
    }
    /* the cuda entry is listed without its module too: its toolchain says
     * whether the module loaded and NVRTC can compile for a named target */
    int have_cuda = 0;
    for (int i = 0; i < hk_backend_count(ctx); i++) {
        hk_backend_info bi;
        if (hk_backend_get(ctx, i, &bi) == 0 && !strcmp(bi.name, "cuda") && bi.toolchain && *bi.toolchain)
            have_cuda = 1;
    }
    if (!have_cuda) {
        tap_skip("cuda coverage", "the cuda backend module is not built or NVRTC is missing");
    } else if (tap_ok(coverage_cuda(&l, found_cuda) == 0, "coverage probe compiles for cuda sm_90")) {
        coverage_check(&l, 0, nhip, &ml, "cuda", found_cuda, &cuda_n);
        coverage_check(&l, nhip, l.n, &ml, "cuda", found_cuda, &cuda_v);
    }
    printf("# coverage %s %d of %d, cuda %d of %d\n", tu_backend(), host_n, nhip, cuda_n, nhip);
    printf("# coverage of CUDA's SIMD intrinsics: %s %d of %d, cuda %d of %d\n", tu_backend(), host_v,
           l.n - nhip, cuda_v, l.n - nhip);
    values_run(ctx, &l, found);
    if (cuda_n >= 0)
        values_compile_cuda(ctx, &l, found_cuda);
    test_half_extras(have_cuda);
    test_bits_extras(have_cuda);
    free(found);
    free(found_cuda);
    missing_free(&ml);
    fn_list_free(&l);
    hk_context_destroy(ctx);
    return tap_done();
}
