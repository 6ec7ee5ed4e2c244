// gemm: C = alpha * A * B + beta * C for one matrix or a strided batch,
// C row-major, A and B addressed through strides (so transposes and either
// layout are the plugin's business, plugins/gemm/gemm.c):
//
//   A(i, p) = a[z * bsa + i * sam + p * sak]   i < m, p < k
//   B(p, j) = b[z * bsb + p * sbk + j * sbn]   j < n
//   C(i, j) = c[z * bsc + i * ldc + j]         z = blockIdx.z, the batch
//
//   gemm_<in>_<out>(a, b, c, m, n, k, sam, sak, sbk, sbn, ldc, bsa, bsb, bsc,
//                   alpha, beta)              a 128 x 256 tile per block for
//                                             f16/bf16 inputs, 128 x 128 else
//   gemm64_<in>_<out>(...)                    a 64 x 64 tile per block
//
// Every kernel runs 256 threads a block, grid {ceil(n / BN), ceil(m / BM),
// batch}. Accumulation is in f32 (f64 for f64); beta == 0 never reads C
// (BLAS's rule: C may hold NaN then). Which code runs is the compiler's
// choice of target, not the launch's:
//
// - NVIDIA sm_80 and later, f16/bf16 inputs: tensor cores through inline
//   PTX mma.sync.m16n8k16 (f32 accumulators), tiles fed by cp.async 16-byte
//   copies and read with ldmatrix (hkg_mma below);
// - AMD gfx908 / gfx90a / gfx94x, f16/bf16/f32 inputs: MFMA 32x32 instructions
//   (v_mfma_f32_32x32x8f16, ..x4bf16 / ..x8bf16_1k, ..x2f32), fed by the
//   tiled path's shared-memory tiles (hkg_mfma);
// - everything else (the CPU backend, gfx1030, NVIDIA f32 and f64, any f64):
//   a SIMT tile, each thread an (BM / 16) x (BN / 16) block of C from
//   shared memory (hkg_simt). f32 never goes through TF32: the peer
//   (PyTorch with TF32 off) is full f32.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HKG_MMA 1
#endif
#if defined(HKG_MMA) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HKG_WGMMA 1 // sm_90a: Hopper's wgmma (hkg_wgmma)
#endif
#if defined(__gfx908__) || defined(__gfx90a__)
#define HKG_MFMA 1
#endif
// gfx94x (CDNA3, MI300) has the same 32x32 MFMA instructions, bf16 in
// gfx90a's k = 8 form
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define HKG_MFMA 1
#define HKG_BF16_1K 1
#endif
#if defined(__gfx90a__)
#define HKG_BF16_1K 1
#endif

