// What real kernels use beyond HIP 5.2's list: HIP's __half conversion
// rules in overload resolution, atomicAdd on __half, __hmax/__hmin/
// __hmax_nan, bfloat16 math, normcdf. test_devlib_funcs runs it and checks
// the values in the comments.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

__device__ float maxk(float a, float b) { return a > b ? a : b; }
__device__ double maxk(double a, double b) { return a > b ? a : b; }
__device__ int maxo(int a, int b) { return a > b ? a : b; }
__device__ unsigned maxo(unsigned a, unsigned b) { return a > b ? a : b; }
__device__ long long maxo(long long a, long long b) { return a > b ? a : b; }
__device__ float maxo(float a, float b) { return a > b ? a : b; }
__device__ double maxo(double a, double b) { return a > b ? a : b; }

// in = {1.5, 2.25, 3.5, 4}; one block of 64 threads
__global__ void half_extras(double *out, const double *in)
{
    __shared__ __half acc;
    if (threadIdx.x == 0)
        acc = __float2half(0.0f);
    __syncthreads();
    atomicAdd(&acc, __float2half(0.5f));
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    __half h = __float2half((float)in[0]);
    float f = (float)in[1];
    double d = in[2];
    int i = (int)in[3];
    __half qnan = __float2half(nanf(""));
    out[0] = maxk(h, f); // 2.25: __half -> float, the float overload
    out[1] = maxk(f, h); // 2.25
#ifndef __HIPKIT_CUDA__
    out[2] = maxk(h, d); // 3.5: HIP's __half converts to double exactly
    out[3] = maxo(h, d); // 3.5
#else
    // CUDA's __half converts to float only: the double overloads are a
    // float -> double promotion away, as far as the float ones, ambiguous
    out[2] = maxk((double)__half2float(h), d);
    out[3] = maxo((double)__half2float(h), d);
#endif
    out[4] = maxo(h, i); // 4: the int overload
    out[5] = __half2float(acc); // 32: 64 threads added 0.5
    out[6] = __half2float(__hmax(h, __float2half(f))); // 2.25
    out[7] = __half2float(__hmin(h, __float2half(f))); // 1.5
    out[8] = __half2float(__hmax_nan(h, qnan)); // NaN
    out[9] = __half2float(__hmax(h, qnan)); // 1.5: NaN ignored
    out[10] = __bfloat162float(hsqrt(__float2bfloat16(f))); // 1.5
    out[11] = __bfloat162float(hexp(__float2bfloat16(0.0f))); // 1
    out[12] = normcdf(0.0); // 0.5
    out[13] = normcdff(1.0f); // 0.841344746
}
