/* The CPU backend against pocl and OpenMP on five kernels, four of them with
 * barriers (issue 19): the same algorithms, the same number of threads, the
 * median of 7 runs after a warm-up, every result checked against a serial
 * CPU reference on random data.
 *   bench-barriers [threads]        (default 2)
 *   bench-barriers fibers           (the cost of a fiber, one OS thread)
 * pocl is found at run time (libOpenCL.so.1 through the ICD loader, Debian's
 * pocl-opencl-icd): without it that column says n/a. Nothing here runs in
 * the test suite. */
#include <hipkit/hipkit.h>

#include "bench_util.h"
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HK_HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

enum { RUNS = 7, VEC_N = 1 << 26, SUM_N = 1 << 24, MM_N = 512, ST_W = 4096, ST_H = 4096,
       HIST_N = 1 << 24, HIST_ITEMS = 64 };

static hk_context *ctx;
static int nthreads = 2;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench-barriers: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

/* ----------------------------------------------------------- the kernels */

static const char *hip_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void axpb(const float *x, float *y, float a, float b, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void block_sum(const float *x, float *out) {\n"
    "    __shared__ float s[256];\n"
    "    unsigned t = threadIdx.x;\n"
    "    s[t] = x[blockIdx.x * 256 + t];\n"
    "    __syncthreads();\n"
    "    for (unsigned w = 128; w > 0; w >>= 1) {\n"
    "        if (t < w) s[t] += s[t + w];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (t == 0) out[blockIdx.x] = s[0];\n"
    "}\n"
    "extern \"C\" __global__ void matmul(const float *A, const float *B, float *C, int n) {\n"
    "    __shared__ float As[16][16];\n"
    "    __shared__ float Bs[16][16];\n"
    "    int tx = threadIdx.x, ty = threadIdx.y;\n"
    "    int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;\n"
    "    float acc = 0.0f;\n"
    "    for (int k0 = 0; k0 < n; k0 += 16) {\n"
    "        As[ty][tx] = A[row * n + k0 + tx];\n"
    "        Bs[ty][tx] = B[(k0 + ty) * n + col];\n"
    "        __syncthreads();\n"
    "        for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    C[row * n + col] = acc;\n"
    "}\n"
    "extern \"C\" __global__ void stencil(const float *in, float *out, int w, int h) {\n"
    "    __shared__ float s[18][18];\n"
    "    int tx = threadIdx.x, ty = threadIdx.y;\n"
    "    int x = blockIdx.x * 16 + tx, y = blockIdx.y * 16 + ty;\n"
    "    s[ty + 1][tx + 1] = in[y * w + x];\n"
    "    if (tx == 0) s[ty + 1][0] = x > 0 ? in[y * w + x - 1] : 0.0f;\n"
    "    if (tx == 15) s[ty + 1][17] = x < w - 1 ? in[y * w + x + 1] : 0.0f;\n"
    "    if (ty == 0) s[0][tx + 1] = y > 0 ? in[(y - 1) * w + x] : 0.0f;\n"
    "    if (ty == 15) s[17][tx + 1] = y < h - 1 ? in[(y + 1) * w + x] : 0.0f;\n"
    "    __syncthreads();\n"
    "    out[y * w + x] = 0.5f * s[ty + 1][tx + 1] +\n"
    "        0.125f * (s[ty][tx + 1] + s[ty + 2][tx + 1] + s[ty + 1][tx] + s[ty + 1][tx + 2]);\n"
    "}\n"
    "extern \"C\" __global__ void histo(const unsigned char *d, unsigned *hist, int n) {\n"
    "    __shared__ unsigned hs[256];\n"
    "    unsigned t = threadIdx.x;\n"
    "    hs[t] = 0;\n"
    "    __syncthreads();\n"
    "    int base = blockIdx.x * 256 * 64;\n"
    "    for (int j = 0; j < 64; j++) {\n"
    "        int i = base + j * 256 + (int)t;\n"
    "        if (i < n) atomicAdd(&hs[d[i]], 1u);\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if (hs[t]) atomicAdd(&hist[t], hs[t]);\n"
    "}\n";

#ifdef HK_HAVE_OPENCL
static const char *cl_src =
    "__kernel void axpb(__global const float *x, __global float *y, float a, float b, int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) y[i] = a * x[i] + b;\n"
    "}\n"
    "__kernel void block_sum(__global const float *x, __global float *out) {\n"
    "    __local float s[256];\n"
    "    unsigned t = get_local_id(0);\n"
    "    s[t] = x[get_group_id(0) * 256 + t];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (unsigned w = 128; w > 0; w >>= 1) {\n"
    "        if (t < w) s[t] += s[t + w];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (t == 0) out[get_group_id(0)] = s[0];\n"
    "}\n"
    "__kernel void matmul(__global const float *A, __global const float *B, __global float *C, int n) {\n"
    "    __local float As[16][16];\n"
    "    __local float Bs[16][16];\n"
    "    int tx = get_local_id(0), ty = get_local_id(1);\n"
    "    int row = get_group_id(1) * 16 + ty, col = get_group_id(0) * 16 + tx;\n"
    "    float acc = 0.0f;\n"
    "    for (int k0 = 0; k0 < n; k0 += 16) {\n"
    "        As[ty][tx] = A[row * n + k0 + tx];\n"
    "        Bs[ty][tx] = B[(k0 + ty) * n + col];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    C[row * n + col] = acc;\n"
    "}\n"
    "__kernel void stencil(__global const float *in, __global float *out, int w, int h) {\n"
    "    __local float s[18][18];\n"
    "    int tx = get_local_id(0), ty = get_local_id(1);\n"
    "    int x = get_group_id(0) * 16 + tx, y = get_group_id(1) * 16 + ty;\n"
    "    s[ty + 1][tx + 1] = in[y * w + x];\n"
    "    if (tx == 0) s[ty + 1][0] = x > 0 ? in[y * w + x - 1] : 0.0f;\n"
    "    if (tx == 15) s[ty + 1][17] = x < w - 1 ? in[y * w + x + 1] : 0.0f;\n"
    "    if (ty == 0) s[0][tx + 1] = y > 0 ? in[(y - 1) * w + x] : 0.0f;\n"
    "    if (ty == 15) s[17][tx + 1] = y < h - 1 ? in[(y + 1) * w + x] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[y * w + x] = 0.5f * s[ty + 1][tx + 1] +\n"
    "        0.125f * (s[ty][tx + 1] + s[ty + 2][tx + 1] + s[ty + 1][tx] + s[ty + 1][tx + 2]);\n"
    "}\n"
    "__kernel void histo(__global const uchar *d, __global uint *hist, int n) {\n"
    "    __local uint hs[256];\n"
    "    uint t = get_local_id(0);\n"
    "    hs[t] = 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int base = get_group_id(0) * 256 * 64;\n"
    "    for (int j = 0; j < 64; j++) {\n"
    "        int i = base + j * 256 + (int)t;\n"
    "        if (i < n) atomic_inc(&hs[d[i]]);\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (hs[t]) atomic_add(&hist[t], hs[t]);\n"
    "}\n";
#endif

/* ---------------------------------------------------- OpenMP, same work */

static void omp_axpb(const float *x, float *y, float a, float b, int n)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + b;
}

static void omp_block_sum(const float *x, float *out, int nblocks)
{
#pragma omp parallel for schedule(static)
    for (int blk = 0; blk < nblocks; blk++) {
        float s[256];
        memcpy(s, x + (size_t)blk * 256, sizeof s);
        for (unsigned w = 128; w > 0; w >>= 1)
            for (unsigned t = 0; t < w; t++)
                s[t] += s[t + w];
        out[blk] = s[0];
    }
}

static void omp_matmul(const float *A, const float *B, float *C, int n)
{
    int tiles = n / 16;
#pragma omp parallel for schedule(static)
    for (int tile = 0; tile < tiles * tiles; tile++) {
        int by = tile / tiles, bx = tile % tiles;
        float As[16][16], Bs[16][16], acc[16][16] = {{0}};
        for (int k0 = 0; k0 < n; k0 += 16) {
            for (int ty = 0; ty < 16; ty++)
                for (int tx = 0; tx < 16; tx++) {
                    As[ty][tx] = A[(by * 16 + ty) * n + k0 + tx];
                    Bs[ty][tx] = B[(k0 + ty) * n + bx * 16 + tx];
                }
            for (int ty = 0; ty < 16; ty++)
                for (int k = 0; k < 16; k++)
                    for (int tx = 0; tx < 16; tx++)
                        acc[ty][tx] += As[ty][k] * Bs[k][tx];
        }
        for (int ty = 0; ty < 16; ty++)
            for (int tx = 0; tx < 16; tx++)
                C[(by * 16 + ty) * n + bx * 16 + tx] = acc[ty][tx];
    }
}

static float at_or_zero(const float *in, int x, int y, int w, int h)
{
    return x >= 0 && x < w && y >= 0 && y < h ? in[(size_t)y * w + x] : 0.0f;
}

static void omp_stencil(const float *in, float *out, int w, int h)
{
    int tw = w / 16, th = h / 16;
#pragma omp parallel for schedule(static)
    for (int tile = 0; tile < tw * th; tile++) {
        int by = tile / tw, bx = tile % tw;
        float s[18][18];
        for (int ty = -1; ty < 17; ty++)
            for (int tx = -1; tx < 17; tx++)
                s[ty + 1][tx + 1] = (tx == -1 || tx == 16) && (ty == -1 || ty == 16)
                                        ? 0.0f
                                        : at_or_zero(in, bx * 16 + tx, by * 16 + ty, w, h);
        for (int ty = 0; ty < 16; ty++)
            for (int tx = 0; tx < 16; tx++)
                out[(size_t)(by * 16 + ty) * w + bx * 16 + tx] =
                    0.5f * s[ty + 1][tx + 1] +
                    0.125f * (s[ty][tx + 1] + s[ty + 2][tx + 1] + s[ty + 1][tx] + s[ty + 1][tx + 2]);
    }
}

static void omp_histo(const unsigned char *d, unsigned *hist, int n)
{
    int nblocks = (n + 256 * HIST_ITEMS - 1) / (256 * HIST_ITEMS);
    memset(hist, 0, 256 * sizeof *hist);
#pragma omp parallel for schedule(static)
    for (int blk = 0; blk < nblocks; blk++) {
        unsigned hs[256] = {0};
        int lo = blk * 256 * HIST_ITEMS, hi = lo + 256 * HIST_ITEMS < n ? lo + 256 * HIST_ITEMS : n;
        for (int i = lo; i < hi; i++)
            hs[d[i]]++;
        for (int t = 0; t < 256; t++)
            if (hs[t]) {
#pragma omp atomic
                hist[t] += hs[t];
            }
    }
}

/* --------------------------------------------------- serial references */

static void ref_block_sum(const float *x, float *out, int nblocks)
{
    for (int b = 0; b < nblocks; b++) {
        double s = 0;
        for (int t = 0; t < 256; t++)
            s += x[(size_t)b * 256 + t];
        out[b] = (float)s;
    }
}

static void ref_matmul(const float *A, const float *B, float *C, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += (double)A[i * n + k] * B[k * n + j];
            C[i * n + j] = (float)s;
        }
}

