// fill: y[i] = v for every i < n, one kernel per element type. The value
// comes in as the widest type that holds every value of the element type
// (f16 and bf16 take a float and round once). Grid-stride loops, so any
// grid covers any n.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

extern "C" __global__ void fill_f32(float *y, float v, size_t n)
{
    const float x = v;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}

extern "C" __global__ void fill_f64(double *y, double v, size_t n)
{
    const double x = v;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}

extern "C" __global__ void fill_f16(__half *y, float v, size_t n)
{
    const __half x = __float2half(v);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}

extern "C" __global__ void fill_bf16(__hip_bfloat16 *y, float v, size_t n)
{
    const __hip_bfloat16 x = __float2bfloat16(v);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}

extern "C" __global__ void fill_i32(int *y, int v, size_t n)
{
    const int x = v;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}

extern "C" __global__ void fill_i64(long long *y, long long v, size_t n)
{
    const long long x = v;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}

extern "C" __global__ void fill_u8(unsigned char *y, unsigned char v, size_t n)
{
    const unsigned char x = v; // the argument check refuses values past 255
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}

extern "C" __global__ void fill_u32(unsigned int *y, unsigned int v, size_t n)
{
    const unsigned int x = v;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x;
}
