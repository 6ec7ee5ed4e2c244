-- What the CPU backend's speed-ups (issue 19) must keep, in loop mode and on
-- fibers (meson runs this with HIPKIT_HOST_MODE=loops and =fibers):
-- * faults of kernels split at their barriers: loop mode keeps no thread
--   index per iteration (so the compiler may vectorise a region), and finds
--   the faulting thread by running the block again on fibers. Each fault
--   here comes from one random thread of one random block, and the report
--   must name that block and that thread;
-- * atomics on shared memory, which run without a lock (a block is one OS
--   thread's), next to atomics on global memory from every block at once.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
if hk.device().backend ~= "host" then
    t.skip("loop-mode faults", "the CPU backend's")
    t.done()
    return
end
local want = os.getenv("HIPKIT_HOST_MODE") == "loops" and "loops" or "fibers"
local m = hk.compile([[
#include <hip/hip_runtime.h>
#include <assert.h>
// Reads x[shift + blockIdx.x * 256 + t] after a barrier: with shift > 0 the
// last block's threads from 256 - shift on read past the end of x (a
// contiguous read the compiler may vectorise).
extern "C" __global__ void shifted(const float *x, float *out, int shift) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 256 + t] = s[255 - t] + x[shift + blockIdx.x * 256 + t];
}
// One thread (bt, by) of one block (bb) writes far past the block's 256
// floats of static shared memory, in the region after the first barrier.
extern "C" __global__ void shared_poke(float *out, int bb, int bt, int by) {
    __shared__ float s[256];
    int tx = threadIdx.x, ty = threadIdx.y, i = ty * 16 + tx;
    s[i] = (float)i;
    __syncthreads();
    int j = (blockIdx.x == bb && tx == bt && ty == by) ? 4096 : 255 - i;
    s[j] += 1.0f;
    __syncthreads();
    out[blockIdx.x * 256 + i] = s[i];
}
// Shared-memory histograms (static and dynamic shared, integer and float
// atomics) merged into global memory with atomics from every block.
extern "C" __global__ void histo(const unsigned *d, unsigned *hist, float *fmax, int n) {
    __shared__ unsigned hs[64];
    __shared__ float mx[64];
    extern __shared__ unsigned dyn[];
    unsigned t = threadIdx.x;
    if (t < 64) { hs[t] = 0; mx[t] = 0.0f; dyn[t] = 0; }
    __syncthreads();
    for (int j = 0; j < 8; j++) {
        int i = (blockIdx.x * 8 + j) * blockDim.x + t;
        if (i < n) {
            unsigned b = d[i] & 63u;
            atomicAdd(&hs[b], 1u);
            atomicSub(&dyn[b], 1u);
            atomicMax(&mx[b], (float)(d[i] >> 6));
        }
    }
    __syncthreads();
    if (t < 64) {
        atomicAdd(&hist[t], hs[t]);
        atomicAdd(&hist[64 + t], 0u - dyn[t]);
        atomicMax(&fmax[t], mx[t]);
    }
}
// An assert that fails in one thread of one block, after a barrier.
extern "C" __global__ void asserting(float *out, int bb, int bt) {
    __shared__ float s[128];
    unsigned t = threadIdx.x;
    s[t] = (float)t;
    __syncthreads();
    assert(!(blockIdx.x == bb && t == bt));
    out[blockIdx.x * 128 + t] = s[127 - t];
}
]], {name = "loops_faults.hip"})
for _, k in ipairs{"shifted", "shared_poke", "asserting", "histo"} do
    local i = m[k]:info()
    t.is(i.mode, want, k .. " runs as " .. want .. (i.mode_reason and (": " .. i.mode_reason) or ""))
end

math.randomseed(os.time())
local nb = 8
local x = hk.alloc(nb * 256, "f32"):rand{seed = 19}
local out = hk.alloc(nb * 256, "f32")

