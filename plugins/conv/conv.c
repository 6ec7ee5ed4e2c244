/* The conv family: convolutions (1-D and 2-D, grouped, strided, padded,
 * dilated, transposed), im2col / col2im, pools, nearest upsampling and
 * strided 2-D copies over contiguous NCHW tensors, f32 f64 f16 bf16
 * (kernels/conv/conv.hip, embedded at build time). The ops take the shapes
 * as tables and the geometry as integers or tables, check every operand
 * against them and launch; conv2d and conv1d run as an implicit GEMM on a
 * GPU (docs/families/conv.md). */
#include <hipkit/plugin.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_conv_sources[];
extern const hk_plugin_image hk_conv_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(conv);
HK_PLUGIN_EXPORT int hk_plugin_conv_init(const hk_plugin_api *api);

static const struct { const char *name, *c; int size; } dtypes[] = {
    {"f32", "float", 4}, {"f64", "double", 8}, {"f16", "__half", 2}, {"bf16", "__hip_bfloat16", 2}};
#define NDTYPES 4

#define THREADS 256

/* One convolution's geometry, in the kernels' argument order. */
typedef struct {
    long long n, c, h, wd, k, r, s, oh, ow, sh, sw, ph, pw, dh, dw, groups;
} geom;

static int is_buffer(const hk_plugin_arg *a) { return a->kind == HK_PLUGIN_ARG_BUFFER; }

/* The first nbuf arguments must be buffers of one float dtype, the first
 * (the output) apart from the others: its index in dtypes, or -1 with the
 * call failed. */
static int buffers(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs,
                   int nbuf, const char *const *names)
{
    if (nargs < nbuf)
        return host->fail(call, "expects %d buffers first; got %d arguments", nbuf, nargs), -1;
    for (int i = 0; i < nbuf; i++)
        if (!is_buffer(&args[i]))
            return host->fail(call, "%s (argument %d) must be a buffer", names[i], i + 1), -1;
    const char *t = host->dtype(call, args[0].v.buf);
    int d = 0;
    while (d < NDTYPES && !(t && !strcmp(t, dtypes[d].name)))
        d++;
    if (d == NDTYPES)
        return host->fail(call, "%s is %s; the dtypes are f32 f64 f16 bf16", names[0], t ? t : "?"), -1;
    for (int i = 1; i < nbuf; i++) {
        const char *u = host->dtype(call, args[i].v.buf);
        if (!u || strcmp(u, t))
            return host->fail(call, "%s is %s but %s is %s; they must match", names[i], u ? u : "?", names[0], t),
                   -1;
    }
    /* the first buffer is the one written: sharing memory with an input
     * would read values the op has already overwritten */
    for (int i = 1; i < nbuf; i++)
        if (hk_plugin_apart(host, call, args[0].v.buf, names[0], args[i].v.buf, names[i]) != 0)
            return -1;
    return d;
}

/* The argument number the caller wrote for flat position pos (errors name
 * it): before the geometry only buffers and shape tables come, a table
 * arriving as its length and its elements. */
static int user_arg(const hk_plugin_arg *args, int pos)
{
    int n = 0;
    for (int p = 0; p < pos; n++) {
        long long len = args[p].kind == HK_PLUGIN_ARG_INT ? args[p].v.i : 0;
        p += len >= 0 && len < pos - p ? 1 + (int)len : pos - p;
    }
    return n + 1;
}

/* A shape table at *pos: its length (which must be rank), then rank
 * integers >= 1 and < 2^31. */
static int read_shape(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                      int nargs, int *pos, const char *name, const char *form, int rank, long long *out)
{
    int p = *pos;
    if (p >= nargs || args[p].kind != HK_PLUGIN_ARG_INT || args[p].v.i != rank || p + rank >= nargs)
        return host->fail(call, "%s (argument %d) must be a table of %d integers %s", name, user_arg(args, p), rank,
                          form);
    for (int i = 0; i < rank; i++) {
        const hk_plugin_arg *a = &args[p + 1 + i];
        if (a->kind != HK_PLUGIN_ARG_INT || a->v.i < 1 || a->v.i > INT_MAX)
            return host->fail(call, "%s %s: element %d must be an integer in [1, 2^31)", name, form, i + 1);
        out[i] = a->v.i;
    }
    *pos = p + 1 + rank;
    return 0;
}

/* The geometry values after the shapes: nv values (names), each one
 * integer (the same along every one of dims dimensions) or, all of them,
 * tables of dims integers; then between emin and emax plain integers
 * (extras; those not given keep their value). A table arrives as its
 * length and its elements, so "all integers" and "all tables" are told
 * apart by the count. */
