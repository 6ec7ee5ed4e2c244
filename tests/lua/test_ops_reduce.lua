-- The reduce family (plugins/reduce): every row reduction and row
-- normalisation x every dtype through hk.ops.reduce.OP(out, x, cols, ...),
-- against references computed in double in Lua, on random data, data with
-- ties, NaN and +-inf; outputs poisoned first. Sizes rows x cols: 1x1, 7x7,
-- 4x1000 (a row length that is not a power of two), 2x4099 (more columns
-- than the largest block; under valgrind only for f32) and 3x1000003 for
-- f32 (not under valgrind; every dtype, and the row ops too, with
-- HIPKIT_TEST_HEAVY=1).
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local R = hk.ops.reduce
local heavy = os.getenv("HIPKIT_TEST_HEAVY") == "1"
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
local floats = {"f32", "f64", "f16", "bf16"}
local all = {"f32", "f64", "f16", "bf16", "i32", "u32"}
local isint = {i32 = true, u32 = true}
-- sums: error allowed relative to sum |x| (accumulation), plus the output's rounding
local acc_eps = {f32 = 1e-5, f64 = 1e-12, f16 = 1e-5, bf16 = 1e-5}
local out_eps = {f32 = 2 ^ -23, f64 = 2 ^ -52, f16 = 2 ^ -10, bf16 = 2 ^ -7}
-- the output's step below its smallest normal: a subnormal output rounds
-- absolutely (an f16 near 1e-5 is a few hundred 2^-24 steps, not 2^-10 of itself)
local out_tiny = {f32 = 2 ^ -149, f64 = 2 ^ -1074, f16 = 2 ^ -24, bf16 = 2 ^ -133}
local nan, inf = 0 / 0, math.huge

