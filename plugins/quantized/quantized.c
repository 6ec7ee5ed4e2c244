/* The quantized family: ggml's block formats (q4_0 ... q8_K, dtypes that
 * buffers know) dequantized to f32/f16/bf16, multiplied into f32 vectors
 * (one warp per row) and quantized from f32 by ggml's reference quantizers
 * (kernels/quantized/quantized.hip, embedded at build time). The
 * ops hk.ops.quantized.dequantize(y, w), matvec(y, w, x) and
 * quantize(w, x) pick the kernel from the buffers' dtypes and take sizes
 * from their lengths (docs/families/quantized.md). */
#include <hipkit/plugin.h>

#include <stdio.h>
#include <string.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_quantized_sources[];
extern const hk_plugin_image hk_quantized_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(quantized);
HK_PLUGIN_EXPORT int hk_plugin_quantized_init(const hk_plugin_api *api);

static const struct {
    const char *name;
    unsigned block, bytes;
} formats[] = {
    {"q4_0", 32, 18},   {"q4_1", 32, 20},   {"q5_0", 32, 22},   {"q5_1", 32, 24},
    {"q8_0", 32, 34},   {"q8_1", 32, 36},   {"q2_K", 256, 84},  {"q3_K", 256, 110},
    {"q4_K", 256, 144}, {"q5_K", 256, 176}, {"q6_K", 256, 210}, {"q8_K", 256, 292},
    {"q4_0r", 256, 144}, /* hipkit's repacked q4_0 (repack) */
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static const struct {
    const char *name, *ctype;
} outs[] = {{"f32", "float"}, {"f16", "__half"}, {"bf16", "__hip_bfloat16"}};

/* The format of a buffer argument, or -1. */
static int format_of(const hk_plugin_host *host, const hk_plugin_call *call, const void *buf)
{
    const char *dt = host->dtype(call, buf);
    for (size_t f = 0; dt && f < NFORMATS; f++)
        if (!strcmp(dt, formats[f].name))
            return (int)f;
    return -1;
}

/* Every op here but repack reads its inputs while other blocks already
 * write the output (a matvec's blocks each stage all of x): an output over
 * an input is refused (hk_plugin_apart), not computed from its own
 * results. y_apart: matvec's and matmul's y (args[0]) against w and x. */
static int y_apart(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args)
{
    int r = hk_plugin_apart(host, call, args[0].v.buf, "y", args[2].v.buf, "x");
    return r ? r : hk_plugin_apart(host, call, args[0].v.buf, "y", args[1].v.buf, "w");
}

static int no_format(const hk_plugin_host *host, const hk_plugin_call *call, const char *what,
                     const void *buf)
{
    const char *dt = host->dtype(call, buf);
    return host->fail(call, "%s is %s, not a quantized dtype (q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 "
                            "q2_K q3_K q4_K q5_K q6_K q8_K q4_0r)", what, dt ? dt : "?");
}

/* The n values of w (format f) into y (dtype out: f32, f16, bf16). */
static int launch_dequantize(const hk_plugin_host *host, const hk_plugin_call *call, int f, const char *out,
                             hk_plugin_arg y, hk_plugin_arg w, size_t n)
{
    char kernel[64];
    snprintf(kernel, sizeof kernel, "dequantize_%s_%s", formats[f].name, out);
    hk_plugin_arg a[3] = {w, y, hk_plugin_int_arg((long long)n)};
    return host->launch(call, kernel, a, 3);
}

/* dequantize(y, w): y (f32, f16 or bf16) gets the #w values of w. */
static int op_dequantize(const hk_plugin_host *host, const hk_plugin_call *call,
                         const hk_plugin_arg *args, int nargs)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bb", "y,w", "buffers y and w");
    if (bad)
        return bad;
    int f = format_of(host, call, args[1].v.buf);
    if (f < 0)
        return no_format(host, call, "w", args[1].v.buf);
    const char *out = host->dtype(call, args[0].v.buf);
    if (!out || (strcmp(out, "f32") && strcmp(out, "f16") && strcmp(out, "bf16")))
        return host->fail(call, "y is %s; dequantize writes f32, f16 or bf16", out ? out : "?");
    size_t n = host->length(call, args[1].v.buf);
    if (host->length(call, args[0].v.buf) != n)
        return host->fail(call, "y has %zu elements, w %zu: they must be the same",
                          host->length(call, args[0].v.buf), n);
    int clash = hk_plugin_apart(host, call, args[0].v.buf, "y", args[1].v.buf, "w");
    if (clash)
        return clash;
    return launch_dequantize(host, call, f, out, args[0], args[1], n);
}

/* Blocks a matvec launches at most, a compute unit, before each takes
 * several row groups: fewer stagings of x. Where the host cannot say how
 * many compute units there are (an older host, or 0): an H100's 132. */
