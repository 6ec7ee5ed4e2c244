// quantized: ggml's block formats (layouts in docs/families/quantized.md,
// bit-exact with ggml's block_* structs): dequantize, matrix-vector product
// with f32 activations, quantize from f32.
//
// Every format is decoded 32 elements at a time (a "group": a whole block
// of the 32-element formats, one eighth of a k-quant's 256): one decoder
// per format, hkq_fmt<F>::decode_q(block, group, q, a, o), giving integers
// and per-16 scales and offsets that every kernel shares, so all read the
// bits the same way. hkq_decode turns them into values with ggml's own
// expression and order of operations (dequantize_row_*), products through
// __fmul_rn so no compiler fuses them into an FMA: the dequantized values
// are ggml's bit for bit.
//
//   dequantize_<fmt>_<t>(const void *w, T *y, long long n)
//       y[i] = value i of the n quantized elements at w; t in f32 f16 bf16
//       (f16 and bf16 round the f32 value to nearest even). Grid-stride
//       over groups: any grid.
//   matvec_<fmt>(const void *w, const float *x, float *y, int rows, int cols)
//       y[r] = sum_c W[r, c] x[c] for the [rows, cols] matrix at w (row r is
//       cols / block blocks from byte r * row_bytes). One warp per row: lane
//       l takes groups l, l + warpSize, ... of the row (adjacent lanes read
//       adjacent bytes), then a shuffle tree; the matrix is read once.
//   matvec_<fmt>_q8_1(const void *w, const void *xq, float *y, int rows,
//                     int cols)
//       matvec with x quantized to q8_1 (ggml's vec_dot_*_q8_1 form):
//       integer dot products per half group, scaled once.
//   matmul_<fmt>(const void *w, const float *x, float *y, int rows, int cols,
//                int m)
//       Y = X W^T: x holds m rows of cols, y m rows of rows (f32); tiles of
//       64 x 64 outputs, 256 threads, grid {ceil(rows / 64), ceil(m / 64)}.
//   quantize_<fmt>(const float *x, void *w, long long n)   q4_0 q4_1 q5_0
//       q5_1 q8_0 q8_1 q8_K: ggml's reference quantizers (quantize_row_*_ref),
//       the bytes gguf's quantize writes (q4_0 and q5_0 as with an FMA),
//       one thread per block.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

// hk_grid_wait(): early start's wait (hipkit.h, HK_LAUNCH_EARLY_START).
// hipkit's compiles define it; a compiler without hipkit's headers (hipcc
// --genco of the AMD images) runs launches one after another: nothing.
#ifndef hk_grid_wait
#define hk_grid_wait() ((void)0)
#endif

typedef unsigned char hkq_u8;
typedef unsigned short hkq_u16;
typedef unsigned int hkq_u32;

// IEEE half bits to float, exactly (normals, subnormals, inf, NaN): no
// dependence on a backend's __half.
__device__ inline float hkq_f16(hkq_u16 h)
{
    unsigned sign = (unsigned)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f)
        return __uint_as_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        // a subnormal is mant * 2^-24: exact in float
        float v = (float)mant * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return __uint_as_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Little-endian loads from a block: blocks are 2-byte aligned (4 for q8_K).
__device__ inline hkq_u16 hkq_ld16(const hkq_u8 *p) { return *(const hkq_u16 *)p; }
__device__ inline hkq_u32 hkq_ld32(const hkq_u8 *p)
{
    return (hkq_u32)hkq_ld16(p) | ((hkq_u32)hkq_ld16(p + 2) << 16);
}
__device__ inline float hkq_mul(float a, float b) { return __fmul_rn(a, b); }

// N bytes of a block (N even, 2-byte aligned) read as N / 2 16-bit loads,
// not N byte loads: a matvec is bound by the loads it issues as much as by
// the bytes. Indexed with constants after unrolling, it stays in registers.
template <int N> struct hkq_bytes {
    hkq_u16 h[N / 2];
    __device__ explicit hkq_bytes(const hkq_u8 *p)
    {
        for (int k = 0; k < N / 2; k++)
            h[k] = hkq_ld16(p + 2 * k);
    }
    __device__ int operator[](int k) const { return (h[k >> 1] >> (8 * (k & 1))) & 0xff; }
};

template <int F> struct hkq_fmt;

#define HKQ_Q4_0 0
#define HKQ_Q4_1 1
#define HKQ_Q5_0 2
#define HKQ_Q5_1 3
#define HKQ_Q8_0 4
#define HKQ_Q8_1 5
#define HKQ_Q2_K 6
#define HKQ_Q3_K 7
#define HKQ_Q4_K 8
#define HKQ_Q5_K 9
#define HKQ_Q6_K 10
#define HKQ_Q8_K 11
#define HKQ_Q4_0R 12 // hipkit's repacked q4_0 (below)

// Each format decodes a group as 32 integers q and, per half of 16, a
// scale a and (OFFSET formats) an offset o: value j = a * q[j] (+ o), which
// is exactly ggml's expression for every format (its "- m" as "+ (-m)",
// the same IEEE operation). matvec_q8_1 uses the integers directly.
// q4_0 {f16 d; u8 qs[16]}: q = nibble - 8, a = d; low nibbles first.
template <> struct hkq_fmt<HKQ_Q4_0> {
    enum { BLOCK = 32, BYTES = 18, OFFSET = 0 };
    static __device__ void decode_q(const hkq_u8 *b, int, int *q, float *a, float *)
    {
        a[0] = a[1] = hkq_f16(hkq_ld16(b));
        hkq_bytes<16> qs(b + 2);
        for (int j = 0; j < 16; j++) {
            q[j] = (qs[j] & 0xf) - 8;
            q[j + 16] = (qs[j] >> 4) - 8;
        }
    }
};

// q4_0r (hipkit's, not ggml's): q4_0's groups 8 to a block of 144 bytes,
// {u8 qs[8][16]; f16 d[8]}: group g's 16 nibble bytes exactly as q4_0 has
// them, at 16 g, then the 8 scales. Every group's nibbles are a 16-byte
// aligned piece a lane loads straight into registers (hkq_matvec_r_body),
// where q4_0's 18-byte blocks go through shared memory first.
template <> struct hkq_fmt<HKQ_Q4_0R> {
    enum { BLOCK = 256, BYTES = 144, OFFSET = 0 };
    static __device__ void decode_q(const hkq_u8 *b, int g, int *q, float *a, float *)
    {
        a[0] = a[1] = hkq_f16(hkq_ld16(b + 128 + 2 * g));
        hkq_bytes<16> qs(b + 16 * g);
        for (int j = 0; j < 16; j++) {
            q[j] = (qs[j] & 0xf) - 8;
            q[j + 16] = (qs[j] >> 4) - 8;
        }
    }
};

// q4_1 {f16 d, m; u8 qs[16]}: q = nibble, a = d, o = m.
template <> struct hkq_fmt<HKQ_Q4_1> {
    enum { BLOCK = 32, BYTES = 20, OFFSET = 1 };
    static __device__ void decode_q(const hkq_u8 *b, int, int *q, float *a, float *o)
    {
        a[0] = a[1] = hkq_f16(hkq_ld16(b));
        o[0] = o[1] = hkq_f16(hkq_ld16(b + 2));
        hkq_bytes<16> qs(b + 4);
        for (int j = 0; j < 16; j++) {
            q[j] = qs[j] & 0xf;
            q[j + 16] = qs[j] >> 4;
        }
    }
};

// The 5-bit values of q5_0 and q5_1: bit j of qh is the fifth bit of q[j].
__device__ inline void hkq_q5(hkq_u32 qh, const hkq_bytes<16> &qs, int bias, int *q)
{
    for (int j = 0; j < 16; j++) {
        q[j] = ((qs[j] & 0xf) | ((int)((qh >> j) << 4) & 0x10)) - bias;
        q[j + 16] = ((qs[j] >> 4) | ((int)(qh >> (j + 12)) & 0x10)) - bias;
    }
}

// q5_0 {f16 d; u8 qh[4]; u8 qs[16]}: q = q5 - 16, a = d.
template <> struct hkq_fmt<HKQ_Q5_0> {
    enum { BLOCK = 32, BYTES = 22, OFFSET = 0 };
    static __device__ void decode_q(const hkq_u8 *b, int, int *q, float *a, float *)
    {
        a[0] = a[1] = hkq_f16(hkq_ld16(b));
        hkq_q5(hkq_ld32(b + 2), hkq_bytes<16>(b + 6), 16, q);
    }
};

// q5_1 {f16 d, m; u8 qh[4]; u8 qs[16]}: q = q5, a = d, o = m.
template <> struct hkq_fmt<HKQ_Q5_1> {
    enum { BLOCK = 32, BYTES = 24, OFFSET = 1 };
    static __device__ void decode_q(const hkq_u8 *b, int, int *q, float *a, float *o)
    {
        a[0] = a[1] = hkq_f16(hkq_ld16(b));
        o[0] = o[1] = hkq_f16(hkq_ld16(b + 2));
        hkq_q5(hkq_ld32(b + 4), hkq_bytes<16>(b + 8), 0, q);
    }
};

// q8_0 {f16 d; i8 qs[32]} and q8_1 {f16 d, s; i8 qs[32]}: q, a = d.
template <int OFF> __device__ inline void hkq_decode_q8(const hkq_u8 *b, int *q, float *a)
{
    a[0] = a[1] = hkq_f16(hkq_ld16(b));
    hkq_bytes<32> qs(b + OFF);
    for (int j = 0; j < 32; j++)
        q[j] = (signed char)qs[j];
}
template <> struct hkq_fmt<HKQ_Q8_0> {
    enum { BLOCK = 32, BYTES = 34, OFFSET = 0 };
    static __device__ void decode_q(const hkq_u8 *b, int, int *q, float *a, float *) { hkq_decode_q8<2>(b, q, a); }
};
template <> struct hkq_fmt<HKQ_Q8_1> {
    enum { BLOCK = 32, BYTES = 36, OFFSET = 0 };
    static __device__ void decode_q(const hkq_u8 *b, int, int *q, float *a, float *) { hkq_decode_q8<4>(b, q, a); }
};

// q2_K {u8 scales[16]; u8 qs[64]; f16 d, dmin}: group g is 2 runs of 16 of
// 2-bit values (shift 2 * (g % 4)) from 32 bytes of qs (g / 4), each run
// with a 4-bit scale and 4-bit min: a = d * sc, o = -(dmin * m).
template <> struct hkq_fmt<HKQ_Q2_K> {
    enum { BLOCK = 256, BYTES = 84, OFFSET = 1 };
    static __device__ void decode_q(const hkq_u8 *b, int g, int *q, float *a, float *o)
    {
        float d = hkq_f16(hkq_ld16(b + 80)), mn = hkq_f16(hkq_ld16(b + 82));
        int n = g / 4, shift = 2 * (g % 4);
        hkq_bytes<32> qs(b + 16 + 32 * n);
        for (int h = 0; h < 2; h++) {
            int sc = b[n * 8 + (g % 4) * 2 + h];
            a[h] = hkq_mul(d, (float)(sc & 0xf));
            o[h] = -hkq_mul(mn, (float)(sc >> 4));
        }
        for (int l = 0; l < 32; l++)
            q[l] = (qs[l] >> shift) & 3;
    }
};

