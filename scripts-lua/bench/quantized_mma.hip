// The f32-x matvec on integer tensor cores (v16, 2026-11-27; notes in
// docs/families/quantized-notes.md), compiled by quantized_probe.lua and
// quantized_mma_check.lua after kernels/quantized/quantized.hip's shared
// code and launched as mvi_<fmt> (q4_0, q8_0, q4_K, q6_K). NVIDIA sm_80+
// (mma.sync.m16n8k32 with s8/u8 operands); HKM_EMU emulates the mma for
// the CPU backend. Measured on the H100 at 7.15 M warp instructions for
// q4_0 against the op's 11.45 M, but no faster: latency-bound (10 cycles a
// warp per instruction, SMs busy 23.8-31.6 K of 35.6 K cycles), so not in
// the family's kernels.
//
// Why: the op's f32-x matvec spends ~3.5 instructions a weight (a float built
// from each integer, an FMA) and is bound by their issue (quantized-notes,
// v15). Here the products run on the tensor cores as exact integers:
// mma.sync.m16n8k32 (s32 += u8/s8 x s8) multiplies a 16-row tile's 32
// weights of a group (A: the format's integers, unscaled) by x's group as
// four signed base-256 digits (B: columns 0-3 hold digit planes 0-3). x's
// group is scaled by a power of two 2^s so its largest |x| lies in
// [2^29, 2^30) and rounded to an integer there: x to 2^-30 of its group's
// largest value, then exact integer products and sums; the group's result
// sum_j 256^j C_j is one I2F and one FMA by the row's scale (d, d * sc) and
// 2^-s. A lane (g = lane / 4, t = lane % 4) holds rows g and g + 8 and the
// output columns 2t, 2t + 1: t = 0 digits 0, 1, t = 1 digits 2, 3 (t = 2,
// 3 copies, or for q6_K, whose scales change every 16 weights, the second
// half: columns 0-3 take x's digits of k < 16, columns 4-7 those of k >=
// 16). Biases (q4_0's n - 8, q6_K's q - 32) start the accumulator at
// -bias * sum of the digits. A dot product does not care about the order
// of k, so each lane reads its 4-byte words of a block where they are and
// B's words are stored in the same order.
//
// A block of HKM_W warps stages x once, then walks 16-row tiles
// (blockIdx.x, + gridDim.x, ...): a tile's chunk of columns is copied to
// shared memory by all threads (16-byte loads held in registers during the
// previous chunk's sums), each warp sums its slice of the chunk's groups,
// and the warps' partial rows meet in shared memory at the tile's end.
// NVIDIA sm_80 and later; HKM_EMU emulates the mma (and everything else
// runs as on the device) so the CPU backend can check the indexing.
#define HKM_W 8     // warps of a block: 256 threads
#define HKM_TILE 16 // rows of a tile, the mma's m
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HKM_ON 1
template <int SIGNED>
__device__ inline void hkm_mma(int *c, hkq_u32 a0, hkq_u32 a1, hkq_u32 a2, hkq_u32 a3, hkq_u32 b0, hkq_u32 b1)
{
    if (SIGNED)
        asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#elif defined(HKM_EMU)
#define HKM_ON 1
// each lane gathers the warp's fragments with shuffles and sums its four
// outputs: the layout of PTX's m16n8k32 (A row-major, B column-major)
template <int SIGNED>
__device__ inline void hkm_mma(int *c, hkq_u32 a0, hkq_u32 a1, hkq_u32 a2, hkq_u32 a3, hkq_u32 b0, hkq_u32 b1)
{
    int A[16][32], B[32][8];
    for (int s = 0; s < 32; s++) {
        const hkq_u32 r[6] = {(hkq_u32)__shfl((int)a0, s, 32), (hkq_u32)__shfl((int)a1, s, 32),
                              (hkq_u32)__shfl((int)a2, s, 32), (hkq_u32)__shfl((int)a3, s, 32),
                              (hkq_u32)__shfl((int)b0, s, 32), (hkq_u32)__shfl((int)b1, s, 32)};
        const int g = s / 4, t = s % 4;
        for (int e = 0; e < 4; e++) {
            const int k = 4 * t + e;
            for (int i = 0; i < 4; i++) {
                const hkq_u32 byte = (r[i] >> (8 * e)) & 0xffu;
                A[g + 8 * (i & 1)][k + 16 * (i >> 1)] = SIGNED ? (int)(signed char)byte : (int)byte;
            }
            B[k][g] = (signed char)(r[4] >> (8 * e));
            B[k + 16][g] = (signed char)(r[5] >> (8 * e));
        }
    }
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; i++) {
        const int m = g + 8 * (i / 2), n = 2 * t + i % 2;
        int sum = c[i];
        for (int k = 0; k < 32; k++)
            sum += A[m][k] * B[k][n];
        c[i] = sum;
    }
}
#else
#define HKM_ON 0
#endif