#define MATVEC_BLOCKS_PER_CU 8
#define MATVEC_CUS_DEFAULT 132

/* The streamed q8_1 matvec (kernels/quantized/quantized.hip,
 * hkq_ring_matvec; quantized-notes.md, 2026-11-29): a block a compute unit,
 * each its run of rows through a ring of ring_stages() stages of 256 / L rows
 * (L lanes a row: the power of two >= the row's 256-value pieces, at most a
 * warp) filled by bulk copies on sm_90. Shared memory: the stages, x's
 * records (40 bytes a block of 32) and a barrier a stage; fewer stages where
 * they do not fit, none (the grid-stride kernel) where two do not. Stages
 * a format, as measured (H200, 14336 x 4096, chains of 70 launches, back to
 * back / graph replay; quantized-notes.md, 2026-11-29 evening): q4_0 4
 * (0.82 / 0.89 against 3's 0.80 / 0.89), q4_K 3 (0.78 / 0.86 against 4's
 * 0.77 / 0.83), q6_K 2 (0.79 / 0.83 against 4's 0.73 / 0.78: its stages
 * are 1.5x as large), q8_0 3 (all that fit at 4096 columns). */
static unsigned ring_stages(const char *fn)
{
    return !strcmp(fn, "q4_0") ? 4 : !strcmp(fn, "q6_K") ? 2 : 3;
}
#define RING_SHARED_MAX (227u * 1024u) /* sm_90's opt-in block limit */
/* The ring asks for at least this much: only GPUs with bulk copies (sm_90
 * and later: 227 KiB) grant it, and one with less (sm_80: 163 KiB; sm_86,
 * sm_89: 99 KiB), where the kernel would copy each stage itself, refuses
 * the launch and gets the grid-stride kernel, as gemm's wgmma ring does.
 * A block an SM either way, so the memory asked for past the ring's is
 * never used by anything else. */
#define RING_SHARED_MIN (164u * 1024u)
static size_t ring_shared(size_t cols, size_t piece, unsigned warp, unsigned stages)
{
    size_t pieces = cols / 256, lanes = 1;
    while (lanes < pieces && lanes < warp)
        lanes *= 2;
    /* the ring rounded up to 16 bytes for x's records (q6_K's rows are 2-byte
     * aligned); f32 x is rounded straight into them (blocks of whole warps) */
    return (stages * (256 / lanes) * piece * pieces + 15) / 16 * 16 + 40 * (cols / 32) + 8 * stages;
}

/* 0 launched, 1 declined (not NVIDIA, a format or width it does not take,
 * or a GPU that refused its shared memory: the caller launches the
 * grid-stride kernel, or for f32 x rounded by the kernel (xf) quantize and
 * the q8_1 form, the same y). The kernel's own general path would take the
 * rest in one launch, but sums in another order (not the two launches' y
 * bit for bit) and ran q8_0's 4096 x 14336 at 0.22x copy (H200,
 * 2026-12-02): the ring or nothing. */
static int launch_ring(const hk_plugin_host *host, const hk_plugin_call *call, int f, const hk_plugin_arg *a,
                       size_t rows, size_t cols, size_t cus, int early, int xf)
{
    const char *fn = formats[f].name;
    /* q6_K's 210-byte pieces make 16-byte rows (bulk copies) only at multiples of 2048 columns */
    if ((strcmp(fn, "q4_0") && strcmp(fn, "q8_0") && strcmp(fn, "q4_K") && strcmp(fn, "q6_K")) || cols % 256 ||
        (!strcmp(fn, "q6_K") && cols % 2048) || rows == 0 ||
        !HK_PLUGIN_HOST_HAS(host, backend) || strcmp(host->backend(call), "cuda"))
        return 1;
    size_t piece = (size_t)formats[f].bytes * (256 / formats[f].block); /* bytes of 256 values */
    unsigned warp = host->warp_size(call), stages = ring_stages(fn);
    size_t shared = ring_shared(cols, piece, warp, stages);
    while (stages >= 2 && shared > RING_SHARED_MAX)
        shared = ring_shared(cols, piece, warp, --stages);
    if (stages < 2)
        return 1;
    char kernel[64];
    snprintf(kernel, sizeof kernel, xf ? "matvec_%s_f32_q8_1_ring" : "matvec_%s_q8_1_ring", fn);
    hk_plugin_arg b[6] = {a[0], a[1], a[2], a[3], a[4], hk_plugin_int_arg(stages)};
    hk_plugin_config cfg = {{(unsigned)(rows < cus ? rows : cus), 1, 1}, {256, 1, 1},
                            shared < RING_SHARED_MIN ? RING_SHARED_MIN : shared};
    int r = early ? host->launch_early(call, kernel, &cfg, b, 6, 1u << 0) /* b[0]: w */
                  : host->launch_config(call, kernel, &cfg, b, 6);
    return r == 0 ? 0 : 1;
}

