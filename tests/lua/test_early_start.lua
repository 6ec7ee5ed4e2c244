-- Early start (HK_LAUNCH_EARLY_START, docs/early-start.md): a kernel that
-- calls hk_grid_wait() may start while the kernel before it ends (NVIDIA
-- sm_90+; elsewhere the launch is an ordinary one). On a GPU through
-- tests/gpu/run.sh, on the CPU backend from meson. Every chain here makes
-- each kernel read what the one before wrote, so a wait that did not wait
-- reads the poison (NaN) or a stale value and fails against the arithmetic
-- done in Lua:
--  - a launcher with early = true, 40 steps ping-ponging two buffers, one
--    by one on the default stream and on a stream of their own, and
--    replayed as a graph (programmatic edges in a CUDA graph);
--  - hk.ops.quantized.matvec (which starts early, reading only w before its
--    wait): y1 = W1 x, y2 = W2 y1, and through q8_1 x (quantize between);
--  - a kernel writing w (slowly, through a u32 view), then matvec reading
--    that w at once: the core drops early start (w was written by the
--    kernel before), so y is right; started early, it would read poison.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")
local mode = (os.getenv("HIPKIT_TEST_BACKEND") or "host") == "host" and "host" or "device"
local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

local m = hk.compile([[
#include <hip/hip_runtime.h>
// out[i] = in[i] * w[i] + b. w is read before the wait: no kernel of the
// chain writes it; in (the last step's out) and out only after. spin: busy
// work between the wait and the store, so that a next kernel whose wait
// did not wait would read in before this one wrote it.
extern "C" __global__ void step(float *out, const float *in, const float *w, float b, int n, int spin) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float wi = i < n ? w[i] : 0.0f;
  hk_grid_wait();
  float v = i < n ? in[i] : 0.0f, d = v;
  for (int k = 0; k < spin; k++)
    d = d * 0.999f + 1.0f;
  if (i < n && d != 12345.678f) out[i] = v * wi + b;
}
]], {name = "early_start_test"})

local n = 1000 + math.random(0, 999)
local steps = 40
local ws, bs = {}, {}
for s = 1, steps do
    ws[s] = hk.alloc(n, "f32", mode):rand{seed = seed + s, lo = -1.25, hi = 1.25}
    bs[s] = f32((math.random() - 0.5))
end
local x0 = hk.alloc(n, "f32", mode):rand{seed = seed, lo = -1, hi = 1}
local launcher = m.step{grid = (n + 127) // 128, block = 128, early = true}
local spin = mode == "host" and 0 or 20000 -- ~50 us of work a step on a GPU
t.ok(tostring(launcher):find("early", 1, true), "print(launcher) says early: " .. tostring(launcher))
t.errors("early= must be true or false", "early = 'yes' is refused by name",
         function() return m.step{grid = 1, block = 64, early = "yes"} end)

-- the chain in Lua: f32 products and sums (the device may fuse them into an
-- FMA: a rounding apart, far below what a stale read would give)
local want = x0:totable()
local wv = {}
for s = 1, steps do
    wv[s] = ws[s]:totable()
    for i = 1, n do want[i] = f32(f32(want[i] * wv[s][i]) + bs[s]) end
end
local function worst(got)
    local e = 0
    for i = 1, n do
        local d = math.abs(got[i] - want[i]) / (1 + math.abs(want[i]))
        if not (d <= e) then e = d ~= d and math.huge or d end
    end
    return e
end

local a, b = hk.alloc(n, "f32", mode), hk.alloc(n, "f32", mode)
local function chain(run)
    a:copy(x0)
    b:fill(0 / 0)
    for s = 1, steps do
        if s % 2 == 1 then run(b, a, ws[s], bs[s]) else run(a, b, ws[s], bs[s]) end
    end
    return (steps % 2 == 0 and a or b):totable()
end
local e = worst(chain(function(o, i, w, bb) launcher(o, i, w, bb, n, spin) end))
t.ok(e < 1e-5, ("%d dependent steps launched early: within %.1e of the Lua arithmetic"):format(steps, e))

-- on a stream of its own, through the launcher
local st = hk.stream()
e = worst(chain(function(o, i, w, bb) st:launch(launcher, o, i, w, bb, n, spin) end)) -- (reading waits for st)
t.ok(e < 1e-5, ("the same chain queued on a stream (s:launch(launcher, ...)): within %.1e"):format(e))
st:free()

local g = hk.graph(function()
    for s = 1, steps do
        if s % 2 == 1 then launcher(b, a, ws[s], bs[s], n, spin) else launcher(a, b, ws[s], bs[s], n, spin) end
    end
end)
t.is(g:info().nodes, steps, "the chain recorded as " .. steps .. " nodes")
a:copy(x0)
b:fill(0 / 0)
g:launch()
e = worst((steps % 2 == 0 and a or b):totable())
t.ok(e < 1e-5, ("the same chain replayed as a graph (%s): within %.1e"):format(g:info().replay, e))

-- the quantized matvec starts early, reading w before its wait
local Q = hk.ops.quantized
local mc = hk.compile([[
#include <hip/hip_runtime.h>
// dst = src, written after busy work that follows the wait
extern "C" __global__ void slow_copy(unsigned *dst, const unsigned *src, int n, int spin) {
  hk_grid_wait();
  float d = 0.0f;
  for (int k = 0; k < spin; k++)
    d = d * 0.999f + 1.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (d != 12345.678f) dst[i] = src[i];
}
]], {name = "early_start_copy"})
local copier = mc.slow_copy{grid = 64, block = 256, early = true}
local function matrix(rows, cols, fmt, s)
    local src = hk.alloc(rows * cols, "f32", mode):rand{seed = s, lo = -1, hi = 1}
    local w = hk.alloc(rows * cols, fmt, mode)
    Q.quantize(w, src)
    local wf = hk.alloc(rows * cols, "f32", mode)
    Q.dequantize(wf, w)
    return w, wf:totable()
end
-- y = W x in double, and each row's sum |w x| (the bench's shared reference)
local here = arg[0]:match("(.*/)") or "./"
local reference = dofile(here .. "../../scripts-lua/bench/quantized_ref.lua")
local function product(wv_, rows, cols, xv) return reference(wv_, xv, rows, cols) end
local function rel(got, y, mag)
    local e_ = 0
    for i = 1, #y do
        local d = math.abs(got[i] - y[i]) / (mag[i] + 1e-30)
        if not (d <= e_) then e_ = d ~= d and math.huge or d end
    end
    return e_
