/* Host ops: C functions a plugin registers (add_op) that chain several of
 * its kernels, validated and launched through the host table below. */
#include <stdarg.h>

#include "plugin_internal.h"

_Static_assert(sizeof(hk_plugin_arg) == sizeof(hk_arg) && (int)HK_PLUGIN_ARG_INT == (int)HK_ARG_INT &&
                   (int)HK_PLUGIN_ARG_UINT == (int)HK_ARG_UINT &&
                   (int)HK_PLUGIN_ARG_FLOAT == (int)HK_ARG_FLOAT &&
                   (int)HK_PLUGIN_ARG_BOOL == (int)HK_ARG_BOOL &&
                   (int)HK_PLUGIN_ARG_BUFFER == (int)HK_ARG_BUFFER &&
                   (int)HK_PLUGIN_ARG_NULL == (int)HK_ARG_NULL &&
                   (int)HK_PLUGIN_ARG_VECTOR == (int)HK_ARG_VECTOR,
               "hk_plugin_arg must be hk_arg's twin: ops get the caller's arguments unchanged");

struct hk_plugin_call {
    hk_context *ctx;
    const pl_family *f;
    const pl_op *op;
    hkc_scratch_list *scratch;
    const hk_arg *args; /* the op's arguments: the buffers host->length may be asked about */
    int nargs;
};

/* buf is a buffer the op was given or made: an argument's or its scratch.
 * Anything else (an integer argument's bits read as a pointer, a pointer of
 * the plugin's own) is no buffer, and reading it as one would crash. */
static int op_buffer(const hk_plugin_call *c, const void *buf)
{
    if (!buf)
        return 0;
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].kind == HK_ARG_BUFFER && c->args[a].v.buf == buf)
            return 1;
    for (int i = 0; c->scratch && i < c->scratch->n; i++)
        if (c->scratch->views[i] == buf)
            return 1;
    return 0;
}

/* An op's messages start "family.op" once: a launch's error, or a text the
 * op wrote with that start itself, is not prefixed again. */
static int has_prefix(const hk_plugin_call *c, const char *msg)
{
    size_t nf = strlen(c->f->name), no = strlen(c->op->name);
    return !strncmp(msg, c->f->name, nf) && msg[nf] == '.' && !strncmp(msg + nf + 1, c->op->name, no) &&
           (msg[nf + 1 + no] == ':' || msg[nf + 1 + no] == '(' || msg[nf + 1 + no] == ' ');
}

static int op_launch(const hk_plugin_call *c, const char *kernel, const hk_launch_config *cfg,
                     const hk_plugin_arg *args, int nargs)
{
    if (!c) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
    if (!kernel || nargs < 0 || (nargs && !args))
        return hkc_fail(c->ctx, HK_EINVAL, "%s.%s: host->launch: kernel, args or nargs is invalid",
                        c->f->name, c->op->name);
    hkc_plugin_scratch_written(c->scratch);
    int r = hk_plugin_launch(c->ctx, c->f->name, kernel, cfg, (const hk_arg *)(const void *)args,
                             nargs);
    if (r != 0 && !has_prefix(c, hk_errmsg(c->ctx)))
        hkc_fail(c->ctx, r, "%s.%s: %s", c->f->name, c->op->name, hk_errmsg(c->ctx));
    return r;
}

static int host_op_launch(const hk_plugin_call *c, const char *kernel, const hk_plugin_arg *args,
                          int nargs)
{
    return op_launch(c, kernel, NULL, args, nargs);
}

/* Zeros in cfg are the rule's to fill (plugin.h): hk_plugin_launch reads a
 * zero grid.x, block.x or shared size that way. */
static hk_launch_config launch_config_of(const hk_plugin_config *cfg, uint32_t flags, uint32_t early_reads)
{
    hk_launch_config lc = {{cfg->grid[0], cfg->grid[1] ? cfg->grid[1] : 1, cfg->grid[2] ? cfg->grid[2] : 1},
                           {cfg->block[0], cfg->block[1] ? cfg->block[1] : 1,
                            cfg->block[2] ? cfg->block[2] : 1},
                           cfg->shared_bytes, flags, early_reads};
    return lc;
}

static int host_op_launch_config(const hk_plugin_call *c, const char *kernel,
                                 const hk_plugin_config *cfg, const hk_plugin_arg *args, int nargs)
{
    if (!cfg)
        return op_launch(c, kernel, NULL, args, nargs);
    hk_launch_config lc = launch_config_of(cfg, 0, 0);
    return op_launch(c, kernel, &lc, args, nargs);
}

