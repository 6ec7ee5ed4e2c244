// sort: row argsort, row top-k and a full LSD radix sort (docs/families/sort.md).
//
// Every kernel compares keys through an order-preserving unsigned image of
// the element's bits (hks_*::key): floats flip (negative: all bits, else
// the sign bit), signed integers flip the sign bit. NaN (any payload or
// sign) maps to the largest image and -0 to +0's, so NaN sorts after +inf
// and the two zeros tie, as in PyTorch. Descending order complements the
// image: NaN first. Elements move as raw bits (R), so NaN payloads survive.
//
// Row kernels: a row is an array of (image, column) entries ordered by
// image then column, a total order, so the sort is stable whatever network
// runs it. They run the "flip" form of the bitonic network: stage k (2, 4,
// ..) first compares i with i ^ (k - 1) inside each k-block, then i with
// i + j for j = k/4 .. 1; every comparison puts the smaller entry at the
// lower position. Positions past the row's end act as +infinity, which
// that form never moves, so a row of any length sorts with no padding in
// memory (a row of 1000 is sorted as 1024 with 24 virtual sentinels).
//
//   argsort_T_I(const T *x, I *idx, int rows, int cols, int desc)
//       idx[r, :] = the columns of row r in sorted order; one block sorts
//       chunks of C = N * blockDim columns in registers, N = 4 (32-bit
//       keys) or 2 (64-bit keys), with 32 * blockDim bytes of shared
//       memory (a block that is not a power of two: C = min(pow2 >= cols,
//       the largest power of two of entries that fits), in shared memory);
//       a row longer than C is left sorted chunk by chunk, for
//       argsort_step / argsort_merge to finish (the op does).
//   argsort_step_T_I(x, idx, rows, cols, desc, k, j)     one global step
//   argsort_merge_T_I(x, idx, rows, cols, desc, k, chunk) steps j < chunk
//   topk_T_I(const T *x, T *values, I *indices, int rows, int cols, int k,
//            int largest)                   rows of up to C columns
//   topk_gather_T_I(x, order, values, indices, rows, cols, k)
//
// Radix sort of n keys (stable, 8-bit digits, 4 passes for 32-bit keys, 8
// for 64-bit), per pass: radix_count_T (a histogram per tile of 4096
// keys, digit-major), radix_scan_chunks + radix_scan_totals (exclusive
// scan of the histograms), radix_scatter_T (each tile's keys to their
// places, in order).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

// ---- keys -----------------------------------------------------------------

__device__ inline unsigned hks_float_key(unsigned b, unsigned sign, unsigned inf)
{
    if ((b & (sign - 1)) > inf)
        return sign | (sign - 1); // NaN: the largest
    if (b == sign)
        b = 0; // -0 ties +0
    return (b & sign) ? (~b & (sign | (sign - 1))) : (b | sign);
}

// R: the raw bits as stored; K: the key image; MAX: K's largest value.
struct hks_f32 {
    typedef unsigned R;
    typedef unsigned K;
    static __device__ K max() { return 0xffffffffu; }
    static __device__ K key(R b) { return hks_float_key(b, 0x80000000u, 0x7f800000u); }
};
struct hks_f16 {
    typedef unsigned short R;
    typedef unsigned K;
    static __device__ K max() { return 0xffffu; }
    static __device__ K key(R b) { return hks_float_key(b, 0x8000u, 0x7c00u); }
};
struct hks_bf16 {
    typedef unsigned short R;
    typedef unsigned K;
    static __device__ K max() { return 0xffffu; }
    static __device__ K key(R b) { return hks_float_key(b, 0x8000u, 0x7f80u); }
};
struct hks_i32 {
    typedef unsigned R;
    typedef unsigned K;
    static __device__ K max() { return 0xffffffffu; }
    static __device__ K key(R b) { return b ^ 0x80000000u; }
};
struct hks_u32 {
    typedef unsigned R;
    typedef unsigned K;
    static __device__ K max() { return 0xffffffffu; }
    static __device__ K key(R b) { return b; }
};
struct hks_f64 {
    typedef unsigned long long R;
    typedef unsigned long long K;
    static __device__ K max() { return ~0ull; }
    static __device__ K key(R b)
    {
        const R sign = 1ull << 63;
        if ((b & ~sign) > 0x7ff0000000000000ull)
            return ~0ull;
        if (b == sign)
            b = 0;
        return (b & sign) ? ~b : (b | sign);
    }
};
struct hks_i64 {
    typedef unsigned long long R;
    typedef unsigned long long K;
    static __device__ K max() { return ~0ull; }
    static __device__ K key(R b) { return b ^ (1ull << 63); }
};
struct hks_u64 {
    typedef unsigned long long R;
    typedef unsigned long long K;
    static __device__ K max() { return ~0ull; }
    static __device__ K key(R b) { return b; }
};

