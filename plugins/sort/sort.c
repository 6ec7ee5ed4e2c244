/* The sort family: row argsort and top-k over a contiguous [rows, cols]
 * view, and a stable LSD radix sort of a whole buffer
 * (kernels/sort/sort.hip, embedded at build time). The host ops
 * hk.ops.sort.argsort / topk / sort / sort_pairs pick kernels and geometry
 * from the buffers and chain the passes (docs/families/sort.md); the
 * radix sort's second key array, its histograms and a long row's top-k
 * order are scratch memory from the host (plugin ABI 1.5). */
#include <hipkit/plugin.h>

#include <stdio.h>
#include <string.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_sort_sources[];
extern const hk_plugin_image hk_sort_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(sort);
HK_PLUGIN_EXPORT int hk_plugin_sort_init(const hk_plugin_api *api);

/* Key dtypes: the C type, the bytes of a row entry (key image and column,
 * kernels/sort/sort.hip's hks_ent), whether rows and radix take it. */
static const struct {
    const char *name, *ctype;
    unsigned entry, bits;
    int rows, radix;
} types[] = {
    {"f32", "float", 8, 32, 1, 1},
    {"f16", "__half", 8, 16, 1, 0},
    {"bf16", "__hip_bfloat16", 8, 16, 1, 0},
    {"f64", "double", 16, 64, 1, 1},
    {"i32", "int", 8, 32, 1, 1},
    {"u32", "unsigned int", 8, 32, 1, 1},
    {"i64", "long long", 16, 64, 1, 1},
    {"u64", "unsigned long long", 16, 64, 0, 1},
};
#define NTYPES (sizeof types / sizeof types[0])

static const struct { const char *name, *ctype; } index_types[] = {
    {"u32", "unsigned int"},
    {"i64", "long long"},
};

/* Mirrors of the kernels' constants (sort.hip). */
#define ROW_SHARED 32u  /* shared bytes per thread of the row kernels */
#define ROW_BLOCK 1024u /* the block of rows longer than 1024 */
#define TILE 4096u      /* radix: keys per tile */
#define SCAN_CHUNK 2048u
#define MAX_GRID 65535u /* the grid-stride kernels need no more blocks */

static int type_of(const char *dt)
{
    for (size_t t = 0; dt && t < NTYPES; t++)
        if (!strcmp(dt, types[t].name))
            return (int)t;
    return -1;
}

static int is_buffer(const hk_plugin_arg *a) { return a->kind == HK_PLUGIN_ARG_BUFFER; }
static int is_flag(const hk_plugin_arg *a)
{
    return a->kind == HK_PLUGIN_ARG_BOOL || a->kind == HK_PLUGIN_ARG_INT;
}
static unsigned long long pow2_at_least(unsigned long long n)
{
    unsigned long long p = 1;
    while (p < n)
        p *= 2;
    return p;
}
static unsigned grid_of(unsigned long long blocks)
{
    return blocks == 0 ? 1 : blocks > MAX_GRID ? MAX_GRID : (unsigned)blocks;
}

/* What a row op knows of its rows. */
typedef struct {
    int t;                    /* types[] index of x */
    const char *it;           /* "u32" or "i64": the index dtype */
    long long rows, cols;
    unsigned block;           /* the block every row kernel of this op runs with */
    unsigned long long chunk; /* columns one block sorts; < pow2(cols): merge passes follow */
} rowplan;

/* Checks x against cols and the index buffer's dtype, and picks the block
 * and chunk as the kernels will (hks_argsort). */
static int plan_rows(const hk_plugin_host *host, const hk_plugin_call *call, const void *x,
                     long long cols, const void *index, rowplan *p)
{
    if (cols < 1 || cols > (1LL << 30))
        return host->fail(call, "cols must be an integer in [1, 2^30]; got %lld", cols);
    size_t n = host->length(call, x);
    if (n % (size_t)cols != 0)
        return host->fail(call, "x has %zu elements, not a whole number of rows of %lld", n, cols);
    if (n / (size_t)cols > 0x7fffffff)
        return host->fail(call, "x has %zu rows; at most 2^31 - 1", n / (size_t)cols);
    const char *dt = host->dtype(call, x);
    p->t = type_of(dt);
    if (p->t < 0 || !types[p->t].rows)
        return host->fail(call, "x is %s; takes f32, f16, bf16, f64, i32, u32, i64", dt ? dt : "?");
    p->it = host->dtype(call, index);
    if (!p->it || (strcmp(p->it, "u32") && strcmp(p->it, "i64")))
        return host->fail(call, "the indices are %s; they must be u32 or i64", p->it ? p->it : "?");
    p->rows = (long long)(n / (size_t)cols);
    p->cols = cols;
    /* each thread sorts N entries in registers: the block is the fewest
     * threads (at least a warp) that cover the row, at most ROW_BLOCK */
    unsigned long long P = pow2_at_least((unsigned long long)cols), warp = host->warp_size(call);
    unsigned long long N = ROW_SHARED / types[p->t].entry, b = P / N;
    p->block = b <= warp ? (unsigned)warp : b < ROW_BLOCK ? (unsigned)b : ROW_BLOCK;
    p->chunk = N * p->block;
    return 0;
}

