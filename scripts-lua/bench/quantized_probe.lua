-- Variants of the quantized matvec kernels side by side on one device, for
-- docs/families/quantized-notes.md: kernels/quantized/quantized.hip (arg[1])
-- compiled by hk.compile with each variant's defines, only the matvec
-- kernels of q4_0, q8_0, q4_K and q6_K instantiated (a compile of seconds),
-- launched directly on several grids (256 threads; HKQ_PROBE_GRIDS="264,528"
-- picks them, HKQ_PROBE_ONLY Lua patterns, comma-separated, one of which a
-- variant's name must match).
-- Next to them a kernel that only reads the same bytes: the ceiling of a
-- launch of this size. Each figure: hk.bench of `copies` back-to-back
-- launches over rotating weight copies (together > 200 MB, beyond the 50
-- MB L2), GB/s of the matrix bytes, ratio to the 256 MiB device copy of
-- the same run; each result is checked against the op's y.
-- Usage: hipkit quantized_probe.lua path/to/quantized.hip [rows] [cols]
local path = assert(arg and arg[1], "usage: quantized_probe.lua quantized.hip [rows] [cols]")
local rows = tonumber(arg[2]) or 14336
local cols = tonumber(arg[3]) or 4096
local Q = hk.ops.quantized
-- beside quantized.hip's shared part, the experiments' kernels (bench
-- files beside this script): x in registers (v8/v9), tensor cores (v10),
-- integer tensor cores (v16), the bulk-copy ring (v19), a lane a row (v20)
local here = arg[0]:match("(.*/)") or "./"
local base = dofile(here .. "quantized_source.lua")(path, {"quantized_xr.hip", "quantized_tc.hip", "quantized_mma.hip",
                                                           "quantized_tma.hip", "quantized_rows.hip"})
local fmts = {q4_0 = "HKQ_Q4_0", q8_0 = "HKQ_Q8_0", q4_K = "HKQ_Q4_K", q6_K = "HKQ_Q6_K"}
local order = {"q4_0", "q8_0", "q4_K", "q6_K"}
local kern = {}
for _, q in ipairs(order) do
    kern[#kern + 1] = ([[
#ifdef HKQ_PROBE_MINB // a register cap; none by default, as the op's kernels (at most 64 registers: 1024 threads)
#define HKQ_PROBE_BOUNDS __launch_bounds__(256, HKQ_PROBE_MINB)
#else
#define HKQ_PROBE_BOUNDS
#endif
extern "C" __global__ void HKQ_PROBE_BOUNDS
mv_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkq_matvec<%s>(w, x, y, rows, cols); }
#ifndef HKM_MINB
#define HKM_MINB 1
#endif
extern "C" __global__ void __launch_bounds__(256, HKM_MINB)
mvi_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkm_matvec_any<%s>(w, x, y, rows, cols); }
extern "C" __global__ void __launch_bounds__(256, HKM_MINB)
mvr_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkm_matvec_ring_any<%s>(w, x, y, rows, cols); }
extern "C" __global__ void HKQ_PROBE_BOUNDS
mv8_%s(const void *w, const void *x, float *y, int rows, int cols)
{ hkq_matvec_q8_1<%s>(w, x, y, rows, cols); }
extern "C" __global__ void mv9_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hk9_matvec<%s, 0>(w, x, y, rows, cols); }
extern "C" __global__ void mv98_%s(const void *w, const void *x, float *y, int rows, int cols)
{ hk9_matvec<%s, 1>(w, x, y, rows, cols); }
extern "C" __global__ void __launch_bounds__(256, HKQ_XR_MINB)
mvx_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkq_matvec_xr_any<%s>(w, x, y, rows, cols); }
]]):format(q, fmts[q], q, fmts[q], q, fmts[q], q, fmts[q], q, fmts[q], q, fmts[q], q, fmts[q])
    if q ~= "q6_K" then -- v10 has no q6_K decoder; v20 no q6_K step (210 bytes a 256-column row)
        kern[#kern + 1] = ([[
extern "C" __global__ void __launch_bounds__(32 * HKR_WB, HKR_MINB)
mvw_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkr_matvec<%s>(w, x, y, rows, cols); }
]]):format(q, fmts[q])
        kern[#kern + 1] = ([[
extern "C" __global__ void __launch_bounds__(32 * HKT_W, HKT_MINB)
mvt_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkt_matvec_any<%s>(w, x, y, rows, cols); }
]]):format(q, fmts[q])
    end