// q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: as q2_K's 2-bit
// values, minus 4 where the group's bit of hmask is clear; 16 6-bit signed
// scales (low 4 bits in scales[0..7], high 2 in scales[8..11]).
template <> struct hkq_fmt<HKQ_Q3_K> {
    enum { BLOCK = 256, BYTES = 110, OFFSET = 0 };
    static __device__ int scale(const hkq_u8 *s, int is)
    {
        int lo = is < 8 ? s[is] & 0xf : s[is - 8] >> 4;
        int hi = (s[8 + is % 4] >> (2 * (is / 4))) & 3;
        return (lo | (hi << 4)) - 32;
    }
    static __device__ void decode_q(const hkq_u8 *b, int g, int *q, float *a, float *)
    {
        float d = hkq_f16(hkq_ld16(b + 108));
        int n = g / 4, j = g % 4, shift = 2 * j, m = 1 << (4 * n + j);
        hkq_bytes<32> qs(b + 32 + 32 * n), hm(b);
        for (int h = 0; h < 2; h++)
            a[h] = hkq_mul(d, (float)scale(b + 96, n * 8 + j * 2 + h));
        for (int k = 0; k < 32; k++)
            q[k] = ((qs[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4);
    }
};

// The 6-bit scale and min j of q4_K and q5_K (12 bytes hold 8 of each).
__device__ inline void hkq_scale_min_k4(int j, const hkq_u8 *q, int *d, int *m)
{
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]} and q5_K {f16 d, dmin; u8
// scales[12]; u8 qh[32]; u8 qs[128]}: group g is the low (g even) or high
// nibbles of qs[32 * (g / 2) ...] (q5_K: plus 16 where bit g of qh[l] is
// set), a = d * sc, o = -(dmin * m).
template <int FIVE> __device__ inline void hkq_decode_k45(const hkq_u8 *b, int g, int *q, float *a, float *o)
{
    int sc, m;
    hkq_scale_min_k4(g, b + 4, &sc, &m);
    a[0] = a[1] = hkq_mul(hkq_f16(hkq_ld16(b)), (float)sc);
    o[0] = o[1] = -hkq_mul(hkq_f16(hkq_ld16(b + 2)), (float)m);
    hkq_bytes<32> qs(b + (FIVE ? 48 : 16) + 32 * (g / 2)), qh(b + 16);
    int shift = 4 * (g & 1);
    for (int l = 0; l < 32; l++)
        q[l] = ((qs[l] >> shift) & 0xf) + (FIVE && ((qh[l] >> g) & 1) ? 16 : 0);
}
template <> struct hkq_fmt<HKQ_Q4_K> {
    enum { BLOCK = 256, BYTES = 144, OFFSET = 1 };
    static __device__ void decode_q(const hkq_u8 *b, int g, int *q, float *a, float *o) { hkq_decode_k45<0>(b, g, q, a, o); }
};
template <> struct hkq_fmt<HKQ_Q5_K> {
    enum { BLOCK = 256, BYTES = 176, OFFSET = 1 };
    static __device__ void decode_q(const hkq_u8 *b, int g, int *q, float *a, float *o) { hkq_decode_k45<1>(b, g, q, a, o); }
};

// q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: in each half n of
// the block, group k (0..3) takes nibble k / 2 of ql[64n + 32 (k % 2) + l]
// and bits 2k of qh[32n + l], minus 32; a = d * scale, a scale per 16.
template <> struct hkq_fmt<HKQ_Q6_K> {
    enum { BLOCK = 256, BYTES = 210, OFFSET = 0 };
    static __device__ void decode_q(const hkq_u8 *b, int g, int *q, float *a, float *)
    {
        float d = hkq_f16(hkq_ld16(b + 208));
        int n = g / 4, k = g % 4;
        hkq_bytes<32> ql(b + 64 * n + 32 * (k & 1)), qh(b + 128 + 32 * n);
        const signed char *sc = (const signed char *)(b + 192 + 8 * n);
        for (int h = 0; h < 2; h++)
            a[h] = hkq_mul(d, (float)sc[h + 2 * k]);
        int nib = 4 * (k >> 1), hs = 2 * k;
        for (int l = 0; l < 32; l++)
            q[l] = (((ql[l] >> nib) & 0xf) | (((qh[l] >> hs) & 3) << 4)) - 32;
    }
};

// q8_K {f32 d; i8 qs[256]; i16 bsums[16]}: q, a = d.
template <> struct hkq_fmt<HKQ_Q8_K> {
    enum { BLOCK = 256, BYTES = 292, OFFSET = 0 };
    static __device__ void decode_q(const hkq_u8 *b, int g, int *q, float *a, float *)
    {
        a[0] = a[1] = __uint_as_float(hkq_ld32(b));
        hkq_bytes<32> qs(b + 4 + 32 * g);
        for (int l = 0; l < 32; l++)
            q[l] = (signed char)qs[l];
    }
};

// A group's 32 values: ggml's a * q (+ o), the product never fused.
template <int F> __device__ inline void hkq_decode(const hkq_u8 *b, int g, float *v)
{
    int q[32];
    float a[2], o[2] = {0.0f, 0.0f};
    hkq_fmt<F>::decode_q(b, g, q, a, o);
    for (int j = 0; j < 32; j++)
        v[j] = hkq_fmt<F>::OFFSET ? hkq_mul(a[j / 16], (float)q[j]) + o[j / 16]
                                  : hkq_mul(a[j / 16], (float)q[j]);
}

// ------------------------------------------------------------ dequantize

__device__ inline void hkq_store(float *y, float v) { *y = v; }
__device__ inline void hkq_store(__half *y, float v) { *y = __float2half(v); }
__device__ inline void hkq_store(__hip_bfloat16 *y, float v) { *y = __float2bfloat16(v); }

// Values stored as 16-byte pieces (PER of them): a group's 32 values are
// contiguous, so a thread's pieces are too.
template <typename T> __device__ inline void hkq_pack(const float *v, uint4 *p)
{
    constexpr int PER = 16 / sizeof(T);
    for (int j = 0; j < 32; j += PER) {
        T part[PER];
        for (int i = 0; i < PER; i++)
            hkq_store(&part[i], v[j + i]);
        // through a register: a memcpy of the parts straight into global
        // memory wrote wrong bytes on the H100 (f16 and bf16; the GPU
        // suite, 2026-11-28), where one into shared memory did not
        uint4 bits;
        memcpy(&bits, part, 16);
        p[j / PER] = bits;
    }
}

#define HKQ_DQ_TILE 256 // groups a block dequantizes through shared memory at once

// One thread a group of 32. Where the block's tile of groups is a whole
// number of 16-byte pieces (w and y aligned, at most HKQ_DQ_TILE threads),
// the block copies the tile's bytes into shared memory with 16-byte loads,
// each thread decodes its group there into a padded out tile, and the
// block writes the tile with 16-byte stores that fill whole lines: a
// thread's own 16-byte stores lay 64 (f16) or 128 (f32) bytes apart a
// lane, half a sector each store (0.53x the copy bandwidth on an H100 for
// q4_0 -> f16), and its 2-byte loads at the 18-byte stride of the blocks.
template <int F, typename T> __device__ void hkq_dequantize(const void *w, T *y, long long n)
{
    typedef hkq_fmt<F> Q;
    enum { GB = Q::BLOCK / 32, PER = 32 * sizeof(T) / 16 };
    // + 1 piece a thread: thread t's pieces start in bank quad (PER + 1) t,
    // 8 lanes' stores in 8 different quads
    __shared__ uint4 in[HKQ_DQ_TILE / GB * Q::BYTES / 16 + 1], out[HKQ_DQ_TILE * (PER + 1)];
    const hkq_u8 *base = (const hkq_u8 *)w;
    const long long groups = n / 32;
    const unsigned nb = blockDim.x;
    if (nb <= HKQ_DQ_TILE && nb % GB == 0 && nb / GB * Q::BYTES % 16 == 0 && ((unsigned long long)w & 15) == 0 &&
        ((unsigned long long)y & 15) == 0) {
        for (long long g0 = blockIdx.x * (long long)nb; g0 < groups; g0 += (long long)nb * gridDim.x) {
            // groups is whole blocks (n is), and so is every tile's start
            const unsigned ng = (unsigned)min((long long)nb, groups - g0), bytes = ng / GB * Q::BYTES;
            const hkq_u8 *src = base + g0 / GB * Q::BYTES;
            for (unsigned i = threadIdx.x; i < bytes / 16; i += nb)
                in[i] = ((const uint4 *)src)[i];
            for (unsigned i = bytes / 16 * 8 + threadIdx.x; i < bytes / 2; i += nb) // the last, short piece
                ((hkq_u16 *)in)[i] = ((const hkq_u16 *)src)[i];
            __syncthreads();
            if (threadIdx.x < ng) {
                float v[32];
                hkq_decode<F>((const hkq_u8 *)in + threadIdx.x / GB * Q::BYTES, (int)(threadIdx.x % GB), v);
                hkq_pack<T>(v, out + threadIdx.x * (PER + 1));
            }
            __syncthreads();
            uint4 *dst = (uint4 *)(y + g0 * 32);
            for (unsigned i = threadIdx.x; i < ng * PER; i += nb)
                dst[i] = out[i / PER * (PER + 1) + i % PER];
            __syncthreads(); // the next tile overwrites in and out
        }
        return;
    }
    for (long long g = blockIdx.x * (long long)nb + threadIdx.x; g < groups; g += (long long)nb * gridDim.x) {
        long long blk = g / GB;
        float v[32];
        hkq_decode<F>(base + blk * Q::BYTES, (int)(g % GB), v);
        T *o = y + g * 32;
        if (((unsigned long long)o & 15) == 0) {
            hkq_pack<T>(v, (uint4 *)o);
        } else {
            for (int j = 0; j < 32; j++)
                hkq_store(o + j, v[j]);
        }
    }
}

// ------------------------------------------------- staged matvec (fast path)

// The fast path of both matvecs when a row's bytes are a whole number of
// 16-byte pieces, w and x start 16-byte aligned and x has at most 4096
// columns (every format at 4096 columns; buffers and GGUF tensors are
// aligned). The block copies x into shared memory once; then every warp
// streams its rows through a shared segment of its own, a chunk of 2048
// columns at a time, with coalesced 16-byte loads (each warp load moves
// 512 bytes) that are in flight while the warp sums the previous chunk
// from shared memory. Warps never wait for each other after x, so while
// one waits for memory the others compute. x is padded so group g sits at
// word 36 g: the 16-byte reads of 8 lanes fall in 8 different bank quads.
// The decoders below build floats without int-to-float conversions (slow
// on NVIDIA): 2^23 + q is the float with q in its low mantissa bits, one
// subtraction gives q exactly.
#ifndef HKQ_CHUNK
#define HKQ_CHUNK 2048 // columns of a row a warp stages at once
#endif
#ifndef HKQ_ROWS
#define HKQ_ROWS 8     // warps of a block at most (256 threads, warps of 32)
#endif
#define HKQ_XMAX 4096  // columns of x a block stages in shared memory
#define HKQ_XGMAX 16384 // columns up to which wider rows read x from global memory (L1)
#define HKQ_MAGIC 8388608.0f

// 2^23 + byte k of w, as a float: PRMT on NVIDIA, shift and or elsewhere
__device__ inline float hkq_mag(hkq_u32 w, int k)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(__byte_perm(w, 0x4B000000u, 0x7440u + k));
#else
    return __uint_as_float(0x4B000000u | ((w >> (8 * k)) & 0xffu));
#endif
}
// N little-endian 32-bit words from a 2-byte aligned address in shared
// memory: N + 1 aligned loads and a funnel shift each (the 16-bit loads
// they replace cost an instruction per 2 bytes in the shared-memory pipe).
template <int N> struct hkq_words {
    hkq_u32 w[N];
    __device__ explicit hkq_words(const hkq_u8 *p)
    {
        // p minus its misalignment, not the address masked as an integer:
        // the pointer stays one into shared memory, so the compiler emits
        // shared loads rather than generic ones
        const unsigned mis = (unsigned)((unsigned long long)p & 2);
        const hkq_u32 *a = (const hkq_u32 *)(p - mis);
        const unsigned sh = 8u * mis;
        hkq_u32 lo = a[0];
        for (int k = 0; k < N; k++) {
            hkq_u32 hi = a[k + 1];
            w[k] = (hkq_u32)((((unsigned long long)hi << 32) | lo) >> sh);
            lo = hi;
        }
    }
};
// f16 bits to float by the hardware conversion (exact, like hkq_f16)
// half bits to float by the hardware conversion (exact; hkq_f16 above
// branches on subnormals and infinities, which random scales hit in some
// lane of most warps of the hot loops)
__device__ inline float hkq_h2f_bits(hkq_u16 h) { return __half2float(__ushort_as_half(h)); }
__device__ inline float hkq_h2f(const hkq_u8 *p) { return hkq_h2f_bits(hkq_ld16(p)); }
__device__ inline float hkq_sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// 4 int8 dot products added to c: dp4a on NVIDIA (sm_61+), sdot4 on the
// AMD targets that have it, a loop elsewhere (the CPU backend).
__device__ inline int hkq_dp4a(hkq_u32 a, hkq_u32 b, int c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
    return __dp4a((int)a, (int)b, c);
#elif defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || \
    defined(__gfx941__) || defined(__gfx942__)
    return __builtin_amdgcn_sdot4((int)a, (int)b, c, false);
#else
    for (int k = 0; k < 4; k++)
        c += (int)(signed char)(a >> (8 * k)) * (int)(signed char)(b >> (8 * k));
    return c;
#endif
}

// sum_j value_j * x_j over group g of block b (in shared memory), xs the
// group's 32 x values, xsum their two sums of 16. The generic form decodes
// the integers as every kernel does; the four formats the issue measures
// have their own, reading 32-bit words. Each keeps ggml's values a * q + o
// as a * sum q x + o * sum x (f32; matvec's tolerance, not dequantize's
// exactness).
template <int F> struct hkq_dotf {
    static __device__ float run(const hkq_u8 *b, int g, const float *xs, const float *xsum)
    {
        typedef hkq_fmt<F> Q;
        int q[32];
        float a[2], o[2] = {0.0f, 0.0f}, s[2] = {0.0f, 0.0f};
        Q::decode_q(b, g, q, a, o);
        for (int j = 0; j < 32; j += 4) {
            float4 xv = *(const float4 *)(xs + j);
            // q + 2^23 + 2^22 as float bits, minus the same: q exactly
            float f0 = __int_as_float(q[j] + 0x4B400000) - 12582912.0f;
            float f1 = __int_as_float(q[j + 1] + 0x4B400000) - 12582912.0f;
            float f2 = __int_as_float(q[j + 2] + 0x4B400000) - 12582912.0f;
            float f3 = __int_as_float(q[j + 3] + 0x4B400000) - 12582912.0f;
            s[j / 16] += (f0 * xv.x + f1 * xv.y) + (f2 * xv.z + f3 * xv.w);
        }
        float r = a[0] * s[0] + a[1] * s[1];
        return Q::OFFSET ? r + (o[0] * xsum[0] + o[1] * xsum[1]) : r;
    }
};
// s plus the 4 values (2^23 + byte k of w) - bias times 4 x values: a
// PRMT, an FADD and an FFMA a value
__device__ inline float hkq_dot4(hkq_u32 w, float bias, float4 x, float s)
{
    s += (hkq_mag(w, 0) - bias) * x.x;
    s += (hkq_mag(w, 1) - bias) * x.y;
    s += (hkq_mag(w, 2) - bias) * x.z;
    return s + (hkq_mag(w, 3) - bias) * x.w;
}
// sum (n - 8) x over a q4_0 group's 16 nibble bytes w (q4_0 and q4_0r,
// whose matvecs therefore agree bit for bit), xs its 32 staged x values
__device__ inline float hkq_q4_0_sumf(const hkq_u32 *w, const float *xs)
{
    float s0 = 0.0f, s1 = 0.0f;
    for (int k = 0; k < 4; k++) {
        s0 = hkq_dot4(w[k] & 0x0F0F0F0Fu, HKQ_MAGIC + 8.0f, *(const float4 *)(xs + 4 * k), s0);
        s1 = hkq_dot4((w[k] >> 4) & 0x0F0F0F0Fu, HKQ_MAGIC + 8.0f, *(const float4 *)(xs + 16 + 4 * k), s1);
    }
    return s0 + s1;
}
template <> struct hkq_dotf<HKQ_Q4_0> {
    static __device__ float run(const hkq_u8 *b, int, const float *xs, const float *)
    {
        hkq_words<4> q(b + 2);
        return hkq_h2f(b) * hkq_q4_0_sumf(q.w, xs);
    }
};
template <> struct hkq_dotf<HKQ_Q8_0> {
    static __device__ float run(const hkq_u8 *b, int, const float *xs, const float *)
    {
        float s0 = 0.0f, s1 = 0.0f;
        hkq_words<8> q(b + 2);
        for (int k = 0; k < 8; k += 2) {
            // signed bytes + 128 are unsigned ones
            s0 = hkq_dot4(q.w[k] ^ 0x80808080u, HKQ_MAGIC + 128.0f, *(const float4 *)(xs + 4 * k), s0);
            s1 = hkq_dot4(q.w[k + 1] ^ 0x80808080u, HKQ_MAGIC + 128.0f, *(const float4 *)(xs + 4 * k + 4), s1);
        }
        return hkq_h2f(b) * (s0 + s1);
    }
};
// q4_K takes its weights as f16 subnormals: a nibble n masked into the
// low bits of a 16-bit half is the half n 2^-24, which the hardware turns
// into a float exactly (one conversion; SDWA on AMD). One mask gives two
// weights, so a weight costs half a LOP3, a conversion and an FFMA, where
// 2^23 + n (hkq_dot4) costs a PRMT, an FADD and an FFMA. x is staged times
// 2^24 for it (hkq_xstage), so each product is n x as before. On the H100
// this was 5-6 % faster for q4_K; for q4_0, q8_0 and q6_K, whose biases
// then come off with x's sums, it was slower (quantized-notes.md, v18).
#define HKQ_2M24 5.9604644775390625e-8f // 2^-24: an f16 subnormal's step; x's staged sums back to x's units
__device__ inline float hkq_hf(hkq_u32 v, int h)
{
#if defined(__CUDA_ARCH__) || defined(__AMDGCN__)
    return __half2float(__ushort_as_half((hkq_u16)(v >> (16 * h))));
#else
    // the CPU backend: every half here is subnormal (bits 10-15 clear)
    return (float)((v >> (16 * h)) & 0xffffu) * HKQ_2M24;
#endif
}
// s plus x.x, x.z times the halves of A and x.y, x.w times those of C
__device__ inline float hkq_dot4h(hkq_u32 A, hkq_u32 C, float4 x, float s)
{
    s += hkq_hf(A, 0) * x.x;
    s += hkq_hf(C, 0) * x.y;
    s += hkq_hf(A, 1) * x.z;
    return s + hkq_hf(C, 1) * x.w;
}
// q4_K: a 144-byte block sits 16-byte aligned in shared memory (segments
// are), so the group's 32 nibble bytes are two 16-byte reads.
template <> struct hkq_dotf<HKQ_Q4_K> {
    static __device__ float run(const hkq_u8 *b, int g, const float *xs, const float *xsum)
    {
        int sc, m;
        hkq_scale_min_k4(g, b + 4, &sc, &m);
        const hkq_u32 *qs = (const hkq_u32 *)(b + 16 + 32 * (g / 2));
        // odd groups are the high nibbles: 16 n in the halves
        const hkq_u32 mask = 0x000F000Fu << (4 * (g & 1));
        float s0 = 0.0f, s1 = 0.0f;
        for (int k = 0; k < 8; k += 2) {
            s0 = hkq_dot4h(qs[k] & mask, (qs[k] >> 8) & mask, *(const float4 *)(xs + 4 * k), s0);
            s1 = hkq_dot4h(qs[k + 1] & mask, (qs[k + 1] >> 8) & mask, *(const float4 *)(xs + 4 * k + 4), s1);
        }
        const float a = (float)sc * ((g & 1) ? 0.0625f : 1.0f);
        return hkq_h2f(b) * a * (s0 + s1) - hkq_h2f(b + 2) * (float)m * (HKQ_2M24 * (xsum[0] + xsum[1]));
    }
};
// 4 of q6_K's 6-bit values q + 32, a byte each: the low 4 bits from l (a
// word of ql already shifted to its nibble), the high 2 from h (a word of
// qh already shifted to its pair of bits)
__device__ inline hkq_u32 hkq_q6_word(hkq_u32 l, hkq_u32 h) { return (l & 0x0F0F0F0Fu) | ((h & 0x03030303u) << 4); }
template <> struct hkq_dotf<HKQ_Q6_K> {
    static __device__ float run(const hkq_u8 *b, int g, const float *xs, const float *)
    {
        const int n = g / 4, k = g % 4, nib = 4 * (k >> 1), hs = 2 * k;
        const hkq_u8 *ql = b + 64 * n + 32 * (k & 1), *qh = b + 128 + 32 * n;
        const signed char *sc = (const signed char *)(b + 192 + 8 * n + 2 * k);
        hkq_words<8> lw(ql), hw(qh);
        float s[2];
        for (int h = 0; h < 2; h++) {
            float s0 = 0.0f, s1 = 0.0f;
            for (int j = 4 * h; j < 4 * h + 4; j += 2) {
                hkq_u32 w0 = hkq_q6_word(lw.w[j] >> nib, hw.w[j] >> hs);
                hkq_u32 w1 = hkq_q6_word(lw.w[j + 1] >> nib, hw.w[j + 1] >> hs);
                s0 = hkq_dot4(w0, HKQ_MAGIC + 32.0f, *(const float4 *)(xs + 4 * j), s0);
                s1 = hkq_dot4(w1, HKQ_MAGIC + 32.0f, *(const float4 *)(xs + 4 * j + 4), s1);
            }
            s[h] = s0 + s1;
        }
        return hkq_h2f(b + 208) * ((float)sc[0] * s[0] + (float)sc[1] * s[1]);
    }
};

// The q8_1 form: group g of block b against the q8_1 block xb (shared
// memory): d8 * (a * sum q x8 + o * sum x8) per half, as the slow path.
// Generic: the decoded integers one by one; q4_0, q8_0, q4_K, q6_K: dp4a
// on the packed bytes.
// word k of a q8_1 block's values: 36-byte blocks keep them 4-byte aligned
__device__ inline hkq_u32 hkq_x8w(const hkq_u8 *xb, int k) { return *(const hkq_u32 *)(xb + 4 + 4 * k); }
template <int F> struct hkq_dot8 {
    static __device__ float run(const hkq_u8 *b, int g, const hkq_u8 *xb, const int *)
    {
        typedef hkq_fmt<F> Q;
        int q[32];
        float a[2], o[2] = {0.0f, 0.0f};
        Q::decode_q(b, g, q, a, o);
        float d8 = hkq_f16(hkq_ld16(xb)), acc = 0.0f;
        for (int h = 0; h < 2; h++) {
            int dot = 0, sum = 0;
            for (int k = 4 * h; k < 4 * h + 4; k++) {
                hkq_u32 xw = hkq_x8w(xb, k);
                for (int e = 0; e < 4; e++) {
                    int v = (signed char)(xw >> (8 * e));
                    dot += q[4 * k + e] * v;
                    sum += v;
                }
            }
            acc += d8 * (a[h] * (float)dot + (Q::OFFSET ? o[h] * (float)sum : 0.0f));
        }
        return acc;
    }
};
// sum of the 16 int8 x values of half h: dp4a with bytes of 1 (the staged
// path works them out once a block: s8 below, the group's two)
__device__ inline int hkq_x8sum(const hkq_u8 *xb, int h)
{
    int s = 0;
    for (int k = 4 * h; k < 4 * h + 4; k++)
        s = hkq_dp4a(hkq_x8w(xb, k), 0x01010101u, s);
    return s;
}
// sum (n - 8) x8 over a q4_0 group's nibble bytes w against q8_1 x's
// words lo (values 0-15) and hi (16-31), sx the sum of those values: dp4a
// on the nibbles (n = q + 8: sum (q + 8) x = sum q x + 8 sum x). Shared by
// q4_0 and q4_0r.
__device__ inline int hkq_q4_0_dot8(const hkq_u32 *w, const hkq_u32 *lo, const hkq_u32 *hi, int sx)
{
    int dot = 0;
    for (int k = 0; k < 4; k++) {
        dot = hkq_dp4a(w[k] & 0x0F0F0F0Fu, lo[k], dot);
        dot = hkq_dp4a((w[k] >> 4) & 0x0F0F0F0Fu, hi[k], dot);
    }
    return dot - 8 * sx;
}
template <> struct hkq_dot8<HKQ_Q4_0> {
    static __device__ float run(const hkq_u8 *b, int, const hkq_u8 *xb, const int *s8)
    {
        hkq_words<4> q(b + 2);
        const hkq_u32 lo[4] = {hkq_x8w(xb, 0), hkq_x8w(xb, 1), hkq_x8w(xb, 2), hkq_x8w(xb, 3)};
        const hkq_u32 hi[4] = {hkq_x8w(xb, 4), hkq_x8w(xb, 5), hkq_x8w(xb, 6), hkq_x8w(xb, 7)};
        const int dot = hkq_q4_0_dot8(q.w, lo, hi, s8[0] + s8[1]);
        return hkq_h2f(xb) * (hkq_h2f(b) * (float)dot);
    }
};
template <> struct hkq_dot8<HKQ_Q8_0> {
    static __device__ float run(const hkq_u8 *b, int, const hkq_u8 *xb, const int *)
    {
        int dot = 0;
        hkq_words<8> q(b + 2);
        for (int k = 0; k < 8; k++)
            dot = hkq_dp4a(q.w[k], hkq_x8w(xb, k), dot);
        return hkq_h2f(xb) * (hkq_h2f(b) * (float)dot);
    }
};
template <> struct hkq_dot8<HKQ_Q4_K> {
    static __device__ float run(const hkq_u8 *b, int g, const hkq_u8 *xb, const int *s8)
    {
        int sc, m;
        hkq_scale_min_k4(g, b + 4, &sc, &m);
        const hkq_u32 *qs = (const hkq_u32 *)(b + 16 + 32 * (g / 2));
        const int shift = 4 * (g & 1);
        int dot = 0;
        for (int k = 0; k < 8; k++)
            dot = hkq_dp4a((qs[k] >> shift) & 0x0F0F0F0Fu, hkq_x8w(xb, k), dot);
        int sum = s8[0] + s8[1];
        return hkq_h2f(xb) * (hkq_h2f(b) * (float)sc * (float)dot - hkq_h2f(b + 2) * (float)m * (float)sum);
    }
};
template <> struct hkq_dot8<HKQ_Q6_K> {
    static __device__ float run(const hkq_u8 *b, int g, const hkq_u8 *xb, const int *s8)
    {
        const int n = g / 4, k = g % 4, nib = 4 * (k >> 1), hs = 2 * k;
        const hkq_u8 *ql = b + 64 * n + 32 * (k & 1), *qh = b + 128 + 32 * n;
        const signed char *sc = (const signed char *)(b + 192 + 8 * n + 2 * k);
        hkq_words<8> lw(ql), hw(qh);
        float acc = 0.0f;
        for (int h = 0; h < 2; h++) {
            int dot = 0;
            for (int j = 4 * h; j < 4 * h + 4; j++) {
                hkq_u32 w = hkq_q6_word(lw.w[j] >> nib, hw.w[j] >> hs);
                dot = hkq_dp4a(w, hkq_x8w(xb, j), dot);
            }
            // the 6-bit values are q + 32
            acc += (float)sc[h] * (float)(dot - 32 * s8[h]);
        }
        return hkq_h2f(xb) * (hkq_h2f(b + 208) * acc);
    }
};

// Pairs of groups that share their weight bytes: q4_K's groups 2p and
// 2p + 1 of a block are the low and high nibbles of the same 32 bytes;
// q6_K's k and k + 2 of a block's half n share the 32 bytes of low bits
// (low and high nibbles) and the 32 of high bits (other shifts). With f32
// x the staged path gives both groups of a pair to one lane, which reads
// those bytes, d and the scales once for both (on the H100, through the
// op: q4_K 0.53 -> 0.61x copy, q6_K 0.64 -> 0.70; the same for q4_K's
// q8_1 form was 0.01-0.03 slower: quantized-notes.md, v24). x is staged
// so that a lane's pair lies where 8 lanes' reads fall in different banks
// (hkq_xpos). G: groups a lane takes at once.
// Not on waves of 64 lanes (AMD's gfx9): a chunk's 32 pairs would leave
// half of each wave idle.
#if defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE > 32
#define HKQ_PAIRS 0
#else
#define HKQ_PAIRS 1
#endif
template <int F, int X8> struct hkq_unit {
    enum { G = HKQ_PAIRS && (F == HKQ_Q4_K || F == HKQ_Q6_K) && !X8 ? 2 : 1 };
};
// unit u's groups: 2u and 2u + 1 (q4_K), 4 (u / 2) + u % 2 and 2 more (q6_K)
template <int F> __device__ inline unsigned hkq_pair_group(unsigned u, unsigned second)
{
    return F == HKQ_Q6_K ? 4 * (u / 2) + u % 2 + 2 * second : 2 * u + second;
}
// the 32-bit word of staged x where group gx starts: f32 36 words (32
// values and 4 of padding), q8_1 9 (its 36 bytes); in pairs (f32) 68 words
// a unit, its second group 32 words after its first, so lane l's 16-byte
// reads start at word 68 l: 8 lanes in different bank quads
template <int F, int X8> __device__ inline unsigned hkq_xpos(unsigned gx)
{
    if (hkq_unit<F, X8>::G == 2)
        return F == HKQ_Q6_K ? 68 * (2 * (gx / 4) + gx % 2) + 32 * (gx % 4 / 2) : 68 * (gx / 2) + 32 * (gx % 2);
    return X8 ? 9 * gx : 36 * gx;
}
// the 16-byte slot of staged f32 x where x's 16-byte piece i goes
template <int F> __device__ inline unsigned hkq_xslot(unsigned i) { return hkq_xpos<F, 0>(i / 8) / 4 + i % 8; }
// the scales (low byte: group 2p, high: 2p + 1) and mins of q4_K's pair p,
// from ggml's 6-bit packing 16 bits at a time; both branches' forms are
// worked out and one chosen (the lanes of a warp hold different p)
__device__ inline void hkq_scale_min_k4_pair(int p, const hkq_u8 *q, hkq_u32 *sc, hkq_u32 *mn)
{
    const hkq_u32 a = hkq_ld16(q + 2 * (p + 2)), b = hkq_ld16(q + 2 * p), c = hkq_ld16(q + 2 * (p ^ 2));
    const bool lo = p < 2;
    *sc = lo ? (b & 0x3f3fu) : ((a & 0x0f0fu) | ((c & 0xc0c0u) >> 2));
    *mn = lo ? (a & 0x3f3fu) : (((a >> 4) & 0x0f0fu) | ((b & 0xc0c0u) >> 2));
}
template <int F> struct hkq_pair;
// f32 x (staged times 2^24, hkq_xstage): xa, xb the two groups' values,
// xsum their four half sums; the nibbles as f16 subnormals (hkq_dotf's
// q4_K), the high ones as 16 n
template <> struct hkq_pair<HKQ_Q4_K> {
    static __device__ float run(const hkq_u8 *b, int p, const float *xa, const float *xb, const float *xsum)
    {
        hkq_u32 sc, mn;
        hkq_scale_min_k4_pair(p, b + 4, &sc, &mn);
        const hkq_u32 *qs = (const hkq_u32 *)(b + 16 + 32 * p);
        float a0 = 0.0f, a1 = 0.0f, b0 = 0.0f, b1 = 0.0f;
        for (int k = 0; k < 8; k += 2) {
            const hkq_u32 w0 = qs[k], w1 = qs[k + 1], v0 = w0 >> 8, v1 = w1 >> 8;
            a0 = hkq_dot4h(w0 & 0x000F000Fu, v0 & 0x000F000Fu, *(const float4 *)(xa + 4 * k), a0);
            a1 = hkq_dot4h(w1 & 0x000F000Fu, v1 & 0x000F000Fu, *(const float4 *)(xa + 4 * k + 4), a1);
            b0 = hkq_dot4h(w0 & 0x00F000F0u, v0 & 0x00F000F0u, *(const float4 *)(xb + 4 * k), b0);
            b1 = hkq_dot4h(w1 & 0x00F000F0u, v1 & 0x00F000F0u, *(const float4 *)(xb + 4 * k + 4), b1);
        }
        const float d = hkq_h2f(b), dmin = hkq_h2f(b + 2);
        return d * ((float)(sc & 0xffu) * (a0 + a1) + (float)(sc >> 8) * 0.0625f * (b0 + b1)) -
               dmin * HKQ_2M24 * ((float)(mn & 0xffu) * (xsum[0] + xsum[1]) + (float)(mn >> 8) * (xsum[2] + xsum[3]));
    }
};

// q6_K's groups k and k + 2 of half n (unit 2 n + k): the low bits are the
// low and high nibbles of the same 32 bytes, the high bits shifts 2 k and
// 2 k + 4 of the same 32; four scales, one a 16 values
template <> struct hkq_pair<HKQ_Q6_K> {
    static __device__ float run(const hkq_u8 *b, int u, const float *xa, const float *xb, const float *)
    {
        const int n = u / 2, k = u % 2, hs = 2 * k;
        const signed char *sc = (const signed char *)(b + 192 + 8 * n + 2 * k);
        hkq_words<8> lw(b + 64 * n + 32 * k), hw(b + 128 + 32 * n);
        float acc = 0.0f;
        for (int h = 0; h < 2; h++) {
            float a[2] = {0.0f, 0.0f}, c[2] = {0.0f, 0.0f}; // two chains a group
            for (int j = 4 * h; j < 4 * h + 4; j++) {
                const hkq_u32 l = lw.w[j], hb = hw.w[j];
                a[j & 1] = hkq_dot4(hkq_q6_word(l, hb >> hs), HKQ_MAGIC + 32.0f, *(const float4 *)(xa + 4 * j), a[j & 1]);
                c[j & 1] = hkq_dot4(hkq_q6_word(l >> 4, hb >> (hs + 4)), HKQ_MAGIC + 32.0f, *(const float4 *)(xb + 4 * j),
                                    c[j & 1]);
            }
            acc += (float)sc[h] * (a[0] + a[1]) + (float)sc[h + 4] * (c[0] + c[1]);
        }
        return hkq_h2f(b + 208) * acc;
    }
};

// Lanes of a warp as a constant where the target fixes it (a division or
// stride by it then costs nothing), the runtime value elsewhere.
#if defined(__CUDA_ARCH__)
#define HKQ_WARP 32
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define HKQ_WARP __AMDGCN_WAVEFRONT_SIZE
#else
#define HKQ_WARP warpSize
#endif

// X8: x is q8_1 (36-byte blocks of 32) rather than f32.
template <int F, int X8> struct hkq_stage {
    typedef hkq_fmt<F> Q;
    enum {
        XWORDS = X8 ? HKQ_XMAX / 32 * 9 : HKQ_XMAX / 32 * 36,
        // 4096-column steps measured slower than 2048 on the H100 (fewer
        // resident warps), so one size
        CHUNK = HKQ_CHUNK,
        SEG = CHUNK / Q::BLOCK * Q::BYTES, // bytes of a row's chunk
        SEG16 = SEG / 16,
        WLOADS = (SEG16 + 31) / 32, // a lane's 16-byte pieces of a segment (warps of 32 or more)
    };
    static_assert(SEG % 16 == 0, "a chunk of a row is whole 16-byte pieces");
    uint4 wr[WLOADS];

    // n 16-byte pieces from p into this lane's registers
    __device__ void load(const uint4 *p, unsigned n, unsigned lane)
    {
        for (int u = 0; u < WLOADS; u++)
            if (lane + u * HKQ_WARP < n)
                wr[u] = p[lane + u * HKQ_WARP];
    }
    __device__ void store(uint4 *ws, unsigned n, unsigned lane) const
    {
        for (int u = 0; u < WLOADS; u++)
            if (lane + u * HKQ_WARP < n)
                ws[lane + u * HKQ_WARP] = wr[u];
    }
};

// Formats whose f32-x dot takes the weights as f16 subnormals (q4_K,
// above): x staged times 2^24.
template <int F> struct hkq_f16_weights {
    enum { ON = F == HKQ_Q4_K };
};
// 16 bytes of f32 x as the block stages them for format F (exact: a
// power of two; x of 2^104 or more becomes inf, and x's sums send such an
// x to the unstaged path)
template <int F> __device__ inline uint4 hkq_xstage(uint4 v)
{
    static_assert(!hkq_f16_weights<F>::ON || hkq_fmt<F>::OFFSET, "x's sums (staged for an offset) catch its overflow");
    if (!hkq_f16_weights<F>::ON)
        return v;
    return make_uint4(__float_as_uint(__uint_as_float(v.x) * 16777216.0f),
                      __float_as_uint(__uint_as_float(v.y) * 16777216.0f),
                      __float_as_uint(__uint_as_float(v.z) * 16777216.0f),
                      __float_as_uint(__uint_as_float(v.w) * 16777216.0f));
}

// x (cols <= HKQ_XMAX) into shared memory, f32 padded so that group g
// sits at word 36 g, and (f32 x of formats with an offset) xsum[2 g + h],
// the sum of its half h; q8_1 x as it is, and s8[2 g + h] the integer sum
// of its half h.
// Returns, the same in every thread, whether a sum of x is inf or NaN
// where the format has an offset (f32 x): a * sum q x + o * sum x would
// then make inf - inf of products that are inf, so the caller takes the
// unstaged path (each weight's value times x, as f32 gives it).
// XG: x stays in global memory (rows wider than HKQ_XMAX): only the sums
// are staged, read from x itself.
template <int F, int X8, int XG = 0>
__device__ int hkq_stage_x(const void *x, int cols, uint4 *xs, float *xsum, int *s8)
{
    if (!XG) {
        const int n16 = (X8 ? cols / 32 * 36 : 4 * cols) / 16;
        for (int i = threadIdx.x; i < n16; i += blockDim.x)
            xs[X8 ? i : hkq_xslot<F>(i)] = X8 ? ((const uint4 *)x)[i] : hkq_xstage<F>(((const uint4 *)x)[i]);
        __syncthreads();
    }
    if (X8) { // q8_1 x: the integer sum of each half group, s8[2 g + h]
        for (int i = threadIdx.x; i < cols / 16; i += blockDim.x)
            s8[i] = hkq_x8sum((XG ? (const hkq_u8 *)x : (const hkq_u8 *)xs) + 36 * (i / 2), i % 2);
        __syncthreads();
    }
    int bad = 0;
    if (!X8 && hkq_fmt<F>::OFFSET) {
        for (int i = threadIdx.x; i < cols / 16; i += blockDim.x) {
            const uint4 *p = XG ? (const uint4 *)x + 4 * i : xs + hkq_xpos<F, 0>(i / 2) / 4 + 4 * (i % 2);
            float4 v[4];
            for (int k = 0; k < 4; k++) // x's slices (XG) staged as they will be
                *(uint4 *)&v[k] = XG ? hkq_xstage<F>(p[k]) : p[k];
            xsum[i] = (hkq_sum4(v[0]) + hkq_sum4(v[1])) + (hkq_sum4(v[2]) + hkq_sum4(v[3]));
            bad |= !(fabsf(xsum[i]) <= 3.402823466e38f);
        }
        bad = __syncthreads_or(bad);
    }
    return bad;
}

// Whether the staged path applies: whole 16-byte pieces per row, aligned
// w and x, x within HKQ_XGMAX columns, warps of 32 or more.
template <int F, int X8> __device__ inline bool hkq_can_stage(const void *w, const void *x, int cols)
{
    typedef hkq_fmt<F> Q;
    long long rb = (long long)(cols / Q::BLOCK) * Q::BYTES;
    return blockDim.x / warpSize <= HKQ_ROWS && warpSize >= 32 && cols <= HKQ_XGMAX && rb % 16 == 0 &&
           (!X8 || (cols / 32) % 4 == 0) && // whole 16-byte pieces of q8_1 x
           ((unsigned long long)w & 15) == 0 && ((unsigned long long)x & 15) == 0;
}

template <int F>
__device__ void hkq_matvec_row(const void *w, const float *x, float *y, long long row, int cols, int lane);

// group g of the warp's segment seg (its chunk's groups from gx0 on in x):
// x staged (xsm, laid out by hkq_xpos) or, XG, x itself in global memory
template <int F, int X8, int XG>
__device__ inline float hkq_staged_group(const hkq_u8 *seg, unsigned g, unsigned gx0, const uint4 *xsm,
                                         const void *x, const float *xsum, const int *s8)
{
    typedef hkq_fmt<F> Q;
    const hkq_u8 *blk = seg + (g / (Q::BLOCK / 32)) * Q::BYTES;
    const int gi = g % (Q::BLOCK / 32);
    const unsigned gx = gx0 + g;
    const hkq_u32 *xw = (const hkq_u32 *)xsm + hkq_xpos<F, X8>(gx);
    if (X8)
        return hkq_dot8<F>::run(blk, gi, XG ? (const hkq_u8 *)x + 36 * gx : (const hkq_u8 *)xw, s8 + 2 * gx);
    return hkq_dotf<F>::run(blk, gi, XG ? (const float *)x + 32 * gx : (const float *)xw, xsum + 2 * gx);
}
// unit u of the segment: group u (PAIR 0), or the pair hkq_pair_group
// names (hkq_unit: f32 x staged, never XG)
template <int F, int X8, int XG, int PAIR = hkq_unit<F, X8>::G == 2 && !XG> struct hkq_unit_dot {
    static __device__ float run(const hkq_u8 *seg, unsigned u, unsigned gx0, const uint4 *xsm, const void *x,
                                const float *xsum, const int *s8)
    {
        return hkq_staged_group<F, X8, XG>(seg, u, gx0, xsm, x, xsum, s8);
    }
};
template <int F, int X8, int XG> struct hkq_unit_dot<F, X8, XG, 1> {
    static __device__ float run(const hkq_u8 *seg, unsigned u, unsigned gx0, const uint4 *xsm, const void *,
                                const float *xsum, const int *)
    {
        typedef hkq_fmt<F> Q;
        enum { UNITS = Q::BLOCK / 64 }; // units a block
        const unsigned ga = gx0 + hkq_pair_group<F>(u, 0), gb = gx0 + hkq_pair_group<F>(u, 1);
        const float *xw = (const float *)xsm;
        // (q4_K's xsum: the four half sums of its groups ga, ga + 1 in a row)
        return hkq_pair<F>::run(seg + u / UNITS * Q::BYTES, (int)(u % UNITS), xw + hkq_xpos<F, 0>(ga),
                                xw + hkq_xpos<F, 0>(gb), xsum + 2 * ga);
    }
};

// The block stages x once; then each warp works alone (no block barrier):
// rows blockIdx.x * nw + warp, + gridDim.x * nw, ..., each S::CHUNK
// columns a step. A step: the warp's lanes copy the row's chunk (loaded
// into registers during the previous step) into the warp's own shared
// segment, issue the loads of the next step, then sum this one from shared
// memory, lane l taking groups l, l + warpSize, ... The step's counts
// (pieces and groups of a full and of the last chunk) are worked out once:
// a step is only a few groups a lane, so its own arithmetic shows.
// XG: rows wider than HKQ_XMAX, x read from global memory where it is
// (the weights still staged); ws: the block's segments, SEG16 + 1 pieces a
// warp.
template <int F, int X8, int XG>
__device__ void hkq_matvec_staged_body(const void *w, const void *x, float *y, int rows, int cols, uint4 *wsm,
                                       uint4 *xsm, float *xsum, int *s8)
{
    typedef hkq_stage<F, X8> S;
    typedef hkq_fmt<F> Q;
    enum { G = XG ? 1 : hkq_unit<F, X8>::G }; // groups a lane takes at once
    const unsigned nw = blockDim.x / HKQ_WARP, warp = threadIdx.x / HKQ_WARP, lane = threadIdx.x % HKQ_WARP;
    const unsigned nchunks = ((unsigned)cols + S::CHUNK - 1) / S::CHUNK;
    const unsigned rb16 = (unsigned)cols / Q::BLOCK * Q::BYTES / 16;   // a row's 16-byte pieces
    const unsigned last16 = rb16 - (nchunks - 1) * S::SEG16;             // those of its last chunk
    const unsigned lastg = ((unsigned)cols - (nchunks - 1) * S::CHUNK) / 32; // groups of the last chunk
    const uint4 *wp = (const uint4 *)w;
    const unsigned long long stride = (unsigned long long)gridDim.x * nw;
    unsigned long long row = (unsigned long long)blockIdx.x * nw + warp;
    S st;
    if (row < (unsigned)rows) // the first rows' loads in flight while x is staged
        st.load(wp + row * rb16, nchunks == 1 ? last16 : S::SEG16, lane);
    hk_grid_wait(); // launched early (the op does): only w was read before
    if (hkq_stage_x<F, X8, XG>(x, cols, xsm, xsum, s8)) {
        for (; row < (unsigned)rows; row += stride)
            hkq_matvec_row<F>(w, (const float *)x, y, row, cols, lane);
        return;
    }
    if (row >= (unsigned)rows) // the whole warp: no block barrier follows
        return;
    uint4 *ws = wsm + warp * (S::SEG16 + 1);
    const hkq_u8 *seg = (const hkq_u8 *)ws;
    float acc = 0.0f;
    for (unsigned c = 0;;) {
        const bool lastc = c + 1 == nchunks;
        __syncwarp(); // every lane is done reading the last segment
        st.store(ws, lastc ? last16 : S::SEG16, lane);
        __syncwarp();
        unsigned long long nrow = row;
        unsigned nc = c + 1;
        if (lastc) {
            nc = 0;
            nrow += stride;
        }
        if (nrow < (unsigned)rows) // in flight while this step is summed
            st.load(wp + nrow * rb16 + nc * S::SEG16, nc + 1 == nchunks ? last16 : S::SEG16, lane);
        const unsigned gx0 = c * (S::CHUNK / 32);
#if defined(__CUDA_ARCH__) || defined(__AMDGCN_WAVEFRONT_SIZE)
        // a full chunk: a known number of units a lane, unrolled so that
        // their independent sums interleave
        static_assert(S::CHUNK / 32 / G % HKQ_WARP == 0, "a chunk is whole units for every lane");
        if (!lastc) {
#pragma unroll
            for (unsigned u = 0; u < S::CHUNK / 32 / G / HKQ_WARP; u++)
                acc += hkq_unit_dot<F, X8, XG>::run(seg, lane + u * HKQ_WARP, gx0, xsm, x, xsum, s8);
        } else
#endif
        {
            const unsigned units = (lastc ? lastg : S::CHUNK / 32) / G;
            for (unsigned u = lane; u < units; u += HKQ_WARP)
                acc += hkq_unit_dot<F, X8, XG>::run(seg, u, gx0, xsm, x, xsum, s8);
        }
        if (lastc) {
            for (int off = HKQ_WARP / 2; off > 0; off /= 2)
                acc += __shfl_xor(acc, off);
            if (lane == 0)
                y[row] = acc;
            acc = 0.0f;
        }
        if (nrow >= (unsigned)rows)
            break;
        row = nrow;
        c = nc;
    }
}

// f32 x on rows wider than HKQ_XMAX: x read from global memory by each
// lane (hkq_matvec_staged_body's XG) puts a lane's float4 reads 128 bytes
// apart, 0.16-0.24x copy on a 4096 x 14336 q4_0 matrix. Here the block
// stages x a HKQ_XMAX-column slice at a time, padded as for narrower
// rows, and every warp sums its row's chunks of that slice before the
// next: a block barrier a slice, x read from L2 once a row round of the
// block (about as many bytes as the rows' weights). Each warp takes the
// block's row rounds in step (a warp without a row in the last round
// still meets the barriers); within a round the weights are staged and
// prefetched as in the narrower path.
template <int F>
__device__ void hkq_matvec_slices_body(const void *w, const float *x, float *y, int rows, int cols, uint4 *wsm,
                                       uint4 *xsm, float *xsum)
{
    typedef hkq_stage<F, 0> S;
    typedef hkq_fmt<F> Q;
    enum { PER = HKQ_XMAX / S::CHUNK }; // chunks a slice
    static_assert(HKQ_XMAX % S::CHUNK == 0, "a slice is whole chunks");
    const unsigned nw = blockDim.x / HKQ_WARP, warp = threadIdx.x / HKQ_WARP, lane = threadIdx.x % HKQ_WARP;
    const unsigned nchunks = ((unsigned)cols + S::CHUNK - 1) / S::CHUNK;
    const unsigned rb16 = (unsigned)cols / Q::BLOCK * Q::BYTES / 16;
    const unsigned last16 = rb16 - (nchunks - 1) * S::SEG16;
    const unsigned lastg = ((unsigned)cols - (nchunks - 1) * S::CHUNK) / 32;
    const uint4 *wp = (const uint4 *)w;
    const unsigned long long stride = (unsigned long long)gridDim.x * nw, first = (unsigned long long)blockIdx.x * nw;
    if (first >= (unsigned)rows) // the whole block: no barrier follows
        return;
    const unsigned long long rounds = ((unsigned)rows - first + stride - 1) / stride; // warp 0's rows, the most
    unsigned long long row = first + warp;
    S st;
    if (row < (unsigned)rows)
        st.load(wp + row * rb16, nchunks == 1 ? last16 : S::SEG16, lane);
    hk_grid_wait(); // launched early: only w was read before
    if (hkq_stage_x<F, 0, 1>(x, cols, xsm, xsum, nullptr)) { // (the sums only)
        for (; row < (unsigned)rows; row += stride)
            hkq_matvec_row<F>(w, x, y, row, cols, lane);
        return;
    }
    uint4 *ws = wsm + warp * (S::SEG16 + 1);
    const hkq_u8 *seg = (const hkq_u8 *)ws;
    float acc = 0.0f;
    for (unsigned long long r = 0; r < rounds; r++, row += stride) {
        const bool mine = row < (unsigned)rows;
        for (unsigned c = 0; c < nchunks; c++) {
            const bool lastc = c + 1 == nchunks;
            if (c % PER == 0) { // the next slice of x, once every warp is done with the last
                const unsigned c0 = c * S::CHUNK, n16 = min((unsigned)cols - c0, (unsigned)HKQ_XMAX) / 4;
                __syncthreads();
                for (unsigned i = threadIdx.x; i < n16; i += blockDim.x)
                    xsm[hkq_xslot<F>(i)] = hkq_xstage<F>(((const uint4 *)(x + c0))[i]);
                __syncthreads();
            }
            if (!mine)
                continue;
            __syncwarp();
            st.store(ws, lastc ? last16 : S::SEG16, lane);
            __syncwarp();
            const unsigned long long nrow = lastc ? row + stride : row;
            const unsigned nc = lastc ? 0 : c + 1;
            if (nrow < (unsigned)rows) // in flight while this step is summed
                st.load(wp + nrow * rb16 + nc * S::SEG16, nc + 1 == nchunks ? last16 : S::SEG16, lane);
            // group gx0 + g of the slice; xsum from the slice's first group
            const unsigned gx0 = c % PER * (S::CHUNK / 32);
            const float *xs = xsum + 2 * (c / PER) * (HKQ_XMAX / 32);
            const unsigned units = (lastc ? lastg : S::CHUNK / 32) / hkq_unit<F, 0>::G;
            for (unsigned u = lane; u < units; u += HKQ_WARP)
                acc += hkq_unit_dot<F, 0, 0>::run(seg, u, gx0, xsm, x, xs, nullptr);
            if (lastc) {
                for (int off = HKQ_WARP / 2; off > 0; off /= 2)
                    acc += __shfl_xor(acc, off);
                if (lane == 0)
                    y[row] = acc;
                acc = 0.0f;
            }
        }
    }
}
// the f32 or q8_1 form of rows wider than HKQ_XMAX
template <int F, int X8> struct hkq_wide {
    static __device__ void run(const void *w, const void *x, float *y, int rows, int cols, uint4 *wsm, uint4 *xsm,
                               float *xsum, int *s8)
    {
        hkq_matvec_staged_body<F, 1, 1>(w, x, y, rows, cols, wsm, xsm, xsum, s8);
    }
};
template <int F> struct hkq_wide<F, 0> {
    static __device__ void run(const void *w, const void *x, float *y, int rows, int cols, uint4 *wsm, uint4 *xsm,
                               float *xsum, int *)
    {
        hkq_matvec_slices_body<F>(w, (const float *)x, y, rows, cols, wsm, xsm, xsum);
    }
};

// q8_1 x for q4_0r's matvec (below): group g's 32 values at 16-byte pieces 3 g and 3 g + 1 (48
// bytes apart: 8 lanes' reads in 8 bank quads), its scale and the integer
// sum of its values after them (HKQ_RX8_META): 3 shared loads a group
// where q8_1's own 36-byte blocks take 11
#define HKQ_RX8_META (HKQ_XMAX / 32 * 3) // 16-byte pieces before the (scale, sum) pairs
#define HKQ_RX8_PIECES (HKQ_RX8_META + HKQ_XMAX / 32 / 2)
__device__ inline void hkq_stage_x8_r(const void *x, int cols, uint4 *xsm)
{
    const hkq_u8 *xb = (const hkq_u8 *)x;
    for (unsigned i = threadIdx.x; i < (unsigned)cols / 32 * 8; i += blockDim.x)
        ((hkq_u32 *)xsm)[i / 8 * 12 + i % 8] = hkq_x8w(xb + 36 * (i / 8), (int)(i % 8));
    for (unsigned g = threadIdx.x; g < (unsigned)cols / 32; g += blockDim.x) {
        const hkq_u8 *b = xb + 36 * g;
        ((int2 *)(xsm + HKQ_RX8_META))[g] =
            make_int2(__float_as_int(hkq_h2f(b)), hkq_x8sum(b, 0) + hkq_x8sum(b, 1));
    }
    __syncthreads();
}
template <int X8> struct hkq_rows_r {
    enum { U = HKQ_XMAX / 32 / 32 }; // groups a lane at most (warps of 32 or more)
    uint4 q[U];
    hkq_u16 d[U];
    // Row row's groups are its blocks from row G / 8 on; lane's group
    // lane + u warp is in block lane / 8 + u warp / 8 of them, at lane % 8.
    __device__ void load(const void *w, unsigned long long row, unsigned G, unsigned lane)
    {
        const unsigned long long b0 = row * (G / 8);
        const uint4 *wq = (const uint4 *)w + 9 * b0 + 9 * (lane / 8) + lane % 8;
        const hkq_u16 *wd = (const hkq_u16 *)w + 72 * b0 + 72 * (lane / 8) + 64 + lane % 8;
        if (G == U * HKQ_WARP) { // every lane U groups (4096 columns): unrolled, no tests
#pragma unroll
            for (int u = 0; u < U; u++) {
                q[u] = wq[9 * (HKQ_WARP / 8) * u];
                d[u] = wd[72 * (HKQ_WARP / 8) * u];
            }
        } else {
            for (int u = 0; u < U; u++)
                if (lane + u * HKQ_WARP < G) {
                    q[u] = wq[9 * (HKQ_WARP / 8) * u];
                    d[u] = wd[72 * (HKQ_WARP / 8) * u];
                }
        }
    }
    __device__ float group(const uint4 *xsm, unsigned gi, int u) const
    {
        const hkq_u32 w[4] = {q[u].x, q[u].y, q[u].z, q[u].w};
        const float dw = __half2float(__ushort_as_half(d[u]));
        if (X8) {
            const uint4 a = xsm[3 * gi], b = xsm[3 * gi + 1];
            const int2 m = ((const int2 *)(xsm + HKQ_RX8_META))[gi];
            const hkq_u32 lo[4] = {a.x, a.y, a.z, a.w}, hi[4] = {b.x, b.y, b.z, b.w};
            return __int_as_float(m.x) * (dw * (float)hkq_q4_0_dot8(w, lo, hi, m.y));
        }
        return dw * hkq_q4_0_sumf(w, (const float *)xsm + 36 * gi);
    }
    // the row's part in lane's groups, added in q4_0's staged order
    __device__ float sum(const uint4 *xsm, unsigned G, unsigned lane) const
    {
        float acc = 0.0f;
        if (G == U * HKQ_WARP) {
#pragma unroll
            for (int u = 0; u < U; u++)
                acc += group(xsm, lane + u * HKQ_WARP, u);
        } else {
            for (int u = 0; u < U; u++)
                if (lane + u * HKQ_WARP < G)
                    acc += group(xsm, lane + u * HKQ_WARP, u);
        }
        return acc;
    }
};
// q4_0r's matvec on rows of up to HKQ_XMAX columns (the staged path's
// conditions): no weights through shared memory. A warp a row, lane l its
// groups l, l + warp, ... (at most 4 on NVIDIA), each group a 16-byte load
// of nibbles and a 2-byte load of its scale straight into registers; the
// next row's loads are in flight while this row is summed. f32 x staged
// as for q4_0 (hkq_stage_x), q8_1 x by hkq_stage_x8_r; each group summed
// by q4_0's own sums (hkq_q4_0_sumf, hkq_q4_0_dot8) in q4_0's order: the
// same y as q4_0's staged path, bit for bit.
// Through the op on an H200 (2026-11-28): q8_1 x 0.68-0.69x copy back to
// back and 0.73-0.75 in graph replay, against q4_0's 0.62-0.63 and 0.66;
// f32 x level with q4_0 (0.46 against 0.47-0.48): its sums, not the
// staging, bound it (quantized-notes.md, "repacked layouts, and q4_0r").
template <int X8>
__device__ void hkq_matvec_r_body(const void *w, const void *x, float *y, int rows, int cols, uint4 *xsm,
                                  float *xsum, int *s8)
{
    const unsigned G = (unsigned)cols / 32, nw = blockDim.x / HKQ_WARP, lane = threadIdx.x % HKQ_WARP;
    const unsigned long long stride = (unsigned long long)gridDim.x * nw;
    unsigned long long row = (unsigned long long)blockIdx.x * nw + threadIdx.x / HKQ_WARP;
    hkq_rows_r<X8> cur, next;
    if (row < (unsigned)rows) // in flight while x is staged
        cur.load(w, row, G, lane);
    hk_grid_wait(); // launched early (the op does): only w was read before
    if (X8)
        hkq_stage_x8_r(x, cols, xsm);
    else
        hkq_stage_x<HKQ_Q4_0R, 0, 0>(x, cols, xsm, xsum, s8); // (no offset: never the unstaged path)
    while (row < (unsigned)rows) { // the whole warp: one row
        const unsigned long long nrow = row + stride;
        if (nrow < (unsigned)rows)
            next.load(w, nrow, G, lane);
        float acc = cur.sum(xsm, G, lane);
        for (int off = HKQ_WARP / 2; off > 0; off /= 2)
            acc += __shfl_xor(acc, off);
        if (lane == 0)
            y[row] = acc;
        row = nrow;
        cur = next;
    }
}

// The shared memory both forms of the staged path use (declared once, so a
// kernel holding both does not hold it twice): x staged where it fits,
// else only its sums. Inlined into the kernel: the AMD compiler gives every
// kernel the shared variables of all non-inlined functions that have any.
template <int F, int X8>
__device__ __forceinline__ void hkq_matvec_staged(const void *w, const void *x, float *y, int rows, int cols)
{
    typedef hkq_stage<F, X8> S;
    __shared__ uint4 wsm[HKQ_ROWS * (S::SEG16 + 1)]; // + 1: hkq_words reads a word past a block
    __shared__ uint4 xsm[F == HKQ_Q4_0R && X8 ? HKQ_RX8_PIECES : S::XWORDS / 4];
    __shared__ float xsum[X8 ? 1 : HKQ_XGMAX / 16];
    __shared__ int s8[X8 ? HKQ_XGMAX / 16 : 1];
    if (F == HKQ_Q4_0R && cols <= HKQ_XMAX)
        hkq_matvec_r_body<X8>(w, x, y, rows, cols, xsm, xsum, s8);
    else if (F != HKQ_Q4_0R && cols <= HKQ_XMAX) // (never compiled for q4_0r)
        hkq_matvec_staged_body<F, X8, 0>(w, x, y, rows, cols, wsm, xsm, xsum, s8);
    else
        hkq_wide<F, X8>::run(w, x, y, rows, cols, wsm, xsm, xsum, s8);
}

// -------------------------------------------------------------- matvec

template <int F>
__device__ void hkq_matvec_row(const void *w, const float *x, float *y, long long row, int cols, int lane);
template <int F>
__device__ void hkq_matvec_q8_1_row(const void *w, const void *xq, float *y, long long row, int cols, int lane);
template <int F>
__device__ float hkq_row_sum(const void *w, const float *x, long long row, int cols, int first, int step);
template <int F>
__device__ float hkq_row_sum_q8_1(const void *w, const void *xq, long long row, int cols, int first, int step);

// Whether the block is whole warps: the staged paths and the warp-per-row
// walk need it. A kernel launched by hand with, say, 16 threads a block
// takes hkq_matvec_threads instead (each thread its own rows), so every
// geometry gives the right y and ends.
__device__ inline bool hkq_whole_warps() { return blockDim.x >= warpSize && blockDim.x % warpSize == 0; }

// the rows of this block's threads, each thread one row alone (no
// shuffles): the path of blocks that are not whole warps
template <int F, int X8>
__device__ void hkq_matvec_threads(const void *w, const void *x, float *y, int rows, int cols)
{
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < rows;
         row += (long long)gridDim.x * blockDim.x)
        y[row] = X8 ? hkq_row_sum_q8_1<F>(w, x, row, cols, 0, 1) : hkq_row_sum<F>(w, (const float *)x, row, cols, 0, 1);
}

