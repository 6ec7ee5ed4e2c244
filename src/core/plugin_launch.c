/* Plugin kernels: found by family and name, made on first use on each
 * device, and launched by the geometry rule the plugin registered, which
 * turns the count arguments into a grid and says how many elements every
 * written operand must hold. */
#include "plugin_internal.h"

/* Names the family's kernels when `kernel` is not one: a typo is the usual
 * cause. */
static int lookup_kernel(const hk_context *ctx, pl_family *f, const char *kernel)
{
    for (int i = 0; kernel && i < f->nks; i++)
        if (!strcmp(f->ks[i].name, kernel))
            return i;
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    for (int i = 0; i < f->nks; i++)
        hkc_strbuf_printf(&s, "%s%s", i ? ", " : "", f->ks[i].name);
    int r = hkc_fail(ctx, HK_ENOTFOUND, "family '%s' has no kernel '%s' (it has: %s)", f->name,
                     kernel ? kernel : "(null)", s.len ? s.data : "none");
    hkc_strbuf_free(&s);
    return r;
}

/* family.kernel on the current device, with its entries for messages; the
 * handle is made on first use and kept per device in k->ks. */
static int get_kernel(hk_context *ctx, const char *family, const char *kernel, pl_family **fo,
                      pl_kernel **ko, hk_kernel **out)
{
    int fi = hk_plugin_find(ctx, family);
    if (fi < 0)
        return fi;
    pl_family *f = ctx->plugins->fams[fi];
    int ki = lookup_kernel(ctx, f, kernel);
    if (ki < 0)
        return ki;
    pl_kernel *k = &f->ks[ki];
    *fo = f;
    *ko = k;
    int dev = ctx->current;
    if (k->ks && k->ks[dev]) {
        *out = k->ks[dev];
        return 0;
    }
    size_t nd = ctx->ndevices ? (size_t)ctx->ndevices : 1;
    if (!k->ks && !(k->ks = calloc(nd, sizeof *k->ks)))
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    hk_module *m;
    int r = hkc_plugin_source_module(ctx, f, &f->srcs[k->src], &m);
    if (r != 0)
        return r;
    /* a declared type the source contradicts is refused before any launch
     * (for an image, the declarations come from discovery on its source) */
    r = hkc_plugin_check_module(ctx, f, k, m);
    if (r < 0)
        return r;
    r = hk_module_kernel_sig(m, k->name, k->signature, &k->ks[dev]);
    if (r != 0)
        return r;
    *out = k->ks[dev];
    return 0;
}

