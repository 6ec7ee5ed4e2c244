-- Cold compile time of a 5-kernel module with barriers (block sum, scan,
-- transpose, stencil, tiled matmul) on the CPU backend, in the mode
-- HIPKIT_HOST_MODE selects (unset: auto, which parses the module with
-- libclang and compiles a loop version of each kernel; fibers: no parse).
-- Prints k:info().compile_ms of the first compile of the process and of a
-- second one (each a source of its own: no cache hit; the precompiled
-- headers come from the disk cache as usual: run once before to fill it).
-- Usage: hipkit scripts-lua/bench/compile_cold5.lua
local src = [[
#include <hip/hip_runtime.h>
extern "C" __global__ void block_sum(const float *in, float *out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void scan(const float *in, float *out) {
    __shared__ float s[256];
    int tid = threadIdx.x, base = blockIdx.x * 256;
    s[tid] = in[base + tid];
    __syncthreads();
    for (int off = 1; off < 256; off *= 2) {
        float v = tid >= off ? s[tid - off] : 0.0f;
        __syncthreads();
        s[tid] += v;
        __syncthreads();
    }
    out[base + tid] = s[tid];
}
extern "C" __global__ void transpose(const float *in, float *out, int w, int h) {
    __shared__ float tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    int ox = blockIdx.y * 16 + threadIdx.x, oy = blockIdx.x * 16 + threadIdx.y;
    if (ox < h && oy < w) out[oy * h + ox] = tile[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void stencil(const float *in, float *out, int n) {
    __shared__ float s[258];
    int tid = threadIdx.x, i = blockIdx.x * 256 + tid;
    s[tid + 1] = i < n ? in[i] : 0.0f;
    if (tid == 0) s[0] = i > 0 ? in[i - 1] : 0.0f;
    if (tid == 255) s[257] = i + 1 < n ? in[i + 1] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = 0.25f * s[tid] + 0.5f * s[tid + 1] + 0.25f * s[tid + 2];
}
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float As[16][16], Bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 16) {
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
]]
local want = os.getenv("HIPKIT_HOST_MODE") == "fibers" and "fibers" or "loops"
local ms = {}
for r = 1, 2 do
    local m = hk.compile(string.format("%s// %d %d %d\n", src, r, os.time(), math.random(1 << 30)),
                         {name = "cold5.hip"})
    for _, k in ipairs{"block_sum", "scan", "transpose", "stencil", "matmul"} do
        assert(m[k]:info().mode == want, k .. ": " .. tostring(m[k]:info().mode_reason))
    end
    ms[r] = m.block_sum:info().compile_ms
end
print(string.format("%s: first compile %.0f ms, second %.0f ms", os.getenv("HIPKIT_HOST_MODE") or "auto",
                    ms[1], ms[2]))