template <int F>
__device__ __forceinline__ void hkq_matvec(const void *w, const float *x, float *y, int rows, int cols)
{
    if (!hkq_can_stage<F, 0>(w, x, cols) || !hkq_whole_warps())
        hk_grid_wait(); // launched early: the staged paths wait after their first loads
    if (!hkq_whole_warps()) {
        hkq_matvec_threads<F, 0>(w, x, y, rows, cols);
        return;
    }
    if (hkq_can_stage<F, 0>(w, x, cols)) {
        hkq_matvec_staged<F, 0>(w, x, y, rows, cols);
        return;
    }
    // grid-stride over rows, a warp each: the whole warp leaves together,
    // so the shuffles below see all lanes
    const int lane = threadIdx.x % warpSize, nw = blockDim.x / warpSize;
    for (long long row = (long long)blockIdx.x * nw + threadIdx.x / warpSize; row < rows;
         row += (long long)gridDim.x * nw)
        hkq_matvec_row<F>(w, x, y, row, cols, lane);
}

// matvec's path for any shape: the sum over groups first, first + step,
// ... of the row, each decoded from global memory.
template <int F>
__device__ float hkq_row_sum(const void *w, const float *x, long long row, int cols, int first, int step)
{
    typedef hkq_fmt<F> Q;
    const hkq_u8 *r = (const hkq_u8 *)w + row * (long long)(cols / Q::BLOCK) * Q::BYTES;
    int groups = cols / 32;
    // x is read 16 bytes at a time where its address allows (a buffer's
    // start always does; a view may not)
    bool x16 = ((unsigned long long)x & 15) == 0;
    float acc = 0.0f;
    for (int g = first; g < groups; g += step) {
        float v[32];
        hkq_decode<F>(r + (long long)(g / (Q::BLOCK / 32)) * Q::BYTES, g % (Q::BLOCK / 32), v);
        const float *xs = x + g * 32;
        if (x16) {
            for (int j = 0; j < 32; j += 4) {
                float4 q = *(const float4 *)(xs + j);
                acc += v[j] * q.x + v[j + 1] * q.y + v[j + 2] * q.z + v[j + 3] * q.w;
            }
        } else {
            for (int j = 0; j < 32; j++)
                acc += v[j] * xs[j];
        }
    }
    return acc;
}
// lane l of the row's warp sums groups l, l + warpSize, ...
template <int F>
__device__ void hkq_matvec_row(const void *w, const float *x, float *y, long long row, int cols, int lane)
{
    float acc = hkq_row_sum<F>(w, x, row, cols, lane, warpSize);
    for (int off = warpSize / 2; off > 0; off /= 2)
        acc += __shfl_xor(acc, off);
    if (lane == 0)
        y[row] = acc;
}

