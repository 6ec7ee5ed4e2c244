// v19 (docs/families/quantized-notes.md): the staged matvec with its
// weights streamed by the copy engine instead of the lanes. Compiled by
// quantized_probe.lua after quantized.hip's shared code (hkq_stage,
// hkq_stage_x, hkq_staged_group and the dot products are those of the op).
//
// Each warp owns a ring of HK9_K stages in shared memory, a chunk of one
// of its rows each. Lane 0 starts a stage's copy with one bulk copy
// (cp.async.bulk, sm_90) that completes on the stage's mbarrier; the warp
// waits on that barrier, sums the chunk, and lane 0 refills the stage with
// the chunk HK9_K items ahead. No lane holds weights in registers and no
// lane copies them, so the per-chunk work of the register path (predicated
// 16-byte loads and stores, their addresses) is gone, and HK9_K - 1 chunks
// stay in flight while one is summed. Elsewhere (the CPU backend) a fetch
// is the warp's own copy and a wait a __syncwarp: the same indexing, which
// quantized_tma_check.lua runs there.
#ifndef HK9_K
#define HK9_K 3
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define HK9_TMA 1
#else
#define HK9_TMA 0
#endif

__device__ inline unsigned hk9_smem(const void *p)
{
#if HK9_TMA
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
#else
    return (unsigned)(unsigned long long)p;
#endif
}
// n16 16-byte pieces from src to dst, completing on bar (lane 0 starts it);
// elsewhere the warp copies them now
__device__ inline void hk9_fetch(uint4 *dst, const uint4 *src, unsigned n16, unsigned long long *bar, unsigned lane)
{
#if HK9_TMA
    if (lane == 0) {
        // the warp's last reads of dst (generic proxy) before the copy engine's writes
        asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :
                     : "r"(hk9_smem(bar)), "r"(n16 * 16u)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :
                     : "r"(hk9_smem(dst)), "l"(src), "r"(n16 * 16u), "r"(hk9_smem(bar))
                     : "memory");
    }
#else
    (void)bar;
    for (unsigned u = lane; u < n16; u += HKQ_WARP)
        dst[u] = src[u];
#endif
}
// wait until the copy into the stage of bar, phase parity ph, has landed
__device__ inline void hk9_wait(unsigned long long *bar, unsigned ph)
{
#if HK9_TMA
    unsigned done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(hk9_smem(bar)), "r"(ph)
                     : "memory");
    } while (!done);
#else
    (void)bar;
    (void)ph;
    __syncwarp();
#endif
}
__device__ inline void hk9_init(unsigned long long *bar, int n, unsigned lane)
{
#if HK9_TMA
    if (lane == 0) {
        for (int s = 0; s < n; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" : : "r"(hk9_smem(bar + s)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" : : : "memory");
    }
#else
    (void)bar;
    (void)n;
    (void)lane;
#endif
    __syncwarp();
}

