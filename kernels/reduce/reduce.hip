// reduce: per-row reductions and row normalisations over a contiguous
// [rows, cols] view (row r is x[r * cols .. (r + 1) * cols)).
//
// One block per row (blockIdx.x = row), any blockDim.x, any cols >= 1:
// each thread folds its share of the row (16-byte vectors when the row is
// aligned, see hkr_fold), then the block combines the threads' partials:
// warp shuffles inside each
// warp when blockDim.x is a multiple of warpSize (the plugin's rule always
// picks such a block), then a tree in dynamic shared memory over the warps'
// partials (or over every thread's, for a block of another size). Shared
// memory: one hkr_acc (16 bytes) per thread, which covers both cases.
// warpSize is read, never assumed.
//
//   OP_T(const T *x, R *out, int rows, int cols)
//       OP in sum min max mean argmin argmax; out holds rows values (R = T,
//       argmin/argmax: R = long long, the column index).
//   softmax_T / log_softmax_T(const T *x, T *out, int rows, int cols)
//   rmsnorm_T(const T *x, const T *w, T *out, int rows, int cols, float eps)
//   layernorm_T(const T *x, const T *w, const T *b, T *out, int rows,
//               int cols, float eps)                   b may be NULL
//
// Semantics (PyTorch's): f16 and bf16 accumulate in f32 and round once, f32
// in f32, f64 in f64; integer sums wrap. min/max return NaN when the row
// holds one; argmin/argmax return the index of the first NaN if any, else
// of the first extreme value (ties: the lowest index). softmax subtracts
// the row maximum first; layernorm uses the biased variance of the row,
// computed around the mean (two passes).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

