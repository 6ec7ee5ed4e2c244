/* The reduce family: per-row reductions (sum min max mean argmin argmax)
 * and row normalisations (softmax log_softmax rmsnorm layernorm) over a
 * contiguous [rows, cols] view, one block per row
 * (kernels/reduce/reduce.hip, embedded at build time). The host ops
 * hk.ops.reduce.OP(out, x, cols, ...) take rows from the buffers' lengths
 * and pick the kernel from x's dtype (docs/families/reduce.md). */
#include <hipkit/plugin.h>

#include <stdio.h>
#include <string.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_reduce_sources[];
extern const hk_plugin_image hk_reduce_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(reduce);
HK_PLUGIN_EXPORT int hk_plugin_reduce_init(const hk_plugin_api *api);

static const struct {
    const char *name, *ctype, *note;
    int integer;
} types[] = {
    {"f32", "float", "f32", 0},
    {"f64", "double", "f64", 0},
    {"f16", "__half", "f16 storage, f32 arithmetic", 0},
    {"bf16", "__hip_bfloat16", "bf16 storage, f32 arithmetic", 0},
    {"i32", "int", "i32", 1},
    {"u32", "unsigned int", "u32", 1},
};

/* The reductions: out holds one value per row. */
static const struct {
    const char *name, *out, *what;
    int floats_only;
} reductions[] = {
    {"sum", NULL, "out[r] = sum of row r (integers wrap)", 0},
    {"min", NULL, "out[r] = minimum of row r (NaN if the row holds one)", 0},
    {"max", NULL, "out[r] = maximum of row r (NaN if the row holds one)", 0},
    {"mean", NULL, "out[r] = mean of row r", 1},
    {"argmin", "long long", "out[r] = column of row r's minimum (first NaN, else first minimum)", 0},
    {"argmax", "long long", "out[r] = column of row r's maximum (first NaN, else first maximum)", 0},
};

/* The row normalisations (float types): out has x's shape. */
static const struct {
    const char *name, *params, *what;
    int nweights; /* w (and b) hold cols values: parameters 1 (and 2) */
} rowwise[] = {
    {"softmax", "const %s *x, %s *out, int rows, int cols",
     "out = exp(x - max) / sum(exp(x - max)) per row", 0},
    {"log_softmax", "const %s *x, %s *out, int rows, int cols",
     "out = x - max - log(sum(exp(x - max))) per row", 0},
    {"rmsnorm", "const %s *x, const %s *w, %s *out, int rows, int cols, float eps",
     "out = x * rsqrt(mean(x^2) + eps) * w per row; w holds cols", 1},
    {"layernorm", "const %s *x, const %s *w, const %s *b, %s *out, int rows, int cols, float eps",
     "out = (x - mean) * rsqrt(var + eps) * w + b per row (biased var); w, b hold cols; b NULL: no bias",
     2},
};

/* Launches OP_<dtype of x> over rows = #x / cols rows. args are the
 * kernel's, with the rows and cols slots (rows_at, rows_at + 1) filled in
 * here. with_ints: the op has i32 and u32 kernels. */
static int launch_rows(const hk_plugin_host *host, const hk_plugin_call *call, const char *op,
                       int with_ints, const void *x, long long cols, hk_plugin_arg *args, int nargs,
                       int rows_at)
{
    if (cols < 1 || cols > 0x7fffffff)
        return host->fail(call, "cols must be an integer in [1, 2^31); got %lld", cols);
    size_t n = host->length(call, x);
    if (n % (size_t)cols != 0)
        return host->fail(call, "x has %zu elements, not a whole number of rows of %lld", n, cols);
    if (n / (size_t)cols > 0x7fffffff)
        return host->fail(call, "x has %zu rows; at most 2^31 - 1", n / (size_t)cols);
    const char *dt = host->dtype(call, x);
    static const char *const floats[] = {"f32", "f64", "f16", "bf16"}, *const ints[] = {"i32", "u32"};
    int known = 0;
    for (int i = 0; dt && i < 4; i++)
        known |= !strcmp(dt, floats[i]) || (i < 2 && with_ints && !strcmp(dt, ints[i]));
    if (!known)
        return host->fail(call, "x is %s; %s takes f32, f64, f16, bf16%s", dt ? dt : "?", op,
                          with_ints ? ", i32, u32" : "");
    char kernel[64];
    snprintf(kernel, sizeof kernel, "%s_%s", op, dt ? dt : "?");
    args[rows_at].kind = HK_PLUGIN_ARG_INT;
    args[rows_at].v.i = (long long)(n / (size_t)cols);
    args[rows_at + 1].kind = HK_PLUGIN_ARG_INT;
    args[rows_at + 1].v.i = cols;
    return host->launch(call, kernel, args, nargs);
}