// ggml's vec_dot_*_q8_1 form: x quantized to q8_1 blocks (quantize_q8_1),
// each group's dot product taken on the integers, per half of 16:
// d8 * (a * sum q x8 + o * sum x8). Half the activation bytes of an f32 x
// and integer arithmetic for the products; the warp-per-row walk is
// matvec's.
template <int F>
__device__ __forceinline__ void hkq_matvec_q8_1(const void *w, const void *xq, float *y, int rows, int cols)
{
    if (!hkq_can_stage<F, 1>(w, xq, cols) || !hkq_whole_warps())
        hk_grid_wait(); // launched early: the staged paths wait after their first loads
    if (!hkq_whole_warps()) {
        hkq_matvec_threads<F, 1>(w, xq, y, rows, cols);
        return;
    }
    if (hkq_can_stage<F, 1>(w, xq, cols)) {
        hkq_matvec_staged<F, 1>(w, xq, y, rows, cols);
        return;
    }
    const int lane = threadIdx.x % warpSize, nw = blockDim.x / warpSize;
    for (long long row = (long long)blockIdx.x * nw + threadIdx.x / warpSize; row < rows;
         row += (long long)gridDim.x * nw)
        hkq_matvec_q8_1_row<F>(w, xq, y, row, cols, lane);
}