/* idx[r, :] = the order of row r: one launch sorts every chunk; a row
 * longer than a chunk then runs the remaining stages of the network, each
 * as global steps (distances >= chunk) and one merge launch (the rest). */
static int argsort_rows(const hk_plugin_host *host, const hk_plugin_call *call, const rowplan *p,
                        hk_plugin_arg x, hk_plugin_arg idx, int desc)
{
    char kernel[64];
    const char *tn = types[p->t].name;
    unsigned long long P = pow2_at_least((unsigned long long)p->cols), C = p->chunk;
    unsigned long long tasks = (unsigned long long)p->rows * ((p->cols + C - 1) / C);
    hk_plugin_arg a[7] = {x, idx, hk_plugin_int_arg(p->rows), hk_plugin_int_arg(p->cols), hk_plugin_int_arg(desc)};
    hk_plugin_config cfg = {{grid_of(tasks), 1, 1}, {p->block, 1, 1}, 0};
    if (tasks == (unsigned long long)p->rows && tasks <= 0x7fffffff)
        cfg.grid[0] = (unsigned)tasks; /* a block per row, as the rule */
    snprintf(kernel, sizeof kernel, "argsort_%s_%s", tn, p->it);
    int r = host->launch_config(call, kernel, &cfg, a, 5);
    for (unsigned long long k = 2 * C; r == 0 && k <= P; k *= 2) {
        unsigned long long pairs = (unsigned long long)p->rows * (P / 2);
        hk_plugin_config step = {{grid_of((pairs + 255) / 256), 1, 1}, {256, 1, 1}, 0};
        snprintf(kernel, sizeof kernel, "argsort_step_%s_%s", tn, p->it);
        for (unsigned long long j = k / 2; r == 0 && j >= C; j /= 2) {
            a[5] = hk_plugin_int_arg((long long)k);
            a[6] = hk_plugin_int_arg((long long)j);
            r = host->launch_config(call, kernel, &step, a, 7);
        }
        snprintf(kernel, sizeof kernel, "argsort_merge_%s_%s", tn, p->it);
        a[6] = hk_plugin_int_arg((long long)C);
        if (r == 0)
            r = host->launch_config(call, kernel, &cfg, a, 7);
    }
    return r;
}

/* argsort(idx, x, cols [, descending]) */
static int op_argsort(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                      int nargs)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bbi|f", "idx,x,cols,descending",
                                   "buffers idx and x, an integer cols and optionally a boolean descending");
    if (bad)
        return bad;
    rowplan p;
    int r = plan_rows(host, call, args[1].v.buf, args[2].v.i, args[0].v.buf, &p);
    if (r == 0 && host->length(call, args[0].v.buf) != (size_t)(p.rows * p.cols)) /* an index a value */
        r = host->fail(call, "idx has %zu elements; x has %lld", host->length(call, args[0].v.buf),
                       p.rows * p.cols);
    if (r == 0) /* a row longer than a block reads x again after idx is written */
        r = hk_plugin_apart(host, call, args[0].v.buf, "idx", args[1].v.buf, "x");
    return r ? r : argsort_rows(host, call, &p, args[1], args[0], nargs == 4 && args[3].v.i != 0);
}