static int is_buffer(const hk_plugin_arg *a) { return a->kind == HK_PLUGIN_ARG_BUFFER; }
static int is_number(const hk_plugin_arg *a)
{
    return a->kind == HK_PLUGIN_ARG_INT || a->kind == HK_PLUGIN_ARG_FLOAT;
}
static double number(const hk_plugin_arg *a)
{
    return a->kind == HK_PLUGIN_ARG_INT ? (double)a->v.i : a->v.f;
}

/* OP(out, x, cols): a reduction, softmax or log_softmax. */
static int by_cols(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs, const char *op)
{
    if (nargs != 3 || !is_buffer(&args[0]) || !is_buffer(&args[1]) || args[2].kind != HK_PLUGIN_ARG_INT)
        return host->fail(call, "expects buffers out and x and an integer cols; got %d arguments", nargs);
    hk_plugin_arg a[4] = {args[1], args[0]};
    int with_ints = strcmp(op, "mean") && strcmp(op, "softmax") && strcmp(op, "log_softmax");
    return launch_rows(host, call, op, with_ints, args[1].v.buf, args[2].v.i, a, 4, 2);
}

/* rmsnorm(out, x, w, eps): cols = #w. */
static int op_rmsnorm(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                      int nargs)
{
    if (nargs != 4 || !is_buffer(&args[0]) || !is_buffer(&args[1]) || !is_buffer(&args[2]) ||
        !is_number(&args[3]))
        return host->fail(call, "expects buffers out, x and w and a number eps; got %d arguments", nargs);
    hk_plugin_arg a[6] = {args[1], args[2], args[0]};
    a[5].kind = HK_PLUGIN_ARG_FLOAT;
    a[5].v.f = number(&args[3]);
    return launch_rows(host, call, "rmsnorm", 0, args[1].v.buf,
                       (long long)host->length(call, args[2].v.buf), a, 6, 3);
}

/* layernorm(out, x, w, b, eps) or layernorm(out, x, w, eps): cols = #w. */
static int op_layernorm(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                        int nargs)
{
    int bias = nargs == 5;
    if ((nargs != 4 && nargs != 5) || !is_buffer(&args[0]) || !is_buffer(&args[1]) ||
        !is_buffer(&args[2]) || (bias && !is_buffer(&args[3])) || !is_number(&args[nargs - 1]))
        return host->fail(call, "expects buffers out, x, w (and b) and a number eps; got %d arguments",
                          nargs);
    hk_plugin_arg a[7] = {args[1], args[2], {HK_PLUGIN_ARG_NULL, {0}}, args[0]};
    if (bias)
        a[2] = args[3];
    a[6].kind = HK_PLUGIN_ARG_FLOAT;
    a[6].v.f = number(&args[nargs - 1]);
    return launch_rows(host, call, "layernorm", 0, args[1].v.buf,
                       (long long)host->length(call, args[2].v.buf), a, 7, 4);
}