static void ref_stencil(const float *in, float *out, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[(size_t)y * w + x] =
                (float)(0.5 * in[(size_t)y * w + x] +
                        0.125 * ((double)at_or_zero(in, x, y - 1, w, h) + at_or_zero(in, x, y + 1, w, h) +
                                 at_or_zero(in, x - 1, y, w, h) + at_or_zero(in, x + 1, y, w, h)));
}

/* Largest |got - want| / (|want| + scale) over n floats. */
static double max_err(const float *got, const float *want, size_t n, double scale)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / (fabs((double)want[i]) + scale);
        if (!(e <= worst)) /* NaN counts as the worst */
            worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

/* ------------------------------------------------------ the five cases */

typedef struct barg {
    int buf;      /* index into the case's buffers, or -1 for a scalar */
    int is_float; /* scalar: float, else int */
    double v;
} barg;

typedef struct bbuf {
    hk_dtype dt;
    size_t n;
    void *host; /* input data, or the output's storage */
    int zero;   /* an output that accumulates: zeroed before each run */
} bbuf;

typedef struct bcase {
    const char *label, *kernel;
    hk_dim3 grid, block;
    int nbufs;
    bbuf bufs[3];
    int out; /* buffer checked */
    int nargs;
    barg args[5];
    void (*omp)(struct bcase *c);
    const void *want; /* the serial reference */
    double tol;       /* relative, for floats; 0 for exact */
    double err;       /* worst error seen over all runs and runtimes */
} bcase;

