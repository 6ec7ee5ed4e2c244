-- The reduce family on a rows x cols f32 matrix (default 4096 x 4096; pass
-- rows and cols as arg[1], arg[2]): row sum, max, argmax, softmax,
-- log_softmax, rmsnorm and layernorm, GB/s by device events (median of 20),
-- each next to a device-to-device copy of the same matrix in the same run
-- (the floor of an op that reads and writes each row once). Bytes counted
-- are what each op must move: the matrix read once, plus its output
-- (rows values, or the whole matrix) and the weights.
local rows = tonumber(arg and arg[1]) or 4096
local cols = tonumber(arg and arg[2]) or 4096
local n = rows * cols
local R = hk.ops.reduce
local x = hk.alloc(n, "f32"):rand{seed = 1, lo = -4, hi = 4}
local y = hk.alloc(n, "f32")
local per_row = hk.alloc(rows, "f32")
local idx = hk.alloc(rows, "i64")
local w = hk.alloc(cols, "f32"):rand{seed = 2, lo = 0.5, hi = 1.5}
local b = hk.alloc(cols, "f32"):rand{seed = 3, lo = -1, hi = 1}
local cases = {
    {"copy", function() y:copy(x) end, 8 * n},
    {"sum", function() R.sum(per_row, x, cols) end, 4 * n + 4 * rows},
    {"max", function() R.max(per_row, x, cols) end, 4 * n + 4 * rows},
    {"argmax", function() R.argmax(idx, x, cols) end, 4 * n + 8 * rows},
    {"softmax", function() R.softmax(y, x, cols) end, 8 * n},
    {"log_softmax", function() R.log_softmax(y, x, cols) end, 8 * n},
    {"rmsnorm", function() R.rmsnorm(y, x, w, 1e-5) end, 8 * n + 4 * cols},
    {"layernorm", function() R.layernorm(y, x, w, b, 1e-5) end, 8 * n + 8 * cols},
}
for _, c in ipairs(cases) do c[2]() end -- first use: load or compile
hk.sync()
local copy
print(("reduce on %d x %d f32 (%s)"):format(rows, cols, hk.device().name or "?"))
for _, c in ipairs(cases) do
    local r = hk.bench(c[2], {bytes = c[3], reps = 20, warmup = 3, print = false})
    copy = copy or r.gbps
    print(("  %-12s %8.3f ms %8.0f GB/s  %.2fx copy"):format(c[1], r.median, r.gbps, r.gbps / copy))
end
-- a check that the last results are sane: softmax rows sum to 1
R.softmax(y, x, cols)
local s = hk.alloc(rows, "f32")
R.sum(s, y, cols)
hk.sync()
print(math.abs(s[1] - 1) < 1e-3 and math.abs(s[rows] - 1) < 1e-3 and "  softmax rows sum to 1" or "  WRONG RESULT")
