// The f32-x matvec with x in registers (versions v8 and v9 of
// docs/families/quantized-notes.md), an experiment the probe compiles
// after kernels/quantized/quantized.hip's shared code (hkq_dotf, hkq_sum4,
// HKQ_ROWS): measured slower than the op's staged path on the H100, so no
// part of the family's kernels. scripts-lua/bench/quantized_probe.lua
// instantiates hkq_matvec_xr_any<F> as mvx_<fmt> and checks each result
// against the op's.
//
// For q4_0, q8_0, q4_K and q6_K where cols is P * G * 32 * warpSize (P in
// 2, 4, 8 warps; G 1 or 2 groups a lane). The staged path reads a group's
// 32 x values (128 bytes a lane) from shared memory for every row, about
// 4x the shared traffic of the group's weight bytes. Here the block's
// warps split the columns in P parts; lane l of a warp keeps the x of its
// part's groups l, l + warpSize, ... (G of them) in registers for the
// whole launch, so a row costs only its weight bytes in shared memory.
// Each warp walks batches of R rows (a row set of nw / P warps shares a
// batch, one part each; R per format, hkq_xr_on): the R rows' slices
// (whole 16-byte pieces, spread evenly over the lanes) are loaded into
// registers one batch ahead, stored into the warp's shared segment and
// summed from there against the x registers. A lane's R partial sums are
// then reduced across the warp in R - 1 + log2(warpSize / R) shuffles
// (each step a lane keeps half its rows and adds its partner's copies of
// them), and the P parts of a row through shared memory, one block
// barrier per batch. (v8, commit "quantized: v8 ..." on branch quant3,
// loaded one row at a time, HKQ_XR_A rows ahead.)
#ifndef HKQ_XR
#define HKQ_XR 1 // 0: mvx_ takes the path for any shape
#endif
#ifndef HKQ_XR_R
#define HKQ_XR_R 0 // if not 0: at most this many rows in a warp's batch (else the format's, hkq_xr_on R)
#endif
#ifndef HKQ_XR_MINB
#define HKQ_XR_MINB 2 // __launch_bounds__'s blocks an SM (2: at most 128 registers on an H100)
#endif
#ifndef HKQ_XR_G2FIRST
#define HKQ_XR_G2FIRST 0 // 1: where two shapes fit cols, G = 2 (fewer parts) first
#endif
#if defined(__CUDA_ARCH__)
#define HKQ_WMAX 32 // the largest warp it runs on
#else
#define HKQ_WMAX 64
#endif

// GMAX: the most groups a lane takes (q6_K's 1024-column slices are no
// whole 16-byte pieces on warps of 32: it needs 2)
template <int F> struct hkq_xr_on { enum { ON = 0, GMAX = 0, R = 1 }; };
template <> struct hkq_xr_on<HKQ_Q4_0> { enum { ON = 1, GMAX = 1, R = 8 }; };
template <> struct hkq_xr_on<HKQ_Q8_0> { enum { ON = 1, GMAX = 1, R = 4 }; };
template <> struct hkq_xr_on<HKQ_Q4_K> { enum { ON = 1, GMAX = 1, R = 8 }; };
template <> struct hkq_xr_on<HKQ_Q6_K> { enum { ON = 1, GMAX = 2, R = 2 }; };

// R sums v of a lane, each summed over the warp: returns the sum of the
// row *slot and leaves it in every lane whose slot that is.
template <int R> __device__ inline float hkq_xr_reduce(float *v, int lane, int *slot)
{
    int m = warpSize / 2, s = 0;
#pragma unroll
    for (int h = R / 2; h >= 1; h /= 2, m /= 2) {
        const bool up = (lane & m) != 0;
#pragma unroll
        for (int i = 0; i < h; i++) {
            const float keep = up ? v[i + h] : v[i], send = up ? v[i] : v[i + h];
            v[i] = keep + __shfl_xor(send, m);
        }
        s += up ? h : 0;
    }
    float t = v[0];
    for (; m >= 1; m /= 2)
        t += __shfl_xor(t, m);
    *slot = s;
    return t;
}

