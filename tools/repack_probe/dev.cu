// Repack probe (quantized-notes.md, 2026-11-28 "repacked q4_0"): the op's
// q4_0 matvec kernels (ggml's 18-byte blocks, staged through shared memory)
// against f32-x kernels over the same values in layouts whose 16-byte
// pieces a lane can load straight into registers:
//   rp1:  every group's 16 nibble bytes first (row-major), then every
//         group's f16 scale; a warp a row, lane l groups l, l + 32, ...
//   rpT:  tiles of T rows: piece (tile, group g, row r) at (tile G + g) T + r,
//         the scales likewise; lane l takes row l % T of a tile, a warp's
//         load is 512 contiguous bytes and its x read a broadcast; the
//         block's 8 warps split the columns and meet in shared memory.
// and, with q8_1 x (2026-11-28, afternoon; quantized-notes.md, "what the
// op's q8_1 forms lose"): rp1q8 (rp1's layout), rb8q8 / rb16q8 (blocks of
// 8 / 16 groups: nibbles, then scales), rb8q8s / rb8q8b (rb8q8 with the
// op's shared memory, with its register bound), pmr8u / prb / prb8 (the
// op's q4_0r body without its bound, alone without the wide path), rk8n /
// rk8s / rk8p* (q4_K as it is, a chunk or a piece a lane, straight into
// registers) and rb8f (rb8q8 taking f32 x, quantized to q8_1 by every block).
// Build (here, no GPU needed), run on an sm_90 device:
//   nvcc -arch=sm_90 -cubin -o rp.cubin -x cu -Isrc/core/backends/cuda/include \
//        -Ikernels tools/repack_probe/dev.cu
//   gcc -O2 -o rp_host tools/repack_probe/host.c -I/usr/local/cuda/include \
//        -L/usr/local/cuda/lib64/stubs -lcuda -lm
//   ./rp_host rp.cubin
#include <hip/hip_runtime.h>
__constant__ int g_mode; // 2: wait after the first loads (launched early)
__constant__ int g_diag; // diagnostics (wrong y): 1 x not staged, 2 no arithmetic (the loads' bits xor-ed)
__device__ __forceinline__ void probe_wait()
{
    if (g_mode == 2) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
}
#undef hk_grid_wait
#define hk_grid_wait() probe_wait()
#include "quantized/quantized.hip"

extern "C" __global__ void pm_q4_0(const void *w, const float *x, float *y, int rows, int cols)
{
    hkq_matvec<HKQ_Q4_0>(w, x, y, rows, cols);
}
extern "C" __global__ void pm8_q4_0(const void *w, const void *x, float *y, int rows, int cols)
{
    hkq_matvec_q8_1<HKQ_Q4_0>(w, x, y, rows, cols);
}
extern "C" __global__ void ro(const uint4 *w, unsigned long long n16, unsigned *out)
{
    unsigned acc = 0;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x,
                       s = (unsigned long long)gridDim.x * blockDim.x;
    bool first = true;
    for (; i + 3 * s < n16; i += 4 * s) {
        uint4 a = w[i], b = w[i + s], c = w[i + 2 * s], d = w[i + 3 * s];
        if (first) {
            first = false;
            probe_wait();
        }
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    if (first)
        probe_wait();
    for (; i < n16; i += s) {
        uint4 a = w[i];
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x12345678u)
        out[0] = acc;
}

// sum_j (n_j - 8) x_j over one q4_0 group: its 16 bytes q (byte j: element
// j low, j + 16 high), x its 32 values as 8 float4
__device__ __forceinline__ float rp_dot(uint4 q, const float4 *xv)
{
    float s0 = 0.0f, s1 = 0.0f;
    const hkq_u32 w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        s0 = hkq_dot4(w[k] & 0x0F0F0F0Fu, HKQ_MAGIC + 8.0f, xv[k], s0);
        s1 = hkq_dot4((w[k] >> 4) & 0x0F0F0F0Fu, HKQ_MAGIC + 8.0f, xv[4 + k], s1);
    }
    return s0 + s1;
}
__device__ __forceinline__ float rp_h2f(hkq_u16 h) { return __half2float(__ushort_as_half(h)); }

// rp1: cols == 4096 (4 groups a lane), x staged padded (group g at word 36 g)
extern "C" __global__ void __launch_bounds__(256) rp1(const void *w, const float *x, float *y, int rows, int cols)
{
    __shared__ uint4 xs[4096 / 32 * 9];
    const unsigned G = (unsigned)cols / 32;
    const unsigned long long nb = (unsigned long long)rows * G;
    const uint4 *qs = (const uint4 *)w;
    const hkq_u16 *dd = (const hkq_u16 *)((const hkq_u8 *)w + nb * 16);
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, stride = gridDim.x * 8;
    unsigned row = blockIdx.x * 8 + warp;
    uint4 q[4];
    hkq_u16 d[4];
    if (row < (unsigned)rows)
#pragma unroll
        for (int u = 0; u < 4; u++) {
            q[u] = qs[(unsigned long long)row * G + lane + 32 * u];
            d[u] = dd[(unsigned long long)row * G + lane + 32 * u];
        }
    probe_wait();
    if (!(g_diag & 1))
        for (unsigned i = threadIdx.x; i < (unsigned)cols / 4; i += blockDim.x)
            xs[i / 8 * 9 + i % 8] = ((const uint4 *)x)[i];
    __syncthreads();
    while (row < (unsigned)rows) {
        const unsigned nrow = row + stride;
        uint4 nq[4];
        hkq_u16 nd[4];
        if (nrow < (unsigned)rows)
#pragma unroll
            for (int u = 0; u < 4; u++) {
                nq[u] = qs[(unsigned long long)nrow * G + lane + 32 * u];
                nd[u] = dd[(unsigned long long)nrow * G + lane + 32 * u];
            }
        float acc = 0.0f;
        if (g_diag & 2) {
            unsigned b = 0;
            for (int u = 0; u < 4; u++)
                b ^= q[u].x ^ q[u].y ^ q[u].z ^ q[u].w ^ d[u];
            acc = __uint_as_float(b & 0x3fffffffu);
        } else
#pragma unroll
        for (int u = 0; u < 4; u++)
            acc += rp_h2f(d[u]) * rp_dot(q[u], (const float4 *)(xs + 9 * (lane + 32 * u)));
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_xor(acc, off);
        if (lane == 0)
            y[row] = acc;
        row = nrow;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            q[u] = nq[u];
            d[u] = nd[u];
        }
    }
}

// rpT: tiles of T rows (rows % T == 0, cols == 4096); a block a tile at a
// time, its 8 warps 16 groups each, D pieces a lane in flight
template <int T, int D>
__device__ __forceinline__ void rp_tiles(const void *w, const float *x, float *y, int rows, int cols)
{
    __shared__ uint4 xs[4096 / 4];
    __shared__ float part[8][32];
    enum { GW = 16, STEPS = GW / (32 / T) }; // groups a warp; a lane's pieces a tile
    static_assert(STEPS % D == 0, "whole rounds of D pieces");
    const unsigned G = (unsigned)cols / 32, ntiles = (unsigned)rows / T;
    const unsigned long long nb = (unsigned long long)rows * G;
    const uint4 *qs = (const uint4 *)w;
    const hkq_u16 *dd = (const hkq_u16 *)((const hkq_u8 *)w + nb * 16);
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned r = lane % T, sub = lane / T; // row in the tile; which of the step's groups
    unsigned tile = blockIdx.x;
    // piece s of the warp's share of tile t: group warp GW + s (32 / T) + sub
    auto at = [&](unsigned t, unsigned s) {
        return ((unsigned long long)t * G + warp * GW + s * (32 / T) + sub) * T + r;
    };
    uint4 q[D];
    hkq_u16 d[D];
    if (tile < ntiles)
#pragma unroll
        for (int k = 0; k < D; k++) {
            q[k] = qs[at(tile, k)];
            d[k] = dd[at(tile, k)];
        }
    probe_wait();
    for (unsigned i = threadIdx.x; i < (unsigned)cols / 4; i += blockDim.x)
        xs[i] = ((const uint4 *)x)[i];
    __syncthreads();
    while (tile < ntiles) {
        float acc = 0.0f;
#pragma unroll
        for (unsigned s0 = 0; s0 < STEPS; s0 += D) {
            const bool last = s0 + D == STEPS;
            const unsigned nt = last ? tile + gridDim.x : tile, ns = last ? 0 : s0 + D;
            uint4 nq[D];
            hkq_u16 nd[D];
            if (nt < ntiles)
#pragma unroll
                for (int k = 0; k < D; k++) {
                    nq[k] = qs[at(nt, ns + k)];
                    nd[k] = dd[at(nt, ns + k)];
                }
#pragma unroll
            for (int k = 0; k < D; k++) {
                const unsigned g = warp * GW + (s0 + k) * (32 / T) + sub;
                acc += rp_h2f(d[k]) * rp_dot(q[k], (const float4 *)xs + 8 * g);
            }
#pragma unroll
            for (int k = 0; k < D; k++) {
                q[k] = nq[k];
                d[k] = nd[k];
            }
        }
        for (int off = T; off < 32; off *= 2)
            acc += __shfl_xor(acc, off);
        if (sub == 0)
            part[warp][r] = acc;
        __syncthreads();
        if (warp == 0 && lane < T) {
            float s = 0.0f;
            for (int k = 0; k < 8; k++)
                s += part[k][lane];
            y[(unsigned long long)tile * T + lane] = s;
        }
        __syncthreads();
        tile += gridDim.x;
    }
}
#define RPT(T, D)                                                                                     \
    extern "C" __global__ void __launch_bounds__(256) rp##T##_##D(const void *w, const float *x, float *y, \
                                                                  int rows, int cols)                \
    {                                                                                                 \
        rp_tiles<T, D>(w, x, y, rows, cols);                                                          \
    }
RPT(32, 4) RPT(32, 8) RPT(16, 4) RPT(16, 8) RPT(8, 4)

