// cast: y = (To)x elementwise between f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16
// u32 u64, every ordered pair of distinct types:
//
//   cast_FROM_TO(const FROM *x, TO *y, size_t n)
//   cast_FROM_TO_strided(size_t numel, size_t num_dims, const size_t *info,
//                        const FROM *x, TO *y)
//       candle's strided form: info holds dims[num_dims] then x's
//       strides[num_dims] (elements); y is contiguous (row-major over dims);
//       info == NULL or a row-major layout takes the contiguous path.
//
// Semantics:
// - to a float type (f16 bf16 f32 f64): rounded once to nearest even, from
//   any source (f64 -> f16/bf16 directly, not through f32; 32- and 64-bit
//   integers -> bf16 exactly or through a round-to-odd double, which keeps
//   the single rounding). Overflow gives infinity, NaN stays NaN.
// - float -> integer: truncation toward zero as in C; where C leaves it
//   undefined this kernel defines it: values beyond the range saturate to
//   the type's minimum or maximum (infinities too) and NaN gives 0.
// - integer -> integer: as C on two's complement: the value modulo 2^bits
//   of the target (e.g. 300 -> u8 is 44, -1 -> u32 is 4294967295).
// Grid-stride loops, so any grid covers any n.
//
// The kernels are one line each, below the helpers, because the CPU backend
// finds kernels by scanning the source text (no macro-made kernels).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

// Storage to value: f16/bf16 widen to float (exact); the others stay.
template <typename T>
static __device__ __forceinline__ T hk_ld(T v) { return v; }
static __device__ __forceinline__ float hk_ld(__half v) { return __half2float(v); }
static __device__ __forceinline__ float hk_ld(__hip_bfloat16 v) { return __bfloat162float(v); }

// An unsigned 64-bit magnitude as a double rounded to odd (truncated to 53
// bits with the lowest kept bit set if anything was dropped): a later
// rounding to 24 or fewer bits then rounds as if from the exact value.
static __device__ __forceinline__ double hk_u64_odd(unsigned long long m)
{
    double scale = 1.0;
    int sticky = 0;
    while (m >> 53) {
        sticky |= (int)(m & 1);
        m >>= 1;
        scale *= 2.0;
    }
    return (double)(m | (unsigned long long)sticky) * scale;
}
static __device__ __forceinline__ double hk_i64_odd(long long v)
{
    return v < 0 ? -hk_u64_odd(0ull - (unsigned long long)v) : hk_u64_odd((unsigned long long)v);
}

// hk_cv<To>::go(v): v is float, double or an integer type.
template <typename To>
struct hk_cv;

template <>
struct hk_cv<float> {
    template <typename V>
    static __device__ __forceinline__ float go(V v) { return (float)v; } // C: nearest even
};
template <>
struct hk_cv<double> {
    template <typename V>
    static __device__ __forceinline__ double go(V v) { return (double)v; }
};
template <>
struct hk_cv<__half> {
    static __device__ __forceinline__ __half go(float v) { return __float2half(v); }
    static __device__ __forceinline__ __half go(double v) { return __double2half(v); }
    // |integers| past 65520 round to infinity: clamp to 65536 first, then
    // every value is exact in float.
    template <typename I>
    static __device__ __forceinline__ __half go(I v)
    {
        float f = v > (I)0 ? ((unsigned long long)v > 65536ULL ? 65536.0f : (float)v)
                           : ((long long)v < -65536LL ? -65536.0f : (float)v);
        return __float2half(f);
    }
};
template <>
struct hk_cv<__hip_bfloat16> {
    static __device__ __forceinline__ __hip_bfloat16 go(float v) { return __float2bfloat16(v); }
    static __device__ __forceinline__ __hip_bfloat16 go(double v) { return __double2bfloat16(v); }
    static __device__ __forceinline__ __hip_bfloat16 go(signed char v) { return __float2bfloat16((float)v); }
    static __device__ __forceinline__ __hip_bfloat16 go(short v) { return __float2bfloat16((float)v); }
    static __device__ __forceinline__ __hip_bfloat16 go(unsigned char v) { return __float2bfloat16((float)v); }
    static __device__ __forceinline__ __hip_bfloat16 go(unsigned short v) { return __float2bfloat16((float)v); }
    static __device__ __forceinline__ __hip_bfloat16 go(int v) { return __double2bfloat16((double)v); }
    static __device__ __forceinline__ __hip_bfloat16 go(unsigned int v) { return __double2bfloat16((double)v); }
    static __device__ __forceinline__ __hip_bfloat16 go(long long v) { return __double2bfloat16(hk_i64_odd(v)); }
    static __device__ __forceinline__ __hip_bfloat16 go(unsigned long long v) { return __double2bfloat16(hk_u64_odd(v)); }
};