end
local src = base .. table.concat(kern)
-- Each variant: a name and the defines it compiles with. Commit 6da6004
-- (branch quant2) also had the cp.async ring (HKQ_RING 1, HKQ_MAXSTAGES,
-- HKQ_PAIR), measured slower on the H100 and removed (quantized-notes.md).
-- Each variant runs the kernels its third field names: mv_ (the op's f32
-- x path, v4), mv8_ (q8_1 x), mvx_ (x in registers, quantized_xr.hip).
-- the dynamic shared memory of quantized_mma.hip's ring kernel (mvr_), by format
local mma_ring = {q4_0 = 57364, q8_0 = 53272, q4_K = 55828, q6_K = 75796}
-- the dynamic shared memory of quantized_tma.hip's kernels (v19) with a
-- ring of k stages a warp, 8 warps: x (f32, padded), its sums, the stages
local tma_seg = {q4_0 = 1152, q8_0 = 2176, q4_K = 1152, q6_K = 1680}
local function tma_shared(k)
    local t = {}
    for q, sg in pairs(tma_seg) do t[q] = 18432 + 1024 + 8 * k * (sg + 16) + 8 * k * 8 end
    return t
end
-- the dynamic shared memory of quantized_rows.hip's kernels (v20), nw
-- warps a block: x (padded; none with HKR_XG), its sums, two rounds of
-- partial rows, a stage of warp x (segb / 4 + 1) words a warp
local function rows_shared(nw, xg, ch)
    local warp = hk.device().warp_size or 32
    local t = {}
    for q, segb in pairs{q4_0 = 18 * (ch or 256) // 32, q8_0 = 136, q4_K = 144} do
        t[q] = (xg and 0 or 18432) + 1024 + 2 * nw * warp * 4 + nw * (warp * (segb // 4 + 1) + 1) * 4
    end
    return t
end
local variants = {
    -- v20: a lane a row, a block's warps splitting a tile's columns
    -- (quantized_rows.hip); 448 tiles of 32 rows at 14336
    -- (HKR_WB warps a block, at least HKR_MINB blocks an SM: the register cap)
    {"rows CH128 W8 minb3", {HKR_CH = 128, HKR_WB = 8, HKR_MINB = 3}, {"mvw_"}, 256, "HKQ_PROBE_ROWS_GRIDS",
     "264,396,448", rows_shared(8, false, 128)},
    {"rows CH128 W8 minb4", {HKR_CH = 128, HKR_WB = 8, HKR_MINB = 4}, {"mvw_"}, 256, "HKQ_PROBE_ROWS_GRIDS",
     "448,528", rows_shared(8, false, 128)},
    {"rows CH128 W4 minb6", {HKR_CH = 128, HKR_WB = 4, HKR_MINB = 6}, {"mvw_"}, 128, "HKQ_PROBE_ROWS_GRIDS",
     "448,792", rows_shared(4, false, 128)},
    {"rows CH128 W4 minb8", {HKR_CH = 128, HKR_WB = 4, HKR_MINB = 8}, {"mvw_"}, 128, "HKQ_PROBE_ROWS_GRIDS",
     "448,1056", rows_shared(4, false, 128)},
    {"rows CH128 XG W8 minb4", {HKR_CH = 128, HKR_XG = 1, HKR_WB = 8, HKR_MINB = 4}, {"mvw_"}, 256,
     "HKQ_PROBE_ROWS_GRIDS", "448,528", rows_shared(8, true, 128)},
    -- f32 x as integer digit planes and 2-4 rows a warp (v13, v14: commits
    -- 907200b, b6591ed, the v14 run of quantized-notes.md, 2026-11-27) were
    -- measured no faster and are not in the kernel
    -- f32 x with subnormal weights (v17, commit 94c942b: a PRMT and an FFMA
    -- a weight, HKQ_SUB) measured slower and is not in the kernel
    -- f32 x with every format's weights as f16 subnormals (v18, commit
    -- 5ab8166, HKQ_H16): faster for q4_K only, which keeps it
    {"register path (v18)", {}, {"mv_", "mv8_"}},
    -- the same with a register cap of 5 or 6 blocks of 256 an SM (40 or 48 warps)
    {"register minb5", {HKQ_PROBE_MINB = 5}, {"mv_", "mv8_"}},
    {"register minb6", {HKQ_PROBE_MINB = 6}, {"mv_", "mv8_"}},
    -- blocks of 128 or 64 threads: registers are allotted a block at a time,
    -- so 56 a thread hold 36 warps an SM in blocks of 4 warps, 32 in blocks of 8
    {"register B128", {}, {"mv_", "mv8_"}, 128, "HKQ_PROBE_B128_GRIDS", "528,1056,1584"},
    {"register B64", {}, {"mv_", "mv8_"}, 64, "HKQ_PROBE_B64_GRIDS", "1056,2112,3168"},
    -- blocks of 12 warps: x staged once for 12 rows at a time instead of 8
    {"register B384", {HKQ_ROWS = 12}, {"mv_", "mv8_"}, 384, "HKQ_PROBE_B384_GRIDS", "132,264,396,660"},
    -- v19: weights streamed into each warp's ring of stages by bulk copies
    -- (quantized_tma.hip), measured slower, more stages slower still
    {"tma K2", {HK9_K = 2}, {"mv9_", "mv98_"}, 256, nil, nil, tma_shared(2)},
    {"tma K3", {HK9_K = 3}, {"mv9_", "mv98_"}, 256, nil, nil, tma_shared(3)},
    {"tma K4", {HK9_K = 4}, {"mv9_", "mv98_"}, 256, nil, nil, tma_shared(4)},
    -- the f32 x form on integer tensor cores (v16, quantized_mma.hip):
    -- blocks walk 16-row tiles, so few blocks; 3 or 4 an SM by registers
    {"mma (v16)", {}, {"mvi_"}, 256, "HKQ_PROBE_MMA_GRIDS", "132,264,396,528,896"},
    {"mma minb3", {HKM_MINB = 3}, {"mvi_"}, 256, "HKQ_PROBE_MMA_GRIDS", "264,396,528,792"},
    {"mma minb4", {HKM_MINB = 4}, {"mvi_"}, 256, "HKQ_PROBE_MMA_GRIDS", "264,396,528,792"},
    {"mma CH1024 minb4", {HKM_MINB = 4, HKM_CH4 = 1024}, {"mvi_"}, 256, "HKQ_PROBE_MMA_GRIDS", "264,396,528,792"},
    -- v16b: a cp.async ring of two chunks in dynamic shared memory (the
    -- bytes each format's kernel takes), and with a tile counter (HKM_DYN)
    {"mma ring (v16b)", {HKM_MINB = 3}, {"mvr_"}, 256, "HKQ_PROBE_MMA_GRIDS", "264,396,528,792", mma_ring},
    {"mma ring dyn", {HKM_MINB = 3, HKM_DYN = 1}, {"mvr_"}, 256, "HKQ_PROBE_MMA_GRIDS", "264,396,528,792",
     mma_ring},
    {"v4 chunk 4096", {HKQ_CHUNK = 4096}, {"mv_", "mv8_"}},
    {"v9", {}, {"mvx_"}},
    {"v9 minb1", {HKQ_XR_MINB = 1}, {"mvx_"}},
    {"v9 R4", {HKQ_XR_R = 4}, {"mvx_"}},
    {"v9 R2", {HKQ_XR_R = 2}, {"mvx_"}},
    -- tensor cores (quantized_tc.hip), blocks of 4 warps (their own block
    -- size and grids: 896 tiles of 16 rows at 14336): v10 is P 1 D 1
    {"tc P4 D2", {}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D1", {HKT_D = 1}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P2 D2", {HKT_P = 2}, {"mvt_"}, 128, "HKQ_PROBE_TC2_GRIDS", "224,264,448"},
    {"tc P1 D2", {HKT_P = 1}, {"mvt_"}, 128, "HKQ_PROBE_TC1_GRIDS", "112,224"},
    -- diagnostics (wrong y: timings only): the chunk loops unrolled, x's
    -- staging skipped, the sums skipped
    -- 8 warps a block (x's parts in dynamic shared memory), each a
    -- 512-column part of a tile: 16 warps an SM doing one tile each
    {"tc P8 D1 W8", {HKT_D = 1, HKT_P = 8, HKT_W = 8, HKT_XDYN = 1, HKT_MINB = 2}, {"mvt_"}, 256,
     "HKQ_PROBE_TC8_GRIDS", "224,264,448,896", 4096 * 6},
    {"tc P8 D2 W8", {HKT_D = 2, HKT_P = 8, HKT_W = 8, HKT_XDYN = 1, HKT_MINB = 2}, {"mvt_"}, 256,
     "HKQ_PROBE_TC8_GRIDS", "224,264,448,896", 4096 * 6},
    {"tc P4 D1 W8", {HKT_D = 1, HKT_P = 4, HKT_W = 8, HKT_XDYN = 1, HKT_MINB = 2}, {"mvt_"}, 256,
     "HKQ_PROBE_TC8_GRIDS", "224,264,448,896", 4096 * 6},
    -- 3 blocks of 8 warps an SM (at most 85 registers): 24 warps at work
    {"tc P8 D1 W8 minb3", {HKT_D = 1, HKT_P = 8, HKT_W = 8, HKT_XDYN = 1, HKT_MINB = 3}, {"mvt_"}, 256,
     "HKQ_PROBE_TC8_GRIDS", "224,264,396,448", 4096 * 6},
    {"tc P4 D1 W8 minb3", {HKT_D = 1, HKT_P = 4, HKT_W = 8, HKT_XDYN = 1, HKT_MINB = 3}, {"mvt_"}, 256,
     "HKQ_PROBE_TC8_GRIDS", "224,264,396,448", 4096 * 6},
    {"tc P4 D1 2 parts minb5", {HKT_D = 1, HKT_PARTS = 2, HKT_MINB = 5}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS",
     "224,448,528,896"},
    {"tc P4 D1 2 parts minb6", {HKT_D = 1, HKT_PARTS = 2, HKT_MINB = 6}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS",
     "224,448,528,896"},
    {"tc P4 D2 CH256 2 parts minb6", {HKT_CH4 = 256, HKT_PARTS = 2, HKT_MINB = 6}, {"mvt_"}, 128,
     "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D2 CH256", {HKT_CH4 = 256}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D3 CH256", {HKT_CH4 = 256, HKT_D = 3}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D4 CH256", {HKT_CH4 = 256, HKT_D = 4}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P2 D3 CH256", {HKT_CH4 = 256, HKT_D = 3, HKT_P = 2}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D1 unrolled", {HKT_D = 1, HKT_UNROLL_ON = 1}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D1 no x", {HKT_D = 1, HKT_NOX = 1}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D1 no sums", {HKT_D = 1, HKT_NOSUM = 1}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
    {"tc P4 D2 no sums", {HKT_NOSUM = 1}, {"mvt_"}, 128, "HKQ_PROBE_TC_GRIDS", "224,448,528,896"},
}
-- Lua patterns, comma-separated: only the variants one of them matches
local only = os.getenv("HKQ_PROBE_ONLY")
if only then
    local keep = {}
    for _, v in ipairs(variants) do
        for pat in only:gmatch("[^,]+") do
            if v[1]:find(pat) then
                keep[#keep + 1] = v
                break
            end
        end
    end
    variants = keep
end
local function grid_list(var, default)
    local list = {}
    for g in (os.getenv(var) or default):gmatch("%d+") do list[#list + 1] = tonumber(g) end
    return list
end
local grids = grid_list("HKQ_PROBE_GRIDS", "264,528,896,1792")
-- HKQ_PROBE_GRAPH=1: each figure also as one recorded hk.graph of the
-- launches, replayed ("/g" after the back-to-back ratio)
local graph = os.getenv("HKQ_PROBE_GRAPH") == "1"
local big = 256 << 20
local csrc, cdst = hk.alloc(big // 4, "f32"):rand{seed = 2}, hk.alloc(big // 4, "f32")
local copy = hk.bench(function() cdst:copy(csrc) end, {bytes = 2 * big, reps = 20, warmup = 3, print = false})
print(("probe %d x %d on %s: copy 256 MiB %.0f GB/s"):format(rows, cols, hk.device().name or "?", copy.gbps))
-- The ceiling at this size: a kernel that only reads the matrix's bytes
-- (16-byte loads, U of them issued before any use, grid-stride), timed
-- like the matvecs (back to back over the same rotating copies).
local rsrc = [[
#include <hip/hip_runtime.h>
template <int U> __device__ void readall(const void *w, long long n16, unsigned *out)
{
    const uint4 *p = (const uint4 *)w;
    unsigned a = 0;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += U * step) {
        uint4 v[U];
        for (int u = 0; u < U; u++)
            v[u] = i + u * step < n16 ? p[i + u * step] : make_uint4(0, 0, 0, 0);
        for (int u = 0; u < U; u++)
            a ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    if (a == 0x9e3779b9u)
        out[0] = a;
}
extern "C" __global__ void read1(const void *p, long long n16, unsigned *out) { readall<1>(p, n16, out); }
extern "C" __global__ void read4(const void *p, long long n16, unsigned *out) { readall<4>(p, n16, out); }
]]
local rmod = hk.compile(rsrc, {name = "qprobe_read"})
local sink = hk.alloc(1, "u32")
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local xq = hk.alloc(cols, "q8_1")
Q.quantize(xq, x)
local y = hk.alloc(rows, "f32")
local mods = {}
-- a module's kernel, or nil where it has none (v10: no mvt_q6_K)
local function kernel_of(m, name)
    local ok, k = pcall(function() return m[name] end)
    return ok and k or nil
end
for i, v in ipairs(variants) do
    mods[i] = hk.compile(src, {name = "qprobe" .. i, defines = v[2]})
    for _, q in ipairs(order) do
        for _, k in ipairs(v[3]) do
            if not kernel_of(mods[i], k .. q) then goto none end
            local inf = mods[i][k .. q]:info()
            io.write(("  [%s %s%s regs %s shared %s local %s]"):format(v[1], k, q, tostring(inf.registers),
                tostring(inf.static_shared), tostring(inf.local_bytes)))
            if k == "mvt_" or k == "mvi_" or k == "mvr_" then
                local ok, dis = pcall(function() return mods[i][k .. q]:disasm() end)
                local n = 0
                local op = k == "mvt_" and "HMMA" or "IMMA"
                if ok and dis then for _ in dis:gmatch(op) do n = n + 1 end end
                io.write(("  [%s %s]"):format(op, ok and tostring(n) or "?"))
            end
            ::none::
        end
    end
    print(("\n  compiled %s"):format(v[1]))
end
for _, q in ipairs(order) do
    local ws, bytes = dofile(here .. "quantized_weights.lua").copies(q, rows * cols)
    local copies, w1, n = #ws, ws[1], rows * cols
    for _, kn in ipairs{"read1", "read4"} do
        local line = {}
        for _, g in ipairs{528, 1056, 2112} do
            local function all()
                for j = 1, copies do rmod[kn]{grid = g, block = 256}(ws[j]:view("u8"), bytes // 16, sink) end
            end
            local r = hk.bench(all, {bytes = copies * bytes, reps = 10, warmup = 2, print = false})
            line[#line + 1] = ("%d:%.2f"):format(g, r.gbps / copy.gbps)
            if graph then
                local gr = hk.graph(all)
                local rg = hk.bench(function() gr:launch() end,
                                    {bytes = copies * bytes, reps = 10, warmup = 2, print = false})
                line[#line] = line[#line] .. ("/g%.2f"):format(rg.gbps / copy.gbps)
            end
        end
        print(("  %-5s %-7s %-24s %s"):format(q, "", "only reads (" .. kn .. ")", table.concat(line, "  ")))
    end
    for _, form in ipairs{{"mv_", x, "f32 x"}, {"mv9_", x, "f32 x"}, {"mv98_", xq, "q8_1 x"}, {"mvi_", x, "f32 x"}, {"mvr_", x, "f32 x"}, {"mvx_", x, "f32 x"},
                          {"mvt_", x, "f32 x"}, {"mvw_", x, "f32 x"},
                          {"mv8_", xq, "q8_1 x"}} do
        local want = hk.alloc(rows, "f32")
        Q.matvec(want, w1, form[2])
        local wv = want:totable()
        local scale = 0
        for _, v in ipairs(wv) do
            if math.abs(v) < math.huge then scale = math.max(scale, math.abs(v)) end
        end
        for i, v in ipairs(variants) do
            local runs = false
            for _, kn in ipairs(v[3]) do runs = runs or kn == form[1] end
            if not runs or not kernel_of(mods[i], form[1] .. q) then goto next end
            local k = mods[i][form[1] .. q]
            local line = {}
            local bs = v[4] or 256
            local shared = type(v[7]) == "table" and v[7][q] or v[7]
            for _, g in ipairs(v[5] and grid_list(v[5], v[6]) or grids) do
                y:fill(0 / 0)
                k{grid = g, block = bs, shared = shared}(w1, form[2], y, rows, cols)
                local got, bad = y:totable(), 0
                for r = 1, rows do
                    local d = math.abs(got[r] - wv[r])
                    -- random bytes make some f16 scales inf or NaN: those rows are skipped
                    if wv[r] == wv[r] and math.abs(wv[r]) < math.huge and not (d <= 1e-4 * scale) then
                        bad = bad + 1
                    end
                end
                local function all()
                    for j = 1, copies do k{grid = g, block = bs, shared = shared}(ws[j], form[2], y, rows, cols) end
                end
                local r = hk.bench(all, {bytes = copies * bytes, reps = 10, warmup = 2, print = false})
                local flag = bad > 0 and ("!BAD" .. bad) or ""
                line[#line + 1] = ("%d:%.2f%s"):format(g, r.gbps / copy.gbps, flag)
                if graph then -- the same launches as one replayed hk.graph
                    local gr = hk.graph(all)
                    local rg = hk.bench(function() gr:launch() end,
                                        {bytes = copies * bytes, reps = 10, warmup = 2, print = false})
                    line[#line] = line[#line] .. ("/g%.2f"):format(rg.gbps / copy.gbps)
                end
            end
            print(("  %-5s %-7s %-24s %s"):format(q, form[3], v[1], table.concat(line, "  ")))
            ::next::
        end
    end
    ws = nil
    collectgarbage()
end