// Storage type <-> accumulation type.
__device__ inline float hkg_up(__half x) { return __half2float(x); }
__device__ inline float hkg_up(__hip_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float hkg_up(float x) { return x; }
__device__ inline double hkg_up(double x) { return x; }
__device__ inline void hkg_down(__half *p, float v) { *p = __float2half(v); }
__device__ inline void hkg_down(__hip_bfloat16 *p, float v) { *p = __float2bfloat16(v); }
__device__ inline void hkg_down(float *p, float v) { *p = v; }
__device__ inline void hkg_down(double *p, double v) { *p = v; }

template <typename T> struct hkg_acc { typedef float A; };
template <> struct hkg_acc<double> { typedef double A; };
// hkg_cv<TS>: an input element as what shared memory holds (its own type
// or the accumulation type), and TS's zero.
template <typename TS> struct hkg_cv {
    template <typename X> __device__ static TS f(X x) { return (TS)hkg_up(x); }
    __device__ static TS zero() { return (TS)0; }
};
template <> struct hkg_cv<__half> {
    __device__ static __half f(__half x) { return x; }
    __device__ static __half zero() { return __float2half(0.0f); }
};
template <> struct hkg_cv<__hip_bfloat16> {
    __device__ static __hip_bfloat16 f(__hip_bfloat16 x) { return x; }
    __device__ static __hip_bfloat16 zero() { return __float2bfloat16(0.0f); }
};
template <typename T> struct hkg_half { static const bool v = false; };
template <> struct hkg_half<__half> { static const bool v = true; };
template <> struct hkg_half<__hip_bfloat16> { static const bool v = true; };

// C(i, j) = alpha * acc + beta * C(i, j), inside the matrix only.
template <typename TC, typename S, typename A>
__device__ inline void hkg_store(TC *c, long long ldc, int m, int n, int i, int j, A acc, S alpha, S beta)
{
    if (i >= m || j >= n)
        return;
    TC *p = c + (long long)i * ldc + j;
    A v = (A)alpha * acc;
    if (beta != (S)0)
        v += (A)beta * (A)hkg_up(*p);
    hkg_down(p, v);
}

template <typename TC, int N> struct __align__(N * sizeof(TC)) hkg_pack { TC v[N]; };

// C(i, j .. j + N - 1) from acc[0 .. N - 1]: one N-wide store where the
// run lies inside the matrix and is aligned to it (a warp's stores then
// cover whole sectors), else element by element.
template <int N, typename TC, typename S, typename A>
__device__ inline void hkg_store_run(TC *c, long long ldc, int m, int n, int i, int j, const A *acc, S alpha,
                                     S beta)
{
    TC *p = c + (long long)i * ldc + j;
    if (i < m && j + N <= n && ((unsigned long long)p % (N * sizeof(TC))) == 0) {
        hkg_pack<TC, N> o;
        if (beta != (S)0)
            o = *(const hkg_pack<TC, N> *)p;
#pragma unroll
        for (int e = 0; e < N; e++) {
            A v = (A)alpha * acc[e];
            if (beta != (S)0)
                v += (A)beta * (A)hkg_up(o.v[e]);
            hkg_down(&o.v[e], v);
        }
        *(hkg_pack<TC, N> *)p = o;
        return;
    }
#pragma unroll
    for (int e = 0; e < N; e++)
        hkg_store(c, ldc, m, n, i, j + e, acc[e], alpha, beta);
}

// ---------------------------------------------------------------------------
// The tiled path: BK = 8 deep tiles of A (as [k][m]) and B (as [k][n]) in
// shared memory, two buffers, the next tile read into registers while the
// current one is used. Loads run along whichever of A's (B's) dimensions
// has unit stride, so a warp reads consecutive addresses in either layout;
// elements outside the matrix read as zero. TS is what shared memory holds:
// the accumulation type for the SIMT product, the input type for MFMA.

#define HKG_THREADS 256
#define HKG_BK 8

template <typename TA, typename TS, int BM, int BN> struct hkg_tiles {
    static const int EA = BM * HKG_BK / HKG_THREADS, EB = BN * HKG_BK / HKG_THREADS;
    static const int LA = BM + 4, LB = BN + 4; // padded rows: fewer bank conflicts on stores
    TS ra[EA], rb[EB];

    // E elements from src on, step apart (a run of unit stride: one E-wide
    // load when it lies inside the matrix and is aligned), or zero where
    // in(e) says element e is outside.
    template <int E, typename In>
    __device__ static void run(TS *dst, const TA *src, long long step, bool whole, In in)
    {
        if (step == 1 && whole && ((unsigned long long)src % (E * sizeof(TA))) == 0) {
            hkg_pack<TA, E> v = *(const hkg_pack<TA, E> *)src;
#pragma unroll
            for (int e = 0; e < E; e++)
                dst[e] = hkg_cv<TS>::f(v.v[e]);
            return;
        }
#pragma unroll
        for (int e = 0; e < E; e++)
            dst[e] = in(e) ? hkg_cv<TS>::f(src[e * step]) : hkg_cv<TS>::zero();
    }

    // Tile kt of A and B into registers: each thread a run of EA (EB)
    // elements along the unit-stride dimension.
    __device__ void fetch(const TA *a, const TA *b, int m, int n, int k, long long sam, long long sak,
                          long long sbk, long long sbn, int i0, int j0, int kt)
    {
        const int t = threadIdx.x, k0 = kt * HKG_BK;
        if (sam == 1) {
            const int i = i0 + (t % (BM / EA)) * EA, kk = k0 + t / (BM / EA);
            run<EA>(ra, a + (long long)kk * sak + i, 1, kk < k && i + EA <= m,
                    [&](int e) { return kk < k && i + e < m; });
        } else {
            const int i = i0 + t / (HKG_BK / EA), kk = k0 + (t % (HKG_BK / EA)) * EA;
            run<EA>(ra, a + (long long)i * sam + (long long)kk * sak, sak, i < m && kk + EA <= k,
                    [&](int e) { return i < m && kk + e < k; });
        }
        if (sbn == 1) {
            const int j = j0 + (t % (BN / EB)) * EB, kk = k0 + t / (BN / EB);
            run<EB>(rb, b + (long long)kk * sbk + j, 1, kk < k && j + EB <= n,
                    [&](int e) { return kk < k && j + e < n; });
        } else {
            const int j = j0 + t / (HKG_BK / EB), kk = k0 + (t % (HKG_BK / EB)) * EB;
            run<EB>(rb, b + (long long)kk * sbk + (long long)j * sbn, sbk, j < n && kk + EB <= k,
                    [&](int e) { return j < n && kk + e < k; });
        }
    }

    // The registers into shared tiles sa [HKG_BK][LA], sb [HKG_BK][LB].
    __device__ void put(TS *sa, TS *sb, long long sam, long long sbn) const
    {
        const int t = threadIdx.x;
#pragma unroll
        for (int q = 0; q < EA; q++) {
            if (sam == 1) sa[(t / (BM / EA)) * LA + (t % (BM / EA)) * EA + q] = ra[q];
            else sa[((t % (HKG_BK / EA)) * EA + q) * LA + t / (HKG_BK / EA)] = ra[q];
        }
#pragma unroll
        for (int q = 0; q < EB; q++) {
            if (sbn == 1) sb[(t / (BN / EB)) * LB + (t % (BN / EB)) * EB + q] = rb[q];
            else sb[((t % (HKG_BK / EB)) * EB + q) * LB + t / (HKG_BK / EB)] = rb[q];
        }
    }
};

// The SIMT product: thread (tx, ty) of a 16 x 16 grid owns rows
// g * BM / G + 4 ty + {0..3} and columns g * BN / G + 4 tx + {0..3}, G =
// BM / 64 groups, so each k step reads its A and B values four at a time.
template <typename A, int BM, int BN> struct hkg_simt {
    static const int TM = BM / 16, TN = BN / 16, GM = TM / 4, GN = TN / 4;
    A acc[TM][TN];

    __device__ void zero()
    {
#pragma unroll
        for (int x = 0; x < TM; x++)
#pragma unroll
            for (int y = 0; y < TN; y++)
                acc[x][y] = (A)0;
    }

    template <typename TS> __device__ void step(const TS *sa, const TS *sb, int la, int lb)
    {
        const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
        for (int p = 0; p < HKG_BK; p++) {
            A av[TM], bv[TN];
#pragma unroll
            for (int x = 0; x < TM; x++)
                av[x] = (A)sa[p * la + (x / 4) * (BM / GM) + ty * 4 + x % 4];
#pragma unroll
            for (int y = 0; y < TN; y++)
                bv[y] = (A)sb[p * lb + (y / 4) * (BN / GN) + tx * 4 + y % 4];
#pragma unroll
            for (int x = 0; x < TM; x++)
#pragma unroll
                for (int y = 0; y < TN; y++)
                    acc[x][y] += av[x] * bv[y];
        }
    }

    template <typename TC, typename S>
    __device__ void store(TC *c, long long ldc, int m, int n, int i0, int j0, S alpha, S beta) const
    {
        const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
        for (int x = 0; x < TM; x++)
#pragma unroll
            for (int y = 0; y < TN; y += 4)
                hkg_store_run<4>(c, ldc, m, n, i0 + (x / 4) * (BM / GM) + ty * 4 + x % 4,
                                 j0 + (y / 4) * (BN / GN) + tx * 4, &acc[x][y], alpha, beta);
    }
};

#ifdef HKG_MFMA
// The MFMA product on CDNA (wavefront 64): 4 waves as 2 x 2, each a
// (BM / 2) x (BN / 2) block of C made of 32 x 32 MFMA blocks. A 32 x 32
// block's 16 accumulators of lane l are C(8 (r / 4) + 4 (l / 32) + r % 4,
// l % 32); an A operand of lane l is A(l % 32, K (l / 32) + e), a B
// operand B(K (l / 32) + e, l % 32), K the items per lane.
typedef float hkg_f16x __attribute__((ext_vector_type(16)));
typedef _Float16 hkg_h4 __attribute__((ext_vector_type(4)));
typedef short hkg_s4 __attribute__((ext_vector_type(4)));
typedef short hkg_s2 __attribute__((ext_vector_type(2)));

__device__ inline hkg_f16x hkg_mfma8(const __half *sa, const __half *sb, int la, int lb, int l, hkg_f16x c)
{
    hkg_h4 x, y;
    for (int e = 0; e < 4; e++) {
        x[e] = __builtin_bit_cast(_Float16, sa[(4 * (l / 32) + e) * la + l % 32]);
        y[e] = __builtin_bit_cast(_Float16, sb[(4 * (l / 32) + e) * lb + l % 32]);
    }
    return __builtin_amdgcn_mfma_f32_32x32x8f16(x, y, c, 0, 0, 0);
}

__device__ inline hkg_f16x hkg_mfma8(const __hip_bfloat16 *sa, const __hip_bfloat16 *sb, int la, int lb, int l,
                                     hkg_f16x c)
{
#ifdef HKG_BF16_1K
    hkg_s4 x, y;
    for (int e = 0; e < 4; e++) {
        x[e] = __builtin_bit_cast(short, sa[(4 * (l / 32) + e) * la + l % 32]);
        y[e] = __builtin_bit_cast(short, sb[(4 * (l / 32) + e) * lb + l % 32]);
    }
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(x, y, c, 0, 0, 0);
#else
    for (int h = 0; h < 2; h++) { // gfx908: k = 4 per instruction, two of them
        hkg_s2 x, y;
        for (int e = 0; e < 2; e++) {
            x[e] = __builtin_bit_cast(short, sa[(4 * h + 2 * (l / 32) + e) * la + l % 32]);
            y[e] = __builtin_bit_cast(short, sb[(4 * h + 2 * (l / 32) + e) * lb + l % 32]);
        }
        c = __builtin_amdgcn_mfma_f32_32x32x4bf16(x, y, c, 0, 0, 0);
    }
    return c;
#endif
}

__device__ inline hkg_f16x hkg_mfma8(const float *sa, const float *sb, int la, int lb, int l, hkg_f16x c)
{
    for (int h = 0; h < 4; h++) // k = 2 per instruction
        c = __builtin_amdgcn_mfma_f32_32x32x2f32(sa[(2 * h + l / 32) * la + l % 32],
                                                 sb[(2 * h + l / 32) * lb + l % 32], c, 0, 0, 0);
    return c;
}

template <int BM, int BN> struct hkg_mfma {
    static const int MI = BM / 64, NI = BN / 64;
    hkg_f16x acc[MI][NI];

    __device__ void zero()
    {
        for (int x = 0; x < MI; x++)
            for (int y = 0; y < NI; y++)
                for (int r = 0; r < 16; r++)
                    acc[x][y][r] = 0.0f;
    }

    template <typename TS> __device__ void step(const TS *sa, const TS *sb, int la, int lb)
    {
        const int w = threadIdx.x / 64, l = threadIdx.x % 64;
        for (int x = 0; x < MI; x++)
            for (int y = 0; y < NI; y++)
                acc[x][y] = hkg_mfma8(sa + (w / 2) * (BM / 2) + 32 * x, sb + (w % 2) * (BN / 2) + 32 * y, la,
                                      lb, l, acc[x][y]);
    }

    template <typename TC, typename S>
    __device__ void store(TC *c, long long ldc, int m, int n, int i0, int j0, S alpha, S beta) const
    {
        const int w = threadIdx.x / 64, l = threadIdx.x % 64;
        for (int x = 0; x < MI; x++)
            for (int y = 0; y < NI; y++)
                for (int r = 0; r < 16; r++)
                    hkg_store(c, ldc, m, n, i0 + (w / 2) * (BM / 2) + 32 * x + 8 * (r / 4) + 4 * (l / 32) + r % 4,
                              j0 + (w % 2) * (BN / 2) + 32 * y + l % 32, acc[x][y][r], alpha, beta);
    }
};
#endif

// The tiled loop around a product P (hkg_simt or hkg_mfma).
template <typename P, typename TS, int BM, int BN, typename TA, typename TC, typename S>
__device__ void hkg_tiled(const TA *a, const TA *b, TC *c, int m, int n, int k, long long sam, long long sak,
                          long long sbk, long long sbn, long long ldc, S alpha, S beta)
{
    typedef hkg_tiles<TA, TS, BM, BN> T;
    __shared__ __align__(16) TS hkg_sa[2 * HKG_BK * T::LA];
    __shared__ __align__(16) TS hkg_sb[2 * HKG_BK * T::LB];
    const int i0 = blockIdx.y * BM, j0 = blockIdx.x * BN, kts = (k + HKG_BK - 1) / HKG_BK;
    T tiles;
    P prod;
    prod.zero();
    if (kts > 0) {
        tiles.fetch(a, b, m, n, k, sam, sak, sbk, sbn, i0, j0, 0);
        tiles.put(hkg_sa, hkg_sb, sam, sbn);
    }
    __syncthreads();
    for (int kt = 0; kt < kts; kt++) {
        const int cur = kt % 2;
        if (kt + 1 < kts)
            tiles.fetch(a, b, m, n, k, sam, sak, sbk, sbn, i0, j0, kt + 1);
        prod.step(hkg_sa + cur * HKG_BK * T::LA, hkg_sb + cur * HKG_BK * T::LB, T::LA, T::LB);
        if (kt + 1 < kts)
            tiles.put(hkg_sa + (1 - cur) * HKG_BK * T::LA, hkg_sb + (1 - cur) * HKG_BK * T::LB, sam, sbn);
        __syncthreads();
    }
    prod.store(c, ldc, m, n, i0, j0, alpha, beta);
}

#ifdef HKG_MMA
// ---------------------------------------------------------------------------
// NVIDIA tensor cores (sm_80+): BM x BN x 32 tiles, HKG_STAGES stages in
// dynamic shared memory (4 x 128 x 256: 96 KiB, past the 48 KiB a block
// gets by default; the cuda backend opts the kernel in, and
// hk.ops.gemm.matmul asks for it). A sits in shared memory as [m][k] (rows
// of 32 halves: 4 chunks of 16 bytes), B as [k][n] (rows of BN), so
// row-major A and B copy straight in, 16 bytes per cp.async. No padding:
// chunks are swizzled instead, A's chunk c of row r stored at
// c ^ ((r / 2) % 4), B's chunk c of row k at c ^ (k % 8), so the 8 rows one
// ldmatrix reads fall on distinct banks. 8 warps as 2 x 4, each a
// (BM / 2) x (BN / 4) block of C in m16n8 accumulators: c0, c1 at row g,
// columns 2q, 2q + 1; c2, c3 at row g + 8 (g = lane / 4, q = lane % 4).
// 64 x 64 per warp (the 128 x 256 tile) reads 4 KiB of shared memory per
// 32 mma, the most an SM's 128 bytes a clock feed at the tensor cores' rate.
#define HKG_MK 32
#ifndef HKG_STAGES
#define HKG_STAGES 4
#endif

// The dynamic shared memory this launch got, in bytes.
__device__ inline unsigned hkg_dyn_smem()
{
    unsigned r;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
    return r;
}

__device__ inline unsigned hkg_smem(const void *p)
{
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

// 16 bytes from g to shared s, of which only `bytes` are read (the rest zero).
__device__ inline void hkg_cp16(unsigned s, const void *g, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g), "r"(bytes));
}