template <int F> struct hkm_fmt {
    enum { ON = 0 };
};
#if HKM_ON
// Per format: CH, the columns of a chunk (whole 16-byte pieces of a row;
// 16 rows of it and x's digits fit 48 KB of shared memory); SIGNED, A's
// integers signed (s8) or not (u8); BIAS, the integer subtracted from A's
// (its sum over x's digits starts the accumulator); HALF, scales per 16
// weights; MIN, a per-group offset (o * sum x). a() reads group j of a
// chunk's row r (in shared memory) for lane quad position t: A's words lo
// (k 4t..4t+3) and hi (k 16+4t..), the scale of this lane's columns and
// the offset term's factor.
// a 32-bit word at shared address p, 2-byte aligned (mis = 2) or 4: from
// aligned words. mis comes from the block's index, known after unrolling
// (a test of the address would stay a runtime one).
__device__ inline hkq_u32 hkm_w32(const hkq_u8 *p, unsigned mis)
{
    const hkq_u32 *a = (const hkq_u32 *)(p - mis);
    return mis ? (a[0] >> 16) | (a[1] << 16) : a[0];
}
#ifndef HKM_CH4
#define HKM_CH4 2048 // q4_0's and q4_K's chunk (the probe tries others)
#endif
// q4_0, q8_0: block j of a row (rows 16-byte aligned) starts 4-byte
// aligned where j is even, so its values 2 bytes in are not
template <> struct hkm_fmt<HKQ_Q4_0> {
    enum { ON = 1, CH = HKM_CH4, SIGNED = 0, BIAS = 8, HALF = 0, MIN = 0 };
    static __device__ void a(const hkq_u8 *r, unsigned j, unsigned t, hkq_u32 &lo, hkq_u32 &hi, float &sc, float &)
    {
        const hkq_u8 *b = r + 18 * j;
        const hkq_u32 w = hkm_w32(b + 2 + 4 * t, j & 1 ? 0 : 2); // nibbles of k 4t..4t+3 (low) and 16+4t.. (high)
        lo = w & 0x0F0F0F0Fu;
        hi = (w >> 4) & 0x0F0F0F0Fu;
        sc = hkq_h2f(b);
    }
};
template <> struct hkm_fmt<HKQ_Q8_0> {
    enum { ON = 1, CH = 1024, SIGNED = 1, BIAS = 0, HALF = 0, MIN = 0 };
    static __device__ void a(const hkq_u8 *r, unsigned j, unsigned t, hkq_u32 &lo, hkq_u32 &hi, float &sc, float &)
    {
        const hkq_u8 *b = r + 34 * j;
        const unsigned mis = j & 1 ? 0 : 2;
        lo = hkm_w32(b + 2 + 4 * t, mis);
        hi = hkm_w32(b + 18 + 4 * t, mis);
        sc = hkq_h2f(b);
    }
};
// q4_K: a 144-byte block is 16-byte aligned in shared memory; odd groups
// (high nibbles) are masked in place as 16 n, their scale divided by 16
template <> struct hkm_fmt<HKQ_Q4_K> {
    enum { ON = 1, CH = HKM_CH4, SIGNED = 0, BIAS = 0, HALF = 0, MIN = 1 };
    static __device__ void a(const hkq_u8 *r, unsigned j, unsigned t, hkq_u32 &lo, hkq_u32 &hi, float &sc, float &o)
    {
        const hkq_u8 *b = r + 144 * (j / 8);
        const unsigned gi = j % 8;
        const hkq_u32 *qs = (const hkq_u32 *)(b + 16 + 32 * (gi / 2));
        const hkq_u32 m = gi & 1 ? 0xF0F0F0F0u : 0x0F0F0F0Fu;
        lo = qs[t] & m;
        hi = qs[t + 4] & m;
        int s, mn;
        hkq_scale_min_k4((int)gi, b + 4, &s, &mn);
        sc = hkq_h2f(b) * (float)s * (gi & 1 ? 0.0625f : 1.0f);
        o = hkq_h2f(b + 2) * (float)mn;
    }
};
// q6_K: 6-bit q (low 4 bits in ql, high 2 in qh) less 32; a scale (int8)
// per 16: lanes t < 2 take the first half's, t >= 2 the second's
template <> struct hkm_fmt<HKQ_Q6_K> {
    enum { ON = 1, CH = 2048, SIGNED = 0, BIAS = 32, HALF = 1, MIN = 0 };
    static __device__ void a(const hkq_u8 *r, unsigned j, unsigned t, hkq_u32 &lo, hkq_u32 &hi, float &sc, float &)
    {
        const hkq_u8 *b = r + 210 * (j / 8);
        const unsigned gi = j % 8, n = gi / 4, k = gi % 4, nib = 4 * (k >> 1), hs = 2 * k;
        const hkq_u8 *ql = b + 64 * n + 32 * (k & 1), *qh = b + 128 + 32 * n;
        const unsigned mis = (j / 8) & 1 ? 2 : 0; // 210-byte blocks
        lo = ((hkm_w32(ql + 4 * t, mis) >> nib) & 0x0F0F0F0Fu) | (((hkm_w32(qh + 4 * t, mis) >> hs) & 0x03030303u) << 4);
        hi = ((hkm_w32(ql + 16 + 4 * t, mis) >> nib) & 0x0F0F0F0Fu) |
             (((hkm_w32(qh + 16 + 4 * t, mis) >> hs) & 0x03030303u) << 4);
        sc = hkq_h2f(b + 208) * (float)((const signed char *)b)[192 + 8 * n + 2 * k + (t >> 1)];
    }
};

