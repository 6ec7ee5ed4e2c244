/* The gemm family: C = alpha * op(A) * op(B) + beta * C, one matrix or a
 * strided batch, row- or column-major, any M, N, K
 * (kernels/gemm/gemm.hip, embedded at build time). The kernels see C
 * row-major and A, B through strides; the op hk.ops.gemm.matmul turns the
 * caller's layout, transposes and leading dimensions into those strides
 * (a column-major C is computed as the row-major C^T = op(B)^T op(A)^T),
 * checks every operand's extent and picks the kernel from the dtypes and
 * the shape (docs/families/gemm.md). */
#include <hipkit/plugin.h>

#include <stdio.h>
#include <string.h>

typedef struct { const char *path; const char *data; size_t size; } hkc_embedded_file;
extern const hkc_embedded_file hk_gemm_sources[];
extern const hk_plugin_image hk_gemm_images[]; /* built by hkc-aot */

HK_PLUGIN_DEFINE(gemm);
HK_PLUGIN_EXPORT int hk_plugin_gemm_init(const hk_plugin_api *api);

/* The (input, output) pairs; alpha and beta are f32 but for f64. bn: the
 * big tile's width (128 x bn), as kernels/gemm/gemm.hip's HKG_PAIR has it:
 * 256 where the tensor cores take the tile (a warp tile of 64 x 64). */