// The key in the requested order: descending complements it.
template <typename Tr> __device__ inline typename Tr::K hks_key(typename Tr::R b, bool desc)
{
    typename Tr::K k = Tr::key(b);
    return desc ? Tr::max() - k : k;
}

// ---- row entries: (key, column), compared as a pair ----------------------

template <typename K> struct hks_ent;
template <> struct hks_ent<unsigned> { // key in the high half: one 64-bit compare
    unsigned long long v;
    static __device__ hks_ent make(unsigned k, unsigned i)
    {
        hks_ent e = {((unsigned long long)k << 32) | i};
        return e;
    }
    __device__ unsigned col() const { return (unsigned)v; }
    __device__ bool operator<(const hks_ent &o) const { return v < o.v; }
    __device__ hks_ent shfl_xor(int m) const
    {
        hks_ent e = {__shfl_xor(v, m)};
        return e;
    }
};
template <> struct hks_ent<unsigned long long> {
    unsigned long long k;
    unsigned i;
    static __device__ hks_ent make(unsigned long long k, unsigned i)
    {
        hks_ent e = {k, i};
        return e;
    }
    __device__ unsigned col() const { return i; }
    __device__ bool operator<(const hks_ent &o) const { return k < o.k || (k == o.k && i < o.i); }
    __device__ hks_ent shfl_xor(int m) const
    {
        hks_ent e = {__shfl_xor(k, m), __shfl_xor(i, m)};
        return e;
    }
};

// Entry of column c of a row (c >= cols: the sentinel, larger than any real
// entry because its column is).
template <typename Tr>
__device__ inline hks_ent<typename Tr::K> hks_entry(const typename Tr::R *row, unsigned c, unsigned cols,
                                                    bool desc)
{
    return hks_ent<typename Tr::K>::make(c < cols ? hks_key<Tr>(row[c], desc) : Tr::max(), c);
}

// Shared memory of the row kernels: 32 bytes per thread (the rule's
// shared_per_thread), i.e. 4 entries per thread of 32-bit keys, 2 of 64-bit.
#define HKS_ROW_SHARED 32u

// The largest power of two of entries E that the block's shared memory holds.
template <typename E> __device__ inline unsigned hks_capacity()
{
    unsigned cap = 1, fit = HKS_ROW_SHARED / sizeof(E) * blockDim.x;
    while (cap * 2 <= fit)
        cap *= 2;
    return cap;
}

template <typename U> __device__ inline U hks_min(U a, U b) { return a < b ? a : b; }

__device__ inline unsigned hks_pow2(unsigned n)
{
    unsigned p = 1;
    while (p < n)
        p *= 2;
    return p;
}

// The lower position of pair i of a step whose distance bit is h (a power
// of two): i with a zero bit inserted at h. Its partner is that ^ mask.
__device__ inline unsigned hks_lower(unsigned i, unsigned h) { return ((i & ~(h - 1)) << 1) | (i & (h - 1)); }

// Steps j = from, from/2 .. 1 of stage k over n entries in shared memory;
// j = k/2 is the stage's flip step.
template <typename E> __device__ void hks_steps_shared(E *sh, unsigned n, unsigned k, unsigned from)
{
    for (unsigned j = from; j > 0; j /= 2) {
        unsigned m = j == k / 2 ? k - 1 : j;
        for (unsigned i = threadIdx.x; i < n / 2; i += blockDim.x) {
            unsigned a = hks_lower(i, j), b = a ^ m;
            E ea = sh[a], eb = sh[b];
            if (eb < ea) {
                sh[a] = eb;
                sh[b] = ea;
            }
        }
        __syncthreads();
    }
}

// Entries each thread of a row kernel holds: 32 bytes of them (4 of
// 32-bit keys, 2 of 64-bit), so a block of T threads sorts N * T entries
// in registers and exchanges them through N * T entries of shared memory.
template <typename E> struct hks_per {
    enum { N = HKS_ROW_SHARED / sizeof(E) };
};

