/* The reduce family: per-row reductions (sum min max mean argmin argmax)
 * and row normalisations (softmax log_softmax rmsnorm layernorm) over a
 * contiguous [rows, cols] view, one block per row
 * (kernels/reduce/reduce.hip, embedded at build time). The host ops
 * hk.ops.reduce.OP(out, x, cols, ...) take rows from the buffers' lengths
 * and pick the kernel from x's dtype (docs/families/reduce.md). */
#include <hipkit/plugin.h>

#include <math.h>
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

/* On the CPU backend a block of hundreds of threads that synchronise runs
 * them as fibers (docs/host-backend.md); a reduction there is faster as a
 * block of one thread folding its row with 16-byte vectors. */
static int on_cpu(const hk_plugin_host *host, const hk_plugin_call *call)
{
    return HK_PLUGIN_HOST_HAS(host, backend) && !strcmp(host->backend(call), "host");
}

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
    if (with_ints && on_cpu(host, call)) { /* the reductions: a thread per row */
        hk_plugin_config one = {{0, 0, 0}, {1, 1, 1}, 0};
        return host->launch_config(call, kernel, &one, args, nargs);
    }
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

static int by_dims(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs, const char *op);

/* Threads of a whole-buffer reduction's block, and at most this many
 * blocks (each folds a grid-strided share; the last one to finish folds
 * their partials). */
#define ALL_BLOCK 256
#define ALL_MAX_BLOCKS 2048
/* On the CPU backend: blocks of one thread, 16 Ki elements each, at most
 * this many (enough to spread over the worker threads). */
#define ALL_CPU_BLOCKS 256

/* OP(out, x): OP over the whole of x into out[0], one launch. */
static int by_all(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                  const char *op)
{
    if (!HK_PLUGIN_HOST_HAS(host, scratch))
        return host->fail(call, "a whole-buffer reduction needs a host of plugin ABI 1.5");
    if (!is_buffer(&args[0]) || !is_buffer(&args[1]))
        return host->fail(call, "expects buffers out and x");
    size_t n = host->length(call, args[1].v.buf);
    if (n == 0)
        return host->fail(call, "x is empty: no %s of nothing", op);
    const char *dt = host->dtype(call, args[1].v.buf);
    int cpu = on_cpu(host, call);
    unsigned block = cpu ? 1 : ALL_BLOCK;
    size_t per_block = (size_t)(cpu ? 1 << 14 : ALL_BLOCK * 16); /* about 64 bytes of f32 per GPU thread */
    size_t blocks = (n + per_block - 1) / per_block;
    if (blocks > (cpu ? ALL_CPU_BLOCKS : ALL_MAX_BLOCKS))
        blocks = cpu ? ALL_CPU_BLOCKS : ALL_MAX_BLOCKS;
    if (cpu && blocks < n / (1u << 30) + 1) /* a one-thread block folds under 2^31 elements */
        blocks = n / (1u << 30) + 1;
    void *part = host->scratch(call, "f64", blocks);
    void *part_i = part ? host->scratch(call, "i64", blocks) : NULL;
    void *done = part_i ? host->scratch(call, "u32", 1) : NULL;
    if (!done)
        return -1;
    char kernel[64];
    snprintf(kernel, sizeof kernel, "%s_all_%s", op, dt);
    hk_plugin_arg a[6] = {args[1], args[0], {HK_PLUGIN_ARG_UINT, {.u = n}}, {HK_PLUGIN_ARG_BUFFER, {.buf = part}},
                          {HK_PLUGIN_ARG_BUFFER, {.buf = part_i}}, {HK_PLUGIN_ARG_BUFFER, {.buf = done}}};
    hk_plugin_config cfg = {{(unsigned)blocks, 1, 1}, {block, 1, 1}, 0};
    return host->launch_config(call, kernel, &cfg, a, 6);
}

/* OP(out, x, cols): a reduction, softmax or log_softmax; the reductions
 * also take OP(out, x, shape, strides, dims) (by_dims). */