// To an integer type I with range [lo, hi]: flo and fhi are lo and hi + 1
// (powers of two or 0, exact in float and double).
template <typename I, long long LO, unsigned long long HI>
struct hk_cv_int {
    template <typename F>
    static __device__ __forceinline__ I sat(F v)
    {
        const F flo = (F)LO, fhi = (F)HI + (F)1; // HI + 1 is a power of two, exact
        if (v != v)
            return (I)0;
        if (v <= flo)
            return (I)LO;
        if (v >= fhi)
            return (I)HI;
        return (I)v; // in range after truncation toward zero
    }
    static __device__ __forceinline__ I go(float v) { return sat(v); }
    static __device__ __forceinline__ I go(double v) { return sat(v); }
    template <typename J>
    static __device__ __forceinline__ I go(J v) { return (I)v; } // modulo 2^bits
};
template <> struct hk_cv<signed char> : hk_cv_int<signed char, -128LL, 127ULL> {};
template <> struct hk_cv<short> : hk_cv_int<short, -32768LL, 32767ULL> {};
template <> struct hk_cv<int> : hk_cv_int<int, -2147483647LL - 1, 2147483647ULL> {};
template <> struct hk_cv<long long>
    : hk_cv_int<long long, -9223372036854775807LL - 1, 9223372036854775807ULL> {};
template <> struct hk_cv<unsigned char> : hk_cv_int<unsigned char, 0LL, 255ULL> {};
template <> struct hk_cv<unsigned short> : hk_cv_int<unsigned short, 0LL, 65535ULL> {};
template <> struct hk_cv<unsigned int> : hk_cv_int<unsigned int, 0LL, 4294967295ULL> {};
template <> struct hk_cv<unsigned long long>
    : hk_cv_int<unsigned long long, 0LL, 18446744073709551615ULL> {};

// Offset of element i (row-major over dims) in a strided x; info holds dims
// then strides.
static __device__ __forceinline__ size_t hk_strided_offset(size_t i, size_t num_dims,
                                                          const size_t *info)
{
    size_t off = 0;
    for (size_t d = num_dims; d-- > 0;) {
        size_t dim = info[d];
        off += (i % dim) * info[num_dims + d];
        i /= dim;
    }
    return off;
}

// Whether info describes a row-major (contiguous) layout.
static __device__ __forceinline__ bool hk_is_contiguous(size_t num_dims, const size_t *info)
{
    if (!info)
        return true;
    size_t acc = 1;
    for (size_t d = num_dims; d-- > 0;) {
        if (info[d] != 1 && info[num_dims + d] != acc)
            return false;
        acc *= info[d];
    }
    return true;
}

// Four elements per step when both sides are aligned to four elements (at
// most 16 bytes): one wide load and one wide store instead of four narrow
// ones, which is what keeps a cast at memory speed on a GPU.
template <typename T> struct alignas(4 * sizeof(T) < 16 ? 4 * sizeof(T) : 16) hk_quad {
    T v[4];
};

