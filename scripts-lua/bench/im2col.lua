-- im2col f32 N C64 56x56 3x3 pad 1 (candle's layout; N = 8 unless arg[2]) on the current
-- device: variants of im2col_tiled compiled from kernels/conv/conv.hip
-- (tile of 8 to 32 pixels, a minimum of blocks an SM through launch
-- bounds), each with 1, 2 or 4 tiles a block, then the op
-- (C.im2col) and the row kernel; every output compared bit for bit with the
-- row kernel's on the device; each next to a device copy (b:copy) of the
-- same bytes (in + out). Milliseconds: median of 20 after 3 warm-up runs.
-- arg[1]: the folder of conv.hip (default kernels/conv); arg[2]: the batch
-- N (default 8; 32 is the issue's conv2d shape, 4x the bytes).
local dir = arg and arg[1] or "kernels/conv"
local n = tonumber(arg and arg[2]) or 8
local C = hk.ops.conv
print(("im2col variants, f32 N%d C64 56x56 3x3 pad 1, on %s"):format(n, hk.device().name or "?"))
local variants = {{"t32", 32, 1}, {"t28", 28, 1}, {"t16", 16, 1}, {"t14", 14, 1}, {"t8", 8, 1}, {"t28_m5", 28, 5},
                  {"t28_m6", 28, 6}, {"t28_m7", 28, 7}, {"t32_m5", 32, 5}, {"t32_m6", 32, 6}, {"t16_m6", 16, 6}}
local src = {"#define HKC_FUNCTIONS_ONLY", '#include "conv.hip"', "extern \"C\" __global__ void diff(const float "
    .. "*fa, const float *fb, unsigned long long n, unsigned *bad) { const unsigned *a = (const unsigned *)fa, *b = "
    .. "(const unsigned *)fb; for (unsigned long long i = blockIdx.x * "
    .. "256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) if (a[i] != b[i]) atomicAdd(bad, 1u); }"}
for _, v in ipairs(variants) do
    src[#src + 1] = ("extern \"C\" __global__ void __launch_bounds__(256, %d) %s(const float *x, float *col, "
        .. "int n, int c, int h, int wd, int r, int s, int oh, int ow, int sh, int sw, int ph, int pw, int dh, int dw)"
        .. " { hkc_im2col_tiled<unsigned, %d>((const unsigned *)x, (unsigned *)col, hkc_geom{n, c, h, wd, 0, r, s, "
        .. "oh, ow, sh, sw, ph, pw, dh, dw, 1}); }"):format(v[3], v[1], v[2])
end
local m = hk.compile(table.concat(src, "\n"), {name = "im2col_variants", include_dirs = {dir}})

local function bench(fn)
    fn()
    hk.sync()
    return hk.bench(fn, {reps = 20, warmup = 3, print = false}).median
end
local c, h, w = 64, 56, 56
local x = hk.alloc(n * c * h * w, "f32"):rand{seed = 3}
local ncol = n * h * w * c * 9
local ref, col = hk.alloc(ncol, "f32"), hk.alloc(ncol, "f32")
local bytes = (n * c * h * w + ncol) * 4
local function copy_ms()
    local a, b = hk.alloc(bytes // 8, "f32"):rand{seed = 5}, hk.alloc(bytes // 8, "f32")
    local ms = bench(function() b:copy(a) end)
    a:free(); b:free()
    return ms
end
local function differ()
    local bad = hk.alloc(1, "u32"):fill(0)
    m.diff{grid = 4096, block = 256}(col, ref, ncol, bad)
    return bad[1]
end
C.kernels.im2col_f32{grid = n * h * w // 2, block = {128, 2}}(x, ref, n, c, h, w, 3, 3, h, w, 1, 1, 1, 1, 1, 1)
-- the faster of two copies (the first ran up to 8% slower on the H100)
local c1, c2 = copy_ms(), copy_ms()
local cms = math.min(c1, c2)
print(("  copy of the same bytes %8.4f ms (%.4f, %.4f) %7.1f GB/s"):format(cms, c1, c2, bytes / cms / 1e6))
local best = {ms = math.huge}
for _, v in ipairs(variants) do
    local k, tile = m[v[1]], v[2]
    local tiles = n * h * ((w + tile - 1) // tile)
    local window = c * 3 * (tile + 2) * 4
    local i = k:info()
    for _, per in ipairs({1, 2, 4}) do
        col:fill(0)
        local grid = (tiles + per - 1) // per
        local ms = bench(function()
            k{grid = grid, block = 256, shared = window}(x, col, n, c, h, w, 3, 3, h, w, 1, 1, 1, 1, 1, 1)
        end)
        print(("  %-7s tile %2d  %d tiles a block (grid %4d) %8.4f ms %7.1f GB/s  %.2fx copy  mismatches %d  regs %s"
            .. " local %s"):format(v[1], tile, per, grid, ms, bytes / ms / 1e6, cms / ms, differ(), i.registers,
            i.local_bytes))
        if ms < best.ms then best = {ms = ms, what = ("%s, %d a block"):format(v[1], per)} end
    end
end
print(("  best variant: %s  %8.4f ms  %.2fx copy"):format(best.what, best.ms, cms / best.ms))
col:fill(0)
local ms = bench(function() C.im2col(col, x, {n, c, h, w}, 3, 1, 1, 1) end)
print(("  im2col op f32 N%d %8.4f ms %7.1f GB/s  %.2fx copy  mismatches %d  (copy again %.4f ms)"):format(n, ms,
    bytes / ms / 1e6, cms / ms, differ(), copy_ms()))
local rows = C.kernels.im2col_f32
ms = bench(function()
    rows{grid = n * h * w // 2, block = {128, 2}}(x, ref, n, c, h, w, 3, 3, h, w, 1, 1, 1, 1, 1, 1)
end)
print(("  im2col rows f32 N%d %8.4f ms %7.1f GB/s  %.2fx copy"):format(n, ms, bytes / ms / 1e6, cms / ms))