template <int F> struct hkm_stage {
    typedef hkq_fmt<F> Q;
    typedef hkm_fmt<F> M;
    enum {
        SEG = M::CH / Q::BLOCK * Q::BYTES, // bytes of a row's chunk
        SEG16 = SEG / 16,
        PITCH16 = SEG16 | 1, // an odd number of 16-byte pieces a row: the 8 rows of a lane quad's reads in distinct banks
        WL = (HKM_TILE * SEG16 + 32 * HKM_W - 1) / (32 * HKM_W), // 16-byte pieces a thread copies
        GX = HKQ_XMAX / 32,                                       // x groups staged at most
    };
    static_assert(SEG % 16 == 0, "a chunk of a row is whole 16-byte pieces");
};

// x's group of 32 as digit planes: xp[32 G + 8 j + slot] holds digit j of
// x[4 q .. 4 q + 3], slot = 2 (q & 3) + (q >> 2) (a lane's two B words
// adjacent); xs: -BIAS * the sum of each plane's digits (HALF: of each
// half), xf[2 G + u] = 2^(16 u - s), xsum[G] the group's sum of x (MIN).
// Returns, the same in every thread, whether x holds an inf or NaN (the
// caller then takes the row path: f32's products, not a scaled integer).
template <int F> __device__ int hkm_stage_x(const float *x, int cols, hkq_u32 *xp, int *xs, float *xf, float *xsum)
{
    typedef hkm_fmt<F> M;
    int bad = 0;
    const unsigned n4 = (unsigned)cols / 4; // a multiple of 8: groups of 8 lanes stay whole
    for (unsigned base = 0; base < n4; base += blockDim.x) {
        const unsigned i = base + threadIdx.x, q = i % 8, G = i / 8;
        const bool in = i < n4;
        float4 v = in ? ((const float4 *)x)[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const hkq_u32 m4 = max(max(__float_as_uint(v.x) & 0x7fffffffu, __float_as_uint(v.y) & 0x7fffffffu),
                               max(__float_as_uint(v.z) & 0x7fffffffu, __float_as_uint(v.w) & 0x7fffffffu));
        hkq_u32 mb = m4;
        for (int o = 1; o < 8; o *= 2)
            mb = max(mb, (hkq_u32)__shfl_xor((int)mb, o));
        const bool fin = mb < 0x7f800000u;
        bad |= !fin;
        // largest |x| in [2^(e - 127), 2^(e - 126)): scaled into [2^29, 2^30)
        const int s = min(156 - (int)(mb >> 23), 126);
        const float sc = fin ? __int_as_float((s + 127) << 23) : 0.0f;
        const hkq_u32 d0 = ((hkq_u32)__float2int_rn(v.x * sc) + 0x80808080u) ^ 0x80808080u;
        const hkq_u32 d1 = ((hkq_u32)__float2int_rn(v.y * sc) + 0x80808080u) ^ 0x80808080u;
        const hkq_u32 d2 = ((hkq_u32)__float2int_rn(v.z * sc) + 0x80808080u) ^ 0x80808080u;
        const hkq_u32 d3 = ((hkq_u32)__float2int_rn(v.w * sc) + 0x80808080u) ^ 0x80808080u;
        // 4 x 4 byte transpose: plane j = byte j of d0..d3
        const hkq_u32 l01 = __byte_perm(d0, d1, 0x5140), l23 = __byte_perm(d2, d3, 0x5140);
        const hkq_u32 h01 = __byte_perm(d0, d1, 0x7362), h23 = __byte_perm(d2, d3, 0x7362);
        const hkq_u32 p[4] = {__byte_perm(l01, l23, 0x5410), __byte_perm(l01, l23, 0x7632),
                              __byte_perm(h01, h23, 0x5410), __byte_perm(h01, h23, 0x7632)};
        const unsigned slot = 2 * (q & 3) + (q >> 2);
        if (in)
            for (int j = 0; j < 4; j++)
                xp[32 * G + 8 * j + slot] = p[j];
        if (M::BIAS) {
            // two planes' digit sums (|sum| <= 4096) a 32-bit integer, sum
            // a + 65536 b: exact, and half the shuffles
            for (int j = 0; j < 4; j += 2) {
                int sum = hkq_dp4a(p[j], 0x01010101u, 0) + 65536 * hkq_dp4a(p[j + 1], 0x01010101u, 0);
                for (int o = 1; o < (M::HALF ? 4 : 8); o *= 2)
                    sum += __shfl_xor(sum, o);
                const int lo = (int)(short)(unsigned short)(sum & 0xffff), hi = (sum - lo) / 65536;
                if (in && (q & (M::HALF ? 3 : 7)) == 0) {
                    int *to = xs + (M::HALF ? 8 : 4) * G + (M::HALF ? 4 * (q >> 2) : 0) + j;
                    to[0] = -M::BIAS * lo;
                    to[1] = -M::BIAS * hi;
                }
            }
        }
        if (M::MIN) {
            float sum = hkq_sum4(v);
            for (int o = 1; o < 8; o *= 2)
                sum += __shfl_xor(sum, o);
            if (in && q == 0)
                xsum[G] = sum;
        }
        if (in && q == 0) {
            xf[2 * G] = __int_as_float((127 - s) << 23);
            xf[2 * G + 1] = __int_as_float((143 - s) << 23);
        }
    }
    return __syncthreads_or(bad);
}

// A thread's pieces of a chunk (16 rows of seg16 16-byte pieces): piece p
// = threadIdx.x + u * threads is row p / seg16, piece p % seg16 of it,
// walked incrementally (a division per piece and chunk showed in the
// instruction count). The copy is identical for every full chunk.
template <int F> struct hkm_copy {
    typedef hkm_stage<F> S;
    uint4 reg[S::WL];
    // SEG: the pieces of a row's chunk where known (a full chunk: the
    // divisions fold into constants), else 0 and seg16 says
    template <int SEG>
    __device__ void load(const uint4 *wp, unsigned tile, unsigned c, unsigned seg16, unsigned rb16, int rows)
    {
        const unsigned n = SEG ? SEG : seg16;
        unsigned r = threadIdx.x / n, k = threadIdx.x - r * n;
        const unsigned dr = 32 * HKM_W / n, dk = 32 * HKM_W - dr * n;
        const uint4 *p = wp + (unsigned long long)tile * HKM_TILE * rb16 + c * S::SEG16;
        const unsigned rmax = min((unsigned)HKM_TILE, (unsigned)rows - tile * HKM_TILE);
#pragma unroll
        for (int u = 0; u < S::WL; u++) {
            if (r < rmax)
                reg[u] = p[r * rb16 + k];
            k += dk;
            r += dr;
            if (k >= n) {
                k -= n;
                r++;
            }
        }
    }
    template <int SEG> __device__ void store(uint4 *wsm, unsigned seg16) const
    {
        const unsigned n = SEG ? SEG : seg16;
        unsigned r = threadIdx.x / n, k = threadIdx.x - r * n;
        const unsigned dr = 32 * HKM_W / n, dk = 32 * HKM_W - dr * n;
#pragma unroll
        for (int u = 0; u < S::WL; u++) {
            if (r < HKM_TILE)
                wsm[r * S::PITCH16 + k] = reg[u];
            k += dk;
            r += dr;
            if (k >= n) {
                k -= n;
                r++;
            }
        }
    }
    __device__ void load_any(const uint4 *wp, unsigned tile, unsigned c, unsigned seg16, unsigned rb16, int rows)
    {
        if (seg16 == S::SEG16)
            load<S::SEG16>(wp, tile, c, seg16, rb16, rows);
        else
            load<0>(wp, tile, c, seg16, rb16, rows);
    }
    __device__ void store_any(uint4 *wsm, unsigned seg16) const
    {
        if (seg16 == S::SEG16)
            store<S::SEG16>(wsm, seg16);
        else
            store<0>(wsm, seg16);
    }
};

// group j of the chunk for this lane's rows (r0: row g's segment, r1: row
// g + 8's); xp, xs, xf, xsum: the lane's entries of x's group
template <int F>
__device__ inline void hkm_group(const hkq_u8 *r0, const hkq_u8 *r1, unsigned j, unsigned t, const hkq_u32 *xp,
                                 const int *xs, const float *xf, const float *xsum, hkq_u32 bm0, hkq_u32 bm1,
                                 float &acc0, float &acc1)
{
    typedef hkm_fmt<F> M;
    hkq_u32 a0, a1, a2, a3;
    float s0, s1, o0 = 0.0f, o1 = 0.0f;
    M::a(r0, j, t, a0, a2, s0, o0);
    M::a(r1, j, t, a1, a3, s1, o1);
    const uint2 b = *(const uint2 *)xp;
    int c[4] = {0, 0, 0, 0};
    if (M::BIAS) {
        const int2 z = *(const int2 *)xs;
        c[0] = c[2] = z.x;
        c[1] = c[3] = z.y;
    }
    hkm_mma<M::SIGNED>(c, a0, a1, a2, a3, b.x & bm0, b.y & bm1);
    const float f = *xf;
    acc0 += (float)(c[0] + 256 * c[1]) * (s0 * f);
    acc1 += (float)(c[2] + 256 * c[3]) * (s1 * f);
    if (M::MIN && t == 0) { // o * sum x, once a row
        acc0 -= o0 * *xsum;
        acc1 -= o1 * *xsum;
    }
}

// the warp's groups of chunk c (lane rows r0, r1; x's entries from the
// lane's group 0) added to acc0, acc1: both bodies' step
template <int F>
__device__ inline void hkm_chunk(const hkq_u8 *r0, const hkq_u8 *r1, unsigned c, int cols, unsigned warp, unsigned t,
                                 const hkq_u32 *xpl, const int *xsl, const float *xfl, const float *xsum, hkq_u32 bm0,
                                 hkq_u32 bm1, float &acc0, float &acc1)
{
    typedef hkm_fmt<F> M;
    enum { XS = M::HALF ? 8 : 4 }; // xs entries a group
    const unsigned G0 = c * (M::CH / 32);
    if (c + 1 < ((unsigned)cols + M::CH - 1) / M::CH || (unsigned)cols % M::CH == 0) {
        enum { PER = M::CH / 32 / HKM_W };
        static_assert(M::CH / 32 % HKM_W == 0, "a chunk's groups split evenly over the warps");
        const unsigned j0 = warp * PER, G = G0 + j0;
        // the warp's first group's entries: the groups' are constant offsets from them
        const hkq_u32 *xpc = xpl + 32 * G;
        const int *xsc = xsl + XS * G;
        const float *xfc = xfl + 2 * G, *xmc = xsum + G;
#pragma unroll
        for (unsigned u = 0; u < PER; u++)
            hkm_group<F>(r0, r1, j0 + u, t, xpc + 32 * u, xsc + XS * u, xfc + 2 * u, xmc + u, bm0, bm1, acc0, acc1);
    } else {
        const unsigned ng = ((unsigned)cols - c * M::CH) / 32, per = (ng + HKM_W - 1) / HKM_W;
        const unsigned j1 = min(ng, (warp + 1) * per);
        for (unsigned j = warp * per; j < j1; j++)
            hkm_group<F>(r0, r1, j, t, xpl + 32 * (G0 + j), xsl + XS * (G0 + j), xfl + 2 * (G0 + j), xsum + G0 + j,
                         bm0, bm1, acc0, acc1);
    }
}
// a tile's end: the warp's row sums into red[warp] (lanes t = 0), acc zeroed
template <int F>
__device__ inline void hkm_warp_rows(float *red, unsigned warp, unsigned g, unsigned t, float &acc0, float &acc1)
{
    if (!hkm_fmt<F>::HALF && t >= 2) { // copies of t = 0, 1
        acc0 = 0.0f;
        acc1 = 0.0f;
    }
    for (int o = 1; o < 4; o *= 2) {
        acc0 += __shfl_xor(acc0, o);
        acc1 += __shfl_xor(acc1, o);
    }
    if (t == 0) {
        red[warp * HKM_TILE + g] = acc0;
        red[warp * HKM_TILE + g + 8] = acc1;
    }
    acc0 = acc1 = 0.0f;
}

template <int F>
__device__ void hkm_matvec_body(const void *w, const float *x, float *y, int rows, int cols, uint4 *wsm, hkq_u32 *xp,
                                int *xs, float *xf, float *xsum, float *red)
{
    typedef hkq_fmt<F> Q;
    typedef hkm_fmt<F> M;
    typedef hkm_stage<F> S;
    const unsigned tiles = ((unsigned)rows + HKM_TILE - 1) / HKM_TILE;
    if (blockIdx.x >= tiles) // the whole block: no barrier follows
        return;
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const unsigned nch = ((unsigned)cols + M::CH - 1) / M::CH;
    const unsigned rb16 = (unsigned)cols / Q::BLOCK * Q::BYTES / 16;
    const unsigned last16 = rb16 - (nch - 1) * S::SEG16;
    const uint4 *wp = (const uint4 *)w;
    hkm_copy<F> cp;
    unsigned tile = blockIdx.x, c = 0;
    cp.load_any(wp, tile, 0, nch == 1 ? last16 : S::SEG16, rb16, rows); // in flight while x is staged
    if (hkm_stage_x<F>(x, cols, xp, xs, xf, xsum)) {
        // blocks past the tiles left above: rows go to the others
        const unsigned nw = blockDim.x / warpSize, blocks = min(gridDim.x, tiles);
        for (unsigned long long row = (unsigned long long)blockIdx.x * nw + threadIdx.x / warpSize;
             row < (unsigned)rows; row += (unsigned long long)blocks * nw)
            hkq_matvec_row<F>(w, x, y, (long long)row, cols, (int)(threadIdx.x % warpSize));
        return;
    }
    // HALF: B's columns 0-3 (g < 4) see x's digits of k < 16, 4-7 those of k >= 16
    const hkq_u32 bm0 = M::HALF && g >= 4 ? 0u : ~0u, bm1 = M::HALF && g < 4 ? 0u : ~0u;
    // the lane's rows and its entries of x's group 0
    const hkq_u8 *r0 = (const hkq_u8 *)wsm + g * (16 * S::PITCH16), *r1 = r0 + 8 * (16 * S::PITCH16);
    const hkq_u32 *xpl = xp + 8 * (g & 3) + 2 * t;
    const int *xsl = xs + (M::HALF ? 4 * (t >> 1) : 0) + 2 * (t & 1);
    const float *xfl = xf + (t & 1);
    float acc0 = 0.0f, acc1 = 0.0f;
    for (;;) {
        const bool lastc = c + 1 == nch;
        __syncthreads(); // every warp is done with the last chunk
        cp.store_any(wsm, lastc ? last16 : S::SEG16);
        unsigned ntile = tile, nc = c + 1;
        if (lastc) {
            nc = 0;
            ntile += gridDim.x;
        }
        if (ntile < tiles) // in flight while this chunk is summed
            cp.load_any(wp, ntile, nc, nc + 1 == nch ? last16 : S::SEG16, rb16, rows);
        __syncthreads();
        hkm_chunk<F>(r0, r1, c, cols, warp, t, xpl, xsl, xfl, xsum, bm0, bm1, acc0, acc1);
        if (lastc) {
            hkm_warp_rows<F>(red, warp, g, t, acc0, acc1);
            __syncthreads();
            const unsigned row = tile * HKM_TILE + threadIdx.x;
            if (threadIdx.x < HKM_TILE && row < (unsigned)rows) {
                float sum = 0.0f;
                for (int k = 0; k < HKM_W; k++)
                    sum += red[k * HKM_TILE + threadIdx.x];
                y[row] = sum;
            }
        }
        if (ntile >= tiles)
            break;
        tile = ntile;
        c = nc;
    }
}

// Whether the tensor-core path applies: a block of HKM_W warps of 32, x
// within HKQ_XMAX columns, aligned w and x, rows of whole 16-byte pieces.
template <int F> __device__ inline bool hkm_can(const void *w, const void *x, int cols)
{
    typedef hkq_fmt<F> Q;
    return hkm_fmt<F>::ON && blockDim.x == 32 * HKM_W && warpSize % 32 == 0 && cols <= HKQ_XMAX &&
           (long long)(cols / Q::BLOCK) * Q::BYTES % 16 == 0 && ((unsigned long long)w & 15) == 0 &&
           ((unsigned long long)x & 15) == 0;
}
// The path's shared memory, carved from the kernel's one buffer
template <int F> struct hkm_smem {
    typedef hkm_stage<F> S;
    typedef hkm_fmt<F> M;
    enum {
        W = 16 * HKM_TILE * S::PITCH16,
        XP = 4 * S::GX * 32,
        XS = 4 * (M::BIAS ? S::GX * (M::HALF ? 8 : 4) : 1),
        XF = 4 * S::GX * 2,
        XSUM = 4 * (M::MIN ? S::GX : 1),
        RED = 4 * HKM_W * HKM_TILE,
        BYTES = W + XP + XS + XF + XSUM + RED,
    };
};
#endif

// v16b (HKM_RING): the tile chunks copied straight into a two-stage ring
// of shared memory with cp.async (no registers hold them), so while a
// chunk is summed the next two are in flight; x's digits and the ring in
// dynamic shared memory (hkm_ring_bytes<F>). HKM_DYN: blocks after their
// first tile take the next from a counter (a __device__ variable, reset by
// the last block to finish: a probe only, two launches at once would
// share it), so an SM that runs ahead takes more tiles.
template <int F> struct hkm_ring_smem {
    typedef hkm_smem<F> L;
    enum { BYTES = 2 * L::W + L::XP + L::XS + L::XF + L::XSUM + L::RED + 16 };
};
__device__ inline void hkm_cp16(uint4 *s, const uint4 *g)
{
#if defined(__CUDA_ARCH__)
    asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %0; cp.async.cg.shared.global [a], [%1], 16; }"
                 :
                 : "l"(s), "l"(g)
                 : "memory");
