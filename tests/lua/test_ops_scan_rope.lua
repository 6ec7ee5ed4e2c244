-- The reduce family's whole-buffer reductions (one launch), strided
-- reductions (candle's fast_* form), rotary
-- embeddings (rope_i, rope, rope_thd) and one-pass prefix sums (cumsum),
-- against references computed in double in Lua on fresh random data,
-- outputs poisoned first. Sizes: 1, 7, a tile boundary and a length that
-- is not a power of two; 1000003 (cumsum f32) when not under valgrind.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local R = hk.ops.reduce
local heavy = os.getenv("HIPKIT_TEST_HEAVY") == "1"
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
local floats = {"f32", "f64", "f16", "bf16"}
local isint = {i32 = true, u32 = true, i64 = true}
local out_eps = {f32 = 2 ^ -23, f64 = 2 ^ -52, f16 = 2 ^ -10, bf16 = 2 ^ -7}
-- the output's step below its smallest normal: a subnormal output rounds
-- absolutely (an f16 near 1e-5 is a few hundred 2^-24 steps, not 2^-10 of itself)
local out_tiny = {f32 = 2 ^ -149, f64 = 2 ^ -1074, f16 = 2 ^ -24, bf16 = 2 ^ -133}
local acc_eps = {f32 = 2e-6, f64 = 1e-14, f16 = 2e-6, bf16 = 2e-6}
local nan = 0 / 0

local function poisoned(n, dt)
    local b = hk.alloc(n, dt)
    if isint[dt] or dt == "u32" then return b:fill(dt == "u32" and 0xdeadbeef or -777) end
    return b:fill(nan)
end

local function random(n, dt)
    if dt == "i32" or dt == "i64" then return hk.alloc(n, dt):rand{lo = -1000, hi = 1000} end
    if dt == "u32" then return hk.alloc(n, dt):rand{lo = 0, hi = 100000} end
    return hk.alloc(n, dt):rand{lo = -2, hi = 2}
end

local function same(a, b) return a == b or (a ~= a and b ~= b) end

-- got (a table) against want[i] within tol(i); the first miss, if any
local function close(got, want, tol)
    for i = 1, #want do
        local g, w = got[i], want[i]
        if not (same(g, w) or (w == w and math.abs(g - w) <= tol(i))) then
            return false, ("element %d: got %s, want %s"):format(i, tostring(g), tostring(w))
        end
    end
    return true
end

local function wrap(dt, x)
    if dt == "i32" then return ((x + 0x80000000) & 0xffffffff) - 0x80000000 end
    if dt == "u32" then return x & 0xffffffff end
    return x
end

------------------------------------------------- whole-buffer reductions
local function check_all(x, dt, what)
    local v, s, sa, mn, mx, imn, imx, inan = x:totable(), 0, 0, nil, nil, 0, 0, nil
    for i = 1, #v do
        local e = v[i]
        s, sa = s + e, sa + math.abs(e)
        if e ~= e then inan = inan or i - 1
        else
            if mn == nil or e < mn then mn, imn = e, i - 1 end
            if mx == nil or e > mx then mx, imx = e, i - 1 end
        end
    end
    if inan then mn, mx, imn, imx = nan, nan, inan, inan end
    local want = {sum = isint[dt] and wrap(dt, s) or s, mean = s / #v, min = mn, max = mx, argmin = imn, argmax = imx}
    for _, op in ipairs({"sum", "mean", "min", "max", "argmin", "argmax"}) do
        if not (op == "mean" and isint[dt]) then
            local arg = op:sub(1, 3) == "arg"
            local out = poisoned(2, arg and "i64" or dt)
            R[op](out, x)
            local tol = 0
            if not isint[dt] and (op == "sum" or op == "mean") then
                tol = 4 * acc_eps[dt] * sa / (op == "mean" and #v or 1) + out_eps[dt] * math.abs(want[op]) + out_tiny[dt]
            end
            local g, w = out[1], want[op]
            local ok = (same(g, w) or (w == w and math.abs(g - w) <= tol)) and same(out[2], poisoned(1, arg and "i64" or dt)[1])
            t.ok(ok, ("%s of all of %d %s%s"):format(op, #v, dt, what) .. (ok and "" or (": got %s, want %s"):format(tostring(g), tostring(w))))
        end
    end
end
for _, dt in ipairs({"f32", "f64", "f16", "bf16", "i32", "u32"}) do
    local ns = {1, 7, 4099, 70001}
    if not valgrind and (dt == "f32" or heavy) then ns[#ns + 1] = 1000003 end
    for _, n in ipairs(ns) do check_all(random(n, dt), dt, "") end
    local v = {}
    for i = 1, 5003 do v[i] = math.random(0, 3) end
    check_all(hk.from(v, dt), dt, " with ties")
end
for _, dt in ipairs(floats) do
    local x = random(9001, dt)
    x[4000], x[7000], x[100] = 1 / 0, 0 / 0, -1 / 0
    check_all(x, dt, " holding inf, NaN, -inf")
end
do
    local ok, err = pcall(R.sum, hk.alloc(1, "f32"), hk.alloc(0, "f32"))
    t.ok(not ok and tostring(err):find("x is empty", 1, true), "the sum of an empty buffer is refused: " .. tostring(err))
end

------------------------------------------------------------------ cumsum
local function check_cumsum(dt, n, exclusive)
    local x = random(n, dt)
    local v = x:totable()
    local out = poisoned(n, dt)
    if exclusive ~= nil then R.cumsum(out, x, exclusive) else R.cumsum(out, x) end
    local want, sa, s, abs = {}, {}, 0, 0
    for i = 1, n do
        if exclusive then want[i], sa[i] = s, abs end
        s, abs = s + v[i], abs + math.abs(v[i])
        if isint[dt] then s = wrap(dt, s) end
        if not exclusive then want[i], sa[i] = s, abs end
    end
    local tol = function() return 0 end
    if not isint[dt] then
        tol = function(i) return acc_eps[dt] * sa[i] * 4 + out_eps[dt] * math.abs(want[i]) + out_tiny[dt] end
    end
    local ok, msg = close(out:totable(), want, tol)
    t.ok(ok, ("cumsum %s n=%d%s"):format(dt, n, exclusive and " exclusive" or "") .. (ok and "" or ": " .. msg))
end

for _, dt in ipairs({"f32", "f64", "f16", "bf16", "i32", "u32", "i64"}) do
    local ns = {1, 7, 4096, 20011}
    if not valgrind and (dt == "f32" or heavy) then ns[#ns + 1] = 1000003 end
    for _, n in ipairs(ns) do check_cumsum(dt, n) end
    check_cumsum(dt, 9999, true)
end
check_cumsum("f32", 5000, false)

do -- a view not 16-byte aligned takes the element-by-element path, and wraps exactly
    local base = hk.alloc(10001, "i32"):rand{lo = -5, hi = 5}
    local x = base:view("i32", 4, 10000)
    local out = poisoned(10000, "i32")
    R.cumsum(out, x)
    local v, s, good = x:totable(), 0, true
    for i = 1, #v do s = s + v[i]; good = good and out[i] == s end
    t.ok(good, "cumsum of a view starting 4 bytes into its buffer")
    local ok, err = pcall(R.cumsum, hk.alloc(5, "f32"), hk.alloc(5, "u8"))
    t.ok(not ok and tostring(err):find("x is u8; cumsum takes", 1, true), "cumsum names a dtype it does not take: " .. tostring(err))
    ok, err = pcall(R.cumsum, hk.alloc(4, "f32"), hk.alloc(5, "f32"))
    t.ok(not ok and tostring(err):find("out", 1, true), "a short out is named: " .. tostring(err))
end

------------------------------------------------------------------- rope
-- references for candle's three layouts; cos/sin tables [tables, t, d/2]
local function rope_ref(kind, v, c, s, b, t_, h, d, per_batch)
    local out, hd = {}, d // 2
    for i = 1, #v do out[i] = 0 / 0 end
    local function rot(i1, i2, ics)
        local x0, x1, cc, ss = v[i1 + 1], v[i2 + 1], c[ics + 1], s[ics + 1]
        out[i1 + 1], out[i2 + 1] = x0 * cc - x1 * ss, x0 * ss + x1 * cc
    end
    for bi = 0, b - 1 do
        local tab = per_batch and bi * t_ * hd or 0
        for ti = 0, t_ - 1 do
            for hi = 0, h - 1 do
                for k = 0, hd - 1 do
                    local ics = tab + ti * hd + k
                    if kind == "rope_thd" then
                        local base = ((bi * t_ + ti) * h + hi) * d
                        rot(base + k, base + k + hd, ics)
                    else -- [b*h, t, d]
                        local base = ((bi * h + hi) * t_ + ti) * d
                        if kind == "rope_i" then rot(base + 2 * k, base + 2 * k + 1, ics)
                        else rot(base + k, base + k + hd, ics) end
                    end
                end
            end
        end
    end
    return out
end

for _, kind in ipairs({"rope_i", "rope", "rope_thd"}) do
    for _, dt in ipairs(floats) do
        for _, shape in ipairs({{1, 1, 1, 2}, {2, 3, 5, 6}, {3, 7, 2, 34}}) do
            for _, per_batch in ipairs({false, true}) do
                local b, t_, h, d = shape[1], shape[2], shape[3], shape[4]
                local n = b * t_ * h * d
                local x = random(n, dt)
                local tables = per_batch and b or 1
                local c = hk.alloc(tables * t_ * d // 2, dt):rand{lo = -1, hi = 1}
                local s = hk.alloc(tables * t_ * d // 2, dt):rand{lo = -1, hi = 1}
                local out = poisoned(n, dt)
                if kind == "rope_thd" then R[kind](out, x, c, s, t_, h, d) else R[kind](out, x, c, s, t_, d) end
                local want = rope_ref(kind, x:totable(), c:totable(), s:totable(), b, t_, h, d, per_batch)
                local ok, msg = close(out:totable(), want, function(i)
                    return 4 * out_eps[dt] * (math.abs(want[i]) + 2) end)
                t.ok(ok, ("%s %s b%d t%d h%d d%d%s"):format(kind, dt, b, t_, h, d,
                    per_batch and " (a table per batch)" or "") .. (ok and "" or ": " .. msg))
            end
        end
    end
end
do
    local x, c = hk.alloc(2 * 3 * 4, "f32"), hk.alloc(6, "f32")
    local ok, err = pcall(R.rope, hk.alloc(24, "f32"), x, c, hk.alloc(5, "f32"), 3, 4)
    t.ok(not ok and tostring(err):find("cos has 6 elements and sin 5", 1, true), "rope: cos and sin must match: " .. tostring(err))
    ok, err = pcall(R.rope_i, hk.alloc(24, "f32"), x, c, c, 3, 5)
    t.ok(not ok and tostring(err):find("d = 5 must be even", 1, true), "rope_i: an odd d is named: " .. tostring(err))
    ok, err = pcall(R.rope_thd, hk.alloc(24, "f32"), x, hk.alloc(7, "f32"), hk.alloc(7, "f32"), 3, 1, 4)
    t.ok(not ok and tostring(err):find("cos and sin hold 7 elements", 1, true), "rope_thd: a table of the wrong size is named: " .. tostring(err))
    ok, err = pcall(R.rope, hk.alloc(24, "f64"), x, c, c, 3, 4)
    t.ok(not ok and tostring(err):find("dst", 1, true), "rope: an out of another dtype is named: " .. tostring(err))
end

------------------------------------------------ strided reductions (fast_*)
-- x viewed with shape and strides; reduce over dims (0-based); the result
-- in row-major order of the kept dims
local function strided_ref(v, shape, strides, dims)
    local nd, red = #shape, {}
    for _, d in ipairs(dims) do red[d + 1] = true end
    local kept, rdims = {}, {}
    for d = 1, nd do if red[d] then rdims[#rdims + 1] = d else kept[#kept + 1] = d end end
    local function count(list) local c = 1 for _, d in ipairs(list) do c = c * shape[d] end return c end
    local nout, el, out = count(kept), count(rdims), {}
    for o = 0, nout - 1 do
        local idx, rem = {}, o
        for k = #kept, 1, -1 do idx[kept[k]] = rem % shape[kept[k]]; rem = rem // shape[kept[k]] end
        local r = {sum = 0, sumabs = 0}
        for e = 0, el - 1 do
            local rr = e
            for k = #rdims, 1, -1 do idx[rdims[k]] = rr % shape[rdims[k]]; rr = rr // shape[rdims[k]] end
            local off = 0
            for d = 1, nd do off = off + idx[d] * strides[d] end
            local x = v[off + 1]
            r.sum, r.sumabs = r.sum + x, r.sumabs + math.abs(x)
            if x ~= x then r.inan = r.inan or e
            else
                if r.min == nil or x < r.min then r.min, r.argmin = x, e end
                if r.max == nil or x > r.max then r.max, r.argmax = x, e end
            end
        end
        if r.inan then r.min, r.max, r.argmin, r.argmax = nan, nan, r.inan, r.inan end
        r.mean = r.sum / el
        out[o + 1] = r
    end
    return out, nout
end

local cases = {
    {{4, 5, 6}, {30, 6, 1}, {2}, "contiguous, last dim"},
    {{4, 5, 6}, {30, 6, 1}, {0, 2}, "contiguous, dims 0 and 2"},
    {{5, 7}, {1, 5}, {1}, "transposed (column sums of a row-major 7x5)"},
    {{3, 4, 9}, {80, 2, 8}, {1}, "strides with gaps and a broadcast-like step"},
    {{6, 1, 13}, {13, 13, 1}, {0, 1, 2}, "every dim"},
    {{2, 3}, {0, 1}, {0}, "a broadcast dim (stride 0)"},
}
for _, dt in ipairs({"f32", "f64", "f16", "bf16", "i32", "u32"}) do
    for _, cs in ipairs(cases) do
        local shape, strides, dims, what = cs[1], cs[2], cs[3], cs[4]
        local span = 1
        for d = 1, #shape do span = span + (shape[d] - 1) * strides[d] end
        local x = random(span, dt)
        local ref, nout = strided_ref(x:totable(), shape, strides, dims)
        for _, op in ipairs({"sum", "mean", "min", "max", "argmin", "argmax"}) do
            if not (op == "mean" and isint[dt]) then
                local arg = op:sub(1, 3) == "arg"
                local out = poisoned(nout, arg and "u32" or dt)
                R[op](out, x, shape, strides, dims)
                local want = {}
                for i = 1, nout do want[i] = ref[i][op] end
                if op == "sum" and isint[dt] then for i = 1, nout do want[i] = wrap(dt, want[i]) end end
                local tol = function() return 0 end
                if not isint[dt] and (op == "sum" or op == "mean") then
                    tol = function(i) return 4 * acc_eps[dt] * ref[i].sumabs + out_eps[dt] * math.abs(want[i]) + out_tiny[dt] end
                end
                local ok, msg = close(out:totable(), want, tol)
                t.ok(ok, ("%s %s over dims {%s} of %s"):format(op, dt, table.concat(dims, ","), what) ..
                    (ok and "" or ": " .. msg))
            end
        end
    end
end
do
    local x = hk.alloc(30, "f32"):rand()
    local ok, err = pcall(R.sum, hk.alloc(5, "f32"), x, {5, 7}, {1, 5}, {1})
    t.ok(not ok and tostring(err):find("x has 30 elements; the view reaches element 34", 1, true),
        "a view past the end of x is refused: " .. tostring(err))
    ok, err = pcall(R.sum, hk.alloc(5, "f32"), x, {5, 6}, {6, 1}, {1, 1})
    t.ok(not ok and tostring(err):find("dims[2] = 1 is not a new dim", 1, true), "a repeated dim is refused: " .. tostring(err))
    ok, err = pcall(R.max, hk.alloc(4, "f32"), x, {5, 6}, {6, 1}, {1})
    t.ok(not ok and tostring(err):find("out has 4 elements; it needs 5", 1, true), "a short out is named: " .. tostring(err))
    ok, err = pcall(R.argmax, hk.alloc(5, "i64"), x, {5, 6}, {6, 1}, {1})
    t.ok(not ok and tostring(err):find("dst", 1, true), "strided argmax writes u32 (candle's form): " .. tostring(err))
    ok, err = pcall(R.sum, hk.alloc(5, "f32"), x, {5, 6}, {6, 1.5}, {1})
    t.ok(not ok and tostring(err):find("not an integer", 1, true), "a table of non-integers is refused: " .. tostring(err))
end
t.done()
