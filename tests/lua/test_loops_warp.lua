-- Warp votes and _sync shuffles in loop mode (issue 19): kernels written the
-- way libraries write them (warp-aggregated atomics, a block's "any element
-- negative", stream compaction with a ballot and a popcount prefix, the
-- cub-style butterfly reduction), checked against a CPU reference on random
-- data with sizes that leave a partial last block and a partial last warp;
-- meson runs this with HIPKIT_HOST_MODE=loops (each must say "loops") and
-- =fibers. A vote with a partial or unknown mask keeps the fibers and says why.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
if hk.device().backend ~= "host" then
    t.skip("loop mode", "the CPU backend's")
    t.done()
    return
end
local want = os.getenv("HIPKIT_HOST_MODE") == "fibers" and "fibers" or "loops"
local W = 64 -- hipkit's warpSize (AMD CDNA)
local m = hk.compile([[
#include <hip/hip_runtime.h>
#define FULL_MASK 0xffffffffffffffffull
// warp-aggregated atomics: one atomicAdd per warp, by its first voting lane
extern "C" __global__ void agg_count(const float *x, int n, int *count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred = i < n && x[i] > 0.25f;
    unsigned long long b = __ballot_sync(FULL_MASK, pred);
    if (threadIdx.x % warpSize == __ffsll(b) - 1) atomicAdd(count, __popcll(b));
}
// the same as CUDA code writes it for 32-lane warps, run with 32-thread
// blocks: every warp has 32 lanes, the other 32 do not exist
extern "C" __global__ void agg_count32(const float *x, int n, int *count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mask = __ballot_sync(0xffffffff, i < n && x[i] > 0.25f);
    if (threadIdx.x == 0)
        atomicAdd(count, __popc(mask));
}
// a block's "any element negative" (and "all positive") through one word per warp
extern "C" __global__ void any_neg(const float *x, int n, int *flags) {
    __shared__ int s_any[16], s_all[16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int w = threadIdx.x / warpSize;
    int neg = __any_sync(~0ull, i < n && x[i] < 0.0f);
    int pos = 0;
    if (__all(i >= n || x[i] >= 0.0f)) pos = 1;
    if (threadIdx.x % warpSize == 0) {
        s_any[w] = neg;
        s_all[w] = pos;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int a = 0, p = 1;
        for (int k = 0; k < (int)(blockDim.x + warpSize - 1) / warpSize; k++) {
            a |= s_any[k];
            p &= s_all[k];
        }
        flags[2 * blockIdx.x] = a;
        flags[2 * blockIdx.x + 1] = p;
    }
}
// stream compaction: a ballot, the warp's slot from one atomicAdd, each
// kept element's place the popcount of the lanes below it
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
// which lanes are live after an early return, and a ballot among them
extern "C" __global__ void active(unsigned long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long live = __activemask();
    unsigned long long third = __ballot(i % 3 == 0);
    out[2 * i] = live;
    out[2 * i + 1] = third;
}
// cub-style warp reductions: the butterfly with __shfl_xor_sync
extern "C" __global__ void warp_reduce(const float *x, int n, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int o = warpSize / 2; o > 0; o >>= 1) {
        float other = __shfl_xor_sync(0xffffffff, v, o);
        v += other;
    }
    if (threadIdx.x % warpSize == 0) out[i / warpSize] = v;
}
extern "C" __global__ void warp_reduce_down(const float *x, int n, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int o = warpSize / 2; o > 0; o >>= 1)
        v += __shfl_down_sync(FULL_MASK, v, o);
    if (threadIdx.x % warpSize == 0) out[i / warpSize] = v;
}
// what keeps the fibers: a partial mask, a mask that is no constant, a
// vote under a branch only some lanes take
extern "C" __global__ void half_mask(const float *x, unsigned long long *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __ballot_sync(0xffff, x[i] > 0.5f);
}
extern "C" __global__ void arg_mask(const float *x, unsigned long long *out, unsigned long long mask) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __ballot_sync(mask, x[i] > 0.5f);
}
extern "C" __global__ void vote_in_if(const float *x, unsigned long long *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long b = 0;
    if (threadIdx.x < 32) b = __ballot(x[i] > 0.5f);
    out[i] = b;
}
]], {name = "loops_warp.hip"})

for _, k in ipairs{"agg_count", "agg_count32", "any_neg", "compact", "active", "warp_reduce",
                   "warp_reduce_down"} do
    local i = m[k]:info()
    t.is(i.mode, want, k .. " runs as " .. want .. (i.mode_reason and (": " .. i.mode_reason) or ""))
end
local function refused(k, what)
    local i = m[k]:info()
    t.ok(i.mode == "fibers" and (want == "fibers" or tostring(i.mode_reason):find(what, 1, true)),
         k .. " keeps the fibers and says why: " .. tostring(i.mode_reason))
