-- Cost of one launch from Lua: an empty one-block kernel with 5 arguments
-- (two buffers, a float, an int, an unsigned), as k:launch and through a
-- launcher, with the Lua heap watched for allocations per launch.
-- tools/bench_lua_launch.sh runs this next to the same launch from C.
local reps = tonumber(arg and arg[1]) or 200000
local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void k5(float *a, const float *b, float s, int n, unsigned flags) {
    (void)a; (void)b; (void)s; (void)n; (void)flags;
}
]], {name = "k5"})
local k = m.k5
local a, b = hk.alloc(16, "f32"), hk.alloc(16, "f32")

local function time(label, f)
    for _ = 1, 1000 do f() end
    collectgarbage("collect")
    collectgarbage("stop")
    local kb0 = collectgarbage("count")
    hk.sync()
    local t0 = hk.clock()
    for _ = 1, reps do f() end
    hk.sync()
    local us = (hk.clock() - t0) / reps * 1e6
    local grew = (collectgarbage("count") - kb0) * 1024
    collectgarbage("restart")
    print(("%s: %.3f us per launch, Lua heap grew %d bytes over %d launches"):format(label, us, grew, reps))
    return us, grew
end

-- The CPU's side alone: batches short enough that the GPU's queue never
-- fills, the clock stopped before each batch is drained. On a GPU this is
-- what a launch costs the caller; the figure above is bounded by how fast
-- the GPU retires empty kernels (tools/bench_cupy_launch.py does the same).
local function host_side(label, f)
    local batch, rounds, per = 256, 400, {}
    for _ = 1, 1000 do f() end
    hk.sync()
    for r = 1, rounds do
        local t0 = hk.clock()
        for _ = 1, batch do f() end
        per[r] = (hk.clock() - t0) / batch * 1e6
        hk.sync()
    end
    table.sort(per)
    print(("%s (host side): %.3f us per launch, median of %d batches of %d"):format(label,
        per[rounds // 2], rounds, batch))
end

local _, g1 = time("lua k:launch", function() k:launch(1, 1, a, b, 1.5, 16, 3) end)
local launcher = k{grid = 1, block = 1}
local _, g2 = time("lua launcher", function() launcher(a, b, 1.5, 16, 3) end)
host_side("lua k:launch", function() k:launch(1, 1, a, b, 1.5, 16, 3) end)
host_side("lua launcher", function() launcher(a, b, 1.5, 16, 3) end)
if g1 > 0 or g2 > 0 then
    print("FAILED: launches allocated on the Lua heap")
    os.exit(1)
end
