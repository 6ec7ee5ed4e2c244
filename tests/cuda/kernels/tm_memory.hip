#include <hip/hip_runtime.h>
extern "C" __global__ void scale_add(float *v, float s, float t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * s + t;
}
extern "C" __global__ void sum_u32(const unsigned *v, unsigned long long *total, unsigned long long n) {
  unsigned long long acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)blockDim.x * gridDim.x)
    acc += v[i];
  atomicAdd(total, acc);
}
extern "C" __global__ void stamp(unsigned *v, unsigned salt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = (unsigned)i * 2654435761u ^ salt;
}
