-- The lane-a-row matvec (quantized_rows.hip, v20) against the op's matvec
-- on the same data, f32 x: 45 rows (a partial tile of 32 or 64) and 75, of
-- 4096 and 2816 columns, grids of 1, 2 and 3 blocks (tiles a block, blocks
-- without a tile), 2, 4 and 8 warps a block (steps a warp), x uniform and
-- x holding an inf (q4_K: the unstaged path). Outputs poisoned with NaN;
-- a difference is taken over the op's largest finite |y|.
-- Usage: hipkit quantized_rows_check.lua path/to/quantized.hip
local path = assert(arg and arg[1], "usage: quantized_rows_check.lua quantized.hip")
local Q = hk.ops.quantized
local src = dofile((arg[0]:match("(.*/)") or "./") .. "quantized_source.lua")(path, {"quantized_rows.hip"})
local fmts = {q4_0 = "HKQ_Q4_0", q8_0 = "HKQ_Q8_0", q4_K = "HKQ_Q4_K"}
local order = {"q4_0", "q8_0", "q4_K"}
for _, q in ipairs(order) do
    src = src .. ([[
extern "C" __global__ void mvw_%s(const void *w, const float *x, float *y, int rows, int cols)
{ hkr_matvec<%s>(w, x, y, rows, cols); }
]]):format(q, fmts[q])
end
local segb = {q4_0 = 144, q8_0 = 136, q4_K = 144}
local warp = hk.device().warp_size or 32
local function shared_of(q, nw, xg) return (xg and 0 or 18432) + 1024 + 2 * nw * warp * 4 + nw * (warp * (segb[q] // 4 + 1) + 1) * 4 end
local pass, fail = 0, 0
for _, xg in ipairs{0, 1} do
    local m = hk.compile(src, {name = "qrows_check" .. xg, defines = {HKR_XG = xg}})
    for _, q in ipairs(order) do
        if xg == 1 and q == "q4_K" then goto nextq end -- x's staged sums: XG is for q4_0, q8_0
        for _, cols in ipairs{4096, 2816} do
            for _, rows in ipairs{45, 75} do
                local wf = hk.alloc(rows * cols, "f32"):rand{seed = 3, lo = -1, hi = 1}
                local w = hk.alloc(rows * cols, q)
                Q.quantize(w, wf)
                for _, xk in ipairs{"uniform", "inf"} do
                    local x = hk.alloc(cols, "f32"):rand{seed = 4, lo = -1, hi = 1}
                    if xk == "inf" then x[7] = math.huge end
                    local want = hk.alloc(rows, "f32")
                    Q.matvec(want, w, x)
                    local wv = want:totable()
                    local scale = 1e-30 -- the largest finite |y|: rows near 0 by cancellation are compared to it
                    for _, v in ipairs(wv) do
                        if math.abs(v) < math.huge then scale = math.max(scale, math.abs(v)) end
                    end
                    for _, nw in ipairs{2, 4, 8} do
                        local sh = shared_of(q, nw, xg == 1)
                        if sh > (hk.device().max_shared_per_block or 0) then
                            print(("# SKIP %s %d warps: %d bytes of shared memory, over the device's"):format(q, nw, sh))
                            goto nextnw
                        end
                        for _, g in ipairs{1, 2, 3} do
                            local y = hk.alloc(rows, "f32"):fill(0 / 0)
                            m["mvw_" .. q]{grid = g, block = nw * warp, shared = sh}(w, x, y, rows, cols)
                            local got, worst = y:totable(), 0
                            for r = 1, rows do
                                local a, b = got[r], wv[r]
                                local d = (a == b) and 0 or math.abs(a - b) / scale
                                if a ~= a and b ~= b then d = 0 elseif a ~= a or d ~= d then d = math.huge end
                                worst = math.max(worst, d)
                            end
                            local ok = worst <= 1e-5
                            if ok then pass = pass + 1 else fail = fail + 1 end
                            if not ok or os.getenv("HKR_VERBOSE") then
                                print(("%s - XG%d %s %dx%d x %s, %d warps, grid %d: worst difference to the op over its largest |y| %.2e"):format(
                                    ok and "ok" or "not ok", xg, q, rows, cols, xk, nw, g, worst))
                            end
                        end
                        ::nextnw::
                    end
                end
            end
        end
        ::nextq::
    end
end
print(("%d passed, %d failed"):format(pass, fail))