static int by_cols(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs, const char *op)
{
    int row_op = !strcmp(op, "softmax") || !strcmp(op, "log_softmax");
    if (nargs > 3 && !row_op)
        return by_dims(host, call, args, nargs, op);
    if (nargs == 2 && !row_op)
        return by_all(host, call, args, op);
    if (nargs != 3 || !is_buffer(&args[0]) || !is_buffer(&args[1]) || args[2].kind != HK_PLUGIN_ARG_INT)
        return host->fail(call, "expects buffers out and x and an integer cols; got %d arguments", nargs);
    hk_plugin_arg a[4] = {args[1], args[0]};
    int with_ints = strcmp(op, "mean") && strcmp(op, "softmax") && strcmp(op, "log_softmax");
    return launch_rows(host, call, op, with_ints, args[1].v.buf, args[2].v.i, a, 4, 2);
}

/* eps >= 0 and finite: a negative one turns a row of small values into
 * rsqrt of a negative number, NaN with no hint why. */
static int check_eps(const hk_plugin_host *host, const hk_plugin_call *call, double eps)
{
    if (isnan(eps))
        return host->fail(call, "eps must be a finite number >= 0, got nan");
    if (eps < 0 || isinf(eps))
        return host->fail(call, "eps must be a finite number >= 0, got %g", eps);
    return 0;
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
    int r = check_eps(host, call, a[5].v.f);
    if (r)
        return r;
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
    int r = check_eps(host, call, a[6].v.f);
    if (r)
        return r;
    return launch_rows(host, call, "layernorm", 0, args[1].v.buf,
                       (long long)host->length(call, args[2].v.buf), a, 7, 4);
}

/* At most this many dims in a strided reduction (the info array's size). */
#define MAX_DIMS 16

/* A Lua table arrives as its length and its elements (docs/plugins.md):
 * reads one at args[*at] into v (at most max), advancing *at. */
static int take_list(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                     int nargs, int *at, const char *what, long long *v, int max, int *count)
{
    if (*at >= nargs || args[*at].kind != HK_PLUGIN_ARG_INT)
        return host->fail(call, "%s must be a table of integers", what);
    long long n = args[*at].v.i;
    if (n < 0 || n > max || *at + 1 + n > nargs)
        return host->fail(call, "%s has %lld entries; at most %d", what, n, max);
    for (int i = 0; i < n; i++) {
        if (args[*at + 1 + i].kind != HK_PLUGIN_ARG_INT)
            return host->fail(call, "%s: entry %d is not an integer", what, i + 1);
        v[i] = args[*at + 1 + i].v.i;
    }
    *count = (int)n;
    *at += 1 + (int)n;
    return 0;
}

/* The largest element offset of a view, +1 (0 for an empty one). */
static unsigned long long view_span(const long long *shape, const long long *strides, int nd)
{
    unsigned long long last = 0;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 0)
            return 0;
        last += (unsigned long long)(shape[d] - 1) * (unsigned long long)strides[d];
    }
    return last + 1;
}

/* OP(out, x, shape, strides, dims): OP over the dims `dims` (0-based) of x
 * viewed with shape and strides (elements); out holds the result
 * contiguous in the order of the other dims. The reduced dims are moved
 * last and fast_OP_T (candle's form) reduces each run of their elements. */