static int read_geom(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                     int nargs, int pos, const char *const *names, int nv_min, int nv, int dims, int emin,
                     int emax, long long val[][2], long long *extra)
{
    int rest = nargs - pos, got = -1, tables = 0, first = user_arg(args, pos);
    for (int v = nv_min; v <= nv && got < 0; v++)
        for (int e = emin; e <= emax && got < 0; e++) {
            if (rest == v + e)
                got = v, tables = 0;
            else if (dims > 1 && rest == v * (dims + 1) + e)
                got = v, tables = 1;
        }
    if (got < 0)
        return host->fail(call, "expects %d to %d geometry values (%s, ...: all integers, or all tables of %d) "
                          "and %d to %d integers after the shapes; got %d arguments there",
                          nv_min, nv, names[0], dims, emin, emax, rest);
    for (int v = 0; v < got; v++) {
        const hk_plugin_arg *a = &args[pos];
        if (a->kind != HK_PLUGIN_ARG_INT || (tables && a->v.i != dims))
            return host->fail(call, "%s (argument %d) must be %s", names[v], first + v,
                              tables ? "a table of 2 integers {h, w}" : "an integer");
        for (int d = 0; d < dims; d++) {
            const hk_plugin_arg *b = &args[pos + (tables ? 1 + d : 0)];
            if (b->kind != HK_PLUGIN_ARG_INT || b->v.i < 0 || b->v.i > INT_MAX)
                return host->fail(call, "%s must hold integers in [0, 2^31)", names[v]);
            val[v][d] = b->v.i;
        }
        pos += tables ? dims + 1 : 1;
    }
    for (int e = 0; pos < nargs; e++, pos++) {
        if (args[pos].kind != HK_PLUGIN_ARG_INT)
            return host->fail(call, "%s (argument %d) must be an integer", names[nv + e], first + got + e);
        extra[e] = args[pos].v.i;
    }
    return 0;
}

/* A tensor's buffer holds exactly its shape's elements: a longer one is
 * most often a shape worked out wrong (ceil mode, a missed padding), and
 * the op would leave its tail as it was. A strided region (copy2d) needs
 * at least its extent: check_extent. */
static int check_len(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *a,
                     const char *name, long long need)
{
    size_t have = host->length(call, a->v.buf);
    if ((unsigned long long)have != (unsigned long long)need)
        return host->fail(call, "%s has %zu elements; its shape needs %lld%s", name, have, need,
                          (unsigned long long)have > (unsigned long long)need
                              ? " (for part of a buffer, pass a view: b:view(dtype, offset, count))"
                              : "");
    return 0;
}
static int check_extent(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *a,
                        const char *name, long long need)
{
    size_t have = host->length(call, a->v.buf);
    if ((unsigned long long)have < (unsigned long long)need)
        return host->fail(call, "%s has %zu elements; its rows need %lld", name, have, need);
    return 0;
}

/* A grid-stride kernel over total outputs: blocks of 256, as many as
 * cover them up to 2^16 (each thread then loops). */
static int launch_steps(const hk_plugin_host *host, const hk_plugin_call *call, const char *op, int d,
                        hk_plugin_arg *a, int n, long long total)
{
    char kernel[64];
    snprintf(kernel, sizeof kernel, "%s_%s", op, dtypes[d].name);
    long long blocks = (total + THREADS - 1) / THREADS;
    hk_plugin_config cfg = {{(unsigned)(blocks < 1 ? 1 : blocks > 65536 ? 65536 : blocks), 1, 1}, {THREADS, 1, 1},
                            0};
    return host->launch_config(call, kernel, &cfg, a, n);
}

/* The row kernels (im2col, upsampling): lanes along a row of rowlen
 * elements, 4 a lane (a power of two up to 256), 256 / lanes rows a block;
 * on the CPU backend one lane, so an iteration writes a whole row. */
static int launch_rows(const hk_plugin_host *host, const hk_plugin_call *call, const char *op, int d,
                       hk_plugin_arg *a, int n, long long rows, long long rowlen)
{
    char kernel[64];
    snprintf(kernel, sizeof kernel, "%s_%s", op, dtypes[d].name);
    unsigned lanes = 1;
    int cpu = HK_PLUGIN_HOST_HAS(host, backend) && !strcmp(host->backend(call), "host");
    while (!cpu && lanes < 256 && 4 * (long long)lanes < rowlen)
        lanes *= 2;
    long long per = THREADS / lanes, blocks = (rows + per - 1) / per;
    hk_plugin_config cfg = {{(unsigned)(blocks < 1 ? 1 : blocks > (1 << 20) ? (1 << 20) : blocks), 1, 1},
                            {lanes, (unsigned)per, 1}, 0};
    return host->launch_config(call, kernel, &cfg, a, n);
}

/* The geometry arguments of im2col and unfold, after x and col. */
static void patch_args(hk_plugin_arg *a, const geom *g)
{
    long long ints[14] = {g->n, g->c, g->h, g->wd, g->r, g->s, g->oh, g->ow, g->sh, g->sw, g->ph, g->pw, g->dh, g->dw};
    for (int i = 0; i < 14; i++)
        a[2 + i] = hk_plugin_int_arg(ints[i]);
}

/* im2col of x into col ({n, oh, ow, c, r, s}). GPUs: tiles of I2C_TILE
 * pixels (the kernel's HKC_I2C_TILE) through shared memory when the rows
 * they read fit in 44 KiB (the kernel adds a 4 KiB table; 48 in all)
 * (im2col_tiled), a block a tile (fewer blocks taking several tiles each
 * measured slower on the H100); the CPU and larger cases: rows. */
