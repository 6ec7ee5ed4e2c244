#include <hip/hip_runtime.h>
extern "C" __global__ void square_plus(int *v, int add, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * v[i] + add;
}
