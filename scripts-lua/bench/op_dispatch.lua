-- Host cost of a plugin launch (hk_plugin_launch's checks: the rule's grid,
-- operand extents, outputs over inputs) on 1024 random f32, so that the
-- kernel itself is negligible: the kernel form add_f32(a, b, c, n), the op
-- form add(c, a, b), the op in place add(a, a, b) (the overlap check's
-- extent path), and a row op softmax(y, x, cols). Microseconds per call,
-- the median of 7 runs of reps calls, a sync after each run.
local reps = tonumber(arg and arg[1]) or 50000
local n = 1024
local a = hk.alloc(n, "f32"):rand{seed = 1}
local b = hk.alloc(n, "f32"):rand{seed = 2}
local c = hk.alloc(n, "f32")
local B, R = hk.ops.binary, hk.ops.reduce
local forms = {
    {"add_f32(a, b, c, n)", function() B.add_f32(a, b, c, n) end},
    {"add(c, a, b)", function() B.add(c, a, b) end},
    {"add(a, a, b) in place", function() B.add(a, a, b) end},
    {"softmax(c, b, 32)", function() R.softmax(c, b, 32) end},
}
for _, f in ipairs(forms) do
    for _ = 1, 1000 do f[2]() end
    hk.sync()
    local runs = {}
    for r = 1, 7 do
        local t0 = hk.clock()
        for _ = 1, reps do f[2]() end
        hk.sync()
        runs[r] = (hk.clock() - t0) / reps * 1e6
    end
    table.sort(runs)
    print(("%-24s %.3f us per call (median of 7 x %d; min %.3f)"):format(f[1], runs[4], reps, runs[1]))
end
