-- Warp votes on the CPU backend: stream compaction with a ballot and a
-- popcount prefix, and a block's "any element negative" with __any_sync,
-- over 2^22 f32 in blocks of 256, in the mode HIPKIT_HOST_MODE selects
-- (unset: auto, loops; fibers). Median of 7 launches after a warm-up; each
-- result checked. Usage:
--   hipkit scripts-lua/bench/warp_votes.lua
--   HIPKIT_HOST_MODE=fibers hipkit scripts-lua/bench/warp_votes.lua
local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void compact(const float *x, int n, float *out, int *count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    bool keep = i < n && x[i] > 0.5f;
    unsigned long long b = __ballot(keep);
    int base = 0;
    if (lane == 0 && b) base = atomicAdd(count, __popcll(b));
    base = __shfl(base, 0);
    if (keep) out[base + __popcll(b & ((1ull << lane) - 1))] = x[i];
}
extern "C" __global__ void any_neg(const float *x, int n, int *flags) {
    __shared__ int s[4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int neg = __any_sync(~0ull, i < n && x[i] < 0.0f);
    if (threadIdx.x % warpSize == 0) s[threadIdx.x / warpSize] = neg;
    __syncthreads();
    if (threadIdx.x == 0) flags[blockIdx.x] = s[0] | s[1] | s[2] | s[3];
}
]], {name = "warp_votes.hip"})
local n = 1 << 22
local x = hk.alloc(n, "f32"):rand{seed = 5, lo = -0.001, hi = 1}
local out, cnt, flags = hk.alloc(n, "f32"), hk.alloc(1, "i32"), hk.alloc(n // 256, "i32")
local function now_ms() return tonumber(io.popen("date +%s%N"):read("l")) / 1e6 end
local function median(f)
    f()
    local ts = {}
    for r = 1, 7 do
        local t0 = now_ms()
        f()
        ts[r] = now_ms() - t0
    end
    table.sort(ts)
    return ts[4]
end
local xs = x:totable()
local kept, negb = 0, 0
for b = 0, n // 256 - 1 do
    local neg = false
    for i = b * 256 + 1, b * 256 + 256 do
        if xs[i] > 0.5 then kept = kept + 1 end
        if xs[i] < 0 then neg = true end
    end
    if neg then negb = negb + 1 end
end
local tc = median(function() cnt:fill(0); m.compact:launch(n // 256, 256, x, n, out, cnt) end)
assert(cnt[1] == kept, "compaction count")
local ta = median(function() m.any_neg:launch(n // 256, 256, x, n, flags) end)
local got = 0
for _, v in ipairs(flags:totable()) do got = got + v end
assert(got == negb, "blocks with a negative")
print(string.format("%s (%s, %s): compaction %.1f ms, any-negative %.1f ms (2^22 f32)",
                    os.getenv("HIPKIT_HOST_MODE") or "auto", m.compact:info().mode, m.any_neg:info().mode, tc, ta))