/* matvec(y, w, x): y[r] = row r of w (viewed as [#y, #x]) times x, all f32
 * but w; x q8_1: the integer dot-product form (matvec_<fmt>_q8_1). */
/* What matvec and matvec_rounded check alike: buffers y, w (quantized, format
 * *f) and x (of dtype `xdt`, or of q8_1 where q8_ok), rows of whole blocks,
 * #w = #y x #x, y apart from both. 0, or the call failed. */
static int matvec_checked(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                          int nargs, int q8_ok, int *f, int *q8, size_t *rows, size_t *cols)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bbb", "y,w,x", "buffers y, w and x");
    if (bad)
        return bad;
    *f = format_of(host, call, args[1].v.buf);
    if (*f < 0)
        return no_format(host, call, "w", args[1].v.buf);
    const char *xt = host->dtype(call, args[2].v.buf);
    *q8 = xt && !strcmp(xt, "q8_1");
    if (!xt || (!(q8_ok && *q8) && strcmp(xt, "f32")))
        return host->fail(call, q8_ok ? "x is %s; matvec takes f32 or q8_1 (quantize(xq, x))"
                                      : "x is %s; matvec_rounded takes f32 x (a q8_1 x is matvec's)",
                          xt ? xt : "?");
    *rows = host->length(call, args[0].v.buf), *cols = host->length(call, args[2].v.buf);
    size_t n = host->length(call, args[1].v.buf);
    if (*cols % formats[*f].block)
        return host->fail(call, "x has %zu elements: rows of %s hold whole blocks of %u", *cols,
                          formats[*f].name, formats[*f].block);
    if (*rows > 0x7fffffff || *cols > 0x7fffffff || *rows * *cols != n)
        return host->fail(call, "w has %zu elements, not #y x #x = %zu x %zu", n, *rows, *cols);
    return y_apart(host, call, args);
}

static size_t compute_units(const hk_plugin_host *host, const hk_plugin_call *call)
{
    size_t cus = HK_PLUGIN_HOST_HAS(host, compute_units) ? host->compute_units(call) : 0;
    return cus ? cus : MATVEC_CUS_DEFAULT;
}

static int op_matvec(const hk_plugin_host *host, const hk_plugin_call *call,
                     const hk_plugin_arg *args, int nargs)
{
    int f, q8;
    size_t rows, cols;
    int bad = matvec_checked(host, call, args, nargs, 1, &f, &q8, &rows, &cols);
    if (bad)
        return bad;
    char kernel[64];
    snprintf(kernel, sizeof kernel, q8 ? "matvec_%s_q8_1" : "matvec_%s", formats[f].name);
    hk_plugin_arg a[5] = {args[1], args[2], args[0], hk_plugin_int_arg((long long)rows),
                          hk_plugin_int_arg((long long)cols)};
    if (!HK_PLUGIN_HOST_HAS(host, launch_config) || !HK_PLUGIN_HOST_HAS(host, warp_size))
        return host->launch(call, kernel, a, 5);
    /* The kernels walk row groups (a row per warp of a 256-thread block)
     * grid-stride: fewer blocks than groups, each taking up to 8 (of
     * equal count), stage x fewer times and let a warp load its next row
     * while it sums this one. */
    unsigned warp = host->warp_size(call);
    size_t per = warp && warp <= 256 ? 256 / warp : 1;
    size_t cus = compute_units(host, call);
    size_t cap = MATVEC_BLOCKS_PER_CU * cus;
    /* f32 x of q8_0 and q6_K on rows of at most 4096 columns (x staged
     * whole) ran 0.03-0.05x copy faster with 2 blocks a compute unit than
     * with 4 to 7 on the H100, in every probe of 2026-11-27; q4_K too
     * since its lanes take pairs of groups (0.03, 2026-11-28); the other
     * formats and forms were level or slower (quantized-notes.md, v18, v24) */
    const char *fn = formats[f].name;
    int early = HK_PLUGIN_HOST_HAS(host, launch_early);
    if (q8 && launch_ring(host, call, f, a, rows, cols, cus, early, 0) == 0)
        return 0;
    if (!q8 && cols <= 4096 && (!strcmp(fn, "q8_0") || !strcmp(fn, "q6_K") || !strcmp(fn, "q4_K")))
        cap = 2 * cus;
    /* Early start (host->launch_early): the kernels read only w before
     * hk_grid_wait(), so in a chain of matvecs each one's first loads
     * overlap the end of the one before (H100, 2026-11-28: +0.04-0.09x
     * copy). Measured through the op there: the q8_1 form of q4_0 and
     * q4_K ran best with 4 blocks a compute unit (0.79, 0.77 back to back,
     * against 0.70-0.71 with exactly 5), and q6_K's f32 form with exactly
     * 5 (one full wave, the blocks taking the row groups grid-stride: 0.76
     * against 0.69-0.71 with 2; with 2 and early start its next launch's blocks
     * landed unevenly, 0.60). */
    if (early && q8 && (!strcmp(fn, "q4_0") || !strcmp(fn, "q4_K")))
        cap = 4 * cus;
    /* q4_0r's kernels are bounded to 4 blocks a compute unit (64
     * registers): one wave of them, each warp walking its rows */
    if (!strcmp(fn, "q4_0r") && cols <= 4096)
        cap = 4 * cus;
    size_t groups = (rows + per - 1) / per, each = (groups + cap - 1) / cap;
    each = each < 1 ? 1 : each > 8 ? 8 : each;
    hk_plugin_config cfg = {{(unsigned)((groups + each - 1) / each), 1, 1}, {256, 1, 1}, 0};
    if (early && !q8 && cols <= 4096 && !strcmp(fn, "q6_K"))
        cfg.grid[0] = (unsigned)(5 * cus < groups ? 5 * cus : groups);
    if (early)
        return host->launch_early(call, kernel, &cfg, a, 5, 1u << 0); /* a[0]: w */
    return host->launch_config(call, kernel, &cfg, a, 5);
}

