-- The integer tensor-core f32-x matvec (quantized_mma.hip, mvi_<fmt>, v16)
-- against a double-precision product of the dequantized matrix, next to
-- the op's matvec: the worst error relative to sum |w x| (the family
-- test's bound is 2e-6), on matrices quantized from random data, with x
-- uniform, of widely spread magnitudes (2^-30 .. 2^30, zeros among them),
-- and holding an inf (the kernel then takes the row path). Rows of 40
-- (a partial 16-row tile), columns of 4096 (two chunks) and 2816 (a
-- partial chunk), grids of 1, 2 and 7 blocks. On the CPU backend the mma
-- is emulated (HKM_EMU), which checks the indexing; on an NVIDIA sm_80+
-- device it runs.
-- mvr_ is the cp.async ring (v16b); HKM_DYN=1 in the environment adds its
-- tile counter.
-- Usage: hipkit quantized_mma_check.lua path/to/quantized.hip
local path = assert(arg and arg[1], "usage: quantized_mma_check.lua quantized.hip")
local Q = hk.ops.quantized
local here = arg[0]:match("(.*/)") or "./"
local double_product = dofile(here .. "quantized_ref.lua")
local src = dofile(here .. "quantized_source.lua")(path, {"quantized_mma.hip"})
local fmts = {q4_0 = "HKQ_Q4_0", q8_0 = "HKQ_Q8_0", q4_K = "HKQ_Q4_K", q6_K = "HKQ_Q6_K"}
for q, F in pairs(fmts) do
    src = src .. ([[
extern "C" __global__ void mvi_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkm_matvec_any<%s>(w, x, y, rows, cols); }
extern "C" __global__ void mvr_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkm_matvec_ring_any<%s>(w, x, y, rows, cols); }
]]):format(q, F, q, F)
end
local host = hk.device().backend == "host"
local defines = host and {HKM_EMU = 1} or {}
if os.getenv("HKM_DYN") == "1" then defines.HKM_DYN = 1 end
local m = hk.compile(src, {name = "qmma_check", defines = defines})
local function xs_of(kind, cols)
    if kind == "uniform" then return hk.alloc(cols, "f32"):rand{seed = 5, lo = -1, hi = 1} end
    local t = {}
    for i = 1, cols do
        local e = (i * 7919) % 61 - 30
        t[i] = (i % 5 == 0) and 0 or ((i % 2 == 0 and 1 or -1) * 2.0 ^ e * (1 + (i % 13) / 16))
    end
    if kind == "inf" then t[cols // 3] = math.huge end
    return hk.from(t, "f32")
end
local ring = {q4_0 = 57364, q8_0 = 53272, q4_K = 55828, q6_K = 75796}
local fails = 0
for _, case in ipairs{{"q4_0", 40, 4096}, {"q8_0", 40, 4096}, {"q4_K", 40, 4096}, {"q6_K", 40, 4096},
                      {"q4_0", 17, 2816}, {"q8_0", 33, 2816}, {"q4_K", 16, 2816}} do
    local q, rows, cols = case[1], case[2], case[3]
    local wf = hk.alloc(rows * cols, "f32"):rand{seed = 3, lo = -1, hi = 1}
    local w = hk.alloc(rows * cols, q)
    Q.quantize(w, wf)
    local wd = hk.alloc(rows * cols, "f32")
    Q.dequantize(wd, w)
    local wv = wd:totable()
    for _, kind in ipairs{"uniform", "spread", "inf"} do
        local x = xs_of(kind, cols)
        local xv = x:totable()
        local want, mag = double_product(wv, xv, rows, cols)
        local op = hk.alloc(rows, "f32")
        Q.matvec(op, w, x)
        local ov = op:totable()
        for _, run in ipairs{{"mvi_", 1}, {"mvi_", 2}, {"mvi_", 7}, {"mvr_", 1}, {"mvr_", 2}, {"mvr_", 7}} do
            local kn, grid = run[1], run[2]
            local y = hk.alloc(rows, "f32"):fill(0 / 0)
            -- mvr_: the ring's dynamic shared memory (as in the probe); the CPU
            -- backend's 64 KB do not hold q6_K's
            local shared = kn == "mvr_" and ring[q] or 0
            if shared > (host and 65536 or 1e9) then
                print(("# SKIP %s%s: %d bytes of shared memory on the CPU backend"):format(kn, q, shared))
                goto skip
            end
            m[kn .. q]{grid = grid, block = 256, shared = shared}(w, x, y, rows, cols)
            local yv, worst, wop, bad = y:totable(), 0, 0, 0
            for r = 1, rows do
                if mag[r] == math.huge or want[r] ~= want[r] then
                    -- inf in x: the same inf or NaN as the op's
                    if not (yv[r] == ov[r] or (yv[r] ~= yv[r] and ov[r] ~= ov[r])) then bad = bad + 1 end
                else
                    local e = math.abs(yv[r] - want[r]) / math.max(mag[r], 1e-300)
                    if not (e <= worst) then worst = e end
                    wop = math.max(wop, math.abs(ov[r] - want[r]) / math.max(mag[r], 1e-300))
                end
            end
            local ok = bad == 0 and worst <= 2e-6
            if not ok then fails = fails + 1 end
            print(("%s %s%-5s %2dx%d x %-7s grid %d: worst %.2e (op %.2e)%s"):format(ok and "ok  " or "FAIL", kn, q,
                rows, cols, kind, grid, worst, wop, bad > 0 and (" " .. bad .. " inf rows differ") or ""))
            ::skip::
        end
    end
end
print(fails == 0 and "all ok" or (fails .. " failed"))