// Storage type -> accumulation type and back.
__device__ inline float hkr_up(__half x) { return __half2float(x); }
__device__ inline float hkr_up(__hip_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float hkr_up(float x) { return x; }
__device__ inline double hkr_up(double x) { return x; }
__device__ inline unsigned hkr_up(int x) { return (unsigned)x; } // wrapping sums
__device__ inline unsigned hkr_up(unsigned x) { return x; }
__device__ inline __half hkr_down(const __half *, float r) { return __float2half(r); }
__device__ inline __hip_bfloat16 hkr_down(const __hip_bfloat16 *, float r) { return __float2bfloat16(r); }
__device__ inline float hkr_down(const float *, float r) { return r; }
__device__ inline double hkr_down(const double *, double r) { return r; }
__device__ inline int hkr_down(const int *, unsigned r) { return (int)r; }
__device__ inline unsigned hkr_down(const unsigned *, unsigned r) { return r; }

// The accumulation type of T, and what min/max start from (the identity
// of each: +-inf for floats, the type's limits for integers, which compare
// in T itself so they keep their sign).
template <typename T> struct hkr_t;
template <> struct hkr_t<float> {
    typedef float A;
    static __device__ float lo() { return -__int_as_float(0x7f800000); }
    static __device__ float hi() { return __int_as_float(0x7f800000); }
};
template <> struct hkr_t<__half> : hkr_t<float> {};
template <> struct hkr_t<__hip_bfloat16> : hkr_t<float> {};
template <> struct hkr_t<double> {
    typedef double A;
    static __device__ double lo() { return -__longlong_as_double(0x7ff0000000000000LL); }
    static __device__ double hi() { return __longlong_as_double(0x7ff0000000000000LL); }
};
template <> struct hkr_t<int> {
    typedef int A;
    static __device__ int lo() { return -2147483647 - 1; }
    static __device__ int hi() { return 2147483647; }
};
template <> struct hkr_t<unsigned> {
    typedef unsigned A;
    static __device__ unsigned lo() { return 0u; }
    static __device__ unsigned hi() { return 0xffffffffu; }
};

// A partial result: a value and, for argmin/argmax, its column (the
// identity's column is past every real one, so a real value wins ties).
template <typename A> struct hkr_acc { A v; long long i; };

template <typename A> __device__ inline bool hkr_nan(A v) { return v != v; }

// Folds: combine(a, b) is order-free for sum (up to rounding) and takes
// the index into account for the others, so any combination order gives
// the first NaN / the first extreme.
// seq(a, p) is f for a p that comes after every element folded into a
// (a chain walking its columns in order): cheaper, no tie test.
struct hkr_sum {
    template <typename A> __device__ static hkr_acc<A> id() { hkr_acc<A> r = {(A)0, 0}; return r; }
    template <typename A> __device__ static hkr_acc<A> f(hkr_acc<A> a, hkr_acc<A> b) { a.v = a.v + b.v; return a; }
    template <typename A> __device__ static hkr_acc<A> seq(hkr_acc<A> a, hkr_acc<A> b) { a.v = a.v + b.v; return a; }
};
template <bool Max> struct hkr_ext {
    template <typename A> __device__ static hkr_acc<A> id()
    {
        hkr_acc<A> r = {Max ? hkr_t<A>::lo() : hkr_t<A>::hi(), 0x7fffffffffffffffLL};
        return r;
    }
    template <typename A> __device__ static hkr_acc<A> f(hkr_acc<A> a, hkr_acc<A> b)
    {
        bool an = hkr_nan(a.v), bn = hkr_nan(b.v);
        if (an || bn)
            return an && bn ? (b.i < a.i ? b : a) : an ? a : b;
        if (b.v == a.v)
            return b.i < a.i ? b : a;
        return (Max ? b.v > a.v : b.v < a.v) ? b : a;
    }
    template <typename A> __device__ static hkr_acc<A> seq(hkr_acc<A> a, hkr_acc<A> p)
    {
        // a.i > p.i only for the identity, which any element replaces
        bool take = (Max ? p.v > a.v : p.v < a.v) || (hkr_nan(p.v) && !hkr_nan(a.v)) || a.i > p.i;
        a.v = take ? p.v : a.v;
        a.i = take ? p.i : a.i;
        return a;
    }
};
typedef hkr_ext<false> hkr_min;
typedef hkr_ext<true> hkr_max;

template <typename A> __device__ inline hkr_acc<A> hkr_shfl(hkr_acc<A> a, int o)
{
    hkr_acc<A> r;
    r.v = __shfl_down(a.v, o);
    r.i = __shfl_down(a.i, o);
    return r;
}

// Every thread's v combined with F; every thread gets the result.
template <typename F, typename A> __device__ hkr_acc<A> hkr_block(hkr_acc<A> v)
{
    extern __shared__ double hkr_sh[]; // one hkr_acc per thread (16 bytes each)
    hkr_acc<A> *sh = (hkr_acc<A> *)(void *)hkr_sh;
    unsigned t = threadIdx.x, n = blockDim.x, w = warpSize;
    if (n % w == 0) {
        for (unsigned o = w / 2; o > 0; o /= 2)
            v = F::f(v, hkr_shfl(v, (int)o));
        if (t % w == 0)
            sh[t / w] = v;
        n /= w;
        t = t % w == 0 ? t / w : n; // the warps' leaders fold their partials below
    } else {
        sh[t] = v;
    }
    __syncthreads();
    for (unsigned s = 1; s < n; s *= 2) {
        if (t % (2 * s) == 0 && t + s < n)
            sh[t] = F::f(sh[t], sh[t + s]);
        __syncthreads();
    }
    hkr_acc<A> r = sh[0];
    __syncthreads(); // sh is reused by the caller's next fold
    return r;
}

// 16 bytes of T, loaded as one vector.
template <typename T> struct __align__(16) hkr_vec { T v[16 / sizeof(T)]; };

// This thread's fold with F of its columns of row, each mapped through G
// into A. A row that starts 16-byte aligned is read 16 bytes at a time
// (thread t takes vectors t, t + blockDim.x, ...), then the cols % W tail
// element by element; any other row element by element. The partials
// carry their column, so the order does not change argmin/argmax.
template <typename F, typename A, typename T, typename G>
__device__ inline hkr_acc<A> hkr_fold(const T *row, int cols, G g)
{
    hkr_acc<A> a = F::template id<A>();
    const int W = 16 / sizeof(T);
    int done = 0;
    if (((unsigned long long)row & 15) == 0) {
        // one chain per vector lane, combined at the end: W independent
        // folds keep the adder busy (one thread walks a whole row when
        // the CPU backend runs a block of one)
        hkr_acc<A> lane[W];
#pragma unroll
        for (int k = 0; k < W; k++)
            lane[k] = a;
        const hkr_vec<T> *rv = (const hkr_vec<T> *)row;
        const int nv = cols / W;
        for (int v = threadIdx.x; v < nv; v += blockDim.x) {
            hkr_vec<T> e = rv[v];
#pragma unroll
            for (int k = 0; k < W; k++) {
                hkr_acc<A> p = {(A)g(hkr_up(e.v[k])), (long long)v * W + k};
                lane[k] = F::seq(lane[k], p);
            }
        }
#pragma unroll
        for (int k = 0; k < W; k++)
            a = F::f(a, lane[k]);
        done = nv * W;
    }
    for (int c = done + (int)threadIdx.x; c < cols; c += blockDim.x) {
        // i32 round-trips through hkr_up's unsigned unchanged
        hkr_acc<A> p = {(A)g(hkr_up(row[c])), c};
        a = F::f(a, p);
    }
    return a;
}

struct hkr_ident { template <typename A> __device__ A operator()(A v) const { return v; } };

// sum and mean fold hkr_up's type (wrapping unsigned for i32); min/max in
// T's accumulation type, where the integers keep their sign.
template <typename T> struct hkr_sumt { typedef typename hkr_t<T>::A A; };
template <> struct hkr_sumt<int> { typedef unsigned A; };

template <typename T> __device__ void hkr_row_sum(const T *x, T *out, int cols, bool mean)
{
    typedef typename hkr_sumt<T>::A A;
    const T *row = x + (size_t)blockIdx.x * cols;
    hkr_acc<A> a = hkr_block<hkr_sum>(hkr_fold<hkr_sum, A>(row, cols, hkr_ident()));
    if (threadIdx.x == 0)
        out[blockIdx.x] = hkr_down((const T *)0, mean ? a.v / (A)cols : a.v);
}

template <typename F, typename T> __device__ hkr_acc<typename hkr_t<T>::A> hkr_row_ext(const T *x, int cols)
{
    typedef typename hkr_t<T>::A A;
    return hkr_block<F>(hkr_fold<F, A>(x + (size_t)blockIdx.x * cols, cols, hkr_ident()));
}

#define HKR_REDUCE(T, name)                                                                    \
    extern "C" __global__ void sum_##name(const T *x, T *out, int rows, int cols)              \
    {                                                                                          \
        if ((int)blockIdx.x < rows)                                                            \
            hkr_row_sum(x, out, cols, false);                                                  \
    }                                                                                          \
    extern "C" __global__ void min_##name(const T *x, T *out, int rows, int cols)              \
    {                                                                                          \
        if ((int)blockIdx.x >= rows)                                                           \
            return;                                                                            \
        hkr_acc<hkr_t<T>::A> a = hkr_row_ext<hkr_min>(x, cols);                                \
        if (threadIdx.x == 0)                                                                  \
            out[blockIdx.x] = hkr_down((const T *)0, a.v);                                     \
    }                                                                                          \
    extern "C" __global__ void max_##name(const T *x, T *out, int rows, int cols)              \
    {                                                                                          \
        if ((int)blockIdx.x >= rows)                                                           \
            return;                                                                            \
        hkr_acc<hkr_t<T>::A> a = hkr_row_ext<hkr_max>(x, cols);                                \
        if (threadIdx.x == 0)                                                                  \
            out[blockIdx.x] = hkr_down((const T *)0, a.v);                                     \
    }                                                                                          \
    extern "C" __global__ void argmin_##name(const T *x, long long *out, int rows, int cols)   \
    {                                                                                          \
        if ((int)blockIdx.x >= rows)                                                           \
            return;                                                                            \
        hkr_acc<hkr_t<T>::A> a = hkr_row_ext<hkr_min>(x, cols);                                \
        if (threadIdx.x == 0)                                                                  \
            out[blockIdx.x] = a.i;                                                             \
    }                                                                                          \
    extern "C" __global__ void argmax_##name(const T *x, long long *out, int rows, int cols)   \
    {                                                                                          \
        if ((int)blockIdx.x >= rows)                                                           \
            return;                                                                            \
        hkr_acc<hkr_t<T>::A> a = hkr_row_ext<hkr_max>(x, cols);                                \
        if (threadIdx.x == 0)                                                                  \
            out[blockIdx.x] = a.i;                                                             \
    }

#define HKR_MEAN(T, name)                                                                      \
    extern "C" __global__ void mean_##name(const T *x, T *out, int rows, int cols)             \
    {                                                                                          \
        if ((int)blockIdx.x < rows)                                                            \
            hkr_row_sum(x, out, cols, true);                                                   \
    }

// exp and log in the accumulation type
__device__ inline float hkr_exp(float v) { return expf(v); }
__device__ inline double hkr_exp(double v) { return exp(v); }
__device__ inline float hkr_log(float v) { return logf(v); }
__device__ inline double hkr_log(double v) { return log(v); }
__device__ inline float hkr_rsqrt(float v) { return rsqrtf(v); }
__device__ inline double hkr_rsqrt(double v) { return 1.0 / sqrt(v); }

template <typename A> struct hkr_expm {
    A m;
    __device__ A operator()(A v) const { return hkr_exp(v - m); }
};
template <typename A> struct hkr_sq {
    A m;
    __device__ A operator()(A v) const { return (v - m) * (v - m); }
};

// A row held in registers: thread t keeps the 16-byte vectors t,
// t + blockDim.x, ... (at most HKR_NV of them) as A values, so softmax and
// the norms read their row once. Usable when the row and out are 16-byte
// aligned, cols is a whole number of vectors and the block covers it.
#define HKR_NV 8
template <typename T> struct hkr_regrow {
    typedef typename hkr_t<T>::A A;
    enum { W = 16 / sizeof(T) };
    A v[HKR_NV * W];
    int nv;

    static __device__ bool fits(const T *row, const T *out, int cols)
    {
        return (((unsigned long long)row | (unsigned long long)out) & 15) == 0 && cols % W == 0 &&
               cols / W <= HKR_NV * (int)blockDim.x;
    }
    __device__ void load(const T *row, int cols)
    {
        nv = cols / W;
        const hkr_vec<T> *rv = (const hkr_vec<T> *)row;
#pragma unroll
        for (int k = 0; k < HKR_NV; k++) {
            int i = threadIdx.x + k * blockDim.x;
            if (i < nv) {
                hkr_vec<T> e = rv[i];
#pragma unroll
                for (int j = 0; j < W; j++)
                    v[k * W + j] = hkr_up(e.v[j]);
            }
        }
    }
    // This thread's fold of g(value) with F.
    template <typename F, typename G> __device__ hkr_acc<A> fold(G g) const
    {
        hkr_acc<A> a = F::template id<A>();
#pragma unroll
        for (int k = 0; k < HKR_NV; k++)
            if ((int)threadIdx.x + k * (int)blockDim.x < nv)
#pragma unroll
                for (int j = 0; j < W; j++) {
                    hkr_acc<A> p = {g(v[k * W + j]), 0};
                    a = F::f(a, p);
                }
        return a;
    }
    // out's vectors from f(value, column).
    template <typename G> __device__ void store(T *out, G f) const
    {
        hkr_vec<T> *ov = (hkr_vec<T> *)out;
#pragma unroll
        for (int k = 0; k < HKR_NV; k++) {
            int i = threadIdx.x + k * blockDim.x;
            if (i < nv) {
                hkr_vec<T> e;
#pragma unroll
                for (int j = 0; j < W; j++)
                    e.v[j] = hkr_down((const T *)0, f(v[k * W + j], i * W + j));
                ov[i] = e;
            }
        }
    }
};

template <typename A> struct hkr_softmax_out {
    A m, inv;
    bool log_form;
    __device__ A operator()(A v, int) const { return log_form ? v - m : hkr_exp(v - m) * inv; }
};
template <typename T, typename A> struct hkr_norm_out {
    const T *w, *b;
    A m, r;
    __device__ A operator()(A v, int c) const
    {
        A y = (v - m) * r * hkr_up(w[c]);
        return b ? y + hkr_up(b[c]) : y;
    }
};

template <typename T> __device__ void hkr_softmax(const T *x, T *out, int cols, bool log_form)
{
    typedef typename hkr_t<T>::A A;
    const size_t base = (size_t)blockIdx.x * cols;
    const T *row = x + base;
    if (hkr_regrow<T>::fits(row, out + base, cols)) {
        hkr_regrow<T> rr;
        rr.load(row, cols);
        A m = hkr_block<hkr_max>(rr.template fold<hkr_max>(hkr_ident())).v;
        hkr_expm<A> e = {m};
        A s = hkr_block<hkr_sum>(rr.template fold<hkr_sum>(e)).v;
        hkr_softmax_out<A> o = {log_form ? m + hkr_log(s) : m, (A)1 / s, log_form};
        rr.store(out + base, o);
        return;
    }
    A m = hkr_block<hkr_max>(hkr_fold<hkr_max, A>(row, cols, hkr_ident())).v;
    hkr_expm<A> e = {m};
    A s = hkr_block<hkr_sum>(hkr_fold<hkr_sum, A>(row, cols, e)).v;
    if (log_form) {
        A shift = m + hkr_log(s);
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            out[base + c] = hkr_down((const T *)0, hkr_up(row[c]) - shift);
    } else {
        A inv = (A)1 / s;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            out[base + c] = hkr_down((const T *)0, hkr_exp(hkr_up(row[c]) - m) * inv);
    }
}

// rmsnorm (center false): x * rsqrt(mean(x^2) + eps) * w; layernorm:
// (x - mean) * rsqrt(var + eps) * w (+ b).
template <typename T>
__device__ void hkr_norm(const T *x, const T *w, const T *b, T *out, int cols, float eps, bool center)
{
    typedef typename hkr_t<T>::A A;
    const size_t base = (size_t)blockIdx.x * cols;
    const T *row = x + base;
    if (hkr_regrow<T>::fits(row, out + base, cols)) {
        hkr_regrow<T> rr;
        rr.load(row, cols);
        A m = 0;
        if (center)
            m = hkr_block<hkr_sum>(rr.template fold<hkr_sum>(hkr_ident())).v / (A)cols;
        hkr_sq<A> sq = {m};
        A var = hkr_block<hkr_sum>(rr.template fold<hkr_sum>(sq)).v / (A)cols;
        hkr_norm_out<T, A> o = {w, b, m, hkr_rsqrt(var + (A)eps)};
        rr.store(out + base, o);
        return;
    }
    A m = 0;
    if (center)
        m = hkr_block<hkr_sum>(hkr_fold<hkr_sum, A>(row, cols, hkr_ident())).v / (A)cols;
    hkr_sq<A> sq = {m};
    A var = hkr_block<hkr_sum>(hkr_fold<hkr_sum, A>(row, cols, sq)).v / (A)cols;
    A r = hkr_rsqrt(var + (A)eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        A y = (hkr_up(row[c]) - m) * r * hkr_up(w[c]);
        if (b)
            y += hkr_up(b[c]);
        out[base + c] = hkr_down((const T *)0, y);
    }
}

#define HKR_ROWS(T, name)                                                                      \
    extern "C" __global__ void softmax_##name(const T *x, T *out, int rows, int cols)          \
    {                                                                                          \
        if ((int)blockIdx.x < rows)                                                            \
            hkr_softmax(x, out, cols, false);                                                  \
    }                                                                                          \
    extern "C" __global__ void log_softmax_##name(const T *x, T *out, int rows, int cols)      \
    {                                                                                          \
        if ((int)blockIdx.x < rows)                                                            \
            hkr_softmax(x, out, cols, true);                                                   \
    }                                                                                          \
    extern "C" __global__ void rmsnorm_##name(const T *x, const T *w, T *out, int rows,        \
                                              int cols, float eps)                             \
    {                                                                                          \
        if ((int)blockIdx.x < rows)                                                            \
            hkr_norm(x, w, (const T *)0, out, cols, eps, false);                               \
    }                                                                                          \
    extern "C" __global__ void layernorm_##name(const T *x, const T *w, const T *b, T *out,    \
                                                int rows, int cols, float eps)                 \
    {                                                                                          \
        if ((int)blockIdx.x < rows)                                                            \
            hkr_norm(x, w, b, out, cols, eps, true);                                           \
    }

