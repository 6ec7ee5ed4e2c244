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

template <int F, typename T> __device__ void hkq_dequantize(const void *w, T *y, long long n)
{
    typedef hkq_fmt<F> Q;
    const hkq_u8 *base = (const hkq_u8 *)w;
    long long groups = n / 32;
    for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < groups;
         g += (long long)blockDim.x * gridDim.x) {
        long long blk = g / (Q::BLOCK / 32);
        float v[32];
        hkq_decode<F>(base + blk * Q::BYTES, (int)(g % (Q::BLOCK / 32)), v);
        for (int j = 0; j < 32; j++)
            hkq_store(y + g * 32 + j, v[j]);
    }
}

// -------------------------------------------------------------- matvec

template <int F>
__device__ void hkq_matvec(const void *w, const float *x, float *y, int rows, int cols)
{
    typedef hkq_fmt<F> Q;
    int lane = threadIdx.x % warpSize;
    long long row = (long long)blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
    if (row >= rows) // the whole warp leaves together: the shuffles below see all lanes
        return;
    const hkq_u8 *r = (const hkq_u8 *)w + row * (long long)(cols / Q::BLOCK) * Q::BYTES;
    int groups = cols / 32;
    // x is read 16 bytes at a time where its address allows (a buffer's
    // start always does; a view may not)
    bool x16 = ((unsigned long long)x & 15) == 0;
    float acc = 0.0f;
    for (int g = lane; g < groups; g += warpSize) {
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
__device__ void hkq_matvec_q8_1(const void *w, const void *xq, float *y, int rows, int cols)
{
    typedef hkq_fmt<F> Q;
    int lane = threadIdx.x % warpSize;
    long long row = (long long)blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
    if (row >= rows)
        return;
    const hkq_u8 *r = (const hkq_u8 *)w + row * (long long)(cols / Q::BLOCK) * Q::BYTES;
    float acc = 0.0f;
    for (int g = lane; g < cols / 32; g += warpSize) {
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
template <int F>
__device__ void hkq_matmul(const void *w, const float *x, float *y, int rows, int cols, int m)
{
    typedef hkq_fmt<F> Q;
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

// ------------------------------------------------------------- quantize

// The bits through __half_as_ushort: reading a __half through a u16
// pointer breaks aliasing rules, and NVRTC's code lost the low byte.
__device__ inline hkq_u16 hkq_to_f16(float f) { return __half_as_ushort(__float2half(f)); }
// Every 16-bit field of a block sits at an even offset of a block of an
// even size, so one 16-bit store writes it. (Two byte stores of the halves
// of a __half_as_ushort value lost the low byte in NVRTC's code on the
// H100: 0x22A0 stored as 0x2200; the cause is not known.)
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

template <int F> struct hkq_quant;
template <> struct hkq_quant<HKQ_Q4_0> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_sym<4>(x, b); } };
template <> struct hkq_quant<HKQ_Q5_0> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_sym<5>(x, b); } };
template <> struct hkq_quant<HKQ_Q4_1> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_asym<4>(x, b); } };
template <> struct hkq_quant<HKQ_Q5_1> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_asym<5>(x, b); } };
template <> struct hkq_quant<HKQ_Q8_0> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q8<0>(x, b); } };
template <> struct hkq_quant<HKQ_Q8_1> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q8<1>(x, b); } };
template <> struct hkq_quant<HKQ_Q8_K> { static __device__ void run(const float *x, hkq_u8 *b) { hkq_quant_q8_K(x, b); } };

template <int F> __device__ void hkq_quantize(const float *x, void *w, long long n)
{
    typedef hkq_fmt<F> Q;
    for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < n / Q::BLOCK;
         blk += (long long)blockDim.x * gridDim.x)
        hkq_quant<F>::run(x + blk * Q::BLOCK, (hkq_u8 *)w + blk * Q::BYTES);
}

// ---------------------------------------------------------------- kernels

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
HKQ_QUANT(q4_0, HKQ_Q4_0)
HKQ_QUANT(q4_1, HKQ_Q4_1)
HKQ_QUANT(q5_0, HKQ_Q5_0)
HKQ_QUANT(q5_1, HKQ_Q5_1)
HKQ_QUANT(q8_0, HKQ_Q8_0)
HKQ_QUANT(q8_1, HKQ_Q8_1)
HKQ_QUANT(q8_K, HKQ_Q8_K)
