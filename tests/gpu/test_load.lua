-- Loading code objects on a GPU backend: a cubin hipkit compiled (saved
-- with m:save), launched with a signature given by hand; and a cubin built for
-- another architecture, refused with a message that says what to do.
-- Usage: hipkit --backend cuda tests/gpu/test_load.lua [OTHER_ARCH_CUBIN]
package.path = (arg[0]:match("(.*/)") or "./") .. "../lua/?.lua;" .. package.path
local t = require("tap")
local dev = hk.device()
if dev.backend == "host" then
    t.skip("loading GPU code objects", "no GPU backend selected")
    t.done()
end

local src = [[
#include <hip/hip_runtime.h>
extern "C" __global__ void scale(float *y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= s;
}
]]
local m = hk.compile(src, {name = "loadme"})
t.ok(m.scale ~= nil, "compiled on " .. tostring(dev))
local path = os.tmpname()
local bytes = m:save(path)
t.ok(bytes > 0, ("m:save wrote the code object (%d bytes)"):format(bytes))
if path then
    local lm = hk.load(path)
    local names = table.concat(lm:kernels(), ",")
    t.is(names, "scale", "hk.load lists the cubin's kernel")
    local ok, err = pcall(function() return lm.scale end)
    t.ok(not ok and tostring(err):find("signature", 1, true), "without source, a kernel asks for its signature")
    local k = lm:kernel("scale", "float *y, float s, int n")
    local n = 1000
    local y = hk.alloc(n, "f32"):iota(1)
    k:launch((n + 255) // 256, 256, y, 2.5, n)
    t.ok(y:allclose(function(i) return 2.5 * i end), "the loaded kernel runs")
    t.is(k:info().origin, "file", "its origin is file")
    local bad, berr = pcall(lm.kernel, lm, "scale", "float *y, double s, int n")
    t.ok(not bad and tostring(berr):find("parameter 2", 1, true), "a signature that disagrees with the cubin is refused")
    os.remove(path)
end

-- a cubin built ahead by `hipkit compile` (nvcc), loaded and launched
local exe
for i = -1, -10, -1 do
    if arg[i] then exe = arg[i] end
end
local hipsrc = os.tmpname() .. ".hip"
local cubin = hipsrc:gsub("%.hip$", ".cubin")
local f = assert(io.open(hipsrc, "w"))
f:write(src)
f:close()
local okc = exe and os.execute(("'%s' compile '%s' --cuda-arch %s -o '%s' >/dev/null 2>&1"):format(exe, hipsrc, dev.target, cubin))
if okc then
    local am = hk.load(cubin)
    local k = am:kernel("scale", "float *y, float s, int n")
    local y = hk.alloc(100, "f32"):iota(1)
    k:launch(1, 128, y, -1.5, 100)
    t.ok(y:allclose(function(i) return -1.5 * i end), "a cubin from `hipkit compile --cuda-arch " .. dev.target .. "` loads and runs")
    os.remove(cubin)
else
    t.skip("hipkit compile", "nvcc is not available here")
end
os.remove(hipsrc)

local other = arg[1]
if other then
    local ok, err = pcall(hk.load, other)
    if ok then
        t.ok(true, "the other-architecture cubin loads here (same major architecture)")
    else
        err = tostring(err)
        t.ok(err:find("sm_80", 1, true) and err:find(dev.target, 1, true) and err:find("rebuild", 1, true),
            "a cubin for another architecture says which, which the device needs, and how to rebuild: " .. err)
    end
else
    t.skip("architecture mismatch", "no sm_80 cubin given (nvcc absent at build time)")
end
local okp, perr = pcall(hk.load, arg[0])
t.ok(not okp and tostring(perr):find("not a cubin", 1, true), "a Lua file is not a code object: " .. tostring(perr))
t.done()
