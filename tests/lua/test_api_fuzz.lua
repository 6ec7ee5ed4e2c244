-- A bounded random fuzzer of the hk Lua API: random calls with random
-- arguments (numbers at the edges, wrong types, freed buffers, views,
-- tables whose metamethods free buffers mid-call), each under pcall. The
-- promise under test: no call crashes the process or corrupts memory (the
-- ASan and valgrind passes run this file too); errors are fine. Seeded:
-- HIPKIT_TEST_SEED replays a run; HIPKIT_TEST_HEAVY=1 makes 50 000 calls.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

local seed = tonumber(os.getenv("HIPKIT_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HIPKIT_TEST_SEED=" .. seed .. " replays it)")
local calls = os.getenv("HIPKIT_TEST_HEAVY") == "1" and 50000 or 1500

local DTYPES = {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
local tmp = os.tmpname()
local live = {} -- buffers made so far (some freed, some views)

local function pick(list) return list[math.random(#list)] end

local function any_buffer()
    if #live == 0 then return nil end
    return live[math.random(#live)]
end

local NUMBERS = {0, 1, -1, 2, 7, 64, 1000, 4097, 0.5, -0.0, 1e308, -1e308, 1 / 0, -1 / 0, 0 / 0,
                 math.maxinteger, math.mininteger, (1 << 53) + 1, 1 << 40, 255, 256, -129}

-- A random argument; depth bounds nested tables.
local function value(depth)
    local k = math.random(12)
    if k <= 4 then return pick(NUMBERS) end
    if k == 5 then return pick(DTYPES) end
    if k == 6 then return pick({"device", "host", "managed", "mmap", "bogus", "", "f32\0x", tmp}) end
    if k == 7 then return any_buffer() end
    if k == 8 then return nil end
    if k == 9 then return pick({true, false, hk.null}) end
    if k == 10 then
        return function(i) if math.random(50) == 1 then local b = any_buffer() if b then pcall(b.free, b) end end
            return i end
    end
    if depth > 1 then return {} end
    local tb = {}
    for i = 1, math.random(0, 4) do tb[i] = value(depth + 1) end
    if math.random(3) == 1 then
        for _, key in ipairs({"seed", "lo", "hi", "width", "height", "print", "shape", "kind", "rows"}) do
            if math.random(3) == 1 then tb[key] = value(depth + 1) end
        end
        tb.print = false
    end
    if math.random(4) == 1 then -- options whose reads run Lua that frees a buffer
        setmetatable(tb, {__index = function(_, key)
            local b = any_buffer()
            if b and math.random(3) == 1 then pcall(b.free, b) end
            return key == "print" and false or nil
        end, __len = function() return math.random(0, 8) end})
    end
    return tb
end

local METHODS = {"fill", "iota", "rand", "copy", "clone", "view", "free", "totable", "stats",
                 "allclose", "plot", "save", "dtype", "mode", "device", "bytes", "png"}

local function one_call()
    local k = math.random(10)
    if k <= 2 then -- make a buffer (small: the fuzzer is about misuse, not memory)
        local n = math.random(0, 300)
        local ok, b = pcall(hk.alloc, n, pick(DTYPES), pick({"device", "host", "managed"}))
        if ok then live[#live + 1] = b end
        return
    end
    if k == 3 then
        local ok, b = pcall(hk.from, {value(1), value(1), 1, 2}, pick(DTYPES))
        if ok then live[#live + 1] = b end
        return
    end
    if k == 4 then
        local f = io.open(tmp, "wb")
        f:write(string.rep(string.char(math.random(0, 255)), math.random(0, 64)))
        f:close()
        local fn = pick({hk.load, hk.inspect, hk.load_npy, hk.mmap})
        local ok, b = pcall(fn, tmp, value(1), value(1))
        if ok and type(b) == "userdata" and fn ~= hk.load then live[#live + 1] = b end
        return
    end
    local b = any_buffer()
    if not b then return end
    if k == 5 then pcall(function() return b[value(1)] end) return end
    if k == 6 then pcall(function() b[value(1)] = value(1) end) return end
    if k == 7 then pcall(function() return #b, tostring(b) end) return end
    local m = pick(METHODS)
    local args = {value(1), value(1), value(1), value(1)}
    if m == "save" or m == "png" then args[1] = tmp end
    if m == "plot" then args[1] = {print = false, width = math.random(1, 100)} end
    local ok, r = pcall(function() return b[m](b, table.unpack(args, 1, 4)) end)
    if ok and (m == "view" or m == "clone") and type(r) == "userdata" then live[#live + 1] = r end
    if #live > 64 then table.remove(live, 1) end
end

for _ = 1, calls do one_call() end
collectgarbage("collect")
os.remove(tmp)
os.remove(tmp .. ".npy")
t.ok(true, calls .. " random calls: this process is alive")
-- and the API still works afterwards
local b = hk.from({1, 2, 3}, "f32", "host")
t.ok(b:allclose({1, 2, 3}), "the API works after the fuzz")
t.done()
