-- y = a*x + b on the best device present, checked against a Lua loop.
local n = tonumber(arg and arg[1]) or 1000000
local dev = hk.device()
print(("device: %s"):format(tostring(dev)))

local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void axpb(float a, const float *x, float b, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
]], {name = "axpb"})

local a, b = 2.5, -1.0
local x = hk.alloc(n, "f32"):rand{seed = 42, lo = -1, hi = 1}
local y = hk.alloc(n, "f32"):fill(0 / 0) -- poisoned: unwritten elements stay NaN
m.axpb:launch((n + 255) // 256, 256, a, x, b, y, n)
hk.sync()

local ok, _, msg = y:allclose(function(i) return a * x[i] + b end, 1e-6, 1e-6)
local info = m.axpb:info()
print(("kernel: axpb%s, code from %s in %.1f ms"):format(info.signature, info.origin, info.compile_ms))
print(y)
if not ok then
    print("FAILED: " .. tostring(msg))
    os.exit(1)
end
print(("ok: y = %g*x + %g for all %d elements"):format(a, b, n))
