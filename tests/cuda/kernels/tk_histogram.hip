#include <hip/hip_runtime.h>
extern "C" __global__ void histogram(const unsigned *v, unsigned *bins, int n, int nbins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[v[i] % nbins], 1u);
}
