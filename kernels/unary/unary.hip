// unary: y = op(x) elementwise, for f32, f16, bf16 and f64.
//
//   OP_T(const T *x, T *y, size_t n)             contiguous x and y (x == y is fine)
//   OP_T_strided(size_t numel, size_t num_dims, const size_t *info,
//                const T *x, T *y)               candle's strided form: info holds
//       dims[num_dims] then x's strides[num_dims] (in elements); y is contiguous
//       (row-major over dims). info == NULL, or strides that describe a
//       row-major layout, take the contiguous path.
//
// f16 and bf16 load into float, compute in float and round once to nearest
// even; f64 computes in double. Contiguous f32 uses float4 loads and stores
// when x and y are 16-byte aligned (the last n % 4 elements one by one).
// Every kernel loops with a grid stride, so any grid covers any n.
//
// The kernels are one line each, below the helpers, because the CPU backend
// finds kernels by scanning the source text (no macro-made kernels). To add
// an op: a functor hk_op_NAME with f(float) and f(double), one line per
// dtype here and one entry in plugins/unary/unary.c.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

// ------------------------------------------------------------------ ops
// Each op as f(float) and f(double). gelu (tanh form) is written as
// x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3), which equals
// 0.5 x (1 + tanh u) without its cancellation for negative x; gelu_erf as
// 0.5 x erfc(-x / sqrt 2), equal to 0.5 x (1 + erf(x / sqrt 2)) likewise.
// relu keeps NaN (NaN in, NaN out).
struct hk_op_neg {
    static __device__ __forceinline__ float f(float x) { return -x; }
    static __device__ __forceinline__ double f(double x) { return -x; }
};
struct hk_op_abs {
    static __device__ __forceinline__ float f(float x) { return fabsf(x); }
    static __device__ __forceinline__ double f(double x) { return fabs(x); }
};
struct hk_op_exp {
    static __device__ __forceinline__ float f(float x) { return expf(x); }
    static __device__ __forceinline__ double f(double x) { return exp(x); }
};
struct hk_op_log {
    static __device__ __forceinline__ float f(float x) { return logf(x); }
    static __device__ __forceinline__ double f(double x) { return log(x); }
};
struct hk_op_sqrt {
    static __device__ __forceinline__ float f(float x) { return sqrtf(x); }
    static __device__ __forceinline__ double f(double x) { return sqrt(x); }
};
struct hk_op_rsqrt {
    static __device__ __forceinline__ float f(float x) { return rsqrtf(x); }
    static __device__ __forceinline__ double f(double x) { return rsqrt(x); }
};
struct hk_op_tanh {
    static __device__ __forceinline__ float f(float x) { return tanhf(x); }
    static __device__ __forceinline__ double f(double x) { return tanh(x); }
};
struct hk_op_sin {
    static __device__ __forceinline__ float f(float x) { return sinf(x); }
    static __device__ __forceinline__ double f(double x) { return sin(x); }
};
struct hk_op_cos {
    static __device__ __forceinline__ float f(float x) { return cosf(x); }
    static __device__ __forceinline__ double f(double x) { return cos(x); }
};
struct hk_op_gelu_erf {
    static __device__ __forceinline__ float f(float x)
    {
        return 0.5f * x * erfcf(-0.70710678118654752f * x);
    }
    static __device__ __forceinline__ double f(double x)
    {
        return 0.5 * x * erfc(-0.70710678118654752 * x);
    }
};
struct hk_op_gelu {
    static __device__ __forceinline__ float f(float x)
    {
        float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
        return x / (1.0f + expf(-2.0f * u));
    }
    static __device__ __forceinline__ double f(double x)
    {
        double u = 0.79788456080286536 * (x + 0.044715 * x * x * x);
        return x / (1.0 + exp(-2.0 * u));
    }
};
struct hk_op_relu {
    static __device__ __forceinline__ float f(float x) { return x > 0.0f || x != x ? x : 0.0f; }
    static __device__ __forceinline__ double f(double x) { return x > 0.0 || x != x ? x : 0.0; }
};
struct hk_op_silu {
    static __device__ __forceinline__ float f(float x) { return x / (1.0f + expf(-x)); }
    static __device__ __forceinline__ double f(double x) { return x / (1.0 + exp(-x)); }
};
struct hk_op_sigmoid {
    static __device__ __forceinline__ float f(float x) { return 1.0f / (1.0f + expf(-x)); }
    static __device__ __forceinline__ double f(double x) { return 1.0 / (1.0 + exp(-x)); }
};

