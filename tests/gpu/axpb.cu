// A CUDA source built ahead with nvcc for an older architecture (sm_80), so
// tests/gpu/test_load.lua can check the mismatch message on newer GPUs.
extern "C" __global__ void axpb(float a, const float *x, float b, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b;
}