static int by_dims(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs, const char *op)
{
    if (!HK_PLUGIN_HOST_HAS(host, upload))
        return host->fail(call, "strided reductions need a host of plugin ABI 1.5");
    if (!is_buffer(&args[0]) || !is_buffer(&args[1]))
        return host->fail(call, "expects buffers out and x, then shape, strides and dims (tables)");
    long long shape[MAX_DIMS], strides[MAX_DIMS], dims[MAX_DIMS];
    int ns, nst, nd, at = 2;
    int r = take_list(host, call, args, nargs, &at, "shape", shape, MAX_DIMS, &ns);
    if (!r)
        r = take_list(host, call, args, nargs, &at, "strides", strides, MAX_DIMS, &nst);
    if (!r)
        r = take_list(host, call, args, nargs, &at, "dims", dims, MAX_DIMS, &nd);
    if (r)
        return r;
    if (at != nargs)
        return host->fail(call, "expects out, x, shape, strides, dims; got %d more values", nargs - at);
    if (ns != nst || ns == 0)
        return host->fail(call, "shape has %d dims and strides %d; they must match (at least 1)", ns, nst);
    unsigned long long numel = 1, el = 1;
    int reduced[MAX_DIMS] = {0};
    for (int d = 0; d < ns; d++) {
        if (shape[d] < 1 || strides[d] < 0)
            return host->fail(call, "dim %d: size %lld, stride %lld (sizes >= 1, strides >= 0)", d,
                              shape[d], strides[d]);
        numel *= (unsigned long long)shape[d];
    }
    for (int i = 0; i < nd; i++) {
        if (dims[i] < 0 || dims[i] >= ns || reduced[dims[i]])
            return host->fail(call, "dims[%d] = %lld is not a new dim of %d", i + 1, dims[i], ns);
        reduced[dims[i]] = 1;
        el *= (unsigned long long)shape[dims[i]];
    }
    if (nd == 0 || el > 0x7fffffffULL || numel / el > 0x7fffffffULL)
        return host->fail(call, "reduce at least one dim; at most 2^31 - 1 elements per output and outputs");
    if (view_span(shape, strides, ns) > host->length(call, args[1].v.buf))
        return host->fail(call, "x has %zu elements; the view reaches element %llu", host->length(call,
                          args[1].v.buf), view_span(shape, strides, ns) - 1);
    if (host->length(call, args[0].v.buf) < numel / el)
        return host->fail(call, "out has %zu elements; it needs %llu", host->length(call, args[0].v.buf),
                          numel / el);
    unsigned long long info[2 * MAX_DIMS];
    int k = 0;
    for (int pass = 0; pass < 2; pass++) /* kept dims in order, then the reduced ones */
        for (int d = 0; d < ns; d++)
            if (reduced[d] == pass) {
                info[k] = (unsigned long long)shape[d];
                info[ns + k++] = (unsigned long long)strides[d];
            }
    void *dev = host->scratch(call, "u64", 2 * (size_t)ns);
    if (!dev || host->upload(call, dev, 0, info, 2 * (size_t)ns * sizeof info[0]))
        return -1;
    const char *dt = host->dtype(call, args[1].v.buf);
    char kernel[64];
    snprintf(kernel, sizeof kernel, "fast_%s_%s", op, dt);
    hk_plugin_arg a[6] = {{HK_PLUGIN_ARG_UINT, {.u = numel}}, {HK_PLUGIN_ARG_UINT, {.u = el}},
                          {HK_PLUGIN_ARG_UINT, {.u = (unsigned long long)ns}},
                          {HK_PLUGIN_ARG_BUFFER, {.buf = dev}}, args[1], args[0]};
    unsigned block = on_cpu(host, call) ? 1 : host->warp_size(call);
    while (block > 1 && block < el && block < 128)
        block *= 2;
    hk_plugin_config cfg = {{(unsigned)(numel / el), 1, 1}, {block, 1, 1}, 0};
    return host->launch_config(call, kernel, &cfg, a, 6);
}

/* The batch stride candle's rope kernels take: 0 when cos and sin hold
 * one [t, d/2] table, else the elements of x per table when they hold one
 * per batch (#cos = batches * t * d / 2, batches dividing x's). */
static int rope_batches(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                        unsigned long long per_table, unsigned long long x_units,
                        unsigned long long unit_elems, unsigned long long *stride_b)
{
    size_t nc = host->length(call, args[2].v.buf), ns = host->length(call, args[3].v.buf);
    if (nc != ns)
        return host->fail(call, "cos has %zu elements and sin %zu; they must match", nc, ns);
    if (nc % per_table || nc == 0 || x_units % (nc / per_table))
        return host->fail(call, "cos and sin hold %zu elements: not [t, d/2] (%llu) or a whole number of "
                          "those per batch", nc, per_table);
    unsigned long long tables = nc / per_table;
    *stride_b = tables == 1 ? 0 : x_units / tables * unit_elems;
    return 0;
}

/* rope_i(out, x, cos, sin, t, d), rope(out, x, cos, sin, t, d) and
 * rope_thd(out, x, cos, sin, t, h, d): rotary embeddings (candle's
 * kernels); x is [bh, t, d] (or [b, t, h, d]), cos and sin [t, d/2] or
 * one such table per batch. */