template <typename E> __device__ inline void hks_cx(E &a, E &b) // a keeps the smaller
{
    if (b < a) {
        E t = a;
        a = b;
        b = t;
    }
}

// The whole network over N * blockDim.x entries (blockDim.x a power of
// two): thread t holds positions t * N .. t * N + N - 1 in registers.
// Steps of distance under N stay in the thread; the others pair thread t
// with t ^ (m / N) (the flip also reverses the N entries: its mask's low
// bits are all set), by shuffles inside a warp, else through shared memory
// (laid out entry-major, sh[e * T + t], so neither side conflicts). The
// position's high bit j (the flip's k/2 is its j) says which side keeps
// the smaller entry.
template <typename E, int N> __device__ void hks_sort_regs(E (&v)[N], E *sh)
{
    const unsigned T = blockDim.x, t = threadIdx.x, n = N * T;
    for (unsigned k = 2; k <= n; k *= 2)
        for (unsigned j = k / 2; j > 0; j /= 2) {
            const bool flip = j == k / 2;
            const unsigned m = flip ? k - 1 : j;
            if (m < (unsigned)N) {
#pragma unroll
                for (int a = 0; a < N; a++)
#pragma unroll
                    for (int b = a + 1; b < N; b++)
                        if ((unsigned)(a ^ b) == m)
                            hks_cx(v[a], v[b]);
                continue;
            }
            const unsigned tm = m / N;
            const bool lower = (t & (j / N)) == 0;
            E o[N];
            if (tm < (unsigned)warpSize && flip) {
#pragma unroll
                for (int e = 0; e < N; e++)
                    o[e] = v[N - 1 - e].shfl_xor((int)tm);
            } else if (tm < (unsigned)warpSize) {
#pragma unroll
                for (int e = 0; e < N; e++)
                    o[e] = v[e].shfl_xor((int)tm);
            } else {
#pragma unroll
                for (int e = 0; e < N; e++)
                    sh[e * T + t] = v[e];
                __syncthreads();
#pragma unroll
                for (int e = 0; e < N; e++)
                    o[e] = sh[(flip ? N - 1 - e : e) * T + (t ^ tm)];
                __syncthreads();
            }
#pragma unroll
            for (int e = 0; e < N; e++)
                if ((o[e] < v[e]) == lower)
                    v[e] = o[e];
        }
}

// N elements of T as one load or store.
template <typename T, int N> struct __align__(sizeof(T) * N) hks_vec { T v[N]; };
template <typename T, int N> __device__ inline bool hks_aligned(const T *p)
{
    return ((unsigned long long)p & (sizeof(T) * N - 1)) == 0;
}

// Whether the block sorts in registers: a power of two of threads.
__device__ inline bool hks_regs_block() { return (blockDim.x & (blockDim.x - 1)) == 0; }

// Sorts the block's chunk c of a row (C columns from c * C; C is N *
// blockDim.x in registers, else min(pow2(cols), shared capacity)) and
// writes out(i, col) for its first `keep` positions that are columns.
// Returns C.
template <typename Tr, typename F>
__device__ unsigned hks_sort_chunk(const typename Tr::R *row, unsigned cols, bool desc, unsigned c,
                                   unsigned keep, hks_ent<typename Tr::K> *sh, F out)
{
    typedef hks_ent<typename Tr::K> E;
    const unsigned N = hks_per<E>::N, T = blockDim.x, t = threadIdx.x;
    if (hks_regs_block()) {
        const unsigned C = N * T, c0 = c * C, p0 = c0 + t * N;
        typedef typename Tr::R R;
        E v[hks_per<E>::N];
        if (p0 + N <= cols && hks_aligned<R, hks_per<E>::N>(row + p0)) { // one vector load
            hks_vec<R, hks_per<E>::N> w = *(const hks_vec<R, hks_per<E>::N> *)(row + p0);
#pragma unroll
            for (unsigned e = 0; e < N; e++)
                v[e] = hks_ent<typename Tr::K>::make(hks_key<Tr>(w.v[e], desc), p0 + e);
        } else {
#pragma unroll
            for (unsigned e = 0; e < N; e++)
                v[e] = hks_entry<Tr>(row, p0 + e, cols, desc);
        }
        hks_sort_regs(v, sh);
        out.put(v, p0, t * N < keep ? keep - t * N : 0, cols);
        __syncthreads(); // sh is reused by the caller's next chunk
        return C;
    }
    const unsigned C = hks_min(hks_pow2(cols), hks_capacity<E>()), c0 = c * C;
    for (unsigned i = t; i < C; i += T)
        sh[i] = hks_entry<Tr>(row, c0 + i, cols, desc);
    __syncthreads();
    for (unsigned k = 2; k <= C; k *= 2)
        hks_steps_shared(sh, C, k, k / 2);
    for (unsigned i = t; i < C && i < keep; i += T)
        if (c0 + i < cols)
            out(c0 + i, sh[i].col());
    __syncthreads();
    return C;
}

