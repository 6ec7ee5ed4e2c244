-- The reduce family on a rows x cols f32 matrix (default 8192 x 8192, the
-- issue's shape; pass rows and cols as arg[1], arg[2]): row sum, max, argmax, softmax,
-- log_softmax, rmsnorm and layernorm, GB/s by device events (median of 20),
-- each next to a device-to-device copy of the same matrix in the same run
-- (the floor of an op that reads and writes each row once). Bytes counted
-- are what each op must move: the matrix read once, plus its output
-- (rows values, or the whole matrix) and the weights.
local rows = tonumber(arg and arg[1]) or 8192
local cols = tonumber(arg and arg[2]) or 8192
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

-- Whole buffers of 2^28 f32 (arg[3] sets the count): the sum (one launch,
-- read once) and the inclusive cumsum (one pass: read once, written once),
-- next to a copy of the same buffer.
local n1 = tonumber(arg and arg[3]) or (1 << 28)
x, y = nil, nil
collectgarbage()
local a = hk.alloc(n1, "f32"):rand{seed = 4, lo = -1, hi = 1}
local c = hk.alloc(n1, "f32")
local s1 = hk.alloc(1, "f32")
local whole = {
    {"copy", function() c:copy(a) end, 8 * n1},
    {"sum", function() R.sum(s1, a) end, 4 * n1},
    {"cumsum", function() R.cumsum(c, a) end, 8 * n1},
}
for _, w in ipairs(whole) do w[2]() end
hk.sync()
print(("reduce on %d f32"):format(n1))
copy = nil
for _, w in ipairs(whole) do
    local r = hk.bench(w[2], {bytes = w[3], reps = 20, warmup = 3, print = false})
    copy = copy or r.gbps
    print(("  %-12s %8.3f ms %8.0f GB/s  %.2fx copy"):format(w[1], r.median, r.gbps, r.gbps / copy))
end
R.cumsum(c, a)
R.sum(s1, a)
hk.sync()
print(math.abs(c[n1] - s1[1]) <= 1e-3 * math.max(1, math.abs(s1[1])) and "  cumsum's last element is the sum" or
    ("  WRONG RESULT: cumsum ends %g, sum %g"):format(c[n1], s1[1]))