template <int F>
__device__ float hkq_row_sum_q8_1(const void *w, const void *xq, long long row, int cols, int first, int step)
{
    typedef hkq_fmt<F> Q;
    const hkq_u8 *r = (const hkq_u8 *)w + row * (long long)(cols / Q::BLOCK) * Q::BYTES;
    float acc = 0.0f;
    for (int g = first; g < cols / 32; g += step) {
        int q[32];
        float a[2], o[2] = {0.0f, 0.0f};
        Q::decode_q(r + (long long)(g / (Q::BLOCK / 32)) * Q::BYTES, g % (Q::BLOCK / 32), q, a, o);
        const hkq_u8 *xb = (const hkq_u8 *)xq + (long long)g * 36;
        float d8 = hkq_f16(hkq_ld16(xb));
        hkq_bytes<32> x8(xb + 4);
        for (int h = 0; h < 2; h++) {
            int dot = 0, sum = 0;
            for (int j = 16 * h; j < 16 * h + 16; j++) {
                int v = (signed char)x8[j];
                dot += q[j] * v;
                sum += v;
            }
            acc += d8 * (a[h] * (float)dot + (Q::OFFSET ? o[h] * (float)sum : 0.0f));
        }
    }
    return acc;
}
template <int F>
__device__ void hkq_matvec_q8_1_row(const void *w, const void *xq, float *y, long long row, int cols, int lane)
{
    float acc = hkq_row_sum_q8_1<F>(w, xq, row, cols, lane, warpSize);
    for (int off = warpSize / 2; off > 0; off /= 2)
        acc += __shfl_xor(acc, off);
    if (lane == 0)
        y[row] = acc;
}

// -------------------------------------------------------------- matmul

// Y = X W^T for a batch of activations: X [m, cols] f32, W [rows, cols]
// quantized, Y [m, rows] f32 (PyTorch's x @ w.T). A block of 256 threads
// computes a 64 x 64 tile of Y (64 activation rows x 64 weight rows, 4 x 4
// per thread), stepping through cols 32 at a time: 64 threads each decode
// one weight group into shared memory (once per tile, not per activation
// row), all 256 stage the 64 x 32 slice of X, then each thread runs its
// 4 x 4 outer products over the 32. Partial tiles (rows or m not a
// multiple of 64) read zeros and write nothing outside Y.
#define HKQ_TILE 64
// the tile of a block that is not 256 threads (a launch by hand): each
// thread takes outputs of the tile alone, decoding their weights itself
// (matvec's row sum of weight row r against activation row mi)
template <int F>
__device__ void hkq_matmul_any(const void *w, const float *x, float *y, int rows, int cols, int m)
{
    for (int e = threadIdx.x; e < HKQ_TILE * HKQ_TILE; e += blockDim.x) {
        const int mi = blockIdx.y * HKQ_TILE + e / HKQ_TILE, r = blockIdx.x * HKQ_TILE + e % HKQ_TILE;
        if (mi < m && r < rows)
            y[(long long)mi * rows + r] = hkq_row_sum<F>(w, x + (long long)mi * cols, r, cols, 0, 1);
    }
}
template <int F>
__device__ void hkq_matmul(const void *w, const float *x, float *y, int rows, int cols, int m)
{
    typedef hkq_fmt<F> Q;
    if (blockDim.x != 256) { // the tiles below are 16 x 16 threads of 4 x 4
        hkq_matmul_any<F>(w, x, y, rows, cols, m);
        return;
    }
    __shared__ float ws[32][HKQ_TILE + 1];
    __shared__ float xs[32][HKQ_TILE + 1];
    const int t = threadIdx.x, tr = t % 16, tm = t / 16;
    const int row0 = blockIdx.x * HKQ_TILE, m0 = blockIdx.y * HKQ_TILE;
    const long long row_bytes = (long long)(cols / Q::BLOCK) * Q::BYTES;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            acc[i][j] = 0.0f;
    for (int g = 0; g < cols / 32; g++) {
        if (t < HKQ_TILE) {
            float v[32];
            int r = row0 + t;
            if (r < rows)
                hkq_decode<F>((const hkq_u8 *)w + r * row_bytes + (long long)(g / (Q::BLOCK / 32)) * Q::BYTES,
                          g % (Q::BLOCK / 32), v);
            for (int k = 0; k < 32; k++)
                ws[k][t] = r < rows ? v[k] : 0.0f;
        }
        for (int e = t; e < HKQ_TILE * 32; e += blockDim.x) {
            int i = e / 32, k = e % 32, mi = m0 + i;
            xs[k][i] = mi < m ? x[(long long)mi * cols + g * 32 + k] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < 32; k++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) {
                a[i] = xs[k][tm + 16 * i];
                b[i] = ws[k][tr + 16 * i];
            }
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int mi = m0 + tm + 16 * i, r = row0 + tr + 16 * j;
            if (mi < m && r < rows)
                y[(long long)mi * rows + r] = acc[i][j];
        }
}

// ------------------------------------------ matmul, 16-bit activations

// Y [m, rows] = X [m, cols] W^T for X f16 or bf16 (T) and at most
// HKQ_MMQ_M activation rows, W read once: a block of 256 threads takes 64
// weight rows, stepping through cols 128 at a time. Each thread decodes one
// weight group (ggml's f32 values, rounded to T as dequantize rounds them)
// into shared memory, the block stages X's 128 columns, and on NVIDIA sm_80+
// each warp multiplies its 16 weight rows by X over half the step on the
// tensor cores (mma.sync m16n8k16, f32 sums; n-tiles of 8 activation rows;
// the two halves meet in shared memory at the end); elsewhere
// each thread sums its outputs from the same tiles in f32. The product of
// dequantize(W) to T and a 16-bit matmul, without W's 16-bit copy.
#define HKQ_MMQ_M 64  // activation rows at most (the op's bound)
#define HKQ_MMQ_R 64   // weight rows a block: 4 warps of 16, twice (each pair a half of the step)
#define HKQ_MMQ_K 128  // columns a step: 4 groups, one a thread
#define HKQ_MMQ_LD 136 // a staged row's stride in elements: 128 columns + 8, so that the
                       // 32-bit reads of a warp's lanes (8 rows, 4 words) fall in 32 banks
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HKQ_MMQ_TC 1
__device__ inline void hkq_mma16(float *d, const unsigned *a, const unsigned *b, __half *)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ inline void hkq_mma16(float *d, const unsigned *a, const unsigned *b, __hip_bfloat16 *)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
#define HKQ_MMQ_TC 0
#endif
__device__ inline float hkq_tof(float v) { return v; }
__device__ inline float hkq_tof(__half v) { return __half2float(v); }
__device__ inline float hkq_tof(__hip_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ inline unsigned hkq_ld2(const T *p) { return *(const unsigned *)(const void *)p; }

// a launch by hand with a block other than 256 threads: each thread takes
// outputs of the block's rows alone, decoding their weights itself
template <int F, typename T, typename Y>
__device__ __forceinline__ void hkq_mmq_any(const void *w, const T *x, Y *y, int rows, int cols, int m)
{
    typedef hkq_fmt<F> Q;
    const long long row_bytes = (long long)(cols / Q::BLOCK) * Q::BYTES;
    for (int e = threadIdx.x; e < HKQ_MMQ_R * m; e += blockDim.x) {
        const int r = blockIdx.x * HKQ_MMQ_R + e % HKQ_MMQ_R, n = e / HKQ_MMQ_R;
        if (r >= rows)
            continue;
        float acc = 0.0f;
        for (int g = 0; g < cols / 32; g++) {
            float v[32];
            hkq_decode<F>((const hkq_u8 *)w + r * row_bytes + (long long)(g / (Q::BLOCK / 32)) * Q::BYTES,
                          g % (Q::BLOCK / 32), v);
            for (int k = 0; k < 32; k++) {
                T wt;
                hkq_store(&wt, v[k]);
                acc += hkq_tof(wt) * hkq_tof(x[(long long)n * cols + 32 * g + k]);
            }
        }
        hkq_store(y + (long long)n * rows + r, acc);
    }
}

// Inlined into its kernel: ROCm gathers the shared memory of functions it
// does not inline into every kernel of the module (the AOT images' LDS
// then passes 64 KiB).
// ws4, xs4: the kernel's shared tiles of W and X (HKQ_MMQ_SHARED16 pieces of
// 16 bytes each), declared there once for both of its output types
#define HKQ_MMQ_SHARED16 (HKQ_MMQ_R * HKQ_MMQ_LD * 2 / 16)
template <int F, typename T, typename Y>
__device__ __forceinline__ void hkq_mmq(const void *w, const T *x, Y *y, int rows, int cols, int m, uint4 *ws4,
                                        uint4 *xs4)
{
    typedef hkq_fmt<F> Q;
    if (blockDim.x != 256 || m > HKQ_MMQ_M) {
        hkq_mmq_any<F, T, Y>(w, x, y, rows, cols, m);
        return;
    }
    static_assert(sizeof(T) == 2 && HKQ_MMQ_M == HKQ_MMQ_R && HKQ_MMQ_R * HKQ_MMQ_K / 32 == 256,
                  "16-bit tiles of the same size; 256 threads: a row and a group each");
    T *ws = (T *)ws4, *xs = (T *)xs4;
    const unsigned t = threadIdx.x, lane = t % 32, wi = t / 32, g8 = lane / 4, q = lane % 4;
    const int row0 = blockIdx.x * HKQ_MMQ_R, groups = cols / 32, m8 = (m + 7) / 8 * 8;
    const long long row_bytes = (long long)(cols / Q::BLOCK) * Q::BYTES;
    float acc[HKQ_MMQ_M / 8][4];
    for (int j = 0; j < HKQ_MMQ_M / 8; j++)
        for (int i = 0; i < 4; i++)
            acc[j][i] = 0.0f;
    for (int g0 = 0; g0 < groups; g0 += HKQ_MMQ_K / 32) {
        { // thread t: weight row t / 4, the step's group t % 4 (zeros past the
          // matrix): a warp's loads cover 8 rows' consecutive bytes (with a row
          // a lane, every 2-byte load of a warp touched 32 lines: L1-bound)
            const int r = row0 + (int)(t / 4), g = g0 + (int)(t % 4);
            float v[32];
            if (r < rows && g < groups)
                hkq_decode<F>((const hkq_u8 *)w + r * row_bytes + (long long)(g / (Q::BLOCK / 32)) * Q::BYTES,
                              g % (Q::BLOCK / 32), v);
            else
                for (int k = 0; k < 32; k++)
                    v[k] = 0.0f;
            hkq_pack<T>(v, (uint4 *)(ws + (t / 4) * HKQ_MMQ_LD + 32 * (t % 4)));
        }
        for (int i = (int)t; i < m8 * (HKQ_MMQ_K / 2); i += 256) { // X's rows (to a whole n-tile), 2 values a word
            const int n = i / (HKQ_MMQ_K / 2), c = 2 * (i % (HKQ_MMQ_K / 2));
            unsigned v = 0;
            if (n < m && 32 * g0 + c < cols)
                v = hkq_ld2(x + (long long)n * cols + 32 * g0 + c);
            *(unsigned *)(void *)(xs + n * HKQ_MMQ_LD + c) = v;
        }
        __syncthreads();
#if HKQ_MMQ_TC
        { // warp wi: weight rows 16 (wi % 4) + g8 and + 8 over the step's
          // half wi / 4; lane (g8, q) holds the fragments' columns 2q, 2q + 1
          // and 2q + 8, 2q + 9 of each k16
            const int k0 = HKQ_MMQ_K / 2 * (int)(wi / 4);
            const T *wa = ws + (16 * (wi % 4) + g8) * HKQ_MMQ_LD + 2 * q + k0, *wb = wa + 8 * HKQ_MMQ_LD;
            for (int k = 0; k < HKQ_MMQ_K / 2; k += 16) {
                const unsigned a[4] = {hkq_ld2(wa + k), hkq_ld2(wb + k), hkq_ld2(wa + k + 8), hkq_ld2(wb + k + 8)};
                for (int j = 0; j < HKQ_MMQ_M / 8; j++)
                    if (8 * j < m8) {
                        const T *xb = xs + (8 * j + g8) * HKQ_MMQ_LD + 2 * q + k0 + k;
                        const unsigned b[2] = {hkq_ld2(xb), hkq_ld2(xb + 8)};
                        hkq_mma16(acc[j], a, b, (T *)0);
                    }
            }
        }
#else
        // thread t: weight row t % 64, activation rows t / 64 + 4 i
        for (int i = 0; i < HKQ_MMQ_M / 4; i++) {
            const int n = (int)(t / HKQ_MMQ_R) + 4 * i;
            if (n < m8) {
                float s = 0.0f;
                for (int k = 0; k < HKQ_MMQ_K; k++)
                    s += hkq_tof(ws[(t % HKQ_MMQ_R) * HKQ_MMQ_LD + k]) * hkq_tof(xs[n * HKQ_MMQ_LD + k]);
                acc[i / 4][i % 4] += s;
            }
        }
#endif
        __syncthreads();
    }
#if HKQ_MMQ_TC
    // the two halves of each step meet: warps 4-7 leave their sums in
    // shared memory (ws, free after the last step), warps 0-3 add them
    float *part = (float *)ws4;
    if (wi >= 4)
        for (int j = 0; j < HKQ_MMQ_M / 8; j++)
            for (int i = 0; i < 4; i++)
                part[((wi - 4) * (HKQ_MMQ_M / 8) + j) * 128 + 4 * lane + i] = acc[j][i];
    __syncthreads();
    if (wi < 4)
        for (int j = 0; j < HKQ_MMQ_M / 8; j++)
            for (int i = 0; i < 4; i++) { // C: row g8 (+ 8 for i >= 2), column 2 q (+ 1 for odd i)
                const int r = row0 + 16 * (int)wi + (int)g8 + 8 * (i / 2), n = 8 * j + 2 * (int)q + i % 2;
                if (n < m && r < rows)
                    hkq_store(y + (long long)n * rows + r,
                              acc[j][i] + part[(wi * (HKQ_MMQ_M / 8) + j) * 128 + 4 * lane + i]);
            }
#else
    for (int i = 0; i < HKQ_MMQ_M / 4; i++) {
        const int r = row0 + (int)(t % HKQ_MMQ_R), n = (int)(t / HKQ_MMQ_R) + 4 * i;
        if (n < m && r < rows)
            hkq_store(y + (long long)n * rows + r, acc[i / 4][i % 4]);
    }
#endif
}

// ------------------------------------------------------------- quantize

// The bits through __half_as_ushort: reading a __half through a u16
// pointer breaks aliasing rules, and NVRTC's code lost the low byte.
__device__ inline hkq_u16 hkq_to_f16(float f) { return __half_as_ushort(__float2half(f)); }
// Every 16-bit field of a block sits at an even offset of a block of an
// even size, so one 16-bit store writes it. (Two byte stores of the halves
// of a __half_as_ushort value lost the low byte on the H100, 0x22A0 stored
// as 0x2200: CUDA 13's ptxas makes the low byte's store F2I.U8 of the
// half's value; docs/nvidia-backend.md.)
__device__ inline void hkq_st16(hkq_u8 *p, hkq_u16 v) { *(hkq_u16 *)(void *)p = v; }

// The largest magnitude of 32 values, and the value that has it (the first).
__device__ inline float hkq_absmax(const float *x, float *at)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++)
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    *at = max;
    return amax;
}

