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
    q6_K = {256, 210}, q8_K = {256, 292}, q4_0r = {256, 144},
}
local order = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2_K", "q3_K", "q4_K", "q5_K",
               "q6_K", "q8_K", "q4_0r"}

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
-- q4_0r (hipkit's): 8 groups' 16 nibble bytes, then their 8 f16 scales
local function q4_0r_group(b, g) return b:sub(129 + 2 * g, 130 + 2 * g) .. b:sub(1 + 16 * g, 16 + 16 * g) end
deq.q4_0r = function(b, out)
    for g = 0, 7 do deq.q4_0(q4_0r_group(b, g), out) end
end
-- q4_0 bytes (whole blocks of 8 groups) as q4_0r's, and back
local function to_q4_0r(s)
    local out = {}
    for o = 1, #s, 144 do
        local q, d = {}, {}
        for g = 0, 7 do
            local blk = s:sub(o + 18 * g, o + 18 * g + 17)
            q[#q + 1], d[#d + 1] = blk:sub(3), blk:sub(1, 2)
        end
        out[#out + 1] = table.concat(q) .. table.concat(d)
    end
    return table.concat(out)
end
local function from_q4_0r(s)
    local out = {}
    for o = 1, #s, 144 do
        for g = 0, 7 do out[#out + 1] = q4_0r_group(s:sub(o, o + 143), g) end
    end
    return table.concat(out)
end
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
    q4_0r = {129, 131, 133, 135, 137, 139, 141, 143},
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

-- several tiles of 256 groups (the kernel stages a tile's bytes and values
-- in shared memory), the last one partial and ending in a piece shorter
-- than 16 bytes: the op's launch, and by hand one block walking every tile
-- (256 threads), blocks of 96 threads (a tile of 96 groups) and of 100
-- (not whole K blocks: the unstaged loop); every output poisoned first.
for _, fmt in ipairs(valgrind and {"q4_0", "q6_K"} or order) do
    local nblocks = formats[fmt][1] == 32 and 589 or 75
    local s = random_blocks(fmt, nblocks)
    local w = upload(fmt, s)
    local want = reference(fmt, s)
    for _, dt in ipairs{"f32", "f16", "bf16"} do
        local r = dt == "f32" and nil or hk.from(want, dt, "host"):view("u16"):totable()
        for _, how in ipairs{"op", 256, 96, 100} do
            local y = hk.alloc(#w, dt, mode):fill(0 / 0)
            if how == "op" then Q.dequantize(y, w)
            else Q.kernels["dequantize_" .. fmt .. "_" .. dt]:launch({1}, {how}, w, y, #w) end
            local bad, first
            if dt == "f32" then bad, first = same_f32(y:totable(), want)
            else
                local got = y:view("u16"):totable()
                bad = 0
                for i = 1, #r do
                    if got[i] ~= r[i] then
                        bad = bad + 1
                        first = first or ("element " .. i .. ": bits " .. got[i] .. ", want " .. r[i])
                    end
                end
            end
            t.ok(bad == 0, ("%s: dequantize %d groups to %s (%s)%s"):format(fmt, #w // 32, dt,
                how == "op" and "the op" or "one block of " .. how, first and ": " .. first or ""))
        end
    end
end

-- an output that starts off a 16-byte boundary (a view 4 bytes in: the
-- kernels' element stores instead of their 16-byte ones), poisoned first;
-- the element before it stays untouched
for _, fmt in ipairs{"q4_0", "q6_K"} do
    local s = random_blocks(fmt, 5)
    local w = upload(fmt, s)
    local want = reference(fmt, s)
    local whole = hk.alloc(#w + 1, "f32", mode):fill(0 / 0)
    Q.dequantize(whole:view("f32", 4, #w), w)
    local all = whole:totable()
    local bad, first = same_f32({table.unpack(all, 2)}, want)
    t.ok(bad == 0 and all[1] ~= all[1], fmt .. ": dequantize into an unaligned view (4 bytes in)" ..
        (first and ": " .. first or ""))
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

-- The worst error of matvec's y (rows values) against the double product
-- of the reference matrix and x's values xv, relative to sum |w x|.
local function matvec_err(ref, xv, rows, cols, got)
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

-- matvec's staged path (rows a whole number of 16-byte pieces, w and x
-- aligned): 13 rows (the last block of 8 part empty), 2304 columns (a step
-- of 2048 and a partial one) where a row is then whole 16-byte pieces, 4096
-- (two steps) where not; x f32 and q8_1. The values q8_1 x stands for are
-- the reference's q8_1 dequantization.
local function q8_1_values(xq) return reference("q8_1", string.char(table.unpack(xq:view("u8"):totable()))) end
-- under valgrind (the Lua references are the slow part) the four formats
-- with their own decoders and one on the shared decode_q
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
-- A staged case of fmt: 13 rows of cols columns (default 2304 where a row
-- is then whole 16-byte pieces, else 4096); w uploaded from random blocks
-- and its reference values.
local function staged_case(fmt, cols)
    local bs, bytes = formats[fmt][1], formats[fmt][2]
    local rows = 13
    cols = cols or ((2304 // bs * bytes) % 16 == 0 and 2304 or 4096)
    local s = random_blocks(fmt, rows * cols // bs)
    return rows, cols, upload(fmt, s), reference(fmt, s)
end
-- matvec of a staged case with x random (seed) as f32 and as q8_1, each
-- against the double product of the values it stands for; what names the
-- case in the test names
local function check_x_forms(fmt, rows, cols, w, ref, seed, what)
    local x = hk.alloc(cols, "f32", mode):rand{seed = seed, lo = -1, hi = 1}
    local xq = hk.alloc(cols, "q8_1", mode)
    Q.quantize(xq, x)
    for _, form in ipairs{{"f32", x, x:totable()}, {"q8_1", xq, q8_1_values(xq)}} do
        local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
        Q.matvec(y, w, form[2])
        local worst = matvec_err(ref, form[3], rows, cols, y:totable())
        t.ok(worst < 2e-6, ("%s: %s %dx%d, %s x, within %.1e of the double product"):format(
            fmt, what, rows, cols, form[1], worst))
    end
    return x
end
for _, fmt in ipairs(valgrind and {"q4_0", "q8_0", "q4_K", "q6_K", "q5_1"} or order) do
    local rows, cols, w, ref = staged_case(fmt)
    check_x_forms(fmt, rows, cols, w, ref, 9, "staged matvec")
end

-- the class of a float: "nan", "inf", "-inf" or "finite"
local function class(v)
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" end
    if v == -math.huge then return "-inf" end
    return "finite"
end

-- Rows wider than 4096 columns (a Llama down projection's 14336): the staged
-- path with f32 x staged a 4096-column slice at a time and q8_1 x read from
-- global memory (the sums staged for the whole row),
-- the first width past 4096 whose rows are whole 16-byte pieces (q8_1 x:
-- whole 16-byte pieces too); inf in x for a format with a min.
for _, fmt in ipairs(valgrind and {"q4_0", "q4_1"} or {"q4_0", "q8_0", "q4_K", "q6_K", "q4_1", "q4_0r"}) do
    local bs, bytes = formats[fmt][1], formats[fmt][2]
    local cols = 4096 + bs
    while (cols // bs * bytes) % 16 ~= 0 or cols % 128 ~= 0 do cols = cols + bs end
    local rows, _, w, ref = staged_case(fmt, cols)
    local x = check_x_forms(fmt, rows, cols, w, ref, 11, "matvec (wider than 4096 columns)")
    if fmt == "q4_1" then -- a min: the sums decide whether the floats may be split
        local xv = x:totable()
        xv[cols - 3] = math.huge
        local y = hk.alloc(rows, "f32", mode):fill(1.0)
        Q.matvec(y, w, hk.from(xv, "f32", mode))
        local got, wrong = y:totable(), 0
        for r = 0, rows - 1 do
            local sum = 0.0
            for c = 1, cols do sum = sum + ref[r * cols + c] * xv[c] end
            if class(sum) ~= class(got[r + 1]) then wrong = wrong + 1 end
        end
        t.ok(wrong == 0, ("%s: matvec %dx%d (wider than 4096) with inf in x gives f32's inf and NaN (%d rows differ)")
             :format(fmt, rows, cols, wrong))
    end
end

-- The staged f32 form: x over 2^-30 ... 2^30 with zeros and a group of one
-- value besides zeros still meets the double product; inf or NaN in x
-- gives what f32 arithmetic gives: rows with an inf where w is nonzero are
-- inf of its sign, NaN where it meets a zero weight or infs of both signs,
-- and every row is NaN for a NaN. Formats with a min (q4_1, q4_K, q5_K)
-- keep a * sum q x + o * sum x, which would make inf - inf of those: they
-- take the unstaged path then.
local function wide_x(cols)
    local xv = {}
    for c = 1, cols do
        local r = math.random()
        if r < 0.1 then
            xv[c] = 0.0
        else
            xv[c] = (math.random(0, 1) * 2 - 1) * (1 + math.random()) * 2.0 ^ math.random(-30, 30)
        end
        -- the second group: one value and zeros
        if c > 32 and c <= 64 then xv[c] = c == 40 and 3.0e5 or 0.0 end
    end
    return xv
end
for _, fmt in ipairs(valgrind and {"q4_0", "q4_K"} or {"q4_0", "q8_0", "q4_K", "q6_K", "q4_1", "q5_K"}) do
    local rows, cols, w, ref = staged_case(fmt)
    local xv = wide_x(cols)
    local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
    Q.matvec(y, w, hk.from(xv, "f32", mode))
    local worst = matvec_err(ref, xv, rows, cols, y:totable())
    t.ok(worst < 2e-6, ("%s: staged matvec, x over 2^-30 ... 2^30 with zeros, within %.1e of the double product")
         :format(fmt, worst))
    for _, bad in ipairs{math.huge, -math.huge, 0 / 0} do
        local xb = {}
        for c = 1, cols do xb[c] = xv[c] end
        xb[cols - 5] = bad
        local yb = hk.alloc(rows, "f32", mode):fill(1.0)
        Q.matvec(yb, w, hk.from(xb, "f32", mode))
        local got, wrong = yb:totable(), 0
        for r = 0, rows - 1 do
            local sum = 0.0
            for c = 1, cols do
                local wv = ref[r * cols + c]
                -- a row whose weights are inf or NaN themselves (random
                -- f16 scales) is what it is either way
                sum = sum + wv * xb[c]
            end
            if class(sum) ~= class(got[r + 1]) then wrong = wrong + 1 end
        end
        t.ok(wrong == 0, ("%s: staged matvec with %s in x gives f32's inf and NaN (%d rows differ)")
             :format(fmt, tostring(bad), wrong))
    end
end

-- x at the ends of f32's range, and x all positive. q4_K's staged f32 form
-- takes its weights as f16 subnormals and x staged times 2^24, so an x of
-- 2^104 or more would be inf there: x holding two values of +-2^105 takes
-- the unstaged path (also on rows wider than 4096, whose slices are
-- staged later than x's sums); x of 2^-126 ... 2^-100 keeps its products
-- normal. x in [0, 1] (a ReLU's output) gives sums of x that do not
-- cancel, the case where a bias taken off with x's sums would lose most.
for _, case in ipairs(valgrind and {{"q4_K"}} or {{"q4_0"}, {"q8_0"}, {"q4_K"}, {"q6_K"}, {"q4_1"}, {"q4_K", 4352}}) do
    local fmt = case[1]
    local rows, cols, w, ref = staged_case(fmt, case[2])
    local kinds = {
        huge = function(c) return (c == 5 and 2.0 ^ 105) or (c == cols - 40 and -2.0 ^ 105) or math.random() * 2 - 1 end,
        tiny = function() return (math.random(0, 1) * 2 - 1) * (1 + math.random()) * 2.0 ^ math.random(-126, -101) end,
        positive = function() return math.random() end,
    }
    for _, kind in ipairs{"huge", "tiny", "positive"} do
        local xv = {}
        for c = 1, cols do xv[c] = f32(kinds[kind](c)) end
        local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
        Q.matvec(y, w, hk.from(xv, "f32", mode))
        local worst = matvec_err(ref, xv, rows, cols, y:totable())
        t.ok(worst < 2e-6, ("%s: staged matvec %dx%d, x %s, within %.1e of the double product"):format(
            fmt, rows, cols, kind == "huge" and "holding +-2^105" or kind == "tiny" and "of 2^-126 ... 2^-100"
                or "in [0, 1]", worst))
    end
end

-- the kernels walk rows grid-stride (each warp its rows, one after the
-- other): 41 rows launched directly on grids of 1, 2 and 3 blocks, x f32
-- (aligned: staged; not: the general path) and q8_1. At 4352 columns f32 x
-- is staged a 4096-column slice at a time with every warp of the block in
-- step: 41 rows leave warps of a block without a row in its last round
-- (they still meet the slice barriers), and the second slice is partial
-- (at 6400 columns it holds a full chunk and a partial one). q6_K at 6144
-- (rows of whole 16-byte pieces: 2048 columns a multiple) takes the slices
-- with its lanes on pairs of groups.
for _, case in ipairs{{"q4_0", 2304}, {"q4_K", 2304}, {"q4_0", 4352}, {"q4_K", 4352}, {"q4_0", 6400}, {"q6_K", 6144}} do
    local fmt, rows, cols = case[1], 41, case[2]
    if valgrind and fmt ~= "q4_0" then goto next_case end
    local s = random_blocks(fmt, rows * cols // formats[fmt][1])
    local w = upload(fmt, s)
    local ref = reference(fmt, s)
    local x = hk.alloc(cols, "f32", mode):rand{seed = 17, lo = -1, hi = 1}
    local xq = hk.alloc(cols, "q8_1", mode)
    Q.quantize(xq, x)
    local xu = hk.alloc(cols + 1, "f32", mode):view("f32", 4, cols):copy(x)
    local forms = {{"", x, x:totable()}, {"", xu, x:totable(), " (x unaligned)"}, {"_q8_1", xq, q8_1_values(xq)}}
    for _, form in ipairs(forms) do
        for _, grid in ipairs{1, 2, 3} do
            local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
            Q.kernels["matvec_" .. fmt .. form[1]]:launch({grid}, {256}, w, form[2], y, rows, cols)
            local worst = matvec_err(ref, form[3], rows, cols, y:totable())
            t.ok(worst < 2e-6, ("%s: matvec%s%s %dx%d on %d block(s) within %.1e"):format(
                fmt, form[1], form[4] or "", rows, cols, grid, worst))
        end
    end
    ::next_case::
end

-- The streamed q8_1 matvec (matvec_{q4_0,q8_0,q4_K,q6_K}_q8_1_ring), launched
-- directly: each block its own run of rows, a stage of block / L
-- rows at a time, L lanes a row (the power of two >= the row's 144-byte
-- pieces, at most a warp). Widths of 1 piece (a thread a row, a stage of
-- as many rows as threads), 9 (16 lanes a row, 7 of them idle) and 40
-- (more pieces than lanes: a lane takes two or one); grids that leave
-- blocks with a partial last stage, and more blocks than rows (some with
-- none); blocks of 64 threads and of 16 (part of a warp: a thread a row);
-- 1 and 3 stages (the ring of bulk copies on sm_90, one stage the block
-- copies elsewhere); w 16-byte aligned and a view 2 bytes into a buffer
-- (the block copies it, 2 bytes at a time). y poisoned with NaN.
local warp = 32
for _, d in ipairs(hk.devices()) do if d.current then warp = d.warp_size end end
local function ring_shared(fmt, cols, block, stages)
    local P, L = cols // 256, 1
    while L < P and L < warp do L = L * 2 end
    if block % warp ~= 0 then L = 1 end
    local piece = ({q8_0 = 272, q6_K = 210})[fmt] or 144
    -- the ring rounded up to 16 bytes (q6_K's rows are 2-byte aligned)
    return (stages * (block // L) * piece * P + 15) // 16 * 16 + 40 * (cols // 32) + 8 * stages
end
local ring_cases = {
    {"q4_0", 37, 256, 2, 256, 1}, {"q4_K", 37, 256, 3, 64, 1}, {"q4_0", 41, 2304, 2, 256, 3},
    {"q4_K", 41, 2304, 3, 256, 1}, {"q4_0", 19, 10240, 2, 256, 1}, {"q4_K", 19, 10240, 1, 64, 3},
    {"q4_0", 5, 2304, 7, 64, 3}, {"q4_K", 23, 2304, 2, 16, 1}, {"q4_0", 23, 512, 3, 16, 1},
    {"q8_0", 41, 2304, 2, 64, 3}, {"q8_0", 37, 256, 3, 64, 1}, {"q8_0", 19, 8448, 2, 64, 1},
    -- widths that are not whole pieces: the general path, the same y
    {"q4_0", 29, 2336, 3, 256, 3}, {"q8_0", 29, 2336, 2, 64, 1}, {"q4_0", 13, 96, 2, 16, 1},
    -- NVIDIA: 16 bytes less shared memory than 3 stages need: the general path too
    {"q4_K", 41, 2304, 2, 256, 3, -16},
    -- q6_K's 210-byte pieces: rows of 8 pieces are 16-byte aligned (bulk
    -- copies on sm_90), of 9 only 2-byte (the block copies them); 40 pieces
    -- (x's records read from shared memory); a thread a row with a ring of
    -- 20 rows of 210 bytes (its end rounded up to 16 for x's records)
    {"q6_K", 37, 2048, 2, 64, 4}, {"q6_K", 41, 2304, 3, 256, 1}, {"q6_K", 19, 10240, 2, 64, 3},
    {"q6_K", 23, 512, 3, 16, 1}, {"q6_K", 13, 256, 2, 20, 1}, {"q6_K", 41, 4096, 2, 256, 4, -16},
}
for ci, case in ipairs(ring_cases) do
    local fmt, rows, cols, grid, block, stages, short = table.unpack(case)
    if valgrind and ci ~= 1 and ci ~= 4 and ci ~= 10 and ci ~= 13 and ci ~= 18 then goto next_ring end
    if short and os.getenv("HIPKIT_TEST_BACKEND") ~= "cuda" then
        for _ = 1, valgrind and 3 or 4 do
            t.skip(("%s: streamed q8_1 matvec with %d bytes of shared memory short"):format(fmt, -short),
                   "NVIDIA only: elsewhere the kernel cannot see how much it was given")
        end
        goto next_ring
    end
    local s = random_blocks(fmt, rows * cols // formats[fmt][1])
    local ref = reference(fmt, s)
    local x = hk.alloc(cols, "f32", mode):rand{seed = 40 + ci, lo = -1, hi = 1}
    local xq = hk.alloc(cols, "q8_1", mode)
    Q.quantize(xq, x)
    local xv = q8_1_values(xq)
    local shifted = hk.alloc(#s + 2, "u8", mode)
    shifted:view("u8", 2, #s):copy(hk.from({string.byte(s, 1, -1)}, "u8", mode))
    for wi, w in ipairs{upload(fmt, s), shifted:view(fmt, 2)} do
        local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
        Q.kernels["matvec_" .. fmt .. "_q8_1_ring"]{grid = grid, block = block,
            shared = ring_shared(fmt, cols, block, stages) + (short or 0)}(w, xq, y, rows, cols, stages)
        local worst = matvec_err(ref, xv, rows, cols, y:totable())
        local what = ("%dx%d, grid %d, block %d, %d stage(s)%s, w %s"):format(rows, cols, grid, block, stages,
            short and (", %d bytes of shared memory short"):format(-short) or "",
            wi == 1 and "16-byte aligned" or "2 bytes into a buffer")
        t.ok(worst < 2e-6, ("%s: streamed q8_1 matvec %s, within %.1e"):format(fmt, what, worst))
        -- f32 x, each block rounding it to q8_1 records first (blocks of part
        -- of a warp: through 36 bytes more a block of 32): the same records,
        -- so the same y bit for bit
        if wi == 1 or not valgrind then
            local yf = hk.alloc(rows, "f32", mode):fill(0 / 0)
            Q.kernels["matvec_" .. fmt .. "_f32_q8_1_ring"]{grid = grid, block = block,
                shared = ring_shared(fmt, cols, block, stages) + (block % warp ~= 0 and 36 * (cols // 32) or 0) +
                    (short or 0)}(
                w, x, yf, rows, cols, stages)
            local bad, first = same_f32(yf:totable(), y:totable())
            if not t.ok(bad == 0, ("%s: streamed matvec of f32 x rounded in the kernel %s: the q8_1 form's y bit for bit")
                :format(fmt, what)) then t.diag(first) end
        end
    end
    ::next_ring::
end

-- matvec_rounded(y, w, x): x f32 rounded to q8_1 first, as ggml rounds
-- activations: the y of quantize(xq, x) then matvec(y, w, xq), bit for bit
-- (on NVIDIA one streamed launch for q4_0 q8_0 q4_K q6_K at whole pieces
-- where a ring of 2 stages fits, not q8_0's 13312 columns; else those two
-- launches), every format, rows of whole pieces and not, y poisoned first;
-- and what it refuses.
for _, fmt in ipairs(valgrind and {"q4_0", "q6_K", "q5_1"} or order) do
    for _, cols in ipairs{formats[fmt][1] == 32 and 96 or 256, 2304, 4096, fmt == "q8_0" and 13312 or nil} do
        local rows = 37
        local s = random_blocks(fmt, rows * cols // formats[fmt][1])
        local w = upload(fmt, s)
        local x = hk.alloc(cols, "f32", mode):rand{seed = cols + rows, lo = -2, hi = 2}
        local xq = hk.alloc(cols, "q8_1", mode)
        Q.quantize(xq, x)
        local y0 = hk.alloc(rows, "f32", mode):fill(0 / 0)
        Q.matvec(y0, w, xq)
        local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
        Q.matvec_rounded(y, w, x)
        local bad, first = same_f32(y:totable(), y0:totable())
        if not t.ok(bad == 0, ("%s: matvec_rounded %dx%d is quantize then the q8_1 matvec, bit for bit"):format(
            fmt, rows, cols)) then t.diag(first) end
        if valgrind then break end
    end
end
do
    local w = upload("q4_0", random_blocks("q4_0", 8))
    local y = hk.alloc(2, "f32", mode)
    t.errors("expects buffers y, w and x; argument 2 (w) is an integer", "a number for w is named as such",
        function() Q.matvec_rounded(y, 5, hk.alloc(128, "f32", mode)) end)
    t.errors("x is q8_1; matvec_rounded takes f32 x (a q8_1 x is matvec's)", "matvec_rounded refuses a q8_1 x",
        function() Q.matvec_rounded(y, w, hk.alloc(128, "q8_1", mode)) end)
    t.errors("w has 256 elements, not #y x #x = 2 x 96", "and a shape that does not hold",
        function() Q.matvec_rounded(y, w, hk.alloc(96, "f32", mode)) end)
    local b = hk.alloc(130, "f32", mode)
    t.errors("y shares memory with x", "and y over x",
        function() Q.matvec_rounded(b:view("f32", 0, 2), w, b:view("f32", 4, 128)) end)
end

-- matmul: Y [m, rows] = X [m, cols] W^T, 65 weight rows: 129 activation
-- rows take the gemm route (W dequantized to f32 scratch, the gemm family's
-- product with B transposed), 7 the tiled kernel with partial 64 x 64 tiles
-- on both sides, one or two blocks per row. The tiling is the same code for
-- every format (each format's decoding is checked above): under valgrind,
-- one format of each block size.
for _, fmt in ipairs(valgrind and {"q4_1", "q6_K"} or order) do
  for _, m in ipairs{129, 7} do
    local cols, rows = formats[fmt][1] == 32 and 64 or 256, 65
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
    t.ok(worst < 2e-6, ("%s: matmul %dx%d by %dx%d (%s) within %.1e of the double product"):format(
        fmt, m, cols, rows, cols, m >= 128 and "dequantize and gemm" or "tiled", worst))
  end
end
-- matmul with f16 / bf16 activations: W rounded to x's dtype (the f32
-- value rounded, checked above) times x with f32 sums: from 65 activation
-- rows W's 16-bit copy and the gemm family's product, up to 64 the fused
-- kernel (mmq_*: tensor cores on the GPU). Reference: the double product
-- of W rounded to x's dtype (by hk.from's rounding) and x as stored; y f32
-- or x's dtype, poisoned first; 129 rows (partial tiles), 64, 27 and 3
-- (partial n-tiles), 101 weight rows (a partial block of 64).
local half_eps, half_tiny = {f16 = 2 ^ -10, bf16 = 2 ^ -7}, {f16 = 2 ^ -24, bf16 = 2 ^ -133}
-- Y [m, rows] (got, of dtype yt) against the double product of wr (W's
-- values rounded to x's dtype) and xv: the worst error over its tolerance
-- (f32 sums, yt's rounding; past f16's largest finite value an inf), and
-- where it is
local function half_matmul_worst(got, wr, xv, m, rows, cols, yt)
    local worst, at = -1, nil
    for a = 0, m - 1 do
        for r = 0, rows - 1 do
            local sum, mag = 0, 0
            for c = 1, cols do
                local p = wr[r * cols + c] * xv[a * cols + c]
                sum, mag = sum + p, mag + math.abs(p)
            end
            local g = got[a * rows + r + 1]
            local tol = 1e-5 * mag + (yt == "f32" and 1e-30 or half_eps[yt] * math.abs(sum) + half_tiny[yt])
            local e = math.abs(g - sum) / tol
            if not (e <= 1) then e = math.huge end
            if yt == "f16" and math.abs(sum) > 65504 and g == sum * math.huge then
                e = 0 -- past f16's largest finite value: rounds to inf (k-quant rows can sum that high)
            end
            if e > worst then worst, at = e, ("Y(%d,%d): got %s, want %s"):format(a, r, tostring(g), tostring(sum)) end
        end
    end
    return worst, at
end
for i, fmt in ipairs(valgrind and {"q4_0", "q6_K"} or order) do
  for mi, m in ipairs(valgrind and {129, 27} or {129, 64, 27, 3}) do
    local dt = (i + mi) % 2 == 0 and "f16" or "bf16"
    local yt = (i // 2 + mi // 2) % 2 == 0 and "f32" or dt
    local cols, rows = formats[fmt][1] == 32 and 96 or 256, m == 27 and 101 or 37
    local s = random_blocks(fmt, rows * cols // formats[fmt][1])
    local w = upload(fmt, s)
    local wr = hk.from(reference(fmt, s), dt, "host"):totable()
    local x = hk.alloc(m * cols, dt, mode):rand{lo = -1, hi = 1}
    local xv = x:totable()
    local y = hk.alloc(m * rows, yt, mode):fill(0 / 0)
    Q.matmul(y, w, x, rows)
    local worst, at = half_matmul_worst(y:totable(), wr, xv, m, rows, cols, yt)
    t.ok(worst <= 1, ("%s: matmul %dx%d (%s) by %dx%d, y %s (%s), within tolerance of the double product"):format(
        fmt, m, cols, dt, rows, cols, yt, m > 64 and "copy and gemm" or "fused"))
    if worst > 1 then t.diag("  " .. at) end
  end
end
-- the fused kernel launched by hand: blocks of 256 threads (the staged
-- tiles) and of 64 and 100 (each thread its outputs alone), y of x's dtype
-- and f32; q4_K, 70 weight rows (two blocks, the second partial), 5 rows
do
    local fmt, rows, cols, m = "q4_K", 70, 512, 5
    local s = random_blocks(fmt, rows * cols // 256)
    local w = upload(fmt, s)
    for _, dt in ipairs{"f16", "bf16"} do
        local wr = hk.from(reference(fmt, s), dt, "host"):totable()
        local x = hk.alloc(m * cols, dt, mode):rand{lo = -1, hi = 1}
        local xv = x:totable()
        for _, case in ipairs{{256, "f32"}, {64, dt}, {100, "f32"}, {256, dt}} do
            local y = hk.alloc(m * rows, case[2], mode):fill(0 / 0)
            Q.kernels["mmq_" .. fmt .. "_" .. dt]:launch({2}, {case[1]}, w, x, y, rows, cols, m,
                case[2] == "f32" and 0 or 1)
            local worst, at = half_matmul_worst(y:totable(), wr, xv, m, rows, cols, case[2])
            t.ok(worst <= 1, ("mmq_%s_%s launched with blocks of %d threads, y %s: within tolerance (%.2f)"):format(
                fmt, dt, case[1], case[2], worst))
            if worst > 1 then t.diag("  " .. at) end
        end
    end
end
for _, bad in ipairs{{"i32", "f32", "x is i32; matmul takes f32"}, {"f32", "f16", "y is f16; with x f32 matmul writes f32"},
                     {"bf16", "f16", "y is f16; with x bf16 matmul writes f32 or bf16"}} do
    local ok, err = pcall(Q.matmul, hk.alloc(2 * 2, bad[2], mode), hk.alloc(64, "q8_0", mode),
                          hk.alloc(2 * 32, bad[1], mode), 2)
    t.ok(not ok and err:find(bad[3], 1, true), ("matmul refuses x %s with y %s: %s"):format(bad[1], bad[2],
        ok and "no error" or err))
end

-- The kernels launched by hand with blocks that are not whole warps (16
-- threads, 48, 100) or, for matmul, not its 256: every thread still has a
-- row or an output of its own (before, matvec's walk over rows took a
-- stride of 0 warps a block and never ended). Against the double product,
-- y poisoned first; 41 rows, 2304 columns (a staged shape with 256).
do
    local fmt, rows, cols, m = "q4_K", 41, 2304, 5
    local s = random_blocks(fmt, rows * cols // formats[fmt][1])
    local w, ref = upload(fmt, s), reference(fmt, s)
    local x = hk.alloc(cols, "f32", mode):rand{seed = 19, lo = -1, hi = 1}
    local xq = hk.alloc(cols, "q8_1", mode)
    Q.quantize(xq, x)
    local xm = hk.alloc(m * cols, "f32", mode):rand{seed = 23, lo = -1, hi = 1}
    local xmv = xm:totable()
    for _, block in ipairs{16, 48, 100} do
        for _, form in ipairs{{"", x, x:totable()}, {"_q8_1", xq, q8_1_values(xq)}} do
            local y = hk.alloc(rows, "f32", mode):fill(0 / 0)
            Q.kernels["matvec_" .. fmt .. form[1]]:launch({3}, {block}, w, form[2], y, rows, cols)
            local worst = matvec_err(ref, form[3], rows, cols, y:totable())
            t.ok(worst < 2e-6, ("%s: matvec%s launched with blocks of %d threads, within %.1e"):format(
                fmt, form[1], block, worst))
        end
        local y = hk.alloc(m * rows, "f32", mode):fill(0 / 0)
        Q.kernels["matmul_" .. fmt]:launch({1, 1}, {block}, w, xm, y, rows, cols, m)
        local got, worst = y:totable(), 0
        for i = 0, m - 1 do
            local row = {}
            for c = 1, cols do row[c] = xmv[i * cols + c] end
            local e = matvec_err(ref, row, rows, cols, {table.unpack(got, i * rows + 1, i * rows + rows)})
            if not (e <= worst) then worst = e ~= e and math.huge or e end
        end
        t.ok(worst < 2e-6, ("%s: matmul %dx%d launched with blocks of %d threads, within %.1e"):format(
            fmt, m, cols, block, worst))
    end
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
quant.q4_0r = function(x, o)
    local blocks = {}
    for g = 0, 7 do blocks[g + 1] = quant.q4_0(x, o + 32 * g) end
    return to_q4_0r(table.concat(blocks))
end
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

for _, fmt in ipairs{"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q8_K", "q4_0r"} do
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

-- The k-quant reference quantizers (ggml's quantize_row_q2_K_ref ...
-- q6_K_ref, written here from ggml's algorithm): every operation rounded
-- to f32 on its own, as ggml's C computes without fused multiply-adds.
local EPS = f32(1e-15)
local function clamp(v, lo, hi) return math.max(lo, math.min(hi, v)) end
local function h16(v) -- v rounded to f16 and back, and its bits
    local h = f2h_all({v})[1]
    return h2f(h), h
end
local function absmax_of(x, o, n)
    local amax, mx = 0, 0
    for i = 1, n do
        if math.abs(x[o + i]) > amax then amax, mx = math.abs(x[o + i]), x[o + i] end
    end
    return amax, mx
end
-- make_qx_quants, rmse_type 1, weights x^2: L[lo + i] in 0 .. 2 nmax - 1
local function make_qx(x, o, n, nmax, L, lo)
    local amax, mx = absmax_of(x, o, n)
    if amax < EPS then
        for i = 1, n do L[lo + i] = 0 end
        return 0
    end
    local function fit(iscale, keep)
        local slx, sl2 = 0, 0
        for i = 1, n do
            local xi = x[o + i]
            local l = clamp(rne(f32(iscale * xi)), -nmax, nmax - 1)
            if keep then L[lo + i] = l + nmax end
            local w = f32(xi * xi)
            slx = f32(slx + f32(f32(w * xi) * l))
            sl2 = f32(sl2 + f32(f32(w * l) * l))
        end
        return slx, sl2
    end
    local sumlx, suml2 = fit(f32(-nmax / mx), true)
    local scale = suml2 ~= 0 and f32(sumlx / suml2) or 0
    local best = f32(scale * sumlx)
    for is = -9, 9 do
        if is ~= 0 then
            local iscale = f32(-f32(nmax + f32(f32(0.1) * is)) / mx)
            local slx, sl2 = fit(iscale, false)
            if sl2 > 0 and f32(slx * slx) > f32(best * sl2) then
                fit(iscale, true)
                scale = f32(slx / sl2)
                best = f32(scale * slx)
            end
        end
    end
    return scale
end
-- make_q3_quants with do_rmse: L[lo + i] in 0 .. 2 nmax - 1
local function make_q3(x, o, n, nmax, L, lo)
    local amax, mx = absmax_of(x, o, n)
    if amax < EPS then
        for i = 1, n do L[lo + i] = 0 end
        return 0
    end
    local iscale = f32(-nmax / mx)
    local sumlx, suml2, q = 0, 0, {}
    for i = 1, n do
        local xi = x[o + i]
        q[i] = clamp(rne(f32(iscale * xi)), -nmax, nmax - 1)
        local w = f32(xi * xi)
        sumlx = f32(sumlx + f32(f32(w * xi) * q[i]))
        suml2 = f32(suml2 + f32(f32(w * q[i]) * q[i]))
    end
    for _ = 1, 5 do
        local changed = 0
        for i = 1, n do
            local xi = x[o + i]
            local w = f32(xi * xi)
            local slx = f32(sumlx - f32(f32(w * xi) * q[i]))
            if slx > 0 then
                local sl2 = f32(suml2 - f32(f32(w * q[i]) * q[i]))
                local nl = clamp(rne(f32(f32(xi * sl2) / slx)), -nmax, nmax - 1)
                if nl ~= q[i] then
                    slx = f32(slx + f32(f32(w * xi) * nl))
                    sl2 = f32(sl2 + f32(f32(w * nl) * nl))
                    if sl2 > 0 and f32(f32(slx * slx) * suml2) > f32(f32(sumlx * sumlx) * sl2) then
                        q[i], sumlx, suml2 = nl, slx, sl2
                        changed = changed + 1
                    end
                end
            end
        end
        if changed == 0 then break end
    end
    for i = 1, n do L[lo + i] = q[i] + nmax end
    return suml2 > 0 and f32(sumlx / suml2) or 0
end
-- make_qkx2_quants: L[lo + i] in 0 .. nmax; returns scale, -min
local function make_qkx2(x, o, n, nmax, w, L, lo, rmin, rdelta, nstep, mad)
    local mn, mx, sum_w, sum_x = x[o + 1], x[o + 1], w[1], f32(w[1] * x[o + 1])
    for i = 2, n do
        mn, mx = math.min(mn, x[o + i]), math.max(mx, x[o + i])
        sum_w = f32(sum_w + w[i])
        sum_x = f32(sum_x + f32(w[i] * x[o + i]))
    end
    if mn > 0 then mn = 0 end
    if mx == mn then
        for i = 1, n do L[lo + i] = 0 end
        return 0, -mn
    end
    local function err_of(scale, min, lv)
        local e = 0
        for i = 1, n do
            local diff = f32(f32(f32(scale * lv[i]) + min) - x[o + i])
            e = f32(e + f32(w[i] * (mad and math.abs(diff) or f32(diff * diff))))
        end
        return e
    end
    local iscale = f32(nmax / f32(mx - mn))
    local scale, lv = f32(1 / iscale), {}
    for i = 1, n do lv[i] = clamp(rne(f32(iscale * f32(x[o + i] - mn))), 0, nmax) end
    local best = err_of(scale, mn, lv)
    for is = 0, nstep do
        iscale = f32(f32(f32(rmin + f32(rdelta * is)) + nmax) / f32(mx - mn))
        local sl, sl2, sxl, aux = 0, 0, 0, {}
        for i = 1, n do
            local l = clamp(rne(f32(iscale * f32(x[o + i] - mn))), 0, nmax)
            aux[i] = l
            local wl = f32(w[i] * l)
            sl, sl2, sxl = f32(sl + wl), f32(sl2 + f32(wl * l)), f32(sxl + f32(wl * x[o + i]))
        end
        local D = f32(f32(sum_w * sl2) - f32(sl * sl))
        if D > 0 then
            local ts = f32(f32(f32(sum_w * sxl) - f32(sum_x * sl)) / D)
            local tm = f32(f32(f32(sl2 * sum_x) - f32(sl * sxl)) / D)
            if tm > 0 then tm, ts = 0, f32(sxl / sl2) end
            local e = err_of(ts, tm, aux)
            if e < best then best, scale, mn, lv = e, ts, tm, aux end
        end
    end
    for i = 1, n do L[lo + i] = lv[i] end
    return scale, -mn
end
local function pack2(L, off) -- 2-bit values: byte l of each 32 holds l, l+32, l+64, l+96 of 128
    local t = {}
    for j = 0, 128, 128 do
        for l = 1, 32 do
            local b = off + j + l
            t[#t + 1] = string.char(L[b] | (L[b + 32] << 2) | (L[b + 64] << 4) | (L[b + 96] << 6))
        end
    end
    return table.concat(t)
end
local kquant = {}
kquant.q2_K = function(x, o)
    local L, scales, mins, maxs, maxm = {}, {}, {}, 0, 0
    for j = 0, 15 do
        local w = {}
        for l = 1, 16 do w[l] = math.abs(x[o + 16 * j + l]) end
        scales[j], mins[j] = make_qkx2(x, o + 16 * j, 16, 3, w, L, 16 * j, f32(-0.5), f32(0.1), 15, true)
        maxs, maxm = math.max(maxs, scales[j]), math.max(maxm, mins[j])
    end
    local sb = {}
    local is, im = maxs > 0 and f32(15 / maxs) or 0, maxm > 0 and f32(15 / maxm) or 0
    for j = 0, 15 do
        sb[j] = ((maxs > 0 and rne(f32(is * scales[j])) or 0) | (maxm > 0 and rne(f32(im * mins[j])) << 4 or 0)) & 255
    end
    local d, dh = h16(maxs > 0 and f32(maxs / 15) or 0)
    local dm, dmh = h16(maxm > 0 and f32(maxm / 15) or 0)
    for j = 0, 15 do
        local dj = f32(d * (sb[j] & 15))
        if dj ~= 0 then
            local mj = f32(dm * (sb[j] >> 4))
            for i = 1, 16 do L[16 * j + i] = clamp(rne(f32(f32(x[o + 16 * j + i] + mj) / dj)), 0, 3) end
        end
    end
    local t = {}
    for j = 0, 15 do t[#t + 1] = string.char(sb[j]) end
    return table.concat(t) .. pack2(L, 0) .. string.pack("<I2I2", dh, dmh)
end
kquant.q3_K = function(x, o)
    local L, scales, maxs, amax = {}, {}, 0, 0
    for j = 0, 15 do
        scales[j] = make_q3(x, o + 16 * j, 16, 4, L, 16 * j)
        if math.abs(scales[j]) > amax then amax, maxs = math.abs(scales[j]), scales[j] end
    end
    local s, ls = {}, {}
    for k = 0, 11 do s[k] = 0 end
    local d, dh = 0, 0
    if maxs ~= 0 then
        local iscale = f32(-32 / maxs)
        for j = 0, 15 do
            local v = rne(f32(iscale * scales[j]))
            v = ((v + 128) & 255) - 128 -- ggml keeps it in an int8_t
            local l = clamp(v, -32, 31) + 32
            if j < 8 then s[j] = l & 15 else s[j - 8] = s[j - 8] | ((l & 15) << 4) end
            s[j % 4 + 8] = s[j % 4 + 8] | ((l >> 4) << (2 * (j // 4)))
            ls[j] = l - 32
        end
        d, dh = h16(f32(1 / iscale))
    else
        for j = 0, 15 do ls[j] = -32 end
    end
    for j = 0, 15 do
        local dj = f32(d * ls[j])
        if dj ~= 0 then
            for i = 1, 16 do L[16 * j + i] = clamp(rne(f32(x[o + 16 * j + i] / dj)), -4, 3) + 4 end
        end
    end
    local hm = {}
    for k = 0, 31 do hm[k] = 0 end
    for j = 0, 255 do
        if L[j + 1] > 3 then
            hm[j % 32] = hm[j % 32] | (1 << (j // 32))
            L[j + 1] = L[j + 1] - 4
        end
    end
    local t = {}
    for k = 0, 31 do t[#t + 1] = string.char(hm[k]) end
    t[#t + 1] = pack2(L, 0)
    for k = 0, 11 do t[#t + 1] = string.char(s[k]) end
    return table.concat(t) .. string.pack("<I2", dh)
end
local function k45(x, o, five)
    local nmax = five and 31 or 15
    local L, scales, mins, maxs, maxm = {}, {}, {}, 0, 0
    for j = 0, 7 do
        local sx2, w = 0, {}
        for l = 1, 32 do sx2 = f32(sx2 + f32(x[o + 32 * j + l] * x[o + 32 * j + l])) end
        local av = f32(math.sqrt(f32(sx2 / 32)))
        for l = 1, 32 do w[l] = f32(av + math.abs(x[o + 32 * j + l])) end
        scales[j], mins[j] = make_qkx2(x, o + 32 * j, 32, nmax, w, L, 32 * j, five and f32(-0.5) or -1,
                                       f32(0.1), five and 15 or 20, false)
        maxs, maxm = math.max(maxs, scales[j]), math.max(maxm, mins[j])
    end
    local is, im = maxs > 0 and f32(63 / maxs) or 0, maxm > 0 and f32(63 / maxm) or 0
    local s, lsv, lmv = {}, {}, {}
    for j = 0, 7 do
        local ls = math.min(63, rne(f32(is * scales[j])) & 255)
        local lm = math.min(63, rne(f32(im * mins[j])) & 255)
        lsv[j], lmv[j] = ls, lm
        if j < 4 then
            s[j], s[j + 4] = ls, lm
        else
            s[j + 4] = (ls & 15) | ((lm & 15) << 4)
            s[j - 4] = s[j - 4] | ((ls >> 4) << 6)
            s[j] = s[j] | ((lm >> 4) << 6)
        end
    end
    local d, dh = h16(f32(maxs / 63))
    local dm, dmh = h16(f32(maxm / 63))
    for j = 0, 7 do
        local dj = f32(d * lsv[j])
        if dj ~= 0 then
            local mj = f32(dm * lmv[j])
            for i = 1, 32 do L[32 * j + i] = clamp(rne(f32(f32(x[o + 32 * j + i] + mj) / dj)), 0, nmax) end
        end
    end
    local t, qh = {string.pack("<I2I2", dh, dmh)}, {}
    for k = 0, 11 do t[#t + 1] = string.char(s[k]) end
    for l = 1, 32 do qh[l] = 0 end
    local ql = {}
    for n = 0, 3 do
        for l = 1, 32 do
            local l1, l2 = L[64 * n + l], L[64 * n + l + 32]
            if five then
                qh[l] = qh[l] | ((l1 >> 4) << (2 * n)) | ((l2 >> 4) << (2 * n + 1))
                l1, l2 = l1 & 15, l2 & 15
            end
            ql[#ql + 1] = string.char(l1 | (l2 << 4))
        end
    end
    if five then for l = 1, 32 do t[#t + 1] = string.char(qh[l]) end end
    return table.concat(t) .. table.concat(ql)
end
kquant.q4_K = function(x, o) return k45(x, o, false) end
kquant.q5_K = function(x, o) return k45(x, o, true) end
kquant.q6_K = function(x, o)
    local L, scales, maxs, amax = {}, {}, 0, 0
    for j = 0, 15 do
        scales[j] = make_qx(x, o + 16 * j, 16, 32, L, 16 * j)
        if math.abs(scales[j]) > amax then amax, maxs = math.abs(scales[j]), scales[j] end
    end
    if amax < EPS then return string.rep("\0", 210) end
    local iscale = f32(-128 / maxs)
    local d, dh = h16(f32(1 / iscale))
    local sc = {}
    for j = 0, 15 do
        sc[j] = math.min(127, rne(f32(iscale * scales[j])))
        local dj = f32(d * sc[j])
        if dj ~= 0 then
            for i = 1, 16 do L[16 * j + i] = clamp(rne(f32(x[o + 16 * j + i] / dj)), -32, 31) + 32 end
        end
    end
    local ql, qh = {}, {}
    for n = 0, 1 do
        for l = 1, 32 do
            local b = 128 * n + l
            ql[64 * n + l] = string.char((L[b] & 15) | ((L[b + 64] & 15) << 4))
            ql[64 * n + l + 32] = string.char((L[b + 32] & 15) | ((L[b + 96] & 15) << 4))
            qh[32 * n + l] = string.char((L[b] >> 4) | ((L[b + 32] >> 4) << 2) | ((L[b + 64] >> 4) << 4) |
                                         ((L[b + 96] >> 4) << 6))
        end
    end
    local st = {}
    for j = 0, 15 do st[#st + 1] = string.pack("<i1", sc[j]) end
    return table.concat(ql) .. table.concat(qh) .. table.concat(st) .. string.pack("<I2", dh)
end

-- byte for byte on normal data (a block of zeros, a block of small values),
-- and the round trip within a bound of the spread of each block
local kbound = {q2_K = 0.45, q3_K = 0.25, q4_K = 0.12, q5_K = 0.06, q6_K = 0.03}
for _, fmt in ipairs{"q2_K", "q3_K", "q4_K", "q5_K", "q6_K"} do
    local n = 256 * 4
    local xv = hk.alloc(n, "f32", mode):rand{seed = 13, dist = "normal", std = 2}:totable()
    for j = 257, 512 do xv[j] = 0 end
    for j = 513, 768 do xv[j] = f32(xv[j] * 1e-3) end
    local x = hk.from(xv, "f32", mode)
    local w = hk.alloc(n, fmt, mode)
    Q.quantize(w, x)
    local got = string.char(table.unpack(w:view("u8"):totable()))
    local want = {}
    for o = 0, n - 1, 256 do want[#want + 1] = kquant[fmt](xv, o) end
    want = table.concat(want)
    local diff
    for i = 1, #want do
        if got:byte(i) ~= want:byte(i) then diff = diff or ("byte " .. i .. " of " .. #want) end
    end
    if not t.ok(got == want, fmt .. ": quantize writes ggml's reference bytes") then t.diag(diff) end
    local back = reference(fmt, got)
    local worst = 0
    for o = 0, n - 1, 256 do
        local se, sx = 0, 0
        for i = o + 1, o + 256 do se, sx = se + (back[i] - xv[i]) ^ 2, sx + xv[i] ^ 2 end
        if sx > 0 then worst = math.max(worst, math.sqrt(se / sx)) end
    end
    t.ok(worst < kbound[fmt], ("%s: round trip rms error %.3f of the rms value (bound %.2f)"):format(
        fmt, worst, kbound[fmt]))
end

-- errors name what is wrong
local w = hk.alloc(256, "q4_K", mode)
local ok, err = pcall(Q.quantize, w, hk.alloc(512, "f32", mode))
t.ok(not ok and err:find("must be the same", 1, true), "quantize checks x's length against w's")
ok, err = pcall(Q.matvec, hk.alloc(3, "f32", mode), w, hk.alloc(256, "f32", mode))
t.ok(not ok and err:find("#y x #x", 1, true), "matvec checks w's size against y and x")
ok, err = pcall(Q.matvec, hk.alloc(1, "f32", mode), hk.alloc(256, "f32", mode), hk.alloc(256, "f32", mode))
t.ok(not ok and err:find("not a quantized dtype", 1, true), "matvec wants a quantized w")
ok, err = pcall(Q.dequantize, hk.alloc(256, "i32", mode), w)
t.ok(not ok and err:find("f32, f16 or bf16", 1, true), "dequantize writes floats only")

-- an output over an input (the kernels read all of x while other blocks
-- write y): refused by name; outputs beside their inputs in one buffer are fine
do
    local sq = hk.alloc(256 * 256, "q8_0", mode)
    Q.quantize(sq, (hk.alloc(256 * 256, "f32", mode):rand{seed = 31, lo = -1, hi = 1}))
    local x = hk.alloc(256, "f32", mode):rand{seed = 32, lo = -1, hi = 1}
    local ok, err = pcall(Q.matvec, x, sq, x)
    t.ok(not ok and err:find("y shares memory with x", 1, true), "matvec(x, w, x) is refused: y over x")
    local big = hk.alloc(512, "f32", mode):fill(0 / 0)
    big:view("f32", 0, 256):copy(x)
    ok, err = pcall(Q.matvec, big:view("f32", 512, 256), sq, big:view("f32", 0, 256))
    t.ok(not ok and err:find("y shares memory with x", 1, true), "matvec: a y half over x is refused")
    local y0 = hk.alloc(256, "f32", mode)
    Q.matvec(y0, sq, x)
    Q.matvec(big:view("f32", 1024, 256), sq, big:view("f32", 0, 256))
    t.ok(same_f32(big:view("f32", 1024, 256):totable(), y0:totable()) == 0,
         "matvec: y right after x in the same buffer is allowed and right")
    ok, err = pcall(Q.matmul, x, sq, x, 256)
    t.ok(not ok and err:find("y shares memory with x", 1, true), "matmul(x, w, x) is refused")
    local raw = hk.alloc(4096, "u8", mode)
    ok, err = pcall(Q.dequantize, raw:view("f32", 0, 256), raw:view("q8_0", 512, 256))
    t.ok(not ok and err:find("y shares memory with w", 1, true), "dequantize: y over w is refused")
    ok, err = pcall(Q.quantize, raw:view("q8_0", 512, 256), raw:view("f32", 0, 256))
    t.ok(not ok and err:find("w shares memory with x", 1, true), "quantize: w over x is refused")
    ok, err = pcall(Q.matvec, sq:view("f32", 0, 256), sq, x)
    t.ok(not ok and err:find("y shares memory with w", 1, true), "matvec: y over w is refused")
end

-- repack: q4_0 into q4_0r and back moves bytes only (each destination
-- poisoned first); matvec over q4_0r sums as q4_0's staged path (rows of
-- at most 4096 columns), so its y is q4_0's bit for bit, both forms of x;
-- rows of partial warps and more rows than a block's warps; wider rows take
-- the generic path (the double product, above)
do
    local rows, cols = 37, 1280
    local s = random_blocks("q4_0", rows * cols // 32)
    local w = upload("q4_0", s)
    local wr = hk.alloc(rows * cols, "q4_0r", mode)
    wr:view("u8"):fill(0xA5)
    Q.repack(wr, w)
    local got = string.char(table.unpack(wr:view("u8"):totable()))
    t.ok(got == to_q4_0r(s), "repack q4_0 -> q4_0r: q4_0r's bytes, every one written")
    local back = hk.alloc(rows * cols, "q4_0", mode)
    back:view("u8"):fill(0x5A)
    Q.repack(back, wr)
    t.ok(string.char(table.unpack(back:view("u8"):totable())) == s, "repack q4_0r -> q4_0 gives the bytes back")
    t.ok(from_q4_0r(got) == s, "the test's own layouts agree (to_q4_0r, from_q4_0r)")
    local ya, yb = hk.alloc(rows * cols, "f32", mode):fill(0 / 0), hk.alloc(rows * cols, "f32", mode):fill(0 / 0)
    Q.dequantize(ya, w)
    Q.dequantize(yb, wr)
    t.ok(same_f32(yb:totable(), ya:totable()) == 0, "q4_0r dequantizes to q4_0's values bit for bit")
    local x = hk.alloc(cols, "f32", mode):rand{seed = 21, lo = -2, hi = 2}
    local xq = hk.alloc(cols, "q8_1", mode)
    Q.quantize(xq, x)
    for _, form in ipairs{{"f32", x}, {"q8_1", xq}} do
        for _, grid in ipairs{0, 1, 3} do -- 0: the op's launch
            local y0, y1 = hk.alloc(rows, "f32", mode):fill(0 / 0), hk.alloc(rows, "f32", mode):fill(0 / 0)
            local suffix = form[1] == "q8_1" and "_q8_1" or ""
            if grid == 0 then
                -- q4_0 through the op takes the streamed kernel on NVIDIA (q8_1 x),
                -- whose sums run in another order: q4_0's grid-stride kernel here
                Q.kernels["matvec_q4_0" .. suffix]:launch({2}, {256}, w, form[2], y0, rows, cols)
                Q.matvec(y1, wr, form[2])
            else
                Q.kernels["matvec_q4_0" .. suffix]:launch({grid}, {256}, w, form[2], y0, rows, cols)
                Q.kernels["matvec_q4_0r" .. suffix]:launch({grid}, {256}, wr, form[2], y1, rows, cols)
            end
            local bad, first = same_f32(y1:totable(), y0:totable())
            if not t.ok(bad == 0, ("matvec q4_0r, %s x, %s: q4_0's y bit for bit (%d rows)"):format(
                form[1], grid == 0 and "the op" or grid .. " block(s)", rows)) then t.diag(first) end
        end
    end
    -- dst sharing src's memory: in place through a view, and a dst that
    -- overlaps src 144 bytes further on; the bytes every time as from a
    -- separate src (repack goes through a temporary)
    local wi = upload("q4_0", s)
    Q.repack(wi:view("q4_0r"), wi)
    local inplace = string.char(table.unpack(wi:view("u8"):totable()))
    t.ok(inplace == to_q4_0r(s), "repack in place (dst a q4_0r view of src): q4_0r's bytes")
    Q.repack(wi, wi:view("q4_0r"))
    t.ok(string.char(table.unpack(wi:view("u8"):totable())) == s, "repack in place, back: the bytes of q4_0")
    local big = hk.alloc(#s + 144, "u8", mode):fill(0x33)
    big:view("u8", 0, #s):copy(hk.from({string.byte(s, 1, -1)}, "u8", mode))
    Q.repack(big:view("q4_0r", 144, rows * cols), big:view("q4_0", 0, rows * cols))
    local moved = string.char(table.unpack(big:totable()))
    t.ok(moved:sub(1, 144) == s:sub(1, 144) and moved:sub(145) == to_q4_0r(s),
         "repack into a dst overlapping src 144 bytes on: src's values, the bytes before dst untouched")
    -- apart, repack is one launch and a graph records it; in place it needs
    -- the temporary, which the graph then owns
    local wg = hk.alloc(rows * cols, "q4_0r", mode)
    wg:view("u8"):fill(0xA5)
    local g = hk.graph(function() Q.repack(wg, w) end)
    t.is(g:info().nodes, 1, "repack of separate buffers: one launch, recorded in a graph")
    g:launch()
    t.ok(string.char(table.unpack(wg:view("u8"):totable())) == to_q4_0r(s), "the graph's repack: q4_0r's bytes")
    local gi = hk.graph(function() Q.repack(wi:view("q4_0r"), wi) end)
    t.is(gi:info().nodes, 2, "repack in place, recorded: the repack into the graph's temporary, then the copy")
    gi:launch()
    t.ok(string.char(table.unpack(wi:view("u8"):totable())) == to_q4_0r(s), "the graph's repack in place: q4_0r's bytes")
    local ok, err = pcall(Q.repack, hk.alloc(256, "q4_0r", mode), hk.alloc(256, "q8_0", mode))
    t.ok(not ok and err:find("q4_0 into q4_0r", 1, true), "repack names the pairs it takes")
    ok, err = pcall(Q.repack, hk.alloc(512, "q4_0r", mode), hk.alloc(256, "q4_0", mode))
    t.ok(not ok and err:find("must be the same", 1, true), "repack checks the lengths")
    ok, err = pcall(hk.alloc, 96, "q4_0r", mode)
    t.ok(not ok and err:find("256", 1, true), "a q4_0r buffer holds whole blocks of 256")
end

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
