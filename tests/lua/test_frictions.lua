-- Small frictions a new user meets: buffer arithmetic, a file name given to
-- hk.compile, compile logs without hipkit's headers, a readable device.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
hk.device("host")

local function values(b) return table.concat(b:totable(), " ") end

local a = hk.from({1, 2, 3, 4}, "f32")
local b = hk.from({10, 20, 30, 40}, "f32")
t.is(values(a + b), "11.0 22.0 33.0 44.0", "b1 + b2 is a new buffer")
t.is(values(b - a), "9.0 18.0 27.0 36.0", "b1 - b2")
t.is(values(a * b), "10.0 40.0 90.0 160.0", "b1 * b2")
t.is(values(b / a), "10.0 10.0 10.0 10.0", "b1 / b2")
t.is(values(a * 2), "2.0 4.0 6.0 8.0", "a number stands for a buffer filled with it")
t.is(values(12 / a), "12.0 6.0 4.0 3.0", "on either side")
t.is(values(a), "1.0 2.0 3.0 4.0", "the operands are left as they were")
t.ok(rawequal(a:add(b), a), "b:add(x) returns b")
t.is(values(a), "11.0 22.0 33.0 44.0", "and adds in place")
a:sub(1):mul(2):div(4)
t.is(values(a), "5.0 10.5 16.0 21.5", "sub, mul and div in place, chained")
local i = hk.from({7, 8, 9}, "i32") * 3
t.is(i:dtype() .. " " .. values(i), "i32 21 24 27", "integer buffers keep their dtype")
t.errors("lengths differ (4 and 3)", "buffers of different lengths are refused",
    function() return a + hk.from({1, 2, 3}, "f32") end)
t.errors("dtypes differ (f32 and i32)", "buffers of different dtypes are refused, naming both",
    function() return a + hk.from({1, 2, 3, 4}, "i32") end)
t.errors("expects buffers or numbers", "other operands are refused", function() return a + "x" end)
-- the op's own errors name the script's line where the operator was written
do
    local b = hk.alloc(4, "i16")
    local ok, err = pcall(function() return b + b end)
    t.ok(not ok and tostring(err):find("test_frictions.lua:%d+: binary.add: no kernel writes i16"),
        "b + b with no kernel for i16: the error starts with the script's line: " .. tostring(err))
    ok, err = pcall(function() hk.ops.binary.add(a, a, hk.alloc(4, "f64")) end)
    t.ok(not ok and tostring(err):find("test_frictions.lua:%d+: binary.add: no kernel writes f32 from f32, f64"),
        "binary.add(f32, f32, f64): the error starts with the script's line: " .. tostring(err))
end

t.errors("hk.compile{path = \"k.hip\"}", "hk.compile with a file name says to use {path=}",
    function() hk.compile("k.hip") end)
t.errors("hk.compile{path = \"dir/saxpy.cu\"}", "for a path too", function() hk.compile("dir/saxpy.cu") end)

local ok, err = pcall(hk.compile, [[
#include <hip/hip_runtime.h>
extern "C" __global__ void k(float *v) {
  v[0] = __shfl(1.0f, 2, 3, 4, 5);
}]], {name = "mine.hip", cache = false})
err = tostring(err)
t.ok(not ok and err:find("mine.hip:3:%d+: error: no matching function for call to") ~= nil,
    "a compile error shows the user's line")
t.ok(not err:find("hipkit_host_device.h", 1, true) and not err:find("In file included from", 1, true),
    "and none about hipkit's own headers")
t.ok(err:find("%d+ lines about hipkit's own headers left out; HIPKIT_FULL_LOG=1 keeps them") ~= nil,
    "saying how many were left out and how to see them")

t.ok(tostring(hk.device()):find(", %d+%.?%d? [KMGT]?i?B, ") ~= nil,
    "hk.device() shows memory as a readable figure: " .. tostring(hk.device()))

t.done()