HKR_REDUCE(float, f32)
HKR_REDUCE(double, f64)
HKR_REDUCE(__half, f16)
HKR_REDUCE(__hip_bfloat16, bf16)
HKR_REDUCE(int, i32)
HKR_REDUCE(unsigned, u32)
HKR_MEAN(float, f32)
HKR_MEAN(double, f64)
HKR_MEAN(__half, f16)
HKR_MEAN(__hip_bfloat16, bf16)
HKR_ROWS(float, f32)
HKR_ROWS(double, f64)
HKR_ROWS(__half, f16)
HKR_ROWS(__hip_bfloat16, bf16)

// ---------------------------------------------------------------------------
// Strided reductions, candle's fast_* form: src is a strided view of
// num_dims dims (info = dims[num_dims] then strides[num_dims], in
// elements), its logical elements in row-major order of dims; block r
// reduces the logical elements [r * el, (r + 1) * el) into dst[r] (the
// host op moves the reduced dims last). info NULL: src is contiguous.
//
//   fast_OP_T(size_t numel, size_t el, size_t num_dims, const size_t *info,
//             const T *src, R *dst)      OP in sum mean min max argmin argmax;
//                                        R = T, argmin/argmax: unsigned (as candle)

// The offset of logical element i of a strided view.
__device__ inline size_t hkr_strided(size_t i, size_t nd, const size_t *info)
{
    size_t off = 0;
    for (size_t d = nd; d-- > 0;) {
        off += (i % info[d]) * info[nd + d];
        i /= info[d];
    }
    return off;
}

