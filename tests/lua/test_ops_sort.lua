-- The sort family (plugins/sort): row argsort (ascending, descending), row
-- top-k and the radix sort of a whole buffer, every op x key dtype, against
-- references computed in Lua (table.sort with the index as tie-break, so
-- the reference is the stable order), on random data, data with ties, and
-- data with NaN, +-inf and both zeros; outputs poisoned first. Row lengths
-- 1, 7, 1000, 1025 (and 5000 / 3000: rows longer than one block sorts);
-- full sorts of 1, 7 and 100003 keys (1000003 with HIPKIT_TEST_HEAVY=1).
-- Under valgrind: two key types per op, fewer long rows, 100003 keys of u32 only.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local S = hk.ops.sort
local heavy = os.getenv("HIPKIT_TEST_HEAVY") == "1"
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
local row_types = {"f32", "f16", "bf16", "f64", "i32", "u32", "i64"}
local radix_types = {"u32", "i32", "f32", "u64", "i64", "f64"}
-- valgrind runs all of this (the Lua side too) some 50 times slower: there
-- one 32-bit and one 64-bit key type take every path, the others take none
if valgrind then row_types, radix_types = {"f32", "i64"}, {"u32", "f64"} end
local isfloat = {f32 = true, f16 = true, bf16 = true, f64 = true}
local nan, inf = 0 / 0, math.huge

local function poisoned(n, dt)
    local b = hk.alloc(n, dt)
    if dt == "i64" then return b:fill(-777) end
    if dt == "u32" then return b:fill(0xdeadbeef) end
    if isfloat[dt] then return b:fill(nan) end
    return b:fill(dt == "u64" and 0xfeedface or -12345)
end

-- n values of dt: "random" (wide range), "ties" (a few distinct values) or
-- "special" (NaN, +-inf, +-0 among small values; floats only)
local function data(n, dt, kind)
    local v = {}
    for i = 1, n do
        local e
        if kind == "ties" then
            e = math.random(0, 3)
        elseif kind == "special" then
            local r = math.random(0, 7)
            e = r == 0 and nan or r == 1 and inf or r == 2 and -inf or r == 3 and -0.0 or r == 4 and 0.0
                or math.random(-2, 2) * 0.5
        elseif isfloat[dt] then
            e = (math.random() - 0.5) * 2000
        elseif dt == "u32" then
            e = math.random(0, 0xffffffff)
        elseif dt == "u64" then
            e = math.random(0, 1 << 40) * (math.random(0, 1) == 0 and 1 or 1 << 21)
        elseif dt == "i32" then
            e = math.random(-0x80000000, 0x7fffffff)
        else
            e = math.random(math.mininteger, math.maxinteger)
        end
        v[i] = e
    end
    return hk.from(v, dt)
end