// q4_0 and q5_0: d = max / -8 (-16), q = min(15 (31), (int8)(x / d + 8.5 (16.5))).
template <int BITS> __device__ void hkq_quant_sym(const float *x, hkq_u8 *b)
{
    float max;
    hkq_absmax(x, &max);
    const float d = max / (BITS == 4 ? -8 : -16), id = d ? 1.0f / d : 0.0f;
    hkq_st16(b, hkq_to_f16(d));
    hkq_u32 qh = 0;
    // ggml's C rounds x * id + 8.5 once where its compiler fuses the two
    // (an FMA) and twice where not; gguf's quantizer, the reference here,
    // takes the fused result: the exact product in double, one rounding.
    const double bias = BITS == 4 ? 8.5 : 16.5;
    for (int j = 0; j < 16; j++) {
        float x0 = (float)((double)x[j] * (double)id + bias);
        float x1 = (float)((double)x[j + 16] * (double)id + bias);
        int q0 = min(BITS == 4 ? 15 : 31, (int)(signed char)x0);
        int q1 = min(BITS == 4 ? 15 : 31, (int)(signed char)x1);
        b[(BITS == 4 ? 2 : 6) + j] = (hkq_u8)((q0 & 0xf) | ((q1 & 0xf) << 4));
        qh |= ((hkq_u32)(q0 & 0x10) >> 4) << j;
        qh |= ((hkq_u32)(q1 & 0x10) >> 4) << (j + 16);
    }
    if (BITS == 5)
        for (int k = 0; k < 4; k++)
            b[2 + k] = (hkq_u8)(qh >> (8 * k));
}

// q4_1 and q5_1: d = (max - min) / 15 (31), m = min, q = (x - min) / d + 0.5 truncated.
template <int BITS> __device__ void hkq_quant_asym(const float *x, hkq_u8 *b)
{
    float mn = x[0], mx = x[0];
    for (int j = 1; j < 32; j++) {
        mn = x[j] < mn ? x[j] : mn;
        mx = x[j] > mx ? x[j] : mx;
    }
    const float d = (mx - mn) / ((1 << BITS) - 1), id = d ? 1.0f / d : 0.0f;
    hkq_st16(b, hkq_to_f16(d));
    hkq_st16(b + 2, hkq_to_f16(mn));
    hkq_u32 qh = 0;
    for (int j = 0; j < 16; j++) {
        float x0 = hkq_mul(x[j] - mn, id), x1 = hkq_mul(x[j + 16] - mn, id);
        // ggml clamps q4_1 to 15 through an int8 and casts q5_1 to uint8 unclamped
        int q0 = BITS == 4 ? min(15, (int)(signed char)(x0 + 0.5f)) : (int)(hkq_u8)(x0 + 0.5f);
        int q1 = BITS == 4 ? min(15, (int)(signed char)(x1 + 0.5f)) : (int)(hkq_u8)(x1 + 0.5f);
        b[(BITS == 4 ? 4 : 8) + j] = (hkq_u8)((q0 & 0xf) | ((q1 & 0xf) << 4));
        qh |= ((hkq_u32)(q0 & 0x10) >> 4) << j;
        qh |= ((hkq_u32)(q1 & 0x10) >> 4) << (j + 16);
    }
    if (BITS == 5)
        for (int k = 0; k < 4; k++)
            b[4 + k] = (hkq_u8)(qh >> (8 * k));
}

// q8_0 and q8_1: d = amax / 127, q = round(x / d); q8_1 also s = d * sum(q).
template <int S> __device__ void hkq_quant_q8(const float *x, hkq_u8 *b)
{
    float at;
    const float d = hkq_absmax(x, &at) / 127, id = d ? 1.0f / d : 0.0f;
    hkq_st16(b, hkq_to_f16(d));
    int sum = 0;
    for (int j = 0; j < 32; j++) {
        int q = (int)roundf(hkq_mul(x[j], id));
        b[(S ? 4 : 2) + j] = (hkq_u8)(signed char)q;
        sum += q;
    }
    if (S)
        hkq_st16(b + 2, hkq_to_f16(hkq_mul((float)sum, d)));
}

// q8_K: iscale = -127 / max (max: the value of largest magnitude), q =
// min(127, nearest(iscale * x)) (ties to even, ggml's nearest_int), d =
// 1 / iscale, bsums the sums of each 16 q. ggml's C may fuse iscale * x
// into its rounding trick's add; here the product is rounded first.
__device__ void hkq_quant_q8_K(const float *x, hkq_u8 *b)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 256; j++)
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    const float iscale = amax ? -127.f / max : 0.0f;
    const float d = amax ? 1 / iscale : 0.0f;
    hkq_u32 db = __float_as_uint(d);
    for (int k = 0; k < 4; k++)
        b[k] = (hkq_u8)(db >> (8 * k));
    for (int j = 0; j < 16; j++) {
        int sum = 0;
        for (int l = 0; l < 16; l++) {
            int q = amax ? min(127, (int)rintf(hkq_mul(iscale, x[16 * j + l]))) : 0;
            b[4 + 16 * j + l] = (hkq_u8)(signed char)q;
            sum += q;
        }
        hkq_st16(b + 260 + 2 * j, (hkq_u16)(short)sum);
    }
}

// ggml's k-quant reference quantizers (quantize_row_q2_K_ref ...
// quantize_row_q6_K_ref): iterative searches for each run's scale (and
// min), then 6- or 4-bit scales of those, then the integers again against
// the rounded scales. One thread per 256-value block. Every product goes
// through __fmul_rn and every sum through __fadd_rn / __fsub_rn: the
// reference is ggml's C with each operation rounded to f32 on its own (no
// fused multiply-add), which is what it computes on x86-64 without FMA;
// NVRTC would fuse a product into a following add otherwise.
#define HKQ_EPS 1e-15f // ggml's GROUP_MAX_EPS: below it a run counts as zero
__device__ inline float hkq_add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline float hkq_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ inline float hkq_div(float a, float b) { return __fdiv_rn(a, b); }
// ggml's nearest_int: v + 1.5 * 2^23 rounds v to nearest, ties to even
__device__ inline int hkq_nearest(float v)
{
    return (int)(__float_as_uint(hkq_add(v, 12582912.0f)) & 0x7fffffu) - 0x400000;
}

// The value of largest magnitude among n (the first that has it), and it.
__device__ inline float hkq_absmax_n(const float *x, int n, float *at)
{
    float amax = 0.0f;
    *at = 0.0f;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            *at = x[i];
        }
    return amax;
}

// w x l and w l l added to the two sums (ggml's order: (w * x) * l)
__device__ inline void hkq_wsums(float w, float x, int l, float *slx, float *sl2)
{
    *slx = hkq_add(*slx, hkq_mul(hkq_mul(w, x), (float)l));
    *sl2 = hkq_add(*sl2, hkq_mul(hkq_mul(w, (float)l), (float)l));
}

// make_qx_quants(n, nmax, x, L, rmse_type 1, no weights): signed levels
// -nmax ... nmax - 1 (stored + nmax), weights x^2, scales -(nmax + 0.1 is) /
// max tried for is = -9 ... 9; returns the best least-squares scale.
__device__ float hkq_make_qx(int n, int nmax, const float *x, hkq_u8 *L)
{
    float mx, amax = hkq_absmax_n(x, n, &mx);
    if (amax < HKQ_EPS) {
        for (int i = 0; i < n; i++)
            L[i] = 0;
        return 0.0f;
    }
    float iscale = hkq_div((float)-nmax, mx), sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = max(-nmax, min(nmax - 1, hkq_nearest(hkq_mul(iscale, x[i]))));
        L[i] = (hkq_u8)(l + nmax);
        hkq_wsums(hkq_mul(x[i], x[i]), x[i], l, &sumlx, &suml2);
    }
    float scale = suml2 != 0.0f ? hkq_div(sumlx, suml2) : 0.0f;
    float best = hkq_mul(scale, sumlx);
    for (int is = -9; is <= 9; is++) {
        if (is == 0)
            continue;
        iscale = hkq_div(-hkq_add((float)nmax, hkq_mul(0.1f, (float)is)), mx);
        sumlx = suml2 = 0.0f;
        for (int i = 0; i < n; i++) {
            int l = max(-nmax, min(nmax - 1, hkq_nearest(hkq_mul(iscale, x[i]))));
            hkq_wsums(hkq_mul(x[i], x[i]), x[i], l, &sumlx, &suml2);
        }
        if (suml2 > 0.0f && hkq_mul(sumlx, sumlx) > hkq_mul(best, suml2)) {
            for (int i = 0; i < n; i++)
                L[i] = (hkq_u8)(nmax + max(-nmax, min(nmax - 1, hkq_nearest(hkq_mul(iscale, x[i])))));
            scale = hkq_div(sumlx, suml2);
            best = hkq_mul(scale, sumlx);
        }
    }
    return scale;
}

// make_q3_quants(n, nmax, x, L, do_rmse true): levels -nmax ... nmax - 1,
// then up to 5 passes moving single values to the level that improves the
// weighted (x^2) least-squares fit.
__device__ float hkq_make_q3(int n, int nmax, const float *x, hkq_u8 *Lo)
{
    float mx, amax = hkq_absmax_n(x, n, &mx);
    if (amax < HKQ_EPS) {
        for (int i = 0; i < n; i++)
            Lo[i] = 0;
        return 0.0f;
    }
    float iscale = hkq_div((float)-nmax, mx), sumlx = 0.0f, suml2 = 0.0f;
    signed char L[16];
    for (int i = 0; i < n; i++) {
        L[i] = (signed char)max(-nmax, min(nmax - 1, hkq_nearest(hkq_mul(iscale, x[i]))));
        hkq_wsums(hkq_mul(x[i], x[i]), x[i], L[i], &sumlx, &suml2);
    }
    for (int itry = 0; itry < 5; itry++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            float w = hkq_mul(x[i], x[i]);
            float slx = hkq_sub(sumlx, hkq_mul(hkq_mul(w, x[i]), (float)L[i]));
            if (slx > 0.0f) {
                float sl2 = hkq_sub(suml2, hkq_mul(hkq_mul(w, (float)L[i]), (float)L[i]));
                int nl = max(-nmax, min(nmax - 1, hkq_nearest(hkq_div(hkq_mul(x[i], sl2), slx))));
                if (nl != L[i]) {
                    hkq_wsums(w, x[i], nl, &slx, &sl2);
                    if (sl2 > 0.0f &&
                        hkq_mul(hkq_mul(slx, slx), suml2) > hkq_mul(hkq_mul(sumlx, sumlx), sl2)) {
                        L[i] = (signed char)nl;
                        sumlx = slx;
                        suml2 = sl2;
                        changed++;
                    }
                }
            }
        }
        if (!changed)
            break;
    }
    for (int i = 0; i < n; i++)
        Lo[i] = (hkq_u8)(L[i] + nmax);
    return suml2 > 0.0f ? hkq_div(sumlx, suml2) : 0.0f;
}

// make_qkx2_quants: levels 0 ... nmax of (x - min) / scale with min <= 0,
// weighted; nstep + 1 trial scales (rmin + rdelta is + nmax) / (max - min),
// each refit by weighted least squares for scale and min, the one of least
// weighted error (absolute with mad, else squared) kept. *mn = -min.
__device__ float hkq_make_qkx2(int n, int nmax, const float *x, const float *w, hkq_u8 *L, float *mn,
                               float rmin, float rdelta, int nstep, bool mad)
{
    float lo = x[0], hi = x[0], sum_w = w[0], sum_x = hkq_mul(w[0], x[0]);
    for (int i = 1; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
        sum_w = hkq_add(sum_w, w[i]);
        sum_x = hkq_add(sum_x, hkq_mul(w[i], x[i]));
    }
    if (lo > 0.0f)
        lo = 0.0f;
    if (hi == lo) {
        for (int i = 0; i < n; i++)
            L[i] = 0;
        *mn = -lo;
        return 0.0f;
    }
    float iscale = hkq_div((float)nmax, hkq_sub(hi, lo)), scale = hkq_div(1.0f, iscale), best = 0.0f;
    for (int i = 0; i < n; i++) {
        L[i] = (hkq_u8)max(0, min(nmax, hkq_nearest(hkq_mul(iscale, hkq_sub(x[i], lo)))));
        float diff = hkq_sub(hkq_add(hkq_mul(scale, (float)L[i]), lo), x[i]);
        best = hkq_add(best, hkq_mul(w[i], mad ? fabsf(diff) : hkq_mul(diff, diff)));
    }
    hkq_u8 Laux[32];
    for (int is = 0; is <= nstep; is++) {
        iscale = hkq_div(hkq_add(hkq_add(rmin, hkq_mul(rdelta, (float)is)), (float)nmax), hkq_sub(hi, lo));
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; i++) {
            int l = max(0, min(nmax, hkq_nearest(hkq_mul(iscale, hkq_sub(x[i], lo)))));
            Laux[i] = (hkq_u8)l;
            float wl = hkq_mul(w[i], (float)l);
            sum_l = hkq_add(sum_l, wl);
            sum_l2 = hkq_add(sum_l2, hkq_mul(wl, (float)l));
            sum_xl = hkq_add(sum_xl, hkq_mul(wl, x[i]));
        }
        float D = hkq_sub(hkq_mul(sum_w, sum_l2), hkq_mul(sum_l, sum_l));
        if (D > 0.0f) {
            float ts = hkq_div(hkq_sub(hkq_mul(sum_w, sum_xl), hkq_mul(sum_x, sum_l)), D);
            float tm = hkq_div(hkq_sub(hkq_mul(sum_l2, sum_x), hkq_mul(sum_l, sum_xl)), D);
            if (tm > 0.0f) {
                tm = 0.0f;
                ts = hkq_div(sum_xl, sum_l2);
            }
            float err = 0.0f;
            for (int i = 0; i < n; i++) {
                float diff = hkq_sub(hkq_add(hkq_mul(ts, (float)Laux[i]), tm), x[i]);
                err = hkq_add(err, hkq_mul(w[i], mad ? fabsf(diff) : hkq_mul(diff, diff)));
            }
            if (err < best) {
                for (int i = 0; i < n; i++)
                    L[i] = Laux[i];
                best = err;
                scale = ts;
                lo = tm;
            }
        }
    }
    *mn = -lo;
    return scale;
}

