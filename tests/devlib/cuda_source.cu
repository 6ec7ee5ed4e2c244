// A CUDA kernel file as it is (no hipify): CUDA's headers, __half2
// arithmetic, __nv_bfloat16, __shfl_xor_sync with a 32-bit mask and
// __CUDA_ARCH__ checks. tests/devlib/test_devlib.c runs it.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "needs sm_70 or newer"
#endif

#define N 8
#define T float

__device__ __forceinline__ T warp_sum(T v)
{
    for (int o = warpSize / 2; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

// out[0]: the sum of in[0..warpSize) over the warp; out[1]: (1.5, 2)^2 + (1.5, 2)
// in __half2; out[2]: 3.140625 through __nv_bfloat16; out[3]: N; out[4]: the
// arch path (1 on sm_80+, 2 below, 0 where __CUDA_ARCH__ is undefined).
extern "C" __global__ void cuda_source(double *out, const double *in)
{
    T v = (T)in[threadIdx.x];
    T s = warp_sum(v);
    if (threadIdx.x != 0)
        return;
    out[0] = s;
    __half2 h = __floats2half2_rn(1.5f, 2.0f);
    h = h * h + h;
    out[1] = __low2float(h) + 10.0f * __high2float(h);
    __nv_bfloat16 b = __float2bfloat16(3.14159f);
    out[2] = __bfloat162float(b);
    out[3] = N;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    out[4] = 1;
#elif defined(__CUDA_ARCH__)
    out[4] = 2;
#else
    out[4] = 0;
#endif
}
