// binary: c = a OP b, elementwise, for OP in add sub mul div minimum maximum.
//
// Two forms per op and element type:
//   OP_T(const T *a, const T *b, T *c, size_t n)
//       contiguous a, b, c. When a, b and c are 16-byte aligned the kernel
//       moves 16 bytes at a time (float4 for f32, 8 halves for f16/bf16, ...)
//       and finishes the n % (16 / sizeof(T)) tail element by element;
//       otherwise it runs the scalar loop.
//   OP_T_strided(size_t numel, size_t num_dims, const size_t *info,
//                const T *a, const T *b, T *c)
//       info = dims[num_dims], a's strides[num_dims], b's strides[num_dims]
//       (in elements, a stride 0 broadcasts); c is contiguous with numel
//       elements. info NULL means a and b are contiguous. An operand whose
//       strides are the contiguous ones is read linearly.
// Both use grid-stride loops, so any grid covers any count.
//
// Semantics: f16 and bf16 compute in f32 and round once; f32 in f32, f64 in
// f64. Integer add, sub and mul wrap (two's complement); integer div
// truncates toward zero, and division by zero (or INT_MIN / -1) is left to
// the hardware: undefined result on a GPU, a failed launch (SIGFPE) on the
// CPU backend. minimum/maximum return NaN when either operand is NaN.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