// 2-bit values L (0 ... 3; q3_K's low 2 bits) of a 256-block into qs:
// byte l of each 32 holds values l, l + 32, l + 64, l + 96 of its 128.
__device__ inline void hkq_pack2(const hkq_u8 *L, hkq_u8 *qs)
{
    for (int j = 0; j < 256; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] = (hkq_u8)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

// q2_K {u8 scales[16]; u8 qs[64]; f16 d, dmin}: runs of 16, 4-bit scale
// and min each (make_qkx2_quants, weights |x|, absolute error).
__device__ void hkq_quant_q2_K(const float *x, hkq_u8 *b)
{
    hkq_u8 L[256];
    float w[16], scales[16], mins[16], max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 16; j++) {
        for (int l = 0; l < 16; l++)
            w[l] = fabsf(x[16 * j + l]);
        scales[j] = hkq_make_qkx2(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
        max_scale = scales[j] > max_scale ? scales[j] : max_scale;
        max_min = mins[j] > max_min ? mins[j] : max_min;
    }
    float iscale = max_scale > 0.0f ? hkq_div(15.0f, max_scale) : 0.0f;
    float imin = max_min > 0.0f ? hkq_div(15.0f, max_min) : 0.0f;
    for (int j = 0; j < 16; j++)
        b[j] = (hkq_u8)((max_scale > 0.0f ? hkq_nearest(hkq_mul(iscale, scales[j])) : 0) |
                        (max_min > 0.0f ? hkq_nearest(hkq_mul(imin, mins[j])) << 4 : 0));
    hkq_st16(b + 80, hkq_to_f16(max_scale > 0.0f ? hkq_div(max_scale, 15.0f) : 0.0f));
    hkq_st16(b + 82, hkq_to_f16(max_min > 0.0f ? hkq_div(max_min, 15.0f) : 0.0f));
    const float dd = hkq_f16(hkq_ld16(b + 80)), dm = hkq_f16(hkq_ld16(b + 82));
    for (int j = 0; j < 16; j++) {
        const float d = hkq_mul(dd, (float)(b[j] & 0xf));
        if (d == 0.0f)
            continue;
        const float m = hkq_mul(dm, (float)(b[j] >> 4));
        for (int i = 0; i < 16; i++)
            L[16 * j + i] = (hkq_u8)max(0, min(3, hkq_nearest(hkq_div(hkq_add(x[16 * j + i], m), d))));
    }
    hkq_pack2(L, b + 16);
}

// q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: runs of 16 by
// make_q3_quants, their scales to 6 bits signed (low 4 bits in
// scales[0..7], high 2 in scales[8..11]), the values' third bit in hmask.
__device__ void hkq_quant_q3_K(const float *x, hkq_u8 *b)
{
    hkq_u8 L[256];
    float scales[16], max_scale = 0.0f, amax = 0.0f;
    for (int j = 0; j < 16; j++) {
        scales[j] = hkq_make_q3(16, 4, x + 16 * j, L + 16 * j);
        if (fabsf(scales[j]) > amax) {
            amax = fabsf(scales[j]);
            max_scale = scales[j];
        }
    }
    hkq_u8 *s = b + 96;
    for (int k = 0; k < 12; k++)
        s[k] = 0;
    if (max_scale != 0.0f) {
        const float iscale = hkq_div(-32.0f, max_scale);
        for (int j = 0; j < 16; j++) {
            int l = max(-32, min(31, (int)(signed char)hkq_nearest(hkq_mul(iscale, scales[j])))) + 32;
            if (j < 8)
                s[j] = (hkq_u8)(l & 0xf);
            else
                s[j - 8] |= (hkq_u8)((l & 0xf) << 4);
            s[j % 4 + 8] |= (hkq_u8)((l >> 4) << (2 * (j / 4)));
        }
        hkq_st16(b + 108, hkq_to_f16(hkq_div(1.0f, iscale)));
    } else {
        hkq_st16(b + 108, 0);
    }
    const float dd = hkq_f16(hkq_ld16(b + 108));
    for (int j = 0; j < 16; j++) {
        const float d = hkq_mul(dd, (float)hkq_fmt<HKQ_Q3_K>::scale(s, j));
        if (d == 0.0f)
            continue;
        for (int i = 0; i < 16; i++)
            L[16 * j + i] = (hkq_u8)(max(-4, min(3, hkq_nearest(hkq_div(x[16 * j + i], d)))) + 4);
    }
    // the third bit of value j goes to bit j / 32 of hmask[j % 32]
    for (int k = 0; k < 32; k++)
        b[k] = 0;
    for (int j = 0; j < 256; j++)
        if (L[j] > 3) {
            b[j % 32] |= (hkq_u8)(1 << (j / 32));
            L[j] -= 4;
        }
    hkq_pack2(L, b + 32);
}

// q4_K and q5_K {f16 d, dmin; u8 scales[12]; (q5_K: u8 qh[32];) u8 qs[128]}:
// runs of 32 by make_qkx2_quants (weights mean |x| + |x|, squared error),
// 6-bit scales and mins (hkq_scale_min_k4's packing).
template <int FIVE> __device__ void hkq_quant_k45(const float *x, hkq_u8 *b)
{
    const int nmax = FIVE ? 31 : 15;
    hkq_u8 L[256], *s = b + 4;
    float w[32], scales[8], mins[8], max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; j++) {
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; l++)
            sum_x2 = hkq_add(sum_x2, hkq_mul(x[32 * j + l], x[32 * j + l]));
        const float av_x = __fsqrt_rn(hkq_div(sum_x2, 32.0f));
        for (int l = 0; l < 32; l++)
            w[l] = hkq_add(av_x, fabsf(x[32 * j + l]));
        scales[j] = hkq_make_qkx2(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], FIVE ? -0.5f : -1.0f, 0.1f,
                                  FIVE ? 15 : 20, false);
        max_scale = scales[j] > max_scale ? scales[j] : max_scale;
        max_min = mins[j] > max_min ? mins[j] : max_min;
    }
    const float is = max_scale > 0.0f ? hkq_div(63.0f, max_scale) : 0.0f;
    const float im = max_min > 0.0f ? hkq_div(63.0f, max_min) : 0.0f;
    for (int j = 0; j < 8; j++) {
        // ggml stores nearest_int into a uint8_t before clamping to 63
        int ls = min(63, (int)(hkq_u8)hkq_nearest(hkq_mul(is, scales[j])));
        int lm = min(63, (int)(hkq_u8)hkq_nearest(hkq_mul(im, mins[j])));
        if (j < 4) {
            s[j] = (hkq_u8)ls;
            s[j + 4] = (hkq_u8)lm;
        } else {
            s[j + 4] = (hkq_u8)((ls & 0xf) | ((lm & 0xf) << 4));
            s[j - 4] |= (hkq_u8)((ls >> 4) << 6);
            s[j] |= (hkq_u8)((lm >> 4) << 6);
        }
    }
    hkq_st16(b, hkq_to_f16(hkq_div(max_scale, 63.0f)));
    hkq_st16(b + 2, hkq_to_f16(hkq_div(max_min, 63.0f)));
    const float dd = hkq_f16(hkq_ld16(b)), dm = hkq_f16(hkq_ld16(b + 2));
    for (int j = 0; j < 8; j++) {
        int sc, m;
        hkq_scale_min_k4(j, s, &sc, &m);
        const float d = hkq_mul(dd, (float)sc);
        if (d == 0.0f)
            continue;
        const float dmj = hkq_mul(dm, (float)m);
        for (int i = 0; i < 32; i++)
            L[32 * j + i] = (hkq_u8)max(0, min(nmax, hkq_nearest(hkq_div(hkq_add(x[32 * j + i], dmj), d))));
    }
    hkq_u8 *qh = b + 16, *ql = b + (FIVE ? 48 : 16);
    for (int k = 0; FIVE && k < 32; k++)
        qh[k] = 0;
    // byte l of each 32 of qs: values l (low nibble) and l + 32 (high) of
    // its 64; q5_K puts their fifth bits in bits 2 n and 2 n + 1 of qh[l]
    for (int n = 0; n < 4; n++)
        for (int l = 0; l < 32; l++) {
            int l1 = L[64 * n + l], l2 = L[64 * n + l + 32];
            if (FIVE) {
                qh[l] |= (hkq_u8)(((l1 >> 4) << (2 * n)) | ((l2 >> 4) << (2 * n + 1)));
                l1 &= 0xf;
                l2 &= 0xf;
            }
            ql[32 * n + l] = (hkq_u8)(l1 | (l2 << 4));
        }
}

// q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: runs of 16 by
// make_qx_quants (levels -32 ... 31), 8-bit signed scales.
__device__ void hkq_quant_q6_K(const float *x, hkq_u8 *b)
{
    hkq_u8 L[256];
    float scales[16], max_scale = 0.0f, amax = 0.0f;
    for (int j = 0; j < 16; j++) {
        scales[j] = hkq_make_qx(16, 32, x + 16 * j, L + 16 * j);
        if (fabsf(scales[j]) > amax) {
            amax = fabsf(scales[j]);
            max_scale = scales[j];
        }
    }
    if (amax < HKQ_EPS) {
        for (int k = 0; k < 210; k++)
            b[k] = 0;
        return;
    }
    const float iscale = hkq_div(-128.0f, max_scale);
    hkq_st16(b + 208, hkq_to_f16(hkq_div(1.0f, iscale)));
    const float dd = hkq_f16(hkq_ld16(b + 208));
    for (int j = 0; j < 16; j++) {
        int sc = min(127, hkq_nearest(hkq_mul(iscale, scales[j])));
        b[192 + j] = (hkq_u8)(signed char)sc;
        const float d = hkq_mul(dd, (float)(signed char)sc);
        if (d == 0.0f)
            continue;
        for (int i = 0; i < 16; i++)
            L[16 * j + i] = (hkq_u8)(max(-32, min(31, hkq_nearest(hkq_div(x[16 * j + i], d)))) + 32);
    }
    for (int n = 0; n < 2; n++)
        for (int l = 0; l < 32; l++) {
            const hkq_u8 *q = L + 128 * n + l;
            b[64 * n + l] = (hkq_u8)((q[0] & 0xf) | ((q[64] & 0xf) << 4));
            b[64 * n + l + 32] = (hkq_u8)((q[32] & 0xf) | ((q[96] & 0xf) << 4));
            b[128 + 32 * n + l] = (hkq_u8)((q[0] >> 4) | ((q[32] >> 4) << 2) | ((q[64] >> 4) << 4) | ((q[96] >> 4) << 6));
        }
}

template <int F> struct hkq_quant;
template <> struct hkq_quant<HKQ_Q4_0> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_sym<4>(x, b); } };
template <> struct hkq_quant<HKQ_Q5_0> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_sym<5>(x, b); } };
template <> struct hkq_quant<HKQ_Q4_1> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_asym<4>(x, b); } };
template <> struct hkq_quant<HKQ_Q5_1> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_asym<5>(x, b); } };
template <> struct hkq_quant<HKQ_Q8_0> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q8<0>(x, b); } };
template <> struct hkq_quant<HKQ_Q8_1> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q8<1>(x, b); } };
template <> struct hkq_quant<HKQ_Q8_K> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q8_K(x, b); } };
template <> struct hkq_quant<HKQ_Q2_K> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q2_K(x, b); } };
template <> struct hkq_quant<HKQ_Q3_K> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q3_K(x, b); } };
template <> struct hkq_quant<HKQ_Q4_K> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_k45<0>(x, b); } };
template <> struct hkq_quant<HKQ_Q5_K> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_k45<1>(x, b); } };
template <> struct hkq_quant<HKQ_Q6_K> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q6_K(x, b); } };
// Where 16-bit word k of q4_0 group i (k 0: d, 1-8: its 16 bytes) sits in
// a q4_0r buffer, in 16-bit words: quantize and repack move bytes by it.
__device__ inline long long hkq_q4_0r_word(long long i, int k)
{
    return 72 * (i / 8) + (k ? 8 * (i % 8) + k - 1 : 64 + i % 8);
}
// q4_0r: each group as q4_0 quantizes it, its bytes moved to their places
template <> struct hkq_quant<HKQ_Q4_0R> {
    static __device__ void run(const float *x, hkq_u8 *b)
    {
        for (int g = 0; g < 8; g++) {
            hkq_u16 q[9]; // a q4_0 block: d, then 16 bytes
            hkq_quant_sym<4>(x + 32 * g, (hkq_u8 *)q);
            for (int k = 0; k < 9; k++)
                ((hkq_u16 *)(void *)b)[hkq_q4_0r_word(g, k)] = q[k];
        }
    }
};

template <int F> __device__ void hkq_quantize(const float *x, void *w, long long n)
{
    typedef hkq_fmt<F> Q;
    for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < n / Q::BLOCK;
         blk += (long long)blockDim.x * gridDim.x)
        hkq_quant<F>::run(x + blk * Q::BLOCK, (hkq_u8 *)w + blk * Q::BYTES);
}

// ---------------------------------------------------------------- kernels

// ---------------------------------------------------------------------------
// The streamed q8_1 matvec (matvec_{q4_0,q8_0,q4_K,q6_K}_q8_1_ring;
// quantized-notes.md, 2026-11-29). For rows of whole 256-value pieces (144
// bytes: 8 q4_0 blocks or one q4_K super-block; 272: 8 q8_0 blocks; so a
// row is 16-byte aligned in ggml's own layout; 210: a q6_K super-block, a
// row 16-byte aligned at multiples of 8 pieces): each block owns a contiguous run of rows
// (runs differ by at most one row, so no block has a step more than
// another), streamed through a ring of `stages` stages of blockDim / L rows
// in dynamic shared memory. On sm_90 one thread starts each stage with a
// single bulk copy (cp.async.bulk) that completes on the stage's mbarrier,
// and the block sums a stage while the next ones are in flight; elsewhere
// (AMD, the CPU backend, older NVIDIA, w or rows not 16-byte aligned) the
// block copies each stage itself, one stage. A width that is not whole pieces
// (and on NVIDIA, less shared memory than the stages need) takes the
// general path, a warp a row: the same y, slowly. A lane sums whole pieces of a row
// (9 or 17 aligned 16-byte shared reads, no bank conflicts at a 144- or
// 272-byte stride; q6_K 54 4-byte reads); L lanes a row (the power of two
// >= pieces, at most a warp).
// x is staged once a block, piece-major (block 8 p + j at j P + p) so that
// the L lanes of a row read L consecutive records. Sums as the staged
// kernels make them (hkq_dot8): exact integer dots, then the scales.
//   dynamic shared memory: ceil16(stages * (blockDim / L) * piece * P) + 40 G + 8 stages
//   (+ 36 G for f32 x in blocks of part of a warp, which round it to q8_1
//   blocks there first; whole warps round it straight into x's records)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define HKQ_RING_TMA 1
#else
#define HKQ_RING_TMA 0
#endif
#if HKQ_RING_TMA
__device__ inline unsigned hkq_ring_sa(const void *p)
{
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}
// bytes (a multiple of 16) from src to dst, completing on bar
__device__ inline void hkq_ring_issue(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
    // the block's last reads of dst (generic proxy) come before the copy engine's writes
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(hkq_ring_sa(bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     hkq_ring_sa(dst)),
                 "l"(src), "r"(bytes), "r"(hkq_ring_sa(bar))
                 : "memory");
}
__device__ inline void hkq_ring_wait(unsigned long long *bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(hkq_ring_sa(bar)), "r"(parity)
                     : "memory");
    } while (!done);
}
#endif
// byte k of little-endian words v
__device__ inline unsigned hkq_ring_byte(const hkq_u32 *v, int k) { return (v[k / 4] >> (8 * (k % 4))) & 255u; }
// bytes of a 256-value piece: 8 blocks of q4_0 or q8_0, a q4_K super-block
template <int F> struct hkq_ring_fmt {
    enum { PIECE = F == HKQ_Q8_0 ? 272 : F == HKQ_Q6_K ? 210 : 144 };
};
// x's records as a lane's pieces read them (record j of a piece: the 32
// int8 values of its block j as lo / hi, and ds: the scale d8 and the sum
// of the 32 values as int bits): from shared memory, record j P + p of
// piece p, or from the lane's registers for its first piece, p = lane,
// the same in every row, loaded once a block: for rows of at most L pieces
// the sums then read only the weights from shared memory, half the
// shared-memory traffic (H200: 0.72 -> 0.76x copy, quantized-notes.md
// 2026-11-29, evening)
struct hkq_ring_xs {
    const uint4 *lo, *hi;
    const float2 *ds;
    unsigned P, p;
    __device__ uint4 l(int j) const { return lo[j * P + p]; }
    __device__ uint4 h(int j) const { return hi[j * P + p]; }
    __device__ float2 d(int j) const { return ds[j * P + p]; }
    // the sum of block j's 16 values of half h (q6_K's scales are a 16)
    __device__ int s16(int j, int h) const
    {
        const uint4 u = h ? hi[j * P + p] : lo[j * P + p];
        return hkq_dp4a(u.w, 0x01010101u, hkq_dp4a(u.z, 0x01010101u, hkq_dp4a(u.y, 0x01010101u, hkq_dp4a(u.x, 0x01010101u, 0))));
    }
};
struct hkq_ring_xr {
    uint4 lo[8], hi[8];
    float2 ds[8];
    int s[8][2];
    __device__ uint4 l(int j) const { return lo[j]; }
    __device__ uint4 h(int j) const { return hi[j]; }
    __device__ float2 d(int j) const { return ds[j]; }
    __device__ int s16(int j, int h) const { return s[j][h]; }
};
// one piece at pc (shared memory: 16-byte aligned, q6_K's 210 bytes 2-byte
// aligned) against x's records of its 8 blocks
template <int F, class X>
__device__ inline float hkq_ring_piece(const hkq_u8 *pc, const X &x)
{
    // every format's branch is compiled: v as long as q6_K's reads (53 words)
    enum { WORDS = (hkq_ring_fmt<F>::PIECE + 3) / 4, VW = WORDS > 53 ? WORDS : 53 };
    hkq_u32 v[VW];
    if (F == HKQ_Q6_K) { // 4-byte reads from pc rounded down, then shifted by 0 or 16 bits
        const hkq_u32 *a = (const hkq_u32 *)((unsigned long long)pc & ~3ull);
        const unsigned sh = (unsigned)((unsigned long long)pc & 2) * 8;
        hkq_u32 next = a[0];
#pragma unroll
        for (int k = 0; k < WORDS; k++) {
            const hkq_u32 cur = next;
            next = a[k + 1];
            v[k] = __funnelshift_r(cur, next, sh);
        }
    } else {
#pragma unroll
        for (int k = 0; k < WORDS / 4; k++) {
            const uint4 u = ((const uint4 *)pc)[k];
            v[4 * k] = u.x, v[4 * k + 1] = u.y, v[4 * k + 2] = u.z, v[4 * k + 3] = u.w;
        }
    }
    float acc = 0.0f;
    if (F == HKQ_Q6_K) {
        // {ql[128]; qh[64]; i8 scales[16]; f16 d}: block g's half n = g / 4,
        // k = g % 4 takes nibble k / 2 of ql words 16 n + 8 (k % 2) + i and
        // bits 2 k of qh words 32 + 8 n + i, minus 32; a scale a 16 values
        const float d = hkq_h2f_bits((hkq_u16)v[52]);
#pragma unroll
        for (int g = 0; g < 8; g++) {
            const int n = g / 4, k = g % 4, nib = 4 * (k >> 1), hs = 2 * k;
            const uint4 lo = x.l(g), hi = x.h(g);
            const hkq_u32 x8[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
            float a = 0.0f;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int dot = 0;
#pragma unroll
                for (int i = 4 * h; i < 4 * h + 4; i++)
                    dot = hkq_dp4a(hkq_q6_word(v[16 * n + 8 * (k & 1) + i] >> nib, v[32 + 8 * n + i] >> hs), x8[i], dot);
                const int sc = (int)(signed char)hkq_ring_byte(v + 48, 8 * n + 2 * k + h);
                a += (float)sc * (float)(dot - 32 * x.s16(g, h));
            }
            acc += x.d(g).x * (d * a);
        }
    } else if (F == HKQ_Q8_0) {
        // blocks 2m at byte 68 m (scale, then values 2 bytes into a word)
        // and 2m + 1 at 68 m + 34 (scale in the high half, values aligned)
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int m = j / 2, o = 17 * m + (j & 1 ? 9 : 1);
            const hkq_u16 dh = (hkq_u16)(j & 1 ? v[17 * m + 8] >> 16 : v[17 * m]);
            const uint4 lo = x.l(j), hi = x.h(j);
            const hkq_u32 x8[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
            int dot = 0;
            for (int k = 0; k < 8; k++)
                dot = hkq_dp4a(j & 1 ? v[o + k] : __funnelshift_r(v[o - 1 + k], v[o + k], 16), x8[k], dot);
            acc += x.d(j).x * (hkq_h2f_bits(dh) * (float)dot);
        }
    } else if (F == HKQ_Q4_0) {
        // blocks 2m at byte 36 m (scale, then nibbles 2 bytes into a word)
        // and 2m + 1 at 36 m + 18 (scale in the high half, nibbles aligned)
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int m = j / 2, o = 9 * m + (j & 1 ? 5 : 1);
            hkq_u32 q[4];
            for (int k = 0; k < 4; k++)
                q[k] = j & 1 ? v[o + k] : __funnelshift_r(v[o - 1 + k], v[o + k], 16);
            const hkq_u16 dh = (hkq_u16)(j & 1 ? v[9 * m + 4] >> 16 : v[9 * m]);
            const uint4 lo = x.l(j), hi = x.h(j);
            const hkq_u32 l4[4] = {lo.x, lo.y, lo.z, lo.w}, h4[4] = {hi.x, hi.y, hi.z, hi.w};
            const float2 ds = x.d(j);
            acc += ds.x * (hkq_h2f_bits(dh) * (float)hkq_q4_0_dot8(q, l4, h4, __float_as_int(ds.y)));
        }
    } else { // q4_K: d, dmin; 12 scale bytes; 4 chunks of 32 nibble bytes (group 2c low, 2c + 1 high)
        const float d = hkq_h2f_bits((hkq_u16)v[0]), dmin = hkq_h2f_bits((hkq_u16)(v[0] >> 16));
#pragma unroll
        for (int g = 0; g < 8; g++) {
            // ggml's get_scale_min_k4 on the scale bytes (v[1..3])
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
            for (int k = 0; k < 8; k++)
                dot = hkq_dp4a((c[k] >> sft) & 0x0F0F0F0Fu, x8[k], dot);
            const float2 ds = x.d(g);
            acc += ds.x * (d * (float)sc * (float)dot - dmin * (float)mn * (float)__float_as_int(ds.y));
        }
    }
    return acc;
}
// a launch the ring cannot take (a width not whole pieces; on NVIDIA, less
// shared memory than its stages need): the same y by the general path, a
// warp a row (a thread a row in a block of part of a warp). Not inlined:
// its registers and code stay out of the ring's loop.
template <int F>
__device__ __noinline__ void hkq_ring_general(const void *w, const void *xq, float *y, int rows, int cols)
{
    hk_grid_wait();
    const unsigned lanes = blockDim.x % HKQ_WARP ? 1 : HKQ_WARP, per = blockDim.x / lanes;
    for (long long base = (long long)blockIdx.x * per; base < rows; base += (long long)gridDim.x * per) {
        const long long row = base + threadIdx.x / lanes;
        float acc = row < rows ? hkq_row_sum_q8_1<F>(w, xq, row, cols, (int)(threadIdx.x % lanes), (int)lanes) : 0.0f;
        for (unsigned off = lanes / 2; off > 0; off /= 2) // every lane of the warp
            acc += __shfl_xor(acc, (int)off);
        if (threadIdx.x % lanes == 0 && row < rows)
            y[row] = acc;
    }
}
// f32 x rounded to q8_1 in a block's shared memory (36 bytes a block of 32,
// ggml's block_q8_1, by the quantize kernel's own code: the same bytes as
// quantize(xq, x)), after the kernel before has ended (x may be its y)
__device__ void hkq_ring_round_x(const float *x, hkq_u8 *xs, unsigned G)
{
    hk_grid_wait();
    for (unsigned b = threadIdx.x; b < G; b += blockDim.x)
        hkq_quant_q8<1>(x + 32 * b, xs + 36 * b);
    __syncthreads();
}
// f32 x rounded to q8_1 straight into the ring's x records (piece-major,
// as the q8_1 form stages them): the values hkq_quant_q8<1> writes (d =
// max |x| / 127, NaN left out; q = round(x / d); d through f16), so the
// same y as the q8_1 form's. Two threads a block of 32, 16 values each
// (its lo or hi record), one shuffle for the max and one for the sum: the
// 256 threads of a block round 4096 columns in one pass. Measured against
// q8_1 x's 10.0 us a launch (H200, q4_0 14336 x 4096, 2026-12-01): a thread
// a block of 32 (hkq_quant_q8) 12.4 us; a warp a block, a lane a value,
// bytes and sums by shuffles, 15.0-17.9. blockDim a multiple of the warp.
__device__ void hkq_ring_round_records(const float *x, uint4 *xlo, uint4 *xhi, float2 *xds, unsigned G, unsigned P)
{
    hk_grid_wait();
    const bool vec = (unsigned long long)x % 16 == 0;
    const unsigned all = (2 * G + HKQ_WARP - 1) / HKQ_WARP * HKQ_WARP; // whole warps reach the shuffles
    for (unsigned t = threadIdx.x; t < all; t += blockDim.x) {
        const unsigned b = t / 2, h = t % 2;
        float v[16];
        if (t < 2 * G && vec) {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const float4 f = ((const float4 *)(x + 32 * b + 16 * h))[k];
                v[4 * k] = f.x, v[4 * k + 1] = f.y, v[4 * k + 2] = f.z, v[4 * k + 3] = f.w;
            }
        } else {
#pragma unroll
            for (int k = 0; k < 16; k++)
                v[k] = t < 2 * G ? x[32 * b + 16 * h + k] : 0.0f;
        }
        float amax = 0.0f;
#pragma unroll
        for (int k = 0; k < 16; k++)
            amax = amax < fabsf(v[k]) ? fabsf(v[k]) : amax; // NaN compares false: left out
        amax = fmaxf(amax, __shfl_xor(amax, 1));
        const float d = amax / 127, id = d ? 1.0f / d : 0.0f;
        hkq_u32 wd[4];
        int sum = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            wd[k] = 0;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int q = (int)roundf(hkq_mul(v[4 * k + e], id));
                wd[k] |= ((hkq_u32)q & 255u) << (8 * e);
                sum += q;
            }
        }
        sum += __shfl_xor(sum, 1);
        if (t < 2 * G) {
            const unsigned i = (b % 8) * P + b / 8;
            (h ? xhi : xlo)[i] = make_uint4(wd[0], wd[1], wd[2], wd[3]);
            if (!h)
                xds[i] = make_float2(hkq_h2f_bits(hkq_to_f16(d)), __int_as_float(sum));
        }
    }
    __syncthreads();
}
// the general path for f32 x: x rounded into shared memory first (36 bytes
// a block of 32 needed; on NVIDIA a launch with less fails loudly)
template <int F>
__device__ __noinline__ void hkq_ring_general_f32(const void *w, const float *x, float *y, int rows, int cols)
{
    extern __shared__ uint4 hkq_ring_dyn[];
    const unsigned G = (unsigned)cols / 32;
#if defined(__CUDA_ARCH__)
    unsigned granted;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(granted));
    if (36ull * G > granted)
        __trap();
