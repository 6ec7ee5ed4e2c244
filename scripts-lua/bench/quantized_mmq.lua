-- The fused f16-activation matmul kernel (mmq_<fmt>_f16) compiled from
-- kernels/quantized/quantized.hip with HKQ_MMQ_AHEAD = each of arg[1]
-- (default "0,2,4,8": steps ahead whose weight lines a thread prefetches),
-- launched directly on a 14336 x 4096 matrix of random bytes with 1, 8 and
-- 64 activation rows: ms and GB/s of W's bytes, median of 20.
local aheads = {}
for v in (arg and arg[1] or "0,2,4,8"):gmatch("%d+") do aheads[#aheads + 1] = tonumber(v) end
local rows, cols = 14336, 4096
local big = 256 << 20
local src, dst = hk.alloc(big // 4, "f32"):rand{seed = 2}, hk.alloc(big // 4, "f32")
local copy = hk.bench(function() dst:copy(src) end, {bytes = 2 * big, reps = 20, warmup = 3, print = false})
print(("copy 256 MiB %.0f GB/s (%s)"):format(copy.gbps, hk.device().name or "?"))
local ws = {}
for _, fmt in ipairs{"q4_0", "q6_K"} do
    ws[fmt] = hk.alloc(rows * cols, fmt)
    ws[fmt]:view("u8"):rand{seed = 3, lo = 0, hi = 255}
end
for _, ahead in ipairs(aheads) do
    local m = hk.compile{path = "kernels/quantized/quantized.hip", defines = {HKQ_MMQ_AHEAD = ahead}}
    for _, fmt in ipairs{"q4_0", "q6_K"} do
        local w, bytes = ws[fmt], #ws[fmt]:view("u8")
        local k = m["mmq_" .. fmt .. "_f16"]
        for _, mm in ipairs{1, 8, 64} do
            local x, y = hk.alloc(mm * cols, "f16"):rand{seed = 4, lo = -1, hi = 1}, hk.alloc(mm * rows, "f32")
            local grid = {(rows + 63) // 64}
            local r = hk.bench(function() k:launch(grid, {256}, w, x, y, rows, cols, mm, 0) end,
                               {bytes = bytes, reps = 20, warmup = 3, print = false})
            print(("ahead %d %s x%-3d %8.3f ms %6.0f GB/s of W  %.2fx copy"):format(ahead, fmt, mm, r.median, r.gbps,
                r.gbps / copy.gbps))
        end
    end
end