template <typename F, typename A, typename T>
__device__ hkr_acc<A> hkr_fold_strided(const T *src, size_t first, size_t el, size_t nd, const size_t *info)
{
    if (!info)
        return hkr_fold<F, A>(src + first, (int)el, hkr_ident());
    hkr_acc<A> a = F::template id<A>();
    for (size_t c = threadIdx.x; c < el; c += blockDim.x) {
        hkr_acc<A> p = {(A)hkr_up(src[hkr_strided(first + c, nd, info)]), (long long)c};
        a = F::f(a, p);
    }
    return a;
}

#define HKR_FAST(T, name)                                                                      \
    extern "C" __global__ void fast_sum_##name(size_t numel, size_t el, size_t num_dims,       \
                                               const size_t *info, const T *src, T *dst)       \
    {                                                                                          \
        typedef hkr_sumt<T>::A A;                                                              \
        if ((size_t)blockIdx.x * el >= numel)                                                  \
            return;                                                                            \
        hkr_acc<A> a = hkr_block<hkr_sum>(                                                     \
            hkr_fold_strided<hkr_sum, A>(src, (size_t)blockIdx.x * el, el, num_dims, info));   \
        if (threadIdx.x == 0)                                                                  \
            dst[blockIdx.x] = hkr_down((const T *)0, a.v);                                     \
    }                                                                                          \
    HKR_FAST_EXT(T, name, min, hkr_min)                                                        \
    HKR_FAST_EXT(T, name, max, hkr_max)

