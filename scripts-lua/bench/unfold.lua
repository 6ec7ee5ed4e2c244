-- The GEMM route's columns and im2col on the current device, kernel by
-- kernel: unfold (rows: the op's launch before unfold_tiled) against
-- unfold_tiled under several block sizes on conv2d f16 N32 C64 56x56 3x3
-- pad 1 and conv1d f32 N16 C256 L4096 k5 pad 2, outputs compared element
-- by element (bits) on the device; im2col_tiled f32 N8; each next to a
-- device copy (b:copy) of the same bytes (in + out). GB/s by device events,
-- median of 20 after 3 warm-up runs. Registers and local bytes per kernel.
-- arg[1]: "small" for the CPU backend (N1, fewer channels).
local small = arg and arg[1] == "small"
local C = hk.ops.conv
print(("unfold / im2col on %s"):format(hk.device().name or "?"))
local cmp = hk.compile([[
extern "C" __global__ void diff(const void *pa, const void *pb, unsigned long long n, unsigned *bad)
{
    const unsigned short *a = (const unsigned short *)pa, *b = (const unsigned short *)pb;
    for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull)
        if (a[i] != b[i]) atomicAdd(bad, 1u);
}]]).diff

local function bench(fn)
    fn()
    hk.sync()
    return hk.bench(fn, {reps = small and 2 or 20, warmup = small and 1 or 3, print = false}).median
end
local function copy_ms(bytes)
    local half = bytes // 8
    local a, b = hk.alloc(half, "f32"):rand{seed = 5}, hk.alloc(half, "f32")
    local ms = bench(function() b:copy(a) end)
    a:free(); b:free()
    return ms
end
local function differ(a, b, bytes)
    local bad = hk.alloc(1, "u32"):fill(0)
    cmp{grid = 4096, block = 256}(a, b, bytes // 2, bad)
    return bad[1]
end
local function info(k)
    local i = k:info()
    return ("regs %s local %s"):format(i.registers, i.local_bytes)
end

local function unfold_case(label, dt, n, c, h, w, r, s, ph, pw)
    local oh, ow = h + 2 * ph - r + 1, w + 2 * pw - s + 1
    local size = (dt == "f32") and 4 or 2
    local x = hk.alloc(n * c * h * w, dt):rand{seed = 1, lo = -1, hi = 1}
    local ncol = n * c * r * s * oh * ow
    local ref, col = hk.alloc(ncol, dt), hk.alloc(ncol, dt)
    local bytes = (n * c * h * w + ncol) * size
    local cms = copy_ms(bytes)
    local rows = C.kernels["unfold_" .. dt]
    local lanes = 1
    while lanes < 256 and 4 * lanes < oh * ow do lanes = lanes * 2 end
    local rms = bench(function()
        rows{grid = math.min((n * c * r * s + 256 // lanes - 1) // (256 // lanes), 1 << 20), block = {lanes, 256 // lanes}}(
            x, ref, n, c, h, w, r, s, oh, ow, 1, 1, ph, pw, 1, 1)
    end)
    print(("  %s %-6s unfold (rows)        %8.4f ms %7.1f GB/s  copy %8.4f ms %7.1f GB/s  %.2fx  %s"):format(label, dt,
        rms, bytes / rms / 1e6, cms, bytes / cms / 1e6, cms / rms, info(rows)))
    local tiled = C.kernels["unfold_tiled_" .. dt]
    local e = 16 // size
    local shared = ((oh + r - 1) * ((ow + s - 1 + e - 1) // e * e) + e) * size
    for _, bl in ipairs({128, 256, 512}) do
        col:fill(0)
        local ms = bench(function()
            tiled{grid = math.min(n * c, 1 << 20), block = bl, shared = shared}(x, col, n, c, h, w, r, s, oh, ow,
                1, 1, ph, pw, 1, 1)
        end)
        print(("  %s %-6s unfold_tiled block %4d %8.4f ms %7.1f GB/s  %.2fx copy  mismatches %d  %s"):format(label, dt,
            bl, ms, bytes / ms / 1e6, cms / ms, differ(col, ref, ncol * size), info(tiled)))
    end
    x:free(); ref:free(); col:free()
end

unfold_case("conv2d N32 C64 56x56 3x3 p1", "f16", small and 1 or 32, small and 8 or 64, 56, 56, 3, 3, 1, 1)
unfold_case("conv1d N16 C256 L4096 k5 p2", "f32", small and 1 or 16, small and 8 or 256, 1, 4096, 1, 5, 0, 2)

-- im2col f32 N8 C64 56x56 3x3 p1 (the op: im2col_tiled) against the row kernel
local n, c, h, w = small and 1 or 8, 64, 56, 56
local x = hk.alloc(n * c * h * w, "f32"):rand{seed = 3}
local ncol = n * h * w * c * 9
local ref, col = hk.alloc(ncol, "f32"), hk.alloc(ncol, "f32")
local bytes = (n * c * h * w + ncol) * 4
C.kernels.im2col_f32{grid = n * h * w // 2, block = {128, 2}}(x, ref, n, c, h, w, 3, 3, h, w, 1, 1, 1, 1, 1, 1)
local cms = copy_ms(bytes)
local k = C.kernels.im2col_tiled_f32
for _, bl in ipairs({128, 256, 512}) do
    local ms = bench(function()
        k{grid = n * h * 2, block = bl, shared = 64 * 3 * 34 * 4}(x, col, n, c, h, w, 3, 3, h, w, 1, 1, 1, 1, 1, 1)
    end)
    print(("  im2col_tiled f32 N8 block %4d %8.4f ms %7.1f GB/s  copy %7.1f GB/s  %.2fx  mismatches %d  %s"):format(bl,
        ms, bytes / ms / 1e6, bytes / cms / 1e6, cms / ms, differ(col, ref, ncol * 4), info(k)))
end
local ms = bench(function() C.im2col(col, x, {n, c, h, w}, 3, 1, 1, 1) end)
print(("  im2col op f32 N8 %8.4f ms %7.1f GB/s  %.2fx copy"):format(ms, bytes / ms / 1e6, cms / ms))