/* topk(values, indices, x, cols, k [, largest]) */
static int op_topk(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bbbii|f", "values,indices,x,cols,k,largest",
                                   "buffers values, indices and x, integers cols and k and optionally a boolean "
                                   "largest");
    if (bad)
        return bad;
    rowplan p;
    int r = plan_rows(host, call, args[2].v.buf, args[3].v.i, args[1].v.buf, &p);
    if (r != 0)
        return r;
    long long k = args[4].v.i;
    int largest = nargs < 6 || args[5].v.i != 0;
    if (k < 1 || k > p.cols)
        return host->fail(call, "k must be in [1, cols = %lld]; got %lld", p.cols, k);
    /* the values are gathered from x after other threads have written */
    if ((r = hk_plugin_apart(host, call, args[0].v.buf, "values", args[2].v.buf, "x")) != 0 ||
        (r = hk_plugin_apart(host, call, args[1].v.buf, "indices", args[2].v.buf, "x")) != 0 ||
        (r = hk_plugin_apart(host, call, args[1].v.buf, "indices", args[0].v.buf, "values")) != 0)
        return r;
    const char *tn = types[p.t].name;
    char kernel[64];
    if (p.chunk >= pow2_at_least((unsigned long long)p.cols)) { /* one block sorts a row */
        hk_plugin_arg a[7] = {args[2], args[0], args[1], hk_plugin_int_arg(p.rows), hk_plugin_int_arg(p.cols), hk_plugin_int_arg(k),
                              hk_plugin_int_arg(largest)};
        hk_plugin_config cfg = {{0, 0, 0}, {p.block, 1, 1}, 0};
        snprintf(kernel, sizeof kernel, "topk_%s_%s", tn, p.it);
        return host->launch_config(call, kernel, &cfg, a, 7);
    }
    /* a row longer than one block sorts: its whole order, then the first k */
    if (!HK_PLUGIN_HOST_HAS(host, scratch))
        return host->fail(call, "rows of %lld exceed one block's %llu columns, which needs scratch "
                                "memory (plugin ABI 1.5)", p.cols, p.chunk);
    hk_plugin_arg order = hk_plugin_buffer_arg(host->scratch(call, p.it, (size_t)(p.rows * p.cols)));
    if (!order.v.buf)
        return -1; /* the call is failed already */
    r = argsort_rows(host, call, &p, args[2], order, largest);
    if (r != 0)
        return r;
    hk_plugin_arg a[7] = {args[2], order, args[0], args[1], hk_plugin_int_arg(p.rows), hk_plugin_int_arg(p.cols), hk_plugin_int_arg(k)};
    hk_plugin_config cfg = {{grid_of(((unsigned long long)(p.rows * k) + 255) / 256), 1, 1}, {256, 1, 1}, 0};
    snprintf(kernel, sizeof kernel, "topk_gather_%s_%s", tn, p.it);
    return host->launch_config(call, kernel, &cfg, a, 7);
}

/* The radix sort of n keys: 8-bit digits, an even number of passes
 * between keys and a scratch array, so keys (and the payload) end where
 * they started. vals NULL: no payload; iota: the payload is each key's
 * position (vals is then the output). */
