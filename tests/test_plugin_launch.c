/* The plugin launch model of ABI 1.4 with tests/plugins/launch: per-row
 * rules (a block per row with shared memory by formula, a warp per row),
 * operand extents, explicit configurations from a host op, a plugin built
 * for ABI 1.3 still loading, and declared signatures checked against the
 * source. References are computed in double on the CPU from random data;
 * outputs are poisoned first and their tails must stay poisoned. */
#include <math.h>

#include <hipkit/plugin.h>

#include "testutil.h"

#define PAD 16

static hk_context *context(void)
{
    setenv("HIPKIT_PLUGIN_PATH", TEST_PLUGIN_DIR, 1);
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = tu_backend();
    o.quiet = 1;
    hk_context *ctx = NULL;
    if (hk_context_create(&o, &ctx) != 0) {
        printf("Bail out! cannot create a context: %s\n", hk_errmsg(NULL));
        exit(1);
    }
    return ctx;
}

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* An f32 buffer of n + PAD elements: with fill, n random values in [-2, 2)
 * (copied into v when given) and NaN after them; else NaN everywhere. */
static hk_buffer *fbuf(hk_context *ctx, size_t n, float *v, int fill)
{
    hk_buffer *b = NULL;
    if (hk_buffer_alloc(ctx, n + PAD, HK_F32, HK_MEM_MANAGED, &b) != 0)
        return NULL;
    float *h = malloc((n + PAD) * sizeof *h);
    for (size_t i = 0; i < n + PAD; i++)
        h[i] = NAN;
    for (size_t i = 0; fill && i < n; i++)
        h[i] = tu_uniform(-2, 2);
    if (v && fill)
        memcpy(v, h, n * sizeof *v);
    hk_buffer_upload(b, 0, h, (n + PAD) * sizeof *h);
    free(h);
    return b;
}

/* b's n values into out (n + PAD of them); whether the tail is still NaN. */
static int fetch(hk_context *ctx, hk_buffer *b, size_t n, float *out)
{
    hk_synchronize(ctx);
    hk_buffer_download(b, 0, out, (n + PAD) * sizeof *out);
    for (size_t i = n; i < n + PAD; i++)
        if (!isnan(out[i]))
            return 0;
    return 1;
}

/* Per-row mean and variance in double. */
static void row_ref(const float *x, size_t rows, size_t cols, double *mean, double *var)
{
    for (size_t r = 0; r < rows; r++) {
        double s = 0, q = 0;
        for (size_t c = 0; c < cols; c++)
            s += x[r * cols + c];
        mean[r] = s / (double)cols;
        for (size_t c = 0; c < cols; c++)
            q += (x[r * cols + c] - mean[r]) * (x[r * cols + c] - mean[r]);
        var[r] = q / (double)cols;
    }
}

static int close_to(double got, double want, double tol)
{
    return fabs(got - want) <= tol * (1 + fabs(want));
}

/* row_stats_f32: one block per row, blockDim floats of shared memory; block
 * from the rule (cfg NULL) or from the caller (block.x, grid left 0). */
