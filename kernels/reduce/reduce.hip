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
struct hkr_sum {
    template <typename A> __device__ static hkr_acc<A> id() { hkr_acc<A> r = {(A)0, 0}; return r; }
    template <typename A> __device__ static hkr_acc<A> f(hkr_acc<A> a, hkr_acc<A> b) { a.v = a.v + b.v; return a; }
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
        const hkr_vec<T> *rv = (const hkr_vec<T> *)row;
        const int nv = cols / W;
        for (int v = threadIdx.x; v < nv; v += blockDim.x) {
            hkr_vec<T> e = rv[v];
#pragma unroll
            for (int k = 0; k < W; k++) {
                hkr_acc<A> p = {(A)g(hkr_up(e.v[k])), (long long)v * W + k};
                a = F::f(a, p);
            }
        }
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

template <typename T> __device__ void hkr_softmax(const T *x, T *out, int cols, bool log_form)
{
    typedef typename hkr_t<T>::A A;
    const size_t base = (size_t)blockIdx.x * cols;
    const T *row = x + base;
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
