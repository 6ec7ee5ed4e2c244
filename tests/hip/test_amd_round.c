/* The roundings of hipkit's ROCm 5 headers (src/core/backends/hip/include/
 * hip/hipkit_amd_round.h: double to half and to bfloat16 in one rounding),
 * run on the CPU backend, which has the same device functions, against an
 * exact reference computed here: scale by the format's quantum, round to
 * the nearest even integer with rint, scale back. Inputs are fresh random
 * doubles over each format's range, and values just above, at and below
 * the halfway points where rounding twice goes wrong. */
#include "../testutil.h"

#ifndef HK_AMD_HIP_INCLUDE
#define HK_AMD_HIP_INCLUDE "."
#endif

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "#include \"hipkit_amd_round.h\"\n"
    "extern \"C\" __global__ void to_bf16(const double *x, unsigned short *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = hkc_f2bf_bits(hkc_double_to_float_odd(x[i]));\n"
    "}\n"
    "extern \"C\" __global__ void to_f16(const double *x, __half *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = __float2half(hkc_double_to_float_odd(x[i]));\n"
    "}\n";

typedef struct format {
    const char *name;
    int digits;     /* significand bits, the implicit one included */
    int emin, emax; /* exponents of the smallest and largest normal numbers */
} format;

static const format bf16 = {"bf16", 8, -126, 127}, f16 = {"f16", 11, -14, 15};

/* The nearest value of format f to d, ties to even, as a double. */
static double reference(const format *f, double d)
{
    if (d != d || d == 0 || isinf(d))
        return d;
    double a = fabs(d);
    int ex;
    frexp(a, &ex);
    int e = ex - 1 < f->emin ? f->emin : ex - 1;
    double q = ldexp(1.0, e - (f->digits - 1));
    double r = rint(a / q) * q; /* a / q is exact: q is a power of two */
    double max = ldexp(2.0 - ldexp(1.0, 1 - f->digits), f->emax);
    if (r > max)
        r = INFINITY;
    return d < 0 ? -r : r;
}

static double random_in(const format *f)
{
    double m = 1.0 + (double)(tu_next() >> 11) / 9007199254740992.0; /* [1, 2), 52 random bits */
    int e = f->emin - 12 + (int)(tu_next() % (uint64_t)(f->emax - f->emin + 16));
    double d = ldexp(m, e);
    return tu_next() & 1 ? -d : d;
}

/* A value of format f plus half its quantum, nudged by `nudge` quanta. */
static double near_tie(const format *f, double nudge)
{
    double v = reference(f, random_in(f));
    if (isinf(v) || v == 0)
        v = ldexp(1.0, f->emin);
    int ex;
    frexp(fabs(v), &ex);
    int e = ex - 1 < f->emin ? f->emin : ex - 1;
    double q = ldexp(1.0, e - (f->digits - 1));
    double d = fabs(v) + q * (0.5 + nudge);
    return v < 0 ? -d : d;
}

static void check(hk_context *ctx, hk_module *m, const format *f, const char *kernel)
{
    enum { N = 60000 };
    double *x = malloc(N * sizeof *x);
    uint16_t *y = malloc(N * sizeof *y);
    for (int i = 0; i < N; i++) {
        switch (i % 4) {
        case 0: x[i] = random_in(f); break;
        case 1: x[i] = near_tie(f, 0); break;                    /* exact ties: to even */
        case 2: x[i] = near_tie(f, ldexp(1.0, -(int)(tu_next() % 40) - 20)); break; /* just above */
        default: x[i] = near_tie(f, -ldexp(1.0, -(int)(tu_next() % 40) - 20)); break;
        }
    }
    x[0] = 1e300;
    x[1] = -1e-300;
    x[2] = NAN;
    hk_kernel *k = NULL;
    hk_buffer *bx = NULL, *by = NULL;
    uint16_t poison = 0x7e7e;
    int r = hk_module_kernel(m, kernel, &k);
    if (!r)
        r = hk_buffer_alloc(ctx, N, HK_F64, HK_MEM_DEVICE, &bx);
    if (!r)
        r = hk_buffer_alloc(ctx, N, f == &bf16 ? HK_U16 : HK_F16, HK_MEM_DEVICE, &by);
    if (!r)
        r = hk_buffer_upload(bx, 0, x, N * sizeof *x);
    if (!r)
        r = hk_buffer_fill(by, &poison);
    hk_arg args[] = {hk_arg_buffer(bx), hk_arg_buffer(by), hk_arg_int(N)};
    hk_launch_config cfg = {.grid = {(N + 255) / 256, 1, 1}, .block = {256, 1, 1}};
    if (!r)
        r = hk_launch(k, &cfg, args, 3);
    if (!r)
        r = hk_synchronize(ctx);
    if (!r)
        r = hk_buffer_download(by, 0, y, N * sizeof *y);
    int bad = 0, first = -1;
    for (int i = 0; !r && i < N; i++) {
        double want = reference(f, x[i]);
        double got = f == &bf16 ? hk_bf16_to_f32(y[i]) : hk_f16_to_f32(y[i]);
        int same = (want != want && got != got) || (want == got && signbit(want) == signbit(got));
        if (!same && first < 0)
            first = i;
        bad += !same;
    }
    if (first >= 0)
        tap_diag("%s: first wrong: %.17g gave %.9g, want %.9g", f->name, x[first],
                 f == &bf16 ? hk_bf16_to_f32(y[first]) : hk_f16_to_f32(y[first]),
                 reference(f, x[first]));
    tap_ok(r == 0 && bad == 0, "double to %s in one rounding: %d of %d wrong (random, ties, near ties)%s%s",
           f->name, bad, N, r ? ": " : "", r ? hk_errmsg(ctx) : "");
    hk_buffer_free(bx);
    hk_buffer_free(by);
    free(x);
    free(y);
}

int main(void)
{
    tap_init();
    tu_seed();
    if (!tu_have_host_cxx()) {
        printf("1..0 # SKIP no C++ compiler for the CPU backend\n");
        return 0;
    }
    hk_context *ctx = NULL;
    hk_context_options opt;
    hk_context_options_defaults(&opt);
    opt.backend = "host";
    opt.quiet = 1;
    if (hk_context_create(&opt, &ctx) != 0) {
        printf("1..0 # SKIP no CPU backend: %s\n", hk_errmsg(NULL));
        return 0;
    }
    const char *dirs[] = {HK_AMD_HIP_INCLUDE};
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "amd_round";
    o.include_dirs = dirs;
    o.ninclude_dirs = 1;
    hk_module *m = NULL;
    int r = hk_module_compile(ctx, src, &o, &m);
    if (tap_ok(r == 0, "the AMD headers' roundings compile on the CPU backend (%s)", r ? hk_errmsg(ctx) : "ok")) {
        check(ctx, m, &bf16, "to_bf16");
        check(ctx, m, &f16, "to_f16");
    }
    hk_module_free(m);
    hk_context_destroy(ctx);
    return tap_done();
}
