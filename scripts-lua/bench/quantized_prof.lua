-- For Nsight Compute: two launches each of the staged matvec's f32-x and
-- q8_1-x kernels (mv_<fmt>, mv8_<fmt>) of a quantized.hip compiled with the
-- defines in HKQ_PROF_DEFINES ("NAME=V,NAME=V"), 14336 x 4096, random
-- weights, grid arg[3] (default 896) of 256 threads
-- (docs/families/quantized-notes.md).
-- Usage: ncu -k regex:mv ... hipkit quantized_prof.lua quantized.hip [fmt] [grid]
-- (HKQ_PROF_SASS=prefix also writes each kernel's machine code)
local path = assert(arg and arg[1], "usage: quantized_prof.lua quantized.hip [fmt] [grid]")
local fmt = arg[2] or "q4_0"
local grid = tonumber(arg[3]) or 896
local fmts = {q4_0 = "HKQ_Q4_0", q8_0 = "HKQ_Q8_0", q4_K = "HKQ_Q4_K", q6_K = "HKQ_Q6_K"}
local source = dofile((arg[0]:match("(.*/)") or "./") .. "quantized_source.lua")
local defines = {}
for name, v in (os.getenv("HKQ_PROF_DEFINES") or ""):gmatch("([%w_]+)=([%w_]+)") do defines[name] = v end
-- HKQ_PROF_MMA=1: mv_ is the integer tensor-core kernel of quantized_mma.hip
-- (v16) instead of the op's
local mma = os.getenv("HKQ_PROF_MMA") == "1"
local base = source(path, mma and {"quantized_mma.hip"} or {})
local m = hk.compile(base .. ([[
extern "C" __global__ void mv_%s(const void *w, const float *x, float *y, int rows, int cols)
{ %s<%s>(w, x, y, rows, cols); }
extern "C" __global__ void mv8_%s(const void *w, const void *x, float *y, int rows, int cols)
{ hkq_matvec_q8_1<%s>(w, x, y, rows, cols); }
]]):format(fmt, mma and "hkm_matvec_any" or "hkq_matvec", fmts[fmt], fmt, fmts[fmt]),
             {name = "qprof_" .. fmt, defines = defines})
local rows, cols = 14336, 4096
local w = hk.alloc(rows * cols, fmt)
w:view("u8"):rand{seed = 1, lo = 0, hi = 255}
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local xq = hk.alloc(cols, "q8_1")
hk.ops.quantized.quantize(xq, x)
local y = hk.alloc(rows, "f32")
for _ = 1, 2 do
    m["mv_" .. fmt]{grid = grid, block = 256}(w, x, y, rows, cols)
    m["mv8_" .. fmt]{grid = grid, block = 256}(w, xq, y, rows, cols)
end
hk.sync()
-- HKQ_PROF_SASS=prefix: each kernel's machine code to prefix<kernel>.sass
local sass = os.getenv("HKQ_PROF_SASS")
for _, k in ipairs{"mv_", "mv8_"} do
    local i = m[k .. fmt]:info()
    print(("%s%s: %s registers, %s bytes shared"):format(k, fmt, tostring(i.registers), tostring(i.static_shared)))
    if sass then
        local o = assert(io.open(sass .. k .. fmt .. ".sass", "w"))
        o:write(m[k .. fmt]:disasm())
        o:close()
    end
end