template <int F, int G> struct hkq_xr {
    typedef hkq_fmt<F> Q;
    enum {
        R = HKQ_XR_R && HKQ_XR_R < hkq_xr_on<F>::R ? HKQ_XR_R : hkq_xr_on<F>::R,
        // a lane's 16-byte pieces of R rows' slices (the same count on any warp size)
        WL = (R * G * 32 * Q::BYTES + Q::BLOCK * 16 - 1) / (Q::BLOCK * 16),
    };
    static_assert((R & (R - 1)) == 0 && R <= 32, "rows a warp sums: a power of 2");
    uint4 wr[WL];
    // pieces u of the R rows from row0 (rows past `left` rows are not read):
    // piece q = lane + u * warpSize is piece q % s16 of row q / s16
    __device__ void load(const hkq_u8 *wp, long long rb, long long left, int s16, int lane)
    {
        for (int u = 0; u < WL; u++) {
            const int q = lane + u * warpSize, i = q / s16;
            if (q < R * s16 && i < left)
                wr[u] = *(const uint4 *)(wp + i * rb + 16 * (q - i * s16));
        }
    }
    __device__ void store(uint4 *seg, int s16, int lane) const
    {
        for (int u = 0; u < WL; u++)
            if (lane + u * warpSize < R * s16)
                seg[lane + u * warpSize] = wr[u];
    }
};

// The segments of a block's warps (R rows' slices each, + 1 piece:
// hkq_words reads a word past a block; the same bytes for a block of 256
// threads on any warp size) and the parts of its rows' sums ([batch
// parity][warp][row]): one per format, whatever G.
template <int F> struct hkq_xr_smem {
    enum {
        R = hkq_xr<F, 1>::R,
        SEG16 = 256 * R * hkq_xr_on<F>::GMAX * 32 / hkq_fmt<F>::BLOCK * hkq_fmt<F>::BYTES / 16 + HKQ_ROWS,
    };
    uint4 seg[SEG16];
    float red[2][HKQ_ROWS][R];
};
template <int F> __device__ hkq_xr_smem<F> *hkq_xr_shared()
{
    __shared__ hkq_xr_smem<F> sm;
    return &sm;
}