HK_API int hk_plugin_kernel(hk_context *ctx, const char *family, const char *kernel, hk_kernel **out)
{
    if (!ctx || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_plugin_kernel: context or out is NULL");
    pl_family *f;
    pl_kernel *k;
    return get_kernel(ctx, family, kernel, &f, &k, out);
}

/* One launch: the names for messages and the kernel being launched. */
typedef struct pl_launch {
    hk_context *ctx;
    const pl_family *f;
    const pl_kernel *pk;
    const hk_kernel *k;
} pl_launch;

/* The value of an integer geometry argument. */
static int arg_count(const pl_launch *l, const hk_arg *a, int idx, uint64_t *out)
{
    hk_param_info p;
    hk_kernel_param(l->k, idx, &p);
    switch (a->kind) {
    case HK_ARG_INT:
        if (a->v.i >= 0) {
            *out = (uint64_t)a->v.i;
            return 0;
        }
        break;
    case HK_ARG_UINT:
        *out = a->v.u;
        return 0;
    case HK_ARG_FLOAT:
        if (a->v.f >= 0 && a->v.f < 1.8e19 && a->v.f == (double)(uint64_t)a->v.f) {
            *out = (uint64_t)a->v.f;
            return 0;
        }
        break;
    default:
        break;
    }
    if (a->kind == HK_ARG_INT)
        return hkc_fail(l->ctx, HK_EARG, "%s.%s: argument %d (%s) is %lld; a count must be >= 0", l->f->name,
                        l->pk->name, idx + 1, p.name, (long long)a->v.i);
    if (a->kind == HK_ARG_FLOAT)
        return hkc_fail(l->ctx, HK_EARG, "%s.%s: argument %d (%s) is %.17g; a count must be a whole number >= 0",
                        l->f->name, l->pk->name, idx + 1, p.name, a->v.f);
    return hkc_fail(l->ctx, HK_EARG, "%s.%s: argument %d (%s) must be a count (a whole number >= 0)", l->f->name,
                    l->pk->name, idx + 1, p.name);
}

static uint32_t ceil_div(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

static uint32_t threads_of(hk_dim3 b) { return b.x * b.y * b.z; }

static uint32_t warp_of(const hk_context *ctx)
{
    int w = hkc_current_device(ctx)->info.warp_size;
    return w > 0 ? (uint32_t)w : 32;
}

/* The block a row rule picks when the plugin and the caller leave it open:
 * ROW_BLOCK the smallest power of two covering a row (at least a warp, at
 * most max_block and the device's limit), ROW_WARP 256 threads in whole
 * warps. */
static uint32_t row_block(const pl_launch *l, uint64_t cols)
{
    const hkc_device *dev = hkc_current_device(l->ctx);
    const hk_plugin_geometry *g = &l->pk->geom;
    uint32_t warp = warp_of(l->ctx);
    uint32_t cap = l->pk->max_block ? l->pk->max_block : 1024;
    if (dev->info.max_threads_per_block > 0 && cap > (uint32_t)dev->info.max_threads_per_block)
        cap = (uint32_t)dev->info.max_threads_per_block;
    uint32_t b = g->block;
    if (g->kind == HK_PLUGIN_GEOM_ROW_WARP) {
        b = b ? b : 256;
        b = b > cap ? cap : b;
        return b < warp ? warp : b - b % warp;
    }
    if (b)
        return b;
    for (b = warp; b < cols && b < cap; b *= 2)
        ;
    return b > cap ? cap : b;
}

/* The grid, block and shared memory the rule gives for these arguments,
 * starting from what the caller fixed in *c (a zero grid.x or block.x, or
 * zero shared bytes, is left to the rule), and the elements (*need, named
 * *need_what in messages) every operand without an extent must hold. */
static int rule_config(const pl_launch *l, const hk_arg *args, hk_launch_config *c,
                       uint64_t *need, const char **need_what)
{
    const hk_plugin_geometry *g = &l->pk->geom;
    int r;
    *need = 0;
    *need_what = "count";
    if (g->kind == HK_PLUGIN_GEOM_1D) {
        uint64_t n;
        if ((r = arg_count(l, &args[g->count_param], g->count_param, &n)) != 0)
            return r;
        if (!c->block.x)
            c->block = (hk_dim3){g->block, 1, 1};
        uint64_t per = threads_of(c->block), blocks = n ? (n + per - 1) / per : 1;
        if (g->max_blocks && blocks > g->max_blocks)
            blocks = g->max_blocks;
        if (blocks > 0x7fffffffu)
            blocks = 0x7fffffffu;
        if (!c->grid.x)
            c->grid = (hk_dim3){(uint32_t)blocks, 1, 1};
        *need = n;
    } else if (g->kind != HK_PLUGIN_GEOM_EXPLICIT) {
        uint64_t rows, cols;
        if ((r = arg_count(l, &args[g->rows_param], g->rows_param, &rows)) != 0 ||
            (r = arg_count(l, &args[g->cols_param], g->cols_param, &cols)) != 0)
            return r;
        *need = rows * cols;
        *need_what = "rows x cols";
        if (g->kind == HK_PLUGIN_GEOM_2D) {
            if (!c->block.x)
                c->block = (hk_dim3){g->block_x, g->block_y, 1};
            if (!c->grid.x)
                c->grid = (hk_dim3){cols ? ceil_div(cols, c->block.x) : 1,
                                    rows ? ceil_div(rows, c->block.y) : 1, 1};
        } else {
            if (!c->block.x)
                c->block = (hk_dim3){row_block(l, cols), 1, 1};
            uint32_t warp = warp_of(l->ctx);
            uint64_t per = g->kind == HK_PLUGIN_GEOM_ROW_BLOCK ? 1 : threads_of(c->block) / warp;
            if (per == 0)
                return hkc_fail(l->ctx, HK_ELAUNCH,
                                "%s.%s: a warp-per-row block needs at least one warp (%u "
                                "threads); got %u",
                                l->f->name, l->pk->name, warp, threads_of(c->block));
            uint64_t blocks = rows ? (rows + per - 1) / per : 1;
            if (blocks > 0x7fffffffu)
                return hkc_fail(l->ctx, HK_ELAUNCH, "%s.%s: %llu rows is too many for one launch",
                                l->f->name, l->pk->name, (unsigned long long)rows);
            if (!c->grid.x)
                c->grid = (hk_dim3){(uint32_t)blocks, 1, 1};
        }
    } else if (!c->grid.x || !c->block.x) {
        return hkc_fail(l->ctx, HK_ELAUNCH, "%s.%s has explicit geometry: give grid and block",
                        l->f->name, l->pk->name);
    }
    if (!c->shared_bytes)
        c->shared_bytes = (size_t)l->pk->shared_per_thread * threads_of(c->block) +
                          l->pk->shared_fixed;
    return 0;
}

/* The extent of operand `param`, if the rule gives it one: *len, and its
 * formula for messages ("rows x k") when what is not NULL. 0: none; 1:
 * set; < 0: an error. */
static int extent_of(const pl_launch *l, const hk_arg *args, int param, uint64_t *len,
                     hkc_strbuf *what)
{
    const pl_kernel *pk = l->pk;
    for (int e = 0; e < pk->next; e++) {
        const hk_plugin_extent *x = &pk->ext[e];
        if (x->param != param)
            continue;
        uint64_t v = x->scale ? x->scale : 1;
        if (x->scale > 1 && what)
            hkc_strbuf_printf(what, "%llu", (unsigned long long)x->scale);
        for (int j = 0; j < 3 && x->factors[j] >= 0; j++) {
            uint64_t f;
            int r = arg_count(l, &args[x->factors[j]], x->factors[j], &f);
            if (r != 0)
                return r;
            if (__builtin_mul_overflow(v, f, &v))
                return hkc_fail(l->ctx, HK_EARG, "%s.%s: the extent of argument %d overflows",
                                l->f->name, pk->name, param + 1);
            if (!what)
                continue;
            hk_param_info p;
            hk_kernel_param(l->k, x->factors[j], &p);
            hkc_strbuf_printf(what, "%s%s", what->len ? " x " : "", p.name);
        }
        *len = v;
        return 1;
    }
    return 0;
}

/* candle's convention: a parameter named info holds the shape and strides
 * its inputs are read through */
static int is_strided(const hk_kernel *k)
{
    for (int i = 0; i < k->sig.count; i++)
        if (!strcmp(k->sig.params[i].name, "info"))
            return 1;
    return 0;
}

/* Every operand must hold its extent, or else the elements the rule covers,
 * except, in a strided kernel, the inputs and info itself: broadcasting
 * reads fewer elements than it writes. */
static int check_operands(const pl_launch *l, const hk_arg *args, int nargs, uint64_t need,
                          const char *need_what)
{
    const hk_kernel *k = l->k;
    int strided = is_strided(k);
    for (int i = 0; i < nargs; i++) {
        hk_param_info p;
        hk_kernel_param(k, i, &p);
        int null = args[i].kind == HK_ARG_NULL;
        if (null && p.kind == HK_PARAM_POINTER && !l->pk->null_any && !(i < 64 && (l->pk->may_be_null >> i) & 1) &&
            strcmp(p.name, "info"))
            return hkc_fail(l->ctx, HK_EARG,
                            "%s.%s: operand %s (argument %d) is hk.null; the kernel reads or writes it, "
                            "so it needs a buffer",
                            l->f->name, l->pk->name, p.name, i + 1);
        if (args[i].kind != HK_ARG_BUFFER || !args[i].v.buf)
            continue; /* hk.null where the rule allows it (layernorm's bias), or not a pointer */
        hkc_strbuf what;
        hkc_strbuf_init(&what);
        uint64_t want = need;
        int r = extent_of(l, args, i, &want, &what);
        size_t len = hk_buffer_length(args[i].v.buf);
        if (r == 1 && len < want)
            r = hkc_fail(l->ctx, HK_EARG,
                         "%s.%s: operand %s (argument %d) has %zu elements; its extent %s is %llu",
                         l->f->name, l->pk->name, p.name, i + 1, len, what.data,
                         (unsigned long long)want);
        else if (r == 0 && !(strided && p.is_const) && len < need)
            r = hkc_fail(l->ctx, HK_EARG,
                         "%s.%s: operand %s (argument %d) has %zu elements; the %s is %llu",
                         l->f->name, l->pk->name, p.name, i + 1, len, need_what,
                         (unsigned long long)need);
        hkc_strbuf_free(&what);
        if (r < 0)
            return r;
    }
    return 0;
}

/* The bytes operand i covers: its extent or the rule's count of elements
 * (a strided kernel's input without an extent: all of it). */
static int span_of(const pl_launch *l, const hk_arg *args, int i, uint64_t need, int strided, size_t *bytes)
{
    const hk_buffer *b = args[i].v.buf;
    hk_param_info p;
    hk_kernel_param(l->k, i, &p);
    uint64_t used = need;
    int r = extent_of(l, args, i, &used, NULL);
    if (r < 0)
        return r;
    if (r == 0 && l->pk->geom.kind == HK_PLUGIN_GEOM_EXPLICIT)
        *bytes = 0; /* the rule does not say what the kernel touches */
    else if ((r == 0 && strided && p.is_const) || used > b->count || hkc_dtype_bytes(b->dtype, used, bytes) != 0)
        *bytes = b->bytes;
    return 0;
}

/* An output that shares memory with an input is refused unless it is that
 * input exactly (same first byte, same bytes, same element size, no
 * strides): then each thread reads its elements before it writes them, as
 * every kernel of the 1-D, 2-D and row kinds does. Any other overlap lets
 * one thread overwrite what another has still to read. An explicit
 * kernel's operands are checked where the rule gives them extents; the
 * others (gemm's, conv's) are the op's to check: they may interleave by
 * leading dimensions without sharing an element. */
static int check_overlaps(const pl_launch *l, const hk_arg *args, int nargs, uint64_t need)
{
    const hk_kernel *k = l->k;
    int strided = is_strided(k), r = 0;
    for (int o = 0; o < nargs; o++) {
        hk_param_info po;
        if (args[o].kind != HK_ARG_BUFFER || !args[o].v.buf || hk_kernel_param(k, o, &po) != 0 || po.is_const)
            continue;
        const hk_buffer *bo = args[o].v.buf;
        for (int i = 0; r == 0 && i < nargs; i++) {
            hk_param_info pi;
            /* whole buffers first: apart, as nearly always, costs no extent */
            if (args[i].kind != HK_ARG_BUFFER || !hk_buffer_overlap(bo, args[i].v.buf) ||
                hk_kernel_param(k, i, &pi) != 0 || !pi.is_const)
                continue;
            const hk_buffer *bi = args[i].v.buf;
            size_t no, ni;
            if ((r = span_of(l, args, o, need, strided, &no)) != 0 ||
                (r = span_of(l, args, i, need, strided, &ni)) != 0)
                break;
            if (!no || !ni || !hkc_ranges_meet((uintptr_t)bo->kptr, no, (uintptr_t)bi->kptr, ni))
                continue;
            size_t eo = hk_dtype_size(bo->dtype), ei = hk_dtype_size(bi->dtype);
            if (bo->kptr == bi->kptr && no == ni && eo == ei && !strided)
                continue; /* in place */
            hkc_strbuf why;
            hkc_strbuf_init(&why);
            long long d = (long long)((const char *)bi->kptr - (const char *)bo->kptr);
            if (d)
                hkc_strbuf_printf(&why, "%s starts %lld bytes %s it", pi.name, d < 0 ? -d : d, d < 0 ? "before" : "after");
            else if (eo != ei)
                hkc_strbuf_printf(&why, "it starts where %s does, with %zu-byte elements against %s's %zu", pi.name,
                                  eo, pi.name, ei);
            else if (no != ni)
                hkc_strbuf_printf(&why, "it starts where %s does and covers %zu bytes against %s's %zu", pi.name, no,
                                  pi.name, ni);
            else
                hkc_strbuf_printf(&why, "it is %s itself, which the kernel reads through strides (info)", pi.name);
            r = hkc_fail(l->ctx, HK_EARG,
                         "%s.%s: operand %s (argument %d) shares memory with %s (argument %d), which the "
                         "kernel reads while it writes %s (%s): give %s a buffer of its own",
                         l->f->name, l->pk->name, po.name, o + 1, pi.name, i + 1, po.name, why.data, po.name);
            hkc_strbuf_free(&why);
        }
        if (r != 0)
            return r;
    }
    return 0;
}

HK_API int hk_plugin_launch(hk_context *ctx, const char *family, const char *kernel,
                            const hk_launch_config *cfg, const hk_arg *args, int nargs)
{
    if (!ctx || (nargs && !args))
        return hkc_fail(ctx, HK_EINVAL, "hk_plugin_launch: context or args is NULL");
    pl_family *f;
    pl_kernel *pk;
    hk_kernel *k;
    int r = get_kernel(ctx, family, kernel, &f, &pk, &k);
    if (r != 0)
        return r;
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    if (nargs != info.param_count)
        return hkc_fail(ctx, HK_EARG, "%s.%s(%s) takes %d arguments, got %d", f->name, pk->name,
                        pk->signature, info.param_count, nargs);
    /* a rule kernel checks its operands even when the caller gives the
     * grid: the rule still says what the kernel touches */
    pl_launch l = {ctx, f, pk, k};
    hk_launch_config c;
    memset(&c, 0, sizeof c);
    if (cfg)
        c = *cfg;
    uint64_t need;
    const char *need_what;
    if ((r = rule_config(&l, args, &c, &need, &need_what)) != 0 ||
        (r = check_operands(&l, args, nargs, need, need_what)) != 0 ||
        (r = check_overlaps(&l, args, nargs, need)) != 0)
        return r;
    return hk_launch(k, &c, args, nargs);
}