// Element offsets of A's (r, p) and B's (p, c) in their swizzled tiles.
__device__ inline int hkg_swa(int r, int p) { return r * HKG_MK + (((p / 8) ^ ((r / 2) % 4)) * 8) + p % 8; }
template <int BN> __device__ inline int hkg_swb(int p, int c) { return p * BN + (((c / 8) ^ (p % 8)) * 8) + c % 8; }

template <typename TA, int BM, int BN> struct hkg_mma {
    static const int WM = BM / 2, WN = BN / 4, MI = WM / 16, NI = WN / 8;
    // elements of A and of B in one stage; the bytes all stages take
    static const int SA = BM * HKG_MK, SB = HKG_MK * BN;
    static const unsigned SHARED = HKG_STAGES * (SA + SB) * sizeof(TA);
    float acc[MI][NI][4];

    // Tile kt of A into sa [BM][32] and of B into sb [32][BN]: 16-byte
    // copies where the rows run along k (A) or n (B) and are aligned, else
    // element by element (zero outside the matrix, as the copies' byte
    // counts make it).
    __device__ static void load(TA *sa, TA *sb, const TA *a, const TA *b, int m, int n, int k, long long sam,
                                long long sak, long long sbk, long long sbn, int i0, int j0, int kt, bool va,
                                bool vb)
    {
        const int t = threadIdx.x, k0 = kt * HKG_MK;
        if (va) {
            const unsigned base = hkg_smem(sa);
#pragma unroll
            for (int ch = t; ch < BM * HKG_MK / 8; ch += HKG_THREADS) {
                int r = ch / (HKG_MK / 8), p = (ch % (HKG_MK / 8)) * 8, i = i0 + r, kk = k0 + p;
                int left = i < m ? k - kk : 0;
                int bytes = left <= 0 ? 0 : left >= 8 ? 16 : 2 * left;
                hkg_cp16(base + 2 * hkg_swa(r, p), bytes ? a + (long long)i * sam + kk : a, bytes);
            }
        } else {
            for (int e = t; e < BM * HKG_MK; e += HKG_THREADS) {
                int r = sam == 1 ? e % BM : e / HKG_MK, p = sam == 1 ? e / BM : e % HKG_MK;
                int i = i0 + r, kk = k0 + p;
                sa[hkg_swa(r, p)] =
                    i < m && kk < k ? a[(long long)i * sam + (long long)kk * sak] : hkg_cv<TA>::zero();
            }
        }
        if (vb) {
            const unsigned base = hkg_smem(sb);
#pragma unroll
            for (int ch = t; ch < BN * HKG_MK / 8; ch += HKG_THREADS) {
                int p = ch / (BN / 8), cl = (ch % (BN / 8)) * 8, j = j0 + cl, kk = k0 + p;
                int left = kk < k ? n - j : 0;
                int bytes = left <= 0 ? 0 : left >= 8 ? 16 : 2 * left;
                hkg_cp16(base + 2 * hkg_swb<BN>(p, cl), bytes ? b + (long long)kk * sbk + j : b, bytes);
            }
        } else {
            for (int e = t; e < BN * HKG_MK; e += HKG_THREADS) {
                int cl = sbn == 1 ? e % BN : e / HKG_MK, p = sbn == 1 ? e / BN : e % HKG_MK;
                int j = j0 + cl, kk = k0 + p;
                sb[hkg_swb<BN>(p, cl)] =
                    j < n && kk < k ? b[(long long)kk * sbk + (long long)j * sbn] : hkg_cv<TA>::zero();
            }
        }
        asm volatile("cp.async.commit_group;\n" ::);
    }

    __device__ static void mma(float *d, const unsigned *x, const unsigned *y, __half *)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]));
    }
    __device__ static void mma(float *d, const unsigned *x, const unsigned *y, __hip_bfloat16 *)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]));
    }

    // One 32-deep tile: two k16 steps of MI x NI mma each. Lane l gives
    // ldmatrix the row of its 8 x 8 matrix: A rows l % 16 at k chunk l / 16;
    // B (transposed on the way) rows k = l % 16 at n chunk l / 16. Row parts
    // of the swizzle depend on the lane only.
    __device__ void step(const TA *sa, const TA *sb)
    {
        const int w = threadIdx.x / 32, l = threadIdx.x % 32;
        const unsigned pa = hkg_smem(sa + ((w / 4) * WM + l % 16) * HKG_MK);
        const unsigned pb = hkg_smem(sb + (l % 16) * BN);
        const int sw_a = (l % 16 / 2) % 4;
        unsigned cb[NI / 2]; // byte offsets of this lane's B chunks, swizzled by its row k % 8
#pragma unroll
        for (int ni = 0; ni < NI; ni += 2) {
            const int ch = (w % 4) * (WN / 8) + ni + l / 16;
            cb[ni / 2] = 16 * (unsigned)((ch & ~7) | ((ch ^ l) & 7));
        }
#pragma unroll
        for (int ks = 0; ks < HKG_MK; ks += 16) {
            unsigned x[MI][4], y[NI][2];
            const unsigned ca = 16 * ((ks / 8 + l / 16) ^ sw_a);
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(x[mi][0]), "=r"(x[mi][1]), "=r"(x[mi][2]), "=r"(x[mi][3])
                             : "r"(pa + (unsigned)(mi * 16 * HKG_MK * 2) + ca));
#pragma unroll
            for (int ni = 0; ni < NI; ni += 2)
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(y[ni][0]), "=r"(y[ni][1]), "=r"(y[ni + 1][0]), "=r"(y[ni + 1][1])
                             : "r"(pb + (unsigned)(ks * BN * 2) + cb[ni / 2]));
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
#pragma unroll
                for (int ni = 0; ni < NI; ni++)
                    mma(acc[mi][ni], x[mi], y[ni], (TA *)0);
        }
    }

    // This thread's 16-byte chunks of a tile, for a block inside C: global
    // addresses of tile 0 and shared addresses in stage 0.
    static const int NA = BM * HKG_MK / 8 / HKG_THREADS, NB = BN * HKG_MK / 8 / HKG_THREADS;
    struct hkg_fast {
        const TA *ga[NA], *gb[NB];
        unsigned sa[NA], sb[NB];

        __device__ void init(const TA *a, const TA *b, long long sam, long long sbk, int i0, int j0, unsigned ta,
                             unsigned tb)
        {
#pragma unroll
            for (int q = 0; q < NA; q++) {
                const int ch = threadIdx.x + q * HKG_THREADS, r = ch / (HKG_MK / 8), p = (ch % (HKG_MK / 8)) * 8;
                ga[q] = a + (long long)(i0 + r) * sam + p;
                sa[q] = ta + 2 * hkg_swa(r, p);
            }
#pragma unroll
            for (int q = 0; q < NB; q++) {
                const int ch = threadIdx.x + q * HKG_THREADS, p = ch / (BN / 8), cl = (ch % (BN / 8)) * 8;
                gb[q] = b + (long long)p * sbk + j0 + cl;
                sb[q] = tb + 2 * hkg_swb<BN>(p, cl);
            }
        }

        __device__ void copy(int kt, int stage, long long sbk) const
        {
#pragma unroll
            for (int q = 0; q < NA; q++)
                hkg_cp16(sa[q] + stage * (BM * HKG_MK * 2), ga[q] + kt * HKG_MK, 16);
#pragma unroll
            for (int q = 0; q < NB; q++)
                hkg_cp16(sb[q] + stage * (HKG_MK * BN * 2), gb[q] + (long long)kt * HKG_MK * sbk, 16);
            asm volatile("cp.async.commit_group;\n" ::);
        }
    };

    template <typename TC, typename S>
    __device__ void run(const TA *a, const TA *b, TC *c, int m, int n, int k, long long sam, long long sak,
                        long long sbk, long long sbn, long long ldc, S alpha, S beta)
    {
        extern __shared__ __align__(128) unsigned char hkg_dyn[];
        TA *const hkg_ta = (TA *)hkg_dyn, *const hkg_tb = hkg_ta + HKG_STAGES * SA;
        const int i0 = blockIdx.y * BM, j0 = blockIdx.x * BN, kts = (k + HKG_MK - 1) / HKG_MK;
        const bool va = sak == 1 && sam % 8 == 0 && ((unsigned long long)a & 15) == 0;
        const bool vb = sbn == 1 && sbk % 8 == 0 && ((unsigned long long)b & 15) == 0;
#pragma unroll
        for (int mi = 0; mi < MI; mi++)
#pragma unroll
            for (int ni = 0; ni < NI; ni++)
#pragma unroll
                for (int r = 0; r < 4; r++)
                    acc[mi][ni][r] = 0.0f;
        // A block wholly inside C with aligned rows copies its full k tiles
        // through addresses worked out once (hkg_fast), the rest through load.
        hkg_fast f;
        const bool inside = va && vb && i0 + BM <= m && j0 + BN <= n;
        if (inside)
            f.init(a, b, sam, sbk, i0, j0, hkg_smem(hkg_ta), hkg_smem(hkg_tb));
        // Tile t into stage t % HKG_STAGES, one commit group per tile (an
        // empty one past the end, so the wait below counts alike).
        auto issue = [&](int t) {
            const int st = t % HKG_STAGES;
            if (t >= kts)
                asm volatile("cp.async.commit_group;\n" ::);
            else if (inside && (t + 1) * HKG_MK <= k)
                f.copy(t, st, sbk);
            else
                load(hkg_ta + st * SA, hkg_tb + st * SB, a, b, m, n, k, sam, sak, sbk, sbn, i0, j0, t, va, vb);
        };
#pragma unroll
        for (int t = 0; t < HKG_STAGES - 1; t++)
            issue(t);
        // One barrier a tile: tile kt has landed (at most HKG_STAGES - 2
        // younger groups pending) and every warp is done with tile kt - 1,
        // whose stage tile kt + HKG_STAGES - 1 then overwrites while the
        // tensor cores work on tile kt.
        for (int kt = 0; kt < kts; kt++) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(HKG_STAGES - 2));
            __syncthreads();
            issue(kt + HKG_STAGES - 1);
            step(hkg_ta + (kt % HKG_STAGES) * SA, hkg_tb + (kt % HKG_STAGES) * SB);
        }
        asm volatile("cp.async.wait_group 0;\n" ::);
        const int w = threadIdx.x / 32, l = threadIdx.x % 32;
        const int ri = i0 + (w / 4) * WM + l / 4, cj = j0 + (w % 4) * WN + 2 * (l % 4);
