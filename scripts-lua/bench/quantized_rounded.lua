-- f32 activations through the quantized matvec, three ways, on a rows x
-- cols matrix (default 14336 x 4096, a Llama-3 8B MLP projection; arg[1],
-- arg[2]) in q4_0, q8_0, q4_K and q6_K:
--   matvec(y, w, x)            f32 x, exact f32 products
--   quantize(xq, x); matvec(y, w, xq)   ggml's route: two launches
--   matvec_rounded(y, w, x)    the same y, x rounded to q8_1 by each block
-- and the q8_1 matvec alone (x already rounded) for the floor of the last
-- two. GB/s of the bytes each must move (the matrix once, x, y), as a
-- ratio to a device-to-device copy of the same run; chains of at least 70
-- calls over enough copies of the matrix that together they exceed 4x a
-- 50 MB L2 (the weights come from memory), back to back and as one
-- recorded hk.graph replayed.
local W = dofile((arg[0]:match("(.*/)") or "./") .. "quantized_weights.lua")
local rows = tonumber(arg and arg[1]) or 14336
local cols = tonumber(arg and arg[2]) or 4096
local Q = hk.ops.quantized
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local xq = hk.alloc(cols, "q8_1")
local y = hk.alloc(rows, "f32")
print(("f32 activations through matvec, %d x %d (%s)"):format(rows, cols, hk.device().name or "?"))
local copy = W.copy()
for _, fmt in ipairs{"q4_0", "q8_0", "q4_K", "q6_K"} do
    local ws, bytes = W.copies(fmt, rows * cols)
    local copies, w1 = #ws, ws[1]
    local forms = {
        {"f32 x (exact)", function(w) Q.matvec(y, w, x) end, 4 * cols},
        {"quantize + q8_1 matvec", function(w) Q.quantize(xq, x); Q.matvec(y, w, xq) end, 4 * cols},
        {"matvec_rounded", function(w) Q.matvec_rounded(y, w, x) end, 4 * cols},
        {"q8_1 x alone", function(w) Q.matvec(y, w, xq) end, 36 * cols // 32},
    }
    local passes = math.ceil(70 / copies)
    for _, form in ipairs(forms) do
        local function chain()
            for _ = 1, passes do
                for j = 1, copies do form[2](ws[j]) end
            end
        end
        chain()
        hk.sync()
        local chain_bytes = passes * copies * (bytes + form[3] + 4 * rows)
        local rc = hk.bench(chain, {bytes = chain_bytes, reps = 5, warmup = 1, print = false})
        -- (matvec_rounded's two launches, where the ring does not fit, record
        -- with scratch of the graph's own)
        local gc = hk.graph(chain)
        local rgc = hk.bench(function() gc:launch() end, {bytes = chain_bytes, reps = 5, warmup = 1, print = false})
        local graph = ("%.2fx copy"):format(rgc.gbps / copy.gbps)
        print(("  %-30s %8.3f us  back to back %.2fx copy, graph %s  (chain of %d, %.1f MB each)"):format(
            fmt .. " " .. form[1], 1e3 * rc.median / (passes * copies), rc.gbps / copy.gbps, graph,
            passes * copies, bytes / 1e6))
    end
    -- the rounded form's y is the two launches' y, bit for bit
    local y2 = hk.alloc(rows, "f32")
    Q.quantize(xq, x)
    Q.matvec(y2, w1, xq)
    Q.matvec_rounded(y, w1, x)
    local same = table.concat(y:view("u32"):totable(), ",") == table.concat(y2:view("u32"):totable(), ",")
    print(("  %-30s %s"):format(fmt .. " rounded y == two-launch y", same and "yes" or "NO"))
    ws = nil
    collectgarbage()
end