// Dynamic shared memory: x as hkq_stage_x stages it, x's sums (cols / 16
// words), then each warp's HK9_K stages (SEG16 + 1 pieces: hkq_words
// reads a word past a block) and barriers. Rows of at most HKQ_XMAX
// columns, whole 16-byte pieces (hkq_can_stage); the caller checks.
template <int F, int X8>
__device__ void hk9_matvec(const void *w, const void *x, float *y, int rows, int cols)
{
    typedef hkq_stage<F, X8> S;
    typedef hkq_fmt<F> Q;
    extern __shared__ uint4 hk9_dyn[];
    const unsigned nw = blockDim.x / HKQ_WARP, warp = threadIdx.x / HKQ_WARP, lane = threadIdx.x % HKQ_WARP;
    uint4 *xsm = hk9_dyn;
    float *xsum = (float *)(xsm + S::XWORDS / 4);
    uint4 *ring = (uint4 *)(xsum + HKQ_XMAX / 16);
    unsigned long long *bars = (unsigned long long *)(ring + nw * HK9_K * (S::SEG16 + 1));
    uint4 *stg = ring + warp * HK9_K * (S::SEG16 + 1);
    unsigned long long *bar = bars + warp * HK9_K;

    const unsigned nchunks = ((unsigned)cols + S::CHUNK - 1) / S::CHUNK;
    const unsigned rb16 = (unsigned)cols / Q::BLOCK * Q::BYTES / 16;
    const unsigned last16 = rb16 - (nchunks - 1) * S::SEG16;
    const unsigned lastg = ((unsigned)cols - (nchunks - 1) * S::CHUNK) / 32;
    const uint4 *wp = (const uint4 *)w;
    const unsigned long long stride = (unsigned long long)gridDim.x * nw, row0 = (unsigned long long)blockIdx.x * nw + warp;
    const unsigned long long items = row0 < (unsigned)rows ? ((unsigned)rows - row0 + stride - 1) / stride * nchunks : 0;

    hk9_init(bar, HK9_K, lane);
    // the issue side's position: item fi is chunk fc of row fr
    unsigned long long fi = 0, fr = row0;
    unsigned fc = 0;
    for (; fi < items && fi < HK9_K; fi++) { // the first stages in flight while x is staged
        hk9_fetch(stg + fi * (S::SEG16 + 1), wp + fr * rb16 + fc * S::SEG16, fc + 1 == nchunks ? last16 : S::SEG16,
                  bar + fi, lane);
        if (++fc == nchunks)
            fc = 0, fr += stride;
    }
    const int bad = hkq_stage_x<F, X8, 0>(x, cols, xsm, xsum, (int *)xsum);
    if (bad) { // inf or NaN in x's sums: the unstaged path, once the copies in flight have landed
        for (unsigned long long i = 0; i < fi; i++)
            hk9_wait(bar + i % HK9_K, (unsigned)(i / HK9_K) & 1u);
        for (unsigned long long row = row0; row < (unsigned)rows; row += stride)
            hkq_matvec_row<F>(w, (const float *)x, y, row, cols, lane);
        return;
    }
    float acc = 0.0f;
    unsigned long long row = row0;
    unsigned c = 0, s = 0, ph = 0;
    for (unsigned long long i = 0; i < items; i++) {
        hk9_wait(bar + s, ph);
        const hkq_u8 *seg = (const hkq_u8 *)(stg + s * (S::SEG16 + 1));
        const bool lastc = c + 1 == nchunks;
        const unsigned gx0 = c * (S::CHUNK / 32);
#if defined(__CUDA_ARCH__) || defined(__AMDGCN_WAVEFRONT_SIZE)
        if (!lastc) {
#pragma unroll
            for (unsigned u = 0; u < S::CHUNK / 32 / HKQ_WARP; u++)
                acc += hkq_staged_group<F, X8, 0>(seg, lane + u * HKQ_WARP, gx0, xsm, x, xsum, (int *)xsum);
        } else
#endif
        {
            const unsigned groups = lastc ? lastg : S::CHUNK / 32;
            for (unsigned g = lane; g < groups; g += HKQ_WARP)
                acc += hkq_staged_group<F, X8, 0>(seg, g, gx0, xsm, x, xsum, (int *)xsum);
        }
        __syncwarp(); // every lane is done with the stage
        if (fi < items) { // refill it with the item HK9_K ahead
            hk9_fetch(stg + s * (S::SEG16 + 1), wp + fr * rb16 + fc * S::SEG16, fc + 1 == nchunks ? last16 : S::SEG16,
                      bar + s, lane);
            fi++;
            if (++fc == nchunks)
                fc = 0, fr += stride;
        }
        if (lastc) {
            for (int off = HKQ_WARP / 2; off > 0; off /= 2)
                acc += __shfl_xor(acc, off);
            if (lane == 0)
                y[row] = acc;
            acc = 0.0f;
            row += stride;
            c = 0;
        } else {
            c++;
        }
        if (++s == HK9_K)
            s = 0, ph ^= 1u;
    }
}