template <typename S, typename D>
static __device__ __forceinline__ void hk_cast(const S *x, D *y, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if ((unsigned long long)x % alignof(hk_quad<S>) == 0 && (unsigned long long)y % alignof(hk_quad<D>) == 0) {
        const hk_quad<S> *xq = (const hk_quad<S> *)x;
        hk_quad<D> *yq = (hk_quad<D> *)y;
        size_t n4 = n / 4;
        // each block takes chunks of 4 * blockDim.x consecutive quads, all
        // loads before any store (a store may alias them)
        const size_t chunk = 4 * (size_t)blockDim.x;
        for (size_t base = (size_t)blockIdx.x * chunk + threadIdx.x; base < n4; base += (size_t)gridDim.x * chunk) {
            hk_quad<S> a[4];
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (base + u * blockDim.x < n4)
                    a[u] = xq[base + u * blockDim.x];
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (base + u * blockDim.x < n4) {
                    hk_quad<D> b;
                    for (int k = 0; k < 4; k++)
                        b.v[k] = hk_cv<D>::go(hk_ld(a[u].v[k]));
                    yq[base + u * blockDim.x] = b;
                }
        }
        for (size_t i = n4 * 4 + i0; i < n; i += stride)
            y[i] = hk_cv<D>::go(hk_ld(x[i]));
        return;
    }
    for (size_t i = i0; i < n; i += stride)
        y[i] = hk_cv<D>::go(hk_ld(x[i]));
}

template <typename S, typename D>
static __device__ __forceinline__ void hk_cast_strided(size_t numel, size_t num_dims,
                                                       const size_t *info, const S *x, D *y)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (hk_is_contiguous(num_dims, info)) {
        for (size_t i = i0; i < numel; i += stride)
            y[i] = hk_cv<D>::go(hk_ld(x[i]));
    } else {
        for (size_t i = i0; i < numel; i += stride)
            y[i] = hk_cv<D>::go(hk_ld(x[hk_strided_offset(i, num_dims, info)]));
    }
}