// The sorted entries' columns to idx: the N of a thread at once when they
// are all wanted and aligned.
template <typename I> struct hks_put_idx {
    I *idx;
    __device__ void operator()(unsigned pos, unsigned col) const { idx[pos] = (I)col; }
    template <typename E, int N> __device__ void put(const E (&v)[N], unsigned p0, unsigned n, unsigned cols) const
    {
        if (n >= (unsigned)N && p0 + N <= cols && hks_aligned<I, N>(idx + p0)) {
            hks_vec<I, N> w;
#pragma unroll
            for (int e = 0; e < N; e++)
                w.v[e] = (I)v[e].col();
            *(hks_vec<I, N> *)(idx + p0) = w;
            return;
        }
#pragma unroll
        for (int e = 0; e < N; e++)
            if ((unsigned)e < n && p0 + e < cols)
                idx[p0 + e] = (I)v[e].col();
    }
};

// The row kernels walk (row, chunk) tasks with a grid stride, so the rule's
// grid (one block per row) and the op's (one per chunk) both cover them.
template <typename Tr, typename I>
__device__ void hks_argsort(const typename Tr::R *x, I *idx, int rows, int cols, int desc)
{
    typedef hks_ent<typename Tr::K> E;
    extern __shared__ unsigned long long hks_dyn[];
    E *sh = (E *)hks_dyn;
    const unsigned ucols = (unsigned)cols;
    const unsigned C = hks_regs_block() ? hks_per<E>::N * blockDim.x : hks_min(hks_pow2(ucols), hks_capacity<E>());
    const unsigned chunks = (ucols + C - 1) / C;
    const size_t tasks = (size_t)rows * chunks;
    for (size_t task = blockIdx.x; task < tasks; task += gridDim.x) {
        const size_t r = task / chunks;
        hks_put_idx<I> put = {idx + r * ucols};
        hks_sort_chunk<Tr>(x + r * ucols, ucols, desc != 0, (unsigned)(task % chunks), C, sh, put);
    }
}

// One global step (k, j) over every row: the pairs with both ends in the
// row; entries are gathered through idx (the order so far).
template <typename Tr, typename I>
__device__ void hks_step(const typename Tr::R *x, I *idx, int rows, int cols, int desc, int k, int j)
{
    typedef hks_ent<typename Tr::K> E;
    const unsigned ucols = (unsigned)cols, half = hks_pow2(ucols) / 2;
    if (half == 0)
        return; // a row of one column is sorted
    const unsigned m = j == k / 2 ? (unsigned)k - 1 : (unsigned)j;
    const size_t pairs = (size_t)rows * half;
    for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < pairs;
         g += (size_t)gridDim.x * blockDim.x) {
        const size_t r = g / half;
        unsigned a = hks_lower((unsigned)(g % half), (unsigned)j), b = a ^ m;
        if (b >= ucols)
            continue; // b is a sentinel: a (smaller) stays
        I *ir = idx + r * ucols;
        const typename Tr::R *row = x + r * ucols;
        unsigned ca = (unsigned)ir[a], cb = (unsigned)ir[b];
        E ea = hks_entry<Tr>(row, ca, ucols, desc != 0), eb = hks_entry<Tr>(row, cb, ucols, desc != 0);
        if (eb < ea) {
            ir[a] = (I)cb;
            ir[b] = (I)ca;
        }
    }
}

