-- The unary family (plugins/unary): every op x dtype, contiguous and
-- strided, against Lua references on seeded random data.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed)

-- erf and erfc in double: the Maclaurin series below 2.5, the continued
-- fraction for erfc above (both good to about 1e-14 here).
local SQRTPI = math.sqrt(math.pi)
local function erfc_cf(x) -- x >= 2.5
    local f = 0
    for k = 80, 1, -1 do f = (k / 2) / (x + f) end
    return math.exp(-x * x) / SQRTPI / (x + f)
end
local function erf(x)
    local a = math.abs(x)
    if a >= 2.5 then
        local r = 1 - erfc_cf(a)
        return x < 0 and -r or r
    end
    local sum, term, n = x, x, 0
    repeat
        n = n + 1
        term = -term * x * x / n
        local add = term / (2 * n + 1)
        sum = sum + add
    until math.abs(add) < 1e-17 * math.abs(sum)
    return 2 / SQRTPI * sum
end
local tanh = math.tanh or function(x)
    if math.abs(x) < 1e-4 then return x - x * x * x / 3 end
    local e = math.exp(-2 * math.abs(x))
    local r = (1 - e) / (1 + e)
    return x < 0 and -r or r
end

local ops = {
    {"neg", function(x) return -x end},
    {"abs", function(x) return math.abs(x) end},
    {"exp", math.exp},
    {"log", math.log, 0.01, 10},
    {"sqrt", math.sqrt, 0.01, 10},
    {"rsqrt", function(x) return 1 / math.sqrt(x) end, 0.01, 10},
    {"tanh", tanh},
    {"sin", math.sin},
    {"cos", math.cos},
    {"gelu_erf", function(x) return 0.5 * x * (1 + erf(x / math.sqrt(2))) end},
    {"gelu", function(x)
        return 0.5 * x * (1 + tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))
    end},
    {"relu", function(x) return x > 0 and x or 0 end},
    {"silu", function(x) return x / (1 + math.exp(-x)) end},
    {"sigmoid", function(x) return 1 / (1 + math.exp(-x)) end},
}

-- rtol, atol per dtype: f32 a few ulp; f16/bf16 one ulp of the rounded
-- reference (the kernel rounds a float result, the reference a double one);
-- f64 loose enough for the Lua erf.
local tol = {
    f32 = {2e-6, 1e-6}, f16 = {1e-3, 1e-5}, bf16 = {8e-3, 1e-5}, f64 = {1e-10, 1e-13},
}
local loose = {gelu = true, gelu_erf = true, silu = true}

local nseed = seed
local function random_x(n, dtype, lo, hi)
    nseed = nseed + 1
    return (hk.alloc(n, dtype):rand{seed = nseed, lo = lo or -5, hi = hi or 5})
end

-- want[i] = f(xs[idx(i)]), rounded to dtype by writing it into such a buffer.
local function reference(dtype, n, f, xs, idx)
    local want = hk.alloc(n, dtype, "host")
    if dtype == "f32" or dtype == "f64" then
        local w = {}
        for i = 1, n do w[i] = f(xs[idx and idx(i) or i]) end
        return w
    end
    for i = 1, n do want[i] = f(xs[idx and idx(i) or i]) end
    return want
end

local function check(name, y, want, rt, at)
    local ok, report = y:allclose(want, rt, at)
    t.ok(ok, name)
    if not ok then t.diag(report) end
end

-- The dtype-picking form hk.ops.unary.OP(y, x) runs OP itself: gelu picks
-- gelu_<dtype>, never gelu_erf_<dtype> (another op whose name starts alike)
for _, op in ipairs(ops) do
    local name, f, lo, hi = op[1], op[2], op[3], op[4]
    for _, dt in ipairs({"f32", "f64"}) do
        local rt, at = tol[dt][1], tol[dt][2]
        if loose[name] and dt == "f32" then rt = 1e-5 end
        local x = random_x(1001, dt, lo, hi)
        local y = hk.alloc(1001, dt):fill(0 / 0)
        hk.ops.unary[name](y, x)
        check(("%s(y, x) on %s runs %s_%s"):format(name, dt, name, dt), y, reference(dt, 1001, f, x:totable()), rt, at)
    end
end

