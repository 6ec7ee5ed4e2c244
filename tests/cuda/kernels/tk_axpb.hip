#include <hip/hip_runtime.h>
extern "C" __global__ void axpb(float a, const float *x, float b, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