#define BY_COLS(op)                                                                              \
    static int op_##op(const hk_plugin_host *host, const hk_plugin_call *call,                   \
                       const hk_plugin_arg *args, int nargs)                                     \
    {                                                                                            \
        return by_cols(host, call, args, nargs, #op);                                            \
    }
BY_COLS(sum)
BY_COLS(min)
BY_COLS(max)
BY_COLS(mean)
BY_COLS(argmin)
BY_COLS(argmax)
BY_COLS(softmax)
BY_COLS(log_softmax)

static const struct {
    const char *name, *usage;
    hk_plugin_op_fn fn;
    const char *doc;
} ops[] = {
    {"sum", "out, x, cols", op_sum, "out[r] = sum of row r of x viewed as [#x / cols, cols]"},
    {"min", "out, x, cols", op_min, "out[r] = minimum of row r (NaN if it holds one)"},
    {"max", "out, x, cols", op_max, "out[r] = maximum of row r (NaN if it holds one)"},
    {"mean", "out, x, cols", op_mean, "out[r] = mean of row r (float types)"},
    {"argmin", "out, x, cols", op_argmin, "out[r] (i64) = first index of row r's minimum (or first NaN)"},
    {"argmax", "out, x, cols", op_argmax, "out[r] (i64) = first index of row r's maximum (or first NaN)"},
    {"softmax", "out, x, cols", op_softmax, "out = softmax of each row of x (max-subtracted)"},
    {"log_softmax", "out, x, cols", op_log_softmax, "out = log-softmax of each row of x"},
    {"rmsnorm", "out, x, w, eps", op_rmsnorm, "out = x * rsqrt(mean(x^2) + eps) * w per row; cols = #w"},
    {"layernorm", "out, x, w, [b,] eps", op_layernorm,
     "out = (x - mean) * rsqrt(var + eps) * w (+ b) per row; cols = #w"},
};

/* One block per row, a power-of-two block chosen from cols (at most
 * max_block) and one 16-byte partial per thread of shared memory. Measured
 * on the H100 (4096 x 4096 f32, docs/RESULTS.md): a row read by 1024
 * threads keeps one 16-byte load in flight per thread and runs at 0.3-0.4x
 * copy; 128 threads (reductions) and 256 (softmax and norms, which read
 * the row twice or three times) reach 0.75-0.85x. */
#define REDUCTION_MAX_BLOCK 128
#define ROWWISE_MAX_BLOCK 256

static int add(const hk_plugin_api *api, const char *name, const char *sig, const char *doc,
               int rows_param, const hk_plugin_extent *ext, int next, unsigned max_block)
{
    hk_plugin_rule rule = {sizeof rule,
                           {HK_PLUGIN_GEOM_ROW_BLOCK, 0, 0, 0, rows_param, rows_param + 1, 0, 0},
                           16, 0, max_block, ext, next};
    return api->add_kernel_rule(api, "reduce", "reduce.hip", name, sig, &rule, doc);
}

static int add_kernels(const hk_plugin_api *api)
{
    static const hk_plugin_extent per_row[] = {{1, {2, -1, -1}, 1}};
    static const hk_plugin_extent weights[] = {{1, {5, -1, -1}, 1}, {2, {5, -1, -1}, 1}};
    static const hk_plugin_extent rms_w[] = {{1, {4, -1, -1}, 1}};
    char name[64], sig[256], doc[256];
    int r = 0;
    for (size_t o = 0; r == 0 && o < sizeof reductions / sizeof reductions[0]; o++)
        for (size_t t = 0; r == 0 && t < sizeof types / sizeof types[0]; t++) {
            if (reductions[o].floats_only && types[t].integer)
                continue;
            const char *T = types[t].ctype, *R = reductions[o].out ? reductions[o].out : T;
            snprintf(name, sizeof name, "%s_%s", reductions[o].name, types[t].name);
            snprintf(sig, sizeof sig, "const %s *x, %s *out, int rows, int cols", T, R);
            snprintf(doc, sizeof doc, "%s; out holds rows (%s)", reductions[o].what, types[t].note);
            r = add(api, name, sig, doc, 2, per_row, 1, REDUCTION_MAX_BLOCK);
        }
    for (size_t o = 0; r == 0 && o < sizeof rowwise / sizeof rowwise[0]; o++)
        for (size_t t = 0; r == 0 && t < 4; t++) {
            const char *T = types[t].ctype;
            int rows_param = 2 + rowwise[o].nweights;
            snprintf(name, sizeof name, "%s_%s", rowwise[o].name, types[t].name);
            snprintf(sig, sizeof sig, rowwise[o].params, T, T, T, T);
            snprintf(doc, sizeof doc, "%s (%s)", rowwise[o].what, types[t].note);
            const hk_plugin_extent *ext = rowwise[o].nweights == 2 ? weights : rms_w;
            /* w (and b) hold cols: parameter 4 of rmsnorm, 5 of layernorm */
            r = add(api, name, sig, doc, rows_param, rowwise[o].nweights ? ext : NULL,
                    rowwise[o].nweights, ROWWISE_MAX_BLOCK);
        }
    return r;
}

int hk_plugin_reduce_init(const hk_plugin_api *api)
{
    if (!HK_PLUGIN_API_HAS(api, add_kernel_rule)) {
        api->error(api, "needs plugin ABI 1.4 (add_kernel_rule)");
        return 1;
    }
    int r = api->register_family(api, "reduce", "0.1.0",
                                 "per-row reductions, softmax and norms over [rows, cols]");
    if (r == 0)
        r = api->add_source(api, "reduce", "reduce.hip", hk_reduce_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "reduce", hk_reduce_images);
    if (r == 0)
        r = add_kernels(api);
    for (size_t i = 0; r == 0 && i < sizeof ops / sizeof ops[0]; i++)
        r = api->add_op(api, "reduce", ops[i].name, ops[i].usage, ops[i].fn, ops[i].doc);
    return r;
}
