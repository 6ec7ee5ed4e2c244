-- The quantized matvec next to candle's own kernels (candle-kernels'
-- quantized.cu, ggml's CUDA kernels as candle ships them), both run by
-- hipkit on the same device, weights and x:
--   hipkit [--backend cuda] scripts-lua/bench/quantized_candle.lua
--       PATH/TO/candle-kernels/src/quantized.cu [rows cols]
-- The file is the user's (not shipped with hipkit); hk.compile takes it as
-- it is. For q4_0, q8_0, q4_K and q6_K, 14336 x 4096 by default:
--   candle f32 x  = quantize_q8_1 then mul_mat_vec_<fmt>_q8_1_cuda1 (two
--                   launches: what candle runs for f32 activations)
--   candle dmmv   = dequantize_mul_mat_vec_<fmt> (f32 x read as floats:
--                   candle's CANDLE_DMMV path)
--   candle q8_1 x = mul_mat_vec_<fmt>_q8_1_cuda1 alone
-- against hipkit's matvec with f32 x and with q8_1 x, each back to back
-- over enough weight copies to leave L2 behind and as a replayed hk.graph;
-- ratios to a 256 MiB device copy of the same run. Each candle result is
-- checked against hipkit's before it is timed (q8_1 x: candle keeps the
-- sum of x in a q8_1 block, hipkit d * sum q as ggml's CPU reference, so
-- the two differ by that rounding; f32 x: a few ulps).
local path = arg and arg[1]
if not path then error("usage: quantized_candle.lua PATH/TO/quantized.cu [rows cols]", 0) end
local rows = tonumber(arg[2]) or 14336
local cols = tonumber(arg[3]) or 4096
assert(cols % 512 == 0, "cols must be a multiple of 512 (candle's MATRIX_ROW_PADDING)")
local Q = hk.ops.quantized
local m = hk.compile{path = path, name = "candle_quantized"}
print(("candle quantized.cu compiled (%s)"):format(path))
local n = rows * cols
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local xq = hk.alloc(cols, "q8_1")
Q.quantize(xq, x)
local xqc = hk.alloc(cols, "q8_1") -- candle's own quantize of x
local y, yc = hk.alloc(rows, "f32"), hk.alloc(rows, "f32")
local big = 256 << 20
local src, dst = hk.alloc(big // 4, "f32"):rand{seed = 2}, hk.alloc(big // 4, "f32")
print(("matvec %d x %d (%s)"):format(rows, cols, hk.device().name or "?"))
local copy = hk.bench(function() dst:copy(src) end, {bytes = 2 * big, reps = 20, warmup = 3, print = false})
print(("  %-30s %8.3f ms %8.0f GB/s"):format("copy 256 MiB", copy.median, copy.gbps))
local quant = m.quantize_q8_1
local function worst(a, b)
    local ha, hb, w, s = a:totable(), b:totable(), 0, 0
    for i = 1, #ha do
        w = math.max(w, math.abs(ha[i] - hb[i]))
        s = math.max(s, math.abs(hb[i]))
    end
    return w / s
end
local names = {q4_0 = {"q4_0", "q4_0_cuda"}, q8_0 = {"q8_0", "q8_0_cuda"},
               q4_K = {"q4_K", "q4_k"}, q6_K = {"q6_K", "q6_k"}}
for _, fmt in ipairs{"q4_0", "q8_0", "q4_K", "q6_K"} do
    local w1 = hk.alloc(n, fmt)
    local bytes = #w1:view("u8")
    local copies = math.min(64, math.max(2, math.ceil(200e6 / bytes)))
    local ws = {w1}
    for i = 2, copies do ws[i] = hk.alloc(n, fmt) end
    -- random weights from real quantization (not random bytes: a random
    -- f16 scale may be inf or NaN, which the two sides need not agree on)
    local wf = hk.alloc(n, "f32")
    for i, w in ipairs(ws) do
        wf:rand{seed = 10 + i, lo = -1, hi = 1}
        Q.quantize(w, wf)
    end
    wf = nil
    local mmvq = m["mul_mat_vec_" .. names[fmt][1] .. "_q8_1_cuda1"]
    local dmmv = m["dequantize_mul_mat_vec_" .. names[fmt][2]]
    local qgrid = (cols + 255) // 256
    local function candle_q8(w, xin) mmvq{grid = rows, block = {32, 4}}(w, xin, yc, cols, rows, cols, rows) end
    local function candle_f32(w)
        quant{grid = {qgrid, 1}, block = 256}(x, xqc, cols, cols)
        candle_q8(w, xqc)
    end
    local function candle_dmmv(w) dmmv{grid = rows, block = 32}(w, x, yc, cols, rows) end
    local forms = {
        {"hipkit f32 x", function(w) Q.matvec(y, w, x) end, 4 * cols, y, "f32"},
        {"candle f32 x (2 launches)", candle_f32, 4 * cols, yc, "q8"},
        {"candle dmmv f32 x", candle_dmmv, 4 * cols, yc, "f32"},
        {"hipkit q8_1 x", function(w) Q.matvec(y, w, xq) end, 36 * cols // 32, y, "q8"},
        {"candle q8_1 x", function(w) candle_q8(w, xq) end, 36 * cols // 32, yc, "q8"},
    }
    -- references: hipkit's f32 product for the f32 forms, hipkit's q8_1
    -- product for the q8_1 forms
    local ref32, ref8 = hk.alloc(rows, "f32"), hk.alloc(rows, "f32")
    Q.matvec(ref32, w1, x)
    Q.matvec(ref8, w1, xq)
    print(("  %s, %.1f MB, %d copies"):format(fmt, bytes / 1e6, copies))
    for _, f in ipairs(forms) do
        f[4]:fill(0 / 0)
        f[2](w1)
        hk.sync()
        local err = worst(f[4], f[5] == "f32" and ref32 or ref8)
        local per = bytes + f[3] + 4 * rows
        local rb = hk.bench(function() for j = 1, copies do f[2](ws[j]) end end,
                            {bytes = copies * per, reps = 10, warmup = 2, print = false})
        local g = hk.graph(function() for j = 1, copies do f[2](ws[j]) end end)
        local rg = hk.bench(function() g:launch() end, {bytes = copies * per, reps = 10, warmup = 2, print = false})
        g:free()
        print(("    %-28s %7.2f us %5.2fx copy | graph %7.2f us %5.2fx copy | max err %.1e of max |y|"):format(
            f[1], 1000 * rb.median / copies, rb.gbps / copy.gbps, 1000 * rg.median / copies,
            rg.gbps / copy.gbps, err))
    end
    ws, w1 = nil, nil
    collectgarbage()
end
