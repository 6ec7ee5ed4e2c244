// ternary: y = cond ? t : f, elementwise (where), cond being u8 (nonzero is
// true).
//   where_T(const unsigned char *cond, const T *t, const T *f, T *y, size_t n)
//       contiguous operands.
//   where_T_strided(size_t numel, size_t num_dims, const size_t *info,
//                   const unsigned char *cond, const T *t, const T *f, T *y)
//       info = dims[num_dims], then cond's, t's and f's strides[num_dims]
//       (in elements, a stride 0 broadcasts); y is contiguous with numel
//       elements. info NULL means every operand is contiguous. An operand
//       whose strides are the contiguous ones is read linearly.
// Values are copied bit for bit (no arithmetic, so NaNs keep their payload).
// Grid-stride loops, so any grid covers any count.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

template <typename T>
__device__ inline void hkt_where(const unsigned char *cond, const T *t, const T *f, T *y, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = cond[i] ? t[i] : f[i];
}

// Whether strides are those of a contiguous (row-major) tensor of dims.
__device__ inline bool hkt_is_contiguous(size_t nd, const size_t *dims, const size_t *strides)
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
__device__ inline size_t hkt_offset(size_t i, size_t nd, const size_t *dims, const size_t *strides)
{
    size_t off = 0;
    for (size_t d = nd; d-- > 0;) {
        off += (i % dims[d]) * strides[d];
        i /= dims[d];
    }
    return off;
}

template <typename T>
__device__ inline void hkt_where_strided(size_t numel, size_t nd, const size_t *info,
                                         const unsigned char *cond, const T *t, const T *f, T *y)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t *dims = info, *cs = info + nd, *ts = info + 2 * nd, *fs = info + 3 * nd;
    const bool cc = !info || hkt_is_contiguous(nd, dims, cs);
    const bool tc = !info || hkt_is_contiguous(nd, dims, ts);
    const bool fc = !info || hkt_is_contiguous(nd, dims, fs);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += stride) {
        size_t ic = cc ? i : hkt_offset(i, nd, dims, cs);
        if (cond[ic])
            y[i] = t[tc ? i : hkt_offset(i, nd, dims, ts)];
        else
            y[i] = f[fc ? i : hkt_offset(i, nd, dims, fs)];
    }
}

// The kernels, written out: the CPU backend finds kernels by scanning the source.
extern "C" __global__ void where_f32(const unsigned char *cond, const float *t, const float *f, float *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_f32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const float *t, const float *f, float *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
extern "C" __global__ void where_f16(const unsigned char *cond, const __half *t, const __half *f, __half *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_f16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const __half *t, const __half *f, __half *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
extern "C" __global__ void where_bf16(const unsigned char *cond, const __hip_bfloat16 *t, const __hip_bfloat16 *f, __hip_bfloat16 *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_bf16_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const __hip_bfloat16 *t, const __hip_bfloat16 *f, __hip_bfloat16 *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
extern "C" __global__ void where_f64(const unsigned char *cond, const double *t, const double *f, double *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_f64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const double *t, const double *f, double *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
extern "C" __global__ void where_i32(const unsigned char *cond, const int *t, const int *f, int *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_i32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const int *t, const int *f, int *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
extern "C" __global__ void where_i64(const unsigned char *cond, const long long *t, const long long *f, long long *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_i64_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const long long *t, const long long *f, long long *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
extern "C" __global__ void where_u8(const unsigned char *cond, const unsigned char *t, const unsigned char *f, unsigned char *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_u8_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const unsigned char *t, const unsigned char *f, unsigned char *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
extern "C" __global__ void where_u32(const unsigned char *cond, const unsigned int *t, const unsigned int *f, unsigned int *y, size_t n)
{ hkt_where(cond, t, f, y, n); }
extern "C" __global__ void where_u32_strided(size_t numel, size_t num_dims, const size_t *info, const unsigned char *cond, const unsigned int *t, const unsigned int *f, unsigned int *y)
{ hkt_where_strided(numel, num_dims, info, cond, t, f, y); }