// rpt: the tensor-core form over its own layout (tiles of 16 rows). The
// weights' integers n - 8 as f16 (exact), x split into three f16 parts per
// group of 32 scaled by a power of two (exact to 2^-24 of the group's
// largest |x| times 2^-14), products exact in the mma's f32 sums; the
// group's d 2^-s applied to C. Layout: piece ((R Q4 + J) 2 + s) 32 + lane
// (Q4 = groups / 4 of a row) holds, for lane (g, t), row 16 R + 8 s + g's
// bytes [4 t, 4 t + 4) of groups 4 J ... 4 J + 3; then (8-byte units)
// (R Q4 + J) 16 + row % 16 the 4 groups' f16 scales.
__device__ __forceinline__ unsigned rp_lop(unsigned a, unsigned m, unsigned k)
{
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(m), "r"(k));
    return d;
}
__device__ __forceinline__ unsigned rp_hsub(unsigned a, unsigned b)
{
    unsigned d;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
__device__ __forceinline__ unsigned rp_hfma(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
// W's 8 nibbles as n - 8 in f16 pairs: p[0] elems (0, 2), p[1] (16, 18), p[2] (1, 3), p[3] (17, 19) (+ 4 t)
__device__ __forceinline__ void rp_dec(unsigned W, unsigned *p)
{
    const unsigned M = 0x64006400u, B1032 = 0x64086408u, S16 = 0x2C002C00u /* 1/16 */, N72 = 0xD480D480u /* -72 */;
    const unsigned W8 = W >> 8;
    p[0] = rp_hsub(rp_lop(W, 0x000F000Fu, M), B1032);
    p[1] = rp_hfma(rp_lop(W, 0x00F000F0u, M), S16, N72);
    p[2] = rp_hsub(rp_lop(W8, 0x000F000Fu, M), B1032);
    p[3] = rp_hfma(rp_lop(W8, 0x00F000F0u, M), S16, N72);
}
__device__ __forceinline__ void rp_mma(float *c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                       unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__device__ __forceinline__ unsigned rp_h2(float a, float b)
{
    return (unsigned)__half_as_ushort(__float2half_rn(a)) | (unsigned)__half_as_ushort(__float2half_rn(b)) << 16;
}
template <int P, int D>
__device__ __forceinline__ void rp_tc(const void *w, const float *x, float *y, int rows, int cols)
{
    __shared__ uint4 xb[128 * 16]; // [group][part n 0..3 (3: zeros)][t]
    __shared__ float xsc[128];
    __shared__ float part[8][16];
    enum { TPB = 8 / P };
    const unsigned G = (unsigned)cols / 32, Q4 = G / 4, QW = Q4 / P, ntiles = (unsigned)rows / 16;
    const unsigned long long nb = (unsigned long long)rows * G;
    const uint4 *wa = (const uint4 *)w;
    const uint2 *wd = (const uint2 *)((const hkq_u8 *)w + nb * 16);
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const unsigned wtile = warp / P, J0 = (warp % P) * QW, stride = gridDim.x * TPB;
    unsigned tile = blockIdx.x * TPB + wtile;
    uint4 A0[D], A1[D];
    uint2 D0[D], D1[D];
    auto load = [&](unsigned tl, unsigned q, int k) {
        const unsigned long long RJ = (unsigned long long)tl * Q4 + J0 + q;
        A0[k] = wa[RJ * 64 + lane];
        A1[k] = wa[RJ * 64 + 32 + lane];
        D0[k] = wd[RJ * 16 + g];
        D1[k] = wd[RJ * 16 + 8 + g];
    };
    if (tile < ntiles)
#pragma unroll
        for (int k = 0; k < D; k++)
            load(tile, k, k);
    probe_wait();
    // x's parts: a (group, t) a task, the group's 4 tasks on adjacent lanes
    // (their max met by shuffles); the power of two from the max's bits
    for (unsigned task = threadIdx.x; task < (g_diag & 1 ? 0 : G * 4); task += blockDim.x) {
        const unsigned j = task / 4, tt = task % 4;
        const float4 *xg = (const float4 *)(x + 32 * j);
        const float4 lo = xg[tt], hi = xg[4 + tt];
        const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        float m = 0.0f;
        for (int i = 0; i < 8; i++)
            m = fmaxf(m, fabsf(v[i]));
        m = fmaxf(m, __shfl_xor(m, 1));
        m = fmaxf(m, __shfl_xor(m, 2));
        const int e = (int)(__float_as_uint(m) >> 23); // m in [2^(e-127), 2^(e-126)), e > 0
        int s = e ? 141 - e : 0;                      // m 2^s in [2^14, 2^15)
        s = s > 126 ? 126 : s;
        const float up = __uint_as_float((unsigned)(127 + s) << 23);
        float p[3][8];
        for (int i = 0; i < 8; i++) {
            float r = v[i] * up;
            for (int n = 0; n < 3; n++) {
                p[n][i] = __half2float(__float2half_rn(r));
                r -= p[n][i];
            }
        }
        for (int n = 0; n < 3; n++)
            xb[(j * 4 + n) * 4 + tt] = make_uint4(rp_h2(p[n][0], p[n][2]), rp_h2(p[n][1], p[n][3]),
                                                  rp_h2(p[n][4], p[n][6]), rp_h2(p[n][5], p[n][7]));
        xb[(j * 4 + 3) * 4 + tt] = make_uint4(0, 0, 0, 0);
        if (tt == 0)
            xsc[j] = __uint_as_float((unsigned)(127 - s) << 23);
    }
    __syncthreads();
    const unsigned nsel = g < 3 ? g : 3;
    while (tile < ntiles) {
        float acc0 = 0.0f, acc1 = 0.0f;
        for (unsigned q0 = 0; q0 < QW; q0 += D) {
            uint4 a0[D], a1[D];
            uint2 d0[D], d1[D];
#pragma unroll
            for (int k = 0; k < D; k++) {
                a0[k] = A0[k]; a1[k] = A1[k]; d0[k] = D0[k]; d1[k] = D1[k];
            }
            const bool last = q0 + D >= QW;
            const unsigned nt = last ? tile + stride : tile, nq = last ? 0 : q0 + D;
            if (nt < ntiles)
#pragma unroll
                for (int k = 0; k < D; k++)
                    load(nt, nq + k, k);
            if (g_diag & 2) {
                unsigned b = 0;
                for (int k = 0; k < D; k++)
                    b ^= a0[k].x ^ a0[k].y ^ a0[k].z ^ a0[k].w ^ a1[k].x ^ a1[k].y ^ a1[k].z ^ a1[k].w ^ d0[k].x ^
                         d0[k].y ^ d1[k].x ^ d1[k].y;
                acc0 += __uint_as_float(b & 0x3fffffffu);
                continue;
            }
#pragma unroll
            for (int k = 0; k < D; k++) {
                const unsigned wa0[4] = {a0[k].x, a0[k].y, a0[k].z, a0[k].w};
                const unsigned wa1[4] = {a1[k].x, a1[k].y, a1[k].z, a1[k].w};
                const unsigned dd0[2] = {d0[k].x, d0[k].y}, dd1[2] = {d1[k].x, d1[k].y};
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const unsigned j = 4 * (J0 + q0 + k) + i;
                    unsigned p0[4], p1[4];
                    rp_dec(wa0[i], p0);
                    rp_dec(wa1[i], p1);
                    const uint4 B = xb[(j * 4 + nsel) * 4 + t];
                    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    rp_mma(c, p0[0], p1[0], p0[2], p1[2], B.x, B.y);
                    rp_mma(c, p0[1], p1[1], p0[3], p1[3], B.z, B.w);
                    const float sc = xsc[j];
                    const float s0 = __half2float(__ushort_as_half((unsigned short)(dd0[i / 2] >> (16 * (i % 2))))) * sc;
                    const float s1 = __half2float(__ushort_as_half((unsigned short)(dd1[i / 2] >> (16 * (i % 2))))) * sc;
                    acc0 += s0 * (c[0] + c[1]);
                    acc1 += s1 * (c[2] + c[3]);
                }
            }
        }
        acc0 += __shfl_xor(acc0, 1);
        acc0 += __shfl_xor(acc0, 2);
        acc1 += __shfl_xor(acc1, 1);
        acc1 += __shfl_xor(acc1, 2);
        if (P == 1) {
            if (t == 0) {
                y[(unsigned long long)tile * 16 + g] = acc0;
                y[(unsigned long long)tile * 16 + 8 + g] = acc1;
            }
        } else {
            if (t == 0) {
                part[warp][g] = acc0;
                part[warp][8 + g] = acc1;
            }
            __syncthreads();
            if (warp % P == 0 && lane < 16) {
                float s = 0.0f;
                for (int k = 0; k < P; k++)
                    s += part[warp + k][lane];
                y[(unsigned long long)tile * 16 + lane] = s;
            }
            __syncthreads();
        }
        tile += stride;
    }
}
#define RPTC(P, D)                                                                                      \
    extern "C" __global__ void __launch_bounds__(256) rpt##P##_##D(const void *w, const float *x, float *y, \
                                                                   int rows, int cols)                  \
    {                                                                                                   \
        rp_tc<P, D>(w, x, y, rows, cols);                                                               \
    }
RPTC(1, 4) RPTC(2, 4) RPTC(4, 4) RPTC(8, 4) RPTC(4, 2) RPTC(1, 2)

// rp1q8: rp1's layout with x quantized to q8_1 (ggml's vec_dot_q4_0_q8_1:
// d4 (d8 sum n q - 8 s8)); x's 32 bytes a group staged 48 bytes apart (8
// lanes' 16-byte reads in 8 bank quads), its d and s as floats beside
extern "C" __global__ void __launch_bounds__(256) rp1q8(const void *w, const void *xq, float *y, int rows, int cols)
{
    __shared__ uint4 xs[128 * 3];
    __shared__ float2 xds[128];
    const unsigned G = (unsigned)cols / 32;
    const unsigned long long nb = (unsigned long long)rows * G;
    const uint4 *qs = (const uint4 *)w;
    const hkq_u16 *dd = (const hkq_u16 *)((const hkq_u8 *)w + nb * 16);
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, stride = gridDim.x * 8;
    unsigned row = blockIdx.x * 8 + warp;
    uint4 q[4];
    hkq_u16 d[4];
    if (row < (unsigned)rows)
#pragma unroll
        for (int u = 0; u < 4; u++) {
            q[u] = qs[(unsigned long long)row * G + lane + 32 * u];
            d[u] = dd[(unsigned long long)row * G + lane + 32 * u];
        }
    probe_wait();
    const hkq_u8 *xb = (const hkq_u8 *)xq;
    for (unsigned i = threadIdx.x; i < G * 8; i += blockDim.x)
        ((hkq_u32 *)xs)[i / 8 * 12 + i % 8] = *(const hkq_u32 *)(xb + 36 * (i / 8) + 4 + 4 * (i % 8));
    for (unsigned i = threadIdx.x; i < G; i += blockDim.x)
        xds[i] = make_float2(rp_h2f(*(const hkq_u16 *)(xb + 36 * i)), rp_h2f(*(const hkq_u16 *)(xb + 36 * i + 2)));
    __syncthreads();
    const hkq_u32 M = 0x0F0F0F0Fu;
    while (row < (unsigned)rows) {
        const unsigned nrow = row + stride;
        uint4 nq[4];
        hkq_u16 nd[4];
        if (nrow < (unsigned)rows)
#pragma unroll
            for (int u = 0; u < 4; u++) {
                nq[u] = qs[(unsigned long long)nrow * G + lane + 32 * u];
                nd[u] = dd[(unsigned long long)nrow * G + lane + 32 * u];
            }
        float acc = 0.0f;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const unsigned g = lane + 32 * u;
            const uint4 a = xs[3 * g], b = xs[3 * g + 1];
            const float2 ds = xds[g];
            int si = hkq_dp4a(q[u].x & M, a.x, 0);
            si = hkq_dp4a(q[u].y & M, a.y, si);
            si = hkq_dp4a(q[u].z & M, a.z, si);
            si = hkq_dp4a(q[u].w & M, a.w, si);
            si = hkq_dp4a((q[u].x >> 4) & M, b.x, si);
            si = hkq_dp4a((q[u].y >> 4) & M, b.y, si);
            si = hkq_dp4a((q[u].z >> 4) & M, b.z, si);
            si = hkq_dp4a((q[u].w >> 4) & M, b.w, si);
            acc += rp_h2f(d[u]) * (ds.x * (float)si - 8.0f * ds.y);
        }
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_xor(acc, off);
        if (lane == 0)
            y[row] = acc;
        row = nrow;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            q[u] = nq[u];
            d[u] = nd[u];
        }
    }
}

