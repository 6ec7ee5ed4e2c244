// v20 (docs/families/quantized-notes.md): a lane a row. Compiled by
// quantized_probe.lua after quantized.hip's shared code (hkq_stage_x and
// the dot products hkq_dotf are those of the op).
//
// In the op's staged path lane l sums groups l, l + 32, ... of one row, so
// the 32 lanes read 32 different groups of x from shared memory: each
// LDS.128 of x is 512 bytes, 4 wavefronts, 4 bytes of shared traffic a
// weight, and Nsight Compute puts short-scoreboard stalls (shared-memory
// results) first. Here a warp takes a tile of HKQ_WARP rows, lane r row r,
// and all lanes walk the same columns: each read of x is one address (a
// broadcast, one wavefront), and a lane's sum is its row's, with no
// shuffles. The warps of a block split the tile's columns, HKR_CH a step;
// their partial rows meet in shared memory once a tile (one block barrier).
// A step: the warp copies its rows' segments, loaded into registers
// during the previous step, into its shared stage (a row hkr_geo::PW words, an
// odd number, so that the lanes' 32-bit reads fall in 32 different banks),
// issues the next step's loads, and sums.
// HKR_XG: x read from global memory where it is (uniform addresses, L1),
// leaving shared memory to the stages (q4_0, q8_0: formats without x's
// staged sums).
#ifndef HKR_CH
#define HKR_CH 256 // columns a step (q8_0: HKR_CH8)
#endif
#ifndef HKR_CH8
#define HKR_CH8 128
#endif
#ifndef HKR_XG
#define HKR_XG 0
#endif
#ifndef HKR_UNROLL
#define HKR_UNROLL 8 // groups of a step summed unrolled (all of a 256-column step)
#endif
static constexpr int hkr_unroll = HKR_UNROLL; // (a pragma's argument is not macro-expanded)
#ifndef HKR_WB
#define HKR_WB 8 // warps a block (the probe's launch bounds)
#endif
#ifndef HKR_MINB
#define HKR_MINB 1
#endif

template <int F> struct hkr_geo {
    typedef hkq_fmt<F> Q;
    enum {
        CH = F == HKQ_Q8_0 ? HKR_CH8 : Q::BLOCK > HKR_CH ? Q::BLOCK : HKR_CH,
        SEGB = CH / Q::BLOCK * Q::BYTES, // bytes of a row's step
        PB = SEGB % 16 == 0 ? 16 : SEGB % 8 == 0 ? 8 : 4, // bytes a load
        PIECES = SEGB / PB,
        PW = SEGB / 4 + 1, // words of a staged row (+ 1: hkq_words reads a word past a block)
    };
    static_assert(SEGB % 4 == 0 && CH % Q::BLOCK == 0, "a step is whole blocks and words");
    static_assert(PW % 2 == 1, "an odd row pitch: lane r's word k in bank (r PW + k) mod 32");
};
template <int PB> struct hkr_piece;
template <> struct hkr_piece<16> { typedef uint4 T; };
template <> struct hkr_piece<8> { typedef uint2 T; };
template <> struct hkr_piece<4> { typedef unsigned T; };

template <int F>
__device__ void hkr_matvec(const void *w, const float *x, float *y, int rows, int cols)
{
    typedef hkr_geo<F> G;
    typedef hkq_fmt<F> Q;
    typedef typename hkr_piece<G::PB>::T P;
    extern __shared__ uint4 hkr_dyn[];
    const unsigned nw = blockDim.x / HKQ_WARP, warp = threadIdx.x / HKQ_WARP, lane = threadIdx.x % HKQ_WARP;
    uint4 *xsm = hkr_dyn;
    float *xsum = (float *)(xsm + (HKR_XG ? 0 : HKQ_XMAX / 32 * 36 / 4));
    float *red = xsum + HKQ_XMAX / 16;
    hkq_u32 *ws = (hkq_u32 *)(red + 2 * nw * HKQ_WARP) + warp * (HKQ_WARP * G::PW + 1);
    const unsigned nsteps = (unsigned)cols / G::CH;
    const unsigned long long rbp = (unsigned long long)cols / Q::BLOCK * Q::BYTES / G::PB; // a row's pieces
    const unsigned ntiles = ((unsigned)rows + HKQ_WARP - 1) / HKQ_WARP;
    const P *wp = (const P *)w;
    P wr[G::PIECES]; // a tile's step is HKQ_WARP x PIECES pieces: PIECES a lane
    // the warp's (tile, step) item into registers: piece i = lane + u HKQ_WARP
    // of the tile's HKQ_WARP x PIECES
    auto load = [&](unsigned t, unsigned s) {
#pragma unroll
        for (unsigned u = 0; u < G::PIECES; u++) {
            const unsigned i = lane + u * HKQ_WARP, r = i / G::PIECES, p = i % G::PIECES;
            const unsigned long long row = (unsigned long long)t * HKQ_WARP + r;
            wr[u] = row < (unsigned)rows ? wp[row * rbp + (unsigned long long)s * G::PIECES + p] : P();
        }
    };
    auto store = [&]() {
#pragma unroll
        for (unsigned u = 0; u < G::PIECES; u++) {
            const unsigned i = lane + u * HKQ_WARP, r = i / G::PIECES, p = i % G::PIECES;
            const hkq_u32 *v = (const hkq_u32 *)&wr[u];
#pragma unroll
            for (int k = 0; k < G::PB / 4; k++) // 32-bit stores: rows are PW words apart (odd)
                ws[r * G::PW + p * (G::PB / 4) + k] = v[k];
        }
    };
    if (blockIdx.x < ntiles && warp < nsteps)
        load(blockIdx.x, warp);
    int bad;
    if (HKR_XG)
        bad = hkq_stage_x<F, 0, 1>(x, cols, xsm, xsum, nullptr);
    else
        bad = hkq_stage_x<F, 0, 0>(x, cols, xsm, xsum, nullptr);
    if (bad) { // an inf or NaN sum of x: each weight's value times x
        for (long long row = (long long)blockIdx.x * nw + warp; row < rows; row += (long long)gridDim.x * nw)
            hkq_matvec_row<F>(w, x, y, row, cols, lane);
        return;
    }
    const hkq_u8 *mine = (const hkq_u8 *)(ws + lane * G::PW);
    unsigned par = 0;
    for (unsigned t = blockIdx.x; t < ntiles; t += gridDim.x) {
        float acc = 0.0f;
        for (unsigned s = warp; s < nsteps; s += nw) {
            __syncwarp(); // every lane is done reading the last stage
            store();
            __syncwarp();
            unsigned ns = s + nw, nt = t;
            if (ns >= nsteps) {
                ns = warp;
                nt += gridDim.x;
            }
            if (nt < ntiles) // in flight while this step is summed
                load(nt, ns);
            const unsigned gx0 = s * (G::CH / 32);
#pragma unroll hkr_unroll
            for (unsigned g = 0; g < G::CH / 32; g++)
                acc += hkq_staged_group<F, 0, HKR_XG>(mine, g, gx0, xsm, x, xsum, nullptr);
        }
        red[(par * nw + warp) * HKQ_WARP + lane] = acc;
        __syncthreads();
        if (warp == 0) {
            float v = 0.0f;
            for (unsigned k = 0; k < nw; k++)
                v += red[(par * nw + k) * HKQ_WARP + lane];
            const unsigned long long row = (unsigned long long)t * HKQ_WARP + lane;
            if (row < (unsigned)rows)
                y[row] = v;
        }
        par ^= 1; // the next tile's partials go to the other half: one barrier a tile
    }
}
