-- buf:save / hk.load_npy, buf:plot and buf:png. Run: hipkit tests/lua/test_npy_plot.lua
local dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or "."
package.path = dir .. "/?.lua;" .. package.path
local t = require("tap")
local hk = hk or require("hk")

local seed = tonumber(os.getenv("HIPKIT_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HIPKIT_TEST_SEED=" .. seed .. " replays it)")

local tmp = os.tmpname()
local function slurp(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("a")
    f:close()
    return s
end
local function spit(path, s)
    local f = assert(io.open(path, "wb"))
    f:write(s)
    f:close()
end

-- A .npy file by hand: v1.0 (or 2.0), header padded to 64 with a newline.
local function npy(descr, shape, data, opts)
    opts = opts or {}
    local dict = string.format("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
        opts.fortran and "True" or "False", shape)
    local major = opts.major or 1
    local pre = major == 1 and 10 or 12
    local pad = (64 - (pre + #dict + 1) % 64) % 64
    dict = dict .. string.rep(" ", pad) .. "\n"
    local len = major == 1 and string.pack("<I2", #dict) or string.pack("<I4", #dict)
    return "\x93NUMPY" .. string.char(major, 0) .. len .. dict .. data
end

local DESCR = {f16 = "<f2", bf16 = "<u2", f32 = "<f4", f64 = "<f8", i8 = "|i1", i16 = "<i2",
               i32 = "<i4", i64 = "<i8", u8 = "|u1", u16 = "<u2", u32 = "<u4", u64 = "<u8"}
local ORDER = {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}

-- ------------------------------------------------------------ save/load
for _, dt in ipairs(ORDER) do
    local n = 333
    local b = hk.alloc(n, dt)
    if dt:find("^f") or dt == "bf16" then b:rand({dist = "normal", std = 50}) else b:rand({lo = 0, hi = 100}) end
    if dt:sub(1, 1) == "i" then b:rand({lo = -100, hi = 100}) end
    b:save(tmp)
    local raw = slurp(tmp)
    local hlen = string.unpack("<I2", raw, 9)
    local header = raw:sub(11, 10 + hlen)
    t.ok(raw:sub(1, 8) == "\x93NUMPY\1\0" and (10 + hlen) % 64 == 0 and header:sub(-1) == "\n",
        dt .. ": v1.0 magic, header padded to 64 bytes with a newline")
    t.ok(header:find("'descr': '" .. DESCR[dt] .. "'", 1, true) and header:find("'fortran_order': False", 1, true)
        and header:find("'shape': (" .. n .. ",)", 1, true), dt .. ": header dict")
    t.is(#raw, 10 + hlen + b:bytes(), dt .. ": data follows the header")
    local l, shape = hk.load_npy(tmp)
    local want = dt == "bf16" and "u16" or dt
    t.ok(l:dtype() == want and #shape == 1 and shape[1] == n and l:mode() == "device",
        dt .. ": loads back as " .. want .. " with shape {n}")
    if dt == "bf16" then l = l:view("bf16") end
    local good, x, y = true, b:totable(), l:totable()
    for i = 1, n do good = good and x[i] == y[i] end
    t.ok(good, dt .. ": round trip keeps every element")
end

do
    local b = hk.alloc(6, "i16"):iota(1)
    b:save(tmp, {2, 3})
    t.ok(slurp(tmp):find("'shape': (2, 3)", 1, true), "save with a shape")
    local l, shape = hk.load_npy(tmp, "host")
    t.ok(shape[1] == 2 and shape[2] == 3 and l:mode() == "host" and l[6] == 6, "load_npy(path, mode)")
    t.errors("shape has 4 elements, the buffer 6", "save with a wrong shape", b.save, b, tmp, {2, 2})

    -- a hand-written 2-D file
    local data = string.pack("<i4<i4<i4<i4<i4<i4", 10, 20, 30, -40, 50, 60)
    spit(tmp, npy("<i4", "(2, 3)", data))
    local m, s = hk.load_npy(tmp)
    t.ok(m:dtype() == "i32" and #m == 6 and s[1] == 2 and s[2] == 3, "hand-written 2-D .npy: dtype and shape")
    t.ok(m[1] == 10 and m[4] == -40 and m[6] == 60, "hand-written 2-D .npy: data, flattened in C order")
    spit(tmp, npy("<f8", "(2,)", string.pack("<d<d", 1.5, -2), {major = 2}))
    m = hk.load_npy(tmp)
    t.ok(m:dtype() == "f64" and m[1] == 1.5 and m[2] == -2, "a v2.0 file")
    spit(tmp, npy("|u1", "()", "\7"))
    m, s = hk.load_npy(tmp)
    t.ok(#m == 1 and m[1] == 7 and #s == 0, "a 0-d array: one element, shape {}")
    spit(tmp, npy("<f4", "(3,)", string.pack("<f<f<f", 1, 2, 3), {fortran = true}))
    t.is(hk.load_npy(tmp)[3], 3.0, "fortran_order True is fine for 1-D")
    spit(tmp, npy("<f2", "(1,)", "\0\x3e"))
    t.is(hk.load_npy(tmp)[1], 1.5, "'<f2' loads as f16")

    local function refuses(content, text, name)
        spit(tmp, content)
        t.errors(text, name, hk.load_npy, tmp)
        t.errors(tmp, name .. " (names the file)", hk.load_npy, tmp)
    end
    refuses(npy(">f4", "(1,)", "\0\0\0\0"), "big-endian data ('>f4')", "big-endian refused")
    refuses(npy("<f4", "(2, 2)", string.rep("\0", 16), {fortran = true}), "Fortran-order", "fortran order 2-D refused")
    refuses(npy("<c8", "(1,)", string.rep("\0", 8)), "unsupported dtype '<c8'", "complex refused")
    refuses(npy("<f4", "(4,)", string.rep("\0", 10)), "truncated: the shape needs 16 bytes of data, the file has 10",
        "truncated data")
    refuses("hello world, not numpy", "not a .npy file", "bad magic")
    refuses("\x93NUMPY\3\0\0\0\0\0", "format version 3.0 is not supported", "version 3")
    t.errors("/nonexistent/dir/x.npy", "load of a missing file names it", hk.load_npy, "/nonexistent/dir/x.npy")
    t.errors("/nonexistent/dir/x.npy", "save to a bad path names it", b.save, b, "/nonexistent/dir/x.npy")
end

-- ---------------------------------------------------------------- plot
local function lines(s)
    local out = {}
    for l in (s .. "\n"):gmatch("(.-)\n") do out[#out + 1] = l end
    return out
end
do
    local b = hk.alloc(1000):iota()
    local text = b:plot({width = 40, print = false})
    local ls = lines(text)
    t.is(#ls, 2, "sparkline: glyphs and a label line")
    t.is(utf8.len(ls[1]), 40, "sparkline resampled to the width")
    t.ok(ls[1]:sub(1, 3) == "▁" and ls[1]:sub(-3) == "█", "rising data: ▁ first, █ last")
    t.ok(ls[2]:find("min 0", 1, true) and ls[2]:find("max 999", 1, true), "min/max labels")
    local codes, mono = {}, true
    for _, c in utf8.codes(ls[1]) do codes[#codes + 1] = c end
    for i = 2, #codes do mono = mono and codes[i] >= codes[i - 1] end
    t.ok(mono, "rising data: glyphs never fall")
    t.is(utf8.len(lines(hk.alloc(10):iota():plot({width = 40, print = false}))[1]), 10,
        "short buffers: one column per element")
    local flat = lines(hk.alloc(50):fill(3):plot({width = 80, print = false}))[1]
    t.ok(utf8.len(flat) == 50 and flat == string.rep(flat:sub(1, 3), 50), "constant data: a flat line")
    local w = lines(hk.alloc(500):rand():plot({print = false}))[1]
    local cols = tonumber(os.getenv("COLUMNS")) or 80
    t.is(utf8.len(w), math.min(500, cols), "default width is $COLUMNS or 80")

    local h = hk.alloc(100 * 100, "f32"):rand({seed = 1})
    local shade = lines(h:plot({rows = 100, width = 40, color = false, print = false}))
    t.is(#shade, 20 + 1, "shade heatmap: aspect kept, plus a label line")
    t.is(utf8.len(shade[1]), 40, "shade heatmap width")
    local color = lines(h:plot({shape = {100, 100}, width = 40, color = true, print = false}))
    t.is(#color, 20 + 1, "colour heatmap: two rows per line")
    t.ok(color[1]:find("\27[38;2;", 1, true) and color[1]:find("▀", 1, true), "colour heatmap uses 24-bit half blocks")
    local odd = lines(hk.alloc(20):iota():plot({rows = 5, color = true, print = false}))
    t.is(#odd, 3 + 1, "odd row count: the last line has a top half only")
    local capped = lines(h:plot({rows = 100, width = 100, height = 10, color = false, print = false}))
    t.is(#capped, 10 + 1, "height caps the lines")
    t.ok(shade[#shade]:find("100 x 100", 1, true), "heatmap label names the shape")
    t.errors("do not make 3 equal rows", "rows must divide the length", h.plot, h, {rows = 3, print = false})
    t.errors("unknown option 'colour'", "plot option typo", h.plot, h, {colour = true})
    local nan = hk.from({1, 0 / 0, 3}):plot({print = false})
    t.is(utf8.len(lines(nan)[1]), 3, "NaN columns show as blanks")
end

-- ----------------------------------------------------------------- png
do
    local function ihdr(path)
        local s = slurp(path)
        if s:sub(1, 8) ~= "\137PNG\r\n\26\n" or s:sub(13, 16) ~= "IHDR" then return nil end
        return string.unpack(">I4", s, 17), string.unpack(">I4", s, 21)
    end
    local b = hk.alloc(64 * 32):rand({seed = 4})
    local good, err = pcall(b.png, b, tmp, {rows = 32})
    if not good and tostring(err):find("without libpng", 1, true) then
        t.skip("png", "built without libpng")
    else
        t.ok(good, "png heatmap writes")
        local w, h = ihdr(tmp)
        t.ok(w == 64 and h == 32, "heatmap: PNG signature, IHDR 64 x 32 (one pixel per element)")
        b:png(tmp, {shape = {32, 64}, width = 200, height = 90})
        w, h = ihdr(tmp)
        t.ok(w == 200 and h == 90, "heatmap scaled to width x height")
        b:png(tmp)
        w, h = ihdr(tmp)
        t.ok(w == 800 and h == 300, "line chart defaults to 800 x 300")
        b:png(tmp, {kind = "line", width = 640, height = 200})
        w, h = ihdr(tmp)
        t.ok(w == 640 and h == 200, "line chart at the size asked")
        t.errors("/nonexistent/dir/p.png", "png to a bad path names it", b.png, b, "/nonexistent/dir/p.png")
        t.errors("a heatmap needs rows", "heatmap without rows", b.png, b, tmp, {kind = "heatmap"})
        t.errors("unknown kind 'bar'", "unknown kind", b.png, b, tmp, {kind = "bar"})
    end
end

os.remove(tmp)
t.done()
