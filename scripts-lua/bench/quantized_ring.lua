-- The streamed q8_1 matvec (matvec_<fmt>_q8_1_ring, a block a compute unit
-- and a ring of bulk copies) against the grid-stride kernel it replaced in
-- the op (matvec_<fmt>_q8_1), each launched directly with the configuration
-- the op gives it, early start on: back to back over enough copies of the
-- matrix that they exceed 4x a 50 MB L2, and as a recorded graph replayed;
-- GB/s of the bytes a call must move as a ratio to a device-to-device copy
-- of the same run (c: a chain of at least 70 launches back to back, the
-- steady state). Random weight bytes, x quantized from random values.
-- Shapes: arg[1] x arg[2], default 14336 x 4096 and 4096 x 14336.
--   hipkit --backend cuda scripts-lua/bench/quantized_ring.lua [rows cols]
local Q = hk.ops.quantized
local dev = hk.device()
local cus, warp = dev.compute_units or 132, dev.warp_size or 32
local shapes = arg and arg[2] and {{tonumber(arg[1]), tonumber(arg[2])}} or {{14336, 4096}, {4096, 14336}}
local big = 256 << 20
local src, dst = hk.alloc(big // 4, "f32"):rand{seed = 2}, hk.alloc(big // 4, "f32")
local copy = hk.bench(function() dst:copy(src) end, {bytes = 2 * big, reps = 20, warmup = 3, print = false})
print(("%s: copy 256 MiB %.0f GB/s"):format(dev.name or "?", copy.gbps))
local piece = {q4_0 = 144, q8_0 = 272, q4_K = 144, q6_K = 210}
for _, shape in ipairs(shapes) do
    local rows, cols = shape[1], shape[2]
    local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
    local xq = hk.alloc(cols, "q8_1")
    Q.quantize(xq, x)
    local y = hk.alloc(rows, "f32")
    for _, fmt in ipairs{"q4_0", "q8_0", "q4_K", "q6_K"} do
        local ws = {hk.alloc(rows * cols, fmt)}
        local bytes = #ws[1]:view("u8")
        local copies = math.min(64, math.max(2, math.ceil(200e6 / bytes)))
        for i = 2, copies do ws[i] = hk.alloc(rows * cols, fmt) end
        for i, w in ipairs(ws) do w:view("u8"):rand{seed = i, lo = 0, hi = 255} end
        -- the op's configurations (plugins/quantized/quantized.c)
        local P, L = cols // 256, 1
        while L < P and L < warp do L = L * 2 end
        local stages = ({q4_0 = 4, q6_K = 2})[fmt] or 3
        local function shared(s) return (s * (256 // L) * piece[fmt] * P + 15) // 16 * 16 + 40 * (cols // 32) + 8 * s end
        local limit = math.min(227 * 1024, dev.max_shared_per_block or 227 * 1024)
        -- as the op: its stages a format, fewer where they do not fit (at least 2), else the grid-stride kernel
        -- alone (the CPU backend's 64 KiB: 1 stage, to run the script there)
        local least = limit >= 200 * 1024 and 2 or 1
        while stages > least and shared(stages) > limit do stages = stages - 1 end
        local groups = (rows + 7) // 8
        local cap = ((fmt == "q8_0" or fmt == "q6_K") and 8 or 4) * cus
        local each = math.max(1, math.min(8, (groups + cap - 1) // cap))
        local kinds = {}
        if shared(stages) <= limit and (fmt ~= "q6_K" or cols % 2048 == 0) then
            kinds[1] = {"streamed", Q.kernels["matvec_" .. fmt .. "_q8_1_ring"]{grid = math.min(cus, rows),
                block = 256, shared = shared(stages), early = true}, true}
        end
        kinds[#kinds + 1] = {"grid-stride", Q.kernels["matvec_" .. fmt .. "_q8_1"]{grid = (groups + each - 1) // each,
            block = 256, early = true}, false}
        local line = ("%5d x %-5d %-5s"):format(rows, cols, fmt)
        for _, kd in ipairs(kinds) do
            local function run()
                for j = 1, copies do
                    if kd[3] then kd[2](ws[j], xq, y, rows, cols, stages) else kd[2](ws[j], xq, y, rows, cols) end
                end
            end
            run()
            local moved = copies * (bytes + 36 * cols // 32 + 4 * rows)
            local rb = hk.bench(run, {bytes = moved, reps = 10, warmup = 2, print = false})
            local g = hk.graph(run)
            local rg = hk.bench(function() g:launch() end, {bytes = moved, reps = 10, warmup = 2, print = false})
            -- a chain of at least 70 launches: the steady state, without the
            -- gap before a timing's first kernel
            local passes = math.ceil(70 / copies)
            local rc = hk.bench(function() for _ = 1, passes do run() end end,
                                {bytes = passes * moved, reps = 5, warmup = 1, print = false})
            line = line .. ("  %s %.2f / g%.2f / c%.2f"):format(kd[1], rb.gbps / copy.gbps, rg.gbps / copy.gbps,
                                                             rc.gbps / copy.gbps)
        end
        print(line)
        ws = nil
        collectgarbage()
    end
end