static int radix(const hk_plugin_host *host, const hk_plugin_call *call, int t, hk_plugin_arg keys,
                 hk_plugin_arg vals, int iota, int desc)
{
    size_t n = host->length(call, keys.v.buf);
    if (n == 0)
        return 0;
    unsigned long long tiles = (n + TILE - 1) / TILE, m = 256 * tiles;
    int pay = vals.kind == HK_PLUGIN_ARG_BUFFER;
    /* the second key array, the histograms and their chunk totals (at
     * most 257 per tile), the payload's second array */
    hk_plugin_arg tmp = hk_plugin_buffer_arg(host->scratch(call, types[t].name, n));
    hk_plugin_arg counts = hk_plugin_buffer_arg(tmp.v.buf ? host->scratch(call, "u32", 257 * tiles) : NULL);
    hk_plugin_arg vtmp = {HK_PLUGIN_ARG_NULL, {0}};
    if (pay && counts.v.buf)
        vtmp = hk_plugin_buffer_arg(host->scratch(call, "u32", n));
    if (!counts.v.buf || (pay && !vtmp.v.buf))
        return -1; /* the call is failed already */
    hk_plugin_arg nn = {HK_PLUGIN_ARG_UINT, {.u = n}}, mm = {HK_PLUGIN_ARG_UINT, {.u = m}};
    hk_plugin_config count = {{grid_of(tiles), 1, 1}, {256, 1, 1}, 0};
    hk_plugin_config scan = {{grid_of((m + SCAN_CHUNK - 1) / SCAN_CHUNK), 1, 1}, {256, 1, 1}, 0};
    hk_plugin_config totals = {{1, 1, 1}, {256, 1, 1}, 0};
    hk_plugin_config scatter = {{grid_of(tiles), 1, 1}, {64, 1, 1}, 0};
    char kcount[64], kscatter[64];
    snprintf(kcount, sizeof kcount, "radix_count_%s", types[t].name);
    snprintf(kscatter, sizeof kscatter, "radix_scatter_%s", types[t].name);
    hk_plugin_arg src = keys, dst = tmp, vsrc = vals, vdst = vtmp;
    int r = 0;
    for (unsigned shift = 0; r == 0 && shift < types[t].bits; shift += 8) {
        hk_plugin_arg c[5] = {src, counts, nn, hk_plugin_int_arg(shift), hk_plugin_int_arg(desc)};
        hk_plugin_arg s[2] = {counts, mm};
        int first_iota = iota && shift == 0;
        hk_plugin_arg vin = first_iota ? (hk_plugin_arg){HK_PLUGIN_ARG_NULL, {0}} : vsrc;
        hk_plugin_arg sc[9] = {src, dst, vin, vdst, counts, nn, hk_plugin_int_arg(shift), hk_plugin_int_arg(desc),
                               hk_plugin_int_arg(first_iota)};
        r = host->launch_config(call, kcount, &count, c, 5);
        if (r == 0)
            r = host->launch_config(call, "radix_scan_chunks", &scan, s, 2);
        if (r == 0)
            r = host->launch_config(call, "radix_scan_totals", &totals, s, 2);
        if (r == 0)
            r = host->launch_config(call, kscatter, &scatter, sc, 9);
        hk_plugin_arg x = src, vx = vsrc;
        src = dst, dst = x, vsrc = vdst, vdst = vx;
    }
    return r;
}

/* Checks a radix sort's keys (dtype, count) and its u32 payload or
 * index buffer (pay, when given); the host must offer scratch. */
static int radix_check(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *keys,
                       const hk_plugin_arg *pay, const char *pay_name, int *t)
{
    if (!HK_PLUGIN_HOST_HAS(host, scratch))
        return host->fail(call, "needs a host of plugin ABI 1.5 (scratch)");
    const char *dt = host->dtype(call, keys->v.buf);
    size_t n = host->length(call, keys->v.buf);
    *t = type_of(dt);
    if (*t < 0 || !types[*t].radix)
        return host->fail(call, "keys are %s; takes u32, i32, f32, u64, i64, f64", dt ? dt : "?");
    if (n > 0xffffffffu)
        return host->fail(call, "keys hold %zu elements; at most 2^32 - 1", n);
    const char *pt = pay ? host->dtype(call, pay->v.buf) : "u32";
    if (pay && (!pt || strcmp(pt, "u32") || host->length(call, pay->v.buf) != n))
        return host->fail(call, "%s must hold %zu u32 (as many as keys); got %zu %s", pay_name, n,
                          host->length(call, pay->v.buf), pt ? pt : "?");
    return 0;
}

/* sort(keys [, idx] [, descending]) */
static int op_sort(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs)
{
    int nb = 0;
    while (nb < nargs && is_buffer(&args[nb]))
        nb++;
    if (nb < 1 || nb > 2 || nargs > nb + 1 || (nargs == nb + 1 && !is_flag(&args[nb])))
        return host->fail(call, "expects a buffer keys, optionally a buffer idx and optionally a boolean "
                                "descending; got %d arguments", nargs);
    int t, desc = nargs == nb + 1 && args[nb].v.i != 0;
    hk_plugin_arg none = {HK_PLUGIN_ARG_NULL, {0}};
    int r = radix_check(host, call, &args[0], nb == 2 ? &args[1] : NULL, "idx", &t);
    if (r == 0 && nb == 2) /* every pass moves keys and idx to their own places */
        r = hk_plugin_apart(host, call, args[1].v.buf, "idx", args[0].v.buf, "keys");
    return r ? r : radix(host, call, t, args[0], nb == 2 ? args[1] : none, nb == 2, desc);
}

/* sort_pairs(keys, vals [, descending]) */
static int op_sort_pairs(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                         int nargs)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bb|f", "keys,vals,descending",
                                   "buffers keys and vals and optionally a boolean descending");
    if (bad)
        return bad;
    int t;
    int r = radix_check(host, call, &args[0], &args[1], "vals", &t);
    if (r == 0)
        r = hk_plugin_apart(host, call, args[1].v.buf, "vals", args[0].v.buf, "keys");
    return r ? r : radix(host, call, t, args[0], args[1], 0, nargs == 3 && args[2].v.i != 0);
}

