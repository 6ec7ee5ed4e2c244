#include <hip/hip_runtime.h>
extern "C" __global__ void axpb(float a, const float *x, float b, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
extern "C" __global__ void oob(float *y, int stride) {
  y[(blockIdx.x * blockDim.x + threadIdx.x) * stride] = 1.0f;
}
extern "C" __global__ void checks(int v) {
  assert(v > 0);
}
extern "C" __global__ void divide(int *out, int d) {
  out[0] = 100 / d;
}
