#include <hip/hip_runtime.h>
extern "C" __global__ void stamp(unsigned *data, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x)
        data[i] = (unsigned)i * 2654435761u;
}
extern "C" __global__ void gather(const unsigned *data, const unsigned long long *at,
                                  unsigned *out, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) out[i] = data[at[i]];
}
