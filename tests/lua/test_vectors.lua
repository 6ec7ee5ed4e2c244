-- Vector parameters by value (float4, int2, ...) from Lua tables: lanes by
-- position or by name, every lane checked against values computed here, the
-- mistakes each named, and launches that allocate nothing. Any backend.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed)

-- x rounded to float, as the kernel stores it
local function f32(x) return (string.unpack("f", string.pack("f", x))) end

local m = hk.compile([[
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
extern "C" __global__ void vec(float4 v, int2 p, float s, float *out, int *iout) {
    if (threadIdx.x) return;
    out[0] = v.x * s; out[1] = v.y * s; out[2] = v.z * s; out[3] = v.w * s;
    iout[0] = p.x; iout[1] = p.y;
}
extern "C" __global__ void mixed(char c, double2 q, uchar4 u, float3 w, __half2 h, longlong2 l,
                                 double *out) {
    if (threadIdx.x) return;
    out[0] = c; out[1] = q.x; out[2] = q.y;
    out[3] = u.x; out[4] = u.y; out[5] = u.z; out[6] = u.w;
    out[7] = w.x; out[8] = w.y; out[9] = w.z;
    out[10] = __low2float(h); out[11] = __high2float(h);
    out[12] = (double)l.x; out[13] = (double)l.y;
}
]], {name = "test_vectors"})
local k = m.vec
local out, iout = hk.alloc(4, "f32"), hk.alloc(2, "i32")

local function poison()
    for i = 1, 4 do out[i] = 0 / 0 end
    for i = 1, 2 do iout[i] = -12345 end
end

-- k:info describes the vectors
local p = k:info().params
t.ok(p[1].kind == "vector" and p[1].dtype == "f32" and p[1].lanes == 4 and p[1].size == 16 and
    p[1].align == 16 and p[1].offset == 0, "k:info(): float4 v is a vector of 4 f32, 16 bytes at 0")
t.ok(p[2].kind == "vector" and p[2].dtype == "i32" and p[2].lanes == 2 and p[2].size == 8 and
    p[2].align == 8 and p[2].offset == 16, "k:info(): int2 p is a vector of 2 i32, 8 bytes at 16")
t.ok(p[3].kind == "scalar" and p[3].lanes == nil and p[4].kind == "pointer" and p[4].dtype == "f32",
    "k:info(): scalars and pointers say so")

-- random lanes, by position and by name, through k:launch and a launcher
local bad = 0
local launcher = k{grid = 1, block = 32}
for round = 1, 40 do
    local v = {}
    for i = 1, 4 do v[i] = f32(math.random() * 200 - 100) end
    local pv = {math.random(-2^31, 2^31 - 1), math.random(-2^31, 2^31 - 1)}
    local s = f32(math.random() * 4 - 2)
    local vt = round % 2 == 0 and v or {x = v[1], y = v[2], z = v[3], w = v[4]}
    local pt = round % 3 == 0 and {x = pv[1], y = pv[2]} or pv
    poison()
    if round % 4 == 0 then launcher(vt, pt, s, out, iout) else k:launch(1, 32, vt, pt, s, out, iout) end
    local good = iout[1] == pv[1] and iout[2] == pv[2]
    for i = 1, 4 do good = good and out[i] == f32(v[i] * s) end
    if not good then
        bad = bad + 1
        if bad <= 3 then t.diag(("round %d: out %s %s %s %s, iout %s %s"):format(round, out[1], out[2],
            out[3], out[4], iout[1], iout[2])) end
    end
end
t.is(bad, 0, "float4 and int2 from tables ({x, y, ...} and {x =, y =, ...}): every lane, 40 rounds")

-- more element types and widths
local mo = hk.alloc(14, "f64")
for i = 1, 14 do mo[i] = 0 / 0 end
local q = {math.random() * 1e6, -math.random()}
local u = {math.random(0, 255), math.random(0, 255), math.random(0, 255), math.random(0, 255)}
local w = {f32(math.random()), f32(-math.random()), f32(1e3 * math.random())}
local h = {0.5, -1.25}
local l = {math.random(-2^52, 2^52), -(2^53)}
m.mixed:launch(1, 1, -7, q, u, {x = w[1], y = w[2], z = w[3]}, h, l, mo)
local want = {-7, q[1], q[2], u[1], u[2], u[3], u[4], w[1], w[2], w[3], h[1], h[2], l[1], l[2]}
local same = true
for i = 1, 14 do same = same and mo[i] == want[i] end
t.ok(same, "double2, uchar4, float3, __half2, longlong2 lanes arrive exactly")