#define HOSTF(c, i) ((float *)(c)->bufs[i].host)

static void omp_case_axpb(bcase *c) { omp_axpb(HOSTF(c, 0), HOSTF(c, 1), 2.5f, -1.0f, VEC_N); }
static void omp_case_sum(bcase *c) { omp_block_sum(HOSTF(c, 0), HOSTF(c, 1), SUM_N / 256); }
static void omp_case_matmul(bcase *c) { omp_matmul(HOSTF(c, 0), HOSTF(c, 1), HOSTF(c, 2), MM_N); }
static void omp_case_stencil(bcase *c) { omp_stencil(HOSTF(c, 0), HOSTF(c, 1), ST_W, ST_H); }
static void omp_case_histo(bcase *c) { omp_histo(c->bufs[0].host, c->bufs[1].host, HIST_N); }

static size_t buf_bytes(const bbuf *b) { return b->n * hk_dtype_size(b->dt); }

/* Compares the case's output (got) with its reference, keeping the worst. */
static void check(bcase *c, const void *got, const char *who)
{
    const bbuf *o = &c->bufs[c->out];
    double e;
    if (c->tol > 0) {
        e = max_err(got, c->want, o->n, 1.0);
    } else {
        e = memcmp(got, c->want, buf_bytes(o)) ? INFINITY : 0;
    }
    if (!(e <= (c->tol > 0 ? c->tol : 0))) {
        fprintf(stderr, "bench-barriers: %s: %s's result is wrong (worst relative error %g)\n", c->label,
                who, e);
        exit(1);
    }
    if (e > c->err)
        c->err = e;
}