#define HKR_FAST_EXT(T, name, op, F)                                                           \
    extern "C" __global__ void fast_##op##_##name(size_t numel, size_t el, size_t num_dims,    \
                                                  const size_t *info, const T *src, T *dst)    \
    {                                                                                          \
        typedef hkr_t<T>::A A;                                                                 \
        if ((size_t)blockIdx.x * el >= numel)                                                  \
            return;                                                                            \
        hkr_acc<A> a = hkr_block<F>(                                                           \
            hkr_fold_strided<F, A>(src, (size_t)blockIdx.x * el, el, num_dims, info));         \
        if (threadIdx.x == 0)                                                                  \
            dst[blockIdx.x] = hkr_down((const T *)0, a.v);                                     \
    }                                                                                          \
    extern "C" __global__ void fast_arg##op##_##name(size_t numel, size_t el, size_t num_dims, \
                                                     const size_t *info, const T *src,         \
                                                     unsigned *dst)                            \
    {                                                                                          \
        typedef hkr_t<T>::A A;                                                                 \
        if ((size_t)blockIdx.x * el >= numel)                                                  \
            return;                                                                            \
        hkr_acc<A> a = hkr_block<F>(                                                           \
            hkr_fold_strided<F, A>(src, (size_t)blockIdx.x * el, el, num_dims, info));         \
        if (threadIdx.x == 0)                                                                  \
            dst[blockIdx.x] = (unsigned)a.i;                                                   \
    }

#define HKR_FAST_MEAN(T, name)                                                                 \
    extern "C" __global__ void fast_mean_##name(size_t numel, size_t el, size_t num_dims,      \
                                                const size_t *info, const T *src, T *dst)      \
    {                                                                                          \
        typedef hkr_t<T>::A A;                                                                 \
        if ((size_t)blockIdx.x * el >= numel)                                                  \
            return;                                                                            \
        hkr_acc<A> a = hkr_block<hkr_sum>(                                                     \
            hkr_fold_strided<hkr_sum, A>(src, (size_t)blockIdx.x * el, el, num_dims, info));   \
        if (threadIdx.x == 0)                                                                  \
            dst[blockIdx.x] = hkr_down((const T *)0, a.v / (A)el);                             \
    }

HKR_FAST(float, f32)
HKR_FAST(double, f64)
HKR_FAST(__half, f16)
HKR_FAST(__hip_bfloat16, bf16)
HKR_FAST(int, i32)
HKR_FAST(unsigned, u32)
HKR_FAST_MEAN(float, f32)
HKR_FAST_MEAN(double, f64)
HKR_FAST_MEAN(__half, f16)
HKR_FAST_MEAN(__hip_bfloat16, bf16)

// ---------------------------------------------------------------------------
// Rotary embeddings, candle's three layouts; cos and sin hold [t, d / 2]
// (or [b, t, d / 2] when stride_b > 0: the batch of an element is
// 2 * i / stride_b). Any grid: each thread walks pairs with a grid stride.
//
//   rope_i_T(src, cos, sin, dst, bh, td, stride_b)     interleaved pairs
//       (x[2k], x[2k+1]) of [bh, t, d] (td = t * d)
//   rope_T(src, cos, sin, dst, bh, td, d, stride_b)     half-split pairs
//       (x[k], x[k + d/2]) of each row of d
//   rope_thd_T(src, cos, sin, dst, b, t, h, d, stride_b)  half-split over
//       [b, t, h, d]
// out = (x0 * c - x1 * s, x0 * s + x1 * c), in f32 for f16/bf16.

template <typename T>
__device__ inline void hkr_rotate(const T *src, const T *cs, const T *sn, T *dst, size_t i1, size_t i2,
                                  size_t ics)
{
    typedef typename hkr_t<T>::A A;
    A x0 = hkr_up(src[i1]), x1 = hkr_up(src[i2]), c = hkr_up(cs[ics]), s = hkr_up(sn[ics]);
    dst[i1] = hkr_down((const T *)0, x0 * c - x1 * s);
    dst[i2] = hkr_down((const T *)0, x0 * s + x1 * c);
}

#define HKR_GRID_STRIDE(i, n)                                                                  \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                    \
         i += (size_t)gridDim.x * blockDim.x)