static int host_op_launch_early(const hk_plugin_call *c, const char *kernel, const hk_plugin_config *cfg,
                                const hk_plugin_arg *args, int nargs, unsigned early_reads)
{
    if (!c) /* a public entry point: a plugin may pass anything */
        return HK_EINVAL;
    if (!cfg)
        return hkc_fail(c->ctx, HK_EINVAL, "%s.%s: host->launch_early: cfg is NULL", c->f->name, c->op->name);
    hk_launch_config lc = launch_config_of(cfg, HK_LAUNCH_EARLY_START, early_reads);
    return op_launch(c, kernel, &lc, args, nargs);
}

static unsigned host_op_warp_size(const hk_plugin_call *c)
{
    if (!c)
        return 32;
    int w = hkc_current_device(c->ctx)->info.warp_size;
    return w > 0 ? (unsigned)w : 32;
}

static unsigned host_op_compute_units(const hk_plugin_call *c)
{
    if (!c)
        return 0;
    int n = hkc_current_device(c->ctx)->info.compute_units;
    return n > 0 ? (unsigned)n : 0;
}

static int host_op_overlap(const hk_plugin_call *c, const void *a, const void *b)
{
    return op_buffer(c, a) && op_buffer(c, b) && hk_buffer_overlap(a, b) ? 1 : 0;
}

static void *op_scratch(const hk_plugin_call *c, const char *dtype, size_t count, int zeroed)
{
    if (!c)
        return NULL;
    hk_buffer *b = NULL;
    int r = hkc_plugin_scratch(c->ctx, dtype, count, zeroed, c->scratch, &b);
    if (r != 0 && !has_prefix(c, hk_errmsg(c->ctx)))
        hkc_fail(c->ctx, r, "%s.%s: %s", c->f->name, c->op->name, hk_errmsg(c->ctx));
    return b;
}

static void *host_op_scratch(const hk_plugin_call *c, const char *dtype, size_t count)
{
    return op_scratch(c, dtype, count, 1);
}

static void *host_op_scratch_raw(const hk_plugin_call *c, const char *dtype, size_t count)
{
    return op_scratch(c, dtype, count, 0);
}

/* upload and download: the buffer's own range checks, the op's name first
 * in their messages. */
static int op_copy(const hk_plugin_call *c, void *buf, size_t offset, void *host, size_t bytes, int up)
{
    if (!c)
        return HK_EINVAL;
    if (!op_buffer(c, buf))
        return hkc_fail(c->ctx, HK_EINVAL, "%s.%s: host->%s: %s", c->f->name, c->op->name,
                        up ? "upload" : "download",
                        buf ? "not a buffer of the op's arguments or scratch" : "buffer is NULL");
    if (up)
        hkc_plugin_scratch_written(c->scratch);
    int r = up ? hk_buffer_upload(buf, offset, host, bytes) : hk_buffer_download(buf, offset, host, bytes);
    if (r == 0 && !up)
        hkc_plugin_scratch_read(c->scratch, buf, offset, host, bytes);
    if (r != 0 && !has_prefix(c, hk_errmsg(c->ctx)))
        hkc_fail(c->ctx, r, "%s.%s: %s", c->f->name, c->op->name, hk_errmsg(c->ctx));
    return r;
}

static int host_op_upload(const hk_plugin_call *c, void *buf, size_t offset, const void *src, size_t bytes)
{
    return op_copy(c, buf, offset, (void *)(uintptr_t)src, bytes, 1);
}

static int host_op_download(const hk_plugin_call *c, void *buf, size_t offset, void *dst, size_t bytes)
{
    return op_copy(c, buf, offset, dst, bytes, 0);
}

static const char *host_op_backend(const hk_plugin_call *c)
{
    return c ? hkc_current_device(c->ctx)->be->ops->name : "";
}

static size_t host_op_length(const hk_plugin_call *c, const void *buf)
{
    return op_buffer(c, buf) ? hk_buffer_length(buf) : 0;
}

static const char *host_op_dtype(const hk_plugin_call *c, const void *buf)
{
    return op_buffer(c, buf) ? hk_dtype_name(hk_buffer_dtype(buf)) : "";
}

static int host_op_fail(const hk_plugin_call *c, const char *fmt, ...)
{
    if (!c)
        return HK_EARG;
    if (!fmt)
        fmt = "(no message)";
    hkc_strbuf m;
    hkc_strbuf_init(&m);
    va_list ap;
    va_start(ap, fmt);
    hkc_strbuf_vprintf(&m, fmt, ap);
    va_end(ap);
    if (has_prefix(c, m.data))
        hkc_fail(c->ctx, HK_EARG, "%s", m.data);
    else
        hkc_fail(c->ctx, HK_EARG, "%s.%s(%s): %s", c->f->name, c->op->name, c->op->usage, m.data);
    hkc_strbuf_free(&m);
    return HK_EARG;
}

static void *host_op_error_flag(const hk_plugin_call *c, size_t words, hk_plugin_describe_fn describe,
                                const void *data, size_t data_bytes)
{
    if (!c)
        return NULL;
    hk_buffer *b = NULL;
    int r = hkc_plugin_error_flag(c->ctx, c->f->name, c->op->name, words, describe, data, data_bytes, &b);
    if (r != 0 && !has_prefix(c, hk_errmsg(c->ctx)))
        hkc_fail(c->ctx, r, "%s.%s: %s", c->f->name, c->op->name, hk_errmsg(c->ctx));
    return b;
}

