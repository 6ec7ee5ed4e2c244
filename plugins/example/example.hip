// The example family's kernels (HIP). The Makefile turns this file into
// example_hip.h, a C string that example.c hands to hipkit, which compiles
// it the first time one of its kernels is used.
#include <hip/hip_runtime.h>

// y = a * x + b over n elements, with a grid-stride loop: the 1-D geometry
// rule caps the number of blocks, so one thread may do several elements.
extern "C" __global__ void scale_add(const float *x, float *y, float a, float b, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = a * x[i] + b;
}
