/* Repack probe host (dev.cu says what it measures): q4_0 matrices of random
 * values in ggml's layout and in the repacked ones, and q4_K matrices of
 * random blocks (d, dmin in a sane range), each kernel checked
 * against a double product on the host, then timed back to back over
 * rotating weight copies and as a graph, plain and launched early, as a
 * ratio to the device-to-device copy of the same run. */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorString(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1); } } while (0)
enum { ROWS = 14336, COLS = 4096, G = COLS / 32, COPIES = 7 };
static CUmodule mod;
static CUstream st;
static CUdeviceptr g_mode_ptr;
static int cmpf(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return x < y ? -1 : x > y; }
typedef struct { CUfunction f; unsigned grid, block, smem; void *args[COPIES][6]; } job;
static void launch_all(job *j, int pdl)
{
    for (int c = 0; c < COPIES; c++) {
        CUlaunchConfig cfg = {0};
        CUlaunchAttribute at[1];
        cfg.gridDimX = j->grid; cfg.gridDimY = 1; cfg.gridDimZ = 1;
        cfg.blockDimX = j->block ? j->block : 256; cfg.blockDimY = 1; cfg.sharedMemBytes = j->smem; cfg.blockDimZ = 1;
        cfg.hStream = st;
        if (pdl) {
            at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            at[0].value.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = at; cfg.numAttrs = 1;
        }
        CK(cuLaunchKernelEx(&cfg, j->f, j->args[c], NULL));
    }
}
/* median per-launch ms of 20 reps of (all copies back to back) */
static float time_job(job *j, int pdl, int graph)
{
    CUevent a, b; CK(cuEventCreate(&a, 0)); CK(cuEventCreate(&b, 0));
    CUgraphExec ge = NULL;
    if (graph) {
        CUgraph g;
        CK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL));
        launch_all(j, pdl);
        CK(cuStreamEndCapture(st, &g));
        CK(cuGraphInstantiate(&ge, g, 0));
        CK(cuGraphDestroy(g));
    }
    float t[20];
    for (int r = -3; r < 20; r++) {
        CK(cuEventRecord(a, st));
        if (graph) CK(cuGraphLaunch(ge, st)); else launch_all(j, pdl);
        CK(cuEventRecord(b, st));
        CK(cuEventSynchronize(b));
        float ms; CK(cuEventElapsedTime(&ms, a, b));
        if (r >= 0) t[r] = ms / COPIES;
    }
    if (ge) CK(cuGraphExecDestroy(ge));
    qsort(t, 20, sizeof *t, cmpf);
    CK(cuEventDestroy(a)); CK(cuEventDestroy(b));
    return (t[9] + t[10]) / 2;
}
static void set_mode(int m) { CK(cuMemcpyHtoD(g_mode_ptr, &m, sizeof m)); CK(cuCtxSynchronize()); }
static unsigned seed = 12345u;
static unsigned rnd(void) { seed = seed * 1664525u + 1013904223u; return seed >> 8; }
static double h2d(unsigned short h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}
static unsigned short f2h(float f) /* round to nearest even; normal range and zero */
{
    if (f == 0) return 0;
    int e; double m = frexp(fabs(f), &e); /* |f| = m 2^e, m in [0.5, 1) */
    long long mm = llrint(ldexp(m, 11)); /* 11 bits */
    if (mm == 2048) { mm = 1024; e++; }
    return (unsigned short)((f < 0) << 15 | (e + 14) << 10 | (mm - 1024));
}
/* g_tim per block: [0] globaltimer start, [1] end; clock64 [2] start, [3] x staged, [4 + 2 t] stage t
 * landed, [5 + 2 t] done with it. Prints medians / max over blocks in us (clock64 calibrated per block
 * against the globaltimer span) and the launch's span and the blocks' start and end spread. */
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static void tim_report(const unsigned long long *tb, unsigned grid, const char *what)
{
    enum { S = 48 };
    static double pro[1056], w0[1056], wl[1056], cmp[1056], last[1056], st0[1056], en[1056], mhz[1056];
    unsigned long long g0 = ~0ull, g1 = 0;
    for (unsigned b = 0; b < grid; b++) { if (tb[b * S] < g0) g0 = tb[b * S]; if (tb[b * S + 1] > g1) g1 = tb[b * S + 1]; }
    int steps_max = 0;
    for (unsigned b = 0; b < grid; b++) {
        const unsigned long long *r = tb + b * S;
        int steps = 0;
        while (4 + 2 * steps + 1 < S && r[5 + 2 * steps]) steps++;
        if (steps > steps_max) steps_max = steps;
        unsigned long long cend = steps ? r[3 + 2 * steps] : r[3];
        mhz[b] = (double)(cend - r[2]) / (double)(r[1] - r[0]) * 1e3; /* clocks per us */
        double k = 1.0 / mhz[b];
        pro[b] = (r[3] - r[2]) * k; w0[b] = steps ? (r[4] - r[3]) * k : 0; wl[b] = 0; cmp[b] = 0; last[b] = 0;
        for (int t = 0; t < steps; t++) {
            if (t) wl[b] += (r[4 + 2 * t] - r[3 + 2 * t]) * k;
            cmp[b] += (r[5 + 2 * t] - r[4 + 2 * t]) * k;
        }
        if (steps) last[b] = (r[3 + 2 * steps] - r[2 + 2 * steps]) * k;
        st0[b] = (r[0] - g0) * 1e-3; en[b] = (r[1] - g0) * 1e-3;
    }
    double *cols[] = {pro, w0, wl, cmp, last, st0, en, mhz};
    const char *nm[] = {"x", "wait0", "waits", "sums", "lastsum", "start", "end", "MHz"};
    printf("    %-8s span %.2f us, %d steps:", what, (g1 - g0) * 1e-3, steps_max);
    for (int c = 0; c < 8; c++) {
        qsort(cols[c], grid, sizeof(double), cmpd);
        printf(" %s %.2f/%.2f/%.2f", nm[c], cols[c][0], cols[c][grid / 2], cols[c][grid - 1]);
    }
    printf("\n");
}
static CUdeviceptr upload(const void *h, size_t n) { CUdeviceptr p; CK(cuMemAlloc(&p, n)); CK(cuMemcpyHtoD(p, h, n)); return p; }
int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a probe killed by its time limit keeps what it printed */
    CUdevice dev; CUcontext ctx;
    CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuCtxCreate(&ctx, NULL, 0, dev));
    char name[128]; CK(cuDeviceGetName(name, sizeof name, dev));
    CK(cuModuleLoad(&mod, argc > 1 ? argv[1] : "rp.cubin"));
    size_t sz; CK(cuModuleGetGlobal(&g_mode_ptr, &sz, mod, "g_mode"));
    CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    size_t big = 256u << 20; CUdeviceptr s0, d0; CK(cuMemAlloc(&s0, big)); CK(cuMemAlloc(&d0, big));
    CUevent a, b; CK(cuEventCreate(&a, 0)); CK(cuEventCreate(&b, 0));
    float ct[20];
    for (int r = -3; r < 20; r++) {
        CK(cuEventRecord(a, st)); CK(cuMemcpyDtoDAsync(d0, s0, big, st)); CK(cuEventRecord(b, st));
        CK(cuEventSynchronize(b)); float ms; CK(cuEventElapsedTime(&ms, a, b)); if (r >= 0) ct[r] = ms;
    }
    qsort(ct, 20, sizeof *ct, cmpf);
    double copy_gbps = 2.0 * big / ((ct[9] + ct[10]) / 2 * 1e-3) / 1e9;
    printf("%s: copy 256 MiB %.0f GB/s\n", name, copy_gbps);
    CK(cuMemFree(s0)); CK(cuMemFree(d0));

    /* the same values in every layout: ggml (18-byte blocks), rp1, tiles of 32, 16, 8 rows */
    const size_t nb = (size_t)ROWS * G, wb = nb * 18;
    const int tiles[3] = {32, 16, 8};
    unsigned char *hg = malloc(wb), *h1 = malloc(wb), *ht[6] = {malloc(wb), malloc(wb), malloc(wb), malloc(wb), malloc(wb), malloc(wb)};
    CUdeviceptr wg[COPIES], w1[COPIES], wt[6][COPIES];
    float *hx = malloc(COLS * 4);
    for (int i = 0; i < COLS; i++) hx[i] = (float)(rnd() / 8388608.0 * 2.0 - 1.0);
    double *ref = malloc(ROWS * sizeof *ref), *sabs = malloc(ROWS * sizeof *sabs);
    for (int c = 0; c < COPIES; c++) {
        for (size_t i = 0; i < nb; i++) {
            unsigned char *blk = hg + 18 * i;
            unsigned short d = (unsigned short)((rnd() & 1) << 15 | (3 + rnd() % 7) << 10 | rnd() % 1024);
            memcpy(blk, &d, 2);
            for (int j = 0; j < 16; j++) blk[2 + j] = (unsigned char)rnd();
        }
        for (size_t i = 0; i < nb; i++) { /* rp1: nibbles, then scales */
            memcpy(h1 + 16 * i, hg + 18 * i + 2, 16);
            memcpy(h1 + 16 * nb + 2 * i, hg + 18 * i, 2);
        }
        for (int k = 0; k < 3; k++) {
            int T = tiles[k];
            for (size_t row = 0; row < ROWS; row++)
                for (size_t g = 0; g < G; g++) {
                    size_t i = row * G + g, at = ((row / T) * G + g) * T + row % T;
                    memcpy(ht[k] + 16 * at, hg + 18 * i + 2, 16);
                    memcpy(ht[k] + 16 * nb + 2 * at, hg + 18 * i, 2);
                }
        }
        for (size_t row = 0; row < ROWS; row++) /* rpt: 16-row tiles, a lane's 4 bytes of 4 groups */
            for (size_t g = 0; g < G; g++) {
                size_t i = row * G + g, R = row / 16, J = g / 4, sl = (row % 16) / 8, gg = row % 8;
                for (size_t t = 0; t < 4; t++)
                    memcpy(ht[3] + 16 * (((R * (G / 4) + J) * 2 + sl) * 32 + gg * 4 + t) + 4 * (g % 4),
                           hg + 18 * i + 2 + 4 * t, 4);
                memcpy(ht[3] + 16 * nb + 8 * ((R * (G / 4) + J) * 16 + row % 16) + 2 * (g % 4), hg + 18 * i, 2);
            }
        for (size_t i = 0; i < nb; i++) { /* q4_0r: blocks of 8 groups, nibbles then scales */
            memcpy(ht[4] + 144 * (i / 8) + 16 * (i % 8), hg + 18 * i + 2, 16);
            memcpy(ht[4] + 144 * (i / 8) + 128 + 2 * (i % 8), hg + 18 * i, 2);
            memcpy(ht[5] + 288 * (i / 16) + 16 * (i % 16), hg + 18 * i + 2, 16); /* blocks of 16 groups */
            memcpy(ht[5] + 288 * (i / 16) + 256 + 2 * (i % 16), hg + 18 * i, 2);
        }
        if (c == 0)
            for (size_t row = 0; row < ROWS; row++) {
                double s = 0, sa = 0;
                for (size_t g = 0; g < G; g++) {
                    const unsigned char *blk = hg + 18 * (row * G + g);
                    unsigned short dh; memcpy(&dh, blk, 2);
                    double d = h2d(dh);
                    for (int j = 0; j < 32; j++) {
                        int n = j < 16 ? blk[2 + j] & 15 : blk[2 + j - 16] >> 4;
                        double p = d * (n - 8) * hx[32 * g + j];
                        s += p; sa += fabs(p);
                    }
                }
                ref[row] = s; sabs[row] = sa;
            }
        wg[c] = upload(hg, wb); w1[c] = upload(h1, wb);
        for (int k = 0; k < 6; k++) wt[k][c] = upload(ht[k], wb);
    }
    CUdeviceptr x = upload(hx, COLS * 4), y[COPIES], outp;
    unsigned char *hq = malloc(COLS / 32 * 36); /* x as q8_1, as ggml's quantize_row_q8_1 */
    for (int g = 0; g < COLS / 32; g++) {
        float amax = 0; int sum = 0;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(hx[32 * g + j]));
        float d = amax / 127, id = d ? 1 / d : 0;
        for (int j = 0; j < 32; j++) { int q = (int)roundf(hx[32 * g + j] * id); hq[36 * g + 4 + j] = (unsigned char)(signed char)q; sum += q; }
        unsigned short dh = f2h(d), sh = f2h(d * sum);
        memcpy(hq + 36 * g, &dh, 2); memcpy(hq + 36 * g + 2, &sh, 2);
    }
    double *ref8 = malloc(ROWS * sizeof *ref8), *sabs8 = malloc(ROWS * sizeof *sabs8);
    for (size_t row = 0; row < ROWS; row++) { /* copy 0's weights are in wg[0]: read them back */
        static unsigned char blkrow[G * 18];
        CK(cuMemcpyDtoH(blkrow, wg[0] + row * G * 18, G * 18));
        double s = 0, sa = 0;
        for (size_t g = 0; g < G; g++) {
            unsigned short dh, d8h, s8h; memcpy(&dh, blkrow + 18 * g, 2); memcpy(&d8h, hq + 36 * g, 2); memcpy(&s8h, hq + 36 * g + 2, 2);
            long si = 0, sai = 0;
            for (int j = 0; j < 32; j++) {
                int n = j < 16 ? blkrow[18 * g + 2 + j] & 15 : blkrow[18 * g + 2 + j - 16] >> 4;
                int q = (signed char)hq[36 * g + 4 + j];
                si += n * q; sai += labs((long)(n - 8) * q);
            }
            s += h2d(dh) * (h2d(d8h) * si - 8 * h2d(s8h));
            sa += fabs(h2d(dh)) * h2d(d8h) * sai;
        }
        ref8[row] = s; sabs8[row] = sa;
    }
    CUdeviceptr xq = upload(hq, COLS / 32 * 36);
    /* q4_K (ggml's 144-byte blocks) of random bytes: d, dmin in a sane range, scales and nibbles any bits;
     * references for f32 x and for q8_1 x (x as the q8_1 values d8 q) */
    const size_t kb = (size_t)ROWS * (COLS / 256) * 144;
    unsigned char *hk = malloc(kb);
    CUdeviceptr wk[COPIES];
    double *refK = malloc(ROWS * sizeof *refK), *sabsK = malloc(ROWS * sizeof *sabsK);
    double *refK8 = malloc(ROWS * sizeof *refK8), *sabsK8 = malloc(ROWS * sizeof *sabsK8);
    for (int c = 0; c < COPIES; c++) {
        for (size_t i = 0; i < kb / 144; i++) {
            unsigned char *blk = hk + 144 * i;
            unsigned short d = (unsigned short)((3 + rnd() % 7) << 10 | rnd() % 1024), dm = (unsigned short)((3 + rnd() % 7) << 10 | rnd() % 1024);
            memcpy(blk, &d, 2); memcpy(blk + 2, &dm, 2);
            for (int j = 4; j < 144; j++) blk[j] = (unsigned char)rnd();
        }
        if (c == 0)
            for (size_t row = 0; row < ROWS; row++) {
                double s = 0, sa = 0, s8 = 0, sa8 = 0;
                for (size_t b = 0; b < COLS / 256; b++) {
                    const unsigned char *blk = hk + 144 * (row * (COLS / 256) + b), *sc = blk + 4;
                    unsigned short dh, mh; memcpy(&dh, blk, 2); memcpy(&mh, blk + 2, 2);
                    for (int g = 0; g < 8; g++) {
                        int a, m;
                        if (g < 4) { a = sc[g] & 63; m = sc[g + 4] & 63; }
                        else { a = (sc[g + 4] & 15) | ((sc[g - 4] >> 6) << 4); m = (sc[g + 4] >> 4) | ((sc[g] >> 6) << 4); }
                        for (int l = 0; l < 32; l++) {
                            int q = (blk[16 + 32 * (g / 2) + l] >> (4 * (g & 1))) & 15;
                            double wv = h2d(dh) * a * q - h2d(mh) * m;
                            int col = 256 * (int)b + 32 * g + l;
                            unsigned short d8h; memcpy(&d8h, hq + 36 * (col / 32), 2);
                            double x8 = h2d(d8h) * (signed char)hq[36 * (col / 32) + 4 + col % 32];
                            s += wv * hx[col]; sa += fabs(wv * hx[col]);
                            s8 += wv * x8; sa8 += fabs(wv * x8);
                        }
                    }
                }
                refK[row] = s; sabsK[row] = sa; refK8[row] = s8; sabsK8[row] = sa8;
            }
        wk[c] = upload(hk, kb);
    }
    printf("q4_K %dx%d: %.1f MB a copy\n", ROWS, COLS, kb / 1e6);
    /* q6_K (210-byte super-blocks) of random bytes, d in a sane range: timings only (layout 8, no reference) */
    const size_t sb6 = (size_t)ROWS * (COLS / 256) * 210;
    unsigned char *h6 = malloc(sb6);
    CUdeviceptr w6[COPIES];
    for (int c = 0; c < COPIES; c++) {
        for (size_t i = 0; i < sb6 / 210; i++) {
            unsigned char *blk = h6 + 210 * i;
            for (int j = 0; j < 208; j++) blk[j] = (unsigned char)rnd();
            unsigned short d = (unsigned short)((3 + rnd() % 7) << 10 | rnd() % 1024);
            memcpy(blk + 208, &d, 2);
        }
        w6[c] = upload(h6, sb6);
    }
    for (int c = 0; c < COPIES; c++) CK(cuMemAlloc(&y[c], ROWS * 4));
    CK(cuMemAlloc(&outp, 16));
    printf("q4_0 %dx%d: %.1f MB a copy, %d copies; floor at copy speed %.2f us\n", ROWS, COLS, wb / 1e6, COPIES,
           wb / (copy_gbps * 1e9) * 1e6);

    struct { const char *fn; int layout; unsigned grids[4]; int q8, W, NS, regds, prod, tim, ring; } ks[] = {
        /* the op's streamed kernel (quantized.hip) and hr, its copy here with variants (dev.cu) */
        {"matvec_q4_0_q8_1_ring", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"matvec_q4_K_q8_1_ring", 7, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"matvec_q4_0_q8_1_ring", -1, {132}, 1, 8, 4, 0, 0, 0, 1}, {"matvec_q4_K_q8_1_ring", 7, {132}, 1, 8, 4, 0, 0, 0, 1},
        {"hq0", -1, {132}, 1, 8, 4, 0, 0, 0, 1}, {"hq1", -1, {132}, 1, 8, 4, 0, 0, 0, 1}, {"hq3", -1, {132}, 1, 8, 4, 0, 0, 0, 1},
        {"hq7", -1, {132}, 1, 8, 4, 0, 0, 0, 1}, {"hqk1", 7, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hqk7", 7, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"matvec_q6_K_q8_1_ring", 8, {132}, 1, 8, 2, 0, 0, 0, 1}, {"matvec_q6_K_q8_1_ring", 8, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"matvec_q4_K_q8_1_ring", 7, {132}, 1, 8, 2, 0, 0, 0, 1},
        {"hr0", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hr1", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hr3", -1, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"hrk0", 7, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hrk3", 7, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"hrt0", -1, {132}, 1, 8, 3, 0, 0, 1, 1}, {"hr7", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hrt7", -1, {132}, 1, 8, 3, 0, 0, 1, 1},
        {"hrk7", 7, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hrkt7", 7, {132}, 1, 8, 3, 0, 0, 1, 1}, {"hrb", -1, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"hrkb", 7, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hr7", -1, {132}, 1, 8, 4, 0, 0, 0, 1}, {"hr7", -1, {132}, 1, 8, 5, 0, 0, 0, 1},
        {"hr7", -1, {132}, 1, 8, 6, 0, 0, 0, 1}, {"hrk7", 7, {132}, 1, 8, 4, 0, 0, 0, 1}, {"hrk7", 7, {132}, 1, 8, 6, 0, 0, 0, 1},
        {"hrt7", -1, {132}, 1, 8, 4, 0, 0, 1, 1}, {"hrt7", -1, {132}, 1, 8, 6, 0, 0, 1, 1},
        {"hrx7", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hrx7", -1, {132}, 1, 8, 4, 0, 0, 0, 1}, {"hrxt7", -1, {132}, 1, 8, 4, 0, 0, 1, 1},
        {"hrkx7", 7, {132}, 1, 8, 4, 0, 0, 0, 1},
        /* hp*: hr7 with PF stages past the ring prefetched to L2 (hp9: all of a block's rows) */
        {"hp1", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hp2", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hp3", -1, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"hp9", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hp2", -1, {132}, 1, 8, 2, 0, 0, 0, 1}, {"hp9", -1, {132}, 1, 8, 2, 0, 0, 0, 1},
        {"hpt2", -1, {132}, 1, 8, 3, 0, 0, 1, 1}, {"hpt9", -1, {132}, 1, 8, 3, 0, 0, 1, 1},
        {"hpk2", 7, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hpk9", 7, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hpx2", -1, {132}, 1, 8, 3, 0, 0, 0, 1},
        {"hpb2", -1, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hpbk2", 7, {132}, 1, 8, 3, 0, 0, 0, 1}, {"hrt3", -1, {132}, 1, 8, 3, 0, 0, 1, 1},
        /* tp / tpk: a producer warp, a full and an empty barrier a stage (no block barrier in the loop);
         * ...t: thread 0's timeline (g_tim) printed after the timings */
        {"tp_8_3", -1, {132}, 1, 8, 3, 0, 1}, {"tp_8_4", -1, {132}, 1, 8, 4, 0, 1}, {"tpk_8_3", 7, {132}, 1, 8, 3, 0, 1},
        {"tpk_8_4", 7, {132}, 1, 8, 4, 0, 1}, {"tp_4_4", -1, {264}, 1, 4, 4, 0, 1}, {"tp_4_6", -1, {132}, 1, 4, 6, 0, 1},
        {"tpk_4_6", 7, {132}, 1, 4, 6, 0, 1}, {"tpt_8_3", -1, {132}, 1, 8, 3, 0, 1, 1},
        {"tqt_8_3", -1, {132}, 1, 8, 3, 0, 0, 1}, {"tkt_8_3", 7, {132}, 1, 8, 3, 0, 0, 1}, {"trt_8_3", -3, {132}, 1, 8, 3, 0, 0, 1},
        {"tqt_4_3", -1, {264}, 1, 4, 3, 0, 0, 1},
        /* tq8 / tk8 (persistent, bulk-copy ring): grids in CTAs; W warps, NS stages of 2 W rows */
        {"tq8_8_4", -1, {132, 264}, 1, 8, 4}, {"tq8_8_3", -1, {132}, 1, 8, 3}, {"tq8_8_2", -1, {132, 264}, 1, 8, 2},
        {"tq8_16_2", -1, {132}, 1, 16, 2}, {"tq8_4_4", -1, {132, 264}, 1, 4, 4}, {"tq8_4_3", -1, {264, 396}, 1, 4, 3},
        {"tk8_8_4", 7, {132, 264}, 1, 8, 4}, {"tk8_8_3", 7, {132}, 1, 8, 3}, {"tk8_4_4", 7, {132, 264}, 1, 4, 4},
        {"tk8_16_2", 7, {132}, 1, 16, 2},
        /* tr: the ring alone (no arithmetic, wrong y); tq8e: x staged before the wait */
        {"tr_8_2", -3, {132, 264}, 1, 8, 2}, {"tr_8_3", -3, {132, 264}, 1, 8, 3}, {"tr_8_4", -3, {132}, 1, 8, 4},
        {"tr_4_3", -3, {132, 264}, 1, 4, 3}, {"tr_16_2", -3, {132}, 1, 16, 2},
        {"tq8e_8_3", -1, {132}, 1, 8, 3}, {"tq8e_8_2", -1, {132, 264}, 1, 8, 2}, {"tq8e_4_3", -1, {264}, 1, 4, 3},
        /* 12 warps; x's loads before all but the first stage's copy */
        {"tq8_12_3", -1, {132}, 1, 12, 3}, {"tk8_12_3", 7, {132}, 1, 12, 3}, {"tq8x_8_3", -1, {132}, 1, 8, 3},
        {"tk8x_8_3", 7, {132}, 1, 8, 3}, {"tq8x_8_4", -1, {132}, 1, 8, 4},
        /* tqr / tkr: x's (d, s) in registers, 114 KB or less so two CTAs fit an SM (the next launch's beside) */
        {"tqr_8_3", -1, {132}, 1, 8, 3, 1}, {"tqr_4_3", -1, {264, 132}, 1, 4, 3, 1}, {"tqr_8_2", -1, {132, 264}, 1, 8, 2, 1},
        {"tkr_8_3", 7, {132}, 1, 8, 3, 1}, {"tkr_4_3", 7, {264}, 1, 4, 3, 1},
        /* tw / twk: a ring a warp, NS slots of 2 rows */
        {"tw8_8_2", -1, {132, 264}, 1, 8, 2}, {"tw8_8_3", -1, {132}, 1, 8, 3}, {"tw8_8_4", -1, {132}, 1, 8, 4},
        {"tw8_12_3", -1, {132}, 1, 12, 3}, {"tw8_16_2", -1, {132}, 1, 16, 2}, {"tw8_16_3", -1, {132}, 1, 16, 3},
        {"twk_8_3", 7, {132}, 1, 8, 3}, {"twk_8_4", 7, {132}, 1, 8, 4}, {"twk_12_3", 7, {132}, 1, 12, 3},
        {"twk_16_2", 7, {132}, 1, 16, 2}, {"twk_16_3", 7, {132}, 1, 16, 3},
        {"ro", -2, {1056, 528}}, {"pm_q4_0", -1, {896, 264}}, {"pm8_q4_0", -1, {448, 528, 896}, 1},
        {"rp1", 0, {528, 264, 896, 1056}}, {"rp32_4", 1, {448, 264}}, {"rp32_8", 1, {448, 264}},
        {"rp16_4", 2, {896, 528}}, {"rp16_8", 2, {896, 528}}, {"rp8_4", 3, {1792, 528}},
        {"rpt1_4", 4, {132, 264}}, {"rpt1_2", 4, {132, 264, 448}}, {"rpt2_4", 4, {264, 448}},
        {"rpt4_4", 4, {264, 448, 132}}, {"rpt4_2", 4, {264, 448}}, {"rpt8_4", 4, {264, 896, 132}},
        {"rp1q8", 0, {528, 264, 896, 1056}, 1},
        {"pmr_q4_0r", 5, {528, 264, 896, 1056}}, {"pmr8_q4_0r", 5, {528, 264, 896, 1056}, 1},
        {"rb8q8", 5, {528, 1056}, 1}, {"rb8f", 5, {528, 1056}, 2}, {"rb8q8s", 5, {528, 1056}, 1}, {"rb8q8b", 5, {528, 1056}, 1},
        {"pmr8u_q4_0r", 5, {528, 396, 1056}, 1},
        {"prb_q4_0r", 5, {528, 1056}}, {"prb8_q4_0r", 5, {528, 1056}, 1},
        {"pm_q4_K", 7, {264, 528, 896}}, {"pm8_q4_K", 7, {528, 896}, 1},
        {"rk8n", 7, {528, 1056}, 1}, {"rk8s", 7, {528, 1056}, 1},
        {"rk8pn", 7, {528, 1056, 396}, 1}, {"rk8ps", 7, {528, 1056, 792}, 1}, {"rk8pnb", 7, {528, 1056}, 1}, {"rb16q8", 6, {528, 1056}, 1},
    };
    static int rws = ROWS, cls = COLS;
    /* DIAG: dev.cu's g_diag; ONLY: a comma-separated list of kernels */
    int diag = getenv("DIAG") ? atoi(getenv("DIAG")) : 0;
    CUdeviceptr dp; CK(cuModuleGetGlobal(&dp, &sz, mod, "g_diag")); CK(cuMemcpyHtoD(dp, &diag, sizeof diag));
    if (diag) printf("DIAG %d\n", diag);
    static unsigned long long n16;
    n16 = wb / 16;
    for (size_t k = 0; k < sizeof ks / sizeof *ks; k++)
        for (int gi = 0; gi < 4 && ks[k].grids[gi]; gi++) {
            if (getenv("ONLY")) {
                char pat[40]; snprintf(pat, sizeof pat, ",%s,", ks[k].fn);
                char all[400]; snprintf(all, sizeof all, ",%s,", getenv("ONLY"));
                if (!strstr(all, pat)) continue;
            }
            job j; memset(&j, 0, sizeof j);
            j.grid = ks[k].grids[gi];
            CK(cuModuleGetFunction(&j.f, mod, ks[k].fn));
            if (ks[k].W) { /* stages, x as lo / hi / (d, s) records, the barriers */
                j.block = 32u * ks[k].W + (ks[k].prod ? 32u : 0u);
                const unsigned rowb = ks[k].layout == 8 ? 3360u : 2304u; /* a row of q6_K, of the others */
                j.smem = ks[k].NS * 2u * ks[k].W * rowb + (COLS / 32) * (ks[k].regds ? 32u : 40u) + ks[k].NS * ks[k].W * 8u;
                if (getenv("SMEM_MIN") && j.smem < (unsigned)atoi(getenv("SMEM_MIN"))) j.smem = (unsigned)atoi(getenv("SMEM_MIN"));
                if (j.smem > 232448u) j.smem = 232448u;
                CK(cuFuncSetAttribute(j.f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)j.smem));
            }
            int L = ks[k].layout;
            for (int c = 0; c < COPIES; c++) {
                CUdeviceptr *wp = L == -1 || L == -2 || L == -3 ? &wg[c] : L == 0 ? &w1[c] : L == 7 ? &wk[c] : L == 8 ? &w6[c] : &wt[L - 1][c];
                if (L == -2) { j.args[c][0] = wp; j.args[c][1] = &n16; j.args[c][2] = &outp; continue; }
                j.args[c][0] = wp; j.args[c][1] = ks[k].q8 == 1 ? &xq : &x; j.args[c][2] = &y[c];
                j.args[c][3] = &rws; j.args[c][4] = &cls; j.args[c][5] = &ks[k].NS;
            }
            printf("%-9s %5u NS %d", ks[k].fn, j.grid, ks[k].NS);
            for (int m = 0; m < 2; m++) {
                set_mode(m ? 2 : 0);
                CK(cuMemsetD8(y[0], 0xff, ROWS * 4)); /* NaN: an unwritten row shows */
                float tb = time_job(&j, m, 0), tg = time_job(&j, m, 1);
                const double by = L == 8 ? (double)sb6 : L == 7 ? (double)kb : (double)wb;
                printf("  %s %.2f / g%.2f (%.1f us)", m ? "early" : "plain", by / (tb * 1e-3) / 1e9 / copy_gbps,
                       by / (tg * 1e-3) / 1e9 / copy_gbps, tb * 1e3);
                if (L >= -1 && L != 8) {
                    static float got[ROWS];
                    CK(cuMemcpyDtoH(got, y[0], sizeof got));
                    double worst = 0;
                    for (int r = 0; r < ROWS; r++) {
                        const double *rf = L == 7 ? (ks[k].q8 ? refK8 : refK) : ks[k].q8 ? ref8 : ref;
                        const double *sb = L == 7 ? (ks[k].q8 ? sabsK8 : sabsK) : ks[k].q8 ? sabs8 : sabs;
                        double e = fabs(got[r] - rf[r]) / (sb[r] > 0 ? sb[r] : 1);
                        if (!(e <= worst)) worst = e; /* NaN sticks */
                    }
                    printf(" err %.1e", worst);
                }
            }
            printf("\n");
            if (ks[k].tim) {
                /* the timeline of one launch alone (copy 0, out of L2), then of the last of a back-to-back run */
                for (int m = 0; m < 2; m++) {
                    static unsigned long long tb[1056 * 48];
                    CUdeviceptr tp; size_t tsz; CK(cuModuleGetGlobal(&tp, &tsz, mod, "g_tim"));
                    CK(cuMemsetD8(tp, 0, tsz)); set_mode(2); CK(cuCtxSynchronize());
                    if (m == 0) {
                        job one = j; for (int c = 1; c < COPIES; c++) memcpy(one.args[c], j.args[0], sizeof j.args[0]);
                        CUlaunchConfig cfg = {0};
                        cfg.gridDimX = j.grid; cfg.gridDimY = 1; cfg.gridDimZ = 1; cfg.blockDimX = j.block;
                        cfg.blockDimY = 1; cfg.blockDimZ = 1; cfg.sharedMemBytes = j.smem; cfg.hStream = st;
                        CK(cuLaunchKernelEx(&cfg, j.f, j.args[0], NULL));
                    } else
                        launch_all(&j, 1);
                    CK(cuCtxSynchronize());
                    CK(cuMemcpyDtoH(tb, tp, sizeof tb));
                    tim_report(tb, j.grid, m ? "b2b-last" : "alone");
                    if (getenv("TIMDUMP")) { /* raw timelines: TIMDUMP/<kernel>_<NS>_<alone|b2b>.bin */
                        char fn[512]; snprintf(fn, sizeof fn, "%s/%s_%d_%s.bin", getenv("TIMDUMP"), ks[k].fn, ks[k].NS, m ? "b2b" : "alone");
                        FILE *f = fopen(fn, "wb"); if (f) { fwrite(tb, 8, (size_t)j.grid * 48, f); fclose(f); }
                    }
                }
            }
            fflush(stdout);
        }
    return 0;
}