static int host_op_call_op(const hk_plugin_call *c, const char *family, const char *op,
                           const hk_plugin_arg *args, int nargs)
{
    if (!c)
        return HK_EINVAL;
    if (!family || !op || nargs < 0 || (nargs && !args))
        return hkc_fail(c->ctx, HK_EINVAL, "%s.%s: host->call_op: family, op, args or nargs is invalid",
                        c->f->name, c->op->name);
    hkc_plugins *ps = c->ctx->plugins;
    if (ps->op_depth >= 8)
        return hkc_fail(c->ctx, HK_EARG, "%s.%s: host->call_op(%s.%s): ops nest more than 8 deep", c->f->name,
                        c->op->name, family, op);
    hkc_plugin_scratch_written(c->scratch); /* the callee may write them */
    ps->op_depth++;
    int r = hk_plugin_call_op(c->ctx, family, op, (const hk_arg *)(const void *)args, nargs);
    ps->op_depth--;
    if (r != 0 && !has_prefix(c, hk_errmsg(c->ctx)))
        hkc_fail(c->ctx, r, "%s.%s: %s", c->f->name, c->op->name, hk_errmsg(c->ctx));
    return r;
}

static const hk_plugin_host host_table;

/* The op's flags read as it returns (where waiting costs nothing): a
 * raised one is the op's own error, unless it failed already. */
static int read_flags_now(const hk_plugin_call *c, int r)
{
    if (hkc_plugin_flags_deferred(c->ctx) || c->ctx->plugins->op_depth > 0)
        return r; /* read later, or by the outermost op as it returns */
    hkc_strbuf m;
    hkc_strbuf_init(&m);
    int rf = hkc_plugin_flags_read(c->ctx, c->ctx->current, &host_table, c, &m);
    if (r == 0 && rf > 0)
        r = host_op_fail(c, "%s", m.data);
    else if (r == 0)
        r = rf;
    hkc_strbuf_free(&m);
    return r;
}

static const hk_plugin_host host_table = {
    .size = sizeof(hk_plugin_host),
    .launch = host_op_launch,
    .length = host_op_length,
    .dtype = host_op_dtype,
    .fail = host_op_fail,
    .launch_config = host_op_launch_config,
    .warp_size = host_op_warp_size,
    .scratch = host_op_scratch,
    .upload = host_op_upload,
    .download = host_op_download,
    .backend = host_op_backend,
    .error_flag = host_op_error_flag,
    .call_op = host_op_call_op,
    .scratch_raw = host_op_scratch_raw,
    .compute_units = host_op_compute_units,
    .launch_early = host_op_launch_early,
    .overlap = host_op_overlap,
};

HK_API int hk_plugin_call_op(hk_context *ctx, const char *family, const char *op,
                             const hk_arg *args, int nargs)
{
    if (!ctx || !family || !op || (nargs && !args))
        return hkc_fail(ctx, HK_EINVAL, "hk_plugin_call_op: NULL argument");
    int fi = hk_plugin_find(ctx, family);
    if (fi < 0)
        return fi;
    const pl_family *f = ctx->plugins->fams[fi];
    for (int i = 0; i < f->nops; i++) {
        if (strcmp(f->ops[i].name, op))
            continue;
        for (int a = 0; a < nargs; a++)
            if (args[a].kind == HK_ARG_BUFFER && !args[a].v.buf)
                return hkc_fail(ctx, HK_EARG, "%s.%s: argument %d is a NULL buffer", family, op, a + 1);
        hkc_scratch_list scratch = {.n = 0};
        hk_plugin_call call = {ctx, f, &f->ops[i], &scratch, args, nargs};
        hkc_last_fail_reset();
        int r = f->ops[i].fn(&host_table, &call, (const hk_plugin_arg *)(const void *)args, nargs);
        /* A plugin says "failed" with -1; the message it left has the code.
         * One that failed without a message (no host->fail, no failed launch)
         * must not show whatever message an earlier call left. */
        if (r == -1 && hkc_last_fail_code() < 0)
            r = hkc_last_fail_code();
        else if (r < 0 && hkc_last_fail_code() == 0)
            r = hkc_fail(ctx, r, "%s.%s failed (%s) without saying why", family, op, hk_errname(r));
        r = read_flags_now(&call, r);
        hkc_plugin_scratch_release(ctx, &scratch);
        return r > 0 ? hkc_fail(ctx, HK_EBACKEND, "%s.%s returned %d", family, op, r) : r;
    }
    return hkc_fail(ctx, HK_ENOTFOUND, "family '%s' has no op '%s'", family, op);
}
