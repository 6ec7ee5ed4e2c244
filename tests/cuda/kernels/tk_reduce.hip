#include <hip/hip_runtime.h>
extern "C" __global__ void block_sum(const float *x, float *out, unsigned n) {
  extern __shared__ float partial[];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + tid;
  float v = 0.0f;
  if (i < n) v += x[i];
  if (i + blockDim.x < n) v += x[i + blockDim.x];
  partial[tid] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = partial[0];
}
__device__ float warp_reduce(float v) {
  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_down(v, off);
  return v;
}
extern "C" __global__ void warp_sum(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  v = warp_reduce(v);
  if ((threadIdx.x % warpSize) == 0) out[i / warpSize] = v;
}