/* matvec_rounded(y, w, x): y = W q8_1(x), x f32 rounded to q8_1 first, as
 * ggml rounds activations (quantize_q8_1, then mul_mat_vec_q): the y of
 * quantize(xq, x) then matvec(y, w, xq), bit for bit. On NVIDIA, for the
 * streamed formats, one launch whose blocks each round x in their prologue
 * (x is 16 KB at 4096 columns, read from L2 by every block); elsewhere
 * those two launches, xq in scratch memory. */
static int op_matvec_rounded(const hk_plugin_host *host, const hk_plugin_call *call,
                             const hk_plugin_arg *args, int nargs)
{
    int f, q8;
    size_t rows, cols;
    int bad = matvec_checked(host, call, args, nargs, 0, &f, &q8, &rows, &cols);
    if (bad)
        return bad;
    if (HK_PLUGIN_HOST_HAS(host, launch_config) && HK_PLUGIN_HOST_HAS(host, warp_size)) {
        hk_plugin_arg a[5] = {args[1], args[2], args[0], hk_plugin_int_arg((long long)rows),
                              hk_plugin_int_arg((long long)cols)};
        if (launch_ring(host, call, f, a, rows, cols, compute_units(host, call),
                        HK_PLUGIN_HOST_HAS(host, launch_early), 1) == 0)
            return 0;
    }
    if (!HK_PLUGIN_HOST_HAS(host, scratch_raw))
        return host->fail(call, "needs a hipkit whose plugin host has scratch_raw");
    hk_plugin_arg xq = hk_plugin_buffer_arg(host->scratch_raw(call, "q8_1", cols));
    if (!xq.v.buf) /* quantize writes it all */
        return -1; /* the call is failed already */
    hk_plugin_arg qa[3] = {args[2], xq, hk_plugin_int_arg((long long)cols)};
    int r = host->launch(call, "quantize_q8_1", qa, 3);
    hk_plugin_arg ma[3] = {args[0], args[1], xq};
    return r ? r : op_matvec(host, call, ma, 3);
}

/* From this many activation rows on, matmul dequantizes W to f32 once
 * (scratch of rows x cols floats, at most MATMUL_GEMM_BYTES_MAX) and hands
 * Y = X W^T to the gemm family: its f32 kernels (no TF32) ran 512 rows of
 * a 14336 x 4096 product at 29 TFLOP/s on an H100 where the tiled kernel
 * below, which decodes W per 64 x 64 tile, ran at 14-18; at 64 rows the
 * tiled kernel was 12-26 % faster (the dequantize and the gemm's small-m
 * shape), the two meeting near 90 (docs/RESULTS.md). Fewer rows keep the
 * tiled kernel (no scratch). */
#define MATMUL_GEMM_MIN_M 128
/* With f16 / bf16 activations, up to this many rows take the fused kernel
 * (mmq_*: W decoded in shared memory and multiplied on the tensor cores,
 * read once, no copy of it); more take W's 16-bit copy and the gemm
 * family (the copy's cost spread over more rows, the gemm's wgmma tiles). */
#define MATMUL_FUSED_M_MAX 64
#define MATMUL_GEMM_BYTES_MAX (1ull << 30)

/* Y [m, rows] = X [m, cols] W^T as dequantize(W) to x's dtype (wt: f32,
 * f16, bf16) and the gemm family's matmul with B transposed (W is rows x
 * cols, row-major: B^T stored n x k). */