-- u64 buffers read back as Lua integers (two's complement): compare them unsigned
local function lt(a, b, dt)
    if dt == "u64" then return math.ult(a, b) end
    if a ~= a then return false end -- NaN is the largest
    if b ~= b then return true end
    return a < b
end

-- the stable order (0-based positions) of v[lo + 1 .. lo + n]
local function ref_order(v, lo, n, dt, desc)
    local o = {}
    for i = 1, n do o[i] = i - 1 end
    table.sort(o, function(a, b)
        local x, y = v[lo + a + 1], v[lo + b + 1]
        if desc then x, y = y, x end
        if lt(x, y, dt) then return true end
        if lt(y, x, dt) then return false end
        return a < b
    end)
    return o
end

local function same(a, b) return a == b or (a ~= a and b ~= b) end

-- the first difference of got (from position lo + 1) and want, or nil
local function diff(got, lo, want, what)
    for i = 1, #want do
        if not same(got[lo + i], want[i]) then
            return ("%s %d: got %s, want %s"):format(what, i, tostring(got[lo + i]), tostring(want[i]))
        end
    end
end

local function check_argsort(dt, it, rows, cols, kind, desc)
    local x = data(rows * cols, dt, kind)
    local idx = poisoned(rows * cols, it)
    S.argsort(idx, x, cols, desc)
    local v, g, msg = x:totable(), idx:totable(), nil
    for r = 0, rows - 1 do
        msg = msg or diff(g, r * cols, ref_order(v, r * cols, cols, dt, desc), "row " .. r .. ", position")
    end
    t.ok(not msg, ("argsort %s -> %s %dx%d %s%s"):format(dt, it, rows, cols, kind, desc and " descending" or "") ..
        (msg and ": " .. msg or ""))
end

-- argsort: every dtype, both orders, rows of 1, 7, 1000 and 1025
local row_sizes = valgrind and {{3, 1}, {3, 7}, {2, 1025}} or {{3, 1}, {3, 7}, {2, 1000}, {2, 1025}}
local tie_cols = valgrind and 300 or 1000
for _, dt in ipairs(row_types) do
    for _, desc in ipairs({false, true}) do
        for _, s in ipairs(row_sizes) do
            check_argsort(dt, "u32", s[1], s[2], "random", desc)
        end
        check_argsort(dt, "u32", 3, tie_cols, "ties", desc)
        if isfloat[dt] then check_argsort(dt, "u32", 3, tie_cols, "special", desc) end
    end
    check_argsort(dt, "i64", 3, 7, "ties", false)
end
check_argsort("f32", "i64", 2, 1025, "special", true)
-- rows longer than one block sorts (4096 32-bit keys, 2048 64-bit): global
-- steps and merge passes
-- rows of 4 chunks or more: global steps at distances above the chunk too
check_argsort("f64", "i64", 1, 5000, "special", false)
if not valgrind then
    check_argsort("f32", "u32", 2, 5000, "ties", false)
    check_argsort("f64", "u32", 1, 3000, "random", true)
    check_argsort("f16", "i64", 1, 4097, "special", true)
    check_argsort("i64", "i64", 1, 2049, "ties", false)
    check_argsort("u32", "u32", 1, 9000, "ties", true)
end
if heavy then
    check_argsort("f32", "u32", 3, 100003, "random", false)
    check_argsort("f64", "i64", 2, 70001, "special", true)
end

-- top-k: values and indices of the k largest (or smallest) per row
local function check_topk(dt, it, rows, cols, k, kind, largest)
    local x = data(rows * cols, dt, kind)
    local values, indices = poisoned(rows * k, dt), poisoned(rows * k, it)
    S.topk(values, indices, x, cols, k, largest)
    local v, gv, gi, msg = x:totable(), values:totable(), indices:totable(), nil
    for r = 0, rows - 1 do
        local o = ref_order(v, r * cols, cols, dt, largest)
        local wi, wv = {}, {}
        for i = 1, k do wi[i], wv[i] = o[i], v[r * cols + o[i] + 1] end
        msg = msg or diff(gi, r * k, wi, "row " .. r .. ", index") or diff(gv, r * k, wv, "row " .. r .. ", value")
    end
    t.ok(not msg, ("topk %s -> %s %dx%d k=%d %s %s"):format(dt, it, rows, cols, k, kind,
        largest and "largest" or "smallest") .. (msg and ": " .. msg or ""))
end

for _, dt in ipairs(row_types) do
    check_topk(dt, "i64", 3, 1, 1, "random", true)
    check_topk(dt, "u32", 3, 7, 3, "ties", false)
    check_topk(dt, "i64", 2, 1000, 10, isfloat[dt] and "special" or "ties", true)
    check_topk(dt, "u32", 2, 1025, 1025, "random", false)
end
-- rows longer than one block sorts: the whole order in scratch memory first
check_topk("f64", "i64", 1, 2100, 2100, "ties", false)
if not valgrind then check_topk("f32", "u32", 2, 5000, 17, "special", true) end

-- the radix sort: keys in place, idx their original positions
local function check_sort(dt, n, kind, desc, pairs)
    local keys = data(n, dt, kind)
    local v = keys:totable()
    local idx = poisoned(n, "u32")
    if pairs then -- a payload: 1000 + the position, moved with the keys
        idx:iota(1000)
        S.sort_pairs(keys, idx, desc)
    else
        S.sort(keys, idx, desc)
    end
    local want = n <= 10000 and ref_order(v, 0, n, dt, desc)
    local gk, gi, msg = keys:totable(), idx:totable(), nil
    local base = pairs and 1000 or 0
    if want then
        local wk, wi = {}, {}
        for i = 1, n do wk[i], wi[i] = v[want[i] + 1], want[i] + base end
        msg = diff(gi, 0, wi, "position") or diff(gk, 0, wk, "key at position")
    else -- the same order, checked in O(n): a permutation, sorted, ties in position order
        local seen = {}
        for i = 1, n do
            local p = gi[i] - base
            if seen[p] or p < 0 or p >= n or not same(v[p + 1], gk[i]) then
                msg = msg or ("position %d: index %d"):format(i, gi[i])
            end
            seen[p] = true
            if i > 1 then
                local a, b = gk[i - 1], gk[i]
                if desc then a, b = b, a end
                if lt(b, a, dt) or (not lt(a, b, dt) and gi[i - 1] > gi[i]) then
                    msg = msg or ("positions %d, %d out of order"):format(i - 1, i)
                end
            end
        end
    end
    t.ok(not msg, ("%s %s n=%d %s%s"):format(pairs and "sort_pairs" or "sort", dt, n, kind,
        desc and " descending" or "") .. (msg and ": " .. msg or ""))
end

for _, dt in ipairs(radix_types) do
    for _, n in ipairs({1, 7, (valgrind and dt ~= "u32") and 20000 or 100003}) do
        check_sort(dt, n, "random", false)
    end
    check_sort(dt, valgrind and 3000 or 9000, "ties", true)
    if isfloat[dt] then
        check_sort(dt, valgrind and 2000 or 5000, "special", false)
        check_sort(dt, valgrind and 2000 or 5000, "special", true)
    end
    if heavy then check_sort(dt, 1000003, "random", dt == "f32") end
end
check_sort("f32", 10000, "ties", false, true)
check_sort("u64", 777, "random", true, true)
if not valgrind then check_sort("f32", 100003, "ties", true) end
-- the keys alone, descending
do
    local keys = data(3000, "i32", "ties")
    local v = keys:totable()
    S.sort(keys, true)
    local o, want = ref_order(v, 0, 3000, "i32", true), {}
    for i = 1, 3000 do want[i] = v[o[i] + 1] end
    local msg = diff(keys:totable(), 0, want, "key at position")
    t.ok(not msg, "sort i32 keys alone, descending" .. (msg and ": " .. msg or ""))
end

-- the kernels directly: by their rule (a block per row, the block from
-- cols), and with a block that is not a power of two (the shared-memory
-- network instead of registers), which must cover the row in one chunk
for _, case in ipairs({{"rule", nil, 100}, {"block 96", 96, 200}, {"block 96", 96, 7}}) do
    local rows, cols = 3, case[3]
    local x = data(rows * cols, "f32", "ties")
    local idx = poisoned(rows * cols, "u32")
    local vals, top = poisoned(rows * 5, "f32"), poisoned(rows * 5, "i64")
    local k = math.min(5, cols)
    if case[2] then
        S.kernels.argsort_f32_u32{grid = rows, block = case[2], shared = case[2] * 32}(x, idx, rows, cols, 1)
        S.kernels.topk_f32_i64{grid = 2, block = case[2], shared = case[2] * 32}(x, vals, top, rows, cols, k, 0)
    else
        S.argsort_f32_u32(x, idx, rows, cols, 1)
        S.topk_f32_i64(x, vals, top, rows, cols, k, 0)
    end
    local v, g, gt, msg = x:totable(), idx:totable(), top:totable(), nil
    for r = 0, rows - 1 do
        local o = ref_order(v, r * cols, cols, "f32", true)
        msg = msg or diff(g, r * cols, o, "argsort row " .. r .. ", position")
        local up = ref_order(v, r * cols, cols, "f32", false)
        local w = {}
        for i = 1, k do w[i] = up[i] end
        msg = msg or diff(gt, r * k, w, "topk row " .. r .. ", position")
    end
    t.ok(not msg, ("argsort_f32_u32 and topk_f32_i64 launched directly, %s, %dx%d"):format(case[1], rows, cols) ..
        (msg and ": " .. msg or ""))
end

-- errors name what is wrong
local function fails(pattern, f, ...)
    local ok, err = pcall(f, ...)
    t.ok(not ok and tostring(err):find(pattern, 1, true), "error: " .. tostring(err))
end
local x = data(12, "f32", "random")
fails("x has 12 elements, not a whole number of rows of 5", S.argsort, hk.alloc(12, "u32"), x, 5)
fails("the indices are i32; they must be u32 or i64", S.argsort, hk.alloc(12, "i32"), x, 4)
fails("idx has 11 elements; x has 12", S.argsort, hk.alloc(11, "u32"), x, 4)
fails("idx has 13 elements; x has 12", S.argsort, hk.alloc(13, "u32"), x, 4)
fails("idx must hold 12 u32 (as many as keys); got 13 u32", S.sort, x, hk.alloc(13, "u32"))
fails("vals must hold 12 u32 (as many as keys); got 14 u32", S.sort_pairs, x, hk.alloc(14, "u32"))
fails("x is u8; takes f32", S.argsort, hk.alloc(12, "u32"), hk.alloc(12, "u8"), 4)
fails("k must be in [1, cols = 4]", S.topk, hk.alloc(15, "f32"), hk.alloc(15, "u32"), x, 4, 5)
fails("operand values", S.topk, hk.alloc(5, "f32"), hk.alloc(6, "u32"), x, 4, 2)
fails("expects a buffer of f32", S.topk, hk.alloc(6, "f64"), hk.alloc(6, "u32"), x, 4, 2)
fails("idx must hold 12 u32 (as many as keys); got 11 u32", S.sort, x, hk.alloc(11, "u32"))
fails("keys are f16; takes u32, i32, f32, u64, i64, f64", S.sort, hk.alloc(4, "f16"))
fails("vals must hold 12 u32 (as many as keys); got 12 i64", S.sort_pairs, x, hk.alloc(12, "i64"))
fails("expects a buffer keys, optionally a buffer idx", S.sort, x, hk.alloc(12, "u32"), hk.alloc(12, "u32"))
-- a right count with a wrong kind names the argument, not the count
fails("argument 3 (cols) is a number with a fraction", S.argsort, hk.alloc(12, "u32"), x, 4.5)
fails("argument 5 (k) is a boolean", S.topk, hk.alloc(6, "f32"), hk.alloc(6, "u32"), x, 4, true)
fails("argument 2 (vals) is an integer", S.sort_pairs, x, 3)
fails("expects buffers keys and vals and optionally a boolean descending; got 4 arguments", S.sort_pairs, x, x,
      true, 1)

-- every kernel is listed with a doc line; the ops too
for _, p in ipairs(hk.plugins()) do
    if p.name == "sort" then
        local ok = #p.kernels == 7 * 2 * 5 + 6 * 2 + 2 and #p.ops == 4
        for _, k in ipairs(p.kernels) do ok = ok and #k.doc > 0 end
        t.ok(ok, "hk.plugins() lists sort's 84 kernels (each with a doc line) and 4 ops")
    end
end
t.done()
