-- hk.graph: launches recorded once (nothing runs), replayed by g:launch().
-- On the host backend from meson, on a GPU through tests/gpu/run.sh
-- (--backend cuda: a CUDA graph). Replays against the same arithmetic done
-- in Lua; kernel calls, launchers and hk.ops (a kernel op and a host op) in
-- one graph; what cannot be captured is an error naming the call and the
-- session goes on; the graph keeps what it uses alive, and refuses to launch
-- once something it uses was freed by hand.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void scale_add(float *v, float s, float t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * s + t;
}
extern "C" __global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
]], {name = "graph_test"})
local n = 300
local v, y, one = hk.alloc(n, "f32"):iota(1), hk.alloc(n, "f32"):fill(0), hk.alloc(n, "f32"):fill(1)
local acc = hk.alloc(n, "f32"):fill(0)
local ax, ay = hk.alloc(n, "f32"):iota(0), hk.alloc(n, "f32"):fill(-1)
local launcher = m.axpy{grid = (n + 63) // 64, block = 64}
local s_now = 0.5

local g = hk.graph(function()
    m.scale_add:launch((n + 127) // 128, 128, v, s_now, 1.0, n)
    launcher(y, v, 0.25, n)
    hk.ops.binary.add(acc, acc, one)
    hk.ops.affine.affine_twice(ax, ay, 2.0, 1.0)
end)
s_now = 100 -- captured by value: the graph keeps 0.5
t.ok(v[1] == 1 and y[1] == 0 and acc[1] == 0 and ay[1] == -1, "recording ran nothing")
local info = g:info()
t.is(info.nodes, 5, "5 nodes: a kernel, a launcher, an op kernel, a host op's two launches")
t.ok(info.valid and info.buffers == 6, "valid, 6 buffers")
t.is(table.concat(info.kernels, " "), "scale_add axpy add_f32 affine_f32 affine_f32", "the nodes' kernels in order")
t.ok(tostring(g):find("5 launches on " .. info.device, 1, true) and tostring(g):find(info.replay, 1, true),
    "print(g): " .. tostring(g))
t.ok(info.replay == (info.backend == "cuda" and "CUDA graph" or info.backend == "hip" and "hipGraph"
    or "recorded list"), "replayed as " .. info.replay .. " on " .. info.backend)

local reps = 4
g:launch(reps - 1)
g:launch()
local rv, ry = {}, {}
for i = 1, n do rv[i], ry[i] = i, 0 end
for _ = 1, reps do
    for i = 1, n do rv[i] = rv[i] * 0.5 + 1; ry[i] = ry[i] + 0.25 * rv[i] end
end
t.ok(v:allclose(rv, 1e-6, 1e-6), "scale_add replayed " .. reps .. " times with the captured s")
t.ok(y:allclose(ry, 1e-6, 1e-6), "the launcher's axpy after it each time")
t.ok(acc:allclose(function() return reps end, 0, 0), "the op's add accumulated " .. reps .. " times")
t.ok(ay:allclose(function(i) return 2 * (2 * (i - 1) + 1) + 1 end, 1e-6, 1e-6), "the host op's two launches")

-- what cannot be captured: an error naming the call; the session goes on
local ids = hk.alloc(n, "u32"):fill(0)
local cases = {
    {"a host read (b[i])", "cannot be captured", function() return v[1] end},
    {"b:fill", "hk_buffer_fill", function() v:fill(0) end},
    {"hk.sync", "hk_synchronize", function() hk.sync() end},
    {"hk.compile", "hk_module_compile", function() hk.compile('extern "C" __global__ void z(int *p) {}') end},
    {"b:copy", "hk_buffer_copy", function() v:copy(y) end},
    {"an op's scratch memory", "host%->scratch", function()
        hk.ops.reduce.sum(hk.alloc(1, "f32"), ax) end},
    {"an op's error flag", "host%->error_flag", function()
        hk.ops.indexing.index_select(ay, ax, ids, n) end},
    {"a nested hk.graph", "already being recorded", function() hk.graph(function() end) end},
}
for _, c in ipairs(cases) do
    local ok, err = pcall(hk.graph, function()
        m.scale_add:launch(1, 32, v, 2.0, 0.0, 32)
        c[3]()
    end)
    t.ok(not ok and tostring(err):find(c[2]), c[1] .. " while recording: " .. tostring(err))
end
local before = v[2]
m.scale_add:launch(1, 32, v, 2.0, 0.0, 32)
t.is(v[2], before * 2, "after the refusals a launch runs at once again")
local ok, err = pcall(hk.graph, function() m.scale_add:launch(1, 32, v, 2.0, 0.0, 32); error("mine") end)
t.ok(not ok and tostring(err):find("mine") and v[2] == before * 2, "f's own error comes out; nothing ran")
ok, err = pcall(hk.graph, function()
    local caught = pcall(function() return v[1] end) -- caught inside: still discarded
    t.ok(not caught, "the read fails inside f")
end)
t.ok(not ok and tostring(err):find("cannot be captured"), "a refusal caught inside f still discards the graph")

-- temporaries made inside f live as long as the graph
local g2 = hk.graph(function()
    local tmp = hk.alloc(64, "f32")
    m.scale_add:launch(1, 64, tmp, 0.0, 3.0, 64)
    m.axpy:launch(1, 64, acc, tmp, 1.0, 64)
end)
collectgarbage()
collectgarbage()
local a1 = acc[1]
g2:launch()
t.is(acc[1], a1 + 3, "a buffer made inside f outlives f with the graph (two collections)")
local g5 = hk.graph(function() g2:launch(); g2:launch() end)
t.is(g5:info().nodes, 4, "a graph launched twice inside f: its nodes twice")
g5:launch()
t.is(acc[1], a1 + 9, "the composed graph replays them")

-- ops whose kernels pass data through raw scratch (host->scratch_raw) record:
-- the graph gets scratch of its own, used on every replay. Each replay
-- equals the op run directly on the inputs of that moment, bit for bit.
do
    local function same(a, b)
        return table.concat(a:view("u32"):totable(), ",") == table.concat(b:view("u32"):totable(), ",")
    end
    local Q, C = hk.ops.quantized, hk.ops.conv
    -- matvec_rounded of a format the streamed kernel does not take (q5_K):
    -- quantize into scratch, then the q8_1 matvec, on every backend
    local rows, cols = 37, 512
    local wq, wf = hk.alloc(rows * cols, "q5_K"), hk.alloc(rows * cols, "f32")
    wf:rand{seed = 11, lo = -1, hi = 1}
    Q.quantize(wq, wf)
    local xv, yv, yr = hk.alloc(cols, "f32"), hk.alloc(rows, "f32"), hk.alloc(rows, "f32")
    local gq = hk.graph(function() Q.matvec_rounded(yv, wq, xv) end)
    -- conv2d's GEMM route (algo 3): its columns in scratch, then the gemm family
    local xs, ws = {2, 3, 9, 7}, {5, 3, 3, 3}
    local cx, cw = hk.alloc(2 * 3 * 9 * 7, "f32"), hk.alloc(5 * 3 * 3 * 3, "f32"):rand{seed = 12}
    local cy, cr = hk.alloc(2 * 5 * 9 * 7, "f32"), hk.alloc(2 * 5 * 9 * 7, "f32")
    local gc = hk.graph(function() C.conv2d(cy, cx, cw, xs, ws, 1, 1, 1, 1, 3) end)
    local ok = true
    for seed = 1, 3 do
        xv:rand{seed = 20 + seed, lo = -1, hi = 1}
        cx:rand{seed = 30 + seed}
        yv:fill(0 / 0)
        cy:fill(0 / 0)
        gq:launch()
        gc:launch()
        Q.matvec_rounded(yr, wq, xv)
        C.conv2d(cr, cx, cw, xs, ws, 1, 1, 1, 1, 3)
        ok = ok and same(yv, yr) and same(cy, cr)
    end
    t.ok(ok, "matvec_rounded's two launches and conv2d's GEMM route replay from a graph, new inputs each time")
    -- an f32 product with few tiles and a deep k, A's rows an odd length
    -- apart: on NVIDIA the gemm family splits it along k into raw scratch
    -- and packs A there first; elsewhere one launch. The same either way.
    local G, gm, gn, gk = hk.ops.gemm, 64, 64, 1024
    local ga, gb = hk.alloc(gm * (gk + 1), "f32"), hk.alloc(gk * gn, "f32")
    local gcm, gcr = hk.alloc(gm * gn, "f32"), hk.alloc(gm * gn, "f32")
    local gg = hk.graph(function() G.matmul(gcm, ga, gb, gm, gn, gk, false, false, 1.0, 0.0, gk + 1) end)
    local okg = true
    for seed = 1, 2 do
        ga:rand{seed = 50 + seed, lo = -1, hi = 1}
        gb:rand{seed = 60 + seed, lo = -1, hi = 1}
        gcm:fill(0 / 0)
        gg:launch()
        G.matmul(gcr, ga, gb, gm, gn, gk, false, false, 1.0, 0.0, gk + 1)
        okg = okg and same(gcm, gcr)
    end
    t.ok(okg, ("gemm's f32 product of a deep k replays from a graph (%d node(s))"):format(gg:info().nodes))
    t.ok(gq:info().nodes >= 2 and gc:info().nodes >= 2, ("their nodes: %d and %d"):format(gq:info().nodes,
                                                                                      gc:info().nodes))
    -- repack in place goes through a temporary: the graph's own
    local w0, w1 = hk.alloc(8 * 256, "q4_0"), hk.alloc(8 * 256, "q4_0")
    w0:view("u8"):rand{seed = 13, lo = 0, hi = 255}
    w1:copy(w0)
    local gr = hk.graph(function() Q.repack(w0:view("q4_0r"), w0) end)
    gr:launch()
    local sep = hk.alloc(8 * 256, "q4_0r")
    Q.repack(sep, w1)
    t.ok(same(w0:view("u8"), sep:view("u8")), "repack in place replays from a graph (its temporary the graph's)")
    -- inside another recording: the outer graph keeps the inner one, and its scratch, alive
    local outer = hk.graph(function() gq:launch(); gq:launch() end)
    gq = nil
    collectgarbage()
    collectgarbage()
    xv:rand{seed = 40, lo = -1, hi = 1}
    yv:fill(0 / 0)
    outer:launch()
    Q.matvec_rounded(yr, wq, xv)
    t.ok(outer:info().valid and same(yv, yr), "a graph launched inside another keeps its scratch with it")
    -- zeroed scratch is still refused: it would be zero only at the recording
    t.errors("zeroed scratch memory is zeroed as the op runs", "an op's zeroed scratch while recording",
        function() hk.graph(function() hk.ops.reduce.sum(hk.alloc(1, "f32"), cx) end) end)
end

-- freed by hand: the graph refuses to launch, naming what
local w = hk.alloc(n, "f32"):fill(1)
local g3 = hk.graph(function() m.scale_add:launch(1, 32, w, 1.0, 1.0, 32) end)
w:free()
t.errors("was freed", "b:free() of a buffer the graph uses: g:launch refuses", function() g3:launch() end)
t.is(g3:info().valid, false, "g:info() says invalid")
local m3 = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void bump(float *v, int n) { int i = threadIdx.x; if (i < n) v[i] += 1; }
]], {name = "graph_test_bump"})
local g4 = hk.graph(function() m3.bump:launch(1, 32, v, 32) end)
m3:free()
t.errors("module of kernel bump", "m:free() of a module the graph uses: g:launch refuses",
    function() g4:launch() end)

-- an empty graph; g:free(); collection lets go of what a graph kept
local e = hk.graph(function() end)
t.is(e:info().nodes, 0, "an empty graph")
e:launch()
g:free()
t.errors("graph was freed", "g:launch() after g:free()", function() g:launch() end)
t.ok(tostring(g):find("freed", 1, true), "print(g) after free: " .. tostring(g))
local weak = setmetatable({}, {__mode = "v"})
do
    local gg = hk.graph(function()
        local b = hk.alloc(16, "f32")
        weak[1] = b
        m.scale_add:launch(1, 16, b, 1.0, 0.0, 16)
    end)
    collectgarbage()
    collectgarbage()
    t.ok(weak[1] ~= nil and gg:info().valid, "a buffer only the graph holds stays while it lives")
end
collectgarbage()
collectgarbage()
t.ok(weak[1] == nil, "and is collected with it")
t.done()
