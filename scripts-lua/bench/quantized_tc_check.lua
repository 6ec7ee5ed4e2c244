-- The tensor-core f32-x matvec (quantized_tc.hip, mvt_<fmt>) against a
-- double-precision product, next to the op's matvec: the worst error
-- relative to sum |w x| (the family test's bound is 2e-6), on matrices
-- quantized from random data and x of uniform and of widely spread
-- magnitudes. On the CPU backend the probe's kernels run with the mma
-- emulated (HKT_EMU), which checks the indexing.
-- Usage: hipkit quantized_tc_check.lua path/to/quantized.hip [rows]
local path = assert(arg and arg[1], "usage: quantized_tc_check.lua quantized.hip [rows]")
local rows = tonumber(arg[2]) or 48
local Q = hk.ops.quantized
local base = dofile((arg[0]:match("(.*/)") or "./") .. "quantized_source.lua")(path, {"quantized_tc.hip"})
local fmts = {q4_0 = "HKQ_Q4_0", q8_0 = "HKQ_Q8_0", q4_K = "HKQ_Q4_K", q6_K = "HKQ_Q6_K"}
local order = {"q4_0", "q8_0", "q4_K"}
local kern = {}
for _, q in ipairs(order) do
    kern[#kern + 1] = ([[
extern "C" __global__ void __launch_bounds__(32 * HKT_W, HKT_MINB)
mvt_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkt_matvec_any<%s>(w, x, y, rows, cols); }
]]):format(q, fmts[q])
end
local cpu = hk.device().backend == "host"
local defines = cpu and {HKT_EMU = 1} or {}
-- HKT_CHECK="P=8,W=8,XDYN=1": the kernel's defines (without HKT_), as the probe's variants
local opt = {}
for k, v in (os.getenv("HKT_CHECK") or ""):gmatch("(%w+)=(%w+)") do
    defines["HKT_" .. k] = tonumber(v)
    opt[k] = tonumber(v)
end
local block = 32 * (opt.W or 4)
local shared = (opt.XDYN or 0) ~= 0 and 4096 * 2 * (opt.PARTS or 3) or nil
local mod = hk.compile(base .. table.concat(kern), {name = "qtc_check", defines = defines})
for _, q in ipairs(order) do
    local ok, dis = pcall(function() return mod["mvt_" .. q]:disasm() end)
    local n = 0
    if ok and dis then for _ in dis:gmatch("HMMA") do n = n + 1 end end
    local inf = mod["mvt_" .. q]:info()
    print(("mvt_%s: registers %s, shared %s, local %s, HMMA in its code %s"):format(q, tostring(inf.registers),
        tostring(inf.static_shared), tostring(inf.local_bytes), ok and tostring(n) or "(no disassembly)"))
end

local double_product = dofile((arg[0]:match("(.*/)") or "./") .. "quantized_ref.lua")
local function worst_err(wref, xv, cols, got)
    local worst = 0
    local sums, mags = double_product(wref, xv, rows, cols)
    for r = 1, rows do
        local err = math.abs(got[r] - sums[r]) / (mags[r] + 1e-30)
        if not (err <= worst) then worst = err ~= err and math.huge or err end
    end
    return worst
end

math.randomseed(tonumber(os.getenv("HK_TEST_SEED") or "7"))
local all = 0
for _, q in ipairs(order) do
    for _, cols in ipairs{2048, 4096} do
        local wf = {}
        for i = 1, rows * cols do wf[i] = (math.random() - 0.5) * 2 ^ math.random(-3, 3) end
        local w = hk.alloc(rows * cols, q)
        Q.quantize(w, hk.from(wf, "f32"))
        local wd = hk.alloc(rows * cols, "f32")
        Q.dequantize(wd, w)
        local wref = wd:totable()
        local xs = {}
        local x1, x2 = {}, {}
        for c = 1, cols do
            x1[c] = math.random() * 2 - 1
            -- magnitudes 2^-30 .. 2^30, some exact zeros
            x2[c] = c % 37 == 0 and 0 or (math.random() - 0.5) * 2 ^ math.random(-30, 30)
        end
        xs[1], xs[2] = {"uniform", x1}, {"spread", x2}
        for _, xv in ipairs(xs) do
            local x = hk.from(xv[2], "f32")
            local xr = x:totable() -- the f32 values
            local y = hk.alloc(rows, "f32")
            Q.matvec(y, w, x)
            local line = {("op %.2e"):format(worst_err(wref, xr, cols, y:totable()))}
            for _, g in ipairs{1, 2, 5} do
                y:fill(0 / 0)
                mod["mvt_" .. q]{grid = g, block = block, shared = shared}(w, x, y, rows, cols)
                local e = worst_err(wref, xr, cols, y:totable())
                all = math.max(all, e ~= e and math.huge or e)
                line[#line + 1] = ("mvt grid %d %.2e"):format(g, e)
            end
            print(("%-5s %dx%d x %-8s %s"):format(q, rows, cols, xv[1], table.concat(line, "  ")))
        end
    end
end
print(("worst of mvt: %.2e (%s the 2e-6 bound)"):format(all, all < 2e-6 and "within" or "NOT within"))