// Steps j = chunk/2 .. 1 of stage k (> chunk) in each chunk of each row.
template <typename Tr, typename I>
__device__ void hks_merge(const typename Tr::R *x, I *idx, int rows, int cols, int desc, int k, int chunk)
{
    typedef hks_ent<typename Tr::K> E;
    extern __shared__ unsigned long long hks_dyn[];
    E *sh = (E *)hks_dyn;
    const unsigned ucols = (unsigned)cols, C = (unsigned)chunk;
    if (C > hks_capacity<E>() || (C & (C - 1)) != 0)
        return; // the op never asks this: the chunk must be a power of two that fits
    const unsigned chunks = (ucols + C - 1) / C;
    const size_t tasks = (size_t)rows * chunks;
    for (size_t task = blockIdx.x; task < tasks; task += gridDim.x) {
        const size_t r = task / chunks;
        const unsigned c0 = (unsigned)(task % chunks) * C;
        const typename Tr::R *row = x + r * ucols;
        I *ir = idx + r * ucols;
        for (unsigned i = threadIdx.x; i < C; i += blockDim.x) {
            unsigned p = c0 + i;
            sh[i] = p < ucols ? hks_entry<Tr>(row, (unsigned)ir[p], ucols, desc != 0)
                              : hks_ent<typename Tr::K>::make(Tr::max(), p);
        }
        __syncthreads();
        hks_steps_shared(sh, C, (unsigned)k, C / 2);
        for (unsigned i = threadIdx.x; i < C; i += blockDim.x)
            if (c0 + i < ucols)
                ir[c0 + i] = (I)sh[i].col();
        __syncthreads();
    }
}

// Top k of each row: the row sorted in one chunk (descending for the
// largest), its first k entries written out.
template <typename Tr, typename I> struct hks_put_top {
    const typename Tr::R *row;
    typename Tr::R *values;
    I *indices;
    __device__ void operator()(unsigned pos, unsigned col) const
    {
        values[pos] = row[col];
        indices[pos] = (I)col;
    }
    template <typename E, int N> __device__ void put(const E (&v)[N], unsigned p0, unsigned n, unsigned cols) const
    {
#pragma unroll
        for (int e = 0; e < N; e++)
            if ((unsigned)e < n && p0 + e < cols)
                (*this)(p0 + e, v[e].col());
    }
};

template <typename Tr, typename I>
__device__ void hks_topk(const typename Tr::R *x, typename Tr::R *values, I *indices, int rows, int cols,
                         int k, int largest)
{
    typedef hks_ent<typename Tr::K> E;
    extern __shared__ unsigned long long hks_dyn[];
    E *sh = (E *)hks_dyn;
    const unsigned ucols = (unsigned)cols, uk = (unsigned)k;
    const unsigned C = hks_regs_block() ? hks_per<E>::N * blockDim.x : hks_capacity<E>();
    if (hks_pow2(ucols) > C)
        return; // longer rows: argsort, then topk_gather (the op does)
    for (size_t r = blockIdx.x; r < (size_t)rows; r += gridDim.x) {
        hks_put_top<Tr, I> put = {x + r * ucols, values + r * uk, indices + r * uk};
        hks_sort_chunk<Tr>(x + r * ucols, ucols, largest != 0, 0, uk, sh, put);
    }
}

// values, indices [rows, k] from a full row order [rows, cols].
template <typename Tr, typename I>
__device__ void hks_topk_gather(const typename Tr::R *x, const I *order, typename Tr::R *values, I *indices,
                                int rows, int cols, int k)
{
    const size_t n = (size_t)rows * (unsigned)k;
    for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < n;
         g += (size_t)gridDim.x * blockDim.x) {
        const size_t r = g / (unsigned)k, i = g % (unsigned)k;
        I c = order[r * (unsigned)cols + i];
        values[g] = x[r * (unsigned)cols + (size_t)c];
        indices[g] = c;
    }
}

#define HKS_ROWS(T, Tr, I, name, iname)                                                           \
    extern "C" __global__ void argsort_##name##_##iname(const T *x, I *idx, int rows, int cols,   \
                                                        int desc)                                 \
    {                                                                                             \
        hks_argsort<Tr, I>((const Tr::R *)x, idx, rows, cols, desc);                              \
    }                                                                                             \
    extern "C" __global__ void argsort_step_##name##_##iname(const T *x, I *idx, int rows,        \
                                                             int cols, int desc, int k, int j)    \
    {                                                                                             \
        hks_step<Tr, I>((const Tr::R *)x, idx, rows, cols, desc, k, j);                           \
    }                                                                                             \
    extern "C" __global__ void argsort_merge_##name##_##iname(                                    \
        const T *x, I *idx, int rows, int cols, int desc, int k, int chunk)                       \
    {                                                                                             \
        hks_merge<Tr, I>((const Tr::R *)x, idx, rows, cols, desc, k, chunk);                      \
    }                                                                                             \
    extern "C" __global__ void topk_##name##_##iname(const T *x, T *values, I *indices, int rows, \
                                                     int cols, int k, int largest)                \
    {                                                                                             \
        hks_topk<Tr, I>((const Tr::R *)x, (Tr::R *)values, indices, rows, cols, k, largest);      \
    }                                                                                             \
    extern "C" __global__ void topk_gather_##name##_##iname(                                      \
        const T *x, const I *order, T *values, I *indices, int rows, int cols, int k)             \
    {                                                                                             \
        hks_topk_gather<Tr, I>((const Tr::R *)x, order, (Tr::R *)values, indices, rows, cols, k); \
    }