#define I2C_TILE 28
static int launch_im2col(const hk_plugin_host *host, const hk_plugin_call *call, int d, const geom *g,
                         hk_plugin_arg x, hk_plugin_arg col)
{
    hk_plugin_arg a[16] = {x, col};
    patch_args(a, g);
    long long span = (I2C_TILE - 1) * g->sw + (g->s - 1) * g->dw + 1, smem = g->c * g->r * span * dtypes[d].size;
    int cpu = HK_PLUGIN_HOST_HAS(host, backend) && !strcmp(host->backend(call), "host");
    if (!cpu && smem <= 44 * 1024) { /* with its 4 KiB table of tap offsets, within 48 KiB */
        long long tiles = g->n * g->oh * ((g->ow + I2C_TILE - 1) / I2C_TILE);
        hk_plugin_config cfg = {{(unsigned)(tiles > (1 << 20) ? (1 << 20) : tiles), 1, 1}, {THREADS, 1, 1},
                                (unsigned)smem};
        char kernel[64];
        snprintf(kernel, sizeof kernel, "im2col_tiled_%s", dtypes[d].name);
        return host->launch_config(call, kernel, &cfg, a, 16);
    }
    return launch_rows(host, call, "im2col", d, a, 16, g->n * g->oh * g->ow, g->c * g->r * g->s);
}

/* unfold of x into col ({n, c, r, s, oh, ow}). GPUs: a block a plane
 * through shared memory (unfold_tiled) when the padded window its taps read
 * fits in 48 KiB; the CPU and larger planes: rows. */
static int launch_unfold(const hk_plugin_host *host, const hk_plugin_call *call, int d, const geom *g,
                         hk_plugin_arg x, hk_plugin_arg col)
{
    hk_plugin_arg a[16] = {x, col};
    patch_args(a, g);
    long long hp = (g->oh - 1) * g->sh + (g->r - 1) * g->dh + 1, wp = (g->ow - 1) * g->sw + (g->s - 1) * g->dw + 1;
    long long e = 16 / dtypes[d].size, pitch = (wp + e - 1) / e * e; /* rows padded to 16 bytes, and 16 past */
    long long smem = (hp * pitch + e) * dtypes[d].size, planes = g->n * g->c;
    int cpu = HK_PLUGIN_HOST_HAS(host, backend) && !strcmp(host->backend(call), "host");
    if (!cpu && smem <= 48 * 1024) {
        hk_plugin_config cfg = {{(unsigned)(planes > (1 << 20) ? (1 << 20) : planes), 1, 1}, {THREADS, 1, 1},
                                (unsigned)smem};
        char kernel[64];
        snprintf(kernel, sizeof kernel, "unfold_tiled_%s", dtypes[d].name);
        return host->launch_config(call, kernel, &cfg, a, 16);
    }
    return launch_rows(host, call, "unfold", d, a, 16, g->n * g->c * g->r * g->s, g->oh * g->ow);
}

/* Output extent of a convolution along one dimension, or -1. */
static long long conv_out(long long in, long long k, long long stride, long long pad, long long dil)
{
    long long span = dil * (k - 1) + 1;
    if (stride < 1) /* check_geom says so; no division by it here */
        return -1;
    return in + 2 * pad < span ? -1 : (in + 2 * pad - span) / stride + 1;
}

/* The common checks of a convolution: positive strides and dilations,
 * channels that split into the groups, the output size; xs is
 * {n, c, h, wd}. */
static int check_geom(const hk_plugin_host *host, const hk_plugin_call *call, geom *g)
{
    if (g->sh < 1 || g->sw < 1)
        return host->fail(call, "stride must be at least 1");
    if (g->dh < 1 || g->dw < 1)
        return host->fail(call, "dilation must be at least 1");
    if (g->groups < 1 || g->c % g->groups || g->k % g->groups)
        return host->fail(call, "groups %lld must be at least 1 and divide the %lld input and %lld output channels",
                          g->groups, g->c, g->k);
    if (g->oh < 1 || g->ow < 1 || g->oh > INT_MAX || g->ow > INT_MAX)
        return host->fail(call, "the kernel (%lld x %lld, dilation %lld x %lld) does not fit the padded input "
                          "(%lld x %lld, padding %lld x %lld)", g->r, g->s, g->dh, g->dw, g->h, g->wd, g->ph,
                          g->pw);
    /* the kernels keep a plane's pixels and a group's (channel, tap) rows
     * in int */
    if (g->oh * g->ow > INT_MAX || g->h * g->wd > INT_MAX || g->c / g->groups * g->r * g->s > INT_MAX)
        return host->fail(call, "a plane (%lld x %lld in, %lld x %lld out) or a group's taps exceed 2^31 - 1",
                          g->h, g->wd, g->oh, g->ow);
    return 0;
}

/* The arguments of a convolution kernel: x, w, y, then the geometry. */
static int launch_conv(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                       const char *kernel, int d, const geom *g, int tiled)
{
    hk_plugin_arg a[19] = {args[1], args[2], args[0]};
    const long long *v = &g->n;
    for (int i = 0; i < 16; i++)
        a[3 + i] = hk_plugin_int_arg(v[i]);
    if (!tiled)
        return launch_steps(host, call, kernel, d, a, 19, g->n * g->k * g->oh * g->ow);
    char name[64];
    snprintf(name, sizeof name, "%s_%s", kernel, dtypes[d].name);
    long long kg = g->k / g->groups, tiles = (g->n * g->oh * g->ow + 127) / 128;
    if (tiles > INT_MAX || (kg + 63) / 64 > 65535 || g->groups > 65535)
        return host->fail(call, "the output is too large for one launch (%lld pixel tiles, %lld channel tiles, "
                          "%lld groups)", tiles, (kg + 63) / 64, g->groups);
    hk_plugin_config cfg = {{(unsigned)tiles, (unsigned)((kg + 63) / 64), (unsigned)g->groups}, {THREADS, 1, 1}, 0};
    return host->launch_config(call, name, &cfg, a, 19);
}

