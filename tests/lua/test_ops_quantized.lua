-- The quantized family (plugins/quantized) against a reference written here
-- in Lua from ggml's dequantize_row_* / quantize_row_*_ref loops, with f32
-- rounding after every operation as ggml's C does it:
--  - dequantize: random blocks of every format (random quants, sane scales)
--    to f32 bit for bit, and to f16 and bf16 as the f32 value rounded;
--  - matvec: against a double product of the reference matrix, rows that
--    leave a block's last warps idle, both block sizes, x f32 (aligned and
--    not) and q8_1 (the integer dot-product form);
--  - matmul: partial tiles on both sides;
--  - quantize (q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 q8_K): the bytes ggml's reference
--    quantizer writes (q4_0 and q5_0 as gguf's quantize: the fused x/d + 8.5);
--  - a GGUF file of quantized tensors, mapped, dequantizes as uploaded.
-- HIPKIT_TEST_BACKEND picks a GPU backend (tests/gpu/run.sh).
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")
local Q = hk.ops.quantized
local mode = (os.getenv("HIPKIT_TEST_BACKEND") or "host") == "host" and "host" or "device"

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end
-- f16 bits <-> value (exact), and f32 -> f16 bits rounded to nearest even
local function h2f(h)
    local s, e, m = h >> 15, (h >> 10) & 31, h & 1023
    local v
    if e == 31 then v = m == 0 and math.huge or 0 / 0
    elseif e == 0 then v = m * 2.0 ^ -24
    else v = (1 + m / 1024) * 2.0 ^ (e - 15) end
    return s == 1 and -v or v
end
local function f2h_all(list) -- through hipkit's own rounding (tested in test_dtype)
    local b = hk.from(list, "f16", "host")
    return b:view("u16"):totable()
end
local function u16(s, i) return string.byte(s, i) | (string.byte(s, i + 1) << 8) end
local function i8(s, i) local v = string.byte(s, i) return v >= 128 and v - 256 or v end

local formats = {
    q4_0 = {32, 18}, q4_1 = {32, 20}, q5_0 = {32, 22}, q5_1 = {32, 24}, q8_0 = {32, 34},
    q8_1 = {32, 36}, q2_K = {256, 84}, q3_K = {256, 110}, q4_K = {256, 144}, q5_K = {256, 176},
    q6_K = {256, 210}, q8_K = {256, 292},
}
local order = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2_K", "q3_K", "q4_K", "q5_K",
               "q6_K", "q8_K"}

-- ggml's 6-bit scale and min j of q4_K/q5_K (get_scale_min_k4)
local function scale_min_k4(b, o, j)
    local q = function(k) return string.byte(b, o + k) end
    if j < 4 then return q(j) & 63, q(j + 4) & 63 end
    return (q(j + 4) & 15) | ((q(j - 4) >> 6) << 4), (q(j + 4) >> 4) | ((q(j) >> 6) << 4)
end