static int rope_op(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs, const char *op)
{
    int thd = !strcmp(op, "rope_thd"), nint = thd ? 3 : 2;
    if (!HK_PLUGIN_HOST_HAS(host, launch_config) || nargs != 4 + nint)
        return host->fail(call, "expects buffers out, x, cos, sin and %s; got %d arguments",
                          thd ? "t, h, d" : "t, d", nargs);
    static const char *const names_thd[] = {"t", "h", "d"}, *const names[] = {"t", "d"};
    long long v[3];
    for (int i = 0; i < 4; i++)
        if (!is_buffer(&args[i]))
            return host->fail(call, "argument %d must be a buffer", i + 1);
    for (int i = 0; i < nint; i++) {
        if (args[4 + i].kind != HK_PLUGIN_ARG_INT || args[4 + i].v.i < 1 || args[4 + i].v.i > 0x7fffffff)
            return host->fail(call, "%s must be a positive integer", thd ? names_thd[i] : names[i]);
        v[i] = args[4 + i].v.i;
    }
    long long t = v[0], h = thd ? v[1] : 1, d = v[nint - 1];
    if (d % 2)
        return host->fail(call, "d = %lld must be even", d);
    size_t n = host->length(call, args[1].v.buf), unit = (size_t)(t * h * d);
    if (n % unit || n == 0)
        return host->fail(call, "x has %zu elements, not a whole number of [%s] = %zu", n,
                          thd ? "t, h, d" : "t, d", unit);
    if (host->length(call, args[0].v.buf) < n)
        return host->fail(call, "out has %zu elements; x has %zu", host->length(call, args[0].v.buf), n);
    unsigned long long stride_b = 0, units = n / unit;
    if (rope_batches(host, call, args, (unsigned long long)(t * d / 2), units, unit, &stride_b))
        return -1;
    if (n / 2 > 0xffffffffULL || stride_b > 0xffffffffULL)
        return host->fail(call, "x has %zu elements; the kernels index at most 2^33", n);
    char kernel[64];
    snprintf(kernel, sizeof kernel, "%s_%s", op, host->dtype(call, args[1].v.buf));
    hk_plugin_arg a[9] = {args[1], args[2], args[3], args[0]};
    unsigned long long ints[5] = {units * h, (unsigned long long)(t * d), (unsigned long long)d, stride_b};
    if (thd) { /* b, t, h, d, stride_b */
        ints[0] = units, ints[1] = t, ints[2] = h, ints[3] = d, ints[4] = stride_b;
    } else if (!strcmp(op, "rope_i")) { /* bh, td, stride_b */
        ints[2] = stride_b;
    }
    int nk = thd ? 5 : !strcmp(op, "rope_i") ? 3 : 4;
    for (int i = 0; i < nk; i++) {
        a[4 + i].kind = HK_PLUGIN_ARG_UINT;
        a[4 + i].v.u = ints[i];
    }
    unsigned long long pairs = n / 2, blocks = (pairs + 255) / 256;
    hk_plugin_config cfg = {{(unsigned)(blocks < 65536 ? blocks : 65536), 1, 1}, {256, 1, 1}, 0};
    return host->launch_config(call, kernel, &cfg, a, 4 + nk);
}

/* Threads of a cumsum block, and the bytes of x each takes (a tile is
 * their product: 16 KiB). */
#define SCAN_BLOCK 256
#define SCAN_BYTES_PER_THREAD 64

/* cumsum(out, x) or cumsum(out, x, exclusive): the prefix sums of the
 * whole of x, in one pass (cumsum_T's look-back state in scratch). */
