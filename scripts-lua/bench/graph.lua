-- Launch-bound work: steps of NODES small kernels (one block of 256 threads,
-- y = a*y + b*x, ping-ponging between two buffers), launched one by one from
-- Lua with k:launch, and recorded once with hk.graph and replayed with
-- g:launch(). Per kernel: the wall time to the last kernel's end, and the
-- caller's side alone (batches of 2 steps, the clock stopped before each
-- drain). Both runs end with the same buffers: checked.
-- Issue 16 item 6's target on the H100: a replay costs <= 1/3 per kernel of
-- launching one by one from Lua. tools/cuda_stream_floor.c gives the raw
-- driver's cuLaunchKernel under both.
-- Usage: hipkit scripts-lua/bench/graph.lua [NODES=100] [STEPS=2000]
local nodes = tonumber(arg and arg[1]) or 100
local steps = tonumber(arg and arg[2]) or 2000
local n = 256
local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void step(float *y, const float *x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * y[i] + b * x[i];
}
]], {name = "graph_bench"})
local k = m.step

local function one_by_one(x, y)
    for i = 1, nodes do
        if i % 2 == 1 then k:launch(1, n, y, x, 0.5, 0.25, n) else k:launch(1, n, x, y, 0.5, -0.125, n) end
    end
end

local function fresh()
    -- random data, the same seed for both pairs so their results compare
    return hk.alloc(n, "f32"):rand{seed = 1}, hk.alloc(n, "f32"):rand{seed = 2}
end
local x1, y1 = fresh()
local x2, y2 = fresh()
local g = hk.graph(function() one_by_one(x2, y2) end)
print(g)

local function wall(label, f)
    for _ = 1, 20 do f() end
    hk.sync()
    local t0 = hk.clock()
    for _ = 1, steps do f() end
    hk.sync()
    local us = (hk.clock() - t0) / (steps * nodes) * 1e6
    print(("%-22s %.3f us per kernel, wall (%d steps of %d kernels)"):format(label, us, steps, nodes))
    return us
end

local function host_side(label, f)
    local rounds, batch, per = 300, 2, {}
    for _ = 1, 20 do f() end
    hk.sync()
    for r = 1, rounds do
        local t0 = hk.clock()
        for _ = 1, batch do f() end
        per[r] = (hk.clock() - t0) / (batch * nodes) * 1e6
        hk.sync()
    end
    table.sort(per)
    local us = per[rounds // 2]
    print(("%-22s %.3f us per kernel, host side (median of %d batches of %d steps)"):format(label, us,
        rounds, batch))
    return us
end

local function eager() one_by_one(x1, y1) end
local function replay() g:launch() end
local we, wg = wall("k:launch one by one", eager), wall("g:launch() replay", replay)
local he, hg = host_side("k:launch one by one", eager), host_side("g:launch() replay", replay)
print(("replay / one by one: wall %.3f, host side %.3f (target <= 0.333 on the H100)"):format(we > 0 and wg / we or 0,
    he > 0 and hg / he or 0))

-- the same work both ways gives the same buffers
x1, y1 = fresh()
x2, y2 = fresh()
g = hk.graph(function() one_by_one(x2, y2) end)
for _ = 1, 3 do one_by_one(x1, y1); g:launch() end
hk.sync()
local same = x1:allclose(x2, 0, 0) and y1:allclose(y2, 0, 0)
print(same and "results: identical" or "FAILED: the replay's buffers differ from launching one by one")
if not same then os.exit(1) end