-- Reference dequantization of one block b (a string), appended to out.
local deq = {}
local function deq_32(b, d_at, m_at, qh_at, qs_at, bits, out)
    local d = h2f(u16(b, d_at))
    local m = m_at and h2f(u16(b, m_at)) or nil
    local qh = qh_at and string.unpack("<I4", b, qh_at) or 0
    local vals = {}
    for j = 0, 15 do
        local q = string.byte(b, qs_at + j)
        local x0, x1 = q & 15, q >> 4
        if bits == 5 then
            x0 = x0 | (((qh >> j) << 4) & 0x10)
            x1 = x1 | ((qh >> (j + 12)) & 0x10)
        end
        if not m then x0, x1 = x0 - (bits == 4 and 8 or 16), x1 - (bits == 4 and 8 or 16) end
        vals[j + 1] = m and f32(f32(x0 * d) + m) or f32(x0 * d)
        vals[j + 17] = m and f32(f32(x1 * d) + m) or f32(x1 * d)
    end
    for j = 1, 32 do out[#out + 1] = vals[j] end
end
deq.q4_0 = function(b, out) deq_32(b, 1, nil, nil, 3, 4, out) end
deq.q4_1 = function(b, out) deq_32(b, 1, 3, nil, 5, 4, out) end
deq.q5_0 = function(b, out) deq_32(b, 1, nil, 3, 7, 5, out) end
deq.q5_1 = function(b, out) deq_32(b, 1, 3, 5, 9, 5, out) end
deq.q8_0 = function(b, out)
    local d = h2f(u16(b, 1))
    for j = 0, 31 do out[#out + 1] = f32(i8(b, 3 + j) * d) end
end
deq.q8_1 = function(b, out)
    local d = h2f(u16(b, 1))
    for j = 0, 31 do out[#out + 1] = f32(i8(b, 5 + j) * d) end
end
deq.q2_K = function(b, out)
    local d, mn = h2f(u16(b, 81)), h2f(u16(b, 83))
    local is = 0
    for n = 0, 1 do
        for j = 0, 3 do
            for half = 0, 1 do
                local sc = string.byte(b, 1 + is)
                is = is + 1
                local dl, ml = f32(d * (sc & 15)), f32(mn * (sc >> 4))
                for l = 0, 15 do
                    local q = string.byte(b, 17 + n * 32 + half * 16 + l)
                    out[#out + 1] = f32(f32(dl * ((q >> (2 * j)) & 3)) - ml)
                end
            end
        end
    end
end
deq.q3_K = function(b, out)
    local d = h2f(u16(b, 109))
    local s = function(k) return string.byte(b, 97 + k) end
    local function scale(is)
        local lo = is < 8 and (s(is) & 15) or (s(is - 8) >> 4)
        local hi = (s(8 + is % 4) >> (2 * (is // 4))) & 3
        return (lo | (hi << 4)) - 32
    end
    local is, m = 0, 1
    for n = 0, 1 do
        for j = 0, 3 do
            for half = 0, 1 do
                local dl = f32(d * scale(is))
                is = is + 1
                for l = 0, 15 do
                    local q = string.byte(b, 33 + n * 32 + half * 16 + l)
                    local hm = string.byte(b, 1 + half * 16 + l)
                    out[#out + 1] = f32(dl * (((q >> (2 * j)) & 3) - ((hm & m) ~= 0 and 0 or 4)))
                end
            end
            m = m << 1
        end
    end
end
local function deq_k(b, out, five)
    local d, mn = h2f(u16(b, 1)), h2f(u16(b, 3))
    local qs = five and 49 or 17
    for j = 0, 3 do
        for h = 0, 1 do
            local sc, m = scale_min_k4(b, 5, 2 * j + h)
            local d1, m1 = f32(d * sc), f32(mn * m)
            for l = 0, 31 do
                local q = string.byte(b, qs + 32 * j + l)
                local x = h == 0 and (q & 15) or (q >> 4)
                if five and (string.byte(b, 17 + l) >> (2 * j + h)) & 1 == 1 then x = x + 16 end
                out[#out + 1] = f32(f32(d1 * x) - m1)
            end
        end
    end
end
deq.q4_K = function(b, out) deq_k(b, out, false) end
deq.q5_K = function(b, out) deq_k(b, out, true) end
deq.q6_K = function(b, out)
    local d = h2f(u16(b, 209))
    local vals = {}
    for n = 0, 1 do
        for l = 0, 31 do
            local is = l // 16
            local ql = function(k) return string.byte(b, 1 + 64 * n + k) end
            local qh = string.byte(b, 129 + 32 * n + l)
            local sc = function(k) return i8(b, 193 + 8 * n + is + k) end
            local q1 = ((ql(l) & 15) | (((qh >> 0) & 3) << 4)) - 32
            local q2 = ((ql(l + 32) & 15) | (((qh >> 2) & 3) << 4)) - 32
            local q3 = ((ql(l) >> 4) | (((qh >> 4) & 3) << 4)) - 32
            local q4 = ((ql(l + 32) >> 4) | (((qh >> 6) & 3) << 4)) - 32
            vals[n * 128 + l + 1] = f32(f32(d * sc(0)) * q1)
            vals[n * 128 + l + 33] = f32(f32(d * sc(2)) * q2)
            vals[n * 128 + l + 65] = f32(f32(d * sc(4)) * q3)
            vals[n * 128 + l + 97] = f32(f32(d * sc(6)) * q4)
        end
    end
    for i = 1, 256 do out[#out + 1] = vals[i] end
end
deq.q8_K = function(b, out)
    local d = string.unpack("<f", b, 1)
    for j = 0, 255 do out[#out + 1] = f32(d * i8(b, 5 + j)) end
end

-- Random blocks: random bytes, then each f16 scale field a sane value.
local scale_fields = {
    q4_0 = {1}, q4_1 = {1, 3}, q5_0 = {1}, q5_1 = {1, 3}, q8_0 = {1}, q8_1 = {1, 3},
    q2_K = {81, 83}, q3_K = {109}, q4_K = {1, 3}, q5_K = {1, 3}, q6_K = {209},
}
local function random_blocks(fmt, nblocks)
    local bytes = formats[fmt][2]
    local parts = {}
    for _ = 1, nblocks do
        local c = {}
        for i = 1, bytes do c[i] = math.random(0, 255) end
        local b = string.char(table.unpack(c))
        for _, at in ipairs(scale_fields[fmt] or {}) do
            -- sign, exponent 2^-6 .. 2^1, any mantissa
            local h = (math.random(0, 1) << 15) | (math.random(9, 16) << 10) | math.random(0, 1023)
            b = b:sub(1, at - 1) .. string.pack("<I2", h) .. b:sub(at + 2)
        end
        if fmt == "q8_K" then b = string.pack("<f", (math.random() - 0.5) * 0.1) .. b:sub(5) end
        parts[#parts + 1] = b
    end
    return table.concat(parts)
end

-- A buffer of dtype fmt holding the bytes s.
local function upload(fmt, s)
    local n = #s // formats[fmt][2] * formats[fmt][1]
    local w = hk.alloc(n, fmt, mode)
    local list = {string.byte(s, 1, -1)}
    w:view("u8"):copy(hk.from(list, "u8", mode))
    return w
end
local function reference(fmt, s)
    local out = {}
    local bytes = formats[fmt][2]
    for i = 1, #s, bytes do deq[fmt](s:sub(i, i + bytes - 1), out) end
    return out
end
local function same_f32(got, want)
    local bad, first = 0, nil
    for i = 1, #want do
        if string.pack("<f", got[i]) ~= string.pack("<f", want[i]) then
            bad = bad + 1
            first = first or ("element " .. i .. ": got " .. got[i] .. ", want " .. want[i])
        end
    end
    return bad, first
end

for _, fmt in ipairs(order) do
    local nblocks = formats[fmt][1] == 32 and 12 or 3
    local s = random_blocks(fmt, nblocks)
    local w = upload(fmt, s)
    local want = reference(fmt, s)
    local y = hk.alloc(#w, "f32", mode):fill(0 / 0)
    Q.dequantize(y, w)
    local bad, first = same_f32(y:totable(), want)
    if not t.ok(bad == 0, fmt .. ": dequantize to f32 is ggml's value bit for bit") then t.diag(first) end
    for _, half in ipairs{"f16", "bf16"} do
        local yh = hk.alloc(#w, half, mode)
        Q.dequantize(yh, w)
        local r = hk.from(want, half, "host")
        t.ok(table.concat(yh:view("u16"):totable(), ",") == table.concat(r:view("u16"):totable(), ","),
             fmt .. ": dequantize to " .. half .. " rounds the f32 value")
    end
end

-- matvec: 13 rows (blocks of 256 threads: 8 warps of 32 or 4 of 64, the last
-- block part empty), cols of 3 blocks of 32 or 2 of 256
for _, fmt in ipairs(order) do
    local cols, rows = formats[fmt][1] == 32 and 96 or 512, 13
    local s = random_blocks(fmt, rows * cols // formats[fmt][1])
    local w = upload(fmt, s)
    local ref = reference(fmt, s)
    local x = hk.alloc(cols, "f32", mode):rand{seed = 7, lo = -1, hi = 1}
    local xv = x:totable()
    local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
    Q.matvec(y, w, x)
    -- the worst error of y against the double product, relative to sum |w x|
    local function worst_of(got)
        local worst = 0
        for r = 0, rows - 1 do
            local sum, mag = 0, 0
            for c = 1, cols do
                local p = ref[r * cols + c] * xv[c]
                sum, mag = sum + p, mag + math.abs(p)
            end
            local err = math.abs(got[r + 1] - sum) / (mag + 1e-30)
            if not (err <= worst) then worst = err ~= err and math.huge or err end
        end
        return worst
    end
    local worst = worst_of(y:totable())
    t.ok(worst < 2e-6, ("%s: matvec %dx%d within %.1e of the double product (relative to sum |w x|)")
         :format(fmt, rows, cols, worst))
    -- x at an address that is no multiple of 16 takes the scalar path
    local xs = hk.alloc(cols + 1, "f32", mode)
    local xv1 = xs:view("f32", 4, cols)
    xv1:copy(x)
    local y1 = hk.alloc(rows, "f32", mode):fill(0 / 0)
    Q.matvec(y1, w, xv1)
    worst = worst_of(y1:totable())
    t.ok(worst < 2e-6, ("%s: matvec with x at an unaligned address, within %.1e"):format(fmt, worst))
    -- x quantized to q8_1: the integer dot-product form, against the double
    -- product with the q8_1 x's own values
    local xq = hk.alloc(cols, "q8_1", mode)
    Q.quantize(xq, x)
    local xqs = string.char(table.unpack(xq:view("u8"):totable()))
    local saved = xv
    xv = reference("q8_1", xqs)
    local y8 = hk.alloc(rows, "f32", mode):fill(0 / 0)
    Q.matvec(y8, w, xq)
    worst = worst_of(y8:totable())
    xv = saved
    t.ok(worst < 2e-6, ("%s: matvec with q8_1 x (integer dots) within %.1e"):format(fmt, worst))
end

-- matmul: Y [m, rows] = X [m, cols] W^T with partial 64 x 64 tiles on both
-- sides (65 weight rows, 67 activation rows), one or two blocks per row.
-- The tiling is the same code for every format (each format's decoding is
-- checked above): under valgrind, one format of each block size.
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
for _, fmt in ipairs(valgrind and {"q4_1", "q6_K"} or order) do
    local cols, rows, m = formats[fmt][1] == 32 and 64 or 256, 65, 67
    local s = random_blocks(fmt, rows * cols // formats[fmt][1])
    local w = upload(fmt, s)
    local ref = reference(fmt, s)
    local x = hk.alloc(m * cols, "f32", mode):rand{seed = 5, lo = -1, hi = 1}
    local xv = x:totable()
    local y = hk.alloc(m * rows, "f32", mode):fill(0 / 0)
    Q.matmul(y, w, x, rows)
    local got, worst = y:totable(), 0
    for i = 0, m - 1 do
        for r = 0, rows - 1 do
            local sum, mag = 0, 0
            for c = 1, cols do
                local p = ref[r * cols + c] * xv[i * cols + c]
                sum, mag = sum + p, mag + math.abs(p)
            end
            local err = math.abs(got[i * rows + r + 1] - sum) / (mag + 1e-30)
            if not (err <= worst) then worst = err ~= err and math.huge or err end
        end
    end
    t.ok(worst < 2e-6, ("%s: matmul %dx%d by %dx%d within %.1e of the double product"):format(
        fmt, m, cols, rows, cols, worst))
end
local ok0, err0 = pcall(Q.matmul, hk.alloc(10, "f32", mode), hk.alloc(64, "q8_0", mode),
                        hk.alloc(64, "f32", mode), 2)
t.ok(not ok0 and err0:find("not m x 2", 1, true), "matmul checks y and x against w's shape")

-- quantize: the reference quantizers, in f32 like ggml's C
local function trunc_i8(v) -- C's (int8_t) of a float in range: toward zero
    return v < 0 and math.ceil(v) or math.floor(v)
end
local function roundf(v) return v < 0 and -math.floor(-v + 0.5) or math.floor(v + 0.5) end
local quant = {}
local function q_sym(x, o, bits)
    local amax, max = 0, 0
    for j = 1, 32 do
        if amax < math.abs(x[o + j]) then amax, max = math.abs(x[o + j]), x[o + j] end
    end
    local d = f32(max / (bits == 4 and -8 or -16))
    local id = d ~= 0 and f32(1 / d) or 0
    local q = {}
    for j = 1, 32 do
        -- as gguf's quantizer (ggml's C where it fuses to an FMA): the exact
        -- product, plus the bias in double, rounded to f32 once
        q[j] = math.min(bits == 4 and 15 or 31, trunc_i8(f32(x[o + j] * id + (bits == 4 and 8.5 or 16.5))))
    end
    return d, nil, q
end
local function q_asym(x, o, bits)
    local mn, mx = math.huge, -math.huge
    for j = 1, 32 do mn, mx = math.min(mn, x[o + j]), math.max(mx, x[o + j]) end
    local d = f32(f32(mx - mn) / ((1 << bits) - 1))
    local id = d ~= 0 and f32(1 / d) or 0
    local q = {}
    for j = 1, 32 do
        local v = trunc_i8(f32(f32(f32(x[o + j] - mn) * id) + 0.5))
        q[j] = bits == 4 and math.min(15, v) or v
    end
    return d, mn, q
end
local function pack_nibbles(fmt, d, m, q)
    local dm = f2h_all(m and {d, m} or {d})
    local parts = {string.pack("<I2", dm[1])}
    if m then parts[2] = string.pack("<I2", dm[2]) end
    if fmt == "q5_0" or fmt == "q5_1" then
        local qh = 0
        for j = 0, 15 do
            qh = qh | (((q[j + 1] & 16) >> 4) << j) | (((q[j + 17] & 16) >> 4) << (j + 16))
        end
        parts[#parts + 1] = string.pack("<I4", qh)
    end
    for j = 1, 16 do parts[#parts + 1] = string.char((q[j] & 15) | ((q[j + 16] & 15) << 4)) end
    return table.concat(parts)
end
quant.q4_0 = function(x, o) return pack_nibbles("q4_0", q_sym(x, o, 4)) end
quant.q5_0 = function(x, o) return pack_nibbles("q5_0", q_sym(x, o, 5)) end
quant.q4_1 = function(x, o) return pack_nibbles("q4_1", q_asym(x, o, 4)) end
quant.q5_1 = function(x, o) return pack_nibbles("q5_1", q_asym(x, o, 5)) end
local function q8(x, o, with_sum)
    local amax = 0
    for j = 1, 32 do amax = math.max(amax, math.abs(x[o + j])) end
    local d = f32(amax / 127)
    local id = d ~= 0 and f32(1 / d) or 0
    local parts, sum = {}, 0
    for j = 1, 32 do
        local q = roundf(f32(x[o + j] * id))
        parts[j] = string.pack("<i1", q)
        sum = sum + q
    end
    local h = f2h_all(with_sum and {d, f32(sum * d)} or {d})
    return string.pack("<I2", h[1]) .. (with_sum and string.pack("<I2", h[2]) or "") .. table.concat(parts)
end
quant.q8_0 = function(x, o) return q8(x, o, false) end
quant.q8_1 = function(x, o) return q8(x, o, true) end
local function rne(v) -- nearest, ties to even (ggml's nearest_int)
    local f = math.floor(v)
    local d = v - f
    if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
    return math.tointeger(f)
end
quant.q8_K = function(x, o)
    local amax, max = 0, 0
    for j = 1, 256 do
        if math.abs(x[o + j]) > amax then amax, max = math.abs(x[o + j]), x[o + j] end
    end
    if amax == 0 then return string.rep("\0", 292) end
    local iscale = f32(-127 / max)
    local parts, sums = {string.pack("<f", f32(1 / iscale))}, {}
    for j = 0, 15 do
        local sum = 0
        for l = 1, 16 do
            local q = math.min(127, rne(f32(iscale * x[o + 16 * j + l])))
            parts[#parts + 1] = string.pack("<i1", q)
            sum = sum + q
        end
        sums[j + 1] = string.pack("<i2", sum)
    end
    return table.concat(parts) .. table.concat(sums)
end

for _, fmt in ipairs{"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q8_K"} do
    local bs = formats[fmt][1]
    local n = bs * (bs == 32 and 9 or 3)
    local x = hk.alloc(n, "f32", mode):rand{seed = 11, dist = "normal", std = 3}
    local xv = x:totable()
    for j = bs + 1, 2 * bs do xv[j] = 0 end -- a block of zeros: d = 0, id = 0
    x = hk.from(xv, "f32", mode)
    local w = hk.alloc(n, fmt, mode)
    Q.quantize(w, x)
    local got = string.char(table.unpack(w:view("u8"):totable()))
    local want = {}
    for o = 0, n - 1, bs do want[#want + 1] = quant[fmt](xv, o) end
    want = table.concat(want)
    local diff
    for i = 1, #want do
        if got:byte(i) ~= want:byte(i) then diff = diff or ("byte " .. i) end
    end
    if not t.ok(got == want, fmt .. ": quantize writes ggml's reference bytes") then t.diag(diff) end
end

-- errors name what is wrong
local w = hk.alloc(256, "q4_K", mode)
local ok, err = pcall(Q.quantize, w, hk.alloc(256, "f32", mode))
t.ok(not ok and err:find("iteratively", 1, true), "quantize to a k-quant is refused with the reason")
ok, err = pcall(Q.matvec, hk.alloc(3, "f32", mode), w, hk.alloc(256, "f32", mode))
t.ok(not ok and err:find("#y x #x", 1, true), "matvec checks w's size against y and x")
ok, err = pcall(Q.matvec, hk.alloc(1, "f32", mode), hk.alloc(256, "f32", mode), hk.alloc(256, "f32", mode))
t.ok(not ok and err:find("not a quantized dtype", 1, true), "matvec wants a quantized w")
ok, err = pcall(Q.dequantize, hk.alloc(256, "i32", mode), w)
t.ok(not ok and err:find("f32, f16 or bf16", 1, true), "dequantize writes floats only")

-- a GGUF file of quantized tensors: the mapped tensor dequantizes as the bytes do
local path = (os.getenv("TMPDIR") or "/tmp") .. ("/hk-quant-%d-%d.gguf"):format(os.time(), math.random(1 << 30))
local s4, s6 = random_blocks("q4_0", 8), random_blocks("q6_K", 2)
local function str(v) return string.pack("<s8", v) end
local head = "GGUF" .. string.pack("<I4I8I8", 3, 2, 0) ..
             str("a") .. string.pack("<I4I8I8I4I8", 2, 64, 4, 2, 0) ..
             str("b") .. string.pack("<I4I8I8I4I8", 2, 256, 2, 14, 160)
head = head .. string.rep("\0", (32 - #head % 32) % 32)
local f = assert(io.open(path, "wb"))
f:write(head, s4, string.rep("\0", 160 - #s4), s6)
f:close()
local g = hk.gguf(path)
for name, pair in pairs{a = {"q4_0", s4}, b = {"q6_K", s6}} do
    local tb = g.tensors[name].buffer
    local y = hk.alloc(#tb, "f32", mode)
    Q.dequantize(y, tb)
    local bad = same_f32(y:totable(), reference(pair[1], pair[2]))
    t.ok(tb:dtype() == pair[1] and bad == 0, ("gguf %s tensor %s (mmap) dequantizes exactly"):format(pair[1], name))
end
os.remove(path)
t.done()