/* The columns of the GEMM route stay under this many bytes of scratch. */
#define COL_BYTES_MAX ((long long)1 << 30)

/* Whether the GEMM route (algo 3) can take g: NCHW, one group, a batch the
 * gemm family takes, columns that fit COL_BYTES_MAX, a host that calls ops. */
static int gemm_route_fits(const hk_plugin_host *host, const geom *g, int d, int nhwc)
{
    return !nhwc && g->groups == 1 && g->n <= 65535 && HK_PLUGIN_HOST_HAS(host, scratch_raw) &&
           g->n * g->oh * g->ow * g->c * g->r * g->s * dtypes[d].size <= COL_BYTES_MAX;
}

/* algo 3: the columns (unfold, in scratch: taps x pixels an image), then
 * per image out (k x pixels) = w (k x taps) . col by the gemm family, whose
 * half-precision products run on tensor cores (mma / MFMA); both operands
 * row-major, the layout its 16-byte loads take. */
static int conv_by_gemm(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int d,
                        const geom *g)
{
    long long pix = g->oh * g->ow, taps = g->c * g->r * g->s;
    hk_plugin_arg col = {HK_PLUGIN_ARG_BUFFER, {0}};
    col.v.buf = host->scratch_raw(call, dtypes[d].name, (size_t)(g->n * pix * taps)); /* unfold writes it all */
    if (!col.v.buf)
        return -1; /* the call is failed already */
    int r = launch_unfold(host, call, d, g, args[1], col);
    if (r != 0)
        return r;
    hk_plugin_arg m[17] = {args[0], args[2], col, hk_plugin_int_arg(g->k), hk_plugin_int_arg(pix), hk_plugin_int_arg(taps), hk_plugin_int_arg(0), hk_plugin_int_arg(0)};
    m[6].kind = m[7].kind = HK_PLUGIN_ARG_BOOL;
    m[8].kind = m[9].kind = HK_PLUGIN_ARG_FLOAT;
    m[8].v.f = 1.0, m[9].v.f = 0.0;
    long long tail[7] = {taps, pix, pix, g->n, 0, pix * taps, g->k * pix};
    for (int i = 0; i < 7; i++)
        m[10 + i] = hk_plugin_int_arg(tail[i]);
    return host->call_op(call, "gemm", "matmul", m, 17);
}

/* conv2d / conv1d / conv2d_nhwc(out, x, w, xshape, wshape, stride, padding,
 * dilation, groups, [algo]); rank 3 is the 1-D form (height 1). */
static int conv_op(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs,
                   int rank, int nhwc)
{
    static const char *const bufs[] = {"out", "x", "w"};
    static const char *const names[] = {"stride", "padding", "dilation", "groups", "algo"};
    int d = buffers(host, call, args, nargs, 3, bufs), pos = 3;
    if (d < 0)
        return -1;
    long long xs[4], ws[4], val[3][2], extra[2] = {1, 0};
    const char *xf = rank == 3 ? "{n, c, l}" : nhwc ? "{n, h, w, c}" : "{n, c, h, w}";
    const char *wf = rank == 3 ? "{k, c / groups, kl}" : nhwc ? "{k, r, s, c / groups}" : "{k, c / groups, r, s}";
    int r = read_shape(host, call, args, nargs, &pos, "xshape", xf, rank, xs);
    if (r == 0)
        r = read_shape(host, call, args, nargs, &pos, "wshape", wf, rank, ws);
    if (r == 0)
        r = read_geom(host, call, args, nargs, pos, names, 3, 3, rank - 2, 1, 2, val, extra);
    if (r != 0)
        return r;
    int two = rank == 4;
    geom g = {xs[0], nhwc ? xs[3] : xs[1], two ? (nhwc ? xs[1] : xs[2]) : 1, two ? (nhwc ? xs[2] : xs[3]) : xs[2],
              ws[0], two ? (nhwc ? ws[1] : ws[2]) : 1, two ? (nhwc ? ws[2] : ws[3]) : ws[2], 0, 0,
              two ? val[0][0] : 1, val[0][two], two ? val[1][0] : 0, val[1][two], two ? val[2][0] : 1, val[2][two],
              extra[0]};
    g.oh = conv_out(g.h, g.r, g.sh, g.ph, g.dh), g.ow = conv_out(g.wd, g.s, g.sw, g.pw, g.dw);
    if ((r = check_geom(host, call, &g)) != 0)
        return r;
    long long cg = nhwc ? ws[3] : ws[1];
    if (cg * g.groups != g.c)
        return host->fail(call, "w has %lld input channels per group; x's %lld channels in %lld groups need %lld",
                          cg, g.c, g.groups, g.c / g.groups);
    if ((r = check_len(host, call, &args[1], "x", g.n * g.c * g.h * g.wd)) ||
        (r = check_len(host, call, &args[2], "w", g.k * cg * g.r * g.s)) ||
        (r = check_len(host, call, &args[0], "out", g.n * g.k * g.oh * g.ow)))
        return r;
    /* algo 0 picks the GEMM route (im2col + gemm.matmul) for half types,
     * whose products then run on tensor cores, and where the output
     * channels fill the gemm's 128-row tiles; else the implicit GEMM on
     * every backend: even on the CPU, whose fibers pay for its block
     * synchronisations, it ran twice as fast as the direct loop
     * (scripts-lua/bench/conv.lua small) */
    if (extra[1] < 0 || extra[1] > 3 || (nhwc && extra[1] == 1))
        return host->fail(call, "algo must be 0 (pick), 1 (direct), 2 (implicit GEMM) or 3 (im2col + gemm)%s; "
                          "got %lld", nhwc ? " and is 0 or 2 for NHWC" : "", extra[1]);
    int fits = gemm_route_fits(host, &g, d, nhwc), half = d >= 2;
    if (extra[1] == 3 && !fits)
        return host->fail(call, "algo 3 (im2col + gemm) takes NCHW, one group, at most 65535 images and columns "
                          "of at most 1 GiB");
    if (extra[1] == 3 || (extra[1] == 0 && fits && (half || g.k >= 128)))
        return conv_by_gemm(host, call, args, d, &g);
    int tiled = extra[1] != 1;
    return launch_conv(host, call, args, nhwc ? "conv2d_nhwc" : tiled ? "conv2d" : "conv2d_direct", d, &g, tiled);
}