end
refused("half_mask", "__ballot_sync with a mask that is not a constant full one")
refused("arg_mask", "__ballot_sync with a mask that is not a constant full one")
refused("vote_in_if", "a warp vote in an if it cannot split")

local n = 3000 -- blocks of 100 threads: warps of 64 and 36 lanes, a partial last block
local x = hk.alloc(n, "f32"):rand{seed = 23, lo = -0.02, hi = 1}
local xs = x:totable()
local nb = (n + 99) // 100

local cnt = hk.from({0}, "i32")
m.agg_count:launch(nb, 100, x, n, cnt)
local want_cnt = 0
for i = 1, n do if xs[i] > 0.25 then want_cnt = want_cnt + 1 end end
t.is(cnt[1], want_cnt, "warp-aggregated atomicAdd counts the elements over 0.25")
cnt:fill(0)
m.agg_count32:launch((n + 31) // 32, 32, x, n, cnt)
t.is(cnt[1], want_cnt, "the same with __ballot_sync(0xffffffff) and __popc in 32-thread blocks")

local flags = hk.alloc(2 * nb, "i32")
m.any_neg:launch(nb, 100, x, n, flags)
local bad, some, none = 0, 0, 0
for b = 0, nb - 1 do
    local neg = 0
    for i = b * 100 + 1, math.min(n, b * 100 + 100) do if xs[i] < 0 then neg = 1 end end
    if neg == 1 then some = some + 1 else none = none + 1 end
    if flags[2 * b + 1] ~= neg or flags[2 * b + 2] ~= 1 - neg then bad = bad + 1 end
end
t.ok(some > 0 and none > 0, string.format("the data has blocks with (%d) and without (%d) negatives", some, none))
t.is(bad, 0, "__any_sync and __all per warp, combined per block, match the CPU")

local out = hk.alloc(n, "f32"):fill(-1)
cnt:fill(0)
m.compact:launch(nb, 100, x, n, out, cnt)
local kept = {}
for i = 1, n do if xs[i] > 0.5 then kept[#kept + 1] = xs[i] end end
local got = out:totable()
local c = cnt[1]
local gk = {}
for i = 1, c do gk[i] = got[i] end
table.sort(kept)
table.sort(gk)
bad = c == #kept and 0 or 1
for i = 1, #kept do if gk[i] ~= kept[i] then bad = bad + 1 end end
for i = c + 1, n do if got[i] ~= -1 then bad = bad + 1 end end
t.is(bad, 0, string.format("stream compaction keeps the %d elements over 0.5, each once", #kept))

local na = 250 -- 3 blocks of 100: the last has 50 live threads, 2 of its warp 0's 64 lanes past them
local ao = hk.alloc(2 * na, "u64")
m.active:launch(3, 100, ao, na)
bad = 0
for i = 0, na - 1 do
    local blk, tid = i // 100, i % 100
    local lo = blk * 100 + (tid // W) * W
    local hi = math.min(blk * 100 + math.min(100, (tid // W + 1) * W), na)
    local live, third = 0, 0
    for j = lo, hi - 1 do
        live = live | (1 << (j - lo))
        if j % 3 == 0 then third = third | (1 << (j - lo)) end
    end
    if ao[2 * i + 1] ~= live or ao[2 * i + 2] ~= third then bad = bad + 1 end
end
t.is(bad, 0, "__activemask and __ballot after an early return: the live lanes, as on fibers")

local rn = 1000 -- blocks of 128: two whole warps each, the data ends inside the last block
local rx = hk.alloc(rn, "f32"):rand{seed = 29}
local rxs = rx:totable()
local rb = (rn + 127) // 128
for _, k in ipairs{"warp_reduce", "warp_reduce_down"} do
    local ro = hk.alloc(rb * 2, "f32"):fill(0)
    m[k]:launch(rb, 128, rx, rn, ro)
    bad = 0
    for w = 0, rb * 2 - 1 do
        local s = 0
        for i = w * W + 1, math.min(rn, w * W + W) do s = s + rxs[i] end
        if math.abs(ro[w + 1] - s) > 1e-4 * math.abs(s) + 1e-4 then bad = bad + 1 end
    end
    t.is(bad, 0, k .. ": every warp's sum matches the CPU")
end

-- the refused kernels still run (on fibers): a partial mask ands the ballot
local ho = hk.alloc(128, "u64")
m.half_mask:launch(2, 64, x, ho)
bad = 0
for w = 0, 1 do
    local b = 0
    for l = 0, 15 do if xs[w * 64 + l + 1] > 0.5 then b = b | (1 << l) end end
    for l = 0, 63 do if ho[w * 64 + l + 1] ~= b then bad = bad + 1 end end
end
t.is(bad, 0, "__ballot_sync with a partial mask, on fibers, matches the CPU")
t.done()
