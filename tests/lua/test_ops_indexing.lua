-- The indexing family (plugins/indexing): index_select, gather, scatter,
-- scatter_add and index_add x every data dtype x every index dtype through
-- hk.ops.indexing.OP(dst, src, ids, dim, right), against references
-- computed in double in Lua on random data; index_select's and gather's
-- outputs poisoned first, the others' destinations random (each keeps what
-- no index touches). Shapes [left, dim | n, right]: size 1, 7, a larger one
-- with no power of two, one whose rows move as 16-byte vectors, two long
-- rows (their columns split over blocks), and (f32, not under valgrind;
-- every dtype with HIPKIT_TEST_HEAVY=1) 1000003 elements. Then candle's "no index" value, an out-of-range index for each
-- op (an error naming the op, the kernel and the index; nothing written for
-- it), shape and dtype errors, and the kernels with blocks of odd shapes.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local I = hk.ops.indexing
local heavy = os.getenv("HIPKIT_TEST_HEAVY") == "1"
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
-- out-of-range flags are read at the next wait on GPUs (docs/plugins.md)
local defer_env = os.getenv("HIPKIT_DEFER_CHECKS")
local deferred
if defer_env and defer_env ~= "" then deferred = defer_env ~= "0" else deferred = hk.device().backend ~= "host" end
local dtypes = {"f32", "f64", "f16", "bf16", "i32", "u32", "i64"}
local itypes = {"u8", "u32", "i64"}
local isint = {i32 = true, u32 = true, i64 = true}
local none = {u8 = 0xff, u32 = 0xffffffff, i64 = math.maxinteger}
local eps = {f32 = 2 ^ -23, f64 = 2 ^ -52, f16 = 2 ^ -10, bf16 = 2 ^ -7}
local nan = 0 / 0