#pragma unroll
        for (int mi = 0; mi < MI; mi++)
#pragma unroll
            for (int ni = 0; ni < NI; ni++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    hkg_store_run<2>(c, ldc, m, n, ri + mi * 16 + 8 * h, cj + ni * 8, &acc[mi][ni][2 * h], alpha,
                                     beta);
    }
};

// ---------------------------------------------------------------------------
// f32 on NVIDIA (sm_80+): the SIMT product (full f32 FMA, never TF32) fed
// by cp.async, 128 x 128 x HKS_BK tiles in HKS_STAGES stages of dynamic
// shared memory (4 x 16 deep: 66 KiB; matmul asks for it where it measured
// faster, the cuda backend opts the kernel in past 48 KiB). The products
// read both operands as [k][128 + 4]: a thread reads 16 bytes of A and 16
// of B per k step (LDS.128). 8 warps as 4 x 2, each 32 x 64 of C; lane
// (lr, lc) = (lane / 8, lane % 8) owns rows {0..3, 16..19} + 4 lr and
// columns {0..3, 32..35} + 4 lc of it, so a warp's A reads hit 4 distinct
// 16-byte words (broadcast) and its B reads 8 (one 128-byte wavefront).
// W = 1: warps as 2 x 4 of 64 x 32 (the mirror image). An operand X (rows
// r, X(r, p) = x[r sr + p sp]) with unit stride along r (A transposed, B
// row-major) and 16-byte rows is copied 16 bytes at a time; any other, one
// 4-byte copy an element (8 lanes along k, 4 along r: the row pitch, 4 mod
// 32 banks, keeps the writes apart), which costs: row-major A is no faster
// here than in the plain tile (docs/families/gemm-notes.md, v9).
#ifndef HKS_BK
#define HKS_BK 16
#endif
#ifndef HKS_STAGES
#define HKS_STAGES 4
#endif
#ifndef HKS_W
#define HKS_W 0
#endif
struct __align__(16) hks_f4 { float v[4]; };