static int op_conv2d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    return conv_op(host, call, args, nargs, 4, 0);
}
static int op_conv2d_nhwc(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                          int nargs)
{
    return conv_op(host, call, args, nargs, 4, 1);
}
static int op_conv1d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    return conv_op(host, call, args, nargs, 3, 0);
}

/* conv_transpose2d / 1d(out, x, w, xshape, wshape, stride, padding,
 * output_padding, dilation, groups); w is {c, k / groups, r, s}. */
static int transpose_op(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                        int nargs, int rank)
{
    static const char *const bufs[] = {"out", "x", "w"};
    static const char *const names[] = {"stride", "padding", "output_padding", "dilation", "groups"};
    int d = buffers(host, call, args, nargs, 3, bufs), pos = 3;
    if (d < 0)
        return -1;
    long long xs[4], ws[4], v[4][2], extra[1] = {1};
    int two = rank == 4, r = read_shape(host, call, args, nargs, &pos, "xshape", two ? "{n, c, h, w}" : "{n, c, l}",
                                         rank, xs);
    if (r == 0)
        r = read_shape(host, call, args, nargs, &pos, "wshape", two ? "{c, k / groups, r, s}" : "{c, k / groups, kl}",
                       rank, ws);
    if (r == 0)
        r = read_geom(host, call, args, nargs, pos, names, 4, 4, rank - 2, 1, 1, v, extra);
    if (r != 0)
        return r;
    geom g = {xs[0], xs[1], two ? xs[2] : 1, xs[rank - 1], ws[1] * extra[0], two ? ws[2] : 1, ws[rank - 1], 0, 0,
              two ? v[0][0] : 1, v[0][two], two ? v[1][0] : 0, v[1][two], two ? v[3][0] : 1, v[3][two], extra[0]};
    long long oph = two ? v[2][0] : 0, opw = v[2][two];
    if ((oph >= g.sh && oph >= g.dh) || (opw >= g.sw && opw >= g.dw))
        return host->fail(call, "output_padding must be smaller than the stride or the dilation");
    g.oh = (g.h - 1) * g.sh - 2 * g.ph + g.dh * (g.r - 1) + oph + 1;
    g.ow = (g.wd - 1) * g.sw - 2 * g.pw + g.dw * (g.s - 1) + opw + 1;
    if ((r = check_geom(host, call, &g)) != 0)
        return r;
    if (ws[0] != g.c)
        return host->fail(call, "w has %lld input channels (wshape[1]); x has %lld", ws[0], g.c);
    if ((r = check_len(host, call, &args[1], "x", g.n * g.c * g.h * g.wd)) ||
        (r = check_len(host, call, &args[2], "w", g.c * ws[1] * g.r * g.s)) ||
        (r = check_len(host, call, &args[0], "out", g.n * g.k * g.oh * g.ow)))
        return r;
    return launch_conv(host, call, args, "conv_transpose2d", d, &g, 0);
}

static int op_conv_transpose2d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                               int nargs)
{
    return transpose_op(host, call, args, nargs, 4);
}
static int op_conv_transpose1d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                               int nargs)
{
    return transpose_op(host, call, args, nargs, 3);
}

/* im2col / im2col1d(out, x, xshape, kernel, stride, padding, dilation):
 * out is {n, oh, ow, c, r, s} ({n, l_out, c, kl}). */