// ---------------------------------------------------- loads and stores
// Storage type to compute type and back (f16/bf16 round to nearest even).
static __device__ __forceinline__ float hk_ld(float v) { return v; }
static __device__ __forceinline__ double hk_ld(double v) { return v; }
static __device__ __forceinline__ float hk_ld(__half v) { return __half2float(v); }
static __device__ __forceinline__ float hk_ld(__hip_bfloat16 v) { return __bfloat162float(v); }
static __device__ __forceinline__ void hk_st(float *p, float v) { *p = v; }
static __device__ __forceinline__ void hk_st(double *p, double v) { *p = v; }
static __device__ __forceinline__ void hk_st(__half *p, float v) { *p = __float2half(v); }
static __device__ __forceinline__ void hk_st(__hip_bfloat16 *p, float v) { *p = __float2bfloat16(v); }

// --------------------------------------------------------------- loops
template <typename Op, typename T>
static __device__ __forceinline__ void hk_unary(const T *x, T *y, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        hk_st(&y[i], Op::f(hk_ld(x[i])));
}

// f32: float4 when both pointers are 16-byte aligned, then the tail.
template <typename Op>
static __device__ __forceinline__ void hk_unary_f32(const float *x, float *y, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t head = 0;
    if ((((size_t)x | (size_t)y) & 15) == 0) {
        size_t n4 = n / 4;
        const float4 *x4 = (const float4 *)x;
        float4 *y4 = (float4 *)y;
        // each block takes chunks of 4 * blockDim.x consecutive float4,
        // all loads before any store (a store may alias them)
        const size_t chunk = 4 * (size_t)blockDim.x, t = threadIdx.x;
        for (size_t base = (size_t)blockIdx.x * chunk + t; base < n4; base += (size_t)gridDim.x * chunk) {
            float4 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (base + u * blockDim.x < n4)
                    v[u] = x4[base + u * blockDim.x];
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (base + u * blockDim.x < n4) {
                    v[u].x = Op::f(v[u].x);
                    v[u].y = Op::f(v[u].y);
                    v[u].z = Op::f(v[u].z);
                    v[u].w = Op::f(v[u].w);
                    y4[base + u * blockDim.x] = v[u];
                }
        }
        head = n4 * 4;
    }
    for (size_t i = head + i0; i < n; i += stride)
        y[i] = Op::f(x[i]);
}

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

template <typename Op, typename T>
static __device__ __forceinline__ void hk_unary_strided(size_t numel, size_t num_dims,
                                                        const size_t *info, const T *x, T *y)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (hk_is_contiguous(num_dims, info)) {
        for (size_t i = i0; i < numel; i += stride)
            hk_st(&y[i], Op::f(hk_ld(x[i])));
    } else {
        for (size_t i = i0; i < numel; i += stride)
            hk_st(&y[i], Op::f(hk_ld(x[hk_strided_offset(i, num_dims, info)])));
    }
}