static void *rand_floats(size_t n, unsigned seed)
{
    float *p = malloc(n * sizeof *p);
    if (!p)
        die("out of memory", NULL);
    srand(seed);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
    return p;
}

static void *alloc_out(size_t bytes)
{
    void *p = calloc(1, bytes);
    if (!p)
        die("out of memory", NULL);
    return p;
}

/* Builds the cases with their random inputs and serial references. */
static int make_cases(bcase *cs)
{
    float *vx = rand_floats(VEC_N, 1), *vy = alloc_out((size_t)VEC_N * 4);
    float *vref = alloc_out((size_t)VEC_N * 4);
    for (size_t i = 0; i < VEC_N; i++)
        vref[i] = 2.5f * vx[i] - 1.0f;
    cs[0] = (bcase){"y = a*x + b, 2^26 f32 (no barrier)", "axpb", {VEC_N / 256, 1, 1}, {256, 1, 1},
                    2, {{HK_F32, VEC_N, vx, 0}, {HK_F32, VEC_N, vy, 0}}, 1,
                    5, {{0, 0, 0}, {1, 0, 0}, {-1, 1, 2.5}, {-1, 1, -1.0}, {-1, 0, VEC_N}},
                    omp_case_axpb, vref, 1e-6, 0};

    float *sx = rand_floats(SUM_N, 2), *sref = alloc_out(SUM_N / 256 * 4);
    ref_block_sum(sx, sref, SUM_N / 256);
    cs[1] = (bcase){"block sum of 2^24 f32, 256 threads, shared tree", "block_sum",
                    {SUM_N / 256, 1, 1}, {256, 1, 1},
                    2, {{HK_F32, SUM_N, sx, 0}, {HK_F32, SUM_N / 256, alloc_out(SUM_N / 256 * 4), 0}}, 1,
                    2, {{0, 0, 0}, {1, 0, 0}}, omp_case_sum, sref, 1e-4, 0};

    float *ma = rand_floats(MM_N * MM_N, 3), *mb = rand_floats(MM_N * MM_N, 4);
    float *mref = alloc_out(MM_N * MM_N * 4);
    ref_matmul(ma, mb, mref, MM_N);
    cs[2] = (bcase){"tiled matmul 512^3 f32, 16x16 tiles", "matmul", {MM_N / 16, MM_N / 16, 1},
                    {16, 16, 1}, 3,
                    {{HK_F32, MM_N * MM_N, ma, 0}, {HK_F32, MM_N * MM_N, mb, 0},
                     {HK_F32, MM_N * MM_N, alloc_out(MM_N * MM_N * 4), 0}}, 2,
                    4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {-1, 0, MM_N}}, omp_case_matmul, mref, 1e-4, 0};

    size_t sn = (size_t)ST_W * ST_H;
    float *si = rand_floats(sn, 5), *stref = alloc_out(sn * 4);
    ref_stencil(si, stref, ST_W, ST_H);
    cs[3] = (bcase){"5-point stencil 2^24 f32, shared halo, 1 barrier", "stencil",
                    {ST_W / 16, ST_H / 16, 1}, {16, 16, 1},
                    2, {{HK_F32, sn, si, 0}, {HK_F32, sn, alloc_out(sn * 4), 0}}, 1,
                    4, {{0, 0, 0}, {1, 0, 0}, {-1, 0, ST_W}, {-1, 0, ST_H}}, omp_case_stencil, stref, 1e-5, 0};

    unsigned char *hd = malloc(HIST_N);
    unsigned *href = alloc_out(256 * 4);
    if (!hd)
        die("out of memory", NULL);
    srand(6);
    for (size_t i = 0; i < HIST_N; i++) {
        hd[i] = (unsigned char)(rand() >> 7);
        href[hd[i]]++;
    }
    cs[4] = (bcase){"histogram of 2^24 bytes, shared atomics", "histo",
                    {HIST_N / (256 * HIST_ITEMS), 1, 1}, {256, 1, 1},
                    2, {{HK_U8, HIST_N, hd, 0}, {HK_U32, 256, alloc_out(256 * 4), 1}}, 1,
                    3, {{0, 0, 0}, {1, 0, 0}, {-1, 0, HIST_N}}, omp_case_histo, href, 0, 0};
    return 5;
}

