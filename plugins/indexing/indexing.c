/* The indexing family: index_select, gather, scatter, scatter_add and
 * index_add along one dimension of a contiguous tensor viewed as
 * [left, dim, right], candle's kernels' semantics
 * (kernels/indexing/indexing.hip, embedded at build time). The host ops
 * hk.ops.indexing.OP(dst, src, ids, dim[, right]) take left and the other
 * sizes from the buffers' lengths, pick the kernel from the dtypes, launch
 * it with a geometry fitted to the row length, and read back the kernel's
 * out-of-range flag (docs/families/indexing.md). */
#include <hipkit/plugin.h>

#include <stdio.h>
#include <string.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_indexing_sources[];
extern const hk_plugin_image hk_indexing_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(indexing);
HK_PLUGIN_EXPORT int hk_plugin_indexing_init(const hk_plugin_api *api);

static const struct {
    const char *name, *ctype;
    unsigned size;
} types[] = {
    {"f32", "float", 4},        {"f64", "double", 8},   {"f16", "__half", 2},
    {"bf16", "__hip_bfloat16", 2}, {"i32", "int", 4},  {"u32", "unsigned", 4},
    {"i64", "long long", 8},
};

static const struct {
    const char *name, *ctype;
    unsigned size;
} index_types[] = {{"u8", "unsigned char", 1}, {"u32", "unsigned", 4}, {"i64", "long long", 8}};

#define NTYPES (sizeof types / sizeof types[0])
#define NINDEX (sizeof index_types / sizeof index_types[0])

/* Kernel parameters: 0 ids, 1 src, 2 dst, 3 bad, 4 left, 5 dim, 6 n,
 * 7 right. How each op's shapes follow from them, and its geometry. */
enum { ROWS, ELEMENTS, COLUMNS };
enum { P_IDS, P_SRC, P_DST, P_BAD, P_LEFT, P_DIM, P_N, P_RIGHT };

typedef struct {
    const char *name, *doc;
    int into_dst;     /* ids index dst's dimension (else src's) */
    int ids_full;     /* ids is left x n x right (else n) */
    int dst_indexed;  /* dst is left x dim x right (else left x n x right) */
    int geometry;     /* ROWS, ELEMENTS or COLUMNS */
    int vectors;      /* ROWS moves 16-byte vectors */
} op_desc;

static const op_desc op_list[] = {
    {"index_select", "dst[l, j, r] = src[l, ids[j], r]; ids holds n, src [left, dim, right], dst [left, n, right]",
     0, 0, 0, ROWS, 1},
    {"gather", "dst[l, j, r] = src[l, ids[l, j, r], r]; src [left, dim, right], ids and dst [left, n, right]",
     0, 1, 0, ELEMENTS, 0},
    {"scatter", "dst[l, ids[l, j, r], r] = src[l, j, r] (duplicates: the last j wins); dst [left, dim, right], "
                "ids and src [left, n, right]",
     1, 1, 1, COLUMNS, 0},
    {"scatter_add", "dst[l, ids[l, j, r], r] += src[l, j, r] (atomic); dst [left, dim, right], ids and src "
                    "[left, n, right]",
     1, 1, 1, ELEMENTS, 0},
    {"index_add", "dst[l, ids[j], r] += src[l, j, r] (atomic); ids holds n, src [left, n, right], dst "
                  "[left, dim, right]",
     1, 0, 1, ROWS, 0},
};
#define NOPS (sizeof op_list / sizeof op_list[0])

static int is_buffer(const hk_plugin_arg *a) { return a->kind == HK_PLUGIN_ARG_BUFFER; }
static int is_count(const hk_plugin_arg *a)
{
    return (a->kind == HK_PLUGIN_ARG_INT && a->v.i >= 1) || (a->kind == HK_PLUGIN_ARG_UINT && a->v.u >= 1);
}
static unsigned long long count(const hk_plugin_arg *a)
{
    return a->kind == HK_PLUGIN_ARG_INT ? (unsigned long long)a->v.i : a->v.u;
}

static int type_of(const char *dt, int index)
{
    for (size_t i = 0; dt && i < (index ? NINDEX : NTYPES); i++)
        if (!strcmp(dt, index ? index_types[i].name : types[i].name))
            return (int)i;
    return -1;
}

/* The shapes of one call: left, dim, n, right, from the buffers. */
typedef struct { unsigned long long left, dim, n, right; } shape;

