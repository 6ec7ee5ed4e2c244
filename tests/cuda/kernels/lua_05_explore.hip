#include <hip/hip_runtime.h>
extern "C" __global__ void wave(float *y, float freq, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sinf(freq * i) * expf(-0.002f * i);
}