static int matmul_by_gemm(const hk_plugin_host *host, const hk_plugin_call *call, int f, const char *wt,
                          const hk_plugin_arg *args, long long m, long long rows, long long cols)
{
    hk_plugin_arg wf = hk_plugin_buffer_arg(host->scratch_raw(call, wt, (size_t)(rows * cols)));
    if (!wf.v.buf) /* dequantize writes it all */
        return -1; /* the call is failed already */
    int r = launch_dequantize(host, call, f, wt, wf, args[1], (size_t)(rows * cols));
    if (r != 0)
        return r;
    hk_plugin_arg g[8] = {args[0], args[2], wf, hk_plugin_int_arg(m), hk_plugin_int_arg(rows), hk_plugin_int_arg(cols)};
    g[6].kind = g[7].kind = HK_PLUGIN_ARG_BOOL;
    g[6].v.i = 0; /* A = X as it is */
    g[7].v.i = 1; /* B = W^T */
    return host->call_op(call, "gemm", "matmul", g, 8);
}

/* matmul(y, w, x): Y = X W^T, X [m, cols] = x, W [rows, cols] = w, Y
 * [m, rows] = y; cols = #x / m with m = #y / rows, rows from w: given as
 * matmul(y, w, x, rows). */
static int op_matmul(const hk_plugin_host *host, const hk_plugin_call *call,
                     const hk_plugin_arg *args, int nargs)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bbbi", "y,w,x,rows",
                                   "buffers y, w and x and an integer rows (w's rows)");
    if (bad)
        return bad;
    if (!HK_PLUGIN_HOST_HAS(host, launch_config))
        return host->fail(call, "needs a host of plugin ABI 1.4 (launch_config)");
    int f = format_of(host, call, args[1].v.buf);
    if (f < 0)
        return no_format(host, call, "w", args[1].v.buf);
    long long rows = args[3].v.i;
    size_t n = host->length(call, args[1].v.buf);
    if (rows < 1 || rows > 0x7fffffff || n % (size_t)rows)
        return host->fail(call, "rows %lld does not divide w's %zu elements", rows, n);
    size_t cols = n / (size_t)rows, ny = host->length(call, args[0].v.buf);
    if (cols % formats[f].block || cols > 0x7fffffff)
        return host->fail(call, "rows of %zu elements are no whole number of %s blocks", cols,
                          formats[f].name);
    if (ny % (size_t)rows || ny / (size_t)rows * cols != host->length(call, args[2].v.buf))
        return host->fail(call, "y has %zu elements and x %zu: not m x %lld and m x %zu", ny,
                          host->length(call, args[2].v.buf), rows, cols);
    size_t m = ny / (size_t)rows;
    const char *xt = host->dtype(call, args[2].v.buf), *yt = host->dtype(call, args[0].v.buf);
    int half = xt && (!strcmp(xt, "f16") || !strcmp(xt, "bf16"));
    if (!xt || (!half && strcmp(xt, "f32")))
        return host->fail(call, "x is %s; matmul takes f32 (f32 products) or f16 / bf16 (W dequantized to x's "
                          "dtype, the gemm family's tensor-core product)", xt ? xt : "?");
    if (!yt || (strcmp(yt, "f32") && !(half && !strcmp(yt, xt))))
        return host->fail(call, "y is %s; with x %s matmul writes f32%s%s", yt ? yt : "?", xt, half ? " or " : "",
                          half ? xt : "");
    int clash = y_apart(host, call, args);
    if (clash)
        return clash;
    if (half) {
        /* f16 / bf16 activations: W rounded to x's dtype times x, f32 sums
         * on the tensor cores (the product PyTorch's f16 matmul makes of the
         * dequantized weights), by the fused kernel or by W's 16-bit copy
         * and the gemm family */
        if (m <= MATMUL_FUSED_M_MAX) { /* W read once, no copy: mmq_<fmt>_<x> */
            char kernel[64];
            snprintf(kernel, sizeof kernel, "mmq_%s_%s", formats[f].name, xt);
            hk_plugin_arg a[7] = {args[1], args[2], args[0], hk_plugin_int_arg(rows),
                                  hk_plugin_int_arg((long long)cols), hk_plugin_int_arg((long long)m),
                                  hk_plugin_int_arg(strcmp(yt, "f32") != 0)};
            hk_plugin_config cfg = {{(unsigned)((rows + 63) / 64), 1, 1}, {256, 1, 1}, 0};
            return host->launch_config(call, kernel, &cfg, a, 7);
        }
        if (!HK_PLUGIN_HOST_HAS(host, scratch_raw) || !HK_PLUGIN_HOST_HAS(host, call_op))
            return host->fail(call, "x %s with more than %d rows needs a hipkit whose plugin host has scratch_raw "
                              "and call_op (plugin ABI 1.6 or later)", xt, MATMUL_FUSED_M_MAX);
        if ((unsigned long long)rows * cols * 2 > MATMUL_GEMM_BYTES_MAX)
            return host->fail(call, "W's %s copy would take %llu bytes, over the %llu this op allocates; pass x "
                              "as f32 (the tiled kernel needs no copy)", xt,
                              (unsigned long long)rows * cols * 2, (unsigned long long)MATMUL_GEMM_BYTES_MAX);
        return matmul_by_gemm(host, call, f, xt, args, (long long)m, rows, (long long)cols);
    }
    if (m > 0xffffu * 64)
        return host->fail(call, "m = %zu activation rows: at most %u", m, 0xffffu * 64);
    if (m >= MATMUL_GEMM_MIN_M && HK_PLUGIN_HOST_HAS(host, scratch_raw) &&
        (unsigned long long)rows * cols * 4 <= MATMUL_GEMM_BYTES_MAX)
        return matmul_by_gemm(host, call, f, "f32", args, (long long)m, rows, (long long)cols);
    char kernel[64];
    snprintf(kernel, sizeof kernel, "matmul_%s", formats[f].name);
    hk_plugin_arg a[6] = {args[1], args[2], args[0], hk_plugin_int_arg(rows), hk_plugin_int_arg((long long)cols),
                          hk_plugin_int_arg((long long)m)};
    hk_plugin_config cfg = {{(unsigned)((rows + 63) / 64), (unsigned)((m + 63) / 64), 1}, {256, 1, 1}, 0};
    return host->launch_config(call, kernel, &cfg, a, 6);
}