// the op's own q4_0r kernels (quantized.hip), in this harness
extern "C" __global__ void __launch_bounds__(256, 4) pmr_q4_0r(const void *w, const float *x, float *y, int rows, int cols)
{
    hkq_matvec<HKQ_Q4_0R>(w, x, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(256, 4) pmr8_q4_0r(const void *w, const void *x, float *y, int rows, int cols)
{
    hkq_matvec_q8_1<HKQ_Q4_0R>(w, x, y, rows, cols);
}

// rp1q8's kernel over blocks of BG groups (their BG x 16 nibble bytes, then
// their BG f16 scales): BG 8 is q4_0r's 144-byte block, 16 a 288-byte one
// (whole 32-byte sectors)
template <int BG, int PAD = 0, int XF = 0>
__device__ __forceinline__ void rbq8(const void *w, const void *xq, float *y, int rows, int cols)
{
    __shared__ uint4 xs[128 * 3 + PAD];
    __shared__ float2 xds[128];
    const unsigned G = (unsigned)cols / 32;
    const uint4 *qs = (const uint4 *)w;
    const hkq_u16 *dd = (const hkq_u16 *)w;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, stride = gridDim.x * 8;
    unsigned row = blockIdx.x * 8 + warp;
    uint4 q[4];
    hkq_u16 d[4];
#define RB_LOAD(Q, D, R)                                                                       \
    for (int u = 0; u < 4; u++) {                                                              \
        const unsigned long long i = (unsigned long long)(R) * G + lane + 32 * u, b = i / BG; \
        Q[u] = qs[b * (BG * 18 / 16) + i % BG];                                                \
        D[u] = dd[b * (BG * 9) + BG * 8 + i % BG];                                             \
    }
    if (row < (unsigned)rows) {
        RB_LOAD(q, d, row)
    }
    probe_wait();
    if (XF) { // f32 x quantized here as ggml's quantize_row_q8_1 does: a lane a value, a warp a group
        const float *xf = (const float *)xq;
        const unsigned NG = 16; // groups a warp (4096 columns, 8 warps): all its loads first
        float vs[NG];
#pragma unroll
        for (unsigned t = 0; t < NG; t++) {
            const unsigned g = threadIdx.x / 32 + 8 * t;
            vs[t] = g < G ? xf[32 * g + threadIdx.x % 32] : 0.0f;
        }
#pragma unroll
        for (unsigned t = 0; t < NG; t++) {
            const unsigned g = threadIdx.x / 32 + 8 * t;
            if (g >= G)
                break;
            const unsigned l = threadIdx.x % 32;
            const float v = vs[t];
            float amax = fabsf(v);
            for (int off = 16; off > 0; off /= 2)
                amax = fmaxf(amax, __shfl_xor(amax, off));
            const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
            const int q = (int)roundf(v * id);
            int sum = q;
            for (int off = 16; off > 0; off /= 2)
                sum += __shfl_xor(sum, off);
            ((signed char *)xs)[48 * g + l] = (signed char)q;
            if (l == 0) {
                const float dh = __half2float(__float2half_rn(d));
                xds[g] = make_float2(dh, __half2float(__float2half_rn(d * (float)sum)));
            }
        }
    } else {
        const hkq_u8 *xb = (const hkq_u8 *)xq;
        for (unsigned i = threadIdx.x; i < G * 8; i += blockDim.x)
            ((hkq_u32 *)xs)[i / 8 * 12 + i % 8] = *(const hkq_u32 *)(xb + 36 * (i / 8) + 4 + 4 * (i % 8));
        for (unsigned i = threadIdx.x; i < G; i += blockDim.x)
            xds[i] = make_float2(rp_h2f(*(const hkq_u16 *)(xb + 36 * i)), rp_h2f(*(const hkq_u16 *)(xb + 36 * i + 2)));
    }
    __syncthreads();
    const hkq_u32 M = 0x0F0F0F0Fu;
    while (row < (unsigned)rows) {
        const unsigned nrow = row + stride;
        uint4 nq[4];
        hkq_u16 nd[4];
        if (nrow < (unsigned)rows) {
            RB_LOAD(nq, nd, nrow)
        }
        float acc = 0.0f;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const unsigned g = lane + 32 * u;
            const uint4 a = xs[3 * g], b = xs[3 * g + 1];
            const float2 ds = xds[g];
            int si = hkq_dp4a(q[u].x & M, a.x, 0);
            si = hkq_dp4a(q[u].y & M, a.y, si);
            si = hkq_dp4a(q[u].z & M, a.z, si);
            si = hkq_dp4a(q[u].w & M, a.w, si);
            si = hkq_dp4a((q[u].x >> 4) & M, b.x, si);
            si = hkq_dp4a((q[u].y >> 4) & M, b.y, si);
            si = hkq_dp4a((q[u].z >> 4) & M, b.z, si);
            si = hkq_dp4a((q[u].w >> 4) & M, b.w, si);
            acc += rp_h2f(d[u]) * (ds.x * (float)si - 8.0f * ds.y);
        }
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_xor(acc, off);
        if (lane == 0)
            y[row] = acc;
        row = nrow;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            q[u] = nq[u];
            d[u] = nd[u];
        }
    }
}
extern "C" __global__ void __launch_bounds__(256) rb8q8(const void *w, const void *xq, float *y, int rows, int cols)
{
    rbq8<8>(w, xq, y, rows, cols);
}
// rb8q8 with the op's 16.5 KB of shared memory (the L1 carve-out), and with the op's register bound
extern "C" __global__ void __launch_bounds__(256) rb8q8s(const void *w, const void *xq, float *y, int rows, int cols)
{
    rbq8<8, 600>(w, xq, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(256, 4) rb8q8b(const void *w, const void *xq, float *y, int rows, int cols)
{
    rbq8<8>(w, xq, y, rows, cols);
}
// the op's q4_0r q8_1 kernel without its register bound
extern "C" __global__ void __launch_bounds__(256) pmr8u_q4_0r(const void *w, const void *x, float *y, int rows, int cols)
{
    hkq_matvec_q8_1<HKQ_Q4_0R>(w, x, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(256) rb16q8(const void *w, const void *xq, float *y, int rows, int cols)
{
    rbq8<16>(w, xq, y, rows, cols);
}

// the op's q4_0r body alone, without the wide path beside it in the kernel
extern "C" __global__ void __launch_bounds__(256, 4) prb_q4_0r(const void *w, const void *x, float *y, int rows, int cols)
{
    __shared__ uint4 xsm[HKQ_XMAX / 32 * 36 / 4];
    __shared__ float xsum[HKQ_XGMAX / 16];
    hkq_matvec_r_body<0>(w, x, y, rows, cols, xsm, xsum, nullptr);
}
extern "C" __global__ void __launch_bounds__(256, 4) prb8_q4_0r(const void *w, const void *x, float *y, int rows, int cols)
{
    __shared__ uint4 xsm[HKQ_RX8_PIECES];
    hkq_matvec_r_body<1>(w, x, y, rows, cols, xsm, nullptr, nullptr);
}

// q4_K as it is (no repack): its 144-byte blocks are 9 aligned 16-byte
// pieces (d, dmin and the 12 scale bytes; then 4 chunks of 32 nibble
// bytes, chunk j the low nibbles of group 2 j and the high of 2 j + 1), so
// a lane loads a chunk (2 pieces) and its block's header straight into
// registers. A warp a row; lane l takes chunks l, l + 32 (4096 columns:
// 64 chunks a row), always chunk j = l % 4 of its block. q8_1 x restaged
// as for q4_0r (hkq_stage_x8_r: 48 bytes a group, (d8, sum) beside).
// NX: the next row's loads in flight (1) or not (0).
// get_scale_min_k4 on the scale words s0..s2 (the 12 bytes) in registers,
// group is (0..7) known only at run time
__device__ __forceinline__ void rk_scale(hkq_u32 s0, hkq_u32 s1, hkq_u32 s2, unsigned is, int *sc, int *m)
{
    const unsigned t = 8 * (is & 3);
    const hkq_u32 b0 = s0 >> t, b1 = s1 >> t, b2 = s2 >> t;
    *sc = is < 4 ? (int)(b0 & 63) : (int)((b2 & 15) | ((b0 >> 2) & 48));
    *m = is < 4 ? (int)(b1 & 63) : (int)(((b2 >> 4) & 15) | ((b1 >> 2) & 48));
}
// dp4a of the nibbles of 16 bytes (shift 0: low, 4: high) against 16 bytes of q8_1 x, added to s
__device__ __forceinline__ int rk_dot16(uint4 p, uint4 a, int shift, int s)
{
    const hkq_u32 M = 0x0F0F0F0Fu;
    s = hkq_dp4a((p.x >> shift) & M, a.x, s);
    s = hkq_dp4a((p.y >> shift) & M, a.y, s);
    s = hkq_dp4a((p.z >> shift) & M, a.z, s);
    return hkq_dp4a((p.w >> shift) & M, a.w, s);
}
// groups 2 j and 2 j + 1 of a q4_K block (header h) against q8_1 x: their
// integer dots lo, hi, x's (d8, sum) pairs m0, m1; mins 0: leave the min
// terms to another lane
__device__ __forceinline__ float rk_groups(uint4 h, unsigned j, int lo, int hi, int2 m0, int2 m1, int mins)
{
    int sc0, mn0, sc1, mn1;
    rk_scale(h.y, h.z, h.w, 2 * j, &sc0, &mn0);
    rk_scale(h.y, h.z, h.w, 2 * j + 1, &sc1, &mn1);
    const float d = rp_h2f((hkq_u16)h.x), dm = mins ? rp_h2f((hkq_u16)(h.x >> 16)) : 0.0f;
    return __int_as_float(m0.x) * (d * (float)sc0 * (float)lo - dm * (float)mn0 * (float)m0.y) +
           __int_as_float(m1.x) * (d * (float)sc1 * (float)hi - dm * (float)mn1 * (float)m1.y);
}
template <int NX>
__device__ __forceinline__ void rk8(const void *w, const void *xq, float *y, int rows, int cols)
{
    __shared__ uint4 xsm[HKQ_RX8_PIECES];
    const unsigned C = (unsigned)cols / 64; // chunks a row
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, stride = gridDim.x * 8, j = lane % 4;
    const uint4 *wp = (const uint4 *)w + 9 * (lane / 4) + 1 + 2 * j; // lane's first chunk of row 0
    const uint4 *hp = (const uint4 *)w + 9 * (lane / 4);             // its block's header
    const unsigned rs = C / 4 * 9;
    unsigned row = blockIdx.x * 8 + warp;
    uint4 q[2][2], h[2];
#define RK_LOAD(Q, H, R)                                                      \
    for (int u = 0; u < 2; u++) {                                             \
        const unsigned long long o = (unsigned long long)(R) * rs + 72 * u;   \
        Q[u][0] = wp[o];                                                      \
        Q[u][1] = wp[o + 1];                                                  \
        H[u] = hp[o];                                                         \
    }
    if (row < (unsigned)rows) {
        RK_LOAD(q, h, row)
    }
    probe_wait();
    hkq_stage_x8_r(xq, cols, xsm);
    while (row < (unsigned)rows) {
        const unsigned nrow = row + stride;
        uint4 nq[2][2], nh[2];
        if (NX && nrow < (unsigned)rows) {
            RK_LOAD(nq, nh, nrow)
        }
        float acc = 0.0f;
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const unsigned g0 = 8 * (lane / 4 + 8 * u) + 2 * j; // x's group of the low nibbles
            const uint4 a0 = xsm[3 * g0], a1 = xsm[3 * g0 + 1], b0 = xsm[3 * g0 + 3], b1 = xsm[3 * g0 + 4];
            const int2 m0 = ((const int2 *)(xsm + HKQ_RX8_META))[g0], m1 = ((const int2 *)(xsm + HKQ_RX8_META))[g0 + 1];
            const int lo = rk_dot16(q[u][1], a1, 0, rk_dot16(q[u][0], a0, 0, 0));
            const int hi = rk_dot16(q[u][1], b1, 4, rk_dot16(q[u][0], b0, 4, 0));
            acc += rk_groups(h[u], j, lo, hi, m0, m1, 1);
        }
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_xor(acc, off);
        if (lane == 0)
            y[row] = acc;
        if (!NX && nrow < (unsigned)rows) {
            RK_LOAD(nq, nh, nrow)
        }
        row = nrow;
#pragma unroll
        for (int u = 0; u < 2; u++) {
            q[u][0] = nq[u][0];
            q[u][1] = nq[u][1];
            h[u] = nh[u];
        }
    }
}
extern "C" __global__ void __launch_bounds__(256) rk8n(const void *w, const void *xq, float *y, int rows, int cols)
{
    rk8<1>(w, xq, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(256) rk8s(const void *w, const void *xq, float *y, int rows, int cols)
{
    rk8<0>(w, xq, y, rows, cols);
}
// the op's q4_K kernels
extern "C" __global__ void pm_q4_K(const void *w, const float *x, float *y, int rows, int cols)
{
    hkq_matvec<HKQ_Q4_K>(w, x, y, rows, cols);
}
extern "C" __global__ void pm8_q4_K(const void *w, const void *x, float *y, int rows, int cols)
{
    hkq_matvec_q8_1<HKQ_Q4_K>(w, x, y, rows, cols);
}

// rk8 with rp1q8's loads: lane l takes nibble pieces l + 32 v (v = 0..3) of
// the row's 128, so a warp's load is 4 blocks' 512 nibble bytes; piece k =
// l % 8 of its block: half h = k % 2 of chunk j = k / 2, i.e. values 16 h ..
// 16 h + 15 of groups 2 j (low nibbles) and 2 j + 1 (high). The lane of
// half 0 takes the groups' min terms (q8_1's integer sums cover all 32).
template <int NX>
__device__ __forceinline__ void rk8p(const void *w, const void *xq, float *y, int rows, int cols)
{
    __shared__ uint4 xsm[HKQ_RX8_PIECES];
    const unsigned P = (unsigned)cols / 32; // nibble pieces a row
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, stride = gridDim.x * 8;
    const unsigned k = lane % 8, j = k / 2, hh = k % 2;
    const uint4 *wp = (const uint4 *)w + 9 * (lane / 8) + 1 + k;
    const uint4 *hp = (const uint4 *)w + 9 * (lane / 8);
    const unsigned rs = P / 8 * 9;
    unsigned row = blockIdx.x * 8 + warp;
    uint4 q[4], h[4];
#define RKP_LOAD(Q, H, R)                                                   \
    for (int v = 0; v < 4; v++) {                                           \
        const unsigned long long o = (unsigned long long)(R) * rs + 36 * v; \
        Q[v] = wp[o];                                                       \
        H[v] = hp[o];                                                       \
    }
    if (row < (unsigned)rows) {
        RKP_LOAD(q, h, row)
    }
    probe_wait();
    hkq_stage_x8_r(xq, cols, xsm);
    while (row < (unsigned)rows) {
        const unsigned nrow = row + stride;
        uint4 nq[4], nh[4];
        if (NX && nrow < (unsigned)rows) {
            RKP_LOAD(nq, nh, nrow)
        }
        float acc = 0.0f;
#pragma unroll
        for (int v = 0; v < 4; v++) {
            const unsigned g0 = 8 * (lane / 8 + 4 * v) + 2 * j;
            const uint4 a = xsm[3 * g0 + hh], b = xsm[3 * g0 + 3 + hh];
            const int2 m0 = ((const int2 *)(xsm + HKQ_RX8_META))[g0], m1 = ((const int2 *)(xsm + HKQ_RX8_META))[g0 + 1];
            acc += rk_groups(h[v], j, rk_dot16(q[v], a, 0, 0), rk_dot16(q[v], b, 4, 0), m0, m1, !hh);
        }
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_xor(acc, off);
        if (lane == 0)
            y[row] = acc;
        if (!NX && nrow < (unsigned)rows) {
            RKP_LOAD(nq, nh, nrow)
        }
        row = nrow;
#pragma unroll
        for (int v = 0; v < 4; v++) {
            q[v] = nq[v];
            h[v] = nh[v];
        }
    }
}
extern "C" __global__ void __launch_bounds__(256) rk8pn(const void *w, const void *xq, float *y, int rows, int cols)
{
    rk8p<1>(w, xq, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(256) rk8ps(const void *w, const void *xq, float *y, int rows, int cols)
{
    rk8p<0>(w, xq, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(256, 4) rk8pnb(const void *w, const void *xq, float *y, int rows, int cols)
{
    rk8p<1>(w, xq, y, rows, cols);
}

// rb8q8 taking f32 x, quantized to q8_1 by every block as it stages it
// (ggml's and candle's route for f32 activations, in one launch)
extern "C" __global__ void __launch_bounds__(256) rb8f(const void *w, const void *x, float *y, int rows, int cols)
{
    rbq8<8, 0, 1>(w, x, y, rows, cols);
}

// ---------------------------------------------------------------------------
// tq8 / tk8 (2026-11-29): a persistent grid over ggml's own layouts (q4_0's
// 18-byte blocks, q4_K's 144-byte super-blocks), q8_1 x. Each CTA owns a
// contiguous run of rows (split to within a row, so no CTA has a step more
// than another); its thread 0 streams them into a ring of NS stages of
// 2 W rows with one cp.async.bulk a stage, and the CTA's W warps sum a
// stage while the next NS - 1 are in flight. A lane owns a 144-byte piece
// of a row (8 q4_0 blocks or one q4_K super-block: nine aligned 16-byte
// shared loads, no bank conflicts at a 144-byte stride), 16 lanes a row of
// 4096 columns. x is staged once a CTA as q8_1 values, piece-major (block
// 8 p + j at index j P + p) so that a half-warp's 16 pieces read 16
// consecutive records.
__device__ __forceinline__ unsigned tq_sa(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void tq_issue(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tq_sa(bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(tq_sa(dst)),
                 "l"(src), "r"(bytes), "r"(tq_sa(bar))
                 : "memory");
}
__device__ __forceinline__ void tq_wait(unsigned long long *bar, unsigned ph)
{
    unsigned done, spins = 0;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(tq_sa(bar)), "r"(ph)
                     : "memory");
        if (++spins == (1u << 24)) // a copy that never lands: fail, do not hang the probe
            __trap();
    } while (!done);
}
// one q4_0 block's sum d4 (d8 sum n q - 8 s8), its 16 nibble bytes q
__device__ __forceinline__ float tq_q4_0(hkq_u32 q0, hkq_u32 q1, hkq_u32 q2, hkq_u32 q3, hkq_u16 dh, uint4 lo, uint4 hi, float2 ds)
{
    const hkq_u32 M = 0x0F0F0F0Fu;
    int si = hkq_dp4a(q0 & M, lo.x, 0);
    si = hkq_dp4a(q1 & M, lo.y, si);
    si = hkq_dp4a(q2 & M, lo.z, si);
    si = hkq_dp4a(q3 & M, lo.w, si);
    si = hkq_dp4a((q0 >> 4) & M, hi.x, si);
    si = hkq_dp4a((q1 >> 4) & M, hi.y, si);
    si = hkq_dp4a((q2 >> 4) & M, hi.z, si);
    si = hkq_dp4a((q3 >> 4) & M, hi.w, si);
    return rp_h2f(dh) * fmaf(ds.x, (float)si, ds.y);
}
// a row's 16 lanes add their sums; lane 0 of them writes row rr (the
// half-warps of a partial step shuffle too: a shuffle with lanes missing hangs)
__device__ __forceinline__ void tq_row_sum(float acc, unsigned p, unsigned rr, unsigned n, float *y)
{
#pragma unroll
    for (int off = 8; off > 0; off /= 2)
        acc += __shfl_xor(acc, off, 16);
    if (p == 0 && rr < n)
        y[rr] = acc;
}
// one lane's 144-byte piece of a row (8 q4_0 blocks or a q4_K super-block) against x's records
template <int FMT>
__device__ __forceinline__ float tq_piece(const uint4 *pc, const uint4 *xlo, const uint4 *xhi, const float2 *xds, unsigned P, unsigned p,
                                          const float2 *dsr = nullptr)
{
        {
            hkq_u32 v[36];
#pragma unroll
            for (int k = 0; k < 9; k++) {
                const uint4 u = pc[k];
                v[4 * k] = u.x, v[4 * k + 1] = u.y, v[4 * k + 2] = u.z, v[4 * k + 3] = u.w;
            }
            float acc = 0.0f;
            if (FMT == 0) { // q4_0: blocks 2m (bytes 36 m ..) and 2m + 1 (36 m + 18 ..)
#pragma unroll
                for (int m = 0; m < 4; m++) {
                    const unsigned i0 = (2 * m) * P + p, i1 = i0 + P;
                    acc += tq_q4_0(__funnelshift_r(v[9 * m], v[9 * m + 1], 16), __funnelshift_r(v[9 * m + 1], v[9 * m + 2], 16),
                                   __funnelshift_r(v[9 * m + 2], v[9 * m + 3], 16), __funnelshift_r(v[9 * m + 3], v[9 * m + 4], 16),
                                   (hkq_u16)v[9 * m], xlo[i0], xhi[i0], dsr ? dsr[2 * m] : xds[i0]);
                    acc += tq_q4_0(v[9 * m + 5], v[9 * m + 6], v[9 * m + 7], v[9 * m + 8], (hkq_u16)(v[9 * m + 4] >> 16), xlo[i1],
                                   xhi[i1], dsr ? dsr[2 * m + 1] : xds[i1]);
                }
            } else { // q4_K: d, dmin; 12 scale bytes; 4 chunks of 32 bytes (group 2c low nibbles, 2c + 1 high)
                const hkq_u32 M = 0x0F0F0F0Fu;
                float ad = 0.0f, am = 0.0f;
#pragma unroll
                for (int g = 0; g < 8; g++) {
                    const unsigned sb[12] = {v[1] & 255, (v[1] >> 8) & 255, (v[1] >> 16) & 255, v[1] >> 24,
                                             v[2] & 255, (v[2] >> 8) & 255, (v[2] >> 16) & 255, v[2] >> 24,
                                             v[3] & 255, (v[3] >> 8) & 255, (v[3] >> 16) & 255, v[3] >> 24};
                    unsigned sc, mn;
                    if (g < 4) {
                        sc = sb[g] & 63;
                        mn = sb[g + 4] & 63;
                    } else {
                        sc = (sb[g + 4] & 15) | ((sb[g - 4] >> 6) << 4);
                        mn = (sb[g + 4] >> 4) | ((sb[g] >> 6) << 4);
                    }
                    const unsigned i = g * P + p;
                    const uint4 lo = xlo[i], hi = xhi[i];
                    const float2 ds = dsr ? dsr[g] : xds[i];
                    const hkq_u32 *c = v + 4 + 8 * (g / 2);
                    const int sh = 4 * (g & 1);
                    int si = hkq_dp4a((c[0] >> sh) & M, lo.x, 0);
                    si = hkq_dp4a((c[1] >> sh) & M, lo.y, si);
                    si = hkq_dp4a((c[2] >> sh) & M, lo.z, si);
                    si = hkq_dp4a((c[3] >> sh) & M, lo.w, si);
                    si = hkq_dp4a((c[4] >> sh) & M, hi.x, si);
                    si = hkq_dp4a((c[5] >> sh) & M, hi.y, si);
                    si = hkq_dp4a((c[6] >> sh) & M, hi.z, si);
                    si = hkq_dp4a((c[7] >> sh) & M, hi.w, si);
                    ad = fmaf((float)sc * ds.x, (float)si, ad);
                    am = fmaf((float)mn, ds.y, am);
                }
                acc = rp_h2f((hkq_u16)v[0]) * ad - rp_h2f((hkq_u16)(v[0] >> 16)) * am;
            }
            return acc;
        }
}
// x (q8_1) into records: block 8 p + j at j P + p, its 32 bytes as two 16-byte halves, (d8, s) beside
// the (d, s) of x block b as the sums take it: q4_0 q8_1's own s (as ggml's vec_dot_q4_0_q8_1) times -8,
// q4_K the exact d8 sum q (as ggml's q4_K one)
template <int FMT>
__device__ __forceinline__ float2 tq_x_ds(const hkq_u8 *xb, unsigned b)
{
    const hkq_u32 *s32 = (const hkq_u32 *)(xb + 36 * b + 4);
    const float d8 = rp_h2f(*(const hkq_u16 *)(xb + 36 * b));
    if (FMT == 0)
        return make_float2(d8, -8.0f * rp_h2f(*(const hkq_u16 *)(xb + 36 * b + 2)));
    int qsum = 0;
    for (int k = 0; k < 8; k++)
        qsum = hkq_dp4a(s32[k], 0x01010101u, qsum);
    return make_float2(d8, d8 * (float)qsum);
}
template <int FMT, int DS = 1>
__device__ __forceinline__ void tq_stage_x(const void *xq, uint4 *xlo, uint4 *xhi, float2 *xds, unsigned G, unsigned P)
{
    const hkq_u8 *xb = (const hkq_u8 *)xq;
    for (unsigned b = threadIdx.x; b < G; b += blockDim.x) {
        const unsigned i = (b % 8) * P + b / 8;
        const hkq_u32 *s32 = (const hkq_u32 *)(xb + 36 * b + 4); // 4-byte aligned only
        xlo[i] = make_uint4(s32[0], s32[1], s32[2], s32[3]);
        xhi[i] = make_uint4(s32[4], s32[5], s32[6], s32[7]);
        if (DS)
            xds[i] = tq_x_ds<FMT>(xb, b);
    }
}
// MODE (diagnostics): 1 x staged before the wait (wrong where the last kernel writes x), 2 no arithmetic
// (each lane xors its piece's first word: the ring alone)
// TIM: thread 0 records when (globaltimer, clock64) its block starts, has x,
// has each stage, is done with each stage and ends (g_tim, TIM_SLOTS a block)
enum { TIM_SLOTS = 48 };
__device__ unsigned long long g_tim[1056 * TIM_SLOTS];
__device__ __forceinline__ unsigned long long tim_gt()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void tim_mark(int TIM, unsigned slot)
{
    if (TIM && threadIdx.x == 0 && slot < TIM_SLOTS)
        g_tim[blockIdx.x * TIM_SLOTS + slot] = clock64();
}
template <int FMT, int W, int NS, int MODE = 0, int TIM = 0>
__device__ __forceinline__ void tq_body(const void *w, const void *xq, float *y, int rows, int cols)
{
    if (TIM && threadIdx.x == 0)
        g_tim[blockIdx.x * TIM_SLOTS] = tim_gt();
    tim_mark(TIM, 2);
    extern __shared__ __align__(128) unsigned char tq_dyn[];
    const unsigned G = (unsigned)cols / 32, P = G / 8, RB = 144 * P, SR = 2 * W; // cols == 4096: P == 16
    unsigned char *stage = tq_dyn;
    uint4 *xlo = (uint4 *)(tq_dyn + NS * SR * RB), *xhi = xlo + G;
    float2 *xds = (float2 *)(xhi + G);
    unsigned long long *bar = (unsigned long long *)(xds + (MODE == 3 ? 0 : G)); // MODE 3: (d, s) in registers
    const unsigned r0 = (unsigned)((unsigned long long)blockIdx.x * rows / gridDim.x),
                   r1 = (unsigned)((unsigned long long)(blockIdx.x + 1) * rows / gridDim.x), n = r1 - r0,
                   steps = (n + SR - 1) / SR;
    const unsigned char *wb = (const unsigned char *)w + (unsigned long long)r0 * RB;
    if (threadIdx.x == 0) {
        for (int s = 0; s < NS; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(tq_sa(bar + s)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (unsigned s = 0; s < (MODE == 4 ? 1u : NS) && s < steps; s++)
            tq_issue(stage + s * SR * RB, wb + (unsigned long long)s * SR * RB, min(SR, n - s * SR) * RB, bar + s);
    }
    if (MODE == 1)
        tq_stage_x<FMT>(xq, xlo, xhi, xds, G, P);
    probe_wait();
    if (MODE != 1)
        tq_stage_x<FMT, MODE != 3>(xq, xlo, xhi, xds, G, P);
    if (MODE == 4 && threadIdx.x == 0) // MODE 4: one stage before the wait, the rest after x's loads
        for (unsigned s = 1; s < NS && s < steps; s++)
            tq_issue(stage + s * SR * RB, wb + (unsigned long long)s * SR * RB, min(SR, n - s * SR) * RB, bar + s);
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, p = lane % 16;
    float2 dsr[8]; // MODE 3: a lane's 8 blocks of x keep their (d, s) in registers: its piece never changes
    if (MODE == 3)
#pragma unroll
        for (int j = 0; j < 8; j++)
            dsr[j] = tq_x_ds<FMT>((const hkq_u8 *)xq, 8 * p + j);
    __syncthreads();
    tim_mark(TIM, 3);
    for (unsigned t = 0; t < steps; t++) {
        const unsigned s = t % NS;
        tq_wait(bar + s, (t / NS) & 1);
        tim_mark(TIM, 4 + 2 * t);
        const unsigned rr = t * SR + 2 * warp + lane / 16;
        float y_acc = 0.0f;
        if (rr < n && MODE == 2)
            y_acc = __uint_as_float(*(const hkq_u32 *)(stage + s * SR * RB + (2 * warp + lane / 16) * RB + 144 * p) & 0x3fffffffu);
        else if (rr < n)
            y_acc = tq_piece<FMT>((const uint4 *)(stage + s * SR * RB + (2 * warp + lane / 16) * RB + 144 * p), xlo, xhi, xds, P, p,
                                  MODE == 3 ? dsr : nullptr);
        tq_row_sum(y_acc, p, rr, n, y + r0);
        __syncthreads(); // every warp is done with stage s
        tim_mark(TIM, 5 + 2 * t);
        if (threadIdx.x == 0 && t + NS < steps)
            tq_issue(stage + s * SR * RB, wb + (unsigned long long)(t + NS) * SR * RB, min(SR, n - (t + NS) * SR) * RB, bar + s);
    }
    if (TIM && threadIdx.x == 0)
        g_tim[blockIdx.x * TIM_SLOTS + 1] = tim_gt();
}
#define TQ(NAME, FMT, W, NS, ...)                                                                               \
    extern "C" __global__ void __launch_bounds__(32 * W) NAME(const void *w, const void *xq, float *y, int rows, int cols) \
    {                                                                                                           \
        tq_body<FMT, W, NS, ##__VA_ARGS__>(w, xq, y, rows, cols);                                               \
    }
TQ(tr_8_2, 0, 8, 2, 2) TQ(tr_8_3, 0, 8, 3, 2) TQ(tr_8_4, 0, 8, 4, 2) TQ(tr_4_3, 0, 4, 3, 2) TQ(tr_16_2, 0, 16, 2, 2)
TQ(tq8e_8_3, 0, 8, 3, 1) TQ(tq8e_8_2, 0, 8, 2, 1) TQ(tq8e_4_3, 0, 4, 3, 1)
TQ(tq8_12_3, 0, 12, 3) TQ(tk8_12_3, 1, 12, 3) TQ(tq8x_8_3, 0, 8, 3, 4) TQ(tk8x_8_3, 1, 8, 3, 4) TQ(tq8x_8_4, 0, 8, 4, 4)
TQ(tqr_8_3, 0, 8, 3, 3) TQ(tqr_4_3, 0, 4, 3, 3) TQ(tqr_8_2, 0, 8, 2, 3) TQ(tkr_8_3, 1, 8, 3, 3) TQ(tkr_4_3, 1, 4, 3, 3)
TQ(tq8_8_4, 0, 8, 4) TQ(tq8_8_3, 0, 8, 3) TQ(tq8_8_2, 0, 8, 2) TQ(tq8_16_2, 0, 16, 2) TQ(tq8_4_4, 0, 4, 4) TQ(tq8_4_3, 0, 4, 3)
TQ(tk8_8_4, 1, 8, 4) TQ(tk8_8_3, 1, 8, 3) TQ(tk8_4_4, 1, 4, 4) TQ(tk8_16_2, 1, 16, 2)
TQ(tqt_8_3, 0, 8, 3, 0, 1) TQ(tkt_8_3, 1, 8, 3, 0, 1) TQ(trt_8_3, 0, 8, 3, 2, 1) TQ(tqt_4_3, 0, 4, 3, 0, 1)

// tp: the tq sums with a producer warp (warp W) and a full and an empty
// mbarrier a stage: a compute warp waits for its stage's bytes, sums, and
// its lane 0 arrives on the stage's empty barrier (W arrivals free it); the
// producer waits for that and refills. No block barrier in the loop, so a
// warp done early goes on to the next stage instead of waiting for the
// slowest of the block.
template <int FMT, int W, int NS, int TIM = 0>
__device__ __forceinline__ void tp_body(const void *w, const void *xq, float *y, int rows, int cols)
{
    extern __shared__ __align__(128) unsigned char tq_dyn[];
    if (TIM && threadIdx.x == 0)
        g_tim[blockIdx.x * TIM_SLOTS] = tim_gt();
    tim_mark(TIM, 2);
    const unsigned G = (unsigned)cols / 32, P = G / 8, RB = 144 * P, SR = 2 * W;
    unsigned char *stage = tq_dyn;
    uint4 *xlo = (uint4 *)(tq_dyn + NS * SR * RB), *xhi = xlo + G;
    float2 *xds = (float2 *)(xhi + G);
    unsigned long long *full = (unsigned long long *)(xds + G), *empty = full + NS;
    const unsigned r0 = (unsigned)((unsigned long long)blockIdx.x * rows / gridDim.x),
                   r1 = (unsigned)((unsigned long long)(blockIdx.x + 1) * rows / gridDim.x), n = r1 - r0,
                   steps = (n + SR - 1) / SR;
    const unsigned char *wb = (const unsigned char *)w + (unsigned long long)r0 * RB;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, p = lane % 16;
    if (threadIdx.x == 32 * W) {
        for (int s = 0; s < NS; s++) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(tq_sa(full + s)) : "memory");
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(tq_sa(empty + s)), "r"(W) : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (unsigned s = 0; s < NS && s < steps; s++)
            tq_issue(stage + s * SR * RB, wb + (unsigned long long)s * SR * RB, min(SR, n - s * SR) * RB, full + s);
    }
    probe_wait();
    tq_stage_x<FMT>(xq, xlo, xhi, xds, G, P);
    __syncthreads();
    tim_mark(TIM, 3);
    if (warp == W) { // the producer
        if (lane == 0)
            for (unsigned t = NS; t < steps; t++) {
                const unsigned s = t % NS;
                tq_wait(empty + s, ((t / NS) - 1) & 1);
                tq_issue(stage + s * SR * RB, wb + (unsigned long long)t * SR * RB, min(SR, n - t * SR) * RB, full + s);
            }
        return;
    }
    for (unsigned t = 0; t < steps; t++) {
        const unsigned s = t % NS;
        tq_wait(full + s, (t / NS) & 1);
        tim_mark(TIM, 4 + 2 * t);
        const unsigned rr = t * SR + 2 * warp + lane / 16;
        float y_acc = 0.0f;
        if (rr < n)
            y_acc = tq_piece<FMT>((const uint4 *)(stage + s * SR * RB + (2 * warp + lane / 16) * RB + 144 * p), xlo, xhi, xds, P, p);
        tq_row_sum(y_acc, p, rr, n, y + r0);
        __syncwarp();
        if (lane == 0)
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(tq_sa(empty + s)) : "memory");
        tim_mark(TIM, 5 + 2 * t);
    }
    if (TIM && threadIdx.x == 0)
        g_tim[blockIdx.x * TIM_SLOTS + 1] = tim_gt();
}
#define TP(NAME, FMT, W, NS, ...)                                                                               \
    extern "C" __global__ void __launch_bounds__(32 * W + 32) NAME(const void *w, const void *xq, float *y, int rows, int cols) \
    {                                                                                                           \
        tp_body<FMT, W, NS, ##__VA_ARGS__>(w, xq, y, rows, cols);                                               \
    }
TP(tp_8_3, 0, 8, 3) TP(tp_8_4, 0, 8, 4) TP(tpk_8_3, 1, 8, 3) TP(tpk_8_4, 1, 8, 4) TP(tpt_8_3, 0, 8, 3, 1) TP(tp_4_4, 0, 4, 4)
TP(tp_4_6, 0, 4, 6) TP(tpk_4_6, 1, 4, 6)

// tw: the same sums with a ring a warp (NS slots of 2 rows each), so that a
// warp starts as soon as its own rows land and refills its slot as soon as
// it is done, with no CTA-wide barrier in the loop
template <int FMT, int W, int NS>
__device__ __forceinline__ void tw_body(const void *w, const void *xq, float *y, int rows, int cols)
{
    extern __shared__ __align__(128) unsigned char tq_dyn[];
    const unsigned G = (unsigned)cols / 32, P = G / 8, RB = 144 * P, UB = 2 * RB; // cols == 4096: P == 16
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, p = lane % 16;
    unsigned char *slot = tq_dyn + warp * NS * UB;
    uint4 *xlo = (uint4 *)(tq_dyn + W * NS * UB), *xhi = xlo + G;
    float2 *xds = (float2 *)(xhi + G);
    unsigned long long *bar = (unsigned long long *)(xds + G) + warp * NS;
    const unsigned r0 = (unsigned)((unsigned long long)blockIdx.x * rows / gridDim.x),
                   r1 = (unsigned)((unsigned long long)(blockIdx.x + 1) * rows / gridDim.x), n = r1 - r0,
                   nu = (n + 1) / 2;
    const unsigned char *wb = (const unsigned char *)w + (unsigned long long)r0 * RB;
    if (lane == 0) {
        for (int s = 0; s < NS; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(tq_sa(bar + s)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (unsigned s = 0; s < NS; s++) {
            const unsigned u = warp + s * W;
            if (u < nu)
                tq_issue(slot + s * UB, wb + (unsigned long long)u * UB, min(2u, n - 2 * u) * RB, bar + s);
        }
    }
    probe_wait();
    tq_stage_x<FMT>(xq, xlo, xhi, xds, G, P);
    __syncthreads();
    for (unsigned k = 0, u = warp; u < nu; k++, u += W) {
        const unsigned s = k % NS;
        tq_wait(bar + s, (k / NS) & 1);
        const unsigned rr = 2 * u + lane / 16;
        float y_acc = 0.0f;
        if (rr < n)
            y_acc = tq_piece<FMT>((const uint4 *)(slot + s * UB + (lane / 16) * RB + 144 * p), xlo, xhi, xds, P, p);
        tq_row_sum(y_acc, p, rr, n, y + r0);
        __syncwarp(); // every lane is done with the slot
        const unsigned un = u + NS * W;
        if (lane == 0 && un < nu)
            tq_issue(slot + s * UB, wb + (unsigned long long)un * UB, min(2u, n - 2 * un) * RB, bar + s);
    }
}
#define TW(NAME, FMT, W, NS)                                                                                    \
    extern "C" __global__ void __launch_bounds__(32 * W) NAME(const void *w, const void *xq, float *y, int rows, int cols) \
    {                                                                                                           \
        tw_body<FMT, W, NS>(w, xq, y, rows, cols);                                                              \
    }
TW(tw8_8_2, 0, 8, 2) TW(tw8_8_3, 0, 8, 3) TW(tw8_8_4, 0, 8, 4) TW(tw8_12_3, 0, 12, 3) TW(tw8_16_2, 0, 16, 2) TW(tw8_16_3, 0, 16, 3)
TW(twk_8_3, 1, 8, 3) TW(twk_8_4, 1, 8, 4) TW(twk_12_3, 1, 12, 3) TW(twk_16_2, 1, 16, 2) TW(twk_16_3, 1, 16, 3)

// hr: a copy of the op's streamed kernel (quantized.hip, hkq_ring_matvec)
// with thread 0's timeline (TIM) and variants (V bits) to find what it
// loses against tq: 1 no general-path check, 2 P and L fixed at 16 (4096
// columns)

// x's records for hr_piece: from shared memory (record j P + p) or from a
// lane's registers (its own piece's 8 records, loaded once a block)
struct hr_xs {
    const uint4 *lo, *hi;
    const float2 *ds;
    unsigned P, p;
    __device__ uint4 l(int j) const { return lo[j * P + p]; }
    __device__ uint4 h(int j) const { return hi[j * P + p]; }
    __device__ float2 d(int j) const { return ds[j * P + p]; }
};
struct hr_xr {
    uint4 lo[8], hi[8];
    float2 ds[8];
    __device__ uint4 l(int j) const { return lo[j]; }
    __device__ uint4 h(int j) const { return hi[j]; }
    __device__ float2 d(int j) const { return ds[j]; }
};
template <int F, class X>
__device__ __forceinline__ float hr_piece(const uint4 *pc, const X &x)
{
    enum { WORDS = hkq_ring_fmt<F>::PIECE / 4 };
    hkq_u32 v[WORDS];
#pragma unroll
    for (int k = 0; k < WORDS / 4; k++) {
        const uint4 u = pc[k];
        v[4 * k] = u.x, v[4 * k + 1] = u.y, v[4 * k + 2] = u.z, v[4 * k + 3] = u.w;
    }
    float acc = 0.0f;
    if (F == HKQ_Q4_0) {
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int m = j / 2, o = 9 * m + (j & 1 ? 5 : 1);
            hkq_u32 q[4];
#pragma unroll
            for (int k = 0; k < 4; k++)
                q[k] = j & 1 ? v[o + k] : __funnelshift_r(v[o - 1 + k], v[o + k], 16);
            const hkq_u16 dh = (hkq_u16)(j & 1 ? v[9 * m + 4] >> 16 : v[9 * m]);
            const uint4 lo = x.l(j), hi = x.h(j);
            const hkq_u32 l4[4] = {lo.x, lo.y, lo.z, lo.w}, h4[4] = {hi.x, hi.y, hi.z, hi.w};
            const float2 ds = x.d(j);
            acc += ds.x * (hkq_h2f_bits(dh) * (float)hkq_q4_0_dot8(q, l4, h4, __float_as_int(ds.y)));
        }
    } else { // q4_K
        const float d = hkq_h2f_bits((hkq_u16)v[0]), dmin = hkq_h2f_bits((hkq_u16)(v[0] >> 16));
#pragma unroll
        for (int g = 0; g < 8; g++) {
            int sc, mn;
            if (g < 4) {
                sc = (int)(hkq_ring_byte(v + 1, g) & 63);
                mn = (int)(hkq_ring_byte(v + 1, g + 4) & 63);
            } else {
                const unsigned h = hkq_ring_byte(v + 1, g + 4);
                sc = (int)((h & 15) | ((hkq_ring_byte(v + 1, g - 4) >> 6) << 4));
                mn = (int)((h >> 4) | ((hkq_ring_byte(v + 1, g) >> 6) << 4));
            }
            const unsigned sft = 4 * (g & 1);
            const uint4 lo = x.l(g), hi = x.h(g);
            const hkq_u32 *c = v + 4 + 8 * (g / 2), x8[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
            int dot = 0;
#pragma unroll
            for (int k = 0; k < 8; k++)
                dot = hkq_dp4a((c[k] >> sft) & 0x0F0F0F0Fu, x8[k], dot);
            const float2 ds = x.d(g);
            acc += ds.x * (d * (float)sc * (float)dot - dmin * (float)mn * (float)__float_as_int(ds.y));
        }
    }
    return acc;
}
__device__ __forceinline__ void hr_prefetch(const void *src, unsigned bytes)
{
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}
// PF: stages past the ring also asked of L2 (cp.async.bulk.prefetch.L2), a
// rolling window of PF stages ahead of the ring's last, so that HBM stays
// busy while the block waits for x and sums its first stages
template <int F, int TIM, int V, int PF = 0>
__device__ __forceinline__ void hr_body(const void *w, const void *xq, float *y, int rows, int cols, int stages)
{
    extern __shared__ uint4 hkq_ring_dyn[];
    if (TIM && threadIdx.x == 0)
        g_tim[blockIdx.x * TIM_SLOTS] = tim_gt();
    tim_mark(TIM, 2);
    const unsigned G = (V & 2) ? 128u : (unsigned)cols / 32, P = G / 8, RB = hkq_ring_fmt<F>::PIECE * P;
    unsigned L = 1;
    if (V & 2)
        L = 16;
    else
        while (L < P && L < (unsigned)HKQ_WARP)
            L *= 2;
    const unsigned SR = blockDim.x / L;
    const unsigned NS = (unsigned)stages;
    if (!(V & 1)) {
        bool fits = cols % 256 == 0;
        unsigned granted;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(granted));
        fits = fits && (unsigned long long)NS * SR * RB + 40ull * G + 8ull * NS <= granted;
        if (!fits) {
            hkq_ring_general<F>(w, xq, y, rows, cols);
            return;
        }
    }
    unsigned char *ring = (unsigned char *)hkq_ring_dyn;
    uint4 *xlo = (uint4 *)(ring + (size_t)NS * SR * RB), *xhi = xlo + G;
    float2 *xds = (float2 *)(xhi + G);
    unsigned long long *bar = (unsigned long long *)(xds + G);
    const unsigned r0 = (unsigned)((unsigned long long)blockIdx.x * (unsigned)rows / gridDim.x),
                   r1 = (unsigned)((unsigned long long)(blockIdx.x + 1) * (unsigned)rows / gridDim.x), n = r1 - r0,
                   steps = (n + SR - 1) / SR;
    const hkq_u8 *wb = (const hkq_u8 *)w + (size_t)r0 * RB;
    if (threadIdx.x == 0) {
        for (unsigned s = 0; s < NS; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(hkq_ring_sa(bar + s)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (unsigned s = 0; s < ((V & 16) ? 1u : NS) && s < steps; s++)
            hkq_ring_issue(ring + (size_t)s * SR * RB, wb + (size_t)s * SR * RB, min(SR, n - s * SR) * RB, bar + s);
        for (unsigned s = NS; s < NS + PF && s < steps; s++)
            hr_prefetch(wb + (size_t)s * SR * RB, min(SR, n - s * SR) * RB);
    }
    hk_grid_wait();
    const hkq_u8 *xb = (const hkq_u8 *)xq;
    for (unsigned b = threadIdx.x; b < G; b += blockDim.x) {
        const hkq_u8 *xr = xb + 36 * b;
        const unsigned i = (b % 8) * P + b / 8;
        xlo[i] = make_uint4(hkq_x8w(xr, 0), hkq_x8w(xr, 1), hkq_x8w(xr, 2), hkq_x8w(xr, 3));
        xhi[i] = make_uint4(hkq_x8w(xr, 4), hkq_x8w(xr, 5), hkq_x8w(xr, 6), hkq_x8w(xr, 7));
        xds[i] = make_float2(hkq_h2f(xr), __int_as_float(hkq_x8sum(xr, 0) + hkq_x8sum(xr, 1)));
    }
    if ((V & 16) && threadIdx.x == 0) // 16: the later stages after x's loads
        for (unsigned s = 1; s < NS && s < steps; s++)
            hkq_ring_issue(ring + (size_t)s * SR * RB, wb + (size_t)s * SR * RB, min(SR, n - s * SR) * RB, bar + s);
    __syncthreads();
    tim_mark(TIM, 3);
    const unsigned ri = threadIdx.x / L, lp = threadIdx.x % L;
    hr_xr xr;
    if (V & 4)
#pragma unroll
        for (int j = 0; j < 8; j++)
            xr.lo[j] = xlo[j * P + lp], xr.hi[j] = xhi[j * P + lp], xr.ds[j] = xds[j * P + lp];
    for (unsigned t = 0; t < steps; t++) {
        const unsigned s = t % NS, rows_t = min(SR, n - t * SR);
        unsigned char *st = ring + (size_t)s * SR * RB;
        hkq_ring_wait(bar + s, (t / NS) & 1);
        tim_mark(TIM, 4 + 2 * t);
        float acc = 0.0f;
        if (ri < rows_t) {
            if (V & 4)
                acc = hr_piece<F>((const uint4 *)(st + ri * RB + hkq_ring_fmt<F>::PIECE * lp), xr);
            else if (V & 8)
                acc = hr_piece<F>((const uint4 *)(st + ri * RB + hkq_ring_fmt<F>::PIECE * lp), hr_xs{xlo, xhi, xds, P, lp});
            else if (V & 2)
                acc = hkq_ring_piece<F>((const hkq_u8 *)(st + ri * RB + hkq_ring_fmt<F>::PIECE * lp), hkq_ring_xs{xlo, xhi, xds, P, lp});
            else
                for (unsigned p = lp; p < P; p += L)
                    acc += hkq_ring_piece<F>((const hkq_u8 *)(st + ri * RB + hkq_ring_fmt<F>::PIECE * p), hkq_ring_xs{xlo, xhi, xds, P, p});
        }
        for (unsigned off = L / 2; off > 0; off /= 2)
            acc += __shfl_xor(acc, (int)off);
        if (lp == 0 && ri < rows_t)
            y[r0 + t * SR + ri] = acc;
        __syncthreads();
        tim_mark(TIM, 5 + 2 * t);
        if (threadIdx.x == 0 && t + NS < steps)
            hkq_ring_issue(st, wb + (size_t)(t + NS) * SR * RB, min(SR, n - (t + NS) * SR) * RB, bar + s);
        if (PF && threadIdx.x == 0 && t + NS + PF < steps)
            hr_prefetch(wb + (size_t)(t + NS + PF) * SR * RB, min(SR, n - (t + NS + PF) * SR) * RB);
    }
    if (TIM && threadIdx.x == 0)
        g_tim[blockIdx.x * TIM_SLOTS + 1] = tim_gt();
}
#define HR(NAME, F, TIM, V, ...)                                                                                \
    extern "C" __global__ void NAME(const void *w, const void *xq, float *y, int rows, int cols, int stages)   \
    {                                                                                                           \
        hr_body<F, TIM, V, ##__VA_ARGS__>(w, xq, y, rows, cols, stages);                                        \
    }
HR(hr0, HKQ_Q4_0, 0, 0) HR(hrt0, HKQ_Q4_0, 1, 0) HR(hr1, HKQ_Q4_0, 0, 1) HR(hr3, HKQ_Q4_0, 0, 3) HR(hrt3, HKQ_Q4_0, 1, 3)
HR(hrk0, HKQ_Q4_K, 0, 0) HR(hrk3, HKQ_Q4_K, 0, 3)
HR(hr7, HKQ_Q4_0, 0, 7) HR(hrt7, HKQ_Q4_0, 1, 7) HR(hrk7, HKQ_Q4_K, 0, 7) HR(hrkt7, HKQ_Q4_K, 1, 7) HR(hrb, HKQ_Q4_0, 0, 11)
HR(hrkb, HKQ_Q4_K, 0, 11) HR(hrx7, HKQ_Q4_0, 0, 23) HR(hrxt7, HKQ_Q4_0, 1, 23) HR(hrkx7, HKQ_Q4_K, 0, 23)
HR(hp1, HKQ_Q4_0, 0, 7, 1) HR(hp2, HKQ_Q4_0, 0, 7, 2) HR(hp3, HKQ_Q4_0, 0, 7, 3) HR(hp9, HKQ_Q4_0, 0, 7, 9)
HR(hpt2, HKQ_Q4_0, 1, 7, 2) HR(hpt9, HKQ_Q4_0, 1, 7, 9) HR(hpk2, HKQ_Q4_K, 0, 7, 2) HR(hpk9, HKQ_Q4_K, 0, 7, 9)
HR(hpx2, HKQ_Q4_0, 0, 23, 2) HR(hpb2, HKQ_Q4_0, 0, 3, 2) HR(hpbk2, HKQ_Q4_K, 0, 3, 2)

// hq: a copy of the op's streamed kernel as it is now (x in registers) with
// variants: 1 the bulk-copy loop only (no branch to the block's own copies),
// 2 no loop over a lane's further pieces, 4 L fixed at 16 (4096 columns)
template <int F, int V>
__device__ __forceinline__ void hq_body(const void *w, const void *xq, float *y, int rows, int cols, int stages)
{
    extern __shared__ uint4 hkq_ring_dyn[];
    if (rows <= 0 || cols <= 0)
        return;
    const unsigned G = (unsigned)cols / 32, P = G / 8, RB = hkq_ring_fmt<F>::PIECE * P;
    unsigned L = 1;
    while (L < P && L < (unsigned)HKQ_WARP)
        L *= 2;
    if (blockDim.x % HKQ_WARP) // a block of part of a warp: a thread a row, no shuffles
        L = 1;
    if (V & 4)
        L = 16;
    const unsigned SR = blockDim.x / L;
    // bulk copies and 16-byte stage copies need 16-byte rows (q6_K: P a multiple of 8)
    const bool a16 = ((unsigned long long)w % 16) == 0 && RB % 16 == 0;
    const bool tma = HKQ_RING_TMA && a16;
    const unsigned NS = tma && stages > 1 ? (unsigned)stages : 1;
    bool fits = cols % 256 == 0;
#if defined(__CUDA_ARCH__)
    unsigned granted;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(granted));
    fits = fits && ((unsigned long long)NS * SR * RB + 15) / 16 * 16 + 40ull * G + 8ull * NS <= granted;
#endif
    if (!fits) {
        hkq_ring_general<F>(w, xq, y, rows, cols);
        return;
    }
    unsigned char *ring = (unsigned char *)hkq_ring_dyn;
    uint4 *xlo = (uint4 *)(ring + ((size_t)NS * SR * RB + 15) / 16 * 16), *xhi = xlo + G;
    float2 *xds = (float2 *)(xhi + G); // (d8, the sum of the 32 values as int bits)
    unsigned long long *bar = (unsigned long long *)(xds + G);
    const unsigned r0 = (unsigned)((unsigned long long)blockIdx.x * (unsigned)rows / gridDim.x),
                   r1 = (unsigned)((unsigned long long)(blockIdx.x + 1) * (unsigned)rows / gridDim.x), n = r1 - r0,
                   steps = (n + SR - 1) / SR;
    const hkq_u8 *wb = (const hkq_u8 *)w + (size_t)r0 * RB;
#if HKQ_RING_TMA
    if (tma && threadIdx.x == 0) {
        for (unsigned s = 0; s < NS; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(hkq_ring_sa(bar + s)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (unsigned s = 0; s < NS && s < steps; s++)
            hkq_ring_issue(ring + (size_t)s * SR * RB, wb + (size_t)s * SR * RB, min(SR, n - s * SR) * RB, bar + s);
    }
#else
    (void)bar;
#endif
    hk_grid_wait(); // launched early (the op does): only w was read before
    const hkq_u8 *xb = (const hkq_u8 *)xq;
    for (unsigned b = threadIdx.x; b < G; b += blockDim.x) {
        const hkq_u8 *xr = xb + 36 * b;
        const unsigned i = (b % 8) * P + b / 8;
        xlo[i] = make_uint4(hkq_x8w(xr, 0), hkq_x8w(xr, 1), hkq_x8w(xr, 2), hkq_x8w(xr, 3));
        xhi[i] = make_uint4(hkq_x8w(xr, 4), hkq_x8w(xr, 5), hkq_x8w(xr, 6), hkq_x8w(xr, 7));
        xds[i] = make_float2(hkq_h2f(xr), __int_as_float(hkq_x8sum(xr, 0) + hkq_x8sum(xr, 1)));
    }
    __syncthreads();
    const unsigned ri = threadIdx.x / L, lp = threadIdx.x % L;
    // a lane's first piece (p = lp, the same in every row): its x records in
    // registers; further pieces (rows of more than L pieces) read shared memory
    hkq_ring_xr xr;
    if (lp < P) {
        const hkq_ring_xs xs{xlo, xhi, xds, P, lp};
#pragma unroll
        for (int j = 0; j < 8; j++) {
            xr.lo[j] = xs.l(j), xr.hi[j] = xs.h(j), xr.ds[j] = xs.d(j);
            xr.s[j][0] = xs.s16(j, 0), xr.s[j][1] = xs.s16(j, 1); // q6_K's only
        }
    }
    for (unsigned t = 0; t < steps; t++) {
        const unsigned s = t % NS, rows_t = min(SR, n - t * SR);
        unsigned char *st = ring + (size_t)s * SR * RB;
        if ((V & 1) || tma)
            hkq_ring_wait(bar + s, (t / NS) & 1);
        else
        {
            const hkq_u8 *src = wb + (size_t)t * SR * RB;
            if (a16)
                for (unsigned u = threadIdx.x; u < rows_t * RB / 16; u += blockDim.x)
                    ((uint4 *)st)[u] = ((const uint4 *)src)[u];
            else // a view 2 bytes into a buffer, q6_K's rows of 210 P bytes: 2-byte aligned
                for (unsigned u = threadIdx.x; u < rows_t * RB / 2; u += blockDim.x)
                    ((hkq_u16 *)st)[u] = hkq_ld16(src + 2 * u);
            __syncthreads();
        }
        float acc = 0.0f;
        const hkq_u8 *row = st + ri * RB;
        if (ri < rows_t && lp < P) {
            acc = hkq_ring_piece<F>(row + hkq_ring_fmt<F>::PIECE * lp, xr);
            if (!(V & 2))
            for (unsigned p = lp + L; p < P; p += L)
                acc += hkq_ring_piece<F>(row + hkq_ring_fmt<F>::PIECE * p, hkq_ring_xs{xlo, xhi, xds, P, p});
        }
        if (V & 4) {
#pragma unroll
            for (int off = 8; off > 0; off /= 2)
                acc += __shfl_xor(acc, off);
        } else
        for (unsigned off = L / 2; off > 0; off /= 2) // every lane, rows past the end too: whole warps
            acc += __shfl_xor(acc, (int)off);
        if (lp == 0 && ri < rows_t)
            y[r0 + t * SR + ri] = acc;
        __syncthreads(); // the block is done with stage s
#if HKQ_RING_TMA
        if (tma && threadIdx.x == 0 && t + NS < steps)
            hkq_ring_issue(st, wb + (size_t)(t + NS) * SR * RB, min(SR, n - (t + NS) * SR) * RB, bar + s);
#endif
    }
}
#define HQ(NAME, F, V)                                                                                          \
    extern "C" __global__ void NAME(const void *w, const void *xq, float *y, int rows, int cols, int stages)   \
    {                                                                                                           \
        hq_body<F, V>(w, xq, y, rows, cols, stages);                                                            \
    }
HQ(hq0, HKQ_Q4_0, 0) HQ(hq1, HKQ_Q4_0, 1) HQ(hq3, HKQ_Q4_0, 3) HQ(hq7, HKQ_Q4_0, 7) HQ(hqk1, HKQ_Q4_K, 1) HQ(hqk7, HKQ_Q4_K, 7)
