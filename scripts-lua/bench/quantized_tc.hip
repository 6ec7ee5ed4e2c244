// The f32-x matvec on tensor cores with exact operands (branch qtc, notes in
// docs/families/quantized-notes.md, v10-v12), compiled by
// quantized_probe.lua and quantized_tc_check.lua after
// kernels/quantized/quantized.hip's shared code and launched as
// mvt_<fmt> (q4_0, q8_0, q4_K). NVIDIA sm_80+ only (mma.sync); elsewhere
// mvt_ takes the op's path. Measured on the H100 at best level with the
// op's kernel for q4_0 and below it for q8_0 and q4_K, so not in the
// family's kernels.
//
// Why: the op's f32-x kernels spend a PRMT, an FADD and an FFMA on every
// weight (~3.5 instructions with the masks), which the notes count as half
// the issue slots of a kernel that should only wait for memory. Here a
// warp multiplies a 16-row tile with mma.sync.m16n8k16 (f16 in, f32 out):
//  - A is the weights' integers q (q4_0: n - 8, q8_0: the int8, q4_K: n),
//    exact in f16, built two at a time without conversions: a nibble or
//    byte put under 0x64 (f16 1024 + v) by one LOP3 or PRMT, then one
//    f16x2 subtraction (or an FMA by 1/16 for a nibble in bits 4..7);
//  - B is x split exactly into three f16 parts in 3 of the mma's 8
//    columns: x scaled per group of 32 by a power of two so its largest
//    |x| is in [2^14, 2^15), x1 = f16(x), x2 = f16(x - x1), x3 = f16(x -
//    x1 - x2): 33 bits cover f32's 24 down to f16's subnormal step 2^-24
//    (error at most 2^-25 of the scaled unit, 2^-39 of the group's largest
//    |x|). f16 products of 11-bit significands are exact in f32, so the
//    only rounding is the tensor core's f32 accumulation, and the scale d
//    (with the power of two undone) applied per 32-column group.
// (f16 rather than bf16: q8_0's bytes need 8 significant bits under the
// magic exponent, and a nibble in bits 4..7 stays inside f16's mantissa,
// so no shifts; the price is the power-of-two scale of x.)
// A dot product does not care about the order of k, so a lane's A and B
// fragments only need the same permutation: lane (g = lane / 4, t = lane
// % 4) takes the weights of rows g and g + 8 at the columns its 32-bit
// words hold, and B's fragment for column g (part g, lanes g >= 3 hold a
// copy that lands in ignored output columns) at the same columns.
//
// Weights are staged as in the op: each warp streams its 16 rows through a
// shared segment of its own (rows padded to 304 bytes: the 16 rows' words
// of one lane quad fall in distinct banks), a chunk of columns at a time,
// the next D chunks' 16-byte loads in registers while this one is summed;
// P warps split a tile's columns and meet in shared memory (hkt_matvec).
#define HKT_RS 304            // bytes a row takes in a warp's segment
#define HKT_G (HKQ_XMAX / 32) // x groups a block stages at most
#ifndef HKT_W
#define HKT_W 4 // warps of a block at most: 4 segments (19.5 KB) and x's parts (24.6 KB) fit 48 KB
#endif
#ifndef HKT_XDYN
#define HKT_XDYN 0 // 1: x's parts in dynamic shared memory (launch with shared = 4096 * 2 * parts, up to 8 warps)
#endif
#ifndef HKT_MINB
#define HKT_MINB 1 // __launch_bounds__(32 * HKT_W, HKT_MINB) of the probe's mvt_ kernels
#endif
#ifndef HKT_PARTS
#define HKT_PARTS 3 // x's f16 parts (2: 22 bits of x's 24, not exact: a probe variant for the shared memory it saves)
#endif
// Diagnostics for the probe: HKT_UNROLL_ON unrolls the chunk loops,
// HKT_NOX skips x's staging, HKT_NOSUM the sums (timings only: wrong y).
#if defined(HKT_UNROLL_ON)
#define HKT_UNROLL _Pragma("unroll")
#else
#define HKT_UNROLL
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HKT_ON 1
__device__ inline hkq_u32 hkt_sub2(hkq_u32 a, hkq_u32 b)
{
    hkq_u32 d;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
__device__ inline hkq_u32 hkt_fma2(hkq_u32 a, hkq_u32 b, hkq_u32 c)
{
    hkq_u32 d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
__device__ inline unsigned short hkt_h(float v)
{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
}
__device__ inline float hkt_f(unsigned short h)
{
    float v;
    asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"(h));
    return v;
}
// (a & b) | c in one LOP3 (in C the compiler takes two: one immediate an
// instruction)
__device__ inline hkq_u32 hkt_andor(hkq_u32 a, hkq_u32 b, hkq_u32 c)
{
    hkq_u32 d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
// c += A B for one m16n8k16 step (A rows g, g + 8; B column g)
__device__ inline void hkt_mma(float *c, hkq_u32 a0, hkq_u32 a1, hkq_u32 a2, hkq_u32 a3, hkq_u32 b0, hkq_u32 b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#elif defined(HKT_EMU)
// For checking the kernel's indexing on the CPU backend: the f16 operations
// and the mma emulated (each lane gathers the 32 lanes' fragments of its
// group of 32 with width-32 shuffles), the f32 sums in double.
#define HKT_ON 1
__device__ inline unsigned short hkt_h(float v) { return __half_as_ushort(__float2half(v)); }
__device__ inline float hkt_f(unsigned short h) { return hkq_f16(h); }
__device__ inline hkq_u32 hkt_op2(hkq_u32 a, hkq_u32 b, hkq_u32 c, int fma)
{
    hkq_u32 d = 0;
    for (int k = 0; k < 2; k++) {
        float x = hkt_f((unsigned short)(a >> 16 * k)), y = hkt_f((unsigned short)(b >> 16 * k));
        float z = fma ? (float)((double)x * y + hkt_f((unsigned short)(c >> 16 * k))) : x - y;
        d |= (hkq_u32)hkt_h(z) << 16 * k;
    }
    return d;
}
__device__ inline hkq_u32 hkt_sub2(hkq_u32 a, hkq_u32 b) { return hkt_op2(a, b, 0, 0); }
__device__ inline hkq_u32 hkt_andor(hkq_u32 a, hkq_u32 b, hkq_u32 c) { return (a & b) | c; }
__device__ inline hkq_u32 hkt_fma2(hkq_u32 a, hkq_u32 b, hkq_u32 c) { return hkt_op2(a, b, c, 1); }
__device__ inline void hkt_mma(float *c, hkq_u32 a0, hkq_u32 a1, hkq_u32 a2, hkq_u32 a3, hkq_u32 b0, hkq_u32 b1)
{
    float A[16][16], B[16][8];
    for (int s = 0; s < 32; s++) {
        const hkq_u32 r[6] = {__shfl(a0, s, 32), __shfl(a1, s, 32), __shfl(a2, s, 32),
                              __shfl(a3, s, 32), __shfl(b0, s, 32), __shfl(b1, s, 32)};
        const int g = s / 4, t = s % 4;
        for (int h = 0; h < 2; h++) {
            A[g][2 * t + h] = hkt_f((unsigned short)(r[0] >> 16 * h));
            A[g + 8][2 * t + h] = hkt_f((unsigned short)(r[1] >> 16 * h));
            A[g][2 * t + 8 + h] = hkt_f((unsigned short)(r[2] >> 16 * h));
            A[g + 8][2 * t + 8 + h] = hkt_f((unsigned short)(r[3] >> 16 * h));
            B[2 * t + h][g] = hkt_f((unsigned short)(r[4] >> 16 * h));
            B[2 * t + 8 + h][g] = hkt_f((unsigned short)(r[5] >> 16 * h));
        }
    }
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; i++) {
        const int m = g + 8 * (i / 2), n = 2 * t + i % 2;
        double sum = c[i];
        for (int k = 0; k < 16; k++)
            sum += (double)A[m][k] * B[k][n];
        c[i] = (float)sum;
    }
}
#else
#define HKT_ON 0
#endif

#if HKT_ON
// The weights of a word w as f16 pairs for the lane's two k-slots of one
// mma: bytes (0, 2) and (1, 3). Nibbles in bits 0..3 of a byte: 1024 + n
// minus `bias`; in bits 4..7: (1024 + 16 n) / 16 minus 64 + `bias` - 1024.
struct hkt_a {
    hkq_u32 lo, hi;
};
__device__ inline hkt_a hkt_lo4(hkq_u32 w, hkq_u32 bias2)
{
    return {hkt_sub2(hkt_andor(w, 0x000F000Fu, 0x64006400u), bias2),
            hkt_sub2(hkt_andor(w >> 8, 0x000F000Fu, 0x64006400u), bias2)};
}
__device__ inline hkt_a hkt_hi4(hkq_u32 w, hkq_u32 nbias2)
{
    const hkq_u32 s = 0x2C002C00u; // 1/16, 1/16
    return {hkt_fma2(hkt_andor(w, 0x00F000F0u, 0x64006400u), s, nbias2),
            hkt_fma2(hkt_andor(w >> 8, 0x00F000F0u, 0x64006400u), s, nbias2)};
}
// signed bytes: (b ^ 0x80) under 0x64 is 1024 + 128 + b
__device__ inline hkt_a hkt_i8(hkq_u32 w)
{
    const hkq_u32 v = w ^ 0x80808080u, bias = 0x64806480u; // 1152, 1152
    return {hkt_sub2(__byte_perm(v, 0x64u, 0x4240u), bias), hkt_sub2(__byte_perm(v, 0x64u, 0x4341u), bias)};
}

// Per format: the columns of a chunk (its row segment whole 16-byte
// pieces of at most 304 - 16 bytes) and the sum of one chunk. xp: the x
// parts of the chunk's first group (lane's part and t applied), xi the
// groups' 2^-scale, xs their sums (offset formats); acc[4]: rows g and
// g + 8, output columns 2t and 2t + 1.
template <int F> struct hkt_fmt;

// q4_0 {f16 d; u8 qs[16]}: blocks in pairs of 36 bytes (9 words); the
// first block's nibbles start 2 bytes into a word (one PRMT), the second's
// are aligned.
#ifndef HKT_CH4
#define HKT_CH4 512 // columns of a chunk for q4_0 and q4_K (256 or 512)
#endif
template <> struct hkt_fmt<HKQ_Q4_0> {
    enum { CH = HKT_CH4, OFFSET = 0 };
    static __device__ void chunk(const hkq_u32 *r0, const hkq_u32 *r1, const uint4 *xp, const float *xi, const float *,
                                 int t, float *acc)
    {
        const hkq_u32 lob = 0x64086408u, hib = 0xD480D480u; // 1032; -(64 + 8)
        HKT_UNROLL
        for (int j = 0; j < CH / 64; j++) {
            const hkq_u32 *p = r0 + 9 * j, *q = r1 + 9 * j;
            hkq_u32 u[2][2] = {{__byte_perm(p[t], p[t + 1], 0x5432), p[5 + t]},
                               {__byte_perm(q[t], q[t + 1], 0x5432), q[5 + t]}};
            float d[2][2] = {{hkt_f((unsigned short)p[0]), hkt_f((unsigned short)(p[4] >> 16))},
                             {hkt_f((unsigned short)q[0]), hkt_f((unsigned short)(q[4] >> 16))}};
            for (int b = 0; b < 2; b++) {
                const uint4 xf = xp[4 * HKT_PARTS * (2 * j + b)];
                float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                hkt_a a0 = hkt_lo4(u[0][b], lob), a1 = hkt_lo4(u[1][b], lob);
                hkt_mma(c, a0.lo, a1.lo, a0.hi, a1.hi, xf.x, xf.y);
                a0 = hkt_hi4(u[0][b], hib);
                a1 = hkt_hi4(u[1][b], hib);
                hkt_mma(c, a0.lo, a1.lo, a0.hi, a1.hi, xf.z, xf.w);
                const float s = xi[2 * j + b], f0 = d[0][b] * s, f1 = d[1][b] * s;
                acc[0] += f0 * c[0];
                acc[1] += f0 * c[1];
                acc[2] += f1 * c[2];
                acc[3] += f1 * c[3];
            }
        }
    }
};
// q8_0 {f16 d; i8 qs[32]}: pairs of 68 bytes (17 words), the first
// block's bytes 2 into a word.
template <> struct hkt_fmt<HKQ_Q8_0> {
    enum { CH = 256, OFFSET = 0 };
    static __device__ void chunk(const hkq_u32 *r0, const hkq_u32 *r1, const uint4 *xp, const float *xi, const float *,
                                 int t, float *acc)
    {
        HKT_UNROLL
        for (int j = 0; j < 4; j++) {
            const hkq_u32 *p = r0 + 17 * j, *q = r1 + 17 * j;
            hkq_u32 u[2][2][2] = {
                {{__byte_perm(p[t], p[t + 1], 0x5432), __byte_perm(p[4 + t], p[5 + t], 0x5432)}, {p[9 + t], p[13 + t]}},
                {{__byte_perm(q[t], q[t + 1], 0x5432), __byte_perm(q[4 + t], q[5 + t], 0x5432)}, {q[9 + t], q[13 + t]}}};
            float d[2][2] = {{hkt_f((unsigned short)p[0]), hkt_f((unsigned short)(p[8] >> 16))},
                             {hkt_f((unsigned short)q[0]), hkt_f((unsigned short)(q[8] >> 16))}};
            for (int b = 0; b < 2; b++) {
                const uint4 xf = xp[4 * HKT_PARTS * (2 * j + b)];
                float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                hkt_a a0 = hkt_i8(u[0][b][0]), a1 = hkt_i8(u[1][b][0]);
                hkt_mma(c, a0.lo, a1.lo, a0.hi, a1.hi, xf.x, xf.y);
                a0 = hkt_i8(u[0][b][1]);
                a1 = hkt_i8(u[1][b][1]);
                hkt_mma(c, a0.lo, a1.lo, a0.hi, a1.hi, xf.z, xf.w);
                const float s = xi[2 * j + b], f0 = d[0][b] * s, f1 = d[1][b] * s;
                acc[0] += f0 * c[0];
                acc[1] += f0 * c[1];
                acc[2] += f1 * c[2];
                acc[3] += f1 * c[3];
            }
        }
    }
};
// q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]}: a chunk is 2 aligned
// blocks; groups 2i and 2i + 1 are the low and high nibbles of the same
// 32 bytes: value d sc q - dmin m, so d sc sum q x - dmin m sum x.
template <> struct hkt_fmt<HKQ_Q4_K> {
    enum { CH = HKT_CH4, OFFSET = 1 };
    static __device__ void chunk(const hkq_u32 *r0, const hkq_u32 *r1, const uint4 *xp, const float *xi,
                                 const float *xs, int t, float *acc)
    {
        const hkq_u32 lob = 0x64006400u, hib = 0xD400D400u; // 1024; -64
        HKT_UNROLL
        for (int k = 0; k < CH / 256; k++) {
            const hkq_u32 *p = r0 + 36 * k, *q = r1 + 36 * k;
            const float dp = hkt_f((unsigned short)p[0]), mp = hkt_f((unsigned short)(p[0] >> 16));
            const float dq = hkt_f((unsigned short)q[0]), mq = hkt_f((unsigned short)(q[0] >> 16));
            for (int i = 0; i < 4; i++) {
                const hkq_u32 w0[2] = {p[4 + 8 * i + t], p[8 + 8 * i + t]}, w1[2] = {q[4 + 8 * i + t], q[8 + 8 * i + t]};
                for (int h = 0; h < 2; h++) {
                    const int gi = 8 * k + 2 * i + h; // group of the chunk
                    const uint4 xf = xp[4 * HKT_PARTS * gi];
                    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    for (int e = 0; e < 2; e++) {
                        hkt_a a0 = h ? hkt_hi4(w0[e], hib) : hkt_lo4(w0[e], lob);
                        hkt_a a1 = h ? hkt_hi4(w1[e], hib) : hkt_lo4(w1[e], lob);
                        hkt_mma(c, a0.lo, a1.lo, a0.hi, a1.hi, e ? xf.z : xf.x, e ? xf.w : xf.y);
                    }
                    int sp, np, sq, nq;
                    hkq_scale_min_k4(2 * i + h, (const hkq_u8 *)(p + 1), &sp, &np);
                    hkq_scale_min_k4(2 * i + h, (const hkq_u8 *)(q + 1), &sq, &nq);
                    const float f0 = dp * (float)sp * xi[gi], f1 = dq * (float)sq * xi[gi];
                    // the min term once per row and group: output column 0 only
                    const float o0 = t == 0 ? mp * (float)np * xs[gi] : 0.0f, o1 = t == 0 ? mq * (float)nq * xs[gi] : 0.0f;
                    acc[0] += f0 * c[0] - o0;
                    acc[1] += f0 * c[1];
                    acc[2] += f1 * c[2] - o1;
                    acc[3] += f1 * c[3];
                }
            }
        }
    }
};

// x into the three f16 parts, laid out [group][part][t] as the uint4 B
// fragments of a group's two mma steps: {x[4t], x[4t + 2]}, {x[4t + 1],
// x[4t + 3]}, then the same 16 columns on. xi[g] = 2^-scale, xs[g] = the
// group's sum (unscaled).
__device__ inline hkq_u32 hkt_pack(unsigned short a, unsigned short b) { return (hkq_u32)a | ((hkq_u32)b << 16); }
__device__ void hkt_stage_x(const float *x, int cols, uint4 *xp, float *xi, float *xs)
{
    // thread i takes (group i / 4, t = i % 4): its 8 values, the group's
    // largest |x| and sum across the lane quad (the loop's trip count is
    // the same for the 4 lanes of a quad: blockDim is a multiple of 32)
    for (int i = threadIdx.x; i < cols / 8; i += blockDim.x) {
        const int g = i / 4, t = i % 4;
        const float4 a = *(const float4 *)(x + 32 * g + 4 * t), b = *(const float4 *)(x + 32 * g + 16 + 4 * t);
        float m = fmaxf(fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fmaxf(fabsf(a.z), fabsf(a.w))),
                        fmaxf(fmaxf(fabsf(b.x), fabsf(b.y)), fmaxf(fabsf(b.z), fabsf(b.w))));
        float sum = ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w));
        for (int o = 1; o < 4; o *= 2) {
            m = fmaxf(m, __shfl_xor(m, o));
            sum += __shfl_xor(sum, o);
        }
        // m = f 2^(e - 126) with f in [0.5, 1): scale by 2^(141 - e), the
        // exponent field clamped to normal floats both ways
        const int e = min(max((int)(__float_as_uint(m) >> 23), 15), 253);
        const float sc = __uint_as_float((hkq_u32)(268 - e) << 23);
        if (t == 0) {
            xi[g] = __uint_as_float((hkq_u32)(e - 14) << 23);
            xs[g] = sum;
        }
        const float v[8] = {a.x, a.z, a.y, a.w, b.x, b.z, b.y, b.w};
        unsigned short h[3][8];
        for (int k = 0; k < 8; k++) {
            float r = v[k] * sc;
            for (int p = 0; p < 3; p++) {
                h[p][k] = hkt_h(r);
                r -= hkt_f(h[p][k]);
            }
        }
        for (int p = 0; p < HKT_PARTS; p++)
            xp[(HKT_PARTS * g + p) * 4 + t] = make_uint4(hkt_pack(h[p][0], h[p][1]), hkt_pack(h[p][2], h[p][3]),
                                                 hkt_pack(h[p][4], h[p][5]), hkt_pack(h[p][6], h[p][7]));
    }
    __syncthreads();
}

