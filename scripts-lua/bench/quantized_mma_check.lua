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
-- Usage: hipkit quantized_mma_check.lua path/to/quantized.hip
local path = assert(arg and arg[1], "usage: quantized_mma_check.lua quantized.hip")
local Q = hk.ops.quantized
local f = assert(io.open(path, "r"))
local text = f:read("a")
f:close()
local here = arg[0]:match("(.*/)") or "./"
local mf = assert(io.open(here .. "quantized_mma.hip", "r"))
local src = text:sub(1, assert(text:find("#define HKQ_DEQ", 1, true)) - 1) .. mf:read("a")
mf:close()
local fmts = {q4_0 = "HKQ_Q4_0", q8_0 = "HKQ_Q8_0", q4_K = "HKQ_Q4_K", q6_K = "HKQ_Q6_K"}
for q, F in pairs(fmts) do
    src = src .. ([[
extern "C" __global__ void mvi_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkm_matvec_any<%s>(w, x, y, rows, cols); }
]]):format(q, F)
end
local host = hk.device().backend == "host"
local m = hk.compile(src, {name = "qmma_check", defines = host and {HKM_EMU = 1} or {}})
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
        local want, mag = {}, {}
        for r = 0, rows - 1 do
            local s, a = 0.0, 0.0
            for c = 1, cols do
                local p = wv[r * cols + c] * xv[c]
                s, a = s + p, a + math.abs(p)
            end
            want[r + 1], mag[r + 1] = s, a
        end
        local op = hk.alloc(rows, "f32")
        Q.matvec(op, w, x)
        local ov = op:totable()
        for _, grid in ipairs{1, 2, 7} do
            local y = hk.alloc(rows, "f32"):fill(0 / 0)
            m["mvi_" .. q]{grid = grid, block = 256}(w, x, y, rows, cols)
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
            print(("%s %-5s %2dx%d x %-7s grid %d: worst %.2e (op %.2e)%s"):format(ok and "ok  " or "FAIL", q, rows,
                cols, kind, grid, worst, wop, bad > 0 and (" " .. bad .. " inf rows differ") or ""))
        end
    end
end
print(fails == 0 and "all ok" or (fails .. " failed"))