/* quantize(w, x): w (any of the formats) from the f32 x. */
static int op_quantize(const hk_plugin_host *host, const hk_plugin_call *call,
                       const hk_plugin_arg *args, int nargs)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bb", "w,x", "buffers w and x");
    if (bad)
        return bad;
    int f = format_of(host, call, args[0].v.buf);
    if (f < 0)
        return no_format(host, call, "w", args[0].v.buf);
    size_t n = host->length(call, args[0].v.buf);
    if (host->length(call, args[1].v.buf) != n)
        return host->fail(call, "x has %zu elements, w %zu: they must be the same",
                          host->length(call, args[1].v.buf), n);
    int clash = hk_plugin_apart(host, call, args[0].v.buf, "w", args[1].v.buf, "x");
    if (clash)
        return clash;
    char kernel[64];
    snprintf(kernel, sizeof kernel, "quantize_%s", formats[f].name);
    hk_plugin_arg a[3] = {args[1], args[0], hk_plugin_int_arg((long long)n)};
    return host->launch(call, kernel, a, 3);
}

/* repack(dst, src): q4_0 src into q4_0r dst, or q4_0r src into q4_0 dst
 * (the same values, bytes moved). Where dst shares src's memory (in place
 * through a view, or overlapping), a repack over its own source would read
 * bytes it already moved: src is repacked into a temporary, which is then
 * copied to dst. */
static int op_repack(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                     int nargs)
{
    int bad = hk_plugin_check_args(host, call, args, nargs, "bb", "dst,src", "buffers dst and src");
    if (bad)
        return bad;
    const char *dt = host->dtype(call, args[0].v.buf), *st = host->dtype(call, args[1].v.buf);
    int to_r = dt && st && !strcmp(dt, "q4_0r") && !strcmp(st, "q4_0");
    if (!to_r && !(dt && st && !strcmp(dt, "q4_0") && !strcmp(st, "q4_0r")))
        return host->fail(call, "dst is %s, src %s: repack takes q4_0 into q4_0r or q4_0r into q4_0", dt ? dt : "?",
                          st ? st : "?");
    size_t n = host->length(call, args[1].v.buf);
    if (host->length(call, args[0].v.buf) != n)
        return host->fail(call, "dst has %zu elements, src %zu: they must be the same",
                          host->length(call, args[0].v.buf), n);
    /* (n is whole q4_0r blocks of 256: the q4_0r side holds nothing else) */
    long long groups = (long long)(n / 32), words = 9 * groups; /* 18 bytes a group either way */
    void *tmp = NULL;
    int share = HK_PLUGIN_HOST_HAS(host, overlap) && host->overlap(call, args[0].v.buf, args[1].v.buf);
    if (share && n) { /* (a host with overlap has scratch_raw) */
        tmp = host->scratch_raw(call, "u16", (size_t)words);
        if (!tmp)
            return -1; /* the call is failed already (the host's message) */
    }
    hk_plugin_arg a[4] = {args[1], tmp ? hk_plugin_buffer_arg(tmp) : args[0], hk_plugin_int_arg(groups),
                          hk_plugin_int_arg(to_r)};
    int r = host->launch(call, "repack_q4_0r", a, 4);
    if (r || !tmp)
        return r;
    hk_plugin_arg c[3] = {hk_plugin_buffer_arg(tmp), args[0], hk_plugin_int_arg(words)};
    return host->launch(call, "copy_u16", c, 3);
}