static int im2col_op(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs,
                     int rank)
{
    static const char *const bufs[] = {"out", "x"};
    static const char *const names[] = {"kernel", "stride", "padding", "dilation"};
    int d = buffers(host, call, args, nargs, 2, bufs), pos = 2, two = rank == 4;
    if (d < 0)
        return -1;
    long long xs[4], v[4][2];
    int r = read_shape(host, call, args, nargs, &pos, "xshape", two ? "{n, c, h, w}" : "{n, c, l}", rank, xs);
    if (r == 0)
        r = read_geom(host, call, args, nargs, pos, names, 4, 4, rank - 2, 0, 0, v, NULL);
    if (r != 0)
        return r;
    geom g = {xs[0], xs[1], two ? xs[2] : 1, xs[rank - 1], xs[1], two ? v[0][0] : 1, v[0][two], 0, 0,
              two ? v[1][0] : 1, v[1][two], two ? v[2][0] : 0, v[2][two], two ? v[3][0] : 1, v[3][two], 1};
    if (g.r < 1 || g.s < 1)
        return host->fail(call, "kernel must be at least 1");
    g.oh = conv_out(g.h, g.r, g.sh, g.ph, g.dh), g.ow = conv_out(g.wd, g.s, g.sw, g.pw, g.dw);
    long long total = g.n * g.oh * g.ow * g.c * g.r * g.s;
    if ((r = check_geom(host, call, &g)) || (r = check_len(host, call, &args[1], "x", g.n * g.c * g.h * g.wd)) ||
        (r = check_len(host, call, &args[0], "out", total)))
        return r;
    return launch_im2col(host, call, d, &g, args[1], args[0]);
}

static int op_im2col(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    return im2col_op(host, call, args, nargs, 4);
}
static int op_im2col1d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    return im2col_op(host, call, args, nargs, 3);
}

/* col2im1d(out, x, xshape {n, l_in, c, k}, stride): out {n, c, (l_in - 1)
 * stride + k}. */
static int op_col2im1d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    static const char *const bufs[] = {"out", "x"};
    static const char *const names[] = {"stride"};
    int d = buffers(host, call, args, nargs, 2, bufs), pos = 2;
    if (d < 0)
        return -1;
    long long xs[4], v[1][2];
    int r = read_shape(host, call, args, nargs, &pos, "xshape", "{n, l_in, c, k}", 4, xs);
    if (r == 0)
        r = read_geom(host, call, args, nargs, pos, names, 1, 1, 1, 0, 0, v, NULL);
    if (r != 0)
        return r;
    long long lout = (xs[1] - 1) * v[0][0] + xs[3];
    if (v[0][0] < 1 || lout > INT_MAX)
        return host->fail(call, "stride must be in [1, 2^31) with an output shorter than 2^31");
    if ((r = check_len(host, call, &args[1], "x", xs[0] * xs[1] * xs[2] * xs[3])) ||
        (r = check_len(host, call, &args[0], "out", xs[0] * xs[2] * lout)))
        return r;
    hk_plugin_arg a[8] = {args[1], args[0], hk_plugin_int_arg(xs[0]), hk_plugin_int_arg(xs[1]), hk_plugin_int_arg(xs[2]), hk_plugin_int_arg(xs[3]), hk_plugin_int_arg(lout),
                          hk_plugin_int_arg(v[0][0])};
    return launch_steps(host, call, "col2im1d", d, a, 8, xs[0] * xs[2] * lout);
}

/* avg_pool2d / max_pool2d(out, x, xshape, kernel, [stride]) (stride
 * defaults to the kernel); upsample_nearest2d / 1d(out, x, xshape, size). */
static int plane_op(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs,
                    const char *kernel, int rank)
{
    static const char *const bufs[] = {"out", "x"};
    static const char *const pool[] = {"kernel", "stride"}, *const up[] = {"size"};
    int d = buffers(host, call, args, nargs, 2, bufs), pos = 2, two = rank == 4, ups = kernel[0] == 'u';
    if (d < 0)
        return -1;
    long long xs[4], v[2][2] = {{0, 0}, {-1, -1}};
    int r = read_shape(host, call, args, nargs, &pos, "xshape", two ? "{n, c, h, w}" : "{n, c, l}", rank, xs);
    if (r == 0)
        r = read_geom(host, call, args, nargs, pos, ups ? up : pool, 1, ups ? 1 : 2, rank - 2, 0, 0, v, NULL);
    if (r != 0)
        return r;
    long long h = two ? xs[2] : 1, wd = xs[rank - 1], kh = two ? v[0][0] : 1, kw = v[0][two], oh = kh, ow = kw;
    long long sh = v[1][0] < 0 ? kh : v[1][0], sw = v[1][two] < 0 ? kw : v[1][two];
    if (!two)
        sh = 1;
    if (kh < 1 || kw < 1 || sh < 1 || sw < 1)
        return host->fail(call, "%s must be at least 1", ups ? "size" : "kernel and stride");
    if (!ups) {
        if (kh > h || kw > wd)
            return host->fail(call, "kernel %lld x %lld is larger than the input %lld x %lld", kh, kw, h, wd);
        oh = (h - kh) / sh + 1, ow = (wd - kw) / sw + 1;
    }
    long long planes = xs[0] * xs[1];
    if ((r = check_len(host, call, &args[1], "x", planes * h * wd)) ||
        (r = check_len(host, call, &args[0], "out", planes * oh * ow)))
        return r;
    hk_plugin_arg a[11] = {args[1], args[0], hk_plugin_int_arg(planes), hk_plugin_int_arg(h), hk_plugin_int_arg(wd)};
    if (ups) {
        a[5] = hk_plugin_int_arg(oh), a[6] = hk_plugin_int_arg(ow);
        a[7].kind = a[8].kind = HK_PLUGIN_ARG_FLOAT;
        a[7].v.f = (double)h / (double)oh, a[8].v.f = (double)wd / (double)ow;
        return launch_rows(host, call, kernel, d, a, 9, planes * oh, ow);
    }
    long long ints[6] = {kh, kw, sh, sw, oh, ow};
    for (int i = 0; i < 6; i++)
        a[5 + i] = hk_plugin_int_arg(ints[i]);
    return launch_rows(host, call, kernel, d, a, 11, planes * oh, ow);
}