-- {left, dim, n, right}
local function shapes(dt)
    local s = {{1, 1, 1, 1}, {1, 7, 7, 1}, {7, 7, 5, 7}, {3, 37, 29, 67}, {2, 50, 40, 64}, {1, 3, 2, 5003}}
    if (dt == "f32" and not valgrind) or heavy then s[#s + 1] = {1, 1000003, 1000003, 1} end
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
    if dt == "i32" or dt == "i64" then return hk.alloc(n, dt):rand{lo = -1000, hi = 1000} end
    if dt == "u32" then return hk.alloc(n, dt):rand{lo = 0, hi = 100000} end
    return hk.alloc(n, dt):rand{lo = -2, hi = 2}
end

-- n random indices in [0, dim) (u8: below its "no index" 255)
local function random_ids(n, dim, it)
    local hi = dim - 1
    if it == "u8" and hi > 254 then hi = 254 end
    local v = {}
    for i = 1, n do v[i] = math.random(0, hi) end
    return v
end

local function wrap(dt, x)
    if dt == "i32" then return ((x + 0x80000000) & 0xffffffff) - 0x80000000 end
    if dt == "u32" then return x & 0xffffffff end
    return x -- i64: Lua integers wrap the same way
end

-- What each op does, in Lua on tables (1-based) of the buffers' values:
-- returns the expected dst and, for the adds, each element's sum of
-- magnitudes and number of adds (the rounding bound). ids[k] may be the
-- "no index" value nv.
local ref = {}
function ref.index_select(d, s, ids, L, D, N, R, nv)
    for l = 0, L - 1 do for j = 0, N - 1 do
        local id = ids[j + 1]
        for r = 0, R - 1 do d[(l * N + j) * R + r + 1] = id == nv and 0 or s[(l * D + id) * R + r + 1] end
    end end
end
function ref.gather(d, s, ids, L, D, N, R, nv)
    for l = 0, L - 1 do for j = 0, N - 1 do for r = 0, R - 1 do
        local i = (l * N + j) * R + r + 1
        d[i] = ids[i] == nv and 0 or s[(l * D + ids[i]) * R + r + 1]
    end end end
end
local function scatter_like(add, by_row)
    return function(d, s, ids, L, D, N, R, nv, dt, mag, cnt)
        for l = 0, L - 1 do for j = 0, N - 1 do for r = 0, R - 1 do
            local i = (l * N + j) * R + r + 1
            local id = by_row and ids[j + 1] or ids[i]
            if id ~= nv then
                local at = (l * D + id) * R + r + 1
                if add then
                    d[at] = isint[dt] and wrap(dt, d[at] + s[i]) or d[at] + s[i]
                    mag[at] = mag[at] + math.abs(s[i])
                    cnt[at] = cnt[at] + 1
                else
                    d[at] = s[i]
                end
            end
        end end end
    end
end
ref.scatter = scatter_like(false, false)
ref.scatter_add = scatter_like(true, false)
ref.index_add = scatter_like(true, true)

-- which side each op's ids index (into dst or src) and whether ids has the
-- full shape
local into_dst = {scatter = true, scatter_add = true, index_add = true}
local ids_full = {gather = true, scatter = true, scatter_add = true}
local ops = {"index_select", "gather", "scatter", "scatter_add", "index_add"}

-- Buffers for op on shape {L, D, N, R}: dst, src, the ids table.
local function operands(op, dt, it, L, D, N, R)
    local nids = ids_full[op] and L * N * R or N
    local ids = random_ids(nids, D, it)
    local nsrc = into_dst[op] and L * N * R or L * D * R
    local ndst = into_dst[op] and L * D * R or L * N * R
    local dst = into_dst[op] and random(ndst, dt) or poisoned(ndst, dt)
    return dst, random(nsrc, dt), ids
end

-- Runs op and compares dst with the reference; false and the first miss.
local function check(op, dt, it, s, ids_override)
    local L, D, N, R = s[1], s[2], s[3], s[4]
    local dst, src, ids = operands(op, dt, it, L, D, N, R)
    if ids_override then ids = ids_override(ids) end
    local want = dst:totable()
    local mag, cnt = {}, {}
    for i = 1, #want do mag[i], cnt[i] = math.abs(want[i]), 0 end
    ref[op](want, src:totable(), ids, L, D, N, R, none[it], dt, mag, cnt)
    I[op](dst, src, hk.from(ids, it), D, R)
    local got = dst:totable()
    for i = 1, #want do
        local g, w = got[i], want[i]
        local tol = (cnt[i] > 0 and not isint[dt]) and (cnt[i] + 1) * eps[dt] * mag[i] or 0
        if not (g == w or math.abs(g - w) <= tol) then
            return false, ("element %d: got %s, want %s"):format(i, tostring(g), tostring(w))
        end
    end
    return true
end

for _, op in ipairs(ops) do
    for _, dt in ipairs(dtypes) do
        for _, it in ipairs(itypes) do
            local ok, msg, where = true, nil, nil
            for _, s in ipairs(shapes(dt)) do
                if ok then
                    ok, msg = check(op, dt, it, s)
                    where = table.concat(s, "x")
                end
            end
            t.ok(ok, ("%s %s data, %s ids"):format(op, dt, it) .. (ok and "" or " [" .. where .. "]: " .. msg))
        end
    end
end

-- candle's "no index": the index dtype's largest value gives 0
-- (index_select, gather) or nothing (the others)
for _, op in ipairs(ops) do
    for _, it in ipairs(itypes) do
        local ok, msg = check(op, "f32", it, {2, 9, 6, 5}, function(ids)
            for k = 1, #ids, 2 do ids[k] = none[it] end
            return ids
        end)
        t.ok(ok, ("%s: %s's %d means no index"):format(op, it, none[it]) .. (ok and "" or ": " .. msg))
    end
end

-- An out-of-range index: the op fails naming itself, its kernel and the
-- first bad position and value; nothing is written for it, the rest is.
for _, op in ipairs(ops) do
    for _, it in ipairs(itypes) do
        local L, D, N, R = 2, 6, 5, 3
        local dst, src, ids = operands(op, "f32", it, L, D, N, R)
        local bad = it == "i64" and -3 or D + 1
        local p1, p2 = 2, #ids -- 0-based positions 1 and #ids - 1
        ids[p1], ids[p2] = bad, D
        local want = dst:totable()
        local mag, cnt = {}, {}
        for i = 1, #want do mag[i], cnt[i] = 0, 0 end
        local skipped = {}
        for k, v in ipairs(ids) do skipped[k] = (v == bad or v == D) and none[it] or v end
        ref[op](want, src:totable(), skipped, L, D, N, R, none[it], "f32", mag, cnt)
        if not into_dst[op] then -- no index leaves the poison there, not 0
            local p = poisoned(1, "f32")[1]
            for i = 1, #want do
                local j = (i - 1) % (N * R) // R
                local k = ids_full[op] and i or j + 1
                if skipped[k] == none[it] then want[i] = p end
            end
        end
        -- on a GPU the core reads the flag at the next wait (hk.sync here),
        -- which then raises the op's error; the CPU backend raises it at once
        local okc, err = pcall(function() I[op](dst, src, hk.from(ids, it), D, R); hk.sync() end)
        local msg = ("indexing.%s"):format(op)
        local kname = deferred and ("kernel %s_%s_f32: ids[%d] is out of range [0, %d)"):format(op, it, p1 - 1, D)
            or ("kernel %s_%s_f32: ids[%d] = %d is out of range [0, %d)"):format(op, it, p1 - 1, bad, D)
        local got, same = dst:totable(), true
        for i = 1, #want do
            local g, w = got[i], want[i]
            same = same and (g == w or (g ~= g and w ~= w) or math.abs(g - w) <= 1e-5 * (1 + math.abs(w)))
        end
        t.ok(not okc and tostring(err):find(msg, 1, true) and tostring(err):find(kname, 1, true) and same,
            ("%s with %s ids out of range: %s"):format(op, it, tostring(err)) ..
            (same and "" or " (dst differs from the reference without the bad indices)"))
    end
end

-- errors name the operand
local function fails(pattern, f, ...)
    local ok, err = pcall(f, ...)
    t.ok(not ok and tostring(err):find(pattern, 1, true), "error: " .. tostring(err))
end
local f12, u3 = random(12, "f32"), hk.from({0, 1, 2}, "u32")
fails("src has 12 elements, not a whole number of [dim, right] = [5, 1] blocks", I.index_select,
    hk.alloc(3, "f32"), f12, u3, 5)
fails("dst has 4 elements; its shape is [left, n, right] = [2, 3, 2] (12)", I.index_select,
    hk.alloc(4, "f32"), f12, u3, 3, 2)
fails("dst has 4 elements; its shape is [left, n, right] = [1, 6, 1] (6)", I.gather, hk.alloc(4, "f32"),
    f12, hk.alloc(6, "u32"), 12)
fails("ids has 6 elements; it must have src's shape [1, 4, 1] (4)", I.scatter, f12, random(4, "f32"),
    hk.alloc(6, "u32"), 12)
fails("src has 7 elements, not a whole number of [left, right] = [2, 3]", I.scatter, hk.alloc(12, "f32"),
    random(7, "f32"), hk.alloc(7, "u32"), 2, 3)
fails("src has 8 elements; its shape is [left, n, right] = [2, 3, 1] (6)", I.index_add, f12,
    random(8, "f32"), u3, 6)
fails("dst is f64; it must be src's dtype f32", I.gather, hk.alloc(12, "f64"), f12, hk.alloc(12, "u32"), 12)
fails("ids is i32; indices are u8, u32 or i64", I.index_select, hk.alloc(3, "f32"), f12, hk.alloc(3, "i32"), 12)
fails("src is u8; index_select takes f32, f64, f16, bf16, i32, u32, i64", I.index_select, hk.alloc(3, "u8"),
    hk.alloc(12, "u8"), u3, 12)
fails("expects buffers dst, src and ids and integers dim >= 1", I.scatter_add, f12, f12, u3, 0)
-- dst over src or ids: written while other threads still read them
fails("dst shares memory with src", I.gather, f12, f12, hk.alloc(12, "u32"), 12)
fails("dst shares memory with src", I.index_select, f12:view("f32", 24, 3), f12, u3, 12)
local ub = hk.alloc(12, "u32")
fails("dst shares memory with ids", I.index_select, ub:view("u32", 0, 3), hk.alloc(12, "u32"), ub:view("u32", 0, 3), 12)

-- the kernels themselves, launched with blocks of odd shapes: the rows
-- and the grid strides cover everything whatever the geometry
do
    local L, D, N, R = 3, 11, 9, 13
    local ok = true
    for _, launch in ipairs({{2, {1, 1}}, {{2, 3, 2}, {3, 5}}, {2, {64, 1}}, {{1, 2, 1}, {7, 3}}}) do
        for _, op in ipairs(ops) do
            local dst, src, ids = operands(op, "f32", "u32", L, D, N, R)
            local want = dst:totable()
            local mag, cnt = {}, {}
            for i = 1, #want do mag[i], cnt[i] = 0, 0 end
            ref[op](want, src:totable(), ids, L, D, N, R, none.u32, "f32", mag, cnt)
            local flag = hk.alloc(1, "u64"):fill(0)
            I.kernels[op .. "_u32_f32"]{grid = launch[1], block = launch[2]}(hk.from(ids, "u32"), src, dst, flag, L, D, N, R)
            local got = dst:totable()
            for i = 1, #want do ok = ok and math.abs(got[i] - want[i]) <= 1e-5 * (1 + math.abs(want[i])) end
            ok = ok and flag[1] == 0
        end
    end
    t.ok(ok, "every kernel with blocks 1x1, 3x5, 64x1 and 7x3 and grids 2, 2x3x2 and 1x2")
end

-- index_select's 16-byte path (rows of a multiple of 4 f32, 4 rows a
-- thread) under the same odd geometries, with an out-of-range index among them
do
    local L, D, N, R = 3, 11, 10, 8
    local ok, flagged = true, true
    for _, launch in ipairs({{2, {1, 1}}, {{2, 3, 2}, {3, 5}}, {2, {64, 1}}, {{1, 2, 1}, {7, 3}}, {1, {2, 1}}}) do
        local dst, src, ids = operands("index_select", "f32", "u32", L, D, N, R)
        local want = dst:totable()
        ref.index_select(want, src:totable(), ids, L, D, N, R, none.u32, "f32", {}, {})
        local flag = hk.alloc(1, "u64"):fill(0)
        I.kernels.index_select_u32_f32{grid = launch[1], block = launch[2]}(hk.from(ids, "u32"), src, dst, flag,
            L, D, N, R)
        local got = dst:totable()
        for i = 1, #want do ok = ok and got[i] == want[i] end
        ok = ok and flag[1] == 0
        ids[4] = D + 5
        I.kernels.index_select_u32_f32{grid = launch[1], block = launch[2]}(hk.from(ids, "u32"), src, dst, flag,
            L, D, N, R)
        flagged = flagged and flag[1] ~= 0
    end
    t.ok(ok and flagged, "index_select's vector path with odd blocks and grids; the flag raised for a bad id")
