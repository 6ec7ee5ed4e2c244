-- Cold compile time of a small module with a barrier on the CPU backend, in
-- the mode HIPKIT_HOST_MODE selects (unset: auto, which parses the module
-- with libclang; fibers: no parse). Each compile has a source of its own (a
-- comment), so none is a cache hit; the precompiled header comes from the
-- cache as usual. Usage:
--   hipkit scripts-lua/bench/compile_modes.lua [runs]
--   HIPKIT_HOST_MODE=fibers hipkit scripts-lua/bench/compile_modes.lua [runs]
local runs = tonumber(arg and arg[1]) or 5
local src = [[
#include <hip/hip_runtime.h>
extern "C" __global__ void block_sum(const float *in, float *out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
]]
local function now_ms() return tonumber(io.popen("date +%s%N"):read("l")) / 1e6 end
hk.compile(src .. "// warm-up\n", {name = "warm.hip"}) -- the precompiled header
local ts = {}
for r = 1, runs do
    local s = string.format("%s// %d %d\n", src, r, math.random(1 << 30))
    local t0 = now_ms()
    local m = hk.compile(s, {name = "cm.hip"})
    ts[#ts + 1] = now_ms() - t0
    assert(m.block_sum:info().mode == (os.getenv("HIPKIT_HOST_MODE") == "fibers" and "fibers" or "loops"))
end
table.sort(ts)
print(string.format("%s: median %.0f ms (min %.0f, max %.0f) of %d cold compiles",
                    os.getenv("HIPKIT_HOST_MODE") or "auto", ts[(runs + 1) // 2], ts[1], ts[runs], runs))
