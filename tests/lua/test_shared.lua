-- Static __shared__ memory on the CPU backend (issue 12, defect 2): an
-- overrun past the block's shared variables faults as the kernel's fault,
-- naming kernel, block and thread; the session goes on with every buffer
-- intact. Under HIPKIT_CHECK=1 (the test runs twice) an overrun from one
-- shared array into the next fails the launch too.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

if hk.device().backend ~= "host" then
    t.skip("static shared bounds", "the guard page is the CPU backend's")
    t.done()
    return
end
local checked = (os.getenv("HIPKIT_CHECK") or "0") ~= "0"
-- valgrind reports a deliberate fault itself (and fails the run) before
-- hipkit's fault handler turns it into an error: those cases are skipped
local vg = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true) ~= nil

local m = hk.compile([[
#include <hip/hip_runtime.h>
// One array: a write `extra` floats past its end, by thread `who`.
extern "C" __global__ void over(float *out, int extra, int who) {
    __shared__ float s[16];
    s[threadIdx.x] = (float)threadIdx.x;
    if (extra && threadIdx.x == who) s[16 + extra - 1] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[15 - threadIdx.x];
}
// Two arrays: `a` lies below `b`, so a small overrun of `a` lands in `b`.
extern "C" __global__ void two(float *out, int extra) {
    __shared__ float b[16];
    __shared__ float a[16];
    a[threadIdx.x] = 1.0f;
    b[threadIdx.x] = 2.0f;
    __syncthreads();
    if (extra && threadIdx.x == 0)
        for (int i = 16; i < 16 + extra; i++) a[i] = 3.0f;
    __syncthreads();
    out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}
// Dynamic shared memory, written `extra` floats past what the launch asked for.
extern "C" __global__ void dyn(float *out, int extra) {
    extern __shared__ float d[];
    d[threadIdx.x] = 1.0f;
    if (extra && threadIdx.x == 3) d[16 + extra - 1] = 1.0f;
    out[threadIdx.x] = d[threadIdx.x];
}
// Block reduction through static shared memory and barriers.
template <int N> __device__ float reduce(float v) {
    __shared__ float part[N];
    __shared__ unsigned int count;
    if (threadIdx.x == 0) count = 0;
    part[threadIdx.x] = v;
    __syncthreads();
    atomicAdd(&count, 1u);
    for (int s = N / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    return count == N ? part[0] : -1.0f;
}
extern "C" __global__ void sum(const float *x, float *out) {
    float r = reduce<128>(x[blockIdx.x * 128 + threadIdx.x]);
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}
]], {name = "shared.hip"})

local o = hk.alloc(16, "f32")
local keep = hk.alloc(4096, "f32")
keep:fill(7)
local function intact()
    for i = 1, 4096 do if keep[i] ~= 7 then return false end end
    return true
end
local function reversed()
    for i = 1, 16 do if o[i] ~= 16 - i then return false end end
    return true
end

m.over{grid = {2}, block = {16}}(o, 0, 0)
t.ok(reversed(), "a static shared array of 16 floats: the block reverses through it")

if vg then
    t.skip("overruns past the shared memory", "under valgrind, which reports the deliberate fault")
else
    for _, extra in ipairs({64, 4096}) do
        t.errors("kernel over faulted", extra .. " floats past a static __shared__ float s[16]: the launch fails",
                 function() m.over{grid = {2}, block = {16}}(o, extra, 5) end)
        local ok, err = pcall(function() m.over{grid = {2}, block = {16}}(o, extra, 5) end)
        err = tostring(err)
        t.ok(not ok and err:find("static __shared__ memory", 1, true) ~= nil
             -- both blocks overrun: which faults first is the scheduler's
             and err:find("block %([01], 0, 0%), thread %(5, 0, 0%)") ~= nil,
             "the message names the shared memory, the block and the thread: " .. err)
        o:fill(-1)
        m.over{grid = {2}, block = {16}}(o, 0, 0)
        t.ok(reversed(), "after " .. extra .. " floats past it, the next launch runs")
        t.ok(intact(), "a buffer never passed to the kernel is intact")
    end

    -- Dynamic shared memory: the guard span past it is as wide.
    t.errors("past the 64 bytes of dynamic shared memory the launch asked for",
             "4096 floats past the dynamic shared memory asked for: the launch fails",
             function() m.dyn{grid = {1}, block = {16}, shared = 64}(o, 4096) end)
    t.ok(intact(), "a buffer never passed to the kernel is intact")
end

-- Between two arrays of one block: not past the block's shared memory, so
-- only checked mode sees it.
m.two{grid = {1}, block = {16}}(o, 0)
t.is(o[1], 3, "two static shared arrays hold their own values")
if checked then
    t.errors("past the end of __shared__ variable a", "HIPKIT_CHECK=1: an overrun from one shared array into the next fails the launch",
             function() m.two{grid = {1}, block = {16}}(o, 16) end)
else
    t.ok(pcall(function() m.two{grid = {1}, block = {16}}(o, 1) end),
         "without checked mode an overrun into the next shared array is not caught (docs/host-backend.md)")
end
if not vg then
    t.errors("static __shared__ memory", "past both arrays of the block faults in any mode",
             function() m.two{grid = {1}, block = {16}}(o, 4096) end)
end
t.ok(intact(), "buffers intact after the overruns")

local x = hk.alloc(128 * 8, "f32")
for i = 1, 128 * 8 do x[i] = i end
local r = hk.alloc(8, "f32")
m.sum{grid = {8}, block = {128}}(x, r)
local good = true
for b = 0, 7 do
    local want = (128 * b + 1 + 128 * b + 128) * 64
    good = good and r[b + 1] == want
end
t.ok(good, "a block reduction through static shared memory and barriers, 8 blocks")
t.done()