static const struct {
    const char *name, *usage;
    hk_plugin_op_fn fn;
    const char *doc;
} ops[] = {
    {"argsort", "idx, x, cols [, descending]", op_argsort,
     "idx (u32 or i64) = each row's columns in stable sorted order; NaN sorts as the largest"},
    {"topk", "values, indices, x, cols, k [, largest]", op_topk,
     "the k largest (or smallest) of each row, sorted, with their columns (u32 or i64)"},
    {"sort", "keys [, idx] [, descending]", op_sort,
     "stable radix sort of keys in place; idx (u32) gets each key's original position"},
    {"sort_pairs", "keys, vals [, descending]", op_sort_pairs,
     "stable radix sort of keys in place, vals (u32) moved with them"},
};

/* may_be_null: bit i, operand i may be hk.null (the kernel tests it) */
static int add_nullable(const hk_plugin_api *api, const char *name, const char *sig, const char *doc, int kind,
                        int rows_param, unsigned shared, const hk_plugin_extent *ext, int next,
                        unsigned long long may_be_null)
{
    hk_plugin_rule rule = {sizeof rule, {kind, 0, 0, 0, rows_param, rows_param + 1, 0, 0},
                           shared, 0, ROW_BLOCK, ext, next, may_be_null};
    return api->add_kernel_rule(api, "sort", "sort.hip", name, sig, &rule, doc);
}
static int add(const hk_plugin_api *api, const char *name, const char *sig, const char *doc, int kind,
               int rows_param, unsigned shared, const hk_plugin_extent *ext, int next)
{
    return add_nullable(api, name, sig, doc, kind, rows_param, shared, ext, next, 0);
}

/* The row kernels of key type t and index type i. */
static int add_rows(const hk_plugin_api *api, size_t t, size_t i)
{
    static const hk_plugin_extent xs[] = {{0, {2, 3, -1}, 1}, {1, {2, 3, -1}, 1}};
    static const hk_plugin_extent tk[] = {{1, {3, 5, -1}, 1}, {2, {3, 5, -1}, 1}};
    static const hk_plugin_extent gather[] = {
        {0, {4, 5, -1}, 1}, {1, {4, 5, -1}, 1}, {2, {4, 6, -1}, 1}, {3, {4, 6, -1}, 1}};
    const char *T = types[t].ctype, *I = index_types[i].ctype, *tn = types[t].name,
               *in = index_types[i].name;
    unsigned cap = ROW_SHARED / types[t].entry;
    char name[64], sig[160], doc[320];
    snprintf(name, sizeof name, "argsort_%s_%s", tn, in);
    snprintf(sig, sizeof sig, "const %s *x, %s *idx, int rows, int cols, int desc", T, I);
    snprintf(doc, sizeof doc, "idx = each row's columns in stable order (desc: descending); a block "
             "sorts chunks of %u x block columns (a row that fits: all of it); longer rows need the "
             "op's merge passes", cap);
    int r = add(api, name, sig, doc, HK_PLUGIN_GEOM_ROW_BLOCK, 2, ROW_SHARED, NULL, 0);
    snprintf(name, sizeof name, "argsort_step_%s_%s", tn, in);
    snprintf(sig, sizeof sig, "const %s *x, %s *idx, int rows, int cols, int desc, int k, int j", T, I);
    if (r == 0)
        r = add(api, name, sig, "one compare-exchange step (stage k, distance j; j = k/2: the flip) of "
                "the bitonic row sort over idx, in place", HK_PLUGIN_GEOM_EXPLICIT, 2, 0, xs, 2);
    snprintf(name, sizeof name, "argsort_merge_%s_%s", tn, in);
    snprintf(sig, sizeof sig, "const %s *x, %s *idx, int rows, int cols, int desc, int k, int chunk", T, I);
    if (r == 0)
        r = add(api, name, sig, "the steps j < chunk of stage k of the bitonic row sort, a block per "
                "chunk of idx in shared memory", HK_PLUGIN_GEOM_EXPLICIT, 2, ROW_SHARED, xs, 2);
    snprintf(name, sizeof name, "topk_%s_%s", tn, in);
    snprintf(sig, sizeof sig,
             "const %s *x, %s *values, %s *indices, int rows, int cols, int k, int largest", T, T, I);
    snprintf(doc, sizeof doc, "values, indices [rows, k] = each row's k largest (largest) or smallest, "
             "sorted, ties by column; rows of up to %u x block columns (longer: nothing written)", cap);
    if (r == 0)
        r = add(api, name, sig, doc, HK_PLUGIN_GEOM_ROW_BLOCK, 3, ROW_SHARED, tk, 2);
    snprintf(name, sizeof name, "topk_gather_%s_%s", tn, in);
    snprintf(sig, sizeof sig,
             "const %s *x, const %s *order, %s *values, %s *indices, int rows, int cols, int k", T, I, T, I);
    if (r == 0)
        r = add(api, name, sig, "values, indices [rows, k] = the first k of each row of order (an "
                "argsort) and their values", HK_PLUGIN_GEOM_EXPLICIT, 4, 0, gather, 4);
    return r;
}

