-- q4_0r's matvec kernels launched by hand at several grids, early start,
-- back to back over 7 weight copies (14336 x 4096): ratio to the copy.
local Q = hk.ops.quantized
local rows, cols = 14336, 4096
local big = 256 << 20
local src, dst = hk.alloc(big // 4, "f32"):rand{seed = 2}, hk.alloc(big // 4, "f32")
local copy = hk.bench(function() dst:copy(src) end, {bytes = 2 * big, reps = 20, warmup = 3, print = false})
print(("copy %.0f GB/s"):format(copy.gbps))
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local xq = hk.alloc(cols, "q8_1")
Q.quantize(xq, x)
local y = hk.alloc(rows, "f32")
for _, fmt in ipairs{"q4_0r", "q4_0"} do
    local ws = {}
    for i = 1, 7 do
        ws[i] = hk.alloc(rows * cols, fmt)
        ws[i]:view("u8"):rand{seed = i, lo = 0, hi = 255}
    end
    local bytes = #ws[1]:view("u8")
    for _, form in ipairs{{"", x}, {"_q8_1", xq}} do
        local line = {}
        for _, grid in ipairs{264, 396, 528, 660, 792, 896, 1056} do
            local k = Q.kernels["matvec_" .. fmt .. form[1]]{grid = grid, block = 256, early = true}
            local r = hk.bench(function()
                for j = 1, 7 do k(ws[j], form[2], y, rows, cols) end
            end, {bytes = 7 * bytes, reps = 10, warmup = 2, print = false})
            line[#line + 1] = ("%d %.2f"):format(grid, r.gbps / copy.gbps)
        end
        print(fmt .. form[1], table.concat(line, "  "))
    end
end