/* --------------------------------------------------------------- timing */

static double time_omp(bcase *c)
{
    double t[RUNS];
    bbuf *o = &c->bufs[c->out];
    c->omp(c); /* warm-up */
    check(c, o->host, "OpenMP");
    for (int r = 0; r < RUNS; r++) {
        memset(o->host, 0xff, buf_bytes(o)); /* a stale result must not pass */
        double t0 = now_us();
        c->omp(c);
        t[r] = now_us() - t0;
        check(c, o->host, "OpenMP");
    }
    return median(t, RUNS) / 1000;
}

static double time_hipkit(bcase *c, hk_module *m)
{
    hk_kernel *k;
    if (hk_module_kernel(m, c->kernel, &k))
        die(c->kernel, hk_errmsg(ctx));
    hk_buffer *b[3];
    hk_arg args[5];
    for (int i = 0; i < c->nbufs; i++)
        if (hk_buffer_alloc(ctx, c->bufs[i].n, c->bufs[i].dt, HK_MEM_DEVICE, &b[i]) ||
            hk_buffer_upload(b[i], 0, c->bufs[i].host, buf_bytes(&c->bufs[i])))
            die("hipkit buffer", hk_errmsg(ctx));
    for (int i = 0; i < c->nargs; i++) {
        const barg *a = &c->args[i];
        args[i] = a->buf >= 0 ? hk_arg_buffer(b[a->buf]) : a->is_float ? hk_arg_float(a->v)
                                                                        : hk_arg_int((int64_t)a->v);
    }
    hk_launch_config cfg = {c->grid, c->block, 0};
    bbuf *o = &c->bufs[c->out];
    void *got = alloc_out(buf_bytes(o));
    unsigned char zero[4] = {0}, junk[4] = {0xff, 0xff, 0xff, 0xff};
    double t[RUNS + 1];
    for (int r = 0; r <= RUNS; r++) {
        if (hk_buffer_fill(b[c->out], o->zero ? zero : junk))
            die("hipkit fill", hk_errmsg(ctx));
        double t0 = now_us();
        if (hk_launch(k, &cfg, args, c->nargs) || hk_synchronize(ctx))
            die(c->kernel, hk_errmsg(ctx));
        t[r] = now_us() - t0;
        if (hk_buffer_download(b[c->out], 0, got, buf_bytes(o)))
            die("hipkit download", hk_errmsg(ctx));
        check(c, got, "hipkit");
    }
    free(got);
    for (int i = 0; i < c->nbufs; i++)
        hk_buffer_free(b[i]);
    return median(t + 1, RUNS) / 1000; /* t[0] was the warm-up */
}

/* ------------------------------------------------ pocl, through OpenCL */

#ifdef HK_HAVE_OPENCL
#define CL_FUNCTIONS(X)                                                                            \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clCreateContext)                  \
    X(clCreateCommandQueue) X(clCreateProgramWithSource) X(clBuildProgram) X(clGetProgramBuildInfo) \
    X(clCreateKernel) X(clCreateBuffer) X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clFinish)    \
    X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer) X(clReleaseMemObject) X(clReleaseKernel)