#endif
    hkq_u8 *xs = (hkq_u8 *)hkq_ring_dyn;
    hkq_ring_round_x(x, xs, G);
    hkq_ring_general<F>(w, xs, y, rows, cols);
}
// the ring with LC lanes a row, a constant (0: L, known at run time only);
// XF: xq is f32 x, rounded to q8_1 by each block into x's records, as
// ggml rounds activations before mul_mat_vec_q
template <int F, unsigned LC, bool XF>
__device__ void hkq_ring_body(const void *w, const void *xq, float *y, int rows, int cols, int stages, unsigned Lr)
{
    extern __shared__ uint4 hkq_ring_dyn[];
    const unsigned G = (unsigned)cols / 32, P = G / 8, RB = hkq_ring_fmt<F>::PIECE * P;
    const unsigned L = LC ? LC : Lr, SR = blockDim.x / L;
    // bulk copies and 16-byte stage copies need 16-byte rows (q6_K: P a multiple of 8)
    const bool a16 = ((unsigned long long)w % 16) == 0 && RB % 16 == 0;
    const bool tma = HKQ_RING_TMA && a16;
    const unsigned NS = tma && stages > 1 ? (unsigned)stages : 1;
    bool fits = cols % 256 == 0;
#if defined(__CUDA_ARCH__)
    unsigned granted;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(granted));
    fits = fits && ((unsigned long long)NS * SR * RB + 15) / 16 * 16 + 40ull * G + 8ull * NS +
                           (XF && blockDim.x % HKQ_WARP ? 36ull * G : 0) <= granted;
#endif
    if (!fits) {
        if (XF)
            hkq_ring_general_f32<F>(w, (const float *)xq, y, rows, cols);
        else
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
    // x's records: f32 x rounded straight into them; else q8_1 blocks staged
    // (f32 x in blocks of part of a warp: rounded a thread a block of 32
    // into shared memory first)
    const bool round_records = XF && blockDim.x % HKQ_WARP == 0;
    const hkq_u8 *xb = (const hkq_u8 *)xq;
    if (round_records) {
        hkq_ring_round_records((const float *)xq, xlo, xhi, xds, G, P); // waits for the kernel before
    } else if (XF) {
        hkq_u8 *xs = (hkq_u8 *)(bar + NS);
        hkq_ring_round_x((const float *)xq, xs, G);
        xb = xs;
    } else {
        hk_grid_wait(); // launched early (the op does): only w was read before
    }
    for (unsigned b = threadIdx.x; b < G && !round_records; b += blockDim.x) {
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
#if HKQ_RING_TMA
        if (tma)
            hkq_ring_wait(bar + s, (t / NS) & 1);
        else
#endif
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
            for (unsigned p = lp + L; p < P; p += L)
                acc += hkq_ring_piece<F>(row + hkq_ring_fmt<F>::PIECE * p, hkq_ring_xs{xlo, xhi, xds, P, p});
        }
#pragma unroll
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
// L lanes a row: the power of two >= the row's pieces, at most a warp (a
// thread a row in a block of part of a warp). The common widths get L as a
// constant: 16 (2304-4096 columns) and 32 (wider), where the divisions,
// the lane's piece and the shuffles fold (H200, q4_0 4096 columns: 0.73 /
// 0.76 -> 0.76-0.77 / 0.82x copy, quantized-notes.md 2026-11-29 evening)
template <int F, bool XF>
__device__ void hkq_ring_matvec(const void *w, const void *xq, float *y, int rows, int cols, int stages)
{
    if (rows <= 0 || cols <= 0)
        return;
    const unsigned P = (unsigned)cols / 256;
    unsigned L = 1;
    while (L < P && L < (unsigned)HKQ_WARP)
        L *= 2;
    if (blockDim.x % HKQ_WARP)
        L = 1;
    if (L == 16)
        hkq_ring_body<F, 16, XF>(w, xq, y, rows, cols, stages, L);
    else if (L == 32)
        hkq_ring_body<F, 32, XF>(w, xq, y, rows, cols, stages, L);
    else
        hkq_ring_body<F, 0, XF>(w, xq, y, rows, cols, stages, L);
}

#define HKQ_DEQ(fmt, F, t, T)                                                               \
    extern "C" __global__ void dequantize_##fmt##_##t(const void *w, T *y, long long n)     \
    {                                                                                       \
        hkq_dequantize<F>(w, y, n);                                                         \
    }
#define HKQ_FORMAT(fmt, F)                                                                  \
    HKQ_DEQ(fmt, F, f32, float)                                                             \
    HKQ_DEQ(fmt, F, f16, __half)                                                            \
    HKQ_DEQ(fmt, F, bf16, __hip_bfloat16)                                                   \
    extern "C" __global__ void matvec_##fmt(const void *w, const float *x, float *y,        \
                                            int rows, int cols)                             \
    {                                                                                       \
        hkq_matvec<F>(w, x, y, rows, cols);                                                 \
    }                                                                                       \
    extern "C" __global__ void matvec_##fmt##_q8_1(const void *w, const void *xq, float *y, \
                                                   int rows, int cols)                      \
    {                                                                                       \
        hkq_matvec_q8_1<F>(w, xq, y, rows, cols);                                           \
    }                                                                                       \
    extern "C" __global__ void matmul_##fmt(const void *w, const float *x, float *y,        \
                                            int rows, int cols, int m)                      \
    {                                                                                       \
        hkq_matmul<F>(w, x, y, rows, cols, m);                                              \
    }
// y16: y holds x's dtype (else f32), a runtime choice: half the kernels
#define HKQ_MMQ1(fmt, F, xt, T)                                                             \
    extern "C" __global__ void mmq_##fmt##_##xt(const void *w, const T *x, void *y, int rows,   \
                                                int cols, int m, int y16)                   \
    {                                                                                       \
        __shared__ uint4 ws4[HKQ_MMQ_SHARED16], xs4[HKQ_MMQ_SHARED16];                      \
        if (y16)                                                                            \
            hkq_mmq<F, T, T>(w, x, (T *)y, rows, cols, m, ws4, xs4);                        \
        else                                                                                \
            hkq_mmq<F, T, float>(w, x, (float *)y, rows, cols, m, ws4, xs4);                \
    }
#define HKQ_MMQ(fmt, F)                                                                     \
    HKQ_MMQ1(fmt, F, f16, __half)                                                           \
    HKQ_MMQ1(fmt, F, bf16, __hip_bfloat16)
#define HKQ_QUANT(fmt, F)                                                                   \
    extern "C" __global__ void quantize_##fmt(const float *x, void *w, long long n)         \
    {                                                                                       \
        hkq_quantize<F>(x, w, n);                                                           \
    }

HKQ_FORMAT(q4_0, HKQ_Q4_0)
HKQ_FORMAT(q4_1, HKQ_Q4_1)
HKQ_FORMAT(q5_0, HKQ_Q5_0)
HKQ_FORMAT(q5_1, HKQ_Q5_1)
HKQ_FORMAT(q8_0, HKQ_Q8_0)
HKQ_FORMAT(q8_1, HKQ_Q8_1)
HKQ_FORMAT(q2_K, HKQ_Q2_K)
HKQ_FORMAT(q3_K, HKQ_Q3_K)
HKQ_FORMAT(q4_K, HKQ_Q4_K)
HKQ_FORMAT(q5_K, HKQ_Q5_K)
HKQ_FORMAT(q6_K, HKQ_Q6_K)
HKQ_FORMAT(q8_K, HKQ_Q8_K)
// the streamed q8_1 matvec (hkq_ring_matvec): x q8_1, or f32 x rounded to
// q8_1 in each block (the same y as quantize then the q8_1 form)
#define HKQ_RING(fmt, F)                                                                                    \
    extern "C" __global__ void matvec_##fmt##_q8_1_ring(const void *w, const void *xq, float *y, int rows,  \
                                                        int cols, int stages)                               \
    {                                                                                                       \
        hkq_ring_matvec<F, false>(w, xq, y, rows, cols, stages);                                            \
    }                                                                                                       \
    extern "C" __global__ void matvec_##fmt##_f32_q8_1_ring(const void *w, const float *x, float *y,        \
                                                            int rows, int cols, int stages)                 \
    {                                                                                                       \
        hkq_ring_matvec<F, true>(w, x, y, rows, cols, stages);                                              \
    }
HKQ_RING(q4_0, HKQ_Q4_0)
HKQ_RING(q8_0, HKQ_Q8_0)
HKQ_RING(q4_K, HKQ_Q4_K)
HKQ_RING(q6_K, HKQ_Q6_K)
// q4_0r: its matvecs bounded to blocks of 256 threads, 4 a multiprocessor
// (64 registers on NVIDIA, where the unbounded kernels took 72: 3 blocks)
HKQ_DEQ(q4_0r, HKQ_Q4_0R, f32, float)
HKQ_DEQ(q4_0r, HKQ_Q4_0R, f16, __half)
HKQ_DEQ(q4_0r, HKQ_Q4_0R, bf16, __hip_bfloat16)
extern "C" __global__ void __launch_bounds__(256, 4) matvec_q4_0r(const void *w, const float *x, float *y, int rows,
                                                                  int cols)
{
    hkq_matvec<HKQ_Q4_0R>(w, x, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(256, 4) matvec_q4_0r_q8_1(const void *w, const void *xq, float *y,
                                                                       int rows, int cols)
{
    hkq_matvec_q8_1<HKQ_Q4_0R>(w, xq, y, rows, cols);
}
extern "C" __global__ void matmul_q4_0r(const void *w, const float *x, float *y, int rows, int cols, int m)
{
    hkq_matmul<HKQ_Q4_0R>(w, x, y, rows, cols, m);
}
HKQ_MMQ(q4_0, HKQ_Q4_0)
HKQ_MMQ(q4_1, HKQ_Q4_1)
HKQ_MMQ(q5_0, HKQ_Q5_0)
HKQ_MMQ(q5_1, HKQ_Q5_1)
HKQ_MMQ(q8_0, HKQ_Q8_0)
HKQ_MMQ(q8_1, HKQ_Q8_1)
HKQ_MMQ(q2_K, HKQ_Q2_K)
HKQ_MMQ(q3_K, HKQ_Q3_K)
HKQ_MMQ(q4_K, HKQ_Q4_K)
HKQ_MMQ(q5_K, HKQ_Q5_K)
HKQ_MMQ(q6_K, HKQ_Q6_K)
HKQ_MMQ(q8_K, HKQ_Q8_K)
HKQ_MMQ(q4_0r, HKQ_Q4_0R)
HKQ_QUANT(q4_0, HKQ_Q4_0)
HKQ_QUANT(q4_1, HKQ_Q4_1)
HKQ_QUANT(q5_0, HKQ_Q5_0)
HKQ_QUANT(q5_1, HKQ_Q5_1)
HKQ_QUANT(q8_0, HKQ_Q8_0)
HKQ_QUANT(q8_1, HKQ_Q8_1)
HKQ_QUANT(q8_K, HKQ_Q8_K)
HKQ_QUANT(q2_K, HKQ_Q2_K)
HKQ_QUANT(q3_K, HKQ_Q3_K)
HKQ_QUANT(q4_K, HKQ_Q4_K)
HKQ_QUANT(q5_K, HKQ_Q5_K)
HKQ_QUANT(q6_K, HKQ_Q6_K)
HKQ_QUANT(q4_0r, HKQ_Q4_0R)

// copy_u16(src, dst, n): n 16-bit words of src into dst (repack's second
// step: src was repacked into a temporary first, so that dst may share
// src's memory)
extern "C" __global__ void copy_u16(const void *src, void *dst, long long n)
{
    const hkq_u16 *s = (const hkq_u16 *)src;
    hkq_u16 *d = (hkq_u16 *)dst;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        d[i] = s[i];
}

// repack_q4_0r(src, dst, groups, to_r): the groups (of 32 values) of q4_0
// src as q4_0r dst (to_r 1), or of q4_0r src as q4_0 dst (0): a thread a
// group, its 18 bytes moved 2 at a time (both layouts 2-byte aligned).
extern "C" __global__ void repack_q4_0r(const void *src, void *dst, long long groups, int to_r)
{
    const hkq_u16 *s = (const hkq_u16 *)src;
    hkq_u16 *d = (hkq_u16 *)dst;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < groups;
         i += (long long)gridDim.x * blockDim.x)
        for (int k = 0; k < 9; k++) {
            const long long q = 9 * i + k, r = hkq_q4_0r_word(i, k); // in q4_0, in q4_0r
            d[to_r ? r : q] = s[to_r ? q : r];
        }
}