-- 32-byte vectors: CUDA aligns double4 to 16, HIP (AMD, the CPU backend) to 32;
-- the backend decides (CUDA 13 deprecates double4: no warning)
local mw = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void wide(float a, double4 v, int n, double *out) {
    if (threadIdx.x) return;
    out[0] = a; out[1] = v.x; out[2] = v.y; out[3] = v.z; out[4] = v.w; out[5] = n;
}
]], {name = "test_vectors_wide", defines = {"__NV_NO_VECTOR_DEPRECATION_DIAG"}})
local wp = mw.wide:info().params
local wal = hk.device().backend == "cuda" and 16 or 32
t.ok(wp[2].align == wal and wp[2].offset == wal and wp[3].offset == wal + 32 and
    wp[2].size == 32, ("double4 by value: aligned to %d on %s"):format(wal, hk.device().backend))
local wo = hk.alloc(6, "f64")
local dv = {math.random() * 1e9, -1 / 3, 2^-40, -math.random()}
mw.wide:launch(1, 1, 0.75, dv, -42, wo)
t.ok(wo[1] == 0.75 and wo[2] == dv[1] and wo[3] == dv[2] and wo[4] == dv[3] and wo[5] == dv[4] and
    wo[6] == -42, "double4 lanes and the int after it arrive exactly")

-- mistakes, each named
local function errs(pattern, name, ...) t.errors(pattern, name, k.launch, k, 1, 1, ...) end
errs("kernel argument 1 'v' (float4): expects 4 numbers {x, y, z, w}, got a table of 3",
    "three numbers for a float4", {1, 2, 3}, {1, 2}, 1, out, iout)
errs("kernel argument 1 'v' (float4): expects 4 numbers {x, y, z, w}, got a table of 5",
    "five numbers for a float4", {1, 2, 3, 4, 5}, {1, 2}, 1, out, iout)
errs("kernel argument 2 'p' (int2): lane x is missing (expects {x, y}, by position or by name)",
    "an empty table for an int2", {1, 2, 3, 4}, {}, 1, out, iout)
errs("kernel argument 1 'v' (float4): lane w is missing", "a named table without w",
    {x = 1, y = 2, z = 3}, {1, 2}, 1, out, iout)
errs("kernel argument 2 'p' (int2): has no lane z", "a z for an int2", {1, 2, 3, 4},
    {x = 1, y = 2, z = 3}, 1, out, iout)
errs("kernel argument 1 'v' (float4): lane y is a boolean, expects a number", "a boolean lane",
    {1, true, 3, 4}, {1, 2}, 1, out, iout)
errs("kernel argument 2 'p' (int2): lane x is a string, expects a number", "a string lane",
    {1, 2, 3, 4}, {"1", 2}, 1, out, iout)
errs("vec: parameter 2 'p' (int2) lane y: value 1099511627776 out of range [-2147483648, 2147483647]",
    "a lane out of the element's range", {1, 2, 3, 4}, {1, 1 << 40}, 1, out, iout)
errs("vec: parameter 2 'p' (int2) lane x: got 1.5, expects an integer", "a fraction for an int lane",
    {1, 2, 3, 4}, {1.5, 2}, 1, out, iout)
errs("vec: parameter 1 'v' (float4) lane z: value 1e+39 out of range", "1e39 for a float lane",
    {1, 2, 1e39, 4}, {1, 2}, 1, out, iout)
errs("vec: parameter 1 'v' (float4) got 1, expects a vector of 4 numbers (a table {x, y, z, w} in Lua)",
    "a number for a float4", 1, {1, 2}, 1, out, iout)
errs("kernel argument 3 is a table, but its parameter 's' (float) is no vector",
    "a table for a float", {1, 2, 3, 4}, {1, 2}, {1}, out, iout)
errs("expects 5 arguments", "a table beyond the parameters: the count is the error",
    {1, 2, 3, 4}, {1, 2}, 1, out, iout, {1})
t.errors("lane x: 9007199254740993 is not exactly representable as a double",
    "an integer lane a double cannot hold", m.mixed.launch, m.mixed, 1, 1, 0, q, u, w, h,
    {(1 << 53) + 1, 0}, mo)

-- launches allocate nothing on the Lua heap, vectors included
local vt, pt, named = {1, 2, 3, 4}, {5, 6}, {x = 1, y = 2, z = 3, w = 4}
for _ = 1, 100 do k:launch(1, 1, vt, pt, 2, out, iout); launcher(named, pt, 2, out, iout) end
hk.sync()
collectgarbage("collect")
collectgarbage("stop")
local kb0 = collectgarbage("count")
for _ = 1, 2000 do
    k:launch(1, 1, vt, pt, 2, out, iout)
    launcher(named, pt, 2, out, iout)
end
hk.sync()
local grew = (collectgarbage("count") - kb0) * 1024
collectgarbage("restart")
t.is(grew, 0, "4000 launches with vector tables grow the Lua heap by 0 bytes")

t.done()