static struct {
#define CL_SLOT(f) __typeof__(f) *f;
    CL_FUNCTIONS(CL_SLOT)
#undef CL_SLOT
} cl;

static cl_context cl_ctx;
static cl_command_queue cl_q;
static cl_program cl_prog;
static char cl_version[256];
static double cl_build_ms;

/* Opens libOpenCL and pocl's platform; 0, or -1 with why in cl_version. */
static int cl_open(void)
{
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(cl_version, sizeof cl_version, "no libOpenCL.so.1 (apt-get install pocl-opencl-icd)");
        return -1;
    }
#define CL_LOAD(f)                                                                                 \
    if (!(*(void **)&cl.f = dlsym(h, #f))) {                                                       \
        snprintf(cl_version, sizeof cl_version, "libOpenCL has no %s", #f);                        \
        return -1;                                                                                 \
    }
    CL_FUNCTIONS(CL_LOAD)
#undef CL_LOAD
    cl_platform_id plats[8];
    cl_uint np = 0;
    if (cl.clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0) {
        snprintf(cl_version, sizeof cl_version, "no OpenCL platform (is pocl-opencl-icd installed?)");
        return -1;
    }
    for (cl_uint i = 0; i < np; i++) {
        char v[256] = "";
        cl.clGetPlatformInfo(plats[i], CL_PLATFORM_VERSION, sizeof v, v, NULL);
        if (!strstr(v, "PoCL") && !strstr(v, "pocl"))
            continue;
        cl_device_id dev;
        if (cl.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_CPU, 1, &dev, NULL) != CL_SUCCESS)
            continue;
        cl_int e;
        cl_ctx = cl.clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
        cl_q = cl_ctx ? cl.clCreateCommandQueue(cl_ctx, dev, 0, &e) : NULL;
        if (!cl_q)
            continue;
        snprintf(cl_version, sizeof cl_version, "%s", v);
        double t0 = now_us();
        cl_prog = cl.clCreateProgramWithSource(cl_ctx, 1, &cl_src, NULL, &e);
        if (!cl_prog || cl.clBuildProgram(cl_prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL) != CL_SUCCESS) {
            char log[8192] = "";
            if (cl_prog)
                cl.clGetProgramBuildInfo(cl_prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
            die("pocl build", log);
        }
        cl_build_ms = (now_us() - t0) / 1000;
        return 0;
    }
    snprintf(cl_version, sizeof cl_version, "no pocl CPU device among %u OpenCL platforms", np);
    return -1;
}

/* Median kernel time; *first_ms gets the first launch's (pocl compiles the
 * kernel for its work-group size then). */
static double time_cl(bcase *c, double *first_ms)
{
    cl_int e;
    cl_kernel k = cl.clCreateKernel(cl_prog, c->kernel, &e);
    if (!k)
        die("clCreateKernel", c->kernel);
    cl_mem b[3];
    for (int i = 0; i < c->nbufs; i++) {
        b[i] = cl.clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, buf_bytes(&c->bufs[i]),
                                 c->bufs[i].host, &e);
        if (!b[i])
            die("clCreateBuffer", c->kernel);
    }
    for (int i = 0; i < c->nargs; i++) {
        const barg *a = &c->args[i];
        cl_float f = (cl_float)a->v;
        cl_int n = (cl_int)a->v;
        e = a->buf >= 0 ? cl.clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &b[a->buf])
            : a->is_float ? cl.clSetKernelArg(k, (cl_uint)i, sizeof f, &f)
                          : cl.clSetKernelArg(k, (cl_uint)i, sizeof n, &n);
        if (e != CL_SUCCESS)
            die("clSetKernelArg", c->kernel);
    }
    size_t local[3] = {c->block.x, c->block.y, c->block.z};
    size_t global[3] = {(size_t)c->grid.x * c->block.x, (size_t)c->grid.y * c->block.y,
                        (size_t)c->grid.z * c->block.z};
    bbuf *o = &c->bufs[c->out];
    size_t ob = buf_bytes(o);
    unsigned char *fill = malloc(ob), *got = malloc(ob);
    if (!fill || !got)
        die("out of memory", NULL);
    memset(fill, o->zero ? 0 : 0xff, ob);
    double t[RUNS + 1];
    for (int r = 0; r <= RUNS; r++) {
        if (cl.clEnqueueWriteBuffer(cl_q, b[c->out], CL_TRUE, 0, ob, fill, 0, NULL, NULL) != CL_SUCCESS)
            die("clEnqueueWriteBuffer", c->kernel);
        double t0 = now_us();
        if (cl.clEnqueueNDRangeKernel(cl_q, k, 3, NULL, global, local, 0, NULL, NULL) != CL_SUCCESS ||
            cl.clFinish(cl_q) != CL_SUCCESS)
            die("clEnqueueNDRangeKernel", c->kernel);
        t[r] = now_us() - t0;
        if (cl.clEnqueueReadBuffer(cl_q, b[c->out], CL_TRUE, 0, ob, got, 0, NULL, NULL) != CL_SUCCESS)
            die("clEnqueueReadBuffer", c->kernel);
        check(c, got, "pocl");
    }
    *first_ms = t[0] / 1000;
    free(fill);
    free(got);
    for (int i = 0; i < c->nbufs; i++)
        cl.clReleaseMemObject(b[i]);
    cl.clReleaseKernel(k);
    return median(t + 1, RUNS) / 1000;
}
#endif

