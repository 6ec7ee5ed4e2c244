-- A block reduction with a warp-shuffle tail (2^22 f32, 256 threads) on the
-- CPU backend, in the mode HIPKIT_HOST_MODE selects (auto: split at its
-- barriers and its shuffle; fibers). Wall time of one launch (with a date
-- call around it), median of 7 after one warm-up. Usage:
--   hipkit scripts-lua/bench/warp_reduce_modes.lua
--   HIPKIT_HOST_MODE=fibers hipkit scripts-lua/bench/warp_reduce_modes.lua
local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void reduce_warp(const float *in, float *out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x, i = blockIdx.x * 256 + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int st = 128; st >= warpSize; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    float v = tid < warpSize ? s[tid] : 0.0f;
    for (int off = warpSize / 2; off > 0; off >>= 1)
        v += __shfl_down(v, off);
    if (tid == 0) out[blockIdx.x] = v;
}
]], {name = "wb.hip"})
local n = 1 << 22
local x = hk.alloc(n, "f32"):rand{seed = 1}
local o = hk.alloc(n // 256, "f32")
local ts = {}
m.reduce_warp:launch(n // 256, 256, x, o, n)
for r = 1, 7 do
    local t0 = tonumber(io.popen("date +%s%N"):read("l"))
    m.reduce_warp:launch(n // 256, 256, x, o, n)
    ts[r] = (tonumber(io.popen("date +%s%N"):read("l")) - t0) / 1e6
end
table.sort(ts)
print(string.format("%s (%s): median %.1f ms of 7", m.reduce_warp:info().mode, os.getenv("HIPKIT_HOST_MODE") or "auto", ts[4]))