static void test_row_stats(hk_context *ctx, size_t rows, size_t cols, uint32_t block)
{
    float *x = malloc(rows * cols * sizeof *x), *m = malloc((rows + PAD) * sizeof *m),
          *v = malloc((rows + PAD) * sizeof *v);
    double *rm = malloc(rows * sizeof *rm), *rv = malloc(rows * sizeof *rv);
    hk_buffer *bx = fbuf(ctx, rows * cols, x, 1), *bm = fbuf(ctx, rows, NULL, 0),
              *bv = fbuf(ctx, rows, NULL, 0);
    hk_arg a[5] = {hk_arg_buffer(bx), hk_arg_buffer(bm), hk_arg_buffer(bv),
                   hk_arg_int((int64_t)rows), hk_arg_int((int64_t)cols)};
    hk_launch_config c = tu_cfg(0, 1, 1, block, 1, 1, 0);
    int r = hk_plugin_launch(ctx, "stats", "row_stats_f32", block ? &c : NULL, a, 5);
    int tails = fetch(ctx, bm, rows, m) & fetch(ctx, bv, rows, v);
    row_ref(x, rows, cols, rm, rv);
    int ok = r == 0 && tails;
    for (size_t i = 0; ok && i < rows; i++)
        ok = close_to(m[i], rm[i], 1e-5) && close_to(v[i], rv[i], 1e-4);
    tap_ok(ok, "row_stats_f32 %zux%zu, block %s: a block per row, shared = blockDim floats (%s)",
           rows, cols, block ? "96 from the caller" : "from the rule", r ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(bx);
    hk_buffer_free(bm);
    hk_buffer_free(bv);
    free(x), free(m), free(v), free(rm), free(rv);
}

static void test_row_max(hk_context *ctx, size_t rows, size_t cols)
{
    float *x = malloc(rows * cols * sizeof *x), *o = malloc((rows + PAD) * sizeof *o);
    hk_buffer *bx = fbuf(ctx, rows * cols, x, 1), *bo = fbuf(ctx, rows, NULL, 0);
    hk_arg a[4] = {hk_arg_buffer(bx), hk_arg_buffer(bo), hk_arg_int((int64_t)rows),
                   hk_arg_int((int64_t)cols)};
    int r = hk_plugin_launch(ctx, "stats", "row_max_f32", NULL, a, 4);
    int ok = r == 0 && fetch(ctx, bo, rows, o);
    for (size_t i = 0; ok && i < rows; i++) {
        double want = -INFINITY;
        for (size_t c = 0; c < cols; c++)
            want = fmax(want, x[i * cols + c]);
        ok = o[i] == (float)want;
    }
    tap_ok(ok, "row_max_f32 %zux%zu: a warp per row (%s)", rows, cols, r ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(bx);
    hk_buffer_free(bo);
    free(x), free(o);
}

/* The standardize op: row_stats then row_apply over an explicit 2-D grid. */
static void test_standardize(hk_context *ctx, size_t rows, size_t cols)
{
    size_t n = rows * cols;
    float *x = malloc(n * sizeof *x), *y = malloc((n + PAD) * sizeof *y);
    double *rm = malloc(rows * sizeof *rm), *rv = malloc(rows * sizeof *rv);
    hk_buffer *bx = fbuf(ctx, n, x, 1), *bm = fbuf(ctx, rows, NULL, 0),
              *bv = fbuf(ctx, rows, NULL, 0), *by = fbuf(ctx, n, NULL, 0);
    hk_arg a[6] = {hk_arg_buffer(bx), hk_arg_buffer(bm), hk_arg_buffer(bv), hk_arg_buffer(by),
                   hk_arg_int((int64_t)rows), hk_arg_int((int64_t)cols)};
    int r = hk_plugin_call_op(ctx, "stats", "standardize", a, 6);
    row_ref(x, rows, cols, rm, rv);
    int ok = r == 0 && fetch(ctx, by, n, y);
    for (size_t i = 0; ok && i < n; i++)
        if (!(ok = close_to(y[i], (x[i] - rm[i / cols]) / sqrt(rv[i / cols] + 1e-5), 1e-4)))
            tap_diag("y[%zu] = %g, want %g", i, y[i], (x[i] - rm[i / cols]) / sqrt(rv[i / cols] + 1e-5));
    tap_ok(ok, "standardize %zux%zu: a host op chaining two explicit-configuration launches (%s)",
           rows, cols, r ? hk_errmsg(ctx) : "ok");
    /* a short per-row operand is named with its extent, once prefixed */
    hk_buffer *bs = NULL;
    hk_buffer_alloc(ctx, rows - 1, HK_F32, HK_MEM_MANAGED, &bs);
    a[1] = hk_arg_buffer(bs);
    r = hk_plugin_call_op(ctx, "stats", "standardize", a, 6);
    const char *e = hk_errmsg(ctx);
    tap_ok(r == HK_EARG && has(e, "operand mean") && has(e, "its extent rows") &&
               strstr(e, "stats.standardize") == e && !has(e + 1, "stats.standardize"),
           "a per-row operand shorter than rows is named, the op's name said once: %s", e);
    hk_buffer_free(bs);
    hk_buffer_free(bx);
    hk_buffer_free(bm);
    hk_buffer_free(bv);
    hk_buffer_free(by);
    free(x), free(y), free(rm), free(rv);
}

static void test_explicit(hk_context *ctx)
{
    size_t rows = 3, cols = 5;
    hk_buffer *bx = fbuf(ctx, rows * cols, NULL, 1), *bm = fbuf(ctx, rows, NULL, 1),
              *bv = fbuf(ctx, rows, NULL, 1), *by = fbuf(ctx, rows * cols, NULL, 0);
    hk_arg a[6] = {hk_arg_buffer(bx), hk_arg_buffer(bm), hk_arg_buffer(bv), hk_arg_buffer(by),
                   hk_arg_int((int64_t)rows), hk_arg_int((int64_t)cols + 10)};
    int r = hk_plugin_launch(ctx, "stats", "row_apply_f32", NULL, a, 6);
    tap_ok(r == HK_ELAUNCH && has(hk_errmsg(ctx), "give grid and block"),
           "an explicit kernel without a configuration is refused: %s", hk_errmsg(ctx));
    hk_launch_config c = tu_cfg(1, 1, 1, 8, 8, 1, 0);
    r = hk_plugin_launch(ctx, "stats", "row_apply_f32", &c, a, 6);
    tap_ok(r == HK_EARG && has(hk_errmsg(ctx), "operand x") && has(hk_errmsg(ctx), "its extent rows x cols is 45"),
           "an explicit kernel's extents are checked too: %s", hk_errmsg(ctx));
    /* ABI 1.9: hk.null for an operand the rule does not mark may_be_null */
    a[5] = hk_arg_int((int64_t)cols);
    for (int i = 0; i < 4; i++) {
        hk_arg keep = a[i];
        a[i] = hk_arg_null();
        r = hk_plugin_launch(ctx, "stats", "row_apply_f32", &c, a, 6);
        char want[64];
        snprintf(want, sizeof want, "(argument %d) is hk.null", i + 1);
        tap_ok(r == HK_EARG && has(hk_errmsg(ctx), want) && has(hk_errmsg(ctx), "needs a buffer"),
               "hk.null for operand %d is refused before the launch: %s", i + 1, hk_errmsg(ctx));
        a[i] = keep;
    }
    r = hk_plugin_launch(ctx, "stats", "row_apply_f32", &c, a, 6);
    tap_ok(r == 0, "with every operand a buffer it launches: %s", r ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(bx);
    hk_buffer_free(bm);
    hk_buffer_free(bv);
    hk_buffer_free(by);
}

/* oldminor exports ABI 1.3 and uses its table only. */
static void test_old_minor(hk_context *ctx)
{
    int i = hk_plugin_find(ctx, "oldminor");
    hk_plugin_info p;
    tap_ok(i >= 0 && hk_plugin_get(ctx, i, &p) == 0 && !*p.error,
           "a plugin built for ABI 1.3 loads on ABI %d.%d", HK_ABI_VERSION_MAJOR, HK_ABI_VERSION_MINOR);
    size_t n = 1001;
    float *x = malloc(n * sizeof *x), *y = malloc((n + PAD) * sizeof *y);
    hk_buffer *bx = fbuf(ctx, n, x, 1), *by = NULL;
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_MANAGED, &by);
    hk_arg a[2] = {hk_arg_buffer(bx), hk_arg_buffer(by)};
    int r = hk_plugin_call_op(ctx, "oldminor", "four", a, 2);
    hk_synchronize(ctx);
    hk_buffer_download(by, 0, y, n * sizeof *y);
    int ok = r == 0;
    for (size_t k = 0; ok && k < n; k++)
        ok = y[k] == 4 * x[k];
    tap_ok(ok, "its kernel and its op (the 1.3 host table) run: %s", r ? hk_errmsg(ctx) : "ok");
    /* built before 1.9: a NULL operand is the kernel's business, as it was */
    hk_arg z[3] = {hk_arg_null(), hk_arg_null(), hk_arg_int(0)};
    r = hk_plugin_launch(ctx, "oldminor", "twice_f32", NULL, z, 3);
    tap_ok(r == 0, "its kernel still takes hk.null operands (n = 0): %s", r ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(bx);
    hk_buffer_free(by);
    free(x), free(y);
}

/* badrule's init tries four wrong registrations; each reason is kept. */
static void test_bad_rules(hk_context *ctx)
{
    const char *e = "(absent)";
    for (int i = 0; i < hk_plugin_count(ctx); i++) {
        hk_plugin_info p;
        if (hk_plugin_get(ctx, i, &p) == 0 && !strcmp(p.name, "badrule"))
            e = p.error;
    }
    tap_ok(has(e, "6 of 6 refused"), "badrule: every wrong registration is refused: %s", e);
    tap_ok(has(e, "geometry kind 3 needs add_kernel_rule"), "a row kind through add_kernel is refused");
    tap_ok(has(e, "extent 1 names parameter 2, not a pointer"), "an extent on a scalar is refused");
    tap_ok(has(e, "extent factor parameter 0 (const float * x) is not an integer"),
           "an extent factor that is a pointer is refused");
    tap_ok(has(e, "its size (8) is under"), "a rule too short to hold its geometry is refused");
    tap_ok(has(e, "may_be_null bit 2: parameter 2 (int rows) is not a pointer"),
           "a may_be_null bit on a scalar parameter is refused");
    tap_ok(has(e, "may_be_null bit 9: the kernel has 4 parameters"),
           "a may_be_null bit past the last parameter is refused");
    /* a warp-per-row block under one warp */
    hk_buffer *x = fbuf(ctx, 8, NULL, 1), *o = fbuf(ctx, 2, NULL, 0);
    hk_arg a[4] = {hk_arg_buffer(x), hk_arg_buffer(o), hk_arg_int(2), hk_arg_int(4)};
    hk_launch_config c = tu_cfg(0, 1, 1, 1, 1, 1, 0);
    int r = hk_plugin_launch(ctx, "stats", "row_max_f32", &c, a, 4);
    tap_ok(r == HK_ELAUNCH && has(hk_errmsg(ctx), "at least one warp"),
           "a warp-per-row launch with a block under a warp is refused: %s", hk_errmsg(ctx));
    hk_buffer_free(x);
    hk_buffer_free(o);
}

static void test_signature_check(hk_context *ctx)
{
    hk_buffer *b = fbuf(ctx, 8, NULL, 1);
    hk_arg a[4] = {hk_arg_buffer(b), hk_arg_buffer(b), hk_arg_float(2), hk_arg_uint(8)};
    int r = hk_plugin_launch(ctx, "badsig", "scale_f32", NULL, a, 4);
    const char *e = hk_errmsg(ctx);
    tap_ok(r == HK_EARG && has(e, "plugin 'badsig'") && has(e, "scale_f32") && has(e, "parameter 1 'x'") &&
               has(e, "declared 'const double *'") && has(e, "has 'const float *'"),
           "a pointer type the source contradicts is refused at first compile: %s", e);
    r = hk_plugin_check_kernel(ctx, "badsig", "scale_f32");
    tap_ok(r == HK_EARG && has(hk_errmsg(ctx), "'const float *'"), "hk_plugin_check_kernel finds it too");
    tap_ok(hk_plugin_check_kernel(ctx, "badsig", "ok_f32") == 0, "the family's right kernel passes");
    int all = 0, nk = 0;
    hk_plugin_info p;
    int fi = hk_plugin_find(ctx, "stats");
    if (fi >= 0 && hk_plugin_get(ctx, fi, &p) == 0)
        for (int k = 0; k < p.nkernels; k++) {
            hk_plugin_kernel_info ki;
            hk_plugin_kernel_get(ctx, fi, k, &ki);
            all |= hk_plugin_check_kernel(ctx, "stats", ki.name);
            nk++;
        }
    tap_ok(nk == 6 && all == 0, "every kernel of stats (macro-made ones included) checks: %s",
           all ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(b);
}

int main(void)
{
    tap_init();
    tu_seed();
    if (tu_on_host() && !tu_have_cxx()) {
        tap_skip("plugin launch", "no C++ compiler for the host backend");
        printf("1..1\n");
        return 0;
    }
    hk_context *ctx = context();
    if (hk_plugin_find(ctx, "stats") < 0) {
        printf("Bail out! the stats test plugin did not load: %s\n", hk_errmsg(ctx));
        return 1;
    }
    test_row_stats(ctx, 37, 1000, 0);
    test_row_stats(ctx, 5, 3, 0);
    test_row_stats(ctx, 19, 301, 96);
    test_row_max(ctx, 37, 333);
    test_row_max(ctx, 3, 1);
    test_standardize(ctx, 29, 77);
    test_explicit(ctx);
    test_old_minor(ctx);
    test_signature_check(ctx);
    test_bad_rules(ctx);
    hk_context_destroy(ctx);
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
