-- The bulk-copy matvec (quantized_tma.hip, v19) against the op's matvec on
-- the same data: f32 x (mv9_<fmt>) and q8_1 x (mv98_<fmt>), 41 rows of
-- 4096 columns (two full chunks) and of 2816 (a partial second chunk),
-- grids of 1, 2 and 3 blocks of 256 threads (warps with several rows, and
-- warps with none), rings of 2 and 3 stages, x uniform and x holding an
-- inf (the unstaged path, after the copies in flight have landed). Outputs
-- poisoned with NaN first. On the CPU backend a fetch is the warp's own
-- copy (the same indexing); on an sm_90 device the copy engine runs it.
-- Usage: hipkit quantized_tma_check.lua path/to/quantized.hip
local path = assert(arg and arg[1], "usage: quantized_tma_check.lua quantized.hip")
local Q = hk.ops.quantized
local src = dofile((arg[0]:match("(.*/)") or "./") .. "quantized_source.lua")(path, {"quantized_tma.hip"})
local fmts = {q4_0 = "HKQ_Q4_0", q8_0 = "HKQ_Q8_0", q4_K = "HKQ_Q4_K", q6_K = "HKQ_Q6_K"}
local order = {"q4_0", "q8_0", "q4_K", "q6_K"}
for _, q in ipairs(order) do
    src = src .. ([[
extern "C" __global__ void mv9_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hk9_matvec<%s, 0>(w, x, y, rows, cols); }
extern "C" __global__ void mv98_%s(const void *w, const void *x, float *y, int rows, int cols)
{ hk9_matvec<%s, 1>(w, x, y, rows, cols); }
]]):format(q, fmts[q], q, fmts[q])
end
-- bytes of a row's 2048-column chunk, by format (hkq_stage's SEG)
local seg = {q4_0 = 1152, q8_0 = 2176, q4_K = 1152, q6_K = 1680}
local function shared_of(q, k, nw) return 18432 + 1024 + nw * k * (seg[q] + 16) + nw * k * 8 end
local pass, fail = 0, 0
for _, k in ipairs{2, 3} do
    local m = hk.compile(src, {name = "qtma_check" .. k, defines = {HK9_K = k}})
    for _, q in ipairs(order) do
        for _, cols in ipairs{4096, 2816} do
            -- the staged paths need rows of whole 16-byte pieces (q6_K: 2048 columns at a time)
            if (cols // (q:find("_K") and 256 or 32)) * ({q4_0 = 18, q8_0 = 34, q4_K = 144, q6_K = 210})[q] % 16 ~= 0 then
                goto nextcols
            end
            local rows = 41
            local wf = hk.alloc(rows * cols, "f32"):rand{seed = 3, lo = -1, hi = 1}
            local w = hk.alloc(rows * cols, q)
            Q.quantize(w, wf)
            for _, xk in ipairs{"uniform", "inf"} do
                local x = hk.alloc(cols, "f32"):rand{seed = 4, lo = -1, hi = 1}
                if xk == "inf" then x[7] = math.huge end
                local xq = hk.alloc(cols, "q8_1")
                Q.quantize(xq, x)
                for _, form in ipairs{{"mv9_", x, "f32"}, {"mv98_", xq, "q8_1"}} do
                    if form[3] == "q8_1" and xk == "inf" then goto skip end
                    local want = hk.alloc(rows, "f32")
                    Q.matvec(want, w, form[2])
                    local wv = want:totable()
                    local sh = shared_of(q, k, 8)
                    if sh > (hk.device().max_shared_per_block or 0) and hk.device().backend == "host" then
                        print(("# SKIP K%d %s: %d bytes of shared memory, over the CPU backend's"):format(k, q, sh))
                        goto skip
                    end
                    for _, g in ipairs{1, 2, 3} do
                        local y = hk.alloc(rows, "f32"):fill(0 / 0)
                        m[form[1] .. q]{grid = g, block = 256, shared = sh}(w, form[2], y, rows, cols)
                        local got, worst = y:totable(), 0
                        for r = 1, rows do
                            local a, b = got[r], wv[r]
                            local d = (a == b) and 0 or math.abs(a - b) / math.max(1e-30, math.abs(b))
                            if a ~= a and b ~= b then d = 0 elseif a ~= a or d ~= d then d = math.huge end
                            worst = math.max(worst, d)
                        end
                        local ok = worst <= 1e-5
                        if ok then pass = pass + 1 else fail = fail + 1 end
                        print(("%s - K%d %s %dx%d %s x (%s) grid %d: worst relative difference to the op %.2e"):format(
                            ok and "ok" or "not ok", k, q, rows, cols, form[3], xk, g, worst))
                    end
                    ::skip::
                end
            end
            ::nextcols::
        end
    end
end
print(("%d passed, %d failed"):format(pass, fail))