/* ------------------------------------------------------------------ main */

static hk_module *compile_hipkit(double *ms, const char **origin)
{
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "bench_barriers";
    hk_module *m;
    if (hk_module_compile(ctx, hip_src, &o, &m))
        die("hipkit compile", hk_errmsg(ctx));
    hk_kernel *k;
    hk_kernel_info info;
    if (hk_module_kernel(m, "axpb", &k) || hk_kernel_get_info(k, &info))
        die("hipkit kernel", hk_errmsg(ctx));
    *ms = info.compile_ms;
    *origin = hk_code_origin_name(info.origin);
    return m;
}

/* bench-barriers fibers: what running a GPU thread as a fiber costs, in
 * CPU time of the calling thread (HIPKIT_HOST_THREADS=1, so the grid runs
 * on it and a loaded machine's other work is not counted): 2^24 threads in
 * blocks of 256, as a plain loop, as fibers that reach no barrier, and as
 * fibers with one and with four barriers. */
static const char *fiber_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void plain(float *y) { y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }\n"
    "extern \"C\" __global__ void fib0(float *y, int never) {\n"
    "    if (never) __syncthreads();\n"
    "    y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void fib1(float *y) {\n"
    "    __syncthreads();\n"
    "    y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void fib4(float *y) {\n"
    "    for (int i = 0; i < 4; i++) __syncthreads();\n"
    "    y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;\n"
    "}\n";

static double thread_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void bench_fibers(void)
{
    setenv("HIPKIT_HOST_THREADS", "1", 1);
    if (!getenv("HIPKIT_BACKEND"))
        setenv("HIPKIT_BACKEND", "host", 1);
    hk_context_options co;
    hk_context_options_defaults(&co);
    if (hk_context_create(&co, &ctx))
        die("hk_context_create", "");
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "bench_fibers";
    hk_module *m;
    if (hk_module_compile(ctx, fiber_src, &o, &m))
        die("compile", hk_errmsg(ctx));
    enum { N = 1 << 24 };
    hk_buffer *y;
    if (hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &y))
        die("alloc", hk_errmsg(ctx));
    static const char *names[] = {"plain", "fib0", "fib1", "fib4"};
    static const char *what[] = {"plain loop", "fibers, no barrier reached", "fibers, 1 barrier",
                                 "fibers, 4 barriers"};
    printf("# bench-barriers fibers: 2^24 threads in blocks of 256 on one OS thread, CPU time of that "
           "thread, median of %d after a warm-up\n", RUNS);
    for (int i = 0; i < 4; i++) {
        hk_kernel *k;
        if (hk_module_kernel(m, names[i], &k))
            die(names[i], hk_errmsg(ctx));
        hk_arg args[2] = {hk_arg_buffer(y), hk_arg_int(0)};
        hk_launch_config cfg = {{N / 256, 1, 1}, {256, 1, 1}, 0};
        double t[RUNS + 1];
        for (int r = 0; r <= RUNS; r++) {
            double t0 = thread_cpu_us();
            if (hk_launch(k, &cfg, args, i == 1 ? 2 : 1))
                die(names[i], hk_errmsg(ctx));
            t[r] = thread_cpu_us() - t0;
        }
        double med = median(t + 1, RUNS);
        printf("%-28s %8.1f ms  %6.2f ns per thread\n", what[i], med / 1000, med * 1000 / N);
    }
    hk_buffer_free(y);
    hk_module_free(m);
    hk_context_destroy(ctx);
}