#define HKR_ROPE(T, name)                                                                      \
    extern "C" __global__ void rope_i_##name(const T *src, const T *cos, const T *sin, T *dst, \
                                             unsigned bh, unsigned td, unsigned stride_b)      \
    {                                                                                          \
        const size_t half = td / 2;                                                            \
        HKR_GRID_STRIDE(i, (size_t)bh * half)                                                  \
        {                                                                                      \
            size_t ics = i % half;                                                             \
            if (stride_b)                                                                      \
                ics += (2 * i / stride_b) * half;                                              \
            hkr_rotate(src, cos, sin, dst, 2 * i, 2 * i + 1, ics);                             \
        }                                                                                      \
    }                                                                                          \
    extern "C" __global__ void rope_##name(const T *src, const T *cos, const T *sin, T *dst,   \
                                           unsigned bh, unsigned td, unsigned d,               \
                                           unsigned stride_b)                                  \
    {                                                                                          \
        const size_t half = td / 2, hd = d / 2;                                                \
        HKR_GRID_STRIDE(i, (size_t)bh * half)                                                  \
        {                                                                                      \
            size_t ibh = i / half, itd = i % half, it = itd / hd, id = itd % hd;               \
            size_t i1 = ibh * td + it * d + id, ics = it * hd + id;                            \
            if (stride_b)                                                                      \
                ics += (2 * i / stride_b) * half;                                              \
            hkr_rotate(src, cos, sin, dst, i1, i1 + hd, ics);                                  \
        }                                                                                      \
    }                                                                                          \
    extern "C" __global__ void rope_thd_##name(const T *src, const T *cos, const T *sin,       \
                                               T *dst, unsigned b, unsigned t, unsigned h,     \
                                               unsigned d, unsigned stride_b)                  \
    {                                                                                          \
        const size_t hd = d / 2;                                                               \
        HKR_GRID_STRIDE(i, (size_t)b * t * h * hd)                                             \
        {                                                                                      \
            size_t ibth = i / hd, id = i % hd, it = (ibth / h) % t;                            \
            size_t i1 = ibth * d + id, ics = it * hd + id;                                     \
            if (stride_b)                                                                      \
                ics += (2 * i / stride_b) * ((size_t)t * hd);                                  \
            hkr_rotate(src, cos, sin, dst, i1, i1 + hd, ics);                                  \
        }                                                                                      \
    }

HKR_ROPE(float, f32)
HKR_ROPE(double, f64)
HKR_ROPE(__half, f16)
HKR_ROPE(__hip_bfloat16, bf16)

// ---------------------------------------------------------------------------
// Prefix sums over a whole buffer in one pass (a decoupled look-back scan):
// each block takes the next tile (an atomic ticket, so a block waits only
// for tiles whose blocks have started), scans it, publishes its total,
// then walks back over the tiles before it until one has published its
// inclusive prefix, adding the totals it passes; then publishes its own
// inclusive prefix and writes the tile. Every element is read once and
// written once.
//
//   cumsum_T(const T *x, T *out, size_t n, unsigned *state, A *part,
//            int exclusive)
//       state: 1 + tiles unsigned, zero before the launch (state[0] hands
//       out tiles, state[1 + k] is tile k's flag: 1 total, 2 prefix);
//       part: 2 * tiles of the accumulation type A (tile k's total at
//       2k, its inclusive prefix at 2k + 1). A tile is 64 bytes of x per
//       thread (16 f32, 8 f64, 32 f16); gridDim.x = the tile count. Dynamic
//       shared memory: 8 * (2 + 64) bytes and 64 per thread (the staged tile).
//   A: f32 for f32/f16/bf16, f64, u32 for i32/u32 (wrapping), u64 for i64.

template <typename T> struct hkr_scan_t { typedef typename hkr_sumt<T>::A A; };
template <> struct hkr_scan_t<long long> { typedef unsigned long long A; };
__device__ inline unsigned long long hkr_up(long long x) { return (unsigned long long)x; }
__device__ inline long long hkr_down(const long long *, unsigned long long r) { return (long long)r; }

template <typename A> __device__ inline A hkr_warp_scan(A v) // inclusive, over the warp
{
    const int lane = threadIdx.x % warpSize;
    for (int o = 1; o < warpSize; o *= 2) {
        A u = __shfl_up(v, o);
        if (lane >= o)
            v += u;
    }
    return v;
}

// Tile `tile`'s exclusive prefix, computed by the whole of warp 0: lane 0
// publishes the tile's total, then the warp looks back over a window of
// warpSize tiles at once (lane l at tile - 1 - l, waiting until that tile
// has published something), adds the totals up to the nearest tile that
// has published its inclusive prefix, and slides the window back while
// there is none. Lane 0 then publishes the tile's own inclusive prefix.
//
// A tile's status: for a 4-byte A one 64-bit word, flag << 32 | value bits
// (one store publishes both, one load reads both: the words live in
// `part`, tiles of them); for an 8-byte A the flag in state[1 + tile] and
// the values in part, ordered by fences.
__device__ inline unsigned hkr_bits(float v) { return __float_as_uint(v); }
__device__ inline unsigned hkr_bits(unsigned v) { return v; }
__device__ inline float hkr_unbits(unsigned b, float) { return __uint_as_float(b); }
__device__ inline unsigned hkr_unbits(unsigned b, unsigned) { return b; }

template <typename A, bool Packed = sizeof(A) == 4> struct hkr_status;
template <typename A> struct hkr_status<A, true> {
    volatile unsigned long long *w;
    __device__ hkr_status(unsigned *, A *part) : w((volatile unsigned long long *)(void *)part) {}
    __device__ void publish(size_t tile, unsigned flag, A v)
    {
        atomicExch((unsigned long long *)w + tile, (unsigned long long)flag << 32 | hkr_bits(v));
    }
    __device__ unsigned wait(size_t tile, A *v) const
    {
        unsigned long long s;
        while (((s = w[tile]) >> 32) == 0)
            ;
        *v = hkr_unbits((unsigned)s, (A)0);
        return (unsigned)(s >> 32);
    }
};
template <typename A> struct hkr_status<A, false> {
    unsigned *flag;
    volatile A *vp;
    __device__ hkr_status(unsigned *state, A *part) : flag(state + 1), vp(part) {}
    __device__ void publish(size_t tile, unsigned f, A v)
    {
        vp[2 * tile + (f == 2)] = v;
        __threadfence();
        atomicExch(&flag[tile], f);
    }
    __device__ unsigned wait(size_t tile, A *v) const
    {
        unsigned f;
        while ((f = ((volatile unsigned *)flag)[tile]) == 0)
            ;
        __threadfence();
        *v = vp[2 * tile + (f == 2)];
        return f;
    }
};

