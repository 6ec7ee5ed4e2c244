-- hk.buffer: element access, methods and constructors, against references
-- computed here in Lua. Run: hipkit tests/lua/test_buffers.lua
local dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or "."
package.path = dir .. "/?.lua;" .. package.path
local t = require("tap")
local hk = hk or require("hk")

local seed = tonumber(os.getenv("HIPKIT_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HIPKIT_TEST_SEED=" .. seed .. " replays it)")

local DTYPES = {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
local INT_RANGE = {
    i8 = {-128, 127}, i16 = {-32768, 32767}, i32 = {-2147483648, 2147483647},
    i64 = {math.mininteger, math.maxinteger},
    u8 = {0, 255}, u16 = {0, 65535}, u32 = {0, 4294967295}, u64 = {0, math.maxinteger},
}
local function is_float(dt) return dt:sub(1, 1) == "f" or dt == "bf16" end

-- Reference rounding to nearest even with `bits` significand bits and a
-- smallest normal exponent emin (f16: 11, -14; bf16: 8, -126; f32: 24, -126).
local function round_even(x)
    local f = math.floor(x)
    local d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
    return f
end
local function round_to(x, bits, emin)
    if x == 0 or x ~= x or x == math.huge or x == -math.huge then return x end
    local ax = math.abs(x)
    local e = math.floor(math.log(ax, 2))
    if 2.0 ^ e > ax then e = e - 1 elseif 2.0 ^ (e + 1) <= ax then e = e + 1 end
    if e < emin then e = emin end
    local q = 2.0 ^ (e - bits + 1)
    return round_even(x / q) * q
end
local REF = {
    f16 = function(x) return round_to(x, 11, -14) end,
    bf16 = function(x) return round_to(x, 8, -126) end,
    f32 = function(x) return (string.unpack("<f", string.pack("<f", x))) end,
    f64 = function(x) return x end,
}

local function random_value(dt)
    if is_float(dt) then return (math.random() - 0.5) * 200 end
    local r = INT_RANGE[dt]
    return math.random(r[1], r[2])
end

local function poisoned(n, dt)
    local b = hk.alloc(n, dt)
    b:fill(is_float(dt) and -77 or 77)
    return b
end

-- ------------------------------------------------------------ basics
do
    local b = hk.alloc(100, "f32")
    t.is(#b, 100, "#buf is the length")
    t.is(b:dtype(), "f32", "dtype()")
    t.is(b:mode(), "device", "mode() defaults to device")
    local d = hk.device()
    local here = d.backend .. ":" .. d.index -- host:0 here, cuda:0 on a GPU run
    t.is(b:device(), here, "device() is backend:index")
    t.is(b:bytes(), 400, "bytes()")
    t.is(hk.alloc(3):dtype(), "f32", "alloc's dtype defaults to f32")
    t.is(hk.alloc(3, "u8", "host"):mode(), "host", "alloc in host mode")
    -- more than the device's memory fails at once, as on a GPU (the CPU
    -- backend's mappings reserve nothing, so only a check can refuse it)
    local over = d.memory // 4 + 1024
    local ok, err = pcall(hk.alloc, over, "f32")
    t.ok(not ok and tostring(err):find((over * 4) .. " bytes", 1, true),
         "an alloc larger than the device's memory fails, naming the size: " .. tostring(err))
    t.is(hk.alloc(5):fill(2):totable()[5], 2.0, "and the next alloc works")
    local mt = getmetatable(b)
    t.is(type(mt.methods), "table", "metatable.methods lists the methods for completion")
    for _, m in ipairs({"totable", "fill", "iota", "rand", "copy", "clone", "view", "stats",
                        "allclose", "free", "dtype", "mode", "device", "bytes", "save", "plot", "png"}) do
        if type(mt.methods[m]) ~= "function" then t.ok(false, "method " .. m) end
    end
    t.ok(b.nosuchmethod == nil, "unknown field reads nil")
    t.errors("unknown dtype 'f33' (f16, bf16, f32", "bad dtype lists the names", hk.alloc, 4, "f33")
    t.errors("unknown memory mode 'vram'", "bad mode names it", hk.alloc, 4, "f32", "vram")
    t.errors("length must be >= 0", "negative length", hk.alloc, -1)
    t.errors("cannot set field 'x'", "string keys cannot be set", function() b.x = 1 end)
end

-- ------------------------------------------------- element access, 12 dtypes
for _, dt in ipairs(DTYPES) do
    local n = 64
    local b = poisoned(n, dt)
    local want = {}
    for i = 1, n do
        local v = random_value(dt)
        b[i] = v
        want[i] = is_float(dt) and REF[dt](v) or v
    end
    local good = true
    for i = 1, n do
        if b[i] ~= want[i] then
            good = false
            t.diag(string.format("%s[%d] = %s, want %s", dt, i, tostring(b[i]), tostring(want[i])))
            break
        end
    end
    t.ok(good, dt .. ": random values written by b[i] read back as the reference rounding")
    t.is(math.type(b[1]), is_float(dt) and "float" or "integer", dt .. ": Lua number type")
    t.errors("index 0 out of range [1, 64]", dt .. ": index 0", function() return b[0] end)
    t.errors("index 65 out of range [1, 64]", dt .. ": index n+1", function() return b[65] end)
    t.errors("index 65 out of range [1, 64]", dt .. ": write at n+1", function() b[65] = 1 end)
    t.errors("index 1.5 is not an integer", dt .. ": fractional index", function() return b[1.5] end)
    t.is(b[2.0], b[2], dt .. ": integral float index")
    t.errors("expected a number for " .. dt, dt .. ": non-number value", function() b[1] = "1" end)
    if not is_float(dt) then
        local r = INT_RANGE[dt]
        b[1] = r[1]; b[2] = r[2]
        t.ok(b[1] == r[1] and b[2] == r[2], dt .. ": extremes round trip")
        if dt ~= "i64" and dt ~= "u64" then
            t.errors(string.format("value %d out of range for %s", r[2] + 1, dt), dt .. ": above range",
                function() b[1] = r[2] + 1 end)
        end
        -- u64 takes a Lua integer as its 64 bits (2^63 and above are negative in Lua)
        if dt ~= "i64" and dt ~= "u64" then
            t.errors(string.format("value %d out of range for %s", r[1] - 1, dt), dt .. ": below range",
                function() b[1] = r[1] - 1 end)
        end
        t.errors("value 2.5 is not an integer (dtype " .. dt .. ")", dt .. ": fraction refused",
            function() b[1] = 2.5 end)
        b[3] = 7.0
        t.is(b[3], 7, dt .. ": integral float accepted")
    end
end

do -- known f16 / bf16 values
    local h = hk.alloc(6, "f16")
    local cases = {{1.5, 1.5}, {-2, -2}, {65504, 65504}, {1 / 3, 0.333251953125}, {1e6, math.huge},
                   {2 ^ -24, 2 ^ -24}}
    for i, c in ipairs(cases) do h[i] = c[1] end
    local good = true
    for i, c in ipairs(cases) do good = good and h[i] == c[2] end
    t.ok(good, "f16 known values (incl. subnormal 2^-24 and overflow to inf)")
    local bf = hk.alloc(3, "bf16")
    bf[1] = 1 / 3; bf[2] = 3e38; bf[3] = -1.0
    t.ok(bf[1] == 0.333984375 and bf[2] == REF.bf16(3e38) and bf[3] == -1, "bf16 known values")
    t.is(h:view("u16")[1], 0x3e00, "f16 1.5 has bits 0x3e00")
    local u = hk.alloc(1, "u64")
    u[1] = 2.0 ^ 63
    t.is(u[1], math.mininteger, "u64 2^63 reads back wrapped to math.mininteger")
    u[1] = -1
    t.is(u[1], -1, "u64 takes the integer -1 as its bits, 2^64 - 1 (as 0xFFFFFFFFFFFFFFFF reads in Lua)")
    t.errors("value -1 out of range for u64", "u64 refuses a negative float", function() u[1] = -1.0 end)
    t.errors("out of range for u64", "u64 refuses 2^64", function() u[1] = 2.0 ^ 64 end)
    local i64 = hk.alloc(1, "i64")
    t.errors("out of range for i64", "i64 refuses 2^63", function() i64[1] = 2.0 ^ 63 end)
end

-- ------------------------------------------------------------- freed
do
    local b = hk.alloc(10)
    local v = b:view("u8")
    b:free()
    t.is(tostring(b), "hk.buffer (freed)", "tostring of a freed buffer")
    t.errors("buffer was freed", "b[i] on a freed buffer", function() return b[1] end)
    t.errors("buffer was freed", "fill on a freed buffer", function() b:fill(1) end)
    t.errors("buffer was freed", "#b on a freed buffer", function() return #b end)
    t.ok(pcall(b.free, b), "free twice is fine")
    t.errors("views a buffer that was freed", "a view of a freed buffer", function() return v[1] end)
    t.is(tostring(v), "hk.buffer (freed)", "tostring of a view of a freed buffer")
    do
        local c <close> = hk.alloc(4)
        c:fill(1)
    end
    t.ok(true, "<close> frees at scope end")
end

-- ------------------------------------------------------------ totable
do
    local n = 257
    local b = hk.alloc(n, "i32")
    local ref = {}
    for i = 1, n do ref[i] = math.random(-1000, 1000); b[i] = ref[i] end
    local all = b:totable()
    local good = #all == n
    for i = 1, n do good = good and all[i] == ref[i] end
    t.ok(good, "totable() is every element")
    local part = b:totable(10, 20)
    good = #part == 11
    for k = 1, 11 do good = good and part[k] == ref[9 + k] end
    t.ok(good, "totable(10, 20) is inclusive")
    t.is(#b:totable(200), 58, "totable(i) runs to the end")
    t.is(#b:totable(5, 4), 0, "an empty range")
    t.errors("start 0 out of range", "totable(0)", b.totable, b, 0)
    t.errors("end 258 out of range", "totable(1, n+1)", b.totable, b, 1, n + 1)
    local big = hk.alloc(10000001, "u8")
    t.errors("ask for a range", "totable refuses more than 10^7 elements", big.totable, big)
    t.is(#big:totable(1, 10), 10, "a range of a big buffer")
end

-- ---------------------------------------------------------- fill, iota
for _, dt in ipairs(DTYPES) do
    local b = poisoned(100, dt)
    local v = is_float(dt) and 2.5 or 9
    t.is(b:fill(v), b, dt .. ": fill returns the buffer")
    local tab, good = b:totable(), true
    for i = 1, #tab do good = good and tab[i] == v end
    t.ok(good, dt .. ": fill sets every element")
    b:iota()
    tab, good = b:totable(), true
    for i = 1, #tab do
        local want = (i - 1)
        if is_float(dt) then want = REF[dt](want) end
        good = good and tab[i] == want
    end
    t.ok(good, dt .. ": iota() is 0, 1, 2, ...")
end
do
    local b = hk.alloc(100, "f64"):iota(5, 0.25)
    local good = true
    for i = 1, 100 do good = good and b[i] == 5 + (i - 1) * 0.25 end
    t.ok(good, "iota(start, step): element i is start + (i-1)*step")
    local i = hk.alloc(10, "i16"):iota(-3, -2)
    t.is(i[10], -21, "integer iota with negative step")
    t.errors("value 999 out of range for u8", "iota past the dtype's range",
        function() hk.alloc(1000, "u8"):iota() end)
    t.errors("step must be an integer", "fractional step for an integer dtype",
        function() hk.alloc(4, "i32"):iota(0, 0.5) end)
    t.errors("value 300 out of range for u8", "fill out of range",
        function() hk.alloc(4, "u8"):fill(300) end)
    t.errors("not an integer", "fill with a fraction", function() hk.alloc(4, "i8"):fill(0.5) end)
end

-- -------------------------------------------------------------- rand
do
    local n = 4096
    local a = poisoned(n, "f32"):rand({seed = 42})
    local b = poisoned(n, "f32"):rand({seed = 42})
    local c = poisoned(n, "f32"):rand({seed = 43})
    t.ok(a:allclose(b, 0, 0), "same seed, same data")
    t.ok(not c:allclose(a, 0, 0), "different seed, different data")
    local _, s1 = a:rand()
    local first = a:totable(1, 8)
    local _, s2 = a:rand()
    b:rand({seed = s1})
    local again = b:totable(1, 8)
    local same = true
    for i = 1, 8 do same = same and first[i] == again[i] end
    t.ok(s1 ~= s2, "successive unseeded calls use different seeds")
    t.ok(same, "the returned seed replays an unseeded call")
    for _, dt in ipairs({"f16", "bf16", "f32", "f64"}) do
        local x = hk.alloc(20000, dt):rand({seed = 7, lo = -2, hi = 3})
        local st = x:stats()
        t.ok(st.min >= -2 and st.max < 3, dt .. ": uniform within [lo, hi)")
        t.near(st.mean, 0.5, 0.05, dt .. ": uniform mean")
        local y = hk.alloc(20000, dt):rand({seed = 7})
        st = y:stats()
        t.ok(st.min >= 0 and st.max < 1, dt .. ": default range [0, 1)")
    end
    local z = hk.alloc(100000, "f64"):rand({seed = 5, dist = "normal"})
    local st = z:stats()
    t.near(st.mean, 0, 0.02, "normal: mean about 0 on 10^5 samples")
    t.near(st.std, 1, 0.02, "normal: std about 1")
    z:rand({seed = 5, dist = "normal", mean = 10, std = 2})
    st = z:stats()
    t.near(st.mean, 10, 0.04, "normal with mean 10")
    t.near(st.std, 2, 0.04, "normal with std 2")
    for _, dt in ipairs({"i8", "u8", "i32", "u64", "i64"}) do
        local x = hk.alloc(5000, dt):rand({seed = 9, lo = 3, hi = 7})
        local hits, good = {}, true
        for _, v in ipairs(x:totable()) do
            good = good and math.type(v) == "integer" and v >= 3 and v <= 7
            hits[v] = true
        end
        t.ok(good and hits[3] and hits[7], dt .. ": integers within [lo, hi], both ends drawn")
    end
    local d = hk.alloc(5000, "u8"):rand({seed = 1})
    st = d:stats()
    t.ok(st.min >= 0 and st.max <= 100, "integer default range 0..100")
    t.errors("unknown option 'sed'", "rand option typo", function() d:rand({sed = 1}) end)
    t.errors("unknown dist 'gauss'", "rand bad dist", function() a:rand({dist = "gauss"}) end)
    t.errors("needs a float dtype", "normal for integers", function() d:rand({dist = "normal"}) end)
    t.errors("outside the range of u8", "integer range beyond dtype", function() d:rand({hi = 256}) end)
    t.errors("outside the finite range of f16", "f16 range beyond 65504 (the stores would be inf)",
             function() hk.alloc(8, "f16"):rand({lo = 0, hi = 1e6}) end)
    local h = hk.alloc(4099, "f16"):rand({lo = -65504, hi = 65504})
    local finite = true
    for i = 1, #h do finite = finite and h[i] == h[i] and math.abs(h[i]) <= 65504 end
    t.ok(finite, "f16 over its whole finite range: every value finite")
    t.errors("need finite lo < hi", "empty float range", function() a:rand({lo = 1, hi = 1}) end)
end

-- -------------------------------------------------- copy, clone, view
do
    local a = hk.alloc(100, "f32"):rand({seed = 3})
    local b = poisoned(100, "f32")
    t.is(b:copy(a), b, "copy returns the destination")
    t.ok(b:allclose(a, 0, 0), "copy copies")
    local u = poisoned(100, "u32"):copy(a)
    t.is(u[1], a:view("u32")[1], "copy between dtypes of the same byte size copies bits")
    t.errors("source has 800 bytes, this buffer 400", "copy of another size",
        function() a:copy(hk.alloc(100, "f64")) end)
    local c = a:clone()
    t.ok(c:allclose(a, 0, 0) and c:mode() == "device" and c:dtype() == "f32", "clone copies")
    c[1] = 1234
    t.ok(a[1] ~= 1234, "a clone has its own memory")
    t.is(a:clone("host"):mode(), "host", "clone(mode)")
    t.errors("cannot clone into an mmap buffer", "clone to mmap", function() a:clone("mmap") end)

    local one = hk.from({1.0, -2.0}, "f32")
    local v = one:view("u32")
    t.is(v[1], 0x3f800000, "view reinterprets f32 1.0 as u32 0x3f800000")
    t.is(v[2], 0xc0000000, "and -2.0 as 0xc0000000")
    t.is(#v, 2, "view count defaults to what fits")
    local second = one:view("f32", 4)
    t.ok(#second == 1 and second[1] == -2, "view offset is in bytes")
    local bytes = one:view("u8", 4, 2)
    t.is(#bytes, 2, "view count")
    v[1] = 0x40400000
    t.is(one[1], 3.0, "writes through a view reach the parent")
    t.ok(tostring(v):find("view", 1, true), "tostring says view")
    t.errors("not a multiple", "misaligned view", function() one:view("u32", 2) end)
    t.errors("byte offset 9 out of range", "offset past the end", function() one:view("u8", 9) end)
    t.errors("the buffer has 8", "count too large", function() one:view("u8", 0, 9) end)
    local vv = v:view("u16", 2)
    t.is(#vv, 3, "a view of a view")
    -- a block dtype's default count is the elements of the whole blocks
    -- that fit (q4_0: 18 bytes a block of 32), not the blocks
    local raw = hk.alloc(18 * 5 + 7, "u8")
    local q = raw:view("q4_0")
    t.is(#q, 5 * 32, "view as q4_0: the elements of the 5 whole blocks that fit")
    t.is(#raw:view("q4_0", 18), 4 * 32, "from byte 18: 4 blocks")
    t.is(#hk.alloc(512, "q4_0"):view("q4_0r"), 512, "q4_0 as q4_0r (both 4.5 bits a value): the same elements")
    collectgarbage()
end

-- --------------------------------------------------------------- stats
do
    local n = 10007
    local b = hk.alloc(n, "f64"):rand({seed = 11, dist = "normal", mean = 3, std = 2})
    local nanpos, infpos = {}, {}
    for k = 1, 5 do local i = math.random(n); b[i] = 0 / 0; nanpos[i] = true end
    for k = 1, 3 do local i = math.random(n); if not nanpos[i] then b[i] = (k % 2 == 0) and math.huge or -math.huge; infpos[i] = true end end
    local cnt, sum, mn, mx, nans, infs = 0, 0, math.huge, -math.huge, 0, 0
    local vals = b:totable()
    for i = 1, n do
        local x = vals[i]
        if x ~= x then nans = nans + 1
        elseif x == math.huge or x == -math.huge then infs = infs + 1
        else cnt = cnt + 1; sum = sum + x; mn = math.min(mn, x); mx = math.max(mx, x) end
    end
    local mean = sum / cnt
    local ss = 0
    for i = 1, n do local x = vals[i]; if x == x and x ~= math.huge and x ~= -math.huge then ss = ss + (x - mean) ^ 2 end end
    local st = b:stats()
    t.is(st.n, n, "stats.n")
    t.is(st.nan, nans, "stats.nan counts NaN")
    t.is(st.inf, infs, "stats.inf counts infinities")
    t.is(st.min, mn, "stats.min skips NaN/Inf")
    t.is(st.max, mx, "stats.max")
    t.near(st.mean, mean, 1e-12 * math.abs(mean) + 1e-12, "stats.mean")
    t.near(st.std, math.sqrt(ss / cnt), 1e-10, "stats.std is the population std")
    local i = hk.from({5, -3, 9, 1}, "i64"):stats()
    t.ok(i.min == -3 and i.max == 9 and math.type(i.min) == "integer" and i.mean == 3, "integer stats")
    local big = hk.from({0}, "i64")
    big[1] = math.maxinteger
    t.is(big:stats().max, math.maxinteger, "i64 max is exact")
    local e = hk.alloc(0):stats()
    t.ok(e.n == 0 and e.mean ~= e.mean, "stats of an empty buffer: NaN mean")
end

-- ------------------------------------------------------------ allclose
do
    local n = 1000
    local a = hk.alloc(n, "f32"):rand({seed = 21})
    local ref = a:totable()
    t.ok(a:allclose(ref), "allclose with an equal table")
    t.ok(a:allclose(function(i) return ref[i] end), "allclose with a function of i")
    t.ok(a:allclose(a:clone()), "allclose with a buffer")
    local b = a:clone()
    b[17] = ref[17] + 0.5
    b[400] = ref[400] - 0.25
    b[3] = 0 / 0
    b[999] = ref[999] * (1 + 1e-6) -- within rtol
    local ok, rep, msg = b:allclose(a)
    t.is(ok, false, "allclose false on mismatches")
    t.is(rep.count, 3, "report.count")
    t.is(#rep.worst, 3, "report.worst lists them")
    t.ok(rep.worst[1].i == 3 and rep.worst[2].i == 17 and rep.worst[3].i == 400, "worst first (NaN is worst)")
    t.ok(rep.worst[2].got == b[17] and rep.worst[2].want == a[17], "worst entries have got and want")
    t.near(rep.worst[2].err, 0.5, 1e-6, "worst entries have err = |got - want|")
    t.is(type(msg), "string", "message is a string")
    t.ok(msg:find("3 of 1000 elements differ", 1, true) and msg:find("[3] got nan", 1, true), "message text")
    t.is(rep.message, msg, "report.message")
    local c = a:clone()
    for i = 1, 20 do c[i] = ref[i] + i end
    local _, rep2 = c:allclose(a)
    t.ok(rep2.count == 20 and #rep2.worst == 5 and rep2.worst[1].i == 20 and rep2.worst[5].i == 16,
        "only the 5 worst, sorted")
    t.ok(a:allclose(b, 1e-5, 1) == false, "NaN never matches, whatever the tolerance")
    local shifted = a:clone()
    for i = 1, n do shifted[i] = ref[i] + 1e-3 end
    t.ok(not shifted:allclose(a) and shifted:allclose(a, 0, 2e-3), "atol")
    local inf = hk.from({math.huge, 1}, "f64")
    t.ok(inf:allclose({math.huge, 1}), "equal infinities match")
    t.ok(not inf:allclose({-math.huge, 1}), "opposite infinities do not")
    t.errors("lengths differ", "allclose length mismatch (buffer)", function() a:allclose(hk.alloc(3)) end)
    t.errors("lengths differ", "allclose length mismatch (table)", function() a:allclose({1, 2}) end)
    t.errors("not a number", "allclose with a bad function", function() a:allclose(function() return "x" end) end)
    t.errors("buffer, table or function", "allclose with a string", function() a:allclose("x") end)
end

-- --------------------------------------------------------- tostring, from
do
    local d = hk.device()
    local on = d.backend .. ":" .. d.index
    local b = hk.alloc(1000, "f32"):iota(1)
    t.is(tostring(b), "hk.buffer<f32>[1000] device on " .. on .. " {1, 2, 3, ..., 998, 999, 1000}", "tostring format")
    t.is(tostring(hk.from({1, 2}, "i8")), "hk.buffer<i8>[2] device on " .. on .. " {1, 2}", "short buffers show all")
    t.is(tostring(hk.alloc(0)), "hk.buffer<f32>[0] device on " .. on .. " {}", "empty buffer")
    local huge = hk.alloc(100000000, "u8")
    local clock = os.clock()
    local s = tostring(huge)
    t.ok(s:find("[100000000]", 1, true) and os.clock() - clock < 0.5, "tostring of 10^8 elements returns at once")
    huge:free()
    local f = hk.from({1, 2, 3.5}, "f64", "host")
    t.ok(f[3] == 3.5 and f:mode() == "host", "from(table, dtype, mode)")
    t.is(#hk.from({}), 0, "from an empty table")
    t.errors("element 2: value 300 out of range for u8", "from with a bad element",
        hk.from, {1, 300}, "u8")
    t.errors("element 1: expected a number", "from with a string", hk.from, {"a"})
end

-- ----------------------------------------------------------------- mmap
do
    local path = os.tmpname()
    local fh = assert(io.open(path, "wb"))
    fh:write(string.pack("<ffff", 1, 2, 3, 4))
    fh:close()
    local m = hk.mmap(path, "f32")
    t.ok(#m == 4 and m[3] == 3 and m:mode() == "mmap", "mmap reads the file")
    t.errors("read-only", "writing a read-only map fails", function() m[1] = 5 end)
    t.errors("read-only", "fill on a read-only map fails", function() m:fill(5) end)
    t.errors("cannot clone into an mmap buffer", "clone of an mmap needs a mode", function() m:clone() end)
    t.ok(m:clone("device"):allclose({1, 2, 3, 4}), "clone of an mmap into device memory")
    m:free()
    local w = hk.mmap(path, "f32", {write = true})
    w[2] = 20
    w:iota(10)
    w:free()
    fh = assert(io.open(path, "rb"))
    local data = fh:read("a")
    fh:close()
    t.is(select(3, string.unpack("<ffff", data)), 12, "writes reach the file")
    local bytes = hk.mmap(path)
    t.ok(bytes:dtype() == "u8" and #bytes == 16, "mmap dtype defaults to u8")
    bytes:free()
    local created = path .. ".new"
    local cm = hk.mmap(created, "u32", {write = true, create = true, length = 64})
    t.is(#cm, 16, "mmap create with a length")
    cm:free()
    t.errors("unknown option 'writable'", "mmap option typo", hk.mmap, path, "u8", {writable = true})
    t.errors("nonexistent", "mmap of a missing file names it", hk.mmap, "/nonexistent/x.bin")
    os.remove(path)
    os.remove(created)
end

t.done()
