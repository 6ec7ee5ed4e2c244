-- For Nsight Compute: two launches each of the tensor-core f32-x matvec
-- (quantized_tc.hip's mvt_q4_0, P 4, D 1, grid 224 of 128 threads) and the
-- op's kernel (v4, grid 896 of 256) at 14336 x 4096 q4_0, and the machine
-- code of both written to files (docs/families/quantized-notes.md, qtc).
-- Usage: ncu -k regex:mv ... hipkit quantized_tc_prof.lua quantized.hip mvt.sass mv.sass
local path = assert(arg and arg[3], "usage: quantized_tc_prof.lua quantized.hip mvt.sass mv.sass")
local f = assert(io.open(arg[1], "r"))
local text = f:read("a")
f:close()
local base = text:sub(1, assert(text:find("#define HKQ_DEQ", 1, true)) - 1)
local tf = assert(io.open((arg[0]:match("(.*/)") or "./") .. "quantized_tc.hip", "r"))
base = base .. tf:read("a")
tf:close()
local m = hk.compile(base .. [[
extern "C" __global__ void mvt_q4_0(const void *w, const float *x, float *y, int rows, int cols)
{ hkt_matvec_any<HKQ_Q4_0>(w, x, y, rows, cols); }
extern "C" __global__ void mv_q4_0(const void *w, const float *x, float *y, int rows, int cols)
{ hkq_matvec<HKQ_Q4_0>(w, x, y, rows, cols); }
]], {name = "qprof", defines = {HKT_D = 1}})
for i, k in ipairs{"mvt_q4_0", "mv_q4_0"} do
    local o = assert(io.open(arg[i + 1], "w"))
    o:write(m[k]:disasm())
    o:close()
end
local rows, cols = 14336, 4096
local w = hk.alloc(rows * cols, "q4_0")
w:view("u8"):rand{seed = 1, lo = 0, hi = 255}
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local y = hk.alloc(rows, "f32")
for _ = 1, 2 do
    m.mvt_q4_0{grid = 224, block = 128}(w, x, y, rows, cols)
    m.mv_q4_0{grid = 896, block = 256}(w, x, y, rows, cols)
end
hk.sync()
print("launched mvt_q4_0 and mv_q4_0 twice each")