// ------------------------------------------------------------- kernels
// neg
extern "C" __global__ void neg_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_neg>(x, y, n); }
extern "C" __global__ void neg_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_neg>(numel, num_dims, info, x, y); }
extern "C" __global__ void neg_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_neg>(x, y, n); }
extern "C" __global__ void neg_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_neg>(numel, num_dims, info, x, y); }
extern "C" __global__ void neg_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_neg>(x, y, n); }
extern "C" __global__ void neg_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_neg>(numel, num_dims, info, x, y); }
extern "C" __global__ void neg_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_neg>(x, y, n); }
extern "C" __global__ void neg_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_neg>(numel, num_dims, info, x, y); }
// abs
extern "C" __global__ void abs_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_abs>(x, y, n); }
extern "C" __global__ void abs_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_abs>(numel, num_dims, info, x, y); }
extern "C" __global__ void abs_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_abs>(x, y, n); }
extern "C" __global__ void abs_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_abs>(numel, num_dims, info, x, y); }
extern "C" __global__ void abs_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_abs>(x, y, n); }
extern "C" __global__ void abs_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_abs>(numel, num_dims, info, x, y); }
extern "C" __global__ void abs_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_abs>(x, y, n); }
extern "C" __global__ void abs_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_abs>(numel, num_dims, info, x, y); }
// exp
extern "C" __global__ void exp_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_exp>(x, y, n); }
extern "C" __global__ void exp_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_exp>(numel, num_dims, info, x, y); }
extern "C" __global__ void exp_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_exp>(x, y, n); }
extern "C" __global__ void exp_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_exp>(numel, num_dims, info, x, y); }
extern "C" __global__ void exp_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_exp>(x, y, n); }
extern "C" __global__ void exp_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_exp>(numel, num_dims, info, x, y); }
extern "C" __global__ void exp_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_exp>(x, y, n); }
extern "C" __global__ void exp_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_exp>(numel, num_dims, info, x, y); }
// log
extern "C" __global__ void log_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_log>(x, y, n); }
extern "C" __global__ void log_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_log>(numel, num_dims, info, x, y); }
extern "C" __global__ void log_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_log>(x, y, n); }
extern "C" __global__ void log_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_log>(numel, num_dims, info, x, y); }
extern "C" __global__ void log_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_log>(x, y, n); }
extern "C" __global__ void log_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_log>(numel, num_dims, info, x, y); }
extern "C" __global__ void log_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_log>(x, y, n); }
extern "C" __global__ void log_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_log>(numel, num_dims, info, x, y); }
// sqrt
extern "C" __global__ void sqrt_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_sqrt>(x, y, n); }
extern "C" __global__ void sqrt_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_sqrt>(numel, num_dims, info, x, y); }
extern "C" __global__ void sqrt_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_sqrt>(x, y, n); }
extern "C" __global__ void sqrt_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_sqrt>(numel, num_dims, info, x, y); }
extern "C" __global__ void sqrt_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_sqrt>(x, y, n); }
extern "C" __global__ void sqrt_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_sqrt>(numel, num_dims, info, x, y); }
extern "C" __global__ void sqrt_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_sqrt>(x, y, n); }
extern "C" __global__ void sqrt_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_sqrt>(numel, num_dims, info, x, y); }
// rsqrt
extern "C" __global__ void rsqrt_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_rsqrt>(x, y, n); }
extern "C" __global__ void rsqrt_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_rsqrt>(numel, num_dims, info, x, y); }
extern "C" __global__ void rsqrt_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_rsqrt>(x, y, n); }
extern "C" __global__ void rsqrt_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_rsqrt>(numel, num_dims, info, x, y); }
extern "C" __global__ void rsqrt_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_rsqrt>(x, y, n); }
extern "C" __global__ void rsqrt_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_rsqrt>(numel, num_dims, info, x, y); }
extern "C" __global__ void rsqrt_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_rsqrt>(x, y, n); }
extern "C" __global__ void rsqrt_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_rsqrt>(numel, num_dims, info, x, y); }
// tanh
extern "C" __global__ void tanh_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_tanh>(x, y, n); }
extern "C" __global__ void tanh_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_tanh>(numel, num_dims, info, x, y); }
extern "C" __global__ void tanh_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_tanh>(x, y, n); }
extern "C" __global__ void tanh_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_tanh>(numel, num_dims, info, x, y); }
extern "C" __global__ void tanh_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_tanh>(x, y, n); }
extern "C" __global__ void tanh_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_tanh>(numel, num_dims, info, x, y); }
extern "C" __global__ void tanh_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_tanh>(x, y, n); }
extern "C" __global__ void tanh_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_tanh>(numel, num_dims, info, x, y); }
// sin
extern "C" __global__ void sin_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_sin>(x, y, n); }
extern "C" __global__ void sin_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_sin>(numel, num_dims, info, x, y); }
extern "C" __global__ void sin_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_sin>(x, y, n); }
extern "C" __global__ void sin_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_sin>(numel, num_dims, info, x, y); }
extern "C" __global__ void sin_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_sin>(x, y, n); }
extern "C" __global__ void sin_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_sin>(numel, num_dims, info, x, y); }
extern "C" __global__ void sin_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_sin>(x, y, n); }
extern "C" __global__ void sin_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_sin>(numel, num_dims, info, x, y); }
// cos
extern "C" __global__ void cos_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_cos>(x, y, n); }
extern "C" __global__ void cos_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_cos>(numel, num_dims, info, x, y); }
extern "C" __global__ void cos_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_cos>(x, y, n); }
extern "C" __global__ void cos_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_cos>(numel, num_dims, info, x, y); }
extern "C" __global__ void cos_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_cos>(x, y, n); }
extern "C" __global__ void cos_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_cos>(numel, num_dims, info, x, y); }
extern "C" __global__ void cos_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_cos>(x, y, n); }
extern "C" __global__ void cos_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_cos>(numel, num_dims, info, x, y); }
// gelu_erf
extern "C" __global__ void gelu_erf_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_gelu_erf>(x, y, n); }
extern "C" __global__ void gelu_erf_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_gelu_erf>(numel, num_dims, info, x, y); }
extern "C" __global__ void gelu_erf_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_gelu_erf>(x, y, n); }
extern "C" __global__ void gelu_erf_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_gelu_erf>(numel, num_dims, info, x, y); }
extern "C" __global__ void gelu_erf_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_gelu_erf>(x, y, n); }
extern "C" __global__ void gelu_erf_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_gelu_erf>(numel, num_dims, info, x, y); }
extern "C" __global__ void gelu_erf_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_gelu_erf>(x, y, n); }
extern "C" __global__ void gelu_erf_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_gelu_erf>(numel, num_dims, info, x, y); }
// gelu
extern "C" __global__ void gelu_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_gelu>(x, y, n); }
extern "C" __global__ void gelu_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_gelu>(numel, num_dims, info, x, y); }
extern "C" __global__ void gelu_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_gelu>(x, y, n); }
extern "C" __global__ void gelu_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_gelu>(numel, num_dims, info, x, y); }
extern "C" __global__ void gelu_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_gelu>(x, y, n); }
extern "C" __global__ void gelu_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_gelu>(numel, num_dims, info, x, y); }
extern "C" __global__ void gelu_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_gelu>(x, y, n); }
extern "C" __global__ void gelu_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_gelu>(numel, num_dims, info, x, y); }
// relu
extern "C" __global__ void relu_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_relu>(x, y, n); }
extern "C" __global__ void relu_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_relu>(numel, num_dims, info, x, y); }
extern "C" __global__ void relu_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_relu>(x, y, n); }
extern "C" __global__ void relu_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_relu>(numel, num_dims, info, x, y); }
extern "C" __global__ void relu_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_relu>(x, y, n); }
extern "C" __global__ void relu_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_relu>(numel, num_dims, info, x, y); }
extern "C" __global__ void relu_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_relu>(x, y, n); }
extern "C" __global__ void relu_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_relu>(numel, num_dims, info, x, y); }
// silu
extern "C" __global__ void silu_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_silu>(x, y, n); }
extern "C" __global__ void silu_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_silu>(numel, num_dims, info, x, y); }
extern "C" __global__ void silu_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_silu>(x, y, n); }
extern "C" __global__ void silu_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_silu>(numel, num_dims, info, x, y); }
extern "C" __global__ void silu_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_silu>(x, y, n); }
extern "C" __global__ void silu_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_silu>(numel, num_dims, info, x, y); }
extern "C" __global__ void silu_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_silu>(x, y, n); }
extern "C" __global__ void silu_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_silu>(numel, num_dims, info, x, y); }
// sigmoid
extern "C" __global__ void sigmoid_f32(const float *x, float *y, size_t n) { hk_unary_f32<hk_op_sigmoid>(x, y, n); }
extern "C" __global__ void sigmoid_f32_strided(size_t numel, size_t num_dims, const size_t *info, const float *x, float *y) { hk_unary_strided<hk_op_sigmoid>(numel, num_dims, info, x, y); }
extern "C" __global__ void sigmoid_f16(const __half *x, __half *y, size_t n) { hk_unary<hk_op_sigmoid>(x, y, n); }
extern "C" __global__ void sigmoid_f16_strided(size_t numel, size_t num_dims, const size_t *info, const __half *x, __half *y) { hk_unary_strided<hk_op_sigmoid>(numel, num_dims, info, x, y); }
extern "C" __global__ void sigmoid_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, size_t n) { hk_unary<hk_op_sigmoid>(x, y, n); }
extern "C" __global__ void sigmoid_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const __hip_bfloat16 *x, __hip_bfloat16 *y) { hk_unary_strided<hk_op_sigmoid>(numel, num_dims, info, x, y); }
extern "C" __global__ void sigmoid_f64(const double *x, double *y, size_t n) { hk_unary<hk_op_sigmoid>(x, y, n); }
extern "C" __global__ void sigmoid_f64_strided(size_t numel, size_t num_dims, const size_t *info, const double *x, double *y) { hk_unary_strided<hk_op_sigmoid>(numel, num_dims, info, x, y); }