local sizes = {f32 = {1, 1000003}, f16 = {1, 4099}, bf16 = {1, 4099}, f64 = {1, 4099}}
local R, C = 37, 53 -- the strided case: a 53x37 row-major x read as its 37x53 transpose
for _, op in ipairs(ops) do
    local name, f, lo, hi = op[1], op[2], op[3], op[4]
    for _, dt in ipairs({"f32", "f16", "bf16", "f64"}) do
        local rt, at = tol[dt][1], tol[dt][2]
        if loose[name] and dt == "f32" then rt = 1e-5 end
        local k = hk.ops.unary[name .. "_" .. dt]
        for _, n in ipairs(sizes[dt]) do
            local x = random_x(n, dt, lo, hi)
            local y = hk.alloc(n, dt):fill(0 / 0)
            k(x, y, n)
            check(("%s_%s over %d elements"):format(name, dt, n), y,
                  reference(dt, n, f, x:totable()), rt, at)
        end
        if dt == "f32" then
            -- 4 bytes in: not 16-byte aligned, the scalar path
            local n = 1001
            local xb, yb = random_x(n + 1, dt, lo, hi), hk.alloc(n + 1, dt):fill(0 / 0)
            local x, y = xb:view(dt, 4, n), yb:view(dt, 4, n)
            k(x, y, n)
            check(("%s_f32 over %d unaligned elements"):format(name, n), y,
                  reference(dt, n, f, x:totable()), rt, at)
        end
        -- strided: dims {R, C}, strides {1, R}; info is padded to numel
        -- elements because the 1-D rule wants every buffer >= the count.
        local numel = R * C
        local x = random_x(numel, dt, lo, hi)
        local info = hk.alloc(numel, "u64"):fill(0)
        info[1], info[2], info[3], info[4] = R, C, 1, R
        local y = hk.alloc(numel, dt):fill(0 / 0)
        hk.ops.unary[name .. "_" .. dt .. "_strided"](numel, 2, info, x, y)
        local idx = function(i) local r, c = (i - 1) // C, (i - 1) % C; return r + c * R + 1 end
        check(("%s_%s_strided over a transposed %dx%d"):format(name, dt, R, C), y,
              reference(dt, numel, f, x:totable(), idx), rt, at)
    end
end

-- The strided kernels' contiguous paths: info NULL, and row-major strides.
local n = 1000
local x = random_x(n, "f32")
local y = hk.alloc(n, "f32"):fill(0 / 0)
hk.ops.unary.sigmoid_f32_strided(n, 1, hk.null, x, y)
local xs = x:totable()
check("sigmoid_f32_strided with info NULL is contiguous", y,
      reference("f32", n, ops[14][2], xs), 2e-6, 1e-6)
local info = hk.alloc(n, "u64"):fill(0)
info[1], info[2], info[3], info[4] = 20, 50, 50, 1
y:fill(0 / 0)
hk.ops.unary.exp_f32_strided(n, 2, info, x, y)
check("exp_f32_strided with row-major strides", y, reference("f32", n, math.exp, xs), 2e-6, 1e-6)

-- NaN in, NaN out (relu too); exp overflows to infinity.
local s = hk.from({0 / 0, 1000, -1000, 0}, "f32")
local o = hk.alloc(4, "f32"):fill(7)
hk.ops.unary.relu_f32(s, o, 4)
t.ok(o[1] ~= o[1] and o[2] == 1000 and o[3] == 0 and o[4] == 0, "relu_f32 keeps NaN, zeroes negatives")
hk.ops.unary.exp_f32(s, o, 4)
t.ok(o[1] ~= o[1] and o[2] == math.huge and o[3] == 0 and o[4] == 1, "exp_f32 of NaN, 1000, -1000, 0")
hk.ops.unary.gelu_f32(s, o, 4)
t.ok(o[1] ~= o[1] and o[2] == 1000 and o[3] == 0 and o[4] == 0, "gelu_f32 at NaN, +-1000, 0")

local fam
for _, p in ipairs(hk.plugins()) do if p.name == "unary" then fam = p end end
local docs = 0
for _, kk in ipairs(fam and fam.kernels or {}) do
    if #kk.doc > 0 and #kk.signature > 0 then docs = docs + 1 end
end
t.is(docs, #ops * 4 * 2, "every unary kernel has a signature and a doc line")
t.done()
