-- The binary family (plugins/binary): every op x every dtype, contiguous
-- and strided, against Lua references on seeded random data.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local B = hk.ops.binary
local ops = {"add", "sub", "mul", "div", "minimum", "maximum"}
local dtypes = {"f32", "f16", "bf16", "f64", "i32", "i64", "u8", "u32"}
local isfloat = {f32 = true, f16 = true, bf16 = true, f64 = true}
-- relative tolerance: one ulp (references go through the kernel's roundings)
local rtol = {f32 = 2 ^ -23, f16 = 2 ^ -10, bf16 = 2 ^ -7, f64 = 2 ^ -52}
local atol = {f32 = 0, f16 = 2 ^ -24, bf16 = 0, f64 = 0}
local poison = {i32 = -123456789, i64 = -1234567890123, u8 = 0xa5, u32 = 0xdeadbeef}
-- the big contiguous size only for these; the rest run a middle size
local big = {f32 = true, f16 = true, i32 = true}

local function f32(x) return string.unpack("f", string.pack("f", x)) end

-- Integer results wrap to the dtype's width; division truncates toward 0.
local function wrap(dt, x)
    if dt == "i32" then return ((x + 0x80000000) & 0xffffffff) - 0x80000000
    elseif dt == "u32" then return x & 0xffffffff
    elseif dt == "u8" then return x & 0xff end
    return x -- i64: Lua's integers wrap the same way
end
local function idiv(a, b)
    local q = a // b
    if q * b ~= a and (a < 0) ~= (b < 0) then q = q + 1 end
    return q
end
local fop = {
    add = function(a, b) return a + b end,
    sub = function(a, b) return a - b end,
    mul = function(a, b) return a * b end,
    div = function(a, b) return a / b end,
    minimum = function(a, b) return math.min(a, b) end,
    maximum = function(a, b) return math.max(a, b) end,
}
local iop = {
    add = fop.add, sub = fop.sub, mul = fop.mul, div = idiv,
    minimum = fop.minimum, maximum = fop.maximum,
}

-- The reference of one element, as the kernel computes it before storing.
local function ref(op, dt, a, b)
    if not isfloat[dt] then return wrap(dt, iop[op](a, b)) end
    local r = fop[op](a, b)
    if dt == "f16" or dt == "bf16" then r = f32(r) end -- f32 arithmetic, then one rounding
    return r
end

-- n random values of dt; nonzero ones (never -1 for signed) if divisor.
local function values(dt, n, divisor)
    local v = {}
    for i = 1, n do
        local x
        if isfloat[dt] then
            x = math.random() * 8 - 4
            if divisor then x = (math.random() * 3.5 + 0.5) * (math.random(2) == 1 and 1 or -1) end
        elseif dt == "i32" then
            x = math.random(-0x80000000, 0x7fffffff)
        elseif dt == "i64" then
            x = math.random(math.mininteger, math.maxinteger)
        elseif dt == "u32" then
            x = math.random(0, 0xffffffff)
        else
            x = math.random(0, 255)
        end
        if divisor and not isfloat[dt] then
            if math.random(4) == 1 then x = x % 97 end -- small divisors too
            if x == 0 or x == -1 then x = 7 end
        end
        v[i] = x
    end
    return v
end

-- A buffer of dt from values, and the values as stored (f16/bf16 round).
local function input(dt, v)
    local buf = hk.from(v, dt)
    return buf, buf:totable()
end

-- got (a buffer) against want (a table of element references).
local function check(got, want, dt, name)
    if isfloat[dt] then
        local ok, _, msg = got:allclose(hk.from(want, dt), rtol[dt], atol[dt])
        if not t.ok(ok, name) then t.diag(msg) end
        return
    end
    local g = got:totable()
    for i = 1, #want do
        if g[i] ~= wrap(dt, want[i]) then
            t.ok(false, name)
            t.diag(("  [%d] got %s want %s"):format(i, tostring(g[i]), tostring(want[i])))
            return
        end
    end
    t.ok(true, name)
end

local function output(dt, n)
    return hk.alloc(n, dt):fill(isfloat[dt] and 0 / 0 or poison[dt])
end

-- Contiguous: sizes 1 and 1000003 (f32, f16, i32) or 4099, each through
-- the vector path (aligned buffers; 1000003 and 4099 leave a tail) and
-- 1001 through the scalar path (views one element in: not 16-byte aligned).
for _, dt in ipairs(dtypes) do
    local sizes = {1, big[dt] and 1000003 or 4099}
    for _, n in ipairs(sizes) do
        local a, av = input(dt, values(dt, n))
        local b, bv = input(dt, values(dt, n, true))
        for _, op in ipairs(ops) do
            local c = output(dt, n)
            B[op .. "_" .. dt](a, b, c, n)
            local want = {}
            for i = 1, n do want[i] = ref(op, dt, av[i], bv[i]) end
            check(c, want, dt, ("%s_%s, %d elements"):format(op, dt, n))
        end
    end
    local n = 1001
    local sz = hk.alloc(1, dt):bytes()
    local a0, av = input(dt, values(dt, n + 1))
    local b0, bv = input(dt, values(dt, n + 1, true))
    local a, b = a0:view(dt, sz, n), b0:view(dt, sz, n)
    for _, op in ipairs(ops) do
        local c = output(dt, n + 1):view(dt, sz, n)
        B[op .. "_" .. dt](a, b, c, n)
        local want = {}
        for i = 1, n do want[i] = ref(op, dt, av[i + 1], bv[i + 1]) end
        check(c, want, dt, ("%s_%s, %d elements, misaligned views"):format(op, dt, n))
    end
end

-- Strided: a 37x53 result. Layout 1: a transposed (stored 53x37, strides
-- {1, 37}), b a row of 53 broadcast down the rows (strides {0, 1}). Layout
-- 2: a contiguous ({53, 1}), b a column of 37 broadcast along the rows
-- ({1, 0}). Layout 3: info NULL (both contiguous).
-- The 1-D geometry rule wants every buffer to hold numel elements, so info
-- is padded with zeros and b is numel long; b's unused tail is poisoned
-- (NaN for floats) so that a read outside the broadcast shows.
local R, C = 37, 53
local numel = R * C
local function info(t_)
    for i = #t_ + 1, numel do t_[i] = 0 end
    return hk.from(t_, "u64")
end
local layouts = {
    {name = "a transposed, b broadcast over rows", info = {R, C, 1, R, 0, 1}, bn = C,
     ai = function(i, j) return j * R + i end, bi = function(_, j) return j end},
    {name = "a contiguous, b broadcast over columns", info = {R, C, C, 1, 1, 0}, bn = R,
     ai = function(i, j) return i * C + j end, bi = function(i, _) return i end},
    {name = "info NULL", bn = numel,
     ai = function(i, j) return i * C + j end, bi = function(i, j) return i * C + j end},
}
for _, lay in ipairs(layouts) do
    local inf = lay.info and info(lay.info) or hk.null
    for _, dt in ipairs(dtypes) do
        local a, av = input(dt, values(dt, numel))
        local bvals = values(dt, numel, true)
        for k = lay.bn + 1, numel do bvals[k] = isfloat[dt] and 0 / 0 or bvals[k] end
        local b, bv = input(dt, bvals)
        for _, op in ipairs(ops) do
            local c = output(dt, numel)
            B[op .. "_" .. dt .. "_strided"](numel, 2, inf, a, b, c)
            local want = {}
            for i = 0, R - 1 do
                for j = 0, C - 1 do
                    want[i * C + j + 1] = ref(op, dt, av[lay.ai(i, j) + 1], bv[lay.bi(i, j) + 1])
                end
            end
            check(c, want, dt, ("%s_%s_strided, %dx%d, %s"):format(op, dt, R, C, lay.name))
        end
    end
end

-- minimum/maximum propagate NaN from either side.
do
    local nan = 0 / 0
    local a = hk.from({nan, 1, nan, -2}, "f32")
    local b = hk.from({1, nan, nan, 3}, "f32")
    for _, op in ipairs({"minimum", "maximum"}) do
        local c = output("f32", 4)
        B[op .. "_f32"](a, b, c, 4)
        local g = c:totable()
        t.ok(g[1] ~= g[1] and g[2] ~= g[2] and g[3] ~= g[3] and g[4] == (op == "minimum" and -2 or 3),
            op .. "_f32 returns NaN when either operand is NaN")
    end
end

-- Wrong dtypes name the operand.
t.errors("parameter 2 'b'", "add_f32 with an f64 b names the operand", B.add_f32,
    hk.alloc(10, "f32"), hk.alloc(10, "f64"), hk.alloc(10, "f32"), 10)
t.errors("parameter 3 'c'", "mul_i32 with a u32 c names the operand", B.mul_i32,
    hk.alloc(10, "i32"), hk.alloc(10, "i32"), hk.alloc(10, "u32"), 10)
t.errors("parameter 3 'info'", "add_f16_strided with an i64 info names it", B.add_f16_strided,
    10, 1, hk.alloc(10, "i64"), hk.alloc(10, "f16"), hk.alloc(10, "f16"), hk.alloc(10, "f16"))
t.errors("operand c", "a c shorter than n names the operand", B.sub_f64,
    hk.alloc(10, "f64"), hk.alloc(10, "f64"), hk.alloc(5, "f64"), 10)

-- Every kernel is listed with its signature and a doc line.
local fam
for _, p in ipairs(hk.plugins()) do if p.name == "binary" then fam = p end end
local listed = 0
for _, k in ipairs(fam and fam.kernels or {}) do
    if #k.doc > 0 and #k.signature > 0 then listed = listed + 1 end
end
t.is(listed, #ops * #dtypes * 2, "hk.plugins() lists every binary kernel with a signature and doc")
t.done()
