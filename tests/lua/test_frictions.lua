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
    t.ok(pcall(hk.ops.binary.add, hk.alloc(4, "f32"), a, a, nil),
        "binary.add(c, a, b, nil): a trailing nil is an argument left out, as for an op")
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

-- __launch_bounds__ holds on the CPU backend as on a GPU: the kernel's
-- maximum is its info, and a larger block is refused, naming the bound.
do
    local m = hk.compile([[
#define THREADS 96
__global__ void __launch_bounds__(THREADS * 2) lb(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * i + 1.0f;
}
__global__ void free_k(float *y) { y[threadIdx.x] = 7.0f; }
]], {name = "bounds.hip"})
    local lb = m:kernel("lb")
    t.is(lb:info().max_threads_per_block, 192, "__launch_bounds__(THREADS * 2) read as 192")
    t.is(m:kernel("free_k"):info().max_threads_per_block, 1024, "a kernel without one: the device's 1024")
    local n = 1000
    local y = hk.alloc(n, "f32")
    y:fill(-1)
    t.errors("this kernel allows at most 192 per block (its __launch_bounds__", "a block of 256 is refused",
        function() lb({grid = 4, block = 256}, y, n) end)
    t.is(y[1], -1.0, "and nothing ran")
    lb({grid = (n + 191) // 192, block = 192}, y, n)
    hk.sync()
    local bad = 0
    for i = 1, n do if y[i] ~= 2 * (i - 1) + 1 then bad = bad + 1 end end
    t.is(bad, 0, "a block of 192 runs: every element written")
    local mt = hk.compile([[
template <int W> __global__ void __launch_bounds__(W * 32) lbt(float *y) { y[threadIdx.x] = W; }
]], {name = "tbounds.hip", instantiate = {"lbt<2>"}})
    t.is(mt:kernel("lbt<2>"):info().max_threads_per_block, 64, "a template's bound, W * 32 with W = 2: 64")
end

-- Overloaded kernels: the module compiles, the other kernels launch, and a
-- lookup of the overloaded name says why none can be, with each line.
do
    local m = hk.compile([[
__global__ void over(float *y, int n) { if ((int)threadIdx.x < n) y[threadIdx.x] = 1.0f; }
__global__ void other(float *y) { y[threadIdx.x] = 3.0f + threadIdx.x; }

__global__ void over(int *y, int n) { if ((int)threadIdx.x < n) y[threadIdx.x] = 2; }
]], {name = "over.hip"})
    t.errors("kernel over is overloaded (2 definitions, at lines 1, 4); hipkit finds a kernel by its name alone",
        "an overloaded kernel's lookup names its definitions", function() return m:kernel("over") end)
    t.errors("kernel over is overloaded", "with a signature too",
        function() return m:kernel("over", "float *y, int n") end)
    local y = hk.alloc(33, "f32")
    y:fill(-1)
    m:kernel("other")({grid = 1, block = 32}, y)
    hk.sync()
    t.is(y[1] + y[32] + y[33], 3 + 34 - 1, "the module's other kernel runs (33rd element untouched)")
end

-- u64 elements and arguments of 2^63 and more: Lua integers are 64-bit two's
-- complement, so such values are negative integers; a u64 element takes them
-- as their bits, a kernel argument through hk.u64 (a plain negative integer
-- for an unsigned parameter stays an error).
do
    local b = hk.alloc(4, "u64")
    b:fill(0)
    b[1] = 0xFFFFFFFFFFFFFFFF
    b[2] = b[1]
    b[3] = math.mininteger
    t.ok(b[1] == -1 and b[2] == -1 and b[3] == math.mininteger, "u64 elements read back as written")
    t.ok(tostring(b):find("{18446744073709551615, 18446744073709551615, 9223372036854775808, 0}", 1, true),
        "and print as the unsigned values: " .. tostring(b))
    t.errors("value -1 out of range for u64", "a negative float is still refused", function() b[4] = -1.5 + 0.5 end)
    local m = hk.compile([[__global__ void put(unsigned long long *y, unsigned long long v) { y[threadIdx.x] = v - threadIdx.x; }]])
    m.put({grid = 1, block = 4}, b, hk.u64(-2))
    hk.sync()
    t.ok(b[1] == -2 and b[4] == -5, "hk.u64(-2): a u64 argument of 2^64 - 2 reaches the kernel")
    m.put({grid = 1, block = 4}, b, hk.u64("0xFFFFFFFFFFFFFFF0"))
    hk.sync()
    t.ok(b[1] == -16 and b[2] == -17, "hk.u64 of a hex string")
    t.is(tostring(hk.u64("18446744073709551615")), "hk.u64(18446744073709551615)", "hk.u64 prints unsigned")
    t.errors("value -2 out of range [0, 18446744073709551615]",
        "a plain negative integer for an unsigned parameter is still refused (a count of -1 is a mistake)",
        function() m.put({grid = 1, block = 4}, b, -2) end)
    t.errors("is no decimal or 0x number below 2^64", "hk.u64 refuses 2^64", function() return hk.u64("18446744073709551616") end)
    t.errors("out of range", "a u32 parameter refuses -1", function()
        hk.compile([[__global__ void p32(unsigned *y, unsigned v) { y[0] = v; }]]).p32({grid = 1, block = 1}, hk.alloc(1, "u32"), -1)
    end)
end

t.done()