static int op_cumsum(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                     int nargs)
{
    if (!HK_PLUGIN_HOST_HAS(host, scratch))
        return host->fail(call, "needs a host of plugin ABI 1.5 (scratch)");
    if ((nargs != 2 && nargs != 3) || !is_buffer(&args[0]) || !is_buffer(&args[1]) ||
        (nargs == 3 && args[2].kind != HK_PLUGIN_ARG_BOOL))
        return host->fail(call, "expects buffers out and x and optionally a boolean exclusive; got %d "
                          "arguments", nargs);
    static const struct { const char *t, *acc; unsigned size; } scan[] = {
        {"f32", "f32", 4}, {"f64", "f64", 8}, {"f16", "f32", 2}, {"bf16", "f32", 2},
        {"i32", "u32", 4}, {"u32", "u32", 4}, {"i64", "u64", 8}};
    const char *dt = host->dtype(call, args[1].v.buf);
    int ti = -1;
    for (int i = 0; i < (int)(sizeof scan / sizeof scan[0]); i++)
        if (!strcmp(dt, scan[i].t))
            ti = i;
    if (ti < 0)
        return host->fail(call, "x is %s; cumsum takes f32, f64, f16, bf16, i32, u32, i64", dt);
    size_t n = host->length(call, args[1].v.buf);
    if (n == 0)
        return 0;
    size_t tile = (size_t)SCAN_BLOCK * (SCAN_BYTES_PER_THREAD / scan[ti].size);
    size_t tiles = (n + tile - 1) / tile;
    if (tiles > 0x7fffffff)
        return host->fail(call, "x has %zu elements; at most %zu", n, tile * 0x7fffffff);
    void *state = host->scratch(call, "u32", tiles + 1);
    void *part = state ? host->scratch(call, scan[ti].acc, 2 * tiles) : NULL;
    if (!part)
        return -1;
    char kernel[64];
    snprintf(kernel, sizeof kernel, "cumsum_%s", dt);
    hk_plugin_arg a[6] = {args[1], args[0], {HK_PLUGIN_ARG_UINT, {.u = n}},
                          {HK_PLUGIN_ARG_BUFFER, {.buf = state}}, {HK_PLUGIN_ARG_BUFFER, {.buf = part}},
                          {HK_PLUGIN_ARG_INT, {.i = nargs == 3 && args[2].v.i}}};
    hk_plugin_config cfg = {{(unsigned)tiles, 1, 1}, {SCAN_BLOCK, 1, 1}, 0};
    return host->launch_config(call, kernel, &cfg, a, 6);
}

