// affine: y[i] = a * x[i] + b over contiguous x and y (which may be the
// same buffer). f16 and bf16 compute in float and round once; f64 in double.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

extern "C" __global__ void affine_f32(const float *x, float *y, float a, float b, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float r = a * (float)x[i] + b;
        y[i] = r;
    }
}

extern "C" __global__ void affine_f64(const double *x, double *y, double a, double b, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double r = a * (double)x[i] + b;
        y[i] = r;
    }
}

extern "C" __global__ void affine_f16(const __half *x, __half *y, float a, float b, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float r = a * (float)__half2float(x[i]) + b;
        y[i] = __float2half(r);
    }
}

extern "C" __global__ void affine_bf16(const __hip_bfloat16 *x, __hip_bfloat16 *y, float a, float b, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float r = a * (float)__bfloat162float(x[i]) + b;
        y[i] = __float2bfloat16(r);
    }
}