// Storage type -> compute type and back.
__device__ inline float hkb_up(__half x) { return __half2float(x); }
__device__ inline float hkb_up(__hip_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ inline T hkb_up(T x) { return x; }
__device__ inline __half hkb_down(const __half *, float r) { return __float2half(r); }
__device__ inline __hip_bfloat16 hkb_down(const __hip_bfloat16 *, float r) { return __float2bfloat16(r); }
template <typename T> __device__ inline T hkb_down(const T *, T r) { return r; }

// Wrapping signed arithmetic (through the unsigned type: no UB).
__device__ inline int hkb_wadd(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ inline int hkb_wsub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ inline int hkb_wmul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ inline long long hkb_wadd(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }
__device__ inline long long hkb_wsub(long long a, long long b) { return (long long)((unsigned long long)a - (unsigned long long)b); }
__device__ inline long long hkb_wmul(long long a, long long b) { return (long long)((unsigned long long)a * (unsigned long long)b); }
template <typename T> __device__ inline T hkb_wadd(T a, T b) { return (T)(a + b); }
template <typename T> __device__ inline T hkb_wsub(T a, T b) { return (T)(a - b); }
template <typename T> __device__ inline T hkb_wmul(T a, T b) { return (T)(a * b); }

// NaN-propagating min/max; for integers the NaN tests fold away.
template <typename T> __device__ inline T hkb_min(T a, T b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
template <typename T> __device__ inline T hkb_max(T a, T b) { return a != a ? a : b != b ? b : (b > a ? b : a); }

struct hkb_add { template <typename T> __device__ static T f(T a, T b) { return hkb_wadd(a, b); } };
struct hkb_sub { template <typename T> __device__ static T f(T a, T b) { return hkb_wsub(a, b); } };
struct hkb_mul { template <typename T> __device__ static T f(T a, T b) { return hkb_wmul(a, b); } };
struct hkb_div { template <typename T> __device__ static T f(T a, T b) { return (T)(a / b); } };
struct hkb_minimum { template <typename T> __device__ static T f(T a, T b) { return hkb_min(a, b); } };
struct hkb_maximum { template <typename T> __device__ static T f(T a, T b) { return hkb_max(a, b); } };

template <typename Op, typename T> __device__ inline T hkb_apply(T a, T b)
{
    return hkb_down((const T *)0, Op::f(hkb_up(a), hkb_up(b)));
}

// 16 bytes of T, loaded and stored as one vector.
template <typename T> struct __align__(16) hkb_vec { T v[16 / sizeof(T)]; };

template <typename Op, typename T>
__device__ inline void hkb_contiguous(const T *a, const T *b, T *c, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t start = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t done = 0;
    if ((((unsigned long long)a | (unsigned long long)b | (unsigned long long)c) & 15) == 0) {
        const int W = 16 / sizeof(T);
        const size_t nv = n / W;
        const hkb_vec<T> *av = (const hkb_vec<T> *)a, *bv = (const hkb_vec<T> *)b;
        hkb_vec<T> *cv = (hkb_vec<T> *)c;
        // each block takes chunks of 4 * blockDim.x consecutive vectors
        // (thread t: t, t + blockDim.x, ...), all loads before any store
        // (a store may alias them); a grid as large as the data walks it
        // once, as one front
        const size_t chunk = 4 * (size_t)blockDim.x;
        for (size_t base = (size_t)blockIdx.x * chunk + threadIdx.x; base < nv; base += (size_t)gridDim.x * chunk) {
            hkb_vec<T> x[4], y[4], z;
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (base + u * blockDim.x < nv) {
                    x[u] = av[base + u * blockDim.x];
                    y[u] = bv[base + u * blockDim.x];
                }
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (base + u * blockDim.x < nv) {
#pragma unroll
                    for (int k = 0; k < W; k++)
                        z.v[k] = hkb_apply<Op>(x[u].v[k], y[u].v[k]);
                    cv[base + u * blockDim.x] = z;
                }
        }
        done = nv * W;
    }
    for (size_t i = done + start; i < n; i += stride)
        c[i] = hkb_apply<Op>(a[i], b[i]);
}

// Whether strides are those of a contiguous (row-major) tensor of dims.
__device__ inline bool hkb_is_contiguous(size_t nd, const size_t *dims, const size_t *strides)
{
    size_t want = 1;
    for (size_t d = nd; d-- > 0;) {
        if (dims[d] != 1 && strides[d] != want)
            return false;
        want *= dims[d];
    }
    return true;
}

// Element offset of linear (row-major) index i.
__device__ inline size_t hkb_offset(size_t i, size_t nd, const size_t *dims, const size_t *strides)
{
    size_t off = 0;
    for (size_t d = nd; d-- > 0;) {
        off += (i % dims[d]) * strides[d];
        i /= dims[d];
    }
    return off;
}

template <typename Op, typename T>
__device__ inline void hkb_strided(size_t numel, size_t nd, const size_t *info, const T *a,
                                   const T *b, T *c)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t start = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t *dims = info, *as = info + nd, *bs = info + 2 * nd;
    const bool ac = !info || hkb_is_contiguous(nd, dims, as);
    const bool bc = !info || hkb_is_contiguous(nd, dims, bs);
    for (size_t i = start; i < numel; i += stride) {
        size_t ia = ac ? i : hkb_offset(i, nd, dims, as);
        size_t ib = bc ? i : hkb_offset(i, nd, dims, bs);
        c[i] = hkb_apply<Op>(a[ia], b[ib]);
    }
}

// The kernels, written out: the CPU backend finds kernels by scanning the source.

// add
extern "C" __global__ void add_f32(const float *a, const float *b, float *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *a, const float *b, float *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void add_f16(const __half *a, const __half *b, __half *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *a, const __half *b, __half *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void add_bf16(const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void add_f64(const double *a, const double *b, double *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *a, const double *b, double *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void add_i32(const int *a, const int *b, int *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_i32_strided(size_t numel, size_t num_dims, const size_t *info, const int *a, const int *b, int *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void add_i64(const long long *a, const long long *b, long long *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_i64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *a, const long long *b, long long *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void add_u8(const unsigned char *a, const unsigned char *b, unsigned char *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *a, const unsigned char *b, unsigned char *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void add_u32(const unsigned int *a, const unsigned int *b, unsigned int *c, size_t n)
{ hkb_contiguous<hkb_add>(a, b, c, n); }
extern "C" __global__ void add_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *a, const unsigned int *b, unsigned int *c)
{ hkb_strided<hkb_add>(numel, num_dims, info, a, b, c); }

// sub
extern "C" __global__ void sub_f32(const float *a, const float *b, float *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *a, const float *b, float *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void sub_f16(const __half *a, const __half *b, __half *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *a, const __half *b, __half *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void sub_bf16(const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void sub_f64(const double *a, const double *b, double *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *a, const double *b, double *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void sub_i32(const int *a, const int *b, int *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_i32_strided(size_t numel, size_t num_dims, const size_t *info, const int *a, const int *b, int *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void sub_i64(const long long *a, const long long *b, long long *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_i64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *a, const long long *b, long long *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void sub_u8(const unsigned char *a, const unsigned char *b, unsigned char *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *a, const unsigned char *b, unsigned char *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void sub_u32(const unsigned int *a, const unsigned int *b, unsigned int *c, size_t n)
{ hkb_contiguous<hkb_sub>(a, b, c, n); }
extern "C" __global__ void sub_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *a, const unsigned int *b, unsigned int *c)
{ hkb_strided<hkb_sub>(numel, num_dims, info, a, b, c); }

// mul
extern "C" __global__ void mul_f32(const float *a, const float *b, float *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *a, const float *b, float *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void mul_f16(const __half *a, const __half *b, __half *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *a, const __half *b, __half *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void mul_bf16(const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void mul_f64(const double *a, const double *b, double *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *a, const double *b, double *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void mul_i32(const int *a, const int *b, int *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_i32_strided(size_t numel, size_t num_dims, const size_t *info, const int *a, const int *b, int *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void mul_i64(const long long *a, const long long *b, long long *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_i64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *a, const long long *b, long long *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void mul_u8(const unsigned char *a, const unsigned char *b, unsigned char *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *a, const unsigned char *b, unsigned char *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void mul_u32(const unsigned int *a, const unsigned int *b, unsigned int *c, size_t n)
{ hkb_contiguous<hkb_mul>(a, b, c, n); }
extern "C" __global__ void mul_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *a, const unsigned int *b, unsigned int *c)
{ hkb_strided<hkb_mul>(numel, num_dims, info, a, b, c); }

// div
extern "C" __global__ void div_f32(const float *a, const float *b, float *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *a, const float *b, float *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void div_f16(const __half *a, const __half *b, __half *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *a, const __half *b, __half *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void div_bf16(const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void div_f64(const double *a, const double *b, double *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *a, const double *b, double *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void div_i32(const int *a, const int *b, int *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_i32_strided(size_t numel, size_t num_dims, const size_t *info, const int *a, const int *b, int *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void div_i64(const long long *a, const long long *b, long long *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_i64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *a, const long long *b, long long *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void div_u8(const unsigned char *a, const unsigned char *b, unsigned char *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *a, const unsigned char *b, unsigned char *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void div_u32(const unsigned int *a, const unsigned int *b, unsigned int *c, size_t n)
{ hkb_contiguous<hkb_div>(a, b, c, n); }
extern "C" __global__ void div_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *a, const unsigned int *b, unsigned int *c)
{ hkb_strided<hkb_div>(numel, num_dims, info, a, b, c); }

// minimum
extern "C" __global__ void minimum_f32(const float *a, const float *b, float *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *a, const float *b, float *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void minimum_f16(const __half *a, const __half *b, __half *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *a, const __half *b, __half *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void minimum_bf16(const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void minimum_f64(const double *a, const double *b, double *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *a, const double *b, double *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void minimum_i32(const int *a, const int *b, int *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_i32_strided(size_t numel, size_t num_dims, const size_t *info, const int *a, const int *b, int *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void minimum_i64(const long long *a, const long long *b, long long *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_i64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *a, const long long *b, long long *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void minimum_u8(const unsigned char *a, const unsigned char *b, unsigned char *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *a, const unsigned char *b, unsigned char *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void minimum_u32(const unsigned int *a, const unsigned int *b, unsigned int *c, size_t n)
{ hkb_contiguous<hkb_minimum>(a, b, c, n); }
extern "C" __global__ void minimum_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *a, const unsigned int *b, unsigned int *c)
{ hkb_strided<hkb_minimum>(numel, num_dims, info, a, b, c); }

// maximum
extern "C" __global__ void maximum_f32(const float *a, const float *b, float *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *a, const float *b, float *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void maximum_f16(const __half *a, const __half *b, __half *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *a, const __half *b, __half *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void maximum_bf16(const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *a, const __hip_bfloat16 *b, __hip_bfloat16 *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void maximum_f64(const double *a, const double *b, double *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *a, const double *b, double *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void maximum_i32(const int *a, const int *b, int *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_i32_strided(size_t numel, size_t num_dims, const size_t *info, const int *a, const int *b, int *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void maximum_i64(const long long *a, const long long *b, long long *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_i64_strided(size_t numel, size_t num_dims, const size_t *info, const long long *a, const long long *b, long long *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void maximum_u8(const unsigned char *a, const unsigned char *b, unsigned char *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *a, const unsigned char *b, unsigned char *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
extern "C" __global__ void maximum_u32(const unsigned int *a, const unsigned int *b, unsigned int *c, size_t n)
{ hkb_contiguous<hkb_maximum>(a, b, c, n); }
extern "C" __global__ void maximum_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned int *a, const unsigned int *b, unsigned int *c)
{ hkb_strided<hkb_maximum>(numel, num_dims, info, a, b, c); }