#ifndef HKT_P
#define HKT_P 4 // warps that split a tile's columns (v10: 1, each warp its own tiles)
#endif
#ifndef HKT_D
#define HKT_D 2 // chunks a warp has in flight (v10: 1)
#endif
// The best measured on the H100 (v12): D 1, P 4 or 8 with 8-warp blocks
// (HKT_W 8, HKT_XDYN 1); the defaults need no dynamic shared memory.
// A block step: the block's nw / P tiles of 16 rows, each split in P
// column parts, one a warp; a warp walks its part's chunks, the loads of
// the next D chunks (this tile's or the next step's) in registers while
// it sums this one. With P > 1 the parts meet in shared memory at the end
// of a step (one block barrier a step, the sums double-buffered).
template <int F>
__device__ void hkt_matvec(const void *w, const float *x, float *y, int rows, int cols)
{
    typedef hkt_fmt<F> T;
    typedef hkq_fmt<F> Q;
    enum { SEGB = T::CH / Q::BLOCK * Q::BYTES, P16 = SEGB / 16, RS16 = HKT_RS / 16, NL = (16 * P16 + 31) / 32 };
    static_assert(SEGB % 16 == 0 && SEGB <= HKT_RS - 16, "a chunk of a row: whole pieces within a padded row");
    __shared__ uint4 seg[HKT_W][16 * RS16];
#if HKT_XDYN
    extern __shared__ uint4 hkt_xdyn[];
    uint4 *xp = hkt_xdyn;
#else
    __shared__ uint4 xp[HKT_G * 4 * HKT_PARTS];
#endif
    __shared__ float xi[HKT_G], xs[HKT_G];
    __shared__ float red[2][HKT_W][16];
    const int nw = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int part = warp % HKT_P, tiles_step = nw / HKT_P;
    const int nch = cols / T::CH / HKT_P, ntiles = (rows + 15) / 16;
    const long long rb = (long long)(cols / Q::BLOCK) * Q::BYTES;
    uint4 wr[HKT_D][NL];
    // chunk c of this warp's part of tile `tile` into buf: piece p of
    // the warp's 16 x P16 is row p / P16, piece p % P16
    auto load = [&](uint4 *buf, int tile, int c) {
        const long long off = (long long)(part * nch + c) * SEGB;
        for (int u = 0; u < NL; u++) {
            const int p = lane + 32 * u, r = p / P16;
            const long long row = (long long)tile * 16 + r;
            if (p < 16 * P16 && row < rows)
                buf[u] = ((const uint4 *)((const hkq_u8 *)w + row * rb + off))[p % P16];
        }
    };
    // (tile, chunk) k steps after (tile, c): tile < 0 past the end
    auto ahead = [&](int tile, int c, int k, int *nc) {
        c += k;
        tile += c / nch * (int)gridDim.x * tiles_step;
        *nc = c % nch;
        return tile < ntiles ? tile : -1;
    };
    const int tile0 = blockIdx.x * tiles_step + warp / HKT_P;
    const int nsteps = (ntiles + tiles_step - 1) / tiles_step; // block steps in all
    for (int k = 0; k < HKT_D; k++) {
        int nc, tl = ahead(tile0, 0, k, &nc);
        if (tl >= 0)
            load(wr[k], tl, nc);
    }
#ifndef HKT_NOX
    hkt_stage_x(x, cols, xp, xi, xs);
#endif
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const hkq_u32 *r0 = (const hkq_u32 *)seg[warp] + g * (HKT_RS / 4), *r1 = r0 + 8 * (HKT_RS / 4);
    int parity = 0;
    // every warp of the block takes part in every step (the barrier),
    // warps of a tile past the end sum stale registers and write nothing
    for (int step = blockIdx.x; step < nsteps; step += gridDim.x) {
        const int tile = step * tiles_step + warp / HKT_P;
        for (int c = 0; c < nch; c++) {
            __syncwarp();
            for (int u = 0; u < NL; u++) {
                const int p = lane + 32 * u;
                if (p < 16 * P16)
                    seg[warp][p / P16 * RS16 + p % P16] = wr[0][u];
            }
            __syncwarp();
            for (int k = 0; k + 1 < HKT_D; k++)
                for (int u = 0; u < NL; u++)
                    wr[k][u] = wr[k + 1][u];
            int nc, tl = ahead(tile, c, HKT_D, &nc);
            if (tl >= 0)
                load(wr[HKT_D - 1], tl, nc);
            const int g0 = (part * nch + c) * (T::CH / 32);
#ifdef HKT_NOSUM
            acc[0] += __uint_as_float(r0[t]);
#else
            T::chunk(r0, r1, xp + 4 * HKT_PARTS * g0 + 4 * min(g, HKT_PARTS - 1) + t, xi + g0, xs + g0, t, acc);
#endif
        }
        // rows g, g + 8: output columns 0, 1 (lane t = 0) and 2 (t = 1)
        float s0 = t == 0 ? acc[0] + acc[1] : t == 1 && HKT_PARTS == 3 ? acc[0] : 0.0f;
        float s1 = t == 0 ? acc[2] + acc[3] : t == 1 && HKT_PARTS == 3 ? acc[2] : 0.0f;
        s0 += __shfl_xor(s0, 1);
        s1 += __shfl_xor(s1, 1);
        acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
        if (HKT_P == 1) {
            if (t == 0 && tile < ntiles) {
                const long long row = (long long)tile * 16 + g;
                if (row < rows)
                    y[row] = s0;
                if (row + 8 < rows)
                    y[row + 8] = s1;
            }
            continue;
        }
        if (t == 0) {
            red[parity][warp][g] = s0;
            red[parity][warp][g + 8] = s1;
        }
        __syncthreads();
        if (threadIdx.x < 16 * tiles_step) {
            const int tw = threadIdx.x / 16, r = threadIdx.x % 16;
            const long long row = ((long long)step * tiles_step + tw) * 16 + r;
            float v = 0.0f;
            for (int q = 0; q < HKT_P; q++)
                v += red[parity][tw * HKT_P + q][r];
            if (row < rows)
                y[row] = v;
        }
        parity ^= 1;
    }
}
#endif

// Where the tensor-core kernel applies: NVIDIA sm_80+, x staged whole,
// whole chunks, 16-byte aligned w and x; else the op's path.
template <int F> __device__ void hkt_matvec_any(const void *w, const float *x, float *y, int rows, int cols)
{
#if HKT_ON
    if (blockDim.x % (32 * HKT_P) == 0 && blockDim.x <= 32 * HKT_W && cols <= HKQ_XMAX && cols % (HKT_P * hkt_fmt<F>::CH) == 0 &&
        ((unsigned long long)w & 15) == 0 && ((unsigned long long)x & 15) == 0) {
        hkt_matvec<F>(w, x, y, rows, cols);
        return;
    }
    // the path for any shape (the staged one's shared arrays would add to
    // this kernel's past 48 KB)
    const int lane = threadIdx.x % warpSize, nw = blockDim.x / warpSize;
    for (long long row = (long long)blockIdx.x * nw + threadIdx.x / warpSize; row < rows;
         row += (long long)gridDim.x * nw)
        hkq_matvec_row<F>(w, x, y, row, cols, lane);
#else
    hkq_matvec<F>(w, x, y, rows, cols);
#endif
}