end

-- the out-of-range flags are words of one area the core reads back and
-- zeroes again only where raised: good and bad calls in any order are each
-- told apart (on a GPU each one's error comes at the wait after it)
do
    local D, N, R = 9, 6, 4
    local src = random(D * R, "f32")
    local good, bad = hk.from({0, 8, 3, 3, 1, 2}, "u32"), hk.from({0, 8, 3, 9, 1, 2}, "u32")
    local seq, got = {good, bad, good, good, bad, bad, good}, {}
    for k, ids in ipairs(seq) do
        local dst = poisoned(N * R, "f32")
        local okc = pcall(function() I.index_select(dst, src, ids, D, R); hk.sync() end)
        got[k] = (okc and "ok" or "err") .. (dst[1] == src[1] and "" or "?")
    end
    local text = table.concat(got, " ")
    t.is(text, "ok err ok ok err err ok", "index_select good/bad calls in turn: " .. text)
end

-- every kernel is listed with a doc line; the ops too
for _, p in ipairs(hk.plugins()) do
    if p.name == "indexing" then
        local ok = #p.kernels == 105 and #p.ops == 5
        for _, k in ipairs(p.kernels) do ok = ok and #k.doc > 0 end
        t.ok(ok, "hk.plugins() lists indexing's 105 kernels (each with a doc line) and 5 ops")
    end
end
t.done()
