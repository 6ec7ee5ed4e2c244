-- A tour of inspection: devices, a kernel's info and machine code, buffer
-- statistics, allclose with a report, a benchmark and plots.
for _, b in ipairs(hk.backends()) do
    print(("backend %-5s %s"):format(b.name, b.available and "available" or ("unavailable: " .. b.reason)))
end
for _, d in ipairs(hk.devices()) do print("device " .. tostring(d)) end

local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void wave(float *y, float freq, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sinf(freq * i) * expf(-0.002f * i);
}
]], {name = "wave"})
local k = m.wave
local info = k:info()
print(("kernel %s%s: origin %s, %.1f ms, kernarg %d bytes"):format(info.name, info.signature,
    info.origin, info.compile_ms, info.kernarg_size))
for _, p in ipairs(info.params) do
    print(("  %-8s %-10s offset %d size %d"):format(p.name, p.type, p.offset, p.size))
end
local ok, text = pcall(k.disasm, k)
if ok then
    local lines = 0
    for _ in text:gmatch("\n") do lines = lines + 1 end
    print(("disassembly: %d lines, first: %s"):format(lines, text:match("[^\n]+")))
else
    print("disassembly not available: " .. tostring(text))
end

local n = 2048
local y = hk.alloc(n, "f32"):fill(0 / 0)
k:launch(n // 256, 256, y, 0.05, n)
hk.sync()
local s = y:stats()
print(("stats: min %.3f max %.3f mean %.4f std %.4f nan %d inf %d"):format(s.min, s.max, s.mean, s.std, s.nan, s.inf))
local good = y:allclose(function(i) return math.sin(0.05 * (i - 1)) * math.exp(-0.002 * (i - 1)) end, 1e-4, 1e-5)
print("allclose against Lua's math: " .. tostring(good))
local off, report, msg = y:allclose(function(i) return i == 100 and 5 or math.sin(0.05 * (i - 1)) * math.exp(-0.002 * (i - 1)) end, 1e-4, 1e-5)
print("allclose with one planted difference: " .. tostring(off) .. " -- " .. tostring(msg))

local big = hk.alloc(1 << 22, "f32")
hk.bench(function() k:launch((1 << 22) // 256, 256, big, 0.01, 1 << 22) end,
    {label = "wave 4M", reps = 10, bytes = 4 * (1 << 22)})
y:plot{width = 64}
if not good or off then os.exit(1) end