#define HKS_ROWS2(T, Tr, name)                                                                    \
    HKS_ROWS(T, Tr, unsigned, name, u32)                                                          \
    HKS_ROWS(T, Tr, long long, name, i64)

HKS_ROWS2(float, hks_f32, f32)
HKS_ROWS2(__half, hks_f16, f16)
HKS_ROWS2(__hip_bfloat16, hks_bf16, bf16)
HKS_ROWS2(double, hks_f64, f64)
HKS_ROWS2(int, hks_i32, i32)
HKS_ROWS2(unsigned, hks_u32, u32)
HKS_ROWS2(long long, hks_i64, i64)

// ---- radix sort -----------------------------------------------------------

#define HKS_TILE 4096u        // keys per tile (per block and pass)
#define HKS_LANES 64u         // a tile is 64 runs of 64 consecutive keys
#define HKS_SCAN_CHUNK 2048u  // histogram entries per block of radix_scan_chunks

template <typename Tr> __device__ inline unsigned hks_digit(typename Tr::R b, int shift, bool desc)
{
    return (unsigned)(hks_key<Tr>(b, desc) >> shift) & 255u;
}

// counts[d * tiles + t] = keys of tile t whose digit is d.
template <typename Tr>
__device__ void hks_count(const typename Tr::R *keys, unsigned *counts, size_t n, int shift, int desc)
{
    __shared__ unsigned hist[256];
    const size_t tiles = (n + HKS_TILE - 1) / HKS_TILE;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        for (unsigned d = threadIdx.x; d < 256; d += blockDim.x)
            hist[d] = 0;
        __syncthreads();
        const size_t lo = tile * HKS_TILE, hi = hks_min(n, lo + (size_t)HKS_TILE);
        for (size_t p = lo + threadIdx.x; p < hi; p += blockDim.x)
            atomicAdd(&hist[hks_digit<Tr>(keys[p], shift, desc != 0)], 1u);
        __syncthreads();
        for (unsigned d = threadIdx.x; d < 256; d += blockDim.x)
            counts[d * tiles + tile] = hist[d];
        __syncthreads();
    }
}

// Exclusive scan of a[0 .. len) in place by the whole block; returns the
// total. Each thread scans a run of len / blockDim.x values; the runs'
// sums are scanned in shared memory (blockDim.x <= 1024).
__device__ unsigned hks_block_scan(unsigned *a, size_t len)
{
    __shared__ unsigned part[1024];
    const unsigned t = threadIdx.x, nt = blockDim.x;
    const size_t per = (len + nt - 1) / nt, lo = hks_min(len, (size_t)t * per);
    const size_t hi = hks_min(len, lo + per);
    unsigned s = 0;
    for (size_t i = lo; i < hi; i++)
        s += a[i];
    part[t] = s;
    __syncthreads();
    for (unsigned off = 1; off < nt; off *= 2) {
        unsigned v = t >= off ? part[t - off] : 0;
        __syncthreads();
        part[t] += v;
        __syncthreads();
    }
    unsigned run = part[t] - s, total = part[nt - 1];
    for (size_t i = lo; i < hi; i++) {
        unsigned v = a[i];
        a[i] = run;
        run += v;
    }
    __syncthreads(); // part is reused by the next call
    return total;
}