static int fit_shapes(const hk_plugin_host *host, const hk_plugin_call *call, const op_desc *op,
                      const hk_plugin_arg *args, shape *s)
{
    size_t ndst = host->length(call, args[0].v.buf), nsrc = host->length(call, args[1].v.buf);
    size_t nids = host->length(call, args[2].v.buf);
    if (s->dim > (1ull << 62) / s->right)
        return host->fail(call, "dim x right (%llu x %llu) is too large", s->dim, s->right);
    unsigned long long block = s->dim * s->right;
    const char *iname = op->into_dst ? "dst" : "src";
    size_t nind = op->into_dst ? ndst : nsrc;
    if (nind % block != 0)
        return host->fail(call, "%s has %zu elements, not a whole number of [dim, right] = [%llu, %llu] blocks",
                          iname, nind, s->dim, s->right);
    s->left = nind / block;
    unsigned long long lr = s->left * s->right;
    /* the other side: n from ids (1-D ids) or from the full-shape operand */
    const char *oname = op->dst_indexed ? "src" : "dst";
    size_t nother = op->dst_indexed ? nsrc : ndst;
    if (op->ids_full) {
        size_t full = op->into_dst ? nsrc : nids; /* scatter: src; gather: ids */
        const char *fname = op->into_dst ? "src" : "ids";
        if (full % lr != 0)
            return host->fail(call, "%s has %zu elements, not a whole number of [left, right] = [%llu, %llu]",
                              fname, full, s->left, s->right);
        s->n = full / lr;
        if (nids != full)
            return host->fail(call, "ids has %zu elements; it must have %s's shape [%llu, %llu, %llu] (%zu)",
                              nids, op->into_dst ? "src" : "dst", s->left, s->n, s->right, full);
    } else {
        s->n = nids;
    }
    if (nother != s->left * s->n * s->right)
        return host->fail(call, "%s has %zu elements; its shape is [left, n, right] = [%llu, %llu, %llu] (%llu)",
                          oname, nother, s->left, s->n, s->right, s->left * s->n * s->right);
    return 0;
}

/* Grid and block for the op's kernel: ROWS puts the lanes of a block
 * (a power of two covering the row, in vectors when they apply) along a
 * row and 256 / lanes rows in a block, grid.x over rows and grid.y over
 * the columns of long rows; ELEMENTS and COLUMNS are 1-D,
 * 256 threads, 4 elements or 1 column a thread a step. On the CPU backend
 * (cpu) a GPU thread is an iteration of a plain loop: ROWS gives each one
 * a whole row (lanes 1, 256 rows a block, no column split), which moves a
 * row as one run of 16-byte vectors instead of one vector per iteration. */
static hk_plugin_config geometry(const op_desc *op, const shape *s, unsigned esize, int cpu)
{
    hk_plugin_config c = {{1, 1, 1}, {256, 1, 1}, 0};
    unsigned long long work;
    if (op->geometry == ROWS) {
        unsigned long long cols = s->right, lanes = 1;
        if (op->vectors && s->right % (16 / esize) == 0)
            cols = s->right / (16 / esize);
        while (!cpu && lanes < cols && lanes < 256)
            lanes *= 2;
        c.block[0] = (unsigned)lanes;
        c.block[1] = 256 / (unsigned)lanes;
        work = (s->left * s->n + c.block[1] - 1) / c.block[1];
        /* few long rows: blocks along y share each row's columns, up to
         * about 1024 blocks in all */
        unsigned long long split = (cols + lanes - 1) / lanes, room = cpu ? 1 : 1024 / (work ? work : 1);
        split = split < room ? split : room;
        c.grid[1] = split < 1 ? 1 : split > 65535 ? 65535 : (unsigned)split;
    } else if (op->geometry == ELEMENTS) {
        work = (s->left * s->n * s->right + 1023) / 1024;
    } else {
        work = (s->left * s->right + 255) / 256;
    }
    c.grid[0] = work < 1 ? 1 : work > (1u << 20) ? (1u << 20) : (unsigned)work;
    return c;
}

/* What a raised flag's message needs: the ids are read back only while
 * the op runs (the core may read the flag after the op returned). */
typedef struct bad_index {
    char kernel[64];
    void *ids;
    int it;
    unsigned long long dim;
} bad_index;