template <int BK, int ST, int W> struct hkg_sgemm {
    static const int L = 128 + 4, TILE = BK * L, DA = W ? 32 : 16, DB = W ? 16 : 32;
    static const unsigned SHARED = ST * 2 * TILE * sizeof(float);
    float acc[8][8];

    // Tile k0 of X (rows r0 + 0..127 of ext, k deep) into the tile at shared
    // address s: 16-byte copies along r when vec, else element copies.
    // Outside X: zeros (cp.async's source size short or 0).
    __device__ static void load(unsigned s, const float *x, long long sr, long long sp, int ext, int k, int r0,
                                int k0, bool vec)
    {
        const int t = threadIdx.x;
        if (vec) {
#pragma unroll
            for (int q = 0; q < BK * 32 / HKG_THREADS; q++) {
                const int ch = t + q * HKG_THREADS, p = ch / 32, r = (ch % 32) * 4, left = ext - r0 - r;
                const int bytes = k0 + p < k && left > 0 ? (left >= 4 ? 16 : left * 4) : 0;
                hkg_cp16(s + (unsigned)(p * L + r) * 4, bytes ? x + (r0 + r) + (long long)(k0 + p) * sp : x, bytes);
            }
            return;
        }
#pragma unroll
        for (int q = 0; q < BK / 2; q++) {
            const int e = t + q * HKG_THREADS, p = e % 8 + 8 * (e / 1024), r = (e / 8) % 128;
            const bool in = r0 + r < ext && k0 + p < k;
            const float *g = in ? x + (long long)(r0 + r) * sr + (long long)(k0 + p) * sp : x;
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s + (unsigned)(p * L + r) * 4),
                         "l"(g), "r"(in ? 4 : 0));
        }
    }

    __device__ void fma(const hks_f4 *fa, const hks_f4 *fb)
    {
#pragma unroll
        for (int x = 0; x < 8; x++)
#pragma unroll
            for (int y = 0; y < 8; y++)
                acc[x][y] += fa[x / 4].v[x % 4] * fb[y / 4].v[y % 4];
    }

    // The products of one [BK][L] tile of A and one of B.
    __device__ void step(const float *sa, const float *sb, int am, int bn)
    {
        hks_f4 fa[2][2], fb[2][2]; // fragments of step p and p + 1
        fa[0][0] = *(const hks_f4 *)(sa + am);
        fa[0][1] = *(const hks_f4 *)(sa + am + DA);
        fb[0][0] = *(const hks_f4 *)(sb + bn);
        fb[0][1] = *(const hks_f4 *)(sb + bn + DB);
#pragma unroll
        for (int p = 0; p < BK; p++) {
            if (p + 1 < BK) {
                const int o = (p + 1) * L, nx = (p + 1) % 2;
                fa[nx][0] = *(const hks_f4 *)(sa + o + am);
                fa[nx][1] = *(const hks_f4 *)(sa + o + am + DA);
                fb[nx][0] = *(const hks_f4 *)(sb + o + bn);
                fb[nx][1] = *(const hks_f4 *)(sb + o + bn + DB);
            }
            fma(fa[p % 2], fb[p % 2]);
        }
    }

    __device__ void run(const float *a, const float *b, float *c, int m, int n, int k, long long sam, long long sak,
                        long long sbk, long long sbn, long long ldc, float alpha, float beta)
    {
        extern __shared__ __align__(128) unsigned char hkg_dyn[];
        const float *const sh = (const float *)hkg_dyn;
        const unsigned s0 = hkg_smem(hkg_dyn);
        const int i0 = blockIdx.y * 128, j0 = blockIdx.x * 128, kts = (k + BK - 1) / BK;
        const bool va = sam == 1 && sak % 4 == 0 && (unsigned long long)a % 16 == 0;
        const bool vb = sbn == 1 && sbk % 4 == 0 && (unsigned long long)b % 16 == 0;
        // Tile t into stage t % ST, one commit group a tile (empty past the end)
        auto issue = [&](int t) {
            if (t < kts) {
                const unsigned st = s0 + (unsigned)((t % ST) * 2 * TILE * 4);
                load(st, a, sam, sak, m, k, i0, t * BK, va);
                load(st + TILE * 4, b, sbn, sbk, n, k, j0, t * BK, vb);
            }
            asm volatile("cp.async.commit_group;\n" ::);
        };
#pragma unroll
        for (int x = 0; x < 8; x++)
#pragma unroll
            for (int y = 0; y < 8; y++)
                acc[x][y] = 0.0f;
#pragma unroll
        for (int t = 0; t < ST - 1; t++)
            issue(t);
        const int w = threadIdx.x / 32, l = threadIdx.x % 32;
        const int am = W ? (w / 4) * 64 + (l / 4) * 4 : (w / 2) * 32 + (l / 8) * 4;
        const int bn = W ? (w % 4) * 32 + (l % 4) * 4 : (w % 2) * 64 + (l % 8) * 4;
        for (int kt = 0; kt < kts; kt++) {
            // Tile kt has landed for every thread, and every thread is done
            // with tile kt - 1, whose stage tile kt + ST - 1 then refills.
            asm volatile("cp.async.wait_group %0;\n" ::"n"(ST - 2));
            __syncthreads();
            issue(kt + ST - 1);
            const float *sa = sh + (kt % ST) * 2 * TILE;
            step(sa, sa + TILE, am, bn);
        }
        asm volatile("cp.async.wait_group 0;\n" ::);
#pragma unroll
        for (int x = 0; x < 8; x++)
#pragma unroll
            for (int y = 0; y < 8; y += 4)
                hkg_store_run<4>(c, ldc, m, n, i0 + am + (x / 4) * DA + x % 4, j0 + bn + (y / 4) * DB, &acc[x][y],
                                 alpha, beta);
    }
};