#else
    *s = *g;
#endif
}
__device__ inline void hkm_cp_commit()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.commit_group;" : : : "memory");
#endif
}
__device__ inline void hkm_cp_wait1() // all but the latest group landed
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_group 1;" : : : "memory");
#endif
}
#if defined(HKM_DYN)
__device__ unsigned hkm_ctr[2];
#endif
// the 16 rows of tile `tile`, chunk c into stage ws (SEG as hkm_copy)
template <int F, int SEG>
__device__ inline void hkm_issue(uint4 *ws, const uint4 *wp, unsigned tile, unsigned c, unsigned seg16, unsigned rb16,
                                 int rows)
{
    typedef hkm_stage<F> S;
    const unsigned n = SEG ? SEG : seg16;
    unsigned r = threadIdx.x / n, k = threadIdx.x - r * n;
    const unsigned dr = 32 * HKM_W / n, dk = 32 * HKM_W - dr * n;
    const uint4 *p = wp + (unsigned long long)tile * HKM_TILE * rb16 + c * S::SEG16;
    const unsigned rmax = min((unsigned)HKM_TILE, (unsigned)rows - tile * HKM_TILE);
#pragma unroll
    for (int u = 0; u < S::WL; u++) {
        if (r < rmax)
            hkm_cp16(ws + r * S::PITCH16 + k, p + r * rb16 + k);
        k += dk;
        r += dr;
        if (k >= n) {
            k -= n;
            r++;
        }
    }
}
template <int F>
__device__ void hkm_matvec_ring(const void *w, const float *x, float *y, int rows, int cols, uint4 *sm)
{
    typedef hkq_fmt<F> Q;
    typedef hkm_fmt<F> M;
    typedef hkm_stage<F> S;
    typedef hkm_smem<F> L;
    char *base = (char *)sm;
    uint4 *stage[2] = {(uint4 *)base, (uint4 *)(base + L::W)};
    char *rest = base + 2 * L::W;
    hkq_u32 *xp = (hkq_u32 *)rest;
    int *xs = (int *)(rest + L::XP);
    float *xf = (float *)(rest + L::XP + L::XS), *xsum = (float *)(rest + L::XP + L::XS + L::XF);
    float *red = (float *)(rest + L::XP + L::XS + L::XF + L::XSUM);
    unsigned *next = (unsigned *)(red + HKM_W * HKM_TILE); // HKM_DYN: two slots
    const unsigned tiles = ((unsigned)rows + HKM_TILE - 1) / HKM_TILE;
    if (blockIdx.x >= tiles) {
#if defined(HKM_DYN)
        if (threadIdx.x == 0 && atomicAdd(&hkm_ctr[1], 1u) == gridDim.x - 1) {
            hkm_ctr[0] = 0;
            hkm_ctr[1] = 0;
        }
#endif
        return;
    }
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const unsigned nch = ((unsigned)cols + M::CH - 1) / M::CH;
    const unsigned rb16 = (unsigned)cols / Q::BLOCK * Q::BYTES / 16;
    const unsigned last16 = rb16 - (nch - 1) * S::SEG16;
    const uint4 *wp = (const uint4 *)w;
    // (itile, ic): the next chunk to issue; st_*: what each stage holds
    unsigned itile = blockIdx.x, ic = 0, ns = 0, st_tile[2], st_c[2];
#if defined(HKM_DYN)
    if (threadIdx.x == 0)
        next[0] = gridDim.x + atomicAdd(&hkm_ctr[0], 1u);
#endif
    auto issue = [&](unsigned s) {
        st_tile[s] = itile;
        st_c[s] = ic;
        if (itile < tiles) {
            const unsigned seg16 = ic + 1 == nch ? last16 : (unsigned)S::SEG16;
            if (seg16 == S::SEG16)
                hkm_issue<F, S::SEG16>(stage[s], wp, itile, ic, seg16, rb16, rows);
            else
                hkm_issue<F, 0>(stage[s], wp, itile, ic, seg16, rb16, rows);
        }
        hkm_cp_commit(); // a group even when empty: one a chunk
        if (++ic == nch) {
            ic = 0;
#if defined(HKM_DYN)
            // slot ns was written by thread 0 at least a barrier ago; the
            // other slot was read by every thread at least a barrier ago
            itile = next[ns];
            if (threadIdx.x == 0 && itile < tiles)
                next[ns ^ 1] = gridDim.x + atomicAdd(&hkm_ctr[0], 1u);
            else if (threadIdx.x == 0)
                next[ns ^ 1] = tiles;
            ns ^= 1;
#else
            itile += gridDim.x;
#endif
        }
    };
    if (hkm_stage_x<F>(x, cols, xp, xs, xf, xsum)) { // (a barrier: next[0] is seen)
        const unsigned nw = blockDim.x / warpSize, blocks = min(gridDim.x, tiles);
        for (unsigned long long row = (unsigned long long)blockIdx.x * nw + threadIdx.x / warpSize;
             row < (unsigned)rows; row += (unsigned long long)blocks * nw)
            hkq_matvec_row<F>(w, x, y, (long long)row, cols, (int)(threadIdx.x % warpSize));
#if defined(HKM_DYN)
        if (threadIdx.x == 0 && atomicAdd(&hkm_ctr[1], 1u) == gridDim.x - 1) {
            hkm_ctr[0] = 0;
            hkm_ctr[1] = 0;
        }
#endif
        return;
    }
    issue(0);
    __syncthreads(); // (HKM_DYN: a slot written during issue(0) is seen by issue(1))
    issue(1);
    const hkq_u32 bm0 = M::HALF && g >= 4 ? 0u : ~0u, bm1 = M::HALF && g < 4 ? 0u : ~0u;
    const unsigned rowoff = g * (16 * S::PITCH16);
    const hkq_u32 *xpl = xp + 8 * (g & 3) + 2 * t;
    const int *xsl = xs + (M::HALF ? 4 * (t >> 1) : 0) + 2 * (t & 1);
    const float *xfl = xf + (t & 1);
    float acc0 = 0.0f, acc1 = 0.0f;
    for (unsigned i = 0;; i++) {
        const unsigned s = i & 1, tile = st_tile[s], c = st_c[s];
        if (tile >= tiles)
            break;
        const bool lastc = c + 1 == nch;
        hkm_cp_wait1(); // this thread's copies of stage s landed
        __syncthreads(); // and everyone's
        const hkq_u8 *r0 = (const hkq_u8 *)stage[s] + rowoff, *r1 = r0 + 8 * (16 * S::PITCH16);
        hkm_chunk<F>(r0, r1, c, cols, warp, t, xpl, xsl, xfl, xsum, bm0, bm1, acc0, acc1);
        if (lastc) {
            hkm_warp_rows<F>(red, warp, g, t, acc0, acc1);
        }
        __syncthreads(); // everyone is done with stage s, and red is written
        if (lastc) {
            const unsigned row = tile * HKM_TILE + threadIdx.x;
            if (threadIdx.x < HKM_TILE && row < (unsigned)rows) {
                float sum = 0.0f;
                for (int k = 0; k < HKM_W; k++)
                    sum += red[k * HKM_TILE + threadIdx.x];
                y[row] = sum;
            }
        }
        issue(s);
    }
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_all;" : : : "memory");
#endif
#if defined(HKM_DYN)
    if (threadIdx.x == 0 && atomicAdd(&hkm_ctr[1], 1u) == gridDim.x - 1) {
        hkm_ctr[0] = 0;
        hkm_ctr[1] = 0;
    }
#endif
}