static int add_radix(const hk_plugin_api *api, size_t t)
{
    static const hk_plugin_extent cnt[] = {{0, {2, -1, -1}, 1}};
    static const hk_plugin_extent sc[] = {{0, {5, -1, -1}, 1}, {1, {5, -1, -1}, 1}, {2, {5, -1, -1}, 1},
                                          {3, {5, -1, -1}, 1}};
    const char *T = types[t].ctype, *tn = types[t].name;
    char name[64], sig[200];
    snprintf(name, sizeof name, "radix_count_%s", tn);
    snprintf(sig, sizeof sig, "const %s *keys, unsigned int *counts, unsigned long long n, int shift, "
             "int desc", T);
    int r = add(api, name, sig, "counts[d * tiles + t] = keys of tile t (4096 keys) whose digit "
                "(key image >> shift) & 255 is d", HK_PLUGIN_GEOM_EXPLICIT, 0, 0, cnt, 1);
    snprintf(name, sizeof name, "radix_scatter_%s", tn);
    snprintf(sig, sizeof sig, "const %s *keys, %s *out, const unsigned int *vals, unsigned int *vout, "
             "const unsigned int *counts, unsigned long long n, int shift, int desc, int iota", T, T);
    if (r == 0)
        r = add_nullable(api, name, sig, "stable scatter of one radix pass by the scanned counts; vals moved "
                         "along (iota: each key's position; vout NULL: none)", HK_PLUGIN_GEOM_EXPLICIT, 0, 0, sc,
                         4, 1ull << 2 | 1ull << 3);
    return r;
}

static int add_kernels(const hk_plugin_api *api)
{
    static const hk_plugin_extent m[] = {{0, {1, -1, -1}, 1}};
    int r = 0;
    for (size_t t = 0; r == 0 && t < NTYPES; t++)
        for (size_t i = 0; r == 0 && types[t].rows && i < 2; i++)
            r = add_rows(api, t, i);
    for (size_t t = 0; r == 0 && t < NTYPES; t++)
        if (types[t].radix)
            r = add_radix(api, t);
    if (r == 0)
        r = add(api, "radix_scan_chunks", "unsigned int *counts, unsigned long long m",
                "exclusive scan of counts[0, m) in chunks of 2048, each chunk's total at counts[m + c]",
                HK_PLUGIN_GEOM_EXPLICIT, 0, 0, m, 1);
    if (r == 0)
        r = add(api, "radix_scan_totals", "unsigned int *counts, unsigned long long m",
                "exclusive scan of the chunk totals counts[m, m + ceil(m / 2048)) by block 0",
                HK_PLUGIN_GEOM_EXPLICIT, 0, 0, m, 1);
    return r;
}

int hk_plugin_sort_init(const hk_plugin_api *api)
{
    if (!HK_PLUGIN_API_HAS(api, add_kernel_rule)) {
        api->error(api, "needs plugin ABI 1.4 (add_kernel_rule)");
        return 1;
    }
    int r = api->register_family(api, "sort", "0.1.0",
                                 "row argsort and top-k over [rows, cols], stable radix sort of a buffer");
    if (r == 0)
        r = api->add_source(api, "sort", "sort.hip", hk_sort_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "sort", hk_sort_images);
    if (r == 0)
        r = add_kernels(api);
    for (size_t i = 0; r == 0 && i < sizeof ops / sizeof ops[0]; i++)
        r = api->add_op(api, "sort", ops[i].name, ops[i].usage, ops[i].fn, ops[i].doc);
    return r;
}
