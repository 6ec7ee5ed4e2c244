// Fiber kernels for test_host_lang: barriers and warp operations (warp_sum, a
// __device__ helper outside every kernel, makes the whole module run as fibers).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#include <cassert> // after hip_runtime.h: assert must still report through the runtime

extern __shared__ float ns_dyn[]; // namespace-scope dynamic shared memory
__shared__ int ns_static[256];    // namespace-scope static shared memory


extern "C" __global__ void reduce_dyn(const float *in, float *out, int n)
{
    extern __shared__ float sdata[];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    sdata[t] = i < (unsigned)n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void reduce_ns(const float *in, float *out, int n)
{
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    ns_dyn[t] = i < (unsigned)n ? in[i] : 0.0f;
    ns_static[t] = (int)t;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            ns_dyn[t] += ns_dyn[t + s];
            ns_static[t] += ns_static[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        out[2 * blockIdx.x] = ns_dyn[0];
        out[2 * blockIdx.x + 1] = (float)ns_static[0];
    }
}

extern "C" __global__ void reduce_macro(const double *in, double *out, int n)
{
    HIP_DYNAMIC_SHARED(double, sm);
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    sm[t] = i < (unsigned)n ? in[i] : 0.0;
    __syncthreads();
    if (t == 0) {
        double s = 0;
        for (unsigned k = 0; k < blockDim.x; k++)
            s += sm[k];
        out[blockIdx.x] = s;
    }
}

__device__ float warp_sum(float v)
{
    for (int off = warpSize / 2; off > 0; off /= 2)
        v += __shfl_down(v, off);
    return v;
}

// Block sum: warp shuffles, then one value per warp through shared memory.
extern "C" __global__ void warp_reduce(const float *in, float *out, float *xor_out)
{
    __shared__ float partial[16];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    float v = in[i];
    float w = v;
    for (int m = 1; m < 64; m <<= 1)
        w += __shfl_xor_sync(0xffffffffffffffffull, w, m);
    xor_out[i] = w;
    v = warp_sum(v);
    if (__lane_id() == 0)
        partial[t / warpSize] = v;
    __syncthreads();
    if (t == 0) {
        float s = 0;
        for (unsigned k = 0; k < (blockDim.x + 63) / 64; k++)
            s += partial[k];
        out[blockIdx.x] = s;
    }
}

// Per thread: 12 results of warp operations with the given width.
extern "C" __global__ void shfl_semantics(long long *out, int width)
{
    unsigned t = threadIdx.x;
    int lane = (int)__lane_id();
    long long *o = out + 12 * (blockIdx.x * blockDim.x + t);
    o[0] = __shfl(lane * 10, 3, width);
    o[1] = __shfl_up((unsigned)lane, 5u, width);
    o[2] = __shfl_down(lane, 5, width);
    o[3] = __shfl_xor(lane, 9, width);
    o[4] = (long long)(__shfl((double)lane + 0.5, lane + 7, width) * 2.0);
    o[5] = __shfl_down((long long)lane << 40, 1, width) >> 40;
    o[6] = (long long)__shfl_up_sync(~0ull, (float)lane, 2, width);
    o[7] = (long long)__ballot(lane % 3 == 0);
    o[8] = __any(lane == 40) | __all(lane < 100) << 1 | __all(lane < 10) << 2 |
           __any_sync(~0ull, lane == 70) << 3;
    o[9] = (long long)__activemask();
    o[10] = lane;
    o[11] = (long long)__ballot_sync(0xffffffffull, 1);
}

extern "C" __global__ void early_exit(unsigned long long *out)
{
    unsigned t = threadIdx.x;
    if (t % 3 == 0)
        return;
    __syncwarp();
    out[t] = __ballot(1) ^ __activemask();
    out[blockDim.x + t] = __activemask();
    __syncthreads();
    out[2 * blockDim.x + t] = (unsigned long long)__shfl(t, 0); // lane 0 returned: own value
}

#define TILE 16
extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, int N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < N; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = row < N && k0 + (int)threadIdx.x < N
                                           ? A[row * N + k0 + threadIdx.x]
                                           : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = col < N && k0 + (int)threadIdx.y < N
                                           ? B[(k0 + threadIdx.y) * N + col]
                                           : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < N && col < N)
        C[row * N + col] = acc;
}

extern "C" __global__ void sync_count(int *out)
{
    unsigned t = threadIdx.x;
    int a = __syncthreads_count(t % 3 == 0);
    int b = __syncthreads_and(t < 1000);
    int c = __syncthreads_or(t == 5);
    int d = __syncthreads_count(1);
    if (t == 0) {
        out[4 * blockIdx.x + 0] = a;
        out[4 * blockIdx.x + 1] = b;
        out[4 * blockIdx.x + 2] = c;
        out[4 * blockIdx.x + 3] = d;
    }
}

extern "C" __global__ void fiber_assert(int n)
{
    __syncthreads();
    assert(threadIdx.x < (unsigned)n);
}