#ifdef HKG_WGMMA
// ---------------------------------------------------------------------------
// Hopper's warpgroup MMA (sm_90a only: __CUDA_ARCH_FEAT_SM90_ALL, which the
// cuda backend's JIT and the sm_90a AOT images define). A block of 256
// threads is two warpgroups; each owns 64 rows of the 128 x 256 tile of C
// (128 f32 accumulators a thread) and issues wgmma.m64n256k16, whose
// operands the tensor cores read from shared memory themselves (no ldmatrix,
// no operand registers). Tiles are 64 deep, HKW_STAGES of them in a ring
// filled by cp.async (one commit group a tile); wgmma's own commit/wait
// groups keep one tile's products in flight while the next tile's are
// issued. An operand tile is stored as wgmma's 128-byte-swizzle layout:
// either K-major (rows of the operand, m or n, of 64 k = 128 bytes, for A
// or B stored with unit stride along k) or MN-major (rows of k, each 64
// consecutive m or n = 128 bytes, 64 x 64 blocks 8 KiB apart, for unit
// stride along m or n); in both, the 16-byte chunk c of row r sits at
// c ^ (r % 8), the swizzle the hardware applies to address bits 4..6 from
// bits 7..9, so every 8-row atom starts 1024-byte aligned. A block takes
// this path only when it lies wholly inside C, k is a multiple of 64 and
// each operand has a unit stride with 16-byte aligned rows (hkw_fits);
// every other block, and every other target, runs the mma.sync path.
#define HKW_BK 64
#ifndef HKW_STAGES
#define HKW_STAGES 4
#endif

// A matrix descriptor: shared address s, leading and stride byte offsets,
// 128-byte swizzle (mode 1 in bits 62..63).
__device__ inline unsigned long long hkw_desc(unsigned s, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((s & 0x3ffff) >> 4) | (unsigned long long)((lbo & 0x3ffff) >> 4) << 16 |
           (unsigned long long)((sbo & 0x3ffff) >> 4) << 32 | 1ull << 62;
}

#define HKW_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define HKW_D16(i) HKW_D4(i), HKW_D4(i + 4), HKW_D4(i + 8), HKW_D4(i + 12)
#define HKW_D128                                                                                             \
    HKW_D16(0), HKW_D16(16), HKW_D16(32), HKW_D16(48), HKW_D16(64), HKW_D16(80), HKW_D16(96), HKW_D16(112)
#define HKW_REGS                                                                                             \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                 \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                       \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                        \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "                        \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                        \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                        \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "            \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// d (64 x 256 of C, this warpgroup's) += A (64 x 16) B (16 x 256); TA and
// TB: the operand is MN-major (wgmma's transpose bit).
template <int TA, int TB>
__device__ inline void hkw_mma(float *d, unsigned long long da, unsigned long long db, __half *)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" HKW_REGS "}, %128, %129, p, 1, 1, %130, "
                 "%131;\n}\n"
                 : HKW_D128
                 : "l"(da), "l"(db), "n"(TA), "n"(TB));
}
template <int TA, int TB>
__device__ inline void hkw_mma(float *d, unsigned long long da, unsigned long long db, __hip_bfloat16 *)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" HKW_REGS "}, %128, %129, p, 1, 1, "
                 "%130, %131;\n}\n"
                 : HKW_D128
                 : "l"(da), "l"(db), "n"(TA), "n"(TB));
}

