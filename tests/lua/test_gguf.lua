-- hk.gguf: GGUF files this test writes itself (string.pack, from the format
-- in ggml's docs/gguf.md): metadata of every value type, tensors of plain
-- and quantized types as buffers (mapped, and copied), and the reader's
-- refusals: a truncated file at every length, bad magic and versions, a
-- tensor past the end, unknown types, absurd counts and lengths.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

local dir = os.getenv("TMPDIR") or "/tmp"
local path = string.format("%s/hk-gguf-%d-%d.gguf", dir, os.time(), math.random(1 << 30))

local T = {u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, bool = 7, string = 8,
           array = 9, u64 = 10, i64 = 11, f64 = 12}
local fmt = {[0] = "<I1", "<i1", "<I2", "<i2", "<I4", "<i4", "<f", "<I1", nil, nil, "<I8", "<i8", "<d"}

local function str(s) return string.pack("<s8", s) end
local function kv(key, ty, v)
    if ty == T.string then return str(key) .. string.pack("<I4", ty) .. str(v) end
    return str(key) .. string.pack("<I4", ty) .. string.pack(fmt[ty], v)
end
local function kv_array(key, et, list)
    local parts = {str(key), string.pack("<I4I4I8", T.array, et, #list)}
    for _, v in ipairs(list) do parts[#parts + 1] = et == T.string and str(v) or string.pack(fmt[et], v) end
    return table.concat(parts)
end
local function tinfo(name, dims, ggml_type, offset)
    local parts = {str(name), string.pack("<I4", #dims)}
    for _, d in ipairs(dims) do parts[#parts + 1] = string.pack("<I8", d) end
    parts[#parts + 1] = string.pack("<I4I8", ggml_type, offset)
    return table.concat(parts)
end
-- header + kvs + tensor infos, padded to align, then data
local function gguf(version, kvs, infos, data, align)
    local head = "GGUF" .. string.pack("<I4I8I8", version, #infos, #kvs) .. table.concat(kvs) ..
                 table.concat(infos)
    align = align or 32
    return head .. string.rep("\0", (align - #head % align) % align) .. (data or "")
end
local function write(bytes)
    local f = assert(io.open(path, "wb"))
    f:write(bytes)
    f:close()
end

-- tensor data: w f32 4x3, q q8_0 64x2 (4 blocks of 34 bytes), h f16 5
local wvals = {}
for i = 1, 12 do wvals[i] = (i - 6.5) * 0.25 end
local wbytes = string.pack("<" .. string.rep("f", 12), table.unpack(wvals))
local qbytes = {}
for i = 1, 4 * 34 do qbytes[i] = string.char((i * 37 + 11) % 256) end
qbytes = table.concat(qbytes)
local hbytes = string.pack("<I2I2I2I2I2", 0x3c00, 0xc000, 0x3800, 0, 0x7bff)
local kvs = {
    kv("general.alignment", T.u32, 64), kv("a.u8", T.u8, 200), kv("a.i8", T.i8, -100),
    kv("a.u16", T.u16, 60000), kv("a.i16", T.i16, -30000), kv("a.i32", T.i32, -2000000000),
    kv("a.f32", T.f32, 0.5), kv("a.bool", T.bool, 1), kv("general.name", T.string, "tiny model"),
    kv("a.u64", T.u64, 1 << 40), kv("a.i64", T.i64, -(1 << 50)), kv("a.f64", T.f64, 1.25),
    kv("a.big", T.u64, math.mininteger + 1), -- 2^63 + 1
    kv_array("a.ints", T.i32, {3, -1, 4}), kv_array("a.words", T.string, {"x", "", "yz"}),
}
local data = wbytes .. string.rep("\0", 64 - #wbytes) .. qbytes .. string.rep("\0", 256 - 64 - #qbytes) .. hbytes
local infos = {tinfo("w", {4, 3}, 0, 0), tinfo("q", {64, 2}, 8, 64), tinfo("h", {5}, 1, 256)}
write(gguf(3, kvs, infos, data, 64))

local g = hk.gguf(path)
t.is(g.version, 3, "version")
t.is(g.alignment, 64, "general.alignment read")
t.ok(tostring(g):find("3 tensors", 1, true) ~= nil, "prints as one line: " .. tostring(g))
local m = g.metadata
t.ok(m["a.u8"] == 200 and m["a.i8"] == -100 and m["a.u16"] == 60000 and m["a.i16"] == -30000 and
     m["a.i32"] == -2000000000 and m["a.f32"] == 0.5 and m["a.bool"] == true and
     m["a.u64"] == 1 << 40 and m["a.i64"] == -(1 << 50) and m["a.f64"] == 1.25,
     "every scalar value type")
t.ok(math.type(m["a.big"]) == "integer" and m["a.big"] == math.mininteger + 1,
     "a u64 of 2^63 + 1 reads as the integer of its bits, exactly, as u64 buffers do: " .. tostring(m["a.big"]))
t.is(m["general.name"], "tiny model", "a string value")
t.is(table.concat(m["a.ints"], ","), "3,-1,4", "an array of i32")
t.is(table.concat(m["a.words"], "|"), "x||yz", "an array of strings (one empty)")
t.is(#g.tensors, 3, "three tensors")
local w, q, h = g.tensors.w, g.tensors.q, g.tensors[3]
t.ok(w == g.tensors[1] and w.type == "f32" and w.dtype == "f32" and w.shape[1] == 4 and
     w.shape[2] == 3 and w.elements == 12 and w.bytes == 48, "tensor w: type, shape, size")
t.is(q.offset - w.offset, 64, "offsets are from the file's start, data aligned")
t.ok(q.type == "q8_0" and q.dtype == "q8_0" and q.elements == 128 and q.bytes == 136,
     "tensor q: q8_0, 128 elements in 136 bytes")
t.is(h.name, "h", "tensors by index keep the file's order")

local wb = w.buffer
t.ok(tostring(wb):find("mmap", 1, true) ~= nil, "a tensor's buffer is a mapping by default")
t.is(table.concat(wb:totable(), ","), table.concat(wvals, ","), "mapped f32 tensor reads its values")
t.ok(rawequal(w.buffer, wb), "the buffer is made once")
local qb = q.buffer
t.ok(tostring(qb):find("q8_0", 1, true) and tostring(qb):find("4 blocks", 1, true),
     "print(buf) names the format: " .. tostring(qb))
t.is(#qb, 128, "#buf counts elements")
local raw = qb:view("u8", 0, 136):totable()
for i = 1, #raw do raw[i] = string.char(raw[i]) end
t.is(table.concat(raw), qbytes, "the q8_0 blocks are the file's bytes")
local ok, err = pcall(function() return qb[1] end)
t.ok(not ok and err:find("block format", 1, true), "a block format's elements are not indexed")
local hv = h.buffer:totable()
t.ok(hv[1] == 1 and hv[2] == -2 and hv[3] == 0.5 and hv[4] == 0 and hv[5] == 65504, "f16 tensor values")

local gh = hk.gguf(path, {mode = "host"})
t.ok(tostring(gh.tensors.w.buffer):find("host", 1, true) ~= nil and
     table.concat(gh.tensors.w.buffer:totable(), ",") == table.concat(wvals, ","),
     "mode host: a copy with the same values")
ok, err = pcall(hk.gguf, path, {mode = "nowhere"})
t.ok(not ok and tostring(err):find("bad argument #2 to 'hk.gguf' (option 'mode': unknown memory mode 'nowhere'",
     1, true), "an unknown mode is refused, naming the option: " .. tostring(err))

-- alignment 1: a tensor at an odd byte cannot be an f32 view of the
-- mapping; the error names the tensor and asks for a copy, which works
do
    local one = {kv("general.alignment", T.u32, 1)}
    local head = gguf(3, one, {tinfo("odd", {2}, 0, 1)}, "", 1)
    local odd = path .. ".odd.gguf"
    local f = assert(io.open(odd, "wb"))
    f:write(head .. "\0" .. string.pack("<ff", 1.5, -2))
    f:close()
    local g1 = hk.gguf(odd, {mode = "host"})
    t.is(table.concat(g1.tensors.odd.buffer:totable(), ","), "1.5,-2.0", "alignment 1: a host copy of the odd tensor")
    local gm = hk.gguf(odd)
    local okm, errm = pcall(function() return gm.tensors.odd.buffer end)
    t.ok(not okm and tostring(errm):find("tensor 'odd' at byte", 1, true) and
         tostring(errm):find("cannot be mapped as f32", 1, true) and tostring(errm):find("ask for a copy", 1, true),
         "mmap of a misaligned tensor names it and asks for a copy: " .. tostring(errm))
    g1, gm = nil, nil
    collectgarbage()
    os.remove(odd)
end

-- a kernel writing into a mapped tensor (read-only) faults; on the CPU
-- backend the message counts the element from the tensor, not from the
-- pages mapped around it, and says how to write
if hk.device().backend == "host" then
    local gw = hk.gguf(path)
    local okw, errw = pcall(hk.ops.fill.fill_f32, gw.tensors.w.buffer, 2.5, 12)
    errw = tostring(errw)
    t.ok(not okw and errw:find("mapped read-only from " .. path, 1, true) and
         errw:find("argument y, element index 0", 1, true) and errw:find("write to a copy (b:clone())", 1, true),
         "a write into a mapped tensor names the argument, its element and what to do: " .. errw)
    gw = nil
    collectgarbage()
end

-- hipkit inspect lists the file
local exe = arg[-1]
if exe and exe:find("hipkit", 1, true) then
    local p = io.popen(string.format("%q inspect %q 2>&1", exe, path))
    local out = p:read("a")
    p:close()
    t.ok(out:find("GGUF v3, 15 metadata keys, 3 tensors", 1, true) and
         out:find("q8_0%s+64 x 2%s+136") and out:find('"tiny model"', 1, true) and
         out:find("[3 x string]", 1, true), "hipkit inspect lists the metadata and tensors")
    if not out:find("3 tensors", 1, true) then t.diag(out) end
else
    t.skip("hipkit inspect", "the hipkit program's path is unknown (arg[-1])")
end

-- a tensor buffer outlives the table it came from
local keep = hk.gguf(path).tensors.w.buffer
collectgarbage()
collectgarbage()
t.is(keep[12], wvals[12], "a tensor's buffer keeps its file open after the table is gone")

-- refusals
local function refused(bytes, want, name)
    write(bytes)
    local ok2, e = pcall(hk.gguf, path)
    if not t.ok(not ok2 and tostring(e):find(want, 1, true) ~= nil, name) then
        t.diag(ok2 and "opened" or tostring(e))
    end
end
local good = gguf(3, {kv("k", T.u32, 1)}, {tinfo("w", {4, 3}, 0, 0)}, wbytes)
refused("GGUX" .. good:sub(5), "not a GGUF file", "bad magic")
refused(good:sub(1, 4) .. string.pack("<I4", 1) .. good:sub(9), "version 1", "version 1")
refused(good:sub(1, 4) .. string.pack("<I4", 4) .. good:sub(9), "version 4", "version 4")
refused(good:sub(1, 4) .. string.pack(">I4", 3) .. good:sub(9), "big-endian", "a big-endian file")
local bad_trunc = 0
for n = 0, #good - 1 do
    write(good:sub(1, n))
    local ok2, e = pcall(hk.gguf, path)
    if ok2 or not (e:find("truncated", 1, true) or e:find("past the end", 1, true) or
                   e:find("cannot fit", 1, true) or e:find("not a GGUF", 1, true)) then
        bad_trunc = bad_trunc + 1
        t.diag(n .. ": " .. (ok2 and "opened" or e))
    end
end
t.is(bad_trunc, 0, "the file cut at every length is refused as truncated")
refused(gguf(3, {}, {tinfo("w", {4, 4}, 0, 0)}, wbytes), "runs past the end", "a tensor past the end")
refused(gguf(3, {}, {tinfo("w", {4, 3}, 4, 0)}, wbytes), "unknown type 4", "a retired ggml type")
refused(gguf(3, {}, {tinfo("w", {4, 3}, 99, 0)}, wbytes), "unknown type 99", "an unknown ggml type")
refused(gguf(3, {str("k") .. string.pack("<I4", 13) .. "x"}, {}), "unknown value type 13", "an unknown value type")
refused("GGUF" .. string.pack("<I4I8I8", 3, 0, 1 << 60), "cannot fit", "an absurd metadata count")
refused("GGUF" .. string.pack("<I4I8I8", 3, 1 << 40, 0), "cannot fit", "an absurd tensor count")
refused("GGUF" .. string.pack("<I4I8I8I8", 3, 0, 1, 1 << 62) .. string.rep("a", 16), "past the end of the file",
        "an absurd string length")
refused(gguf(3, {str("k") .. string.pack("<I4I4I8", T.array, T.u64, 1 << 61)}, {}), "cannot fit",
        "an absurd array length")
refused(gguf(3, {str("k") .. string.pack("<I4I4I8", T.array, T.array, 1)}, {}), "nested array",
        "a nested array")
refused(gguf(3, {kv("k", T.u8, 1), kv("k", T.u8, 2)}, {}), "appears twice", "a repeated key")
refused(gguf(3, {}, {tinfo("w", {4}, 0, 0), tinfo("w", {4}, 0, 32)}, string.rep("\0", 64)),
        "appears twice", "a repeated tensor name")
refused(gguf(3, {kv("general.alignment", T.u32, 24)}, {}), "not a power of two", "an alignment of 24")
refused(gguf(3, {}, {tinfo("w", {4}, 0, 16)}, string.rep("\0", 64)), "not a multiple of the alignment",
        "a misaligned tensor offset")
refused(gguf(3, {}, {tinfo("q", {48}, 2, 0)}, string.rep("\0", 64)), "no whole number of q4_0 blocks",
        "a row that is no whole number of blocks")
refused(gguf(3, {}, {tinfo("w", {1, 1, 1, 1, 1}, 0, 0)}, string.rep("\0", 64)), "5 dimensions",
        "five dimensions")
refused(gguf(3, {}, {tinfo("w", {1 << 32, 1 << 32, 1 << 32}, 0, 0)}, ""), "overflows",
        "an element count past 64 bits")
write(gguf(2, {kv("k", T.string, "v2")}, {tinfo("w", {4, 3}, 0, 0)}, wbytes))
local g2 = hk.gguf(path)
t.ok(g2.version == 2 and g2.metadata.k == "v2" and g2.tensors.w.buffer[5] == wvals[5], "a version 2 file")

-- Opening must not read tensor data: a 4 GiB (sparse) file opens and lists in
-- under 50 ms. Timing is meaningless under valgrind: gated.
if os.getenv("HIPKIT_TEST_BIG") then
    local big = {}
    for i = 0, 3 do big[#big + 1] = tinfo("blk." .. i, {4096, 65536}, 0, i << 30) end
    local head = gguf(3, {kv("general.name", T.string, "big")}, big)
    local f = assert(io.open(path, "wb"))
    f:write(head)
    f:seek("set", #head + (4 << 30) - 1)
    f:write("\0")
    f:close()
    local t0 = hk.clock()
    local gb = hk.gguf(path)
    local bytes = 0
    for _, tensor in ipairs(gb.tensors) do bytes = bytes + tensor.bytes end
    local ms = (hk.clock() - t0) * 1e3
    t.ok(bytes == 4 << 30 and ms < 50, ("a 4 GiB file opens and lists in %.2f ms"):format(ms))
else
    t.skip("4 GiB file opens in < 50 ms", "set HIPKIT_TEST_BIG=1 to run it")
end

os.remove(path)
t.done()
