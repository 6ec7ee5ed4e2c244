-- Outputs that share memory with inputs (plugin_launch.c's overlap check,
-- and the host ops that chain kernels): exactly in place works where every
-- thread reads its elements before writing them; any other overlap is
-- refused by name, with the input left as it was. References are Lua loops
-- in double on seeded random data; outputs are poisoned first.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed)

local U, B, C, R, S = hk.ops.unary, hk.ops.binary, hk.ops.cast, hk.ops.reduce, hk.ops.sort
local function rseed() return math.random(1, 1 << 30) end

-- the largest |got - want(i)| / (1 + |want(i)|) over elements 1..n
local function worst(buf, n, want)
    local g, w = buf:totable(1, n), 0
    for i = 1, n do
        local e = math.abs(g[i] - want(i)) / (1 + math.abs(want(i)))
        if not (e <= w) then w = e end -- NaN counts as the worst
    end
    return w
end

-- a refused call: its message has every part, and `keep` still holds `orig`
local function refused(name, parts, keep, orig, f, ...)
    local ok, err = pcall(f, ...)
    local all = not ok
    for _, p in ipairs(parts) do all = all and tostring(err):find(p, 1, true) ~= nil end
    t.ok(all, name .. " is refused by name")
    if not all then t.diag(tostring(err)) end
    if keep then
        local a, b, same = keep:totable(1, #keep), orig:totable(1, #orig), true
        for i = 1, #orig do same = same and (a[i] == b[i] or (a[i] ~= a[i] and b[i] ~= b[i])) end
        t.ok(same, name .. ": the input is untouched")
    end
end

local n = 100003 -- several blocks, not a power of two

-- elementwise, exactly in place: right
do
    local x = hk.alloc(n, "f32"):rand{seed = rseed(), lo = -2, hi = 2}
    local v = x:totable(1, n)
    U.exp(x, x)
    t.ok(worst(x, n, function(i) return math.exp(v[i]) end) < 1e-6, "unary.exp(x, x) is right in place")
    local a = hk.alloc(n, "f32"):rand{seed = rseed()}
    local b = hk.alloc(n, "f32"):rand{seed = rseed()}
    local va, vb = a:totable(1, n), b:totable(1, n)
    B.add(a, a, b)
    t.ok(worst(a, n, function(i) return va[i] + vb[i] end) < 1e-6, "binary.add(a, a, b) is right in place")
    local c = hk.alloc(n, "f32"):rand{seed = rseed(), lo = -1000, hi = 1000}
    local vc = c:totable(1, n)
    local ci = c:view("i32")
    C.cast(ci, c) -- same element size, same first byte
    t.ok(worst(ci, n, function(i) return vc[i] < 0 and math.ceil(vc[i]) or math.floor(vc[i]) end) == 0,
         "cast f32 -> i32 in one buffer (same element size) truncates every element")
end

-- elementwise, shifted by whole elements either way: refused
do
    local buf = hk.alloc(n + 4, "f32"):rand{seed = rseed()}
    local orig = buf:clone()
    refused("unary.exp with y one element after x", {"unary.exp", "operand y", "shares memory with x",
                                                       "4 bytes", "give y a buffer of its own"},
            buf, orig, U.exp, buf:view("f32", 4, n), buf:view("f32", 0, n))
    refused("binary.add with c four elements before a", {"operand c", "shares memory with a"}, buf, orig,
            B.add, buf:view("f32", 0, n), buf:view("f32", 16, n), hk.alloc(n, "f32"))
    -- apart within one buffer, and y ending where x starts: fine
    local y, x = buf:view("f32", 0, n // 2), buf:view("f32", 4 * (n // 2), n // 2)
    local v = x:totable(1, n // 2)
    U.neg(y, x)
    t.ok(worst(y, n // 2, function(i) return -v[i] end) == 0, "y right before x in one buffer is allowed and right")
    -- an operand longer than the kernel uses: only the elements it covers count
    local long = buf:view("f32", 0, n) -- covers x too, but neg_f32 writes its first n // 2
    y:fill(0 / 0)
    U.neg_f32(x, long, n // 2)
    t.ok(worst(long, n // 2, function(i) return -v[i] end) == 0,
         "a longer y whose unused tail holds x is allowed and right")
end

-- dtypes of different sizes over one byte buffer: refused both ways
do
    local buf = hk.alloc(4 * n, "u8")
    local h = buf:view("f16", 0, n):rand{seed = rseed(), lo = -100, hi = 100}
    local orig = h:clone()
    refused("cast f16 -> f32 in one buffer", {"cast.cast_f16_f32", "operand y", "shares memory with x"}, h, orig,
            C.cast, buf:view("f32", 0, n), h)
    local f = buf:view("f32", 0, n):rand{seed = rseed()}
    local forig = f:clone()
    refused("cast f32 -> f16 in one buffer", {"operand y", "shares memory with x", "2-byte elements"}, f, forig,
            C.cast, buf:view("f16", 0, n), f)
end

-- x read through strides, y the same buffer: refused
do
    local r, c = 31, 53
    local m = hk.alloc(r * c, "f32"):rand{seed = rseed()}
    local info = hk.from({c, r, 1, c}, "u64") -- x transposed
    refused("a strided kernel writing over its strided input", {"neg_f32_strided", "through strides"}, m, m:clone(),
            U.neg_f32_strided, r * c, 2, info, m, m)
end

-- per-row ops
do
    local rows, cols = 37, 1001
    local x = hk.alloc(rows * cols, "f32"):rand{seed = rseed(), lo = -3, hi = 3}
    local v = x:totable(1, rows * cols)
    R.softmax(x, x, cols) -- a block reads its row before it writes it
    local want = {}
    for r = 0, rows - 1 do
        local mx, s = -math.huge, 0
        for c = 1, cols do mx = math.max(mx, v[r * cols + c]) end
        for c = 1, cols do s = s + math.exp(v[r * cols + c] - mx) end
        for c = 1, cols do want[r * cols + c] = math.exp(v[r * cols + c] - mx) / s end
    end
    t.ok(worst(x, rows * cols, function(i) return want[i] end) < 1e-6, "reduce.softmax(x, x) is right in place")
    local y = hk.alloc(rows * cols, "f32"):rand{seed = rseed()}
    local yo = y:clone()
    refused("reduce.sum into x's own first elements", {"reduce.sum", "operand out", "shares memory with x"}, y, yo,
            R.sum, y:view("f32", 0, rows), y, cols)
    refused("reduce.softmax one row ahead of x", {"operand out", "shares memory with x"}, y, yo, R.softmax,
            y:view("f32", 4 * cols, (rows - 1) * cols), y:view("f32", 0, (rows - 1) * cols), cols)
    local z = hk.alloc(n, "f64"):rand{seed = rseed()}
    local vz = z:totable(1, n)
    R.cumsum(z, z)
    local acc, pre = 0, {}
    for i = 1, n do acc = acc + vz[i]; pre[i] = acc end
    t.ok(worst(z, n, function(i) return pre[i] end) < 1e-9, "reduce.cumsum(x, x) is right in place")
    local zo = z:clone()
    refused("reduce.cumsum one element ahead", {"operand out", "shares memory with x"}, z, zo, R.cumsum,
            z:view("f64", 8, n - 1), z:view("f64", 0, n - 1))
end

-- sort: its kernels read the keys again after the first writes
do
    local rows, cols = 7, 5000 -- longer than a block: several kernels
    local x = hk.alloc(rows * cols, "u32"):rand{seed = rseed(), lo = 0, hi = 1e6}
    local xo = x:clone()
    refused("sort.argsort with idx == x", {"sort.argsort", "idx shares memory with x"}, x, xo, S.argsort, x, x, cols)
    local short = hk.alloc(3 * 100, "f32"):rand{seed = rseed()}
    local so = short:clone()
    refused("sort.topk with values == x", {"values shares memory with x"}, short, so, S.topk, short,
            hk.alloc(300, "u32"), short, 100, 100)
    local idx = hk.alloc(300, "u32"):fill(0)
    refused("sort.topk with indices over x's bytes", {"indices shares memory with x"}, short, so, S.topk,
            hk.alloc(300, "f32"), short:view("u32"), short, 100, 100)
    refused("sort.topk with indices == values", {"indices shares memory with values"}, nil, nil, S.topk,
            idx:view("f32"), idx, short, 100, 100)
    local k = hk.alloc(n, "u32"):rand{seed = rseed(), lo = 0, hi = 1e9}
    local ko = k:clone()
    refused("sort.sort with idx == keys", {"sort.sort", "idx shares memory with keys"}, k, ko, S.sort, k, k)
    refused("sort.sort_pairs with vals == keys", {"vals shares memory with keys"}, k, ko, S.sort_pairs, k, k)
end

t.done()