/* What the pocl child reports. */
typedef struct cl_result {
    int ok;
    char version[256];
    double build_ms, t[5], first[5];
} cl_result;

/* pocl runs in a child process: its LLVM and the one a GPU backend module
 * of hipkit may load (ROCm's comgr) abort when they meet in one process
 * ("Option registered more than once"). The inputs are made before the
 * fork and shared; the child sends its times back through a pipe. */
static void run_pocl(bcase *cs, int n, cl_result *res)
{
    memset(res, 0, sizeof *res);
#ifdef HK_HAVE_OPENCL
    int fd[2];
    if (pipe(fd) != 0)
        die("pipe", NULL);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        res->ok = cl_open() == 0;
        snprintf(res->version, sizeof res->version, "%s", cl_version);
        res->build_ms = cl_build_ms;
        for (int i = 0; res->ok && i < n; i++)
            res->t[i] = time_cl(&cs[i], &res->first[i]);
        ssize_t w = write(fd[1], res, sizeof *res);
        _exit(w == (ssize_t)sizeof *res ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = pid > 0 ? read(fd[0], res, sizeof *res) : -1;
    close(fd[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof *res) {
        memset(res, 0, sizeof *res);
        snprintf(res->version, sizeof res->version, "the pocl child failed (status %d)", status);
    }
#else
    (void)cs;
    (void)n;
    snprintf(res->version, sizeof res->version,
             "built without CL/cl.h (apt-get install ocl-icd-opencl-dev)");
#endif
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "fibers")) {
        bench_fibers();
        return 0;
    }
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (nthreads < 1)
        die("usage", "bench-barriers [threads] | bench-barriers fibers");
    char nt[16];
    snprintf(nt, sizeof nt, "%d", nthreads);
    setenv("HIPKIT_HOST_THREADS", nt, 1);
    setenv("POCL_MAX_PTHREAD_COUNT", nt, 1); /* pocl 3.1's pthread device */
    setenv("POCL_CPU_MAX_CU_COUNT", nt, 1);  /* its name in later pocl versions */
    if (!getenv("HIPKIT_BACKEND"))
        setenv("HIPKIT_BACKEND", "host", 1);

    bcase cs[5];
    int n = make_cases(cs);
    cl_result clr;
    run_pocl(cs, n, &clr);

    omp_set_num_threads(nthreads);
    hk_context_options co;
    hk_context_options_defaults(&co);
    if (hk_context_create(&co, &ctx))
        die("hk_context_create", "");
    double hk_ms;
    const char *origin;
    hk_module *m = compile_hipkit(&hk_ms, &origin);
    printf("# bench-barriers: %d threads, median of %d runs after a warm-up, every result checked\n",
           nthreads, RUNS);
    printf("# pocl: %s\n", clr.version);
    double load[3];
    /* the machine may be shared: a figure taken under load says so */
    if (getloadavg(load, 3) == 3)
        printf("# load average before the hipkit runs: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
    printf("# hipkit module (5 kernels): %.1f ms to get the code (%s)", hk_ms, origin);
    if (clr.ok)
        printf("; pocl clBuildProgram %.1f ms", clr.build_ms);
    printf("\n\n| kernel | hipkit | pocl | OpenMP | hipkit/pocl | pocl 1st launch |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        bcase *c = &cs[i];
        double th = time_hipkit(c, m), to = time_omp(c);
        char ratio[64] = "n/a", tc[32] = "n/a", first[32] = "n/a";
        if (clr.ok) {
            double r = th / clr.t[i];
            snprintf(ratio, sizeof ratio, r <= 1 ? "%.2fx (%.2fx faster)" : "%.2fx (slower)", r, 1 / r);
            snprintf(tc, sizeof tc, "%.1f", clr.t[i]);
            snprintf(first, sizeof first, "%.0f ms", clr.first[i]);
        }
        printf("| %s | %.1f ms | %s | %.1f | %s | %s |\n", c->label, th, tc, to, ratio, first);
        fflush(stdout);
    }
    hk_module_free(m);
    hk_context_destroy(ctx);
    return 0;
}
