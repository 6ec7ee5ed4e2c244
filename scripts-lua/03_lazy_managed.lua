-- A managed buffer initialised on the host with no explicit copy, changed by
-- a kernel, and read back on the host.
local n = 100000
local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void square_plus(int *v, int add, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * v[i] + add;
}
]], {name = "square_plus"})
local v = hk.alloc(n, "i32", "managed")
for i = 1, n do v[i] = i % 1000 end -- plain element writes: no upload call
m.square_plus:launch((n + 255) // 256, 256, v, 7, n)
hk.sync()
local bad = 0
for i = 1, n do
    local want = (i % 1000) ^ 2 + 7
    if v[i] ~= want then bad = bad + 1 end
end
print(v)
print(("managed buffer: %d of %d elements wrong"):format(bad, n))
if bad > 0 then os.exit(1) end
print("ok")