// counts[0 .. m) scanned chunk by chunk; each chunk's total at counts[m + c].
extern "C" __global__ void radix_scan_chunks(unsigned *counts, unsigned long long m)
{
    const size_t chunks = (m + HKS_SCAN_CHUNK - 1) / HKS_SCAN_CHUNK;
    if (blockDim.x > 1024)
        return;
    for (size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
        size_t lo = c * HKS_SCAN_CHUNK;
        unsigned total = hks_block_scan(counts + lo, hks_min((size_t)HKS_SCAN_CHUNK, (size_t)m - lo));
        if (threadIdx.x == 0)
            counts[m + c] = total;
    }
}

// The chunk totals scanned (by block 0 alone).
extern "C" __global__ void radix_scan_totals(unsigned *counts, unsigned long long m)
{
    if (blockIdx.x == 0 && blockDim.x <= 1024)
        hks_block_scan(counts + m, (m + HKS_SCAN_CHUNK - 1) / HKS_SCAN_CHUNK);
}

// Each tile's keys (and payload) to their places, keeping their order: run
// `lane` of the tile (keys lo + lane * 64 ..) counts its digits into
// cnt[d][lane], the counts become exclusive offsets along the lanes of each
// digit, and every run writes its keys in order from base[d] + cnt[d][lane].
// Payload: vals[p], or p itself when iota; none when vout is NULL.
template <typename Tr>
__device__ void hks_scatter(const typename Tr::R *keys, typename Tr::R *out, const unsigned *vals,
                            unsigned *vout, const unsigned *counts, size_t n, int shift, int desc, int iota)
{
    __shared__ unsigned short cnt[256 * HKS_LANES];
    __shared__ unsigned base[256];
    const size_t tiles = (n + HKS_TILE - 1) / HKS_TILE, m = 256 * tiles;
    const bool dsc = desc != 0;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t lo = tile * HKS_TILE;
        for (unsigned lane = threadIdx.x; lane < HKS_LANES; lane += blockDim.x) {
            for (unsigned d = 0; d < 256; d++)
                cnt[d * HKS_LANES + lane] = 0;
            const size_t a = lo + lane * HKS_LANES, b = hks_min(n, a + (size_t)HKS_LANES);
            for (size_t p = a; p < b; p++)
                cnt[hks_digit<Tr>(keys[p], shift, dsc) * HKS_LANES + lane]++;
        }
        __syncthreads();
        for (unsigned d = threadIdx.x; d < 256; d += blockDim.x) {
            const size_t at = d * tiles + tile;
            base[d] = counts[at] + counts[m + at / HKS_SCAN_CHUNK];
            unsigned run = 0;
            for (unsigned lane = 0; lane < HKS_LANES; lane++) {
                unsigned c = cnt[d * HKS_LANES + lane];
                cnt[d * HKS_LANES + lane] = (unsigned short)run;
                run += c;
            }
        }
        __syncthreads();
        for (unsigned lane = threadIdx.x; lane < HKS_LANES; lane += blockDim.x) {
            const size_t a = lo + lane * HKS_LANES, b = hks_min(n, a + (size_t)HKS_LANES);
            for (size_t p = a; p < b; p++) {
                typename Tr::R k = keys[p];
                unsigned d = hks_digit<Tr>(k, shift, dsc);
                size_t to = base[d] + cnt[d * HKS_LANES + lane]++;
                out[to] = k;
                if (vout)
                    vout[to] = iota ? (unsigned)p : vals[p];
            }
        }
        __syncthreads();
    }
}

#define HKS_RADIX(T, Tr, name)                                                                    \
    extern "C" __global__ void radix_count_##name(const T *keys, unsigned *counts,                \
                                                  unsigned long long n, int shift, int desc)      \
    {                                                                                             \
        hks_count<Tr>((const Tr::R *)keys, counts, n, shift, desc);                               \
    }                                                                                             \
    extern "C" __global__ void radix_scatter_##name(const T *keys, T *out, const unsigned *vals,  \
                                                    unsigned *vout, const unsigned *counts,       \
                                                    unsigned long long n, int shift, int desc,    \
                                                    int iota)                                     \
    {                                                                                             \
        hks_scatter<Tr>((const Tr::R *)keys, (Tr::R *)out, vals, vout, counts, n, shift, desc,    \
                        iota);                                                                    \
    }

HKS_RADIX(unsigned, hks_u32, u32)
HKS_RADIX(int, hks_i32, i32)
HKS_RADIX(float, hks_f32, f32)
HKS_RADIX(unsigned long long, hks_u64, u64)
HKS_RADIX(long long, hks_i64, i64)
HKS_RADIX(double, hks_f64, f64)