static const struct {
    const char *name, *usage;
    hk_plugin_op_fn fn;
    const char *doc;
} ops[] = {
    {"dequantize", "y, w", op_dequantize, "y (f32, f16, bf16) = the values of the quantized w"},
    {"matvec", "y, w, x", op_matvec,
     "y = W x: w quantized [#y, #x], y f32, x f32 (or q8_1: integer dot products); a warp per row"},
    {"matvec_rounded", "y, w, x", op_matvec_rounded,
     "y = W q8_1(x): x f32 rounded to q8_1 first, as ggml rounds activations; the y of quantize(xq, x) then "
     "matvec(y, w, xq), in one launch where it can"},
    {"matmul", "y, w, x, rows", op_matmul,
     "Y [m, rows] = X [m, cols] W^T: w quantized [rows, cols], x and y f32; 64 x 64 tiles, or from 128 rows of x "
     "W dequantized to f32 and the gemm family's product; x f16 / bf16 (y f32 or x's dtype): W rounded to x's dtype, "
     "tensor cores; up to 64 rows a fused kernel reading W once, more W's 16-bit copy and the gemm family"},
    {"quantize", "w, x", op_quantize, "w (any quantized dtype) = x (f32), ggml's reference quantizer"},
    {"repack", "dst, src", op_repack,
     "dst = src's values in the other layout: q4_0 into q4_0r (hipkit's: every group's nibbles a 16-byte piece, "
     "matvec reads them straight into registers) or q4_0r into q4_0; dst may share src's memory (through a temporary)"},
};

/* Grid-stride kernels over groups of 32: a 1-D grid of n / 32 threads is
 * enough; the rule counts n, so cap the grid instead. */
#define GROUP_MAX_BLOCKS 4096