template <typename A>
__device__ A hkr_look_back(unsigned *state, A *part, size_t tile, A total)
{
    hkr_status<A> st(state, part);
    const int lane = threadIdx.x % warpSize;
    if (lane == 0)
        st.publish(tile, tile == 0 ? 2u : 1u, total);
    if (tile == 0)
        return (A)0;
    A prefix = (A)0;
    for (long long end = (long long)tile - 1;; end -= warpSize) {
        const long long p = end - lane;
        unsigned f = 2; // before tile 0: an inclusive prefix of 0
        A v = (A)0;
        if (p >= 0)
            f = st.wait((size_t)p, &v);
        const unsigned long long inclusive = __ballot(f == 2);
        const int nearest = inclusive ? __ffsll((long long)inclusive) - 1 : warpSize;
        A mine = lane <= nearest ? v : (A)0;
        for (int o = warpSize / 2; o > 0; o /= 2)
            mine += __shfl_xor(mine, o);
        prefix += mine;
        if (inclusive)
            break;
    }
    if (lane == 0)
        st.publish(tile, 2u, prefix + total);
    return prefix;
}

// The tile passes through shared memory both ways, so global loads and
// stores are whole 16-byte vectors of consecutive threads (coalesced)
// while each thread scans 4 consecutive vectors of its own.
template <typename T>
__device__ void hkr_cumsum(const T *x, T *out, size_t n, unsigned *state,
                           typename hkr_scan_t<T>::A *part, int exclusive)
{
    typedef typename hkr_scan_t<T>::A A;
    const int W = 16 / sizeof(T), ITEMS = 4 * W;
    extern __shared__ double hkr_sh[];
    unsigned long long *ticket = (unsigned long long *)(void *)hkr_sh;
    A *prefix_sh = (A *)(void *)(hkr_sh + 1), *warp_sums = (A *)(void *)(hkr_sh + 2);
    hkr_vec<T> *stage = (hkr_vec<T> *)(void *)(hkr_sh + 2 + 64);
    if (threadIdx.x == 0)
        *ticket = atomicAdd(&state[0], 1u);
    __syncthreads();
    const size_t tile = (size_t)*ticket;
    const size_t tile_first = tile * blockDim.x * ITEMS, first = tile_first + (size_t)threadIdx.x * ITEMS;
    const bool whole = tile_first + (size_t)blockDim.x * ITEMS <= n &&
                       (((unsigned long long)x | (unsigned long long)out) & 15) == 0;
    A v[ITEMS];
    if (whole) {
        const hkr_vec<T> *xv = (const hkr_vec<T> *)(x + tile_first);
#pragma unroll
        for (int k = 0; k < 4; k++)
            stage[threadIdx.x + k * blockDim.x] = xv[threadIdx.x + k * blockDim.x];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 4; k++) {
            hkr_vec<T> e = stage[threadIdx.x * 4 + k];
#pragma unroll
            for (int j = 0; j < W; j++)
                v[k * W + j] = (A)hkr_up(e.v[j]);
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            v[k] = first + k < n ? (A)hkr_up(x[first + k]) : (A)0;
    }
#pragma unroll
    for (int k = 1; k < ITEMS; k++)
        v[k] += v[k - 1];
    // the block's exclusive scan of the threads' totals
    const A total = v[ITEMS - 1];
    const unsigned lane = threadIdx.x % warpSize, w = threadIdx.x / warpSize;
    const unsigned nwarps = (blockDim.x + warpSize - 1) / warpSize;
    A incl = hkr_warp_scan(total);
    if (lane == (unsigned)warpSize - 1 || threadIdx.x == blockDim.x - 1)
        warp_sums[w] = incl;
    __syncthreads();
    if (w == 0) {
        A s = lane < nwarps ? warp_sums[lane] : (A)0;
        s = hkr_warp_scan(s);
        if (lane < nwarps)
            warp_sums[lane] = s;
    }
    __syncthreads();
    if (w == 0) {
        A prefix = hkr_look_back(state, part, tile, warp_sums[nwarps - 1]);
        if (lane == 0)
            *prefix_sh = prefix;
    }
    __syncthreads();
    const A run = *prefix_sh + (w ? warp_sums[w - 1] : (A)0) + incl - total;
    if (whole) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            hkr_vec<T> e;
#pragma unroll
            for (int j = 0; j < W; j++) {
                int i = k * W + j;
                e.v[j] = hkr_down((const T *)0, run + (exclusive ? (i ? v[i - 1] : (A)0) : v[i]));
            }
            stage[threadIdx.x * 4 + k] = e;
        }
        __syncthreads();
        hkr_vec<T> *ov = (hkr_vec<T> *)(out + tile_first);
#pragma unroll
        for (int k = 0; k < 4; k++)
            ov[threadIdx.x + k * blockDim.x] = stage[threadIdx.x + k * blockDim.x];
    } else {
        for (int i = 0; i < ITEMS && first + i < n; i++)
            out[first + i] = hkr_down((const T *)0, run + (exclusive ? (i ? v[i - 1] : (A)0) : v[i]));
    }
}

#define HKR_CUMSUM(T, name, A)                                                                 \
    extern "C" __global__ void cumsum_##name(const T *x, T *out, size_t n, unsigned *state,   \
                                             A *part, int exclusive)                           \
    {                                                                                          \
        hkr_cumsum(x, out, n, state, part, exclusive);                                         \
    }

HKR_CUMSUM(float, f32, float)
HKR_CUMSUM(double, f64, double)
HKR_CUMSUM(__half, f16, float)
HKR_CUMSUM(__hip_bfloat16, bf16, float)
HKR_CUMSUM(int, i32, unsigned)
HKR_CUMSUM(unsigned, u32, unsigned)
HKR_CUMSUM(long long, i64, unsigned long long)