static int op_avg_pool2d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                         int nargs)
{
    return plane_op(host, call, args, nargs, "avg_pool2d", 4);
}
static int op_max_pool2d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                         int nargs)
{
    return plane_op(host, call, args, nargs, "max_pool2d", 4);
}
static int op_upsample2d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                         int nargs)
{
    return plane_op(host, call, args, nargs, "upsample_nearest2d", 4);
}
static int op_upsample1d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                         int nargs)
{
    return plane_op(host, call, args, nargs, "upsample_nearest2d", 3);
}

/* copy2d(dst, src, d1, d2, src_stride, dst_stride) */
static int op_copy2d(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args, int nargs)
{
    static const char *const bufs[] = {"dst", "src"};
    static const char *const names[] = {"d1", "d2", "src_stride", "dst_stride"};
    int d = buffers(host, call, args, nargs, 2, bufs);
    if (d < 0)
        return -1;
    long long v[4][2];
    int r = read_geom(host, call, args, nargs, 2, names, 4, 4, 1, 0, 0, v, NULL);
    if (r != 0)
        return r;
    long long d1 = v[0][0], d2 = v[1][0], ss = v[2][0], ds = v[3][0];
    if (d1 == 0 || d2 == 0)
        return 0;
    if (ss < d2 || ds < d2)
        return host->fail(call, "the strides (%lld, %lld) must be at least d2 = %lld", ss, ds, d2);
    if ((r = check_extent(host, call, &args[1], "src", (d1 - 1) * ss + d2)) ||
        (r = check_extent(host, call, &args[0], "dst", (d1 - 1) * ds + d2)))
        return r;
    hk_plugin_arg a[6] = {args[1], args[0], hk_plugin_int_arg(d1), hk_plugin_int_arg(d2), hk_plugin_int_arg(ss), hk_plugin_int_arg(ds)};
    return launch_steps(host, call, "copy2d", d, a, 6, d1 * d2);
}

#define GEOM_SIG                                                                                              \
    "int n, int c, int h, int wd, int k, int r, int s, int oh, int ow, int sh, int sw, int ph, int pw, int dh, " \
    "int dw, int groups"

static int add_kernels(const hk_plugin_api *api)
{
    static const struct { const char *name, *sig, *doc; } ks[] = {
        {"conv2d", "const T *x, const T *w, T *y, " GEOM_SIG,
         "implicit-GEMM convolution, NCHW, 64x128 tiles; block 256, grid {ceil(n oh ow/128), ceil(k/groups/64), "
         "groups} (hk.ops.conv.conv2d)"},
        {"conv2d_nhwc", "const T *x, const T *w, T *y, " GEOM_SIG,
         "implicit-GEMM convolution, NHWC (w k r s c/groups); the grid of conv2d"},
        {"conv2d_direct", "const T *x, const T *w, T *y, " GEOM_SIG, "direct convolution, NCHW, grid stride"},
        {"conv_transpose2d", "const T *x, const T *w, T *y, " GEOM_SIG,
         "transposed convolution, NCHW, w c (k/groups) r s, grid stride"},
        {"im2col", "const T *x, T *col, int n, int c, int h, int wd, int r, int s, int oh, int ow, int sh, int sw, "
                   "int ph, int pw, int dh, int dw",
         "patches of x as col n oh ow c r s; rows: lanes along a row, 4 elements a lane, 256 / lanes rows a block "
         "(any grid)"},
        {"im2col_tiled", "const T *x, T *col, int n, int c, int h, int wd, int r, int s, int oh, int ow, int sh, "
                         "int sw, int ph, int pw, int dh, int dw",
         "im2col through shared memory: a block per tile of 28 pixels of an output row (grid stride), shared = "
         "c r ((28 - 1) sw + (s - 1) dw + 1) elements"},
        {"unfold", "const T *x, T *col, int n, int c, int h, int wd, int r, int s, int oh, int ow, int sh, int sw, "
                   "int ph, int pw, int dh, int dw",
         "patches of x as col n c r s (oh ow) (PyTorch's unfold; conv's GEMM route); rows as im2col"},
        {"unfold_tiled", "const T *x, T *col, int n, int c, int h, int wd, int r, int s, int oh, int ow, int sh, "
                         "int sw, int ph, int pw, int dh, int dw",
         "unfold through shared memory: a block per input plane (grid stride), shared = (hp pitch + E) elements, "
         "hp = (oh - 1) sh + (r - 1) dh + 1, pitch = (ow - 1) sw + (s - 1) dw + 1 rounded up to E = 16 bytes; "
         "16-byte stores"},
        {"col2im1d", "const T *x, T *y, int n, int lin, int c, int k, int lout, int stride",
         "x n lin c k summed into y n c lout, grid stride"},
        {"avg_pool2d", "const T *x, T *y, long long planes, int h, int wd, int kh, int kw, int sh, int sw, int oh, "
                       "int ow", "average pool, no padding; rows (as im2col)"},
        {"max_pool2d", "const T *x, T *y, long long planes, int h, int wd, int kh, int kw, int sh, int sw, int oh, "
                       "int ow", "max pool (NaN propagates), no padding; rows (as im2col)"},
        {"upsample_nearest2d", "const T *x, T *y, long long planes, int h, int wd, int oh, int ow, double sch, "
                               "double scw", "nearest upsampling, source min(floor(i scale), size - 1); rows (as im2col)"},
        {"copy2d", "const T *src, T *dst, int d1, int d2, long long ss, long long ds",
         "dst[i ds + j] = src[i ss + j], grid stride"},
    };
    hk_plugin_rule rule = {sizeof rule, {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0}, 0, 0, 0, NULL, 0};
    char name[64], sig[512];
    int r = 0;
    for (size_t k = 0; r == 0 && k < sizeof ks / sizeof ks[0]; k++)
        for (int d = 0; r == 0 && d < NDTYPES; d++) {
            snprintf(name, sizeof name, "%s_%s", ks[k].name, dtypes[d].name);
            /* the signature with T spelled as the dtype's C type */
            size_t o = 0;
            for (const char *p = ks[k].sig; *p && o + 32 < sizeof sig; p++) {
                if (*p == 'T' && (p[1] == ' ' || p[1] == '*'))
                    o += (size_t)snprintf(sig + o, sizeof sig - o, "%s", dtypes[d].c);
                else
                    sig[o++] = *p;
            }
            sig[o] = 0;
            r = api->add_kernel_rule(api, "conv", "conv.hip", name, sig, &rule, ks[k].doc);
        }
    return r;
}