local function sizes(dt)
    local s = {{1, 1}, {7, 7}, {4, 1000}}
    if dt == "f32" or not valgrind then s[#s + 1] = {2, 4099} end
    if (dt == "f32" and not valgrind) or heavy then s[#s + 1] = {3, 1000003} end
    return s
end

local function poisoned(n, dt)
    local b = hk.alloc(n, dt)
    if dt == "i64" then return b:fill(-777) end
    if dt == "i32" then return b:fill(-123456789) end
    if dt == "u32" then return b:fill(0xdeadbeef) end
    return b:fill(nan)
end

local function random(n, dt)
    if dt == "i32" then return hk.alloc(n, dt):rand{lo = -1000, hi = 1000} end
    if dt == "u32" then return hk.alloc(n, dt):rand{lo = 0, hi = 100000} end
    return hk.alloc(n, dt):rand{lo = -2, hi = 2}
end

-- per-row references in double: {sum, sumabs, min, max, argmin, argmax}
-- (NaN: min/max NaN, arg of the first NaN; ties: the first index, 0-based)
local function row_refs(v, rows, cols)
    local out = {}
    for r = 0, rows - 1 do
        local s, sa, mn, mx, imn, imx, inan = 0, 0, nil, nil, 0, 0, nil
        for c = 0, cols - 1 do
            local e = v[r * cols + c + 1]
            s, sa = s + e, sa + math.abs(e)
            if e ~= e then
                inan = inan or c
            else
                if mn == nil or e < mn then mn, imn = e, c end
                if mx == nil or e > mx then mx, imx = e, c end
            end
        end
        if inan then mn, mx, imn, imx = nan, nan, inan, inan end
        out[r + 1] = {sum = s, sumabs = sa, min = mn, max = mx, argmin = imn, argmax = imx}
    end
    return out
end

local function same(a, b) return a == b or (a ~= a and b ~= b) end

-- Compares got (a table) with want[i] within tol(i); says the first miss.
local function close(got, want, tol)
    for i = 1, #want do
        local g, w = got[i], want[i]
        local ok = same(g, w) or (w == w and math.abs(g - w) <= tol(i))
        if not ok then return false, ("element %d: got %s, want %s"):format(i, tostring(g), tostring(w)) end
    end
    return true
end

local function wrap(dt, x)
    if dt == "i32" then return ((x + 0x80000000) & 0xffffffff) - 0x80000000 end
    if dt == "u32" then return x & 0xffffffff end
    return x
end

-- Every reduction of x (rows x cols of dt) against the references.
local function check_reductions(x, dt, rows, cols, what)
    local v = x:totable()
    local ref = row_refs(v, rows, cols)
    for _, op in ipairs({"sum", "mean", "min", "max", "argmin", "argmax"}) do
        if not (op == "mean" and isint[dt]) then
            local arg = op:sub(1, 3) == "arg"
            local out = poisoned(rows, arg and "i64" or dt)
            R[op](out, x, cols)
            local want, tol = {}, function() return 0 end
            for r = 1, rows do
                local e = ref[r]
                if op == "sum" then want[r] = isint[dt] and wrap(dt, e.sum) or e.sum
                elseif op == "mean" then want[r] = e.sum / cols
                else want[r] = e[op] end
            end
            if not isint[dt] and (op == "sum" or op == "mean") then
                tol = function(r)
                    local scale = op == "mean" and 1 / cols or 1
                    return acc_eps[dt] * ref[r].sumabs * scale + out_eps[dt] * math.abs(want[r]) + out_tiny[dt]
                end
            end
            local ok, msg = close(out:totable(), want, tol)
            t.ok(ok, ("%s %s %dx%d%s"):format(op, dt, rows, cols, what) .. (ok and "" or ": " .. msg))
        end
    end
end

for _, dt in ipairs(all) do
    for _, s in ipairs(sizes(dt)) do
        check_reductions(random(s[1] * s[2], dt), dt, s[1], s[2], "")
    end
end

-- ties: few distinct values, so rows repeat their extremes
for _, dt in ipairs(all) do
    local rows, cols = 9, 37
    local v = {}
    for i = 1, rows * cols do v[i] = math.random(0, 3) end
    check_reductions(hk.from(v, dt), dt, rows, cols, " with ties")
end

-- integer sums wrap; min/max keep the sign (i32) and the full range (u32)
do
    local x = hk.from({2147483647, 1, 5, -2147483648, -1, 0}, "i32")
    local s, m = poisoned(2, "i32"), poisoned(2, "i32")
    R.sum(s, x, 3)
    R.min(m, x, 3)
    local u = hk.from({0xffffffff, 2, 0x80000000, 7}, "u32")
    local us, um = poisoned(2, "u32"), poisoned(2, "u32")
    R.sum(us, u, 2)
    R.max(um, u, 2)
    t.ok(s[1] == -2147483643 and s[2] == 2147483647 and m[1] == 1 and m[2] == -2147483648 and
        us[1] == 1 and us[2] == 0x80000007 and um[1] == 0xffffffff and um[2] == 0x80000000,
        "i32 and u32 sums wrap; min and max over the full ranges")
end

-- NaN and +-inf: rows with one NaN, two NaNs, inf ties, all -inf, mixed
for _, dt in ipairs(floats) do
    local cols = 11
    local rows = {
        {1, 2, 3, nan, 5, 6, 7, nan, 9, 10, 11},
        {inf, 1, 2, inf, -inf, 0, -inf, 3, 4, 5, 6},
        {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, nan},
        {nan, 1, inf, -inf, 2, 3, 4, 5, 6, 7, 8},
        {5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 5},
    }
    local v = {}
    for _, row in ipairs(rows) do for _, e in ipairs(row) do v[#v + 1] = e end end
    local x = hk.from(v, dt)
    local ref = row_refs(v, #rows, cols)
    for _, op in ipairs({"min", "max", "argmin", "argmax"}) do
        local out = poisoned(#rows, op:sub(1, 3) == "arg" and "i64" or dt)
        R[op](out, x, cols)
        local want = {}
        for r = 1, #rows do want[r] = ref[r][op] end
        local ok, msg = close(out:totable(), want, function() return 0 end)
        t.ok(ok, ("%s %s with NaN and +-inf: NaN propagates, first index wins"):format(op, dt) .. (ok and "" or ": " .. msg))
    end
end

-- softmax, log_softmax, rmsnorm, layernorm
local rtol = {f32 = 1e-5, f64 = 1e-12, f16 = 2 ^ -9, bf16 = 2 ^ -6}
local atol = {f32 = 1e-6, f64 = 1e-13, f16 = 2 ^ -9, bf16 = 2 ^ -6}

local function check_rows(dt, rows, cols)
    local n = rows * cols
    local x = random(n, dt)
    local v = x:totable()
    local w = hk.alloc(cols, dt):rand{lo = 0.5, hi = 1.5}
    local b = hk.alloc(cols, dt):rand{lo = -1, hi = 1}
    local wv, bv = w:totable(), b:totable()
    local eps = 1e-5
    local eps32 = string.unpack("f", string.pack("f", eps)) -- the kernels' eps is a float
    local stats = {}
    for r = 0, rows - 1 do
        local m, s, q, mean = -inf, 0, 0, 0
        for c = 1, cols do m = math.max(m, v[r * cols + c]); mean = mean + v[r * cols + c] end
        mean = mean / cols
        local var = 0
        for c = 1, cols do
            local e = v[r * cols + c]
            s, q, var = s + math.exp(e - m), q + e * e, var + (e - mean) ^ 2
        end
        stats[r] = {m = m, s = s, rms = 1 / math.sqrt(q / cols + eps32), mean = mean,
            inv = 1 / math.sqrt(var / cols + eps32)}
    end
    local function at(i) return stats[(i - 1) // cols], v[i], (i - 1) % cols + 1 end
    local cases = {
        {"softmax", function(i) local st, e = at(i) return math.exp(e - st.m) / st.s end, {x, cols}},
        {"log_softmax", function(i) local st, e = at(i) return e - st.m - math.log(st.s) end, {x, cols}},
        {"rmsnorm", function(i) local st, e, c = at(i) return e * st.rms * wv[c] end, {x, w, eps}},
        {"layernorm", function(i) local st, e, c = at(i) return (e - st.mean) * st.inv * wv[c] + bv[c] end, {x, w, b, eps}},
        {"layernorm", function(i) local st, e, c = at(i) return (e - st.mean) * st.inv * wv[c] end, {x, w, eps}},
    }
    for k, case in ipairs(cases) do
        local out = poisoned(n, dt)
        R[case[1]](out, table.unpack(case[3]))
        local ok, _, rep = out:allclose(case[2], rtol[dt], case[1] == "log_softmax" and atol[dt] * 8 or atol[dt])
        t.ok(ok, ("%s%s %s %dx%d"):format(case[1], k == 5 and " (no bias)" or "", dt, rows, cols) ..
            (ok and "" or ": " .. tostring(rep)))
    end
end

for _, dt in ipairs(floats) do
    for _, s in ipairs(sizes(dt)) do
        if s[2] < 10 ^ 6 then check_rows(dt, s[1], s[2]) end
    end
end
if heavy then check_rows("f32", 3, 1000003) end

-- softmax with -inf and NaN: exp(-inf) is 0; a NaN row is all NaN (PyTorch's)
do
    local x = hk.from({-inf, 0, -inf, 0, 1, nan, -inf, -inf, -inf}, "f32")
    local out = poisoned(9, "f32")
    R.softmax(out, x, 3)
    local g = out:totable()
    local ok = g[1] == 0 and g[2] == 1 and g[3] == 0
    for i = 4, 9 do ok = ok and g[i] ~= g[i] end
    t.ok(ok, "softmax: -inf gives 0; a row with NaN, or of only -inf, gives NaN")
end

-- the kernels directly, with a block that is not a multiple of the warp
-- (the shared-memory tree alone) and one that is (shuffles, then the tree)
for _, block in ipairs({48, 96, 1024}) do
    local rows, cols = 5, 3001
    local x = random(rows * cols, "f32")
    local ref = row_refs(x:totable(), rows, cols)
    local s, a = poisoned(rows, "f32"), poisoned(rows, "i64")
    R.kernels.sum_f32{grid = rows, block = block, shared = block * 16}(x, s, rows, cols)
    R.kernels.argmax_f32{grid = rows, block = block, shared = block * 16}(x, a, rows, cols)
    local gs, ga, ok = s:totable(), a:totable(), true
    for r = 1, rows do
        ok = ok and math.abs(gs[r] - ref[r].sum) <= 1e-5 * ref[r].sumabs and ga[r] == ref[r].argmax
    end
    t.ok(ok, ("sum_f32 and argmax_f32 with a block of %d threads"):format(block))
end

-- errors name what is wrong
local function fails(pattern, f, ...)
    local ok, err = pcall(f, ...)
    t.ok(not ok and tostring(err):find(pattern, 1, true), "error: " .. tostring(err))
end
local x = random(12, "f32")
fails("x has 12 elements, not a whole number of rows of 5", R.sum, hk.alloc(3, "f32"), x, 5)
fails("operand out", R.max, hk.alloc(2, "f32"), x, 4)
fails("expects a buffer of i64", R.argmax, hk.alloc(3, "f32"), x, 4)
fails("x is i32; mean takes f32, f64, f16, bf16", R.mean, hk.alloc(3, "i32"), random(12, "i32"), 4)
fails("x is u8; sum takes f32, f64, f16, bf16, i32, u32", R.sum, hk.alloc(3, "u8"), hk.alloc(12, "u8"), 4)
fails("cols must be an integer in [1, 2^31)", R.softmax, hk.alloc(12, "f32"), x, 0)
fails("operand out", R.softmax, hk.alloc(11, "f32"), x, 4)
fails("operand b", R.layernorm, hk.alloc(12, "f32"), x, hk.alloc(4, "f32"), hk.alloc(3, "f32"), 1e-5)
fails("x has 12 elements, not a whole number of rows of 5", R.rmsnorm, hk.alloc(12, "f32"), x, hk.alloc(5, "f32"), 1e-5)
fails("expects buffers out, x, w (and b) and a number eps", R.layernorm, hk.alloc(12, "f32"), x, hk.alloc(4, "f32"))
-- a row kernel called through its rule: hk.null is refused where the kernel reads or
-- writes the operand, taken where its rule says the kernel tests it
-- (layernorm's b), and the session goes on
do
    local w, b, out, ref = random(4, "f32"), random(4, "f32"), hk.alloc(12, "f32"), hk.alloc(12, "f32")
    local ln = R.layernorm_f32
    fails("operand w (argument 2) is hk.null", ln, x, hk.null, b, out, 3, 4, 1e-5)
    fails("operand x (argument 1) is hk.null", ln, hk.null, w, b, out, 3, 4, 1e-5)
    fails("operand out (argument 4) is hk.null", ln, x, w, b, hk.null, 3, 4, 1e-5)
    fails("operand w (argument 2) is hk.null", R.rmsnorm_f32, x, hk.null, out, 3, 4, 1e-5)
    out:fill(0 / 0)
    ln(x, w, hk.null, out, 3, 4, 1e-5)
    R.layernorm(ref, x, w, 1e-5)
    local o, r, close = out:totable(), ref:totable(), true
    for i = 1, 12 do close = close and math.abs(o[i] - r[i]) <= 1e-5 * (1 + math.abs(r[i])) end
    t.ok(close, "layernorm's kernel takes hk.null for b (no bias), as the op without b")
end

-- every kernel is listed with a doc line: the row kernels with the row-block
-- geometry, the strided (fast_*), rope and cumsum ones explicit
for _, p in ipairs(hk.plugins()) do
    if p.name == "reduce" then
        local ok, rows = #p.kernels == 50 + 34 + 34 + 12 + 7 and #p.ops == 14, 0
        for _, k in ipairs(p.kernels) do
            local explicit = k.name:match("^fast_") or k.name:match("^rope") or k.name:match("^cumsum_") or
                k.name:match("_all_")
            ok = ok and #k.doc > 0 and k.geometry == (explicit and "explicit" or "row_block")
            if not explicit then rows = rows + 1 end
        end
        t.ok(ok and rows == 50, "hk.plugins() lists reduce's 137 kernels (50 row_block, 87 explicit, each with a doc line) and 14 ops")
    end
end
t.done()
