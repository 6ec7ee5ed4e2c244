-- The quantized family's matvec on a rows x cols matrix (default the
-- 14336 x 4096 of a Llama-3 8B MLP projection; arg[1], arg[2]) in q4_0,
-- q8_0, q4_K, q6_K and q4_0r with f32 x and y: GB/s of the bytes it must move
-- (the matrix once, x and y) by device events, median of 20, next to a
-- device-to-device copy of the same run. Each call reads the next of
-- enough copies of the matrix that together they exceed 4x a 50 MB L2, so
-- the weights come from memory, not the cache. Also the dequantize to f16
-- of the same matrix, matvec with x quantized to q8_1 (integer dot
-- products), and the matmul with 512 activation rows in TFLOP/s, f32 (f32
-- products) and f16 (W dequantized to f16, tensor cores). The matvecs also
-- back to back over the copies, queued one call after another and as one
-- recorded hk.graph replayed. PyTorch's f16 matvec and matmul of the same
-- shapes: tools/bench_torch_quantized.py.
local W = dofile((arg[0]:match("(.*/)") or "./") .. "quantized_weights.lua")
local rows = tonumber(arg and arg[1]) or 14336
local cols = tonumber(arg and arg[2]) or 4096
local Q = hk.ops.quantized
local n = rows * cols
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local y = hk.alloc(rows, "f32")
print(("quantized matvec %d x %d, f32 x and y (%s)"):format(rows, cols, hk.device().name or "?"))
local copy = W.copy()
-- q4_0r: hipkit's repacked q4_0 (the same bytes, the nibbles of every group
-- a 16-byte piece), measured as the others
for _, fmt in ipairs{"q4_0", "q8_0", "q4_K", "q6_K", "q4_0r"} do
    local ws, bytes = W.copies(fmt, n)
    local copies, w1 = #ws, ws[1]
    local k = 0
    local function step()
        k = k % copies + 1
        Q.matvec(y, ws[k], x)
    end
    step()
    hk.sync()
    local r = hk.bench(step, {bytes = bytes + 4 * (rows + cols), reps = 20, warmup = 3, print = false})
    print(("  %-22s %8.3f ms %8.0f GB/s  %.2fx copy  (%.1f MB, %d copies)"):format(
        "matvec " .. fmt, r.median, r.gbps, r.gbps / copy.gbps, bytes / 1e6, copies))
    local xq = hk.alloc(cols, "q8_1")
    Q.quantize(xq, x)
    local function step8()
        k = k % copies + 1
        Q.matvec(y, ws[k], xq)
    end
    step8()
    local r8 = hk.bench(step8, {bytes = bytes + 36 * cols // 32 + 4 * rows, reps = 20, warmup = 3, print = false})
    print(("  %-22s %8.3f ms %8.0f GB/s  %.2fx copy"):format("matvec " .. fmt .. " q8_1 x", r8.median,
        r8.gbps, r8.gbps / copy.gbps))
    -- The rows above time each call alone: the events around it also hold
    -- the host's dispatch of the op (a few us against a kernel of 10-30).
    -- Back to back: one timing around a call on each of the copies, the
    -- launches queued while the previous kernels run (as in a model's
    -- forward pass); the per-call time is the total over `copies`.
    for _, form in ipairs{{"f32 x", x, 4 * cols}, {"q8_1 x", xq, 36 * cols // 32}} do
        local rb = hk.bench(function()
            for j = 1, copies do Q.matvec(y, ws[j], form[2]) end
        end, {bytes = copies * (bytes + form[3] + 4 * rows), reps = 10, warmup = 2, print = false})
        print(("  %-22s %8.3f ms %8.0f GB/s  %.2fx copy  (back to back, per call)"):format(
            "matvec " .. fmt .. " " .. form[1], rb.median / copies, rb.gbps, rb.gbps / copy.gbps))
        -- the same calls recorded once (hk.graph: a CUDA graph) and replayed,
        -- as a model's decode step runs them: no host dispatch between
        -- the kernels, the launch gaps the graph leaves
        local g = hk.graph(function()
            for j = 1, copies do Q.matvec(y, ws[j], form[2]) end
        end)
        local rg = hk.bench(function() g:launch() end,
            {bytes = copies * (bytes + form[3] + 4 * rows), reps = 10, warmup = 2, print = false})
        print(("  %-22s %8.3f ms %8.0f GB/s  %.2fx copy  (graph replay, per call)"):format(
            "matvec " .. fmt .. " " .. form[1], rg.median / copies, rg.gbps, rg.gbps / copy.gbps))
        -- A timing of `copies` calls also holds the gap before its first
        -- kernel (the host's dispatch of the first call, a few us: about
        -- 0.05x copy at 7 calls of 10 us). A chain of at least 70 calls,
        -- passes over the copies, times the steady state of the same
        -- launches, as a model's layers run them.
        local passes = math.ceil(70 / copies)
        local function chain()
            for _ = 1, passes do
                for j = 1, copies do Q.matvec(y, ws[j], form[2]) end
            end
        end
        local chain_bytes = passes * copies * (bytes + form[3] + 4 * rows)
        local rc = hk.bench(chain, {bytes = chain_bytes, reps = 5, warmup = 1, print = false})
        local gc = hk.graph(chain)
        local rgc = hk.bench(function() gc:launch() end, {bytes = chain_bytes, reps = 5, warmup = 1, print = false})
        print(("  %-22s %8.3f ms %8.0f GB/s  %.2fx copy  (a chain of %d: back to back %.2fx, graph %.2fx)"):format(
            "matvec " .. fmt .. " " .. form[1], rc.median / (passes * copies), rc.gbps, rc.gbps / copy.gbps,
            passes * copies, rc.gbps / copy.gbps, rgc.gbps / copy.gbps))
    end
    local yh = hk.alloc(n, "f16")
    Q.dequantize(yh, w1)
    local d = hk.bench(function() Q.dequantize(yh, w1) end,
                       {bytes = bytes + 2 * n, reps = 20, warmup = 3, print = false})
    print(("  %-22s %8.3f ms %8.0f GB/s  %.2fx copy"):format("dequantize " .. fmt .. " -> f16",
        d.median, d.gbps, d.gbps / copy.gbps))
    -- a batch of 512 activation rows: TFLOP/s (2 flops per weight per row)
    local batch = 512
    local xb = hk.alloc(batch * cols, "f32"):rand{seed = 3, lo = -1, hi = 1}
    local yb = hk.alloc(batch * rows, "f32")
    Q.matmul(yb, w1, xb, rows)
    local mm = hk.bench(function() Q.matmul(yb, w1, xb, rows) end,
                        {flops = 2 * batch * n, reps = 10, warmup = 2, print = false})
    print(("  %-22s %8.3f ms %8.2f TFLOP/s"):format("matmul " .. fmt .. " x" .. batch, mm.median, mm.tflops))
    -- f16 activations and output, as PyTorch's f16 matmul: W dequantized
    -- to f16 scratch, then the gemm family's tensor-core product; and that
    -- product alone on W's f16 copy (yh), to show the split
    local xh, yhb = hk.alloc(batch * cols, "f16"):rand{seed = 3, lo = -1, hi = 1}, hk.alloc(batch * rows, "f16")
    Q.matmul(yhb, w1, xh, rows)
    local mh = hk.bench(function() Q.matmul(yhb, w1, xh, rows) end,
                        {flops = 2 * batch * n, reps = 10, warmup = 2, print = false})
    print(("  %-22s %8.3f ms %8.2f TFLOP/s"):format("matmul " .. fmt .. " x" .. batch .. " f16", mh.median,
        mh.tflops))
    local gh = hk.bench(function() hk.ops.gemm.matmul(yhb, xh, yh, batch, rows, cols, false, true) end,
                        {flops = 2 * batch * n, reps = 10, warmup = 2, print = false})
    print(("  %-22s %8.3f ms %8.2f TFLOP/s"):format("  of which gemm f16", gh.median, gh.tflops))
    -- few activation rows (f16): the fused kernel (W read once, no copy)
    -- against W's f16 copy and the gemm done by hand; GB/s of W's bytes
    for _, mm_ in ipairs{1, 8, 32, 64} do
        local xs_, ys_ = hk.alloc(mm_ * cols, "f16"):rand{seed = 4, lo = -1, hi = 1}, hk.alloc(mm_ * rows, "f32")
        Q.matmul(ys_, w1, xs_, rows)
        local fz = hk.bench(function() Q.matmul(ys_, w1, xs_, rows) end,
                            {bytes = bytes, flops = 2 * mm_ * n, reps = 20, warmup = 3, print = false})
        local cp = hk.bench(function()
            Q.dequantize(yh, w1)
            hk.ops.gemm.matmul(ys_, xs_, yh, mm_, rows, cols, false, true)
        end, {flops = 2 * mm_ * n, reps = 20, warmup = 3, print = false})
        print(("  %-22s %8.3f ms %8.2f TFLOP/s %6.0f GB/s of W  %.2fx copy; f16 copy + gemm %.3f ms"):format(
            "matmul " .. fmt .. " x" .. mm_ .. " f16", fz.median, fz.tflops, fz.gbps, fz.gbps / copy.gbps, cp.median))
    end
    ws, yh = nil, nil
    collectgarbage()
end