template <int F, int G>
__device__ void hkq_matvec_xr(const void *w, const float *x, float *y, int rows, int cols, int P)
{
    typedef hkq_xr<F, G> S;
    typedef hkq_fmt<F> Q;
    enum { R = S::R };
    hkq_xr_smem<F> *sm = hkq_xr_shared<F>();
    const int nw = blockDim.x / warpSize, warp = threadIdx.x / warpSize, lane = threadIdx.x % warpSize;
    const int part = warp % P, set = warp / P, nsets = nw / P;
    const int sbytes = G * 32 * warpSize / Q::BLOCK * Q::BYTES, s16 = sbytes / 16;
    uint4 *seg = sm->seg + warp * (R * s16 + 1);
    const long long rb = (long long)(cols / Q::BLOCK) * Q::BYTES;
    const long long step = (long long)gridDim.x * nsets * R; // rows of all blocks' batches
    const hkq_u8 *wp = (const hkq_u8 *)w + (long long)part * sbytes;
    S st;
    long long r0 = (long long)blockIdx.x * nsets * R + set * R; // this warp's first row of a batch
    if (r0 < rows) // the first batch's loads in flight while x is read
        st.load(wp + r0 * rb, rb, rows - r0, s16, lane);
    float4 xr[G][8]; // x of this lane's groups, and (q4_K) the sums of their halves
    float xsum[G][2];
    for (int k = 0; k < G; k++) {
        const float4 *xp = (const float4 *)(x + 32LL * (((long long)part * G + k) * warpSize + lane));
        for (int j = 0; j < 8; j++)
            xr[k][j] = xp[j];
        xsum[k][0] = (hkq_sum4(xr[k][0]) + hkq_sum4(xr[k][1])) + (hkq_sum4(xr[k][2]) + hkq_sum4(xr[k][3]));
        xsum[k][1] = (hkq_sum4(xr[k][4]) + hkq_sum4(xr[k][5])) + (hkq_sum4(xr[k][6]) + hkq_sum4(xr[k][7]));
    }
    const hkq_u8 *sr = (const hkq_u8 *)seg;
    int par = 0; // red's half this batch
    for (long long b0 = (long long)blockIdx.x * nsets * R; b0 < rows; b0 += step, r0 += step, par ^= 1) {
        // b0 is the same for every warp of the block: the barrier below is safe
        float acc[R];
        const long long left = rows - r0; // this warp's rows of the batch that exist (maybe none)
        if (left > 0) {
            __syncwarp(); // every lane is done reading the last batch
            st.store(seg, s16, lane);
            __syncwarp();
        }
        if (r0 + step < rows) // in flight while this batch is summed
            st.load(wp + (r0 + step) * rb, rb, rows - r0 - step, s16, lane);
#pragma unroll
        for (int i = 0; i < R; i++) {
            acc[i] = 0.0f;
            if (i < left)
                for (int k = 0; k < G; k++) {
                    const int sg = k * warpSize + lane;
                    acc[i] += hkq_dotf<F>::run(sr + i * sbytes + sg / (Q::BLOCK / 32) * Q::BYTES,
                                               sg % (Q::BLOCK / 32), (const float *)xr[k], xsum[k]);
                }
        }
        int slot;
        const float t = hkq_xr_reduce<R>(acc, lane, &slot);
        if ((lane & (warpSize / R - 1)) == 0)
            sm->red[par][warp][slot] = t;
        __syncthreads(); // the parts of the batch's rows are in red[par] (read before the next barrier)
        if ((int)threadIdx.x < nsets * R && b0 + threadIdx.x < rows) {
            const int s = threadIdx.x / R, i = threadIdx.x % R;
            float v = 0.0f;
            for (int p = 0; p < P; p++)
                v += sm->red[par][s * P + p][i];
            y[b0 + threadIdx.x] = v;
        }
    }
}

// The path where it applies (returns whether it ran): cols = P * G * 32
// * warpSize, a part's slice of a row whole 16-byte pieces, w and x
// 16-byte aligned, warps of 32 ... HKQ_WMAX.
template <int F, int ON = hkq_xr_on<F>::ON> struct hkq_xr_try {
    static __device__ bool run(const void *, const float *, float *, int, int) { return false; }
};
template <int F> struct hkq_xr_try<F, 1> {
    static __device__ bool run(const void *w, const float *x, float *y, int rows, int cols)
    {
        typedef hkq_fmt<F> Q;
        enum { GMAX = hkq_xr_on<F>::GMAX };
        const int nw = blockDim.x / warpSize;
        if (!HKQ_XR || warpSize < 32 || warpSize > HKQ_WMAX || blockDim.x > 256 || blockDim.x % warpSize ||
            ((unsigned long long)w & 15) || ((unsigned long long)x & 15))
            return false;
        for (int t = 0; t < 6; t++) {
            const int G = (t / 3 == 0) == (HKQ_XR_G2FIRST == 0) ? 1 : 2, P = 2 << (t % 3);
            if (G > GMAX || nw % P || cols != P * G * 32 * warpSize ||
                (G * 32 * warpSize / Q::BLOCK * Q::BYTES) % 16)
                continue;
            if (G == GMAX)
                hkq_matvec_xr<F, GMAX>(w, x, y, rows, cols, P);
            else
                hkq_matvec_xr<F, 1>(w, x, y, rows, cols, P);
            return true;
        }
        return false;
    }
};

template <int F>
__device__ void hkq_matvec_xr_any(const void *w, const float *x, float *y, int rows, int cols)
{
    if (hkq_xr_try<F>::run(w, x, y, rows, cols))
        return;
    const int lane = threadIdx.x % warpSize, nw = blockDim.x / warpSize;
    for (long long row = (long long)blockIdx.x * nw + threadIdx.x / warpSize; row < rows;
         row += (long long)gridDim.x * nw)
        hkq_matvec_row<F>(w, x, y, row, cols, lane);
}