static const struct {
    const char *in, *out, *ta, *tc, *s, *note;
    int bn;
} pairs[] = {
    {"f32", "f32", "float", "float", "float", "f32, f32 accumulation", 128},
    {"f64", "f64", "double", "double", "double", "f64, f64 accumulation", 128},
    {"f16", "f16", "__half", "__half", "float", "f16 in and out, f32 accumulation", 256},
    {"f16", "f32", "__half", "float", "float", "f16 in, f32 out and accumulation", 256},
    {"bf16", "bf16", "__hip_bfloat16", "__hip_bfloat16", "float", "bf16 in and out, f32 accumulation", 256},
    {"bf16", "f32", "__hip_bfloat16", "float", "float", "bf16 in, f32 out and accumulation", 256},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

#define THREADS 256 /* every kernel's block */

/* The kernels' view of one product: C (m x n, row-major, ldc) = alpha *
 * A B + beta * C, A(i, p) = a[i * sam + p * sak], B(p, j) = b[p * sbk + j *
 * sbn], each batch item bs* elements further on. */
typedef struct {
    long long m, n, k, sam, sak, sbk, sbn, ldc, bsa, bsb, bsc, batch;
} view;

/* The caller's description, from matmul's arguments. */
typedef struct {
    long long m, n, k, lda, ldb, ldc, batch, sa, sb, sc;
    int ta, tb, col;
    double alpha, beta;
} request;

static int is_buffer(const hk_plugin_arg *a) { return a->kind == HK_PLUGIN_ARG_BUFFER; }
static int given(const hk_plugin_arg *args, int nargs, int i)
{
    return i < nargs && args[i].kind != HK_PLUGIN_ARG_NULL;
}

/* Argument i as an integer (flag: a boolean or 0/1 too), else def. */
static int int_arg(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs, int i, const char *what, long long def, long long *out)
{
    *out = def;
    if (!given(args, nargs, i))
        return 0;
    if (args[i].kind == HK_PLUGIN_ARG_BOOL)
        *out = args[i].v.i != 0;
    else if (args[i].kind == HK_PLUGIN_ARG_INT)
        *out = args[i].v.i;
    else
        return host->fail(call, "%s (argument %d) must be an integer", what, i + 1);
    return 0;
}

static int num_arg(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                   int nargs, int i, const char *what, double def, double *out)
{
    *out = def;
    if (!given(args, nargs, i))
        return 0;
    if (args[i].kind == HK_PLUGIN_ARG_INT)
        *out = (double)args[i].v.i;
    else if (args[i].kind == HK_PLUGIN_ARG_FLOAT)
        *out = args[i].v.f;
    else
        return host->fail(call, "%s (argument %d) must be a number", what, i + 1);
    return 0;
}

/* The arguments after c, a, b in usage order; leading dimensions and
 * strides default to the packed ones (0 marks "not given" here). */
static int read_request(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                        int nargs, request *q)
{
    static const char *const names[] = {"m", "n", "k", "transa", "transb", "alpha", "beta", "lda", "ldb",
                                        "ldc", "batch", "stride_a", "stride_b", "stride_c", "colmajor"};
    long long v[15];
    int r = 0;
    for (int i = 0; r == 0 && i < 15; i++) {
        if (i == 5 || i == 6)
            continue;
        if (i < 3 && !given(args, nargs, 3 + i))
            return host->fail(call, "%s (argument %d) is required", names[i], 4 + i);
        r = int_arg(host, call, args, nargs, 3 + i, names[i], i == 10 ? 1 : -1, &v[i]);
    }
    if (r == 0)
        r = num_arg(host, call, args, nargs, 8, "alpha", 1.0, &q->alpha);
    if (r == 0)
        r = num_arg(host, call, args, nargs, 9, "beta", 0.0, &q->beta);
    if (r != 0)
        return r;
    q->m = v[0], q->n = v[1], q->k = v[2], q->ta = v[3] > 0, q->tb = v[4] > 0;
    q->lda = v[7], q->ldb = v[8], q->ldc = v[9], q->batch = v[10];
    q->sa = v[11], q->sb = v[12], q->sc = v[13], q->col = v[14] > 0;
    for (int i = 0; i < 3; i++)
        if (v[i] < 0 || v[i] > 0x7fffffff)
            return host->fail(call, "%s must be in [0, 2^31); got %lld", names[i], v[i]);
    if (q->batch < 1 || q->batch > 65535)
        return host->fail(call, "batch must be in [1, 65535]; got %lld", q->batch);
    return 0;
}

/* One stored operand: `rows` x `cols` as op() sees it, stored transposed
 * or not, in the layout; fills ld (default or checked), the strides along
 * op()'s rows and columns and the batch stride. */
static int operand(const hk_plugin_host *host, const hk_plugin_call *call, const char *name, long long rows,
                   long long cols, int trans, int col, long long *ld, long long given_stride,
                   long long *s_row, long long *s_col, long long *s_batch)
{
    /* stored as R x C with C contiguous (row-major view of the storage) */
    int swap = trans ^ col;
    long long inner = swap ? rows : cols, outer = swap ? cols : rows;
    long long min_ld = inner > 1 ? inner : 1;
    if (*ld == -1)
        *ld = min_ld;
    if (*ld < min_ld)
        return host->fail(call, "ld%s is %lld; it must be at least %lld", name, *ld, min_ld);
    *s_row = swap ? 1 : *ld;
    *s_col = swap ? *ld : 1;
    *s_batch = given_stride == -1 ? outer * *ld : given_stride;
    if (*s_batch < 0)
        return host->fail(call, "stride_%s must not be negative; got %lld", name, *s_batch);
    return 0;
}

/* Whether buffer buf holds the batch of rows x cols items at strides
 * (sr, sc, sb): the last element's index must be inside. */
static int check_extent(const hk_plugin_host *host, const hk_plugin_call *call, const void *buf,
                        const char *name, long long rows, long long cols, long long sr, long long sc,
                        long long sb, long long batch)
{
    if (rows == 0 || cols == 0)
        return 0;
    unsigned long long need = (unsigned long long)((batch - 1) * sb + (rows - 1) * sr + (cols - 1) * sc) + 1;
    size_t have = host->length(call, buf);
    if (have < need)
        return host->fail(call, "%s has %zu elements; this product needs %llu", name, have, need);
    return 0;
}

/* The caller's request as the kernels' view, operands checked. */
static int make_view(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                     request *q, view *v)
{
    long long am, ak, ab, bk, bn, bb, cm, cn, cb;
    int r = operand(host, call, "a", q->m, q->k, q->ta, q->col, &q->lda, q->sa, &am, &ak, &ab);
    if (r == 0)
        r = operand(host, call, "b", q->k, q->n, q->tb, q->col, &q->ldb, q->sb, &bk, &bn, &bb);
    if (r == 0)
        r = operand(host, call, "c", q->m, q->n, 0, q->col, &q->ldc, q->sc, &cm, &cn, &cb);
    if (r != 0)
        return r;
    if (q->batch > 1 && cb < (q->col ? q->n : q->m) * q->ldc)
        return host->fail(call, "stride_c %lld makes the batch's C matrices overlap", cb);
    if ((r = check_extent(host, call, args[1].v.buf, "a", q->m, q->k, am, ak, ab, q->batch)) ||
        (r = check_extent(host, call, args[2].v.buf, "b", q->k, q->n, bk, bn, bb, q->batch)) ||
        (r = check_extent(host, call, args[0].v.buf, "c", q->m, q->n, cm, cn, cb, q->batch)))
        return r;
    view rm = {q->m, q->n, q->k, am, ak, bk, bn, cm, ab, bb, cb, q->batch};
    if (q->col) /* C^T (n x m, row-major with ldc) = B^T A^T */
        rm = (view){q->n, q->m, q->k, bn, bk, ak, am, cn, bb, ab, cb, q->batch};
    *v = rm;
    return 0;
}

/* The dynamic shared memory of the tensor-core pipeline on NVIDIA, as
 * kernels/gemm/gemm.hip's hkg_mma::SHARED has it: HKG_STAGES (4) stages of
 * a bm x 32 tile of A and a 32 x bn tile of B, 2 bytes an element (96 KiB
 * for 128 x 256; the cuda backend opts the kernel in past 48 KiB). The
 * kernel takes the SIMT tiles when a launch brings less, and every other
 * backend gets none. */
#define NV_STAGES 4
static unsigned nvidia_shared(const hk_plugin_host *host, const hk_plugin_call *call, const char *ta, int bm,
                              int bn)
{
    if (strcmp(ta, "f16") && strcmp(ta, "bf16"))
        return 0;
    if (!HK_PLUGIN_HOST_HAS(host, backend) || strcmp(host->backend(call), "cuda"))
        return 0;
    return (unsigned)(NV_STAGES * (bm + bn) * 32 * 2);
}

/* Hopper's wgmma path (kernels/gemm/gemm.hip's hkg_wgmma, in the sm_90a
 * image and the JIT for 9.0 devices) takes the 128 x 256 tile when the
 * launch brings its ring: HKW_STAGES (4) stages of 128 x 64 of A and 64 x
 * 256 of B, 2 bytes an element, and 1024 bytes to align it (193 KiB). Asked
 * only where k is a multiple of its 64-deep tiles; the kernel itself checks
 * the rest block by block (inside C, unit strides, aligned rows) and runs
 * the mma.sync path for any block that does not fit, as it does on every
 * other NVIDIA target. A GPU with less shared memory (sm_80: 163 KiB)
 * refuses the launch, which is then made with the mma.sync size. */
#define WG_STAGES 4
#define WG_SHARED (WG_STAGES * (128 + 256) * 64 * 2 + 1024)

/* The f32 tile on NVIDIA (kernels/gemm/gemm.hip's hkg_sgemm: sm_80 and
 * later, full f32 FMA): HKS_STAGES (4) stages of two 16 x (128 + 4) f32
 * tiles, 66 KiB, for the 128 x 128 kernel, asked only where both operands
 * copy in 16 bytes at a time (A's unit stride along m, B's along n), where
 * it measured 1.1x the plain tile (docs/families/gemm-notes.md, v9); with
 * none the kernel runs the plain SIMT tiles, as on every other backend. */
#define SG_SHARED (4 * 2 * 16 * (128 + 4) * 4)
static unsigned nvidia_sgemm_shared(const hk_plugin_host *host, const hk_plugin_call *call, const char *ta, int bm,
                                    const view *v)
{
    if (strcmp(ta, "f32") || bm != 128 || v->sam != 1 || v->sbn != 1)
        return 0;
    if (!HK_PLUGIN_HOST_HAS(host, backend) || strcmp(host->backend(call), "cuda"))
        return 0;
    return SG_SHARED;
}

/* That tile copies an operand element by element unless it has unit
 * stride along m (A) or n (B) and 16-byte rows, which cancels its gain:
 * row-major A measured 0.74x cuBLAS at 4096^3 against 0.84x for A
 * transposed (gemm-notes.md v9). So a large product first packs such an
 * operand into scratch with those strides (gemm_pack_f32, a transpose:
 * m k 8 bytes moved for A, ~50 us at 4096^2 against the product's 3.2 ms).
 * The copy costs about 70 / n of the product for A (70 / m for B) and the
 * tile gains 13 %: packed where the other side is at least PACK_MIN and
 * the product at least PACK_MIN_K deep (shallow ones are bound by storing
 * C), while the scratch stays under PACK_MAX_BYTES. */
#define PACK_MIN 1024
#define PACK_MIN_K 512
#define PACK_MAX_BYTES (512ull << 20)
#define PACK_ROUND(x) (((x) + 3) / 4 * 4) /* 16-byte rows */

static int sixteen_byte_rows(long long unit, long long ld) { return unit == 1 && ld % 4 == 0; }

/* n integer arguments into a[0 .. n) */
static void int_args(hk_plugin_arg *a, const long long *v, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = hk_plugin_int_arg(v[i]);
}

/* Packs operand X (rows x k: X(r, p) = x[z * bs + r * sr + p * sp]) into
 * scratch as rows-contiguous columns of PACK_ROUND(rows); *arg becomes the
 * scratch buffer and sr, sp, bs its strides. 0, or the call failed. */
static int pack_operand(const hk_plugin_host *host, const hk_plugin_call *call, hk_plugin_arg *arg, long long rows,
                        long long k, long long *sr, long long *sp, long long *bs, long long batch)
{
    long long ld = PACK_ROUND(rows), items = *bs == 0 ? 1 : batch; /* bs 0: one operand shared by the batch */
    hk_plugin_arg x = *arg, y = {HK_PLUGIN_ARG_BUFFER, {0}};
    y.v.buf = host->scratch_raw(call, "f32", (size_t)(items * k * ld)); /* the pack writes every element read */
    if (!y.v.buf)
        return -1;
    hk_plugin_arg a[9] = {x, y};
    long long ints[7] = {rows, k, *sr, *sp, ld, *bs, k * ld};
    int_args(a + 2, ints, 7);
    hk_plugin_config cfg = {{(unsigned)((k + 31) / 32), (unsigned)((rows + 31) / 32), (unsigned)items}, {32, 8, 1}, 0};
    int r = host->launch_config(call, "gemm_pack_f32", &cfg, a, 9);
    if (r != 0)
        return r;
    *arg = y;
    *sr = 1, *sp = ld, *bs = *bs == 0 ? 0 : k * ld;
    return 0;
}

/* Whether packing operand X (rows deep along its own side, `other` along
 * the other side of C) pays, by the rule above; a product split along k
 * (below) packs whatever it would copy element by element. */
static int pack_pays(const view *v, long long rows, long long other, long long unit, long long ld, int split)
{
    unsigned long long bytes = (unsigned long long)PACK_ROUND(rows) * (unsigned long long)v->k * 4ull *
                               (unsigned long long)v->batch;
    return !sixteen_byte_rows(unit, ld) && (split || (other >= PACK_MIN && v->k >= PACK_MIN_K)) &&
           rows <= 65535LL * 32 && bytes <= PACK_MAX_BYTES;
}

/* A product with fewer 128 x 128 tiles than an H100 has SMs (132) leaves
 * most of them idle, and the 64 x 64 tile (what other dtypes take there)
 * does half the arithmetic per byte of shared memory. Split along k
 * instead: `parts` products of k / parts computed as one batch into
 * scratch (the batch strides step along k), then gemm_splitk_f32 sums
 * them into C. parts: a power of two up to 16 that brings the tiles to
 * 128, dividing k into pieces at least SPLIT_MIN_K deep; 1 for no split. */
#define SPLIT_MIN_K 64
#define SPLIT_TILES 128
static int split_parts(const view *v)
{
    long long tiles = ((v->m + 127) / 128) * ((v->n + 127) / 128);
    int parts = 1;
    if (v->batch != 1 || v->m > 65535)
        return 1;
    while (tiles * parts < SPLIT_TILES && parts < 16)
        parts *= 2;
    while (parts > 1 && (v->k % parts || v->k / parts < SPLIT_MIN_K))
        parts /= 2;
    if ((unsigned long long)parts * (unsigned long long)(v->m * v->n) * 4ull > PACK_MAX_BYTES)
        return 1;
    return parts;
}

/* f32 on NVIDIA through the cp.async tile (hkg_sgemm): packs the operands
 * it would copy element by element where that pays (every one when split),
 * splits along k into `parts` (split_parts), and launches. a: the 16
 * kernel arguments, their ints and buffers those of v. */
static int launch_f32_nvidia(const hk_plugin_host *host, const hk_plugin_call *call, hk_plugin_arg *a, view v,
                             int parts)
{
    int r = 0;
    if (pack_pays(&v, v.m, v.n, v.sam, v.sak, parts > 1))
        r = pack_operand(host, call, &a[0], v.m, v.k, &v.sam, &v.sak, &v.bsa, v.batch);
    if (r == 0 && pack_pays(&v, v.n, v.m, v.sbn, v.sbk, parts > 1))
        r = pack_operand(host, call, &a[1], v.n, v.k, &v.sbn, &v.sbk, &v.bsb, v.batch);
    if (r != 0)
        return r;
    hk_plugin_arg c = a[2], work = {HK_PLUGIN_ARG_BUFFER, {0}};
    long long kp = v.k / parts, ldc = v.ldc;
    if (parts > 1) { /* the pieces: a batch along k into work, alpha 1, beta 0 */
        work.v.buf = host->scratch_raw(call, "f32", (size_t)(parts * v.m * v.n)); /* beta 0 writes it all */
        if (!work.v.buf)
            return -1;
        a[2] = work;
        v.bsa = kp * v.sak, v.bsb = kp * v.sbk, v.ldc = v.n, v.bsc = v.m * v.n, v.batch = parts;
    }
    long long ints[11] = {v.m, v.n, kp, v.sam, v.sak, v.sbk, v.sbn, v.ldc, v.bsa, v.bsb, v.bsc};
    int_args(a + 3, ints, 11);
    double alpha = a[14].v.f, beta = a[15].v.f;
    if (parts > 1)
        a[14].v.f = 1.0, a[15].v.f = 0.0;
    hk_plugin_config cfg = {{(unsigned)((v.n + 127) / 128), (unsigned)((v.m + 127) / 128), (unsigned)v.batch},
                            {THREADS, 1, 1},
                            SG_SHARED};
    if (v.sam != 1 || v.sbn != 1)
        cfg.shared_bytes = 0; /* not packed: the plain tile measured as fast there */
    r = host->launch_config(call, "gemm_f32_f32", &cfg, a, 16);
    if (r != 0 && cfg.shared_bytes) { /* a GPU with less shared memory: the plain tile */
        cfg.shared_bytes = 0;
        r = host->launch_config(call, "gemm_f32_f32", &cfg, a, 16);
    }
    if (r != 0 || parts == 1)
        return r;
    hk_plugin_arg sum[8] = {work, c};
    long long sints[4] = {v.m, v.n, ldc, parts};
    int_args(sum + 2, sints, 4);
    sum[6].kind = sum[7].kind = HK_PLUGIN_ARG_FLOAT;
    sum[6].v.f = alpha;
    sum[7].v.f = beta;
    hk_plugin_config scfg = {{(unsigned)((v.n + 255) / 256), (unsigned)v.m, 1}, {256, 1, 1}, 0};
    return host->launch_config(call, "gemm_splitk_f32", &scfg, sum, 8);
}

/* matmul(c, a, b, m, n, k, [transa, transb, alpha, beta, lda, ldb, ldc,
 * batch, stride_a, stride_b, stride_c, colmajor]) */
static int op_matmul(const hk_plugin_host *host, const hk_plugin_call *call, const hk_plugin_arg *args,
                     int nargs)
{
    if (!HK_PLUGIN_HOST_HAS(host, launch_config))
        return host->fail(call, "needs a hipkit with plugin ABI 1.4 (launch_config)");
    if (nargs < 6 || nargs > 18 || !is_buffer(&args[0]) || !is_buffer(&args[1]) || !is_buffer(&args[2]))
        return host->fail(call, "expects buffers c, a, b, then m, n, k and optional settings; got %d arguments",
                          nargs);
    request q;
    view v = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int r = read_request(host, call, args, nargs, &q);
    if (r == 0)
        r = make_view(host, call, args, &q, &v);
    if (r != 0)
        return r;
    const char *ta = host->dtype(call, args[1].v.buf), *tb = host->dtype(call, args[2].v.buf);
    const char *tc = host->dtype(call, args[0].v.buf);
    size_t p = 0;
    while (p < NPAIRS && !(ta && tc && !strcmp(pairs[p].in, ta) && !strcmp(pairs[p].out, tc)))
        p++;
    if (p == NPAIRS)
        return host->fail(call, "no kernel takes a (%s) and writes c (%s); pairs: f32->f32, f64->f64, "
                          "f16->f16|f32, bf16->bf16|f32", ta ? ta : "?", tc ? tc : "?");
    if (!tb || strcmp(ta, tb))
        return host->fail(call, "a is %s but b is %s; they must match", ta, tb ? tb : "?");
    /* c is written tile by tile while other tiles still read a and b */
    if ((r = hk_plugin_apart(host, call, args[0].v.buf, "c", args[1].v.buf, "a")) != 0 ||
        (r = hk_plugin_apart(host, call, args[0].v.buf, "c", args[2].v.buf, "b")) != 0)
        return r;
    if (v.m == 0 || v.n == 0)
        return 0;
    /* 64 x 64 tiles when big ones would leave an H100's 132 SMs mostly
     * idle (docs/families/gemm-notes.md) */
    int bm = 128, bn = pairs[p].bn;
    unsigned nv = nvidia_shared(host, call, ta, bm, bn);
    /* f32 on NVIDIA: the cp.async tile, split along k where too few tiles */
    int f32nv = !strcmp(ta, "f32") && HK_PLUGIN_HOST_HAS(host, scratch_raw) && HK_PLUGIN_HOST_HAS(host, backend) &&
                !strcmp(host->backend(call), "cuda");
    int parts = f32nv ? split_parts(&v) : 1;
    if (((v.m + bm - 1) / bm) * ((v.n + bn - 1) / bn) * v.batch < 128 && parts == 1)
        bm = bn = 64;
    /* a shallow product on the mma.sync path is bound by writing C: the
     * 64 x 64 tile (two blocks an SM) overlaps one block's stores with
     * another's loads, 0.60x cuBLAS at 4096 x 4096 x 64 against 0.45x. The
     * wgmma path (k a multiple of 64) stores C in whole rows and beats both
     * there (72.5 TFLOP/s against 45.1, gemm-notes.md v8) */
    int wg = nv && bm == 128 && v.k > 0 && v.k % 64 == 0;
    if (nv && v.k <= 128 && !wg)
        bm = bn = 64;
    /* at most 64 rows (a convolution's output channels): the 128-row
     * tile would run every block on its bounds-checked loads */
    if (nv && v.m <= 64)
        bm = bn = 64;
    if ((v.m + bm - 1) / bm > 65535)
        return host->fail(call, "%lld rows are more than 65535 tiles of %d", v.m, bm);
    char kernel[64];
    snprintf(kernel, sizeof kernel, "gemm%s_%s_%s", bm == 64 ? "64" : "", ta, tc);
    hk_plugin_arg a[16] = {args[q.col ? 2 : 1], args[q.col ? 1 : 2], args[0]}; /* col: B^T A^T */
    long long ints[11] = {v.m, v.n, v.k, v.sam, v.sak, v.sbk, v.sbn, v.ldc, v.bsa, v.bsb, v.bsc};
    int_args(a + 3, ints, 11);
    a[14].kind = a[15].kind = HK_PLUGIN_ARG_FLOAT;
    a[14].v.f = q.alpha;
    a[15].v.f = q.beta;
    if (f32nv && bm == 128)
        return launch_f32_nvidia(host, call, a, v, parts);
    hk_plugin_config cfg = {{(unsigned)((v.n + bn - 1) / bn), (unsigned)((v.m + bm - 1) / bm), (unsigned)v.batch},
                            {THREADS, 1, 1},
                            nv ? nvidia_shared(host, call, ta, bm, bn) : nvidia_sgemm_shared(host, call, ta, bm, &v)};
    if (wg && bm == 128) {
        cfg.shared_bytes = WG_SHARED;
        r = host->launch_config(call, kernel, &cfg, a, 16);
        if (r == 0)
            return 0;
        /* a GPU with less than 193 KiB: the mma.sync path, shallow products
         * on the 64 x 64 tile as above */
        if (v.k <= 128) {
            bm = bn = 64;
            snprintf(kernel, sizeof kernel, "gemm64_%s_%s", ta, tc);
            cfg.grid[0] = (unsigned)((v.n + bn - 1) / bn);
            cfg.grid[1] = (unsigned)((v.m + bm - 1) / bm);
        }
        cfg.shared_bytes = nvidia_shared(host, call, ta, bm, bn);
    }
    r = host->launch_config(call, kernel, &cfg, a, 16);
    if (r != 0 && cfg.shared_bytes) { /* a GPU with less (before sm_80: no tensor cores to feed) */
        cfg.shared_bytes = 0;
        r = host->launch_config(call, kernel, &cfg, a, 16);
    }
    return r;
}

static int add_kernels(const hk_plugin_api *api)
{
    hk_plugin_rule rule = {sizeof rule, {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0}, 0, 0, 0, NULL, 0};
    char name[64], sig[512], doc[256];
    int r = 0;
    for (int tile = 0; r == 0 && tile < 2; tile++)
        for (size_t p = 0; r == 0 && p < NPAIRS; p++) {
            snprintf(name, sizeof name, "gemm%s_%s_%s", tile ? "64" : "", pairs[p].in, pairs[p].out);
            snprintf(sig, sizeof sig,
                     "const %s *a, const %s *b, %s *c, int m, int n, int k, long long sam, long long sak, "
                     "long long sbk, long long sbn, long long ldc, long long bsa, long long bsb, "
                     "long long bsc, %s alpha, %s beta",
                     pairs[p].ta, pairs[p].ta, pairs[p].tc, pairs[p].s, pairs[p].s);
            int bn = tile ? 64 : pairs[p].bn, bm = tile ? 64 : 128;
            snprintf(doc, sizeof doc,
                     "C = alpha A B + beta C, %dx%d tiles, %s; block 256, grid {ceil(n/%d), ceil(m/%d), batch} "
                     "(hk.ops.gemm.matmul launches it)",
                     bm, bn, pairs[p].note, bn, bm);
            r = api->add_kernel_rule(api, "gemm", "gemm.hip", name, sig, &rule, doc);
        }
    /* matmul's helpers on NVIDIA (launch_f32_nvidia) */
    static const struct { const char *name, *sig, *doc; } helpers[] = {
        {"gemm_pack_f32",
         "const float *x, float *y, int rows, int cols, long long sr, long long sc, long long ldy, long long bsx, "
         "long long bsy",
         "y[z bsy + c ldy + r] = x[z bsx + r sr + c sc]: an f32 operand packed with unit stride along r (matmul's, "
         "before large products on NVIDIA); block {32, 8}, grid {ceil(cols/32), ceil(rows/32), batch}"},
        {"gemm_splitk_f32", "const float *w, float *c, int m, int n, long long ldc, int parts, float alpha, float beta",
         "c[i ldc + j] = alpha (sum of parts pieces w[z m n + i n + j]) + beta c: a product split along k summed "
         "(matmul's); block 256, grid {ceil(n/256), m}"},
    };
    for (size_t i = 0; r == 0 && i < sizeof helpers / sizeof helpers[0]; i++)
        r = api->add_kernel_rule(api, "gemm", "gemm.hip", helpers[i].name, helpers[i].sig, &rule, helpers[i].doc);
    return r;
}

int hk_plugin_gemm_init(const hk_plugin_api *api)
{
    if (!HK_PLUGIN_API_HAS(api, add_kernel_rule)) {
        api->error(api, "needs plugin ABI 1.4 (add_kernel_rule)");
        return 1;
    }
    int r = api->register_family(api, "gemm", "0.1.0",
                                 "matrix products C = alpha op(A) op(B) + beta C, batched; tensor cores / MFMA");
    if (r == 0)
        r = api->add_source(api, "gemm", "gemm.hip", hk_gemm_sources[0].data);
    if (r == 0)
        r = hk_plugin_add_images(api, "gemm", hk_gemm_images);
    if (r == 0)
        r = add_kernels(api);
    if (r == 0)
        r = api->add_op(api, "gemm", "matmul",
                        "c, a, b, m, n, k, [transa, transb, alpha, beta, lda, ldb, ldc, batch, stride_a, "
                        "stride_b, stride_c, colmajor]",
                        op_matmul,
                        "c = alpha op(a) op(b) + beta c (m x n, k deep); nil takes the default: no transposes, "
                        "alpha 1, beta 0, packed leading dimensions and strides, batch 1, row-major");
    return r;
}