// The compiler must neither read nor move the accumulators while wgmma
// writes them asynchronously: an empty asm that "changes" each one orders
// the reads after the wait.
__device__ inline void hkw_fence_acc(float *d)
{
#pragma unroll
    for (int i = 0; i < 128; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

// 16-byte chunk ch of an operand tile of R rows (m or n) x 64 k: its element
// offset in global memory from the tile's corner (sr: stride along the
// rows' index, sk: along k) and its byte offset in the stage. K-major (kmaj:
// unit stride along k): row r holds 8 chunks of k. MN-major: row kk holds
// R / 8 chunks of m or n, in 64-wide blocks 8 KiB apart.
__device__ inline void hkw_chunk(int R, bool kmaj, int ch, long long sr, long long sk, long long *g, unsigned *s)
{
    if (kmaj) {
        const int r = ch / 8, c = ch % 8;
        *g = r * sr + 8 * c;
        *s = (unsigned)(r * 128 + ((c ^ (r & 7)) << 4));
    } else {
        const int kk = ch / (R / 8), c = ch % (R / 8);
        *g = kk * sk + 8 * c;
        *s = (unsigned)((c / 8) * 8192 + kk * 128 + (((c % 8) ^ (kk & 7)) << 4));
    }
}

// Whether this block can take the wgmma path (see above): inside C, k a
// multiple of 64, A and B each with a unit stride and 16-byte aligned rows.
__device__ inline bool hkw_fits(const void *a, const void *b, int m, int n, int k, long long sam, long long sak,
                                long long sbk, long long sbn, int i0, int j0)
{
    const bool ra = (sak == 1 && sam % 8 == 0) || (sam == 1 && sak % 8 == 0);
    const bool rb = (sbk == 1 && sbn % 8 == 0) || (sbn == 1 && sbk % 8 == 0);
    return ra && rb && k > 0 && k % HKW_BK == 0 && i0 + 128 <= m && j0 + 256 <= n &&
           (((unsigned long long)a | (unsigned long long)b) & 15) == 0;
}

template <typename TA> struct hkg_wgmma {
    // bytes of A (128 x 64) and B (64 x 256) in one stage; all stages, plus
    // room to align the ring to 1024 bytes (static shared memory of the
    // other paths comes first)
    static const unsigned SA = 128 * HKW_BK * 2, SB = 256 * HKW_BK * 2;
    static const unsigned SHARED = HKW_STAGES * (SA + SB) + 1024;
    static_assert(HKW_STAGES * (SA + SB) >= 128 * (256 + 4) * 4, "the ring holds C's tile in f32 (store)");
    static const int NA = 128 * HKW_BK / 8 / HKG_THREADS, NB = 256 * HKW_BK / 8 / HKG_THREADS;
    float d[128];

    // AK: A runs along k (sak == 1), else along m; BK: B along k, else n.
    template <bool AK, bool BK, typename TC, typename S>
    __device__ void run(const TA *a, const TA *b, TC *c, int k, long long sam, long long sak, long long sbk,
                        long long sbn, long long ldc, S alpha, S beta)
    {
        extern __shared__ __align__(128) unsigned char hkg_dyn[];
        const unsigned sbase = (hkg_smem(hkg_dyn) + 1023u) & ~1023u;
        const unsigned sa0 = sbase, sb0 = sbase + HKW_STAGES * SA;
        const int i0 = blockIdx.y * 128, j0 = blockIdx.x * 256, kts = k / HKW_BK;
        const int wg = threadIdx.x / 128;
        // this thread's chunks: global addresses of tile 0, shared offsets
        const TA *ga[NA], *gb[NB];
        unsigned oa[NA], ob[NB];
        const TA *const a0 = a + (long long)i0 * sam, *const b0 = b + (long long)j0 * sbn;
#pragma unroll
        for (int q = 0; q < NA; q++) {
            long long g;
            hkw_chunk(128, AK, threadIdx.x + q * HKG_THREADS, sam, sak, &g, &oa[q]);
            ga[q] = a0 + g;
        }
#pragma unroll
        for (int q = 0; q < NB; q++) {
            long long g;
            hkw_chunk(256, BK, threadIdx.x + q * HKG_THREADS, sbn, sbk, &g, &ob[q]);
            gb[q] = b0 + g;
        }
        const long long step_a = AK ? HKW_BK : HKW_BK * sak, step_b = BK ? HKW_BK : HKW_BK * sbk;
        // tile t into stage t % HKW_STAGES (an empty group past the end)
        auto issue = [&](int t) {
            if (t < kts) {
                const unsigned st = (unsigned)(t % HKW_STAGES);
#pragma unroll
                for (int q = 0; q < NA; q++)
                    hkg_cp16(sa0 + st * SA + oa[q], ga[q] + t * step_a, 16);
#pragma unroll
                for (int q = 0; q < NB; q++)
                    hkg_cp16(sb0 + st * SB + ob[q], gb[q] + t * step_b, 16);
            }
            asm volatile("cp.async.commit_group;\n" ::);
        };
#pragma unroll
        for (int i = 0; i < 128; i++)
            d[i] = 0.0f;
        hkw_fence_acc(d);
#pragma unroll
        for (int t = 0; t < HKW_STAGES - 2; t++)
            issue(t);
        // Per tile: it has landed (cp.async wait, then fence.proxy.async so
        // the tensor cores' reads see what the copies wrote, then a barrier
        // for everyone's copies); the barrier also means both warpgroups
        // passed the wgmma wait of the tile before, so the products of tile
        // kt - 2 are done and its stage takes tile kt + HKW_STAGES - 2.
        for (int kt = 0; kt < kts; kt++) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(HKW_STAGES - 3));
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            __syncthreads();
            issue(kt + HKW_STAGES - 2);
            const unsigned st = (unsigned)(kt % HKW_STAGES);
            const unsigned pa = sa0 + st * SA + wg * 8192, pb = sb0 + st * SB;
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int j = 0; j < HKW_BK / 16; j++) {
                // a k16 step: 32 bytes along a K-major row, 16 rows (2 KiB) of an MN-major tile
                const unsigned long long da =
                    AK ? hkw_desc(pa + 32 * j, 16, 1024) : hkw_desc(pa + 2048 * j, 8192, 1024);
                const unsigned long long db =
                    BK ? hkw_desc(pb + 32 * j, 16, 1024) : hkw_desc(pb + 2048 * j, 8192, 1024);
                hkw_mma<AK ? 0 : 1, BK ? 0 : 1>(d, da, db, (TA *)0);
            }
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        asm volatile("cp.async.wait_group 0;\n" ::);
        hkw_fence_acc(d);
        store(c, ldc, alpha, beta, hkg_dyn + (sbase - hkg_smem(hkg_dyn)));
    }

    // C = alpha D + beta C for the tile. Accumulator i of lane l in warp w
    // of warpgroup g: row 64 g + 16 w + l / 4 + 8 ((i / 2) % 2), column
    // 8 (i / 4) + 2 (l % 4) + i % 2. Written straight from there, a warp's
    // store covers 8 rows with 16 bytes each; so the tile goes through the
    // (now idle) ring first, rows padded by 4 floats, and each warp then
    // stores whole runs of a row (HKW_DIRECT_C: straight, for comparison).
    template <typename TC, typename S>
    __device__ void store(TC *c, long long ldc, S alpha, S beta, unsigned char *ring)
    {
        const int i0 = blockIdx.y * 128, j0 = blockIdx.x * 256;
        const int wg = threadIdx.x / 128, w = (threadIdx.x % 128) / 32, l = threadIdx.x % 32;
        const int ri = wg * 64 + w * 16 + l / 4, cj = 2 * (l % 4);
#ifdef HKW_DIRECT_C
#pragma unroll
        for (int jn = 0; jn < 32; jn++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                hkg_store_run<2>(c, ldc, 0x7fffffff, 0x7fffffff, i0 + ri + 8 * h, j0 + cj + 8 * jn,
                                 &d[jn * 4 + 2 * h], alpha, beta);
#else
        const int LD = 256 + 4;
        float *cs = (float *)ring;
        __syncthreads(); // every warp is done reading the ring
#pragma unroll
        for (int jn = 0; jn < 32; jn++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                *(float2 *)&cs[(ri + 8 * h) * LD + cj + 8 * jn] = make_float2(d[jn * 4 + 2 * h], d[jn * 4 + 2 * h + 1]);
        __syncthreads();
#pragma unroll 4
        for (int pass = 0; pass < 32; pass++) { // 4 rows a pass, 64 threads a row, 4 columns each
            const int r = pass * 4 + threadIdx.x / 64, cc = (threadIdx.x % 64) * 4;
            const float4 v = *(const float4 *)&cs[r * LD + cc];
            const float run[4] = {v.x, v.y, v.z, v.w};
            hkg_store_run<4>(c, ldc, 0x7fffffff, 0x7fffffff, i0 + r, j0 + cc, run, alpha, beta);
        }
#endif
    }
};
#endif // HKG_WGMMA
#endif

// The path for this target and input type.
template <int BM, int BN, typename TA, typename TC, typename S>
__device__ void hkg_gemm(const TA *a, const TA *b, TC *c, int m, int n, int k, long long sam, long long sak,
                         long long sbk, long long sbn, long long ldc, long long bsa, long long bsb, long long bsc,
                         S alpha, S beta)
{
    a += (long long)blockIdx.z * bsa;
    b += (long long)blockIdx.z * bsb;
    c += (long long)blockIdx.z * bsc;
#if defined(HKG_MMA)
    // The tensor cores when the launch brought the pipeline's shared memory
    // (hk.ops.gemm.matmul does); a direct launch without it gets the SIMT
    // tiles below, slow but right.
    if constexpr (hkg_half<TA>::v) {
#if defined(HKG_WGMMA)
        // wgmma when the launch brought its ring and this block fits it
        if constexpr (BM == 128 && BN == 256) {
            if (hkg_dyn_smem() >= hkg_wgmma<TA>::SHARED &&
                hkw_fits(a, b, m, n, k, sam, sak, sbk, sbn, blockIdx.y * BM, blockIdx.x * BN)) {
                hkg_wgmma<TA> p;
                if (sak == 1 && sbk == 1)
                    p.template run<true, true>(a, b, c, k, sam, sak, sbk, sbn, ldc, alpha, beta);
                else if (sak == 1)
                    p.template run<true, false>(a, b, c, k, sam, sak, sbk, sbn, ldc, alpha, beta);
                else if (sbk == 1)
                    p.template run<false, true>(a, b, c, k, sam, sak, sbk, sbn, ldc, alpha, beta);
                else
                    p.template run<false, false>(a, b, c, k, sam, sak, sbk, sbn, ldc, alpha, beta);
                return;
            }
        }
#endif
        if (hkg_dyn_smem() >= hkg_mma<TA, BM, BN>::SHARED) {
            hkg_mma<TA, BM, BN> p;
            p.run(a, b, c, m, n, k, sam, sak, sbk, sbn, ldc, alpha, beta);
            return;
        }
    }
    // f32: the cp.async-fed SIMT tile when the launch brought its stages
    if constexpr (sizeof(TA) == 4 && BM == 128 && BN == 128) {
        if (hkg_dyn_smem() >= hkg_sgemm<HKS_BK, HKS_STAGES, HKS_W>::SHARED) {
            hkg_sgemm<HKS_BK, HKS_STAGES, HKS_W> p;
            p.run(a, b, c, m, n, k, sam, sak, sbk, sbn, ldc, alpha, beta);
            return;
        }
    }
#elif defined(HKG_MFMA)
    if constexpr (hkg_half<TA>::v || sizeof(TA) == 4) {
        hkg_tiled<hkg_mfma<BM, BN>, TA, BM, BN>(a, b, c, m, n, k, sam, sak, sbk, sbn, ldc, alpha, beta);
    } else
#endif
    {
        typedef typename hkg_acc<TA>::A A;
        hkg_tiled<hkg_simt<A, BM, BN>, A, BM, BN>(a, b, c, m, n, k, sam, sak, sbk, sbn, ldc, alpha, beta);
    }
}

// MINB blocks per multiprocessor: 2 caps registers at 128 a thread (the
// f16/bf16 and f32 tiles fit; f64's 128 x 128 accumulators alone need 128).
#define HKG_KERNEL(name, BM, BN, MINB, TA, TC, S)                                                            \
    extern "C" __global__ void __launch_bounds__(HKG_THREADS, MINB)                                          \
        name(const TA *a, const TA *b, TC *c, int m, int n, int k, long long sam, long long sak,             \
             long long sbk, long long sbn, long long ldc, long long bsa, long long bsb, long long bsc,        \
             S alpha, S beta)                                                                                \
    {                                                                                                        \
        hkg_gemm<BM, BN>(a, b, c, m, n, k, sam, sak, sbk, sbn, ldc, bsa, bsb, bsc, alpha, beta);             \
    }
// The big tile is 128 x 256 for f16/bf16 (the tensor cores' warp tile of
// 64 x 64), 128 x 128 for f32 and f64; plugins/gemm/gemm.c knows the same.
#define HKG_PAIR(in, out, BN, MINB, TA, TC, S)                                                               \
    HKG_KERNEL(gemm_##in##_##out, 128, BN, MINB, TA, TC, S)                                                  \
    HKG_KERNEL(gemm64_##in##_##out, 64, 64, 2, TA, TC, S)

HKG_PAIR(f32, f32, 128, 2, float, float, float)
HKG_PAIR(f64, f64, 128, 1, double, double, double)
HKG_PAIR(f16, f16, 256, 1, __half, __half, float)
HKG_PAIR(f16, f32, 256, 1, __half, float, float)
HKG_PAIR(bf16, bf16, 256, 1, __hip_bfloat16, __hip_bfloat16, float)
HKG_PAIR(bf16, f32, 256, 1, __hip_bfloat16, float, float)

// gemm_pack_f32(x, y, rows, cols, sr, sc, ldy, bsx, bsy): the operand
// X(r, c) = x[z * bsx + r * sr + c * sc] copied to y[z * bsy + c * ldy + r],
// so that r runs with unit stride. matmul packs a large f32 product's
// row-major A (or transposed B) this way on NVIDIA, where the cp.async tile
// copies only such operands in 16-byte runs (gemm-notes.md v11). 32 x 32
// tiles through shared memory, so that both the reads (along c) and the
// writes (along r) are whole lines: block {32, 8}, grid {ceil(cols / 32),
// ceil(rows / 32), batch}.
extern "C" __global__ void __launch_bounds__(256)
    gemm_pack_f32(const float *x, float *y, int rows, int cols, long long sr, long long sc, long long ldy,
                  long long bsx, long long bsy)
{
    __shared__ float tile[32][33]; // 33: a column of the tile spans every bank
    const long long r0 = blockIdx.y * 32LL, c0 = blockIdx.x * 32LL;
    x += blockIdx.z * bsx;
    y += blockIdx.z * bsy;
    for (int q = threadIdx.y; q < 32; q += 8)
        if (r0 + q < rows && c0 + threadIdx.x < cols)
            tile[q][threadIdx.x] = x[(r0 + q) * sr + (c0 + threadIdx.x) * sc];
    __syncthreads();
    for (int q = threadIdx.y; q < 32; q += 8)
        if (c0 + q < cols && r0 + threadIdx.x < rows)
            y[(c0 + q) * ldy + r0 + threadIdx.x] = tile[threadIdx.x][q];
}

// gemm_splitk_f32(w, c, m, n, ldc, parts, alpha, beta): C(i, j) =
// alpha * sum over z < parts of w[z * m * n + i * n + j] + beta * C(i, j),
// C(i, j) = c[i * ldc + j]; beta == 0 never reads C. The second half of a
// product split along k (matmul: a batch of `parts` products of k / parts
// into w, where too few 128 x 128 tiles would leave SMs idle). Block 256,
// grid {ceil(n / 256), m}.
extern "C" __global__ void __launch_bounds__(256)
    gemm_splitk_f32(const float *w, float *c, int m, int n, long long ldc, int parts, float alpha, float beta)
{
    const long long i = blockIdx.y, j = blockIdx.x * 256LL + threadIdx.x;
    if (i >= m || j >= n)
        return;
    const long long plane = (long long)m * n;
    float s = 0.0f;
    for (int z = 0; z < parts; z++)
        s += w[z * plane + i * n + j];
    float *p = c + i * ldc + j;
    *p = beta == 0.0f ? alpha * s : alpha * s + beta * *p;
}