static int add_kernels(const hk_plugin_api *api)
{
    static const hk_plugin_extent mv[] = {{1, {4, -1, -1}, 1}, {2, {3, -1, -1}, 1}};
    char name[64], sig[160], doc[200];
    int r = 0;
    for (size_t f = 0; r == 0 && f < NFORMATS; f++) {
        const char *q = formats[f].name;
        for (size_t o = 0; r == 0 && o < 3; o++) {
            hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 2, 256, GROUP_MAX_BLOCKS, 0, 0, 0, 0};
            snprintf(name, sizeof name, "dequantize_%s_%s", q, outs[o].name);
            snprintf(sig, sizeof sig, "const void *w, %s *y, long long n", outs[o].ctype);
            snprintf(doc, sizeof doc, "y = the n values of %s w (blocks of %u in %u bytes) as %s",
                     q, formats[f].block, formats[f].bytes, outs[o].name);
            r = api->add_kernel(api, "quantized", "quantized.hip", name, sig, &g, doc);
        }
        /* x holds cols (parameter 4), y rows (3); w rows x cols */
        hk_plugin_rule rule = {sizeof rule, {HK_PLUGIN_GEOM_ROW_WARP, 0, 0, 0, 3, 4, 0, 0}, 0, 0, 0, mv, 2};
        snprintf(name, sizeof name, "matvec_%s", q);
        snprintf(doc, sizeof doc, "y[r] = row r of the %s [rows, cols] matrix w times x (f32); a warp per row", q);
        if (r == 0)
            r = api->add_kernel_rule(api, "quantized", "quantized.hip", name,
                                     "const void *w, const float *x, float *y, int rows, int cols",
                                     &rule, doc);
        snprintf(name, sizeof name, "matvec_%s_q8_1", q);
        snprintf(doc, sizeof doc, "matvec_%s with x quantized to q8_1: integer dot products "
                 "(ggml's vec_dot_%s_q8_1 form)", q, q);
        if (r == 0)
            r = api->add_kernel_rule(api, "quantized", "quantized.hip", name,
                                     "const void *w, const void *xq, float *y, int rows, int cols",
                                     &rule, doc);
        /* explicit 2-D grid from the op; w holds rows x cols, x m x cols, y m x rows */
        static const hk_plugin_extent mm[] = {{0, {3, 4, -1}, 1}, {1, {5, 4, -1}, 1}, {2, {5, 3, -1}, 1}};
        hk_plugin_rule mrule = {sizeof mrule, {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0}, 0, 0, 0, mm, 3};
        snprintf(name, sizeof name, "matmul_%s", q);
        snprintf(doc, sizeof doc, "y [m, rows] = x [m, cols] times the %s [rows, cols] w transposed; "
                 "256 threads, grid {ceil(rows / 64), ceil(m / 64)}", q);
        if (r == 0)
            r = api->add_kernel_rule(api, "quantized", "quantized.hip", name,
                                     "const void *w, const float *x, float *y, int rows, int cols, int m",
                                     &mrule, doc);
        static const char *const mmq[][2] = {{"f16", "__half"}, {"bf16", "__hip_bfloat16"}};
        for (size_t v = 0; r == 0 && v < 2; v++) {
            snprintf(name, sizeof name, "mmq_%s_%s", q, mmq[v][0]);
            snprintf(sig, sizeof sig, "const void *w, const %s *x, void *y, int rows, int cols, int m, int y16",
                     mmq[v][1]);
            snprintf(doc, sizeof doc, "y [m, rows] (%s if y16, else f32) = x [m, cols] (%s, m <= 64) times the %s "
                     "w transposed, W rounded to %s; 256 threads, grid {ceil(rows / 64)}", mmq[v][0], mmq[v][0], q,
                     mmq[v][0]);
            r = api->add_kernel_rule(api, "quantized", "quantized.hip", name, sig, &mrule, doc);
        }
        if (r == 0) {
            hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 2, 256, GROUP_MAX_BLOCKS, 0, 0, 0, 0};
            snprintf(name, sizeof name, "quantize_%s", q);
            snprintf(doc, sizeof doc, "w (%s) = the n f32 values of x, as ggml's quantize_row_%s_ref", q, q);
            r = api->add_kernel(api, "quantized", "quantized.hip", name,
                                "const float *x, void *w, long long n", &g, doc);
        }
    }
    /* the streamed q8_1 matvec: the op gives grid, block and shared memory */
    static const hk_plugin_extent mvr[] = {{0, {3, 4, -1}, 1}, {1, {4, -1, -1}, 1}, {2, {3, -1, -1}, 1}};
    static const char *const ring[] = {"q4_0", "q8_0", "q4_K", "q6_K"};
    for (size_t f = 0; r == 0 && f < sizeof ring / sizeof *ring; f++) {
        hk_plugin_rule rule = {sizeof rule, {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0}, 0, 0, 0, mvr, 3};
        snprintf(name, sizeof name, "matvec_%s_q8_1_ring", ring[f]);
        snprintf(doc, sizeof doc, "matvec_%s_q8_1 for rows of whole 256-value pieces, each block its run of rows "
                 "through `stages` stages (bulk copies on sm_90); shared memory as quantized.hip says", ring[f]);
        r = api->add_kernel_rule(api, "quantized", "quantized.hip", name,
                                 "const void *w, const void *xq, float *y, int rows, int cols, int stages", &rule, doc);
        snprintf(name, sizeof name, "matvec_%s_f32_q8_1_ring", ring[f]);
        snprintf(doc, sizeof doc, "matvec_%s_q8_1_ring with f32 x, which each block rounds to q8_1 in its "
                 "shared memory first (36 more bytes a block of 32)", ring[f]);
        if (r == 0)
            r = api->add_kernel_rule(api, "quantized", "quantized.hip", name,
                                     "const void *w, const float *x, float *y, int rows, int cols, int stages", &rule,
                                     doc);
    }
    if (r == 0) {
        hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 2, 256, GROUP_MAX_BLOCKS, 0, 0, 0, 0};
        r = api->add_kernel(api, "quantized", "quantized.hip", "repack_q4_0r",
                            "const void *src, void *dst, long long groups, int to_r", &g,
                            "the groups of q4_0 src as q4_0r dst (to_r 1), or of q4_0r src as q4_0 dst (0)");
    }
    if (r == 0) {
        hk_plugin_geometry g = {HK_PLUGIN_GEOM_1D, 2, 256, GROUP_MAX_BLOCKS, 0, 0, 0, 0};
        r = api->add_kernel(api, "quantized", "quantized.hip", "copy_u16", "const void *src, void *dst, long long n",
                            &g, "n 16-bit words of src into dst (repack's second step)");
    }
    return r;
}

int hk_plugin_quantized_init(const hk_plugin_api *api)
{
    if (!HK_PLUGIN_API_HAS(api, add_kernel_rule)) {
        api->error(api, "needs plugin ABI 1.4 (add_kernel_rule)");
        return 1;
    }
    int r = api->register_family(api, "quantized", "0.1.0",
                                 "ggml's block formats: dequantize, matvec, quantize");
    if (r == 0)
        r = api->add_source(api, "quantized", "quantized.hip", hk_quantized_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "quantized", hk_quantized_images);
    if (r == 0)
        r = add_kernels(api);
    for (size_t i = 0; r == 0 && i < sizeof ops / sizeof ops[0]; i++)
        r = api->add_op(api, "quantized", ops[i].name, ops[i].usage, ops[i].fn, ops[i].doc);
    return r;
}
