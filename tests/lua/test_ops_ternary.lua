-- The ternary family (plugins/ternary): where_T(cond, t, f, y, n) for every
-- dtype, contiguous and strided, against a Lua reference on seeded random
-- data.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local T = hk.ops.ternary
local dtypes = {"f32", "f16", "bf16", "f64", "i32", "i64", "u8", "u32"}
local isfloat = {f32 = true, f16 = true, bf16 = true, f64 = true}
local poison = {i32 = -123456789, i64 = -1234567890123, u8 = 0xa5, u32 = 0xdeadbeef}
local big = {f32 = true, f16 = true, i32 = true}

local function values(dt, n)
    local v = {}
    for i = 1, n do
        if isfloat[dt] then v[i] = math.random() * 200 - 100
        elseif dt == "i32" then v[i] = math.random(-0x80000000, 0x7fffffff)
        elseif dt == "i64" then v[i] = math.random(math.mininteger, math.maxinteger)
        elseif dt == "u32" then v[i] = math.random(0, 0xffffffff)
        else v[i] = math.random(0, 255) end
    end
    return v
end
-- cond: 0 or a nonzero byte (any nonzero is true)
local function conds(n)
    local v = {}
    for i = 1, n do v[i] = math.random(2) == 1 and 0 or math.random(1, 255) end
    return v
end
local function input(dt, v)
    local buf = hk.from(v, dt)
    return buf, buf:totable()
end
local function output(dt, n)
    return hk.alloc(n, dt):fill(isfloat[dt] and 0 / 0 or poison[dt])
end
-- where copies values: exact comparison (NaN poison never matches).
local function check(got, want, dt, name)
    if isfloat[dt] then
        local ok, _, msg = got:allclose(hk.from(want, dt), 0, 0)
        if not t.ok(ok, name) then t.diag(msg) end
        return
    end
    local g = got:totable()
    for i = 1, #want do
        if g[i] ~= want[i] then
            t.ok(false, name)
            t.diag(("  [%d] got %s want %s"):format(i, tostring(g[i]), tostring(want[i])))
            return
        end
    end
    t.ok(true, name)
end

-- Contiguous: sizes 1 and 1000003 (f32, f16, i32) or 4099.
for _, dt in ipairs(dtypes) do
    for _, n in ipairs({1, big[dt] and 1000003 or 4099}) do
        local c, cv = input("u8", conds(n))
        local a, av = input(dt, values(dt, n))
        local b, bv = input(dt, values(dt, n))
        local y = output(dt, n)
        T["where_" .. dt](c, a, b, y, n)
        local want = {}
        for i = 1, n do want[i] = cv[i] ~= 0 and av[i] or bv[i] end
        check(y, want, dt, ("where_%s, %d elements"):format(dt, n))
    end
end

-- Strided: a 37x53 result. Layout 1: cond transposed (stored 53x37,
-- strides {1, 37}), t a row of 53 broadcast down the rows ({0, 1}), f a
-- column of 37 broadcast along the rows ({1, 0}). Layout 2: cond a column
-- ({1, 0}), t contiguous ({53, 1}), f one scalar ({0, 0}). Layout 3: info
-- NULL (all contiguous).
-- The 1-D geometry rule wants every buffer to hold numel elements, so info
-- is padded with zeros and every operand is numel long; the unused tails of
-- broadcast operands are poisoned (NaN for floats).
local R, C = 37, 53
local numel = R * C
local function info(v)
    for i = #v + 1, numel do v[i] = 0 end
    return hk.from(v, "u64")
end
local function idx(kind)
    if kind == "t" then return function(i, j) return j * R + i end, numel end
    if kind == "row" then return function(_, j) return j end, C end
    if kind == "col" then return function(i, _) return i end, R end
    if kind == "one" then return function() return 0 end, 1 end
    return function(i, j) return i * C + j end, numel
end
local layouts = {
    {name = "cond transposed, t a broadcast row, f a broadcast column",
     info = {R, C, 1, R, 0, 1, 1, 0}, k = {"t", "row", "col"}},
    {name = "cond a broadcast column, t contiguous, f a scalar",
     info = {R, C, 1, 0, C, 1, 0, 0}, k = {"col", "c", "one"}},
    {name = "info NULL", k = {"c", "c", "c"}},
}
for _, lay in ipairs(layouts) do
    local inf = lay.info and info(lay.info) or hk.null
    local ci, cn = idx(lay.k[1])
    local ti, tn = idx(lay.k[2])
    local fi, fn = idx(lay.k[3])
    for _, dt in ipairs(dtypes) do
        local cvals = conds(numel)
        local c, cv = input("u8", cvals)
        local tv0, fv0 = values(dt, numel), values(dt, numel)
        if isfloat[dt] then
            for k = tn + 1, numel do tv0[k] = 0 / 0 end
            for k = fn + 1, numel do fv0[k] = 0 / 0 end
        end
        local a, av = input(dt, tv0)
        local b, bv = input(dt, fv0)
        local y = output(dt, numel)
        T["where_" .. dt .. "_strided"](numel, 2, inf, c, a, b, y)
        local want = {}
        for i = 0, R - 1 do
            for j = 0, C - 1 do
                want[i * C + j + 1] = cv[ci(i, j) + 1] ~= 0 and av[ti(i, j) + 1] or bv[fi(i, j) + 1]
            end
        end
        check(y, want, dt, ("where_%s_strided, %dx%d, %s"):format(dt, R, C, lay.name))
    end
end

-- Wrong dtypes name the operand.
t.errors("parameter 1 'cond'", "where_f32 with an f32 cond names the operand", T.where_f32,
    hk.alloc(10, "f32"), hk.alloc(10, "f32"), hk.alloc(10, "f32"), hk.alloc(10, "f32"), 10)
t.errors("parameter 3 'f'", "where_i64 with an i32 f names the operand", T.where_i64,
    hk.alloc(10, "u8"), hk.alloc(10, "i64"), hk.alloc(10, "i32"), hk.alloc(10, "i64"), 10)
t.errors("parameter 5 't'", "where_bf16_strided with an f16 t names the operand", T.where_bf16_strided,
    10, 1, hk.null, hk.alloc(10, "u8"), hk.alloc(10, "f16"), hk.alloc(10, "bf16"), hk.alloc(10, "bf16"))
t.errors("operand y", "a y shorter than n names the operand", T.where_u8,
    hk.alloc(10, "u8"), hk.alloc(10, "u8"), hk.alloc(10, "u8"), hk.alloc(5, "u8"), 10)

local fam
for _, p in ipairs(hk.plugins()) do if p.name == "ternary" then fam = p end end
local listed = 0
for _, k in ipairs(fam and fam.kernels or {}) do
    if #k.doc > 0 and #k.signature > 0 then listed = listed + 1 end
end
t.is(listed, #dtypes * 2, "hk.plugins() lists every ternary kernel with a signature and doc")
t.done()