static int add_ops(const hk_plugin_api *api)
{
    static const struct {
        const char *name, *usage, *doc;
        int (*fn)(const hk_plugin_host *, const hk_plugin_call *, const hk_plugin_arg *, int);
    } ops[] = {
        {"conv2d", "out, x, w, {n, c, h, w}, {k, c/groups, r, s}, stride, padding, dilation, groups, [algo]",
         "2-D convolution, NCHW; stride, padding, dilation: integers or tables {h, w}; algo 1 direct, 2 implicit "
         "GEMM", op_conv2d},
        {"conv2d_nhwc", "out, x, w, {n, h, w, c}, {k, r, s, c/groups}, stride, padding, dilation, groups, [algo]",
         "2-D convolution, channels last (implicit GEMM)", op_conv2d_nhwc},
        {"conv1d", "out, x, w, {n, c, l}, {k, c/groups, kl}, stride, padding, dilation, groups, [algo]",
         "1-D convolution, NCL", op_conv1d},
        {"conv_transpose2d",
         "out, x, w, {n, c, h, w}, {c, k/groups, r, s}, stride, padding, output_padding, dilation, groups",
         "2-D transposed convolution, NCHW", op_conv_transpose2d},
        {"conv_transpose1d", "out, x, w, {n, c, l}, {c, k/groups, kl}, stride, padding, output_padding, dilation, "
                             "groups", "1-D transposed convolution, NCL", op_conv_transpose1d},
        {"im2col", "out, x, {n, c, h, w}, kernel, stride, padding, dilation",
         "patches as out {n, oh, ow, c, r, s}", op_im2col},
        {"im2col1d", "out, x, {n, c, l}, kernel, stride, padding, dilation", "patches as out {n, l_out, c, k}",
         op_im2col1d},
        {"col2im1d", "out, x, {n, l_in, c, k}, stride", "out {n, c, (l_in - 1) stride + k} sums the columns",
         op_col2im1d},
        {"avg_pool2d", "out, x, {n, c, h, w}, kernel, [stride]", "average pool, no padding", op_avg_pool2d},
        {"max_pool2d", "out, x, {n, c, h, w}, kernel, [stride]", "max pool, no padding", op_max_pool2d},
        {"upsample_nearest2d", "out, x, {n, c, h, w}, size", "nearest upsampling to size (integer or {h, w})",
         op_upsample2d},
        {"upsample_nearest1d", "out, x, {n, c, l}, size", "nearest upsampling to size", op_upsample1d},
        {"copy2d", "dst, src, d1, d2, src_stride, dst_stride", "d1 rows of d2 elements between strided rows",
         op_copy2d},
    };
    int r = 0;
    for (size_t i = 0; r == 0 && i < sizeof ops / sizeof ops[0]; i++)
        r = api->add_op(api, "conv", ops[i].name, ops[i].usage, ops[i].fn, ops[i].doc);
    return r;
}

int hk_plugin_conv_init(const hk_plugin_api *api)
{
    if (!HK_PLUGIN_API_HAS(api, add_kernel_rule)) {
        api->error(api, "needs plugin ABI 1.4 (add_kernel_rule)");
        return 1;
    }
    int r = api->register_family(api, "conv", "0.1.0",
                                 "convolutions (implicit GEMM), im2col, pools, upsampling, copy2d; NCHW");
    if (r == 0)
        r = api->add_source(api, "conv", "conv.hip", hk_conv_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "conv", hk_conv_images);
    if (r == 0)
        r = add_kernels(api);
    if (r == 0)
        r = add_ops(api);
    return r;
}
