// indexing: index_select, gather, scatter, scatter_add and index_add along
// one dimension, candle's semantics. Every tensor is contiguous and viewed
// as [left, size, right] around the indexed dimension; `dim` is the size of
// the dimension the ids point into (the source's for index_select and
// gather, the destination's for the others), `n` the size of that
// dimension on the other side.
//
//   OP_I_T(const I *ids, const T *src, T *dst, unsigned long long *bad,
//          size_t left, size_t dim, size_t n, size_t right)
//
//   index_select  dst[l, j, r] = src[l, ids[j], r]          ids: n
//   gather        dst[l, j, r] = src[l, ids[l, j, r], r]    ids: left x n x right
//   scatter       dst[l, ids[l, j, r], r] = src[l, j, r]    ids: left x n x right
//   scatter_add   dst[l, ids[l, j, r], r] += src[l, j, r]   ids: left x n x right
//   index_add     dst[l, ids[j], r] += src[l, j, r]         ids: n
//
// The index dtype's all-ones value (u8 255, u32 0xffffffff, i64 2^63 - 1)
// is candle's "no index": index_select and gather write 0 there, the
// others skip it. Any other index outside [0, dim) (negative i64 included)
// is out of range: the kernel writes nothing for it and raises *bad to
// ~position (atomicMax, so the lowest position wins; 0 means none), the
// position being the offset of the bad index in ids. The plugin's op reads
// *bad back after the launch and turns it into an error.
//
// Geometry (the op's): index_select and index_add move whole rows of
// `right` elements, blockDim.x lanes along a row (16-byte vectors for
// index_select when the rows are aligned), blockDim.y (and z) rows a
// block, a grid stride over rows in x and over each row's columns in y
// (grid.y > 1 when there are few long rows); gather and scatter_add run over elements, 4 a thread a
// step; scatter runs one thread per (l, r) column and walks j in order, so
// of duplicate indices the last wins, as in candle's serial loop. Adds are
// atomics: f16 and bf16 add in f32 and round on each add (native half
// atomics on NVIDIA sm_80+, a compare-and-swap of the aligned 32-bit word
// elsewhere), integers wrap.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

// candle's "no index" value and the range check, per index type.
__device__ inline bool hki_none(unsigned char v) { return v == 0xffu; }
__device__ inline bool hki_none(unsigned v) { return v == 0xffffffffu; }
__device__ inline bool hki_none(long long v) { return v == 0x7fffffffffffffffLL; }
__device__ inline bool hki_out(unsigned char v, size_t dim) { return (size_t)v >= dim; }
__device__ inline bool hki_out(unsigned v, size_t dim) { return (size_t)v >= dim; }
__device__ inline bool hki_out(long long v, size_t dim) { return v < 0 || (size_t)v >= dim; }

// Records a bad index at position pos: the lowest position wins.
__device__ inline void hki_flag(unsigned long long *bad, size_t pos)
{
    unsigned long long code = ~(unsigned long long)pos;
    if (*(volatile unsigned long long *)bad < code)
        atomicMax(bad, code);
}

template <typename T> __device__ inline T hki_zero() { return (T)0; }
template <> __device__ inline __half hki_zero<__half>() { return __float2half(0.0f); }
template <> __device__ inline __hip_bfloat16 hki_zero<__hip_bfloat16>() { return __float2bfloat16(0.0f); }