end
for _, fmt in ipairs{"q4_0", "q8_0", "q4_K", "q6_K"} do
    -- W1's rows whole 16-byte pieces (the staged path, which reads w before
    -- its wait); W2's (r1 columns, 9-11 blocks of 32) are not for q4_0 and
    -- q8_0 (the path that waits first)
    local c1 = fmt == "q6_K" and 2048 or 512
    -- r1 is W2's columns: whole blocks (of 32, or 256 for the k-quants)
    local r1, r2 = 32 * (9 + math.random(0, 2)), 37 + math.random(0, 60)
    if fmt:find("K") then r1 = 256 * (1 + math.random(0, 1)) end
    local w1, w1v = matrix(r1, c1, fmt, seed + 101)
    local w2, w2v = matrix(r2, r1, fmt, seed + 202)
    local x = hk.alloc(c1, "f32", mode):rand{seed = seed + 303, lo = -1, hi = 1}
    local y1 = hk.alloc(r1, "f32", mode):fill(0 / 0)
    local y2 = hk.alloc(r2, "f32", mode):fill(0 / 0)
    Q.matvec(y1, w1, x)
    Q.matvec(y2, w2, y1)
    local y1v = y1:totable()
    local want1, mag1 = product(w1v, r1, c1, x:totable())
    local want2, mag2 = product(w2v, r2, r1, y1v)
    local e1, e2 = rel(y1v, want1, mag1), rel(y2:totable(), want2, mag2)
    t.ok(e1 < 2e-6 and e2 < 2e-6, ("%s: y2 = W2 (W1 x), the second matvec reading the first's y: within %.1e, %.1e")
         :format(fmt, e1, e2))
    -- q8_1: matvec, quantize its y, matvec again
    local xq = hk.alloc(r1, "q8_1", mode)
    local y3 = hk.alloc(r2, "f32", mode):fill(0 / 0)
    Q.matvec(y1, w1, x)
    Q.quantize(xq, y1)
    Q.matvec(y3, w2, xq)
    local xqf = hk.alloc(r1, "f32", mode)
    Q.dequantize(xqf, xq)
    local want3, mag3 = product(w2v, r2, r1, xqf:totable())
    local e3 = rel(y3:totable(), want3, mag3)
    t.ok(e3 < 2e-6, ("%s: matvec, quantize to q8_1, matvec of it: within %.1e"):format(fmt, e3))
    -- w written by the kernel just before (slowly, after its own wait, and
    -- through a u32 view of w): the core drops the matvec's early start, or
    -- its early loads would read the poison
    local src = hk.alloc(r1 * c1, "f32", mode):rand{seed = seed + 404, lo = -2, hi = 2}
    local wq = hk.alloc(r1 * c1, fmt, mode)
    Q.quantize(wq, src)
    local wnew = hk.alloc(r1 * c1, fmt, mode)
    wnew:view("u8"):fill(0xff) -- poison: f16 scales of NaN
    local y4 = hk.alloc(r1, "f32", mode):fill(0 / 0)
    local words = #wq:view("u8") // 4
    copier(wnew:view("u32"), wq:view("u32"), words, spin)
    Q.matvec(y4, wnew, x)
    local wf = hk.alloc(r1 * c1, "f32", mode)
    Q.dequantize(wf, wnew)
    local want4, mag4 = product(wf:totable(), r1, c1, x:totable())
    local e4 = rel(y4:totable(), want4, mag4)
    t.ok(e4 < 2e-6, ("%s: a kernel writes w, then matvec of that w at once: within %.1e"):format(fmt, e4))
end
t.done()