/* The index at ids[pos], or -1 with *ok 0 when it cannot be read. */
static long long index_at(const hk_plugin_host *host, const hk_plugin_call *call, const bad_index *b,
                          size_t pos, int *ok)
{
    unsigned char raw[8] = {0};
    *ok = host->download(call, b->ids, pos * index_types[b->it].size, raw, index_types[b->it].size) == 0;
    long long v;
    if (b->it == 0)
        v = raw[0];
    else if (b->it == 1) {
        unsigned u;
        memcpy(&u, raw, sizeof u);
        v = u;
    } else
        memcpy(&v, raw, sizeof v);
    return v;
}

/* The flag holds ~position of the first bad index in ids. */
static void describe_bad(const hk_plugin_host *host, const hk_plugin_call *call,
                         const unsigned long long *words, const void *data, char *msg, size_t cap)
{
    const bad_index *b = data;
    size_t pos = (size_t)~words[0];
    int ok = 0;
    long long v = host && call ? index_at(host, call, b, pos, &ok) : 0;
    char value[32] = "";
    if (ok)
        snprintf(value, sizeof value, " = %lld", v);
    snprintf(msg, cap, "kernel %s: ids[%zu]%s is out of range [0, %llu); nothing was written for it",
             b->kernel, pos, value, b->dim);
}

/* The bad-index flag read back now (a core without host->error_flag): 0,
 * or the op's error naming the kernel, the position in ids and the index. */
static int check_flag(const hk_plugin_host *host, const hk_plugin_call *call, void *flag,
                      const bad_index *b)
{
    unsigned long long code = 0;
    int r = host->download(call, flag, 0, &code, sizeof code);
    if (r != 0 || code == 0)
        return r;
    char msg[256];
    describe_bad(host, call, &code, b, msg, sizeof msg);
    return host->fail(call, "%s", msg);
}

static int run(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs,
               const op_desc *op)
{
    if ((nargs != 4 && nargs != 5) || !is_buffer(&args[0]) || !is_buffer(&args[1]) || !is_buffer(&args[2]) ||
        !is_count(&args[3]) || (nargs == 5 && !is_count(&args[4])))
        return host->fail(call, "expects buffers dst, src and ids and integers dim >= 1 (and right >= 1); "
                                "got %d arguments", nargs);
    if (!HK_PLUGIN_HOST_HAS(host, scratch))
        return host->fail(call, "needs plugin ABI 1.5 (host->scratch) for its out-of-range flag");
    const char *dt = host->dtype(call, args[1].v.buf), *ddt = host->dtype(call, args[0].v.buf);
    const char *idt = host->dtype(call, args[2].v.buf);
    int t = type_of(dt, 0), it = type_of(idt, 1);
    if (t < 0)
        return host->fail(call, "src is %s; %s takes f32, f64, f16, bf16, i32, u32, i64", dt ? dt : "?", op->name);
    if (!ddt || strcmp(ddt, dt))
        return host->fail(call, "dst is %s; it must be src's dtype %s", ddt ? ddt : "?", dt);
    if (it < 0)
        return host->fail(call, "ids is %s; indices are u8, u32 or i64", idt ? idt : "?");
    /* dst is written while other threads still read src and ids (a gather
     * over its own source reads rows it already replaced) */
    int r = hk_plugin_apart(host, call, args[0].v.buf, "dst", args[1].v.buf, "src");
    if (r != 0 || (r = hk_plugin_apart(host, call, args[0].v.buf, "dst", args[2].v.buf, "ids")) != 0)
        return r;
    shape s = {0, count(&args[3]), 0, nargs == 5 ? count(&args[4]) : 1};
    r = fit_shapes(host, call, op, args, &s);
    if (r != 0)
        return r;
    bad_index bad = {"", args[2].v.buf, it, s.dim};
    snprintf(bad.kernel, sizeof bad.kernel, "%s_%s_%s", op->name, index_types[it].name, types[t].name);
    const char *kernel = bad.kernel;
    /* host->error_flag (1.6): the core reads the flag where the host waits anyway */
    int later = HK_PLUGIN_HOST_HAS(host, error_flag);
    void *flag = later ? host->error_flag(call, 1, describe_bad, &bad, sizeof bad) : host->scratch(call, "u64", 1);
    if (!flag)
        return -1; /* the call is failed already */
    hk_plugin_arg a[8] = {args[2], args[1], args[0], {HK_PLUGIN_ARG_BUFFER, {.buf = flag}}};
    unsigned long long v[4] = {s.left, s.dim, s.n, s.right};
    for (int k = 0; k < 4; k++) {
        a[P_LEFT + k].kind = HK_PLUGIN_ARG_UINT;
        a[P_LEFT + k].v.u = v[k];
    }
    int cpu = HK_PLUGIN_HOST_HAS(host, backend) && !strcmp(host->backend(call), "host");
    hk_plugin_config cfg = geometry(op, &s, types[t].size, cpu);
    r = host->launch_config(call, kernel, &cfg, a, 8);
    if (r == 0 && !later)
        r = check_flag(host, call, flag, &bad);
    return r;
}