// ---------------------------------------------------------------------------
// Whole-buffer reductions in one launch: every block folds a grid-strided
// share of x (four 16-byte loads in flight per thread; a block of one
// thread, the CPU backend's shape, a contiguous share of at most 2^31 - 1
// elements), writes its partial
// (as double, exact for every type here, and its index), and the block
// that finishes last (an atomic count) folds the partials in index order
// of blocks, so the result does not depend on which block ends when.
//
//   OP_all_T(const T *x, R *out, size_t n, double *part, long long *part_i,
//            unsigned *done)        out[0]; part, part_i: gridDim.x each;
//                                   done: one zero. Shared: 16 * blockDim.x + 16.

template <typename F, typename A, typename T>
__device__ inline void hkr_fold_vec(hkr_acc<A> &a, const hkr_vec<T> &e, size_t v)
{
    const int W = 16 / sizeof(T);
#pragma unroll
    for (int k = 0; k < W; k++) {
        hkr_acc<A> p = {(A)hkr_up(e.v[k]), (long long)(v * W + k)};
        a = F::f(a, p);
    }
}

// The fold of the whole of x, in *r of the thread that writes it (returns
// true there: thread 0 of the last block).
template <typename F, typename A, typename T>
__device__ bool hkr_all(const T *x, size_t n, double *part, long long *part_i, unsigned *done,
                        hkr_acc<A> *r)
{
    extern __shared__ double hkr_sh[];
    const int W = 16 / sizeof(T);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x, first_scalar = 0;
    hkr_acc<A> a = F::template id<A>();
    if (blockDim.x == 1) {
        // a block of one thread (the CPU backend's shape): a contiguous
        // share of whole vectors, folded as a row
        const size_t nv = n / W, lo = nv * blockIdx.x / gridDim.x, hi = nv * (blockIdx.x + 1) / gridDim.x;
        const bool last = blockIdx.x == gridDim.x - 1;
        const size_t len = (hi - lo) * W + (last ? n - nv * W : 0); // < 2^31: the op's grid
        if (len > 0) {
            a = hkr_fold<F, A>(x + lo * W, (int)len, hkr_ident());
            a.i += (long long)(lo * W);
        }
        v = n; // nothing left for the loops below
        first_scalar = n;
    } else if (((unsigned long long)x & 15) == 0) {
        const hkr_vec<T> *xv = (const hkr_vec<T> *)x;
        const size_t nv = n / W;
        for (; v + 3 * stride < nv; v += 4 * stride) {
            hkr_vec<T> e0 = xv[v], e1 = xv[v + stride], e2 = xv[v + 2 * stride], e3 = xv[v + 3 * stride];
            hkr_fold_vec<F>(a, e0, v);
            hkr_fold_vec<F>(a, e1, v + stride);
            hkr_fold_vec<F>(a, e2, v + 2 * stride);
            hkr_fold_vec<F>(a, e3, v + 3 * stride);
        }
        for (; v < nv; v += stride)
            hkr_fold_vec<F>(a, xv[v], v);
        first_scalar = nv * W;
    }
    for (size_t c = first_scalar + (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += stride) {
        hkr_acc<A> p = {(A)hkr_up(x[c]), (long long)c};
        a = F::f(a, p);
    }
    a = hkr_block<F>(a);
    unsigned *last = (unsigned *)(void *)(hkr_sh + 2 * blockDim.x);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = (double)a.v;
        part_i[blockIdx.x] = a.i;
        __threadfence();
        *last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!*last)
        return false;
    __threadfence();
    const volatile double *pv = part;
    const volatile long long *pi = part_i;
    hkr_acc<A> b = F::template id<A>();
    for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) {
        hkr_acc<A> p = {(A)pv[i], pi[i]};
        b = F::f(b, p);
    }
    *r = hkr_block<F>(b);
    return threadIdx.x == 0;
}

#define HKR_ALL_VALUE(T, name, op, F, A, scale)                                               \
    extern "C" __global__ void op##_all_##name(const T *x, T *out, size_t n, double *part,     \
                                               long long *part_i, unsigned *done)              \
    {                                                                                          \
        hkr_acc<A> r;                                                                          \
        if (hkr_all<F, A>(x, n, part, part_i, done, &r))                                       \
            out[0] = hkr_down((const T *)0, scale);                                            \
    }
#define HKR_ALL_INDEX(T, name, op, F)                                                          \
    extern "C" __global__ void op##_all_##name(const T *x, long long *out, size_t n,           \
                                               double *part, long long *part_i,                \
                                               unsigned *done)                                 \
    {                                                                                          \
        hkr_acc<hkr_t<T>::A> r;                                                                \
        if (hkr_all<F, hkr_t<T>::A>(x, n, part, part_i, done, &r))                             \
            out[0] = r.i;                                                                      \
    }
#define HKR_ALL(T, name)                                                                       \
    HKR_ALL_VALUE(T, name, sum, hkr_sum, hkr_sumt<T>::A, r.v)                                  \
    HKR_ALL_VALUE(T, name, min, hkr_min, hkr_t<T>::A, r.v)                                     \
    HKR_ALL_VALUE(T, name, max, hkr_max, hkr_t<T>::A, r.v)                                     \
    HKR_ALL_INDEX(T, name, argmin, hkr_min)                                                    \
    HKR_ALL_INDEX(T, name, argmax, hkr_max)
#define HKR_MEAN_ALL(T, name) HKR_ALL_VALUE(T, name, mean, hkr_sum, hkr_t<T>::A, r.v / (hkr_t<T>::A)n)

HKR_ALL(float, f32)
HKR_ALL(double, f64)
HKR_ALL(__half, f16)
HKR_ALL(__hip_bfloat16, bf16)
HKR_ALL(int, i32)
HKR_ALL(unsigned, u32)
HKR_MEAN_ALL(float, f32)
HKR_MEAN_ALL(double, f64)
HKR_MEAN_ALL(__half, f16)
HKR_MEAN_ALL(__hip_bfloat16, bf16)