// ------------------------------------------------------------- kernels
// from f16
extern "C" __global__ void cast_f16_bf16(const __half *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_f32(const __half *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_f32_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_f64(const __half *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_f64_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_i8(const __half *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_i8_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_i16(const __half *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_i16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_i32(const __half *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_i32_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_i64(const __half *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_i64_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_u8(const __half *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_u8_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_u16(const __half *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_u16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_u32(const __half *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_u32_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f16_u64(const __half *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f16_u64_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from bf16
extern "C" __global__ void cast_bf16_f16(const __hip_bfloat16 *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_f32(const __hip_bfloat16 *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_f32_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_f64(const __hip_bfloat16 *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_f64_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_i8(const __hip_bfloat16 *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_i8_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_i16(const __hip_bfloat16 *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_i16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_i32(const __hip_bfloat16 *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_i32_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_i64(const __hip_bfloat16 *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_i64_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_u8(const __hip_bfloat16 *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_u8_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_u16(const __hip_bfloat16 *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_u16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_u32(const __hip_bfloat16 *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_u32_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_bf16_u64(const __hip_bfloat16 *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_bf16_u64_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from f32
extern "C" __global__ void cast_f32_f16(const float *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_f16_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_bf16(const float *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_f64(const float *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_f64_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_i8(const float *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_i8_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_i16(const float *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_i16_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_i32(const float *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_i32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_i64(const float *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_i64_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_u8(const float *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_u8_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_u16(const float *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_u16_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_u32(const float *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_u32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f32_u64(const float *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f32_u64_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from f64
extern "C" __global__ void cast_f64_f16(const double *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_f16_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_bf16(const double *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_f32(const double *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_f32_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_i8(const double *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_i8_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_i16(const double *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_i16_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_i32(const double *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_i32_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_i64(const double *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_i64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_u8(const double *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_u8_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_u16(const double *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_u16_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_u32(const double *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_u32_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_f64_u64(const double *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_f64_u64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from i8
extern "C" __global__ void cast_i8_f16(const signed char *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_f16_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_bf16(const signed char *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_f32(const signed char *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_f32_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_f64(const signed char *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_f64_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_i16(const signed char *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_i16_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_i32(const signed char *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_i32_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_i64(const signed char *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_i64_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_u8(const signed char *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_u8_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_u16(const signed char *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_u16_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_u32(const signed char *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_u32_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i8_u64(const signed char *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i8_u64_strided(size_t numel, size_t num_dims, const size_t *info, const signed char *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from i16
extern "C" __global__ void cast_i16_f16(const short *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_f16_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_bf16(const short *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_f32(const short *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_f32_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_f64(const short *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_f64_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_i8(const short *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_i8_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_i32(const short *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_i32_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_i64(const short *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_i64_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_u8(const short *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_u8_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_u16(const short *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_u16_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_u32(const short *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_u32_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i16_u64(const short *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i16_u64_strided(size_t numel, size_t num_dims, const size_t *info, const short *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from i32
extern "C" __global__ void cast_i32_f16(const int *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_f16_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_bf16(const int *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_f32(const int *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_f32_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_f64(const int *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_f64_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_i8(const int *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_i8_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_i16(const int *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_i16_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_i64(const int *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_i64_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_u8(const int *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_u8_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_u16(const int *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_u16_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_u32(const int *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_u32_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i32_u64(const int *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i32_u64_strided(size_t numel, size_t num_dims, const size_t *info, const int *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from i64
extern "C" __global__ void cast_i64_f16(const long long *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_f16_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_bf16(const long long *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_f32(const long long *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_f32_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_f64(const long long *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_f64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_i8(const long long *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_i8_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_i16(const long long *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_i16_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_i32(const long long *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_i32_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_u8(const long long *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_u8_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_u16(const long long *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_u16_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_u32(const long long *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_u32_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_i64_u64(const long long *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_i64_u64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from u8
extern "C" __global__ void cast_u8_f16(const unsigned char *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_f16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_bf16(const unsigned char *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_f32(const unsigned char *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_f32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_f64(const unsigned char *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_f64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_i8(const unsigned char *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_i8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_i16(const unsigned char *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_i16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_i32(const unsigned char *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_i32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_i64(const unsigned char *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_i64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_u16(const unsigned char *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_u16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_u32(const unsigned char *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u8_u64(const unsigned char *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u8_u64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from u16
extern "C" __global__ void cast_u16_f16(const unsigned short *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_f16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_bf16(const unsigned short *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_f32(const unsigned short *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_f32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_f64(const unsigned short *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_f64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_i8(const unsigned short *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_i8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_i16(const unsigned short *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_i16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_i32(const unsigned short *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_i32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_i64(const unsigned short *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_i64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_u8(const unsigned short *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_u32(const unsigned short *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u16_u64(const unsigned short *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u16_u64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned short *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from u32
extern "C" __global__ void cast_u32_f16(const unsigned int *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_f16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_bf16(const unsigned int *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_f32(const unsigned int *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_f32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_f64(const unsigned int *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_f64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_i8(const unsigned int *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_i8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_i16(const unsigned int *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_i16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_i32(const unsigned int *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_i32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_i64(const unsigned int *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_i64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_u8(const unsigned int *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_u16(const unsigned int *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_u16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u32_u64(const unsigned int *x, unsigned long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u32_u64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *x, unsigned long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
// from u64
extern "C" __global__ void cast_u64_f16(const unsigned long long *x, __half *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_f16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, __half *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_bf16(const unsigned long long *x, __hip_bfloat16 *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, __hip_bfloat16 *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_f32(const unsigned long long *x, float *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_f32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, float *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_f64(const unsigned long long *x, double *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_f64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, double *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_i8(const unsigned long long *x, signed char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_i8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, signed char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_i16(const unsigned long long *x, short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_i16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_i32(const unsigned long long *x, int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_i32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_i64(const unsigned long long *x, long long *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_i64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, long long *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_u8(const unsigned long long *x, unsigned char *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, unsigned char *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_u16(const unsigned long long *x, unsigned short *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_u16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, unsigned short *y) { hk_cast_strided(numel, num_dims, info, x, y); }
extern "C" __global__ void cast_u64_u32(const unsigned long long *x, unsigned int *y, size_t n) { hk_cast(x, y, n); }
extern "C" __global__ void cast_u64_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned long long *x, unsigned int *y) { hk_cast_strided(numel, num_dims, info, x, y); }
