// Early-start probe (RESULTS.md, 2026-11-28): the op's matvec kernels and a
// read-only kernel, launched with and without programmatic dependent launch,
// waiting at their start (mode 1) or after their first loads (2, 5).
// Build (here, no GPU needed) and run (on an sm_90 device):
//   nvcc -arch=sm_90 -cubin -o pdl.cubin -x cu -Isrc/core/backends/cuda/include \
//        -Ikernels tools/pdl_probe/dev.cu
//   gcc -O2 -o pdl_host tools/pdl_probe/host.c -I/usr/local/cuda/include \
//        -L/usr/local/cuda/lib64/stubs -lcuda
//   ./pdl_host pdl.cubin          (every format, form, grid and mode)
//   ./pdl_host pdl.cubin quick    (the legacy stream, graphs built node by node)
#include <hip/hip_runtime.h> // (hipkit's NVIDIA shim: its hk_grid_wait() is replaced below)
__constant__ int g_mode;
__device__ __forceinline__ void pdl_wait_go()
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
// hk_grid_wait(), where quantized.hip's matvec calls it (after the first
// step's weight loads): mode 2 waits and triggers; 5 waits only (the next
// grid starts as this one's blocks exit); 0 and 1 do nothing there.
__device__ __forceinline__ void probe_wait()
{
    if (g_mode == 2 || g_mode == 5) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        if (g_mode == 2)
            asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
}
#undef hk_grid_wait
#define hk_grid_wait() probe_wait()
#include "quantized/quantized.hip"
#define W(fmt, F) \
extern "C" __global__ void pm_##fmt(const void *w, const float *x, float *y, int rows, int cols) \
{ if (g_mode == 1) pdl_wait_go(); hkq_matvec<F>(w, x, y, rows, cols); } \
extern "C" __global__ void pm8_##fmt(const void *w, const void *x, float *y, int rows, int cols) \
{ if (g_mode == 1) pdl_wait_go(); hkq_matvec_q8_1<F>(w, x, y, rows, cols); }
W(q4_0, HKQ_Q4_0) W(q8_0, HKQ_Q8_0) W(q4_K, HKQ_Q4_K) W(q6_K, HKQ_Q6_K)
// read only: 16-byte loads grid-stride, 4 in flight a thread
extern "C" __global__ void ro(const uint4 *w, unsigned long long n16, unsigned *out)
{
    if (g_mode == 1) pdl_wait_go();
    unsigned acc = 0;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x, s = (unsigned long long)gridDim.x * blockDim.x;
    bool first = true;
    for (; i + 3 * s < n16; i += 4 * s) {
        uint4 a = w[i], b = w[i + s], c = w[i + 2 * s], d = w[i + 3 * s];
        if (first && g_mode == 2) { first = false; pdl_wait_go(); }
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    if (first && g_mode == 2) pdl_wait_go();
    for (; i < n16; i += s) { uint4 a = w[i]; acc ^= a.x ^ a.y ^ a.z ^ a.w; }
    if (acc == 0x12345678u) out[0] = acc;
}