// dst += v, atomically. Integers wrap (i64 through its unsigned twin).
__device__ inline void hki_add(float *p, float v) { atomicAdd(p, v); }
__device__ inline void hki_add(double *p, double v) { atomicAdd(p, v); }
__device__ inline void hki_add(int *p, int v) { atomicAdd(p, v); }
__device__ inline void hki_add(unsigned *p, unsigned v) { atomicAdd(p, v); }
__device__ inline void hki_add(long long *p, long long v)
{
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

#if defined(__HIP_PLATFORM_NVIDIA__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ inline void hki_add(__half *p, __half v) { atomicAdd(p, v); }
__device__ inline void hki_add(__hip_bfloat16 *p, __hip_bfloat16 v) { atomicAdd(p, v); }
#else
// A 16-bit float add as a compare-and-swap of the aligned 32-bit word
// holding it (the other half is written back as read), for targets without
// 16-bit float atomics. Buffers are at least 4-byte aligned and padded.
__device__ inline unsigned short hki_bits(__half h) { return __half_as_ushort(h); }
__device__ inline unsigned short hki_bits(__hip_bfloat16 h) { return __bfloat16_as_ushort(h); }
__device__ inline float hki_float(unsigned short b, const __half *) { return __half2float(__ushort_as_half(b)); }
__device__ inline float hki_float(unsigned short b, const __hip_bfloat16 *)
{
    return __bfloat162float(__ushort_as_bfloat16(b));
}
__device__ inline unsigned short hki_round(float f, const __half *) { return hki_bits(__float2half(f)); }
__device__ inline unsigned short hki_round(float f, const __hip_bfloat16 *) { return hki_bits(__float2bfloat16(f)); }

template <typename H> __device__ inline void hki_add16(H *p, float v)
{
    unsigned *word = (unsigned *)((unsigned long long)p & ~3ull);
    unsigned shift = ((unsigned long long)p & 2) ? 16u : 0u;
    unsigned old = *(volatile unsigned *)word, seen;
    do {
        seen = old;
        unsigned short h = (unsigned short)(seen >> shift);
        unsigned short r = hki_round(hki_float(h, p) + v, p);
        unsigned want = (seen & ~(0xffffu << shift)) | ((unsigned)r << shift);
        old = atomicCAS(word, seen, want);
    } while (old != seen);
}
__device__ inline void hki_add(__half *p, __half v) { hki_add16(p, __half2float(v)); }
__device__ inline void hki_add(__hip_bfloat16 *p, __hip_bfloat16 v) { hki_add16(p, __bfloat162float(v)); }
#endif

// 16 bytes of T, moved as one vector.
template <typename T> struct __align__(16) hki_vec { T v[16 / sizeof(T)]; };

__device__ inline bool hki_aligned(const void *p) { return ((unsigned long long)p & 15) == 0; }

// Any grid and block shape, each piece of work done once. Row kernels put
// threadIdx.x along a row (and blockIdx.y, which splits each row's columns
// among blocks when there are few long rows) and threadIdx.y, z over rows
// (slots), blockIdx.x, z over groups of rows; the others number every
// thread of the block and every block of the grid.
__device__ inline size_t hki_col() { return (size_t)blockIdx.y * blockDim.x + threadIdx.x; }
__device__ inline size_t hki_cols() { return (size_t)gridDim.y * blockDim.x; }
__device__ inline unsigned hki_slot() { return threadIdx.z * blockDim.y + threadIdx.y; }
__device__ inline unsigned hki_slots() { return blockDim.y * blockDim.z; }
__device__ inline size_t hki_rblock() { return (size_t)blockIdx.z * gridDim.x + blockIdx.x; }
__device__ inline size_t hki_rblocks() { return (size_t)gridDim.z * gridDim.x; }
__device__ inline size_t hki_block() { return hki_rblock() * gridDim.y + blockIdx.y; }
__device__ inline size_t hki_blocks() { return hki_rblocks() * gridDim.y; }
__device__ inline unsigned hki_tid() { return hki_slot() * blockDim.x + threadIdx.x; }
__device__ inline unsigned hki_threads() { return hki_slots() * blockDim.x; }

// index_select: row r = (l, j) of dst is row (l, ids[j]) of src.
template <typename T, typename I>
__device__ void hki_select(const I *ids, const T *src, T *dst, unsigned long long *bad, size_t left,
                           size_t dim, size_t n, size_t right)
{
    const size_t W = 16 / sizeof(T), rows = left * n;
    const bool vec = right % W == 0 && hki_aligned(src) && hki_aligned(dst);
    for (size_t r = hki_rblock() * hki_slots() + hki_slot(); r < rows; r += hki_rblocks() * hki_slots()) {
        size_t l = r / n, j = r - l * n;
        I id = ids[j];
        T *o = dst + r * right;
        if (hki_none(id)) {
            for (size_t c = hki_col(); c < right; c += hki_cols())
                o[c] = hki_zero<T>();
            continue;
        }
        if (hki_out(id, dim)) {
            if (hki_col() == 0)
                hki_flag(bad, j);
            continue;
        }
        const T *s = src + (l * dim + (size_t)id) * right;
        if (vec) {
            const hki_vec<T> *sv = (const hki_vec<T> *)s;
            hki_vec<T> *ov = (hki_vec<T> *)o;
            for (size_t c = hki_col(); c < right / W; c += hki_cols())
                ov[c] = sv[c];
        } else {
            for (size_t c = hki_col(); c < right; c += hki_cols())
                o[c] = s[c];
        }
    }
}

// index_add: row (l, j) of src is added to row (l, ids[j]) of dst.
template <typename T, typename I>
__device__ void hki_index_add(const I *ids, const T *src, T *dst, unsigned long long *bad, size_t left,
                              size_t dim, size_t n, size_t right)
{
    const size_t rows = left * n;
    for (size_t r = hki_rblock() * hki_slots() + hki_slot(); r < rows; r += hki_rblocks() * hki_slots()) {
        size_t l = r / n, j = r - l * n;
        I id = ids[j];
        if (hki_none(id))
            continue;
        if (hki_out(id, dim)) {
            if (hki_col() == 0)
                hki_flag(bad, j);
            continue;
        }
        const T *s = src + r * right;
        T *o = dst + (l * dim + (size_t)id) * right;
        for (size_t c = hki_col(); c < right; c += hki_cols())
            hki_add(o + c, s[c]);
    }
}

// gather (Add false) and scatter_add (Add true), element-wise over the ids:
// element i = (l, j, r) of ids. U is the index arithmetic's type (32 bits
// when every offset fits: divisions are much cheaper).
template <bool Add, typename U, typename T, typename I>
__device__ void hki_elements(const I *ids, const T *src, T *dst, unsigned long long *bad, U dim, U n,
                             U right, U numel)
{
    const U step = (U)hki_threads(), stride = (U)hki_blocks() * step * 4;
    for (U base = (U)hki_block() * step * 4 + hki_tid(); base < numel; base += stride) {
        I id[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (base + k * step < numel)
                id[k] = ids[base + k * step];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            U i = base + k * step;
            if (i >= numel || (Add && hki_none(id[k])))
                continue;
            if (!Add && hki_none(id[k])) {
                dst[i] = hki_zero<T>();
                continue;
            }
            if (hki_out(id[k], (size_t)dim)) {
                hki_flag(bad, i);
                continue;
            }
            U post = right == 1 ? 0 : i % right, pre = i / (n * right);
            U at = (pre * dim + (U)id[k]) * right + post;
            if (Add)
                hki_add(dst + at, src[i]);
            else
                dst[i] = src[at];
        }
    }
}

template <bool Add, typename T, typename I>
__device__ void hki_elementwise(const I *ids, const T *src, T *dst, unsigned long long *bad, size_t left,
                                size_t dim, size_t n, size_t right)
{
    size_t numel = left * n * right, span = left * (dim > n ? dim : n) * right;
    if (span < 0xffffffffu / 2)
        hki_elements<Add, unsigned>(ids, src, dst, bad, (unsigned)dim, (unsigned)n, (unsigned)right,
                                    (unsigned)numel);
    else
        hki_elements<Add, size_t>(ids, src, dst, bad, dim, n, right, numel);
}

// scatter: one thread per column (l, r), j in order: the last of duplicate
// indices wins.
template <typename T, typename I>
__device__ void hki_scatter(const I *ids, const T *src, T *dst, unsigned long long *bad, size_t left,
                            size_t dim, size_t n, size_t right)
{
    const size_t cols = left * right;
    for (size_t c = hki_block() * hki_threads() + hki_tid(); c < cols; c += hki_blocks() * hki_threads()) {
        size_t pre = c / right, post = c - pre * right;
        for (size_t j = 0; j < n; j++) {
            size_t i = (pre * n + j) * right + post;
            I id = ids[i];
            if (hki_none(id))
                continue;
            if (hki_out(id, dim)) {
                hki_flag(bad, i);
                continue;
            }
            dst[(pre * dim + (size_t)id) * right + post] = src[i];
        }
    }
}

#define HKI_PARAMS(T, I)                                                                        \
    (const I *ids, const T *src, T *dst, unsigned long long *bad, size_t left, size_t dim,     \
     size_t n, size_t right)
#define HKI_ARGS ids, src, dst, bad, left, dim, n, right

#define HKI_OPS(T, I, name)                                                                     \
    extern "C" __global__ void index_select_##name HKI_PARAMS(T, I)                             \
    {                                                                                           \
        hki_select(HKI_ARGS);                                                                   \
    }                                                                                           \
    extern "C" __global__ void gather_##name HKI_PARAMS(T, I)                                   \
    {                                                                                           \
        hki_elementwise<false>(HKI_ARGS);                                                       \
    }                                                                                           \
    extern "C" __global__ void scatter_##name HKI_PARAMS(T, I)                                  \
    {                                                                                           \
        hki_scatter(HKI_ARGS);                                                                  \
    }                                                                                           \
    extern "C" __global__ void scatter_add_##name HKI_PARAMS(T, I)                              \
    {                                                                                           \
        hki_elementwise<true>(HKI_ARGS);                                                        \
    }                                                                                           \
    extern "C" __global__ void index_add_##name HKI_PARAMS(T, I)                                \
    {                                                                                           \
        hki_index_add(HKI_ARGS);                                                                \
    }

#define HKI_TYPE(T, t)                                                                          \
    HKI_OPS(T, unsigned char, u8_##t)                                                           \
    HKI_OPS(T, unsigned, u32_##t)                                                               \
    HKI_OPS(T, long long, i64_##t)

HKI_TYPE(float, f32)
HKI_TYPE(double, f64)
HKI_TYPE(__half, f16)
HKI_TYPE(__hip_bfloat16, bf16)
HKI_TYPE(int, i32)
HKI_TYPE(unsigned, u32)
HKI_TYPE(long long, i64)