/* op_NAME: the op function handing its name to a shared implementation. */
#define NAMED_OP(op, impl)                                                                       \
    static int op_##op(const hk_plugin_host *host, const hk_plugin_call *call,                   \
                       const hk_plugin_arg *args, int nargs)                                     \
    {                                                                                            \
        return impl(host, call, args, nargs, #op);                                               \
    }
NAMED_OP(rope_i, rope_op)
NAMED_OP(rope, rope_op)
NAMED_OP(rope_thd, rope_op)
NAMED_OP(sum, by_cols)
NAMED_OP(min, by_cols)
NAMED_OP(max, by_cols)
NAMED_OP(mean, by_cols)
NAMED_OP(argmin, by_cols)
NAMED_OP(argmax, by_cols)
NAMED_OP(softmax, by_cols)
NAMED_OP(log_softmax, by_cols)

static const struct {
    const char *name, *usage;
    hk_plugin_op_fn fn;
    const char *doc;
} ops[] = {
    {"sum", "out, x, [cols] | out, x, shape, strides, dims", op_sum,
     "out[r] = sum of row r of x viewed as [#x / cols, cols], or over dims of a strided view"},
    {"min", "out, x, [cols] | out, x, shape, strides, dims", op_min,
     "out[r] = minimum of row r (NaN if it holds one), or over dims"},
    {"max", "out, x, [cols] | out, x, shape, strides, dims", op_max,
     "out[r] = maximum of row r (NaN if it holds one), or over dims"},
    {"mean", "out, x, [cols] | out, x, shape, strides, dims", op_mean,
     "out[r] = mean of row r (float types), or over dims"},
    {"argmin", "out, x, [cols] | out, x, shape, strides, dims", op_argmin,
     "out[r] = first index of row r's minimum or first NaN (i64; over dims: u32)"},
    {"argmax", "out, x, [cols] | out, x, shape, strides, dims", op_argmax,
     "out[r] = first index of row r's maximum or first NaN (i64; over dims: u32)"},
    {"softmax", "out, x, cols", op_softmax, "out = softmax of each row of x (max-subtracted)"},
    {"log_softmax", "out, x, cols", op_log_softmax, "out = log-softmax of each row of x"},
    {"rmsnorm", "out, x, w, eps", op_rmsnorm, "out = x * rsqrt(mean(x^2) + eps) * w per row; cols = #w"},
    {"layernorm", "out, x, w, [b,] eps", op_layernorm,
     "out = (x - mean) * rsqrt(var + eps) * w (+ b) per row; cols = #w"},
    {"rope_i", "out, x, cos, sin, t, d", op_rope_i,
     "rotary embedding of interleaved pairs of x [bh, t, d]; cos, sin [t, d/2] (or one per batch)"},
    {"rope", "out, x, cos, sin, t, d", op_rope,
     "rotary embedding of half-split pairs of x [bh, t, d]; cos, sin [t, d/2] (or one per batch)"},
    {"rope_thd", "out, x, cos, sin, t, h, d", op_rope_thd,
     "rotary embedding, half-split, of x [b, t, h, d]; cos, sin [t, d/2] (or one per batch)"},
    {"cumsum", "out, x, [exclusive]", op_cumsum,
     "out = inclusive (or exclusive) prefix sums of the whole of x, one pass"},
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
               int rows_param, const hk_plugin_extent *ext, int next, unsigned max_block,
               unsigned long long may_be_null)
{
    hk_plugin_rule rule = {sizeof rule,
                           {HK_PLUGIN_GEOM_ROW_BLOCK, 0, 0, 0, rows_param, rows_param + 1, 0, 0},
                           16, 0, max_block, ext, next, may_be_null};
    return api->add_kernel_rule(api, "reduce", "reduce.hip", name, sig, &rule, doc);
}

static int add_explicit(const hk_plugin_api *api, const char *name, const char *sig, const char *doc,
                        unsigned shared_per_thread, unsigned shared_fixed, const hk_plugin_extent *ext,
                        int next)
{
    hk_plugin_rule rule = {sizeof rule, {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0},
                           shared_per_thread, shared_fixed, 0, ext, next};
    return api->add_kernel_rule(api, "reduce", "reduce.hip", name, sig, &rule, doc);
}

/* OP_all_T: the whole buffer in one launch; any grid and block (16 bytes
 * of shared memory per thread and 16 more). */
static int add_whole_kernels(const hk_plugin_api *api)
{
    static const hk_plugin_extent one[] = {{1, {-1, -1, -1}, 1}};
    char name[64], sig[256], doc[256];
    int r = 0;
    for (size_t o = 0; r == 0 && o < sizeof reductions / sizeof reductions[0]; o++)
        for (size_t t = 0; r == 0 && t < sizeof types / sizeof types[0]; t++) {
            if (reductions[o].floats_only && types[t].integer)
                continue;
            const char *T = types[t].ctype, *R = reductions[o].out ? reductions[o].out : T;
            snprintf(name, sizeof name, "%s_all_%s", reductions[o].name, types[t].name);
            snprintf(sig, sizeof sig, "const %s *x, %s *out, size_t n, double *part, long long *part_i, "
                     "unsigned *done", T, R);
            snprintf(doc, sizeof doc, "out[0] = %s of all of x; part, part_i: gridDim.x each, done: one "
                     "zero (%s)", reductions[o].name, types[t].note);
            r = add_explicit(api, name, sig, doc, 16, 16, one, 1);
        }
    return r;
}

/* fast_OP_T: candle's strided form; a block per output, any block (16
 * bytes of shared memory per thread). */
static int add_strided_kernels(const hk_plugin_api *api)
{
    static const char *const ops_any[] = {"sum", "min", "max", "argmin", "argmax", "mean"};
    char name[64], sig[256], doc[256];
    int r = 0;
    for (size_t o = 0; r == 0 && o < 6; o++)
        for (size_t t = 0; r == 0 && t < sizeof types / sizeof types[0]; t++) {
            if (o == 5 && types[t].integer)
                continue;
            const char *T = types[t].ctype;
            snprintf(name, sizeof name, "fast_%s_%s", ops_any[o], types[t].name);
            snprintf(sig, sizeof sig, "size_t numel, size_t el, size_t num_dims, const size_t *info, "
                     "const %s *src, %s *dst", T, o == 3 || o == 4 ? "unsigned" : T);
            snprintf(doc, sizeof doc, "dst[r] = %s of logical elements [r*el, (r+1)*el) of src viewed by "
                     "info = dims, strides (NULL: contiguous); a block per output (%s)", ops_any[o],
                     types[t].note);
            r = add_explicit(api, name, sig, doc, 16, 0, NULL, 0);
        }
    return r;
}

/* rope_i_T, rope_T, rope_thd_T: any grid (a grid-stride loop over pairs). */
static int add_rope_kernels(const hk_plugin_api *api)
{
    static const hk_plugin_extent bh_td[] = {{0, {4, 5, -1}, 1}, {3, {4, 5, -1}, 1}};
    static const struct { const char *name, *params, *doc; int bh_td; } ropes[] = {
        {"rope_i", "unsigned bh, unsigned td, unsigned stride_b",
         "rotary embedding of interleaved pairs of src [bh, t, d] (td = t*d); cos, sin [t, d/2]", 1},
        {"rope", "unsigned bh, unsigned td, unsigned d, unsigned stride_b",
         "rotary embedding of half-split pairs of src [bh, t, d]; cos, sin [t, d/2]", 1},
        {"rope_thd", "unsigned b, unsigned t, unsigned h, unsigned d, unsigned stride_b",
         "rotary embedding, half-split, of src [b, t, h, d]; cos, sin [t, d/2]", 0},
    };
    char name[64], sig[256], doc[256];
    int r = 0;
    for (size_t o = 0; r == 0 && o < 3; o++)
        for (size_t t = 0; r == 0 && t < 4; t++) {
            const char *T = types[t].ctype;
            snprintf(name, sizeof name, "%s_%s", ropes[o].name, types[t].name);
            snprintf(sig, sizeof sig, "const %s *src, const %s *cos, const %s *sin, %s *dst, %s", T, T, T,
                     T, ropes[o].params);
            snprintf(doc, sizeof doc, "%s; stride_b > 0: a table per batch (%s)", ropes[o].doc,
                     types[t].note);
            r = add_explicit(api, name, sig, doc, 0, 0, ropes[o].bh_td ? bh_td : NULL, ropes[o].bh_td ? 2 : 0);
        }
    return r;
}

/* cumsum_T: a tile of SCAN_BLOCK threads per block, state and part in
 * scratch (the op's), 8 * (2 + 64) bytes of shared memory and the staged
 * tile (64 bytes per thread). */
static int add_cumsum_kernels(const hk_plugin_api *api)
{
    static const hk_plugin_extent xn[] = {{0, {2, -1, -1}, 1}, {1, {2, -1, -1}, 1}};
    static const char *const acc[] = {"float", "double", "float", "float", "unsigned", "unsigned"};
    char name[64], sig[256], doc[256];
    int r = 0;
    for (size_t t = 0; r == 0 && t < 7; t++) {
        const char *T = t < 6 ? types[t].ctype : "long long", *tn = t < 6 ? types[t].name : "i64";
        snprintf(name, sizeof name, "cumsum_%s", tn);
        snprintf(sig, sizeof sig, "const %s *x, %s *out, size_t n, unsigned *state, %s *part, int exclusive",
                 T, T, t < 6 ? acc[t] : "unsigned long long");
        snprintf(doc, sizeof doc, "out = prefix sums of x (exclusive != 0: exclusive), one pass; state: "
                 "1 + tiles zeros, part: 2 * tiles; gridDim.x = tiles of %d x %d bytes", SCAN_BLOCK,
                 SCAN_BYTES_PER_THREAD);
        r = add_explicit(api, name, sig, doc, SCAN_BYTES_PER_THREAD, 8 * (2 + 64), xn, 2);
    }
    return r;
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
            r = add(api, name, sig, doc, 2, per_row, 1, REDUCTION_MAX_BLOCK, 0);
        }
    for (size_t o = 0; r == 0 && o < sizeof rowwise / sizeof rowwise[0]; o++)
        for (size_t t = 0; r == 0 && t < 4; t++) {
            const char *T = types[t].ctype;
            int rows_param = 2 + rowwise[o].nweights;
            snprintf(name, sizeof name, "%s_%s", rowwise[o].name, types[t].name);
            snprintf(sig, sizeof sig, rowwise[o].params, T, T, T, T);
            snprintf(doc, sizeof doc, "%s (%s)", rowwise[o].what, types[t].note);
            const hk_plugin_extent *ext = rowwise[o].nweights == 2 ? weights : rms_w;
            /* w (and b) hold cols: parameter 4 of rmsnorm, 5 of layernorm; layernorm's
             * b (parameter 2) may be hk.null: no bias */
            r = add(api, name, sig, doc, rows_param, rowwise[o].nweights ? ext : NULL,
                    rowwise[o].nweights, ROWWISE_MAX_BLOCK, rowwise[o].nweights == 2 ? 1ull << 2 : 0);
        }
    if (r == 0)
        r = add_whole_kernels(api);
    if (r == 0)
        r = add_strided_kernels(api);
    if (r == 0)
        r = add_rope_kernels(api);
    if (r == 0)
        r = add_cumsum_kernels(api);
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