-- no fault: every value checked
m.shifted:launch(nb, 256, x, out, 0)
local xs, os_ = x:totable(), out:totable()
-- the sum rounded to f32, as the kernel rounds it
local function f32(v) return (string.unpack("f", string.pack("f", v))) end
local bad = 0
for i = 1, nb * 256 do if os_[i] ~= f32(xs[i] + 1) then bad = bad + 1 end end
t.is(bad, 0, "shifted with shift 0 adds 1 to every element")

-- valgrind reports a deliberate fault itself before hipkit's handler turns
-- it into an error: the cases that fault a guard page are skipped there
local vg = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true) ~= nil
local ok, err
if vg then
    t.skip("a read past the end names its block and thread", "under valgrind")
    t.skip("and the first element past the end", "under valgrind")
    t.skip("a shared-memory overrun names its block and thread", "under valgrind")
else
    local shift = math.random(1, 255)
    ok, err = pcall(m.shifted.launch, m.shifted, nb, 256, x, out, shift)
    local first = 256 - shift
    t.ok(not ok and err:find("kernel shifted faulted", 1, true) and
         err:find(("in block (%d, 0, 0), thread (%d, 0, 0)"):format(nb - 1, first), 1, true),
         ("a read past the end (shift %d) names block %d, thread %d: %s"):format(shift, nb - 1, first,
                                                                               tostring(err)))
    t.ok(err and err:find("element index " .. nb * 256, 1, true),
         "and the first element past the end: " .. tostring(err))

    local bb, bt, by = math.random(0, nb - 1), math.random(0, 15), math.random(0, 15)
    ok, err = pcall(m.shared_poke.launch, m.shared_poke, nb, {16, 16}, out, bb, bt, by)
    t.ok(not ok and err:find("static __shared__ memory", 1, true) and
         err:find(("in block (%d, 0, 0), thread (%d, %d, 0)"):format(bb, bt, by), 1, true),
         ("a shared-memory overrun names block %d, thread (%d, %d): %s"):format(bb, bt, by, tostring(err)))
end

local bb, bt = math.random(0, nb - 1), math.random(0, 127)
ok, err = pcall(m.asserting.launch, m.asserting, nb, 128, out, bb, bt)
t.ok(not ok and err:find("assertion failed", 1, true) and
     err:find(("in block (%d, 0, 0), thread (%d, 0, 0)"):format(bb, bt), 1, true),
     ("a failed assert names block %d, thread %d: %s"):format(bb, bt, tostring(err)))

-- shared-memory atomics against the CPU
local hn = 100000
local d = hk.alloc(hn, "u32"):rand{seed = 23, lo = 0, hi = 1 << 20}
local hist = hk.alloc(128, "u32")
local fmax = hk.alloc(64, "f32")
local hb = (hn + 8 * 128 - 1) // (8 * 128)
m.histo{grid = {hb}, block = {128}, shared = 64 * 4}(d, hist, fmax, hn)
local ds, hs, fs = d:totable(), hist:totable(), fmax:totable()
local rc, rm = {}, {}
for b = 1, 64 do rc[b], rm[b] = 0, 0 end
for i = 1, hn do
    local b = ds[i] % 64 + 1
    rc[b] = rc[b] + 1
    rm[b] = math.max(rm[b], ds[i] // 64)
end
bad = 0
for b = 1, 64 do
    if hs[b] ~= rc[b] or hs[64 + b] ~= rc[b] or fs[b] ~= rm[b] then bad = bad + 1 end
end
t.is(bad, 0, "shared-memory histograms (atomicAdd, atomicSub, float atomicMax) match the CPU")

-- the process goes on: the next launch works
m.shifted:launch(nb, 256, x, out, 0)
os_ = out:totable()
bad = 0
for i = 1, nb * 256 do if os_[i] ~= f32(xs[i] + 1) then bad = bad + 1 end end
t.is(bad, 0, "the next launch works")
t.done()