#define OP_FN(i, op)                                                                             \
    static int op_##op(const hk_plugin_host *host, const hk_plugin_call *call,                   \
                       const hk_plugin_arg *args, int nargs)                                     \
    {                                                                                            \
        return run(host, call, args, nargs, &op_list[i]);                                        \
    }
OP_FN(0, index_select)
OP_FN(1, gather)
OP_FN(2, scatter)
OP_FN(3, scatter_add)
OP_FN(4, index_add)

static const hk_plugin_op_fn op_fns[NOPS] = {op_index_select, op_gather, op_scatter, op_scatter_add,
                                             op_index_add};

/* Each kernel's operands hold their shapes: ids n or left x n x right,
 * src and dst left x dim x right or left x n x right, bad one flag. */
static int add_kernels(const hk_plugin_api *api)
{
    char name[64], sig[256], doc[384];
    int r = 0;
    for (size_t o = 0; r == 0 && o < NOPS; o++) {
        const op_desc *op = &op_list[o];
        hk_plugin_extent ext[4] = {
            {P_IDS, {P_N, -1, -1}, 1},
            {P_SRC, {P_LEFT, op->dst_indexed ? P_N : P_DIM, P_RIGHT}, 1},
            {P_DST, {P_LEFT, op->dst_indexed ? P_DIM : P_N, P_RIGHT}, 1},
            {P_BAD, {-1, -1, -1}, 1},
        };
        if (op->ids_full)
            ext[0] = (hk_plugin_extent){P_IDS, {P_LEFT, P_N, P_RIGHT}, 1};
        hk_plugin_rule rule = {sizeof rule, {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0}, 0, 0, 0, ext, 4};
        for (size_t t = 0; r == 0 && t < NTYPES; t++)
            for (size_t i = 0; r == 0 && i < NINDEX; i++) {
                snprintf(name, sizeof name, "%s_%s_%s", op->name, index_types[i].name, types[t].name);
                snprintf(sig, sizeof sig,
                         "const %s *ids, const %s *src, %s *dst, unsigned long long *bad, size_t left, "
                         "size_t dim, size_t n, size_t right",
                         index_types[i].ctype, types[t].ctype, types[t].ctype);
                snprintf(doc, sizeof doc, "%s; %s data, %s ids; *bad = ~(first bad position) (explicit launch)",
                         op->doc, types[t].name, index_types[i].name);
                r = api->add_kernel_rule(api, "indexing", "indexing.hip", name, sig, &rule, doc);
            }
    }
    return r;
}

static const char *const op_docs[NOPS] = {
    "dst = src's rows ids along dim: src [left, dim, right] -> dst [left, #ids, right]",
    "dst[l, j, r] = src[l, ids[l, j, r], r]; ids and dst share a shape",
    "dst[l, ids[l, j, r], r] = src[l, j, r]; ids and src share a shape; the last duplicate wins",
    "dst[l, ids[l, j, r], r] += src[l, j, r]; ids and src share a shape",
    "dst[l, ids[j], r] += src[l, j, r]: src [left, #ids, right] into dst [left, dim, right]",
};

int hk_plugin_indexing_init(const hk_plugin_api *api)
{
    if (!HK_PLUGIN_API_HAS(api, add_kernel_rule)) {
        api->error(api, "needs plugin ABI 1.4 (add_kernel_rule)");
        return 1;
    }
    int r = api->register_family(api, "indexing", "0.1.0",
                                 "index_select, gather, scatter, scatter_add, index_add along a dimension");
    if (r == 0)
        r = api->add_source(api, "indexing", "indexing.hip", hk_indexing_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "indexing", hk_indexing_images);
    if (r == 0)
        r = add_kernels(api);
    for (size_t i = 0; r == 0 && i < NOPS; i++)
        r = api->add_op(api, "indexing", op_list[i].name, "dst, src, ids, dim, [right]", op_fns[i], op_docs[i]);
    return r;
}
