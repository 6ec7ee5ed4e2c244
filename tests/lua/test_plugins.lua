-- hk.plugins() and hk.ops.<family>.<kernel>(...) against Lua references.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed)

local fams = {}
for _, p in ipairs(hk.plugins()) do fams[p.name] = p end
t.ok(fams.fill and fams.affine, "hk.plugins() lists the fill and affine families")
local docs = 0
for _, k in ipairs(fams.affine and fams.affine.kernels or {}) do
    if #k.doc > 0 and #k.signature > 0 then docs = docs + 1 end
end
t.ok(docs >= 4, "each affine kernel has a signature and a doc line")
local op = fams.affine and fams.affine.ops and fams.affine.ops[1]
t.ok(op and op.name == "affine_twice" and op.usage == "x, y, a, b" and #op.doc > 0,
    "hk.plugins() lists the family's host-side ops with usage and doc")

for _, n in ipairs({1, 1000003}) do
    local y = hk.alloc(n, "f32"):fill(0 / 0)
    local v = math.random() * 10 - 5
    hk.ops.fill.fill_f32(y, v, n)
    local want = string.unpack("f", string.pack("f", v))
    t.ok(y:allclose(function() return want end, 0, 0), ("fill_f32 over %d elements"):format(n))

    local x = hk.alloc(n, "f32"):rand{lo = -3, hi = 3}
    local out = hk.alloc(n, "f32"):fill(0 / 0)
    local a, b = math.random() * 4 - 2, math.random() * 4 - 2
    hk.ops.affine.affine_f32(x, out, a, b, n)
    t.ok(out:allclose(function(i) return a * x[i] + b end, 1e-6, 1e-6), ("affine_f32 over %d elements"):format(n))
end

local h = hk.alloc(1000, "f16"):fill(0 / 0)
hk.ops.fill.fill_f16(h, 1.5, #h)
t.ok(h:allclose(function() return 1.5 end, 0, 0), "fill_f16 rounds into half precision")

local ok, err = pcall(hk.ops.affine.affine_f32, hk.alloc(10, "f64"), hk.alloc(10, "f32"), 1, 0, 10)
t.ok(not ok and tostring(err):find("parameter 1 'x'", 1, true), "a wrong dtype names the operand: " .. tostring(err))
ok, err = pcall(hk.ops.affine.affine_f32, hk.alloc(10, "f32"), hk.alloc(5, "f32"), 1, 0, 10)
t.ok(not ok and tostring(err):find("operand y", 1, true), "a buffer shorter than the count names the operand: " .. tostring(err))
ok, err = pcall(function() return hk.ops.nosuch end)
t.ok(not ok and tostring(err):find("no plugin family 'nosuch'", 1, true), "an unknown family lists the loaded ones")
ok, err = pcall(function() return hk.ops.fill.nosuch end)
t.ok(not ok and tostring(err):find("fill_f32", 1, true), "an unknown kernel lists the family's kernels")
-- a host-side op chains two launches
do
    local n = 1003
    local x = hk.alloc(n, "f32"):rand{lo = -2, hi = 2}
    local y = hk.alloc(n, "f32"):fill(0 / 0)
    hk.ops.affine.affine_twice(x, y, 1.5, -0.25)
    t.ok(y:allclose(function(i) return 1.5 * (1.5 * x[i] - 0.25) - 0.25 end, 1e-5, 1e-6),
        "affine_twice: a host-side op runs two launches, the second on the first's output")
    local okop, eop = pcall(hk.ops.affine.affine_twice, x, y, 1.5)
    t.ok(not okop and tostring(eop):find("affine.affine_twice(x, y, a, b)", 1, true),
        "a wrong call of an op says its usage: " .. tostring(eop))
    local okk, ek = pcall(hk.ops.affine.affine_twice, hk.alloc(8, "i32"), hk.alloc(8, "i32"), 1, 0)
    t.ok(not okk and tostring(ek):find("affine_i32", 1, true), "an op's launch error names what was missing: " .. tostring(ek))
end

-- ops without a type suffix pick the kernel from the buffers' dtypes
local x64 = hk.alloc(1000, "f64"):rand{lo = -1, hi = 1}
local y64 = hk.alloc(1000, "f64"):fill(0 / 0)
local r = hk.ops.affine.affine(y64, x64, 3, -2)
t.ok(r == y64 and y64:allclose(function(i) return 3 * x64[i] - 2 end, 1e-12, 0),
    "hk.ops.affine.affine(out, x, a, b) picks affine_f64 and returns out")
local yi = hk.alloc(100, "i32"):fill(0)
hk.ops.fill.fill(yi, -7)
t.ok(yi:allclose(function() return -7 end, 0, 0), "hk.ops.fill.fill(out, v) picks fill_i32")
local yu = hk.alloc(37, "u8"):fill(9)
hk.ops.fill.fill(yu, 255)
t.ok(yu:allclose(function() return 255 end, 0, 0), "fill on u8 writes 255")
ok, err = pcall(hk.ops.fill.fill, yu, 300)
t.ok(not ok and tostring(err):find("out of range", 1, true) and yu[1] == 255,
    "fill on u8 refuses 300 rather than write 300 mod 256: " .. tostring(err))
-- a float with an integer value (35 / 5 is 7.0 in Lua 5.4) is that integer to an op, in a table too
local x35 = hk.alloc(35):rand{lo = -1, hi = 1}
local s1, s2 = hk.alloc(5):fill(0 / 0), hk.alloc(5):fill(0 / 0)
hk.ops.reduce.sum(s1, x35, 7)
hk.ops.reduce.sum(s2, x35, 35 / 5)
t.ok(s1:allclose(s2, 0, 0) and s1[1] == s1[1], "reduce.sum(out, x, 35 / 5) takes 7.0 as 7")
ok, err = pcall(hk.ops.reduce.sum, s2, x35, 3.5)
t.ok(not ok, "... and 3.5 is refused: " .. tostring(err))
local p1, p2 = hk.alloc(4):fill(0 / 0), hk.alloc(4):fill(0 / 0)
local x16 = hk.alloc(16):rand{lo = -1, hi = 1}
hk.ops.conv.max_pool2d(p1, x16, {1, 1, 4, 4}, 2)
hk.ops.conv.max_pool2d(p2, x16, {1, 1, 8 / 2, 4.0}, 4 / 2)
t.ok(p1:allclose(p2, 0, 0) and p1[1] == p1[1], "conv.max_pool2d with 4.0 in its shape table and 4 / 2")
ok, err = pcall(hk.ops.affine.affine, hk.alloc(8, "i32"), hk.alloc(8, "f32"), 2, 1)
t.ok(not ok and tostring(err):find("no kernel writes i32 from f32", 1, true) and tostring(err):find("affine_f32", 1, true),
    "no kernel for those dtypes: says so and lists the family's kernels")
t.done()
