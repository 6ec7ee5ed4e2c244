-- Without libclang at run time (meson runs this with HIPKIT_LIBCLANG naming
-- a file that does not exist): the default mode cannot split any kernel, so
-- each kernel with a barrier runs on fibers, says why, and still computes
-- the right result; a kernel without barriers stays a plain loop.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
if hk.device().backend ~= "host" then
    t.skip("loop mode without libclang", "the CPU backend's")
    t.done()
    return
end
-- a source of its own (a comment that changes each run): a module cached
-- by a run that had libclang would carry its loop versions
local m = hk.compile(string.format([[
#include <hip/hip_runtime.h>
// %d %d
extern "C" __global__ void block_sum(const float *in, float *out) {
    __shared__ float s[128];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 128 + tid];
    __syncthreads();
    for (int st = 64; st > 0; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void twice(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f; }
]], os.time(), math.random(1 << 30)), {name = "nolibclang.hip"})
local i = m.block_sum:info()
t.ok(i.mode == "fibers" and tostring(i.mode_reason):find("libclang was not found", 1, true),
     "a kernel with barriers runs on fibers and says libclang is missing: " ..
     tostring(i.mode) .. ", " .. tostring(i.mode_reason))
t.is(m.twice:info().mode, "loop", "a kernel without barriers is a plain loop")
local nb = 16
local x = hk.alloc(nb * 128, "f32"):rand{seed = 23}
local xs = x:totable()
local o = hk.alloc(nb, "f32")
m.block_sum:launch(nb, 128, x, o)
local bad = 0
for b = 0, nb - 1 do
    local s = 0
    for j = 1, 128 do s = s + xs[b * 128 + j] end
    if math.abs(o[b + 1] - s) > 1e-3 * math.abs(s) + 1e-3 then bad = bad + 1 end
end
t.is(bad, 0, "the block sums on fibers match the CPU")
t.done()