// mvi_<fmt>: the tensor-core matvec where it applies (hkm_can), else the
// op's row path (no shared memory of its own: the two would not fit 48 KB)
template <int F> __device__ __forceinline__ void hkm_matvec_any(const void *w, const float *x, float *y, int rows, int cols)
{
#if HKM_ON
    typedef hkm_smem<F> L;
    __shared__ uint4 sm[(L::BYTES + 15) / 16];
    if (hkm_can<F>(w, x, cols)) {
        char *p = (char *)sm;
        hkm_matvec_body<F>(w, x, y, rows, cols, (uint4 *)p, (hkq_u32 *)(p + L::W), (int *)(p + L::W + L::XP),
                           (float *)(p + L::W + L::XP + L::XS), (float *)(p + L::W + L::XP + L::XS + L::XF),
                           (float *)(p + L::W + L::XP + L::XS + L::XF + L::XSUM));
        return;
    }
#endif
    const int lane = threadIdx.x % warpSize, nw = blockDim.x / warpSize;
    for (long long row = (long long)blockIdx.x * nw + threadIdx.x / warpSize; row < rows;
         row += (long long)gridDim.x * nw)
        hkq_matvec_row<F>(w, x, y, row, cols, lane);
}
// mvr_<fmt>: v16b, launched with hkm_ring_smem<F>::BYTES of dynamic shared
// memory (less: the row path)
template <int F> __device__ __forceinline__ void hkm_matvec_ring_any(const void *w, const float *x, float *y, int rows, int cols)
{
#if HKM_ON
    extern __shared__ uint4 hkm_dsm[];
    unsigned dyn = hkm_ring_smem<F>::BYTES;
#if defined(__CUDA_ARCH__)
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
#endif
    if (hkm_can<F>(w, x, cols) && dyn >= (unsigned)hkm_ring_smem<F>::BYTES) {
        hkm_matvec_ring<F>(w, x, y, rows, cols, hkm_dsm);
        return;
    }
#endif
    const int lane = threadIdx.x % warpSize, nw = blockDim.x / warpSize;
    for (long long row = (long long)blockIdx.x * nw + threadIdx.x / warpSize; row < rows;
         row += (long long)gridDim.x * nw)
        hkq_matvec_row<F>(w, x, y, row, cols, lane);
}
