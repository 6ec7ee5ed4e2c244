-- f32 products on the current device two ways in one process: the op
-- (hk.ops.gemm.matmul: on NVIDIA an operand without 16-byte rows along m / n
-- packed first, and products with too few 128 x 128 tiles split along k,
-- plugins/gemm/gemm.c) against the route it took before both (the plain
-- 128 x 128 SIMT tile, or the 64 x 64 one under 128 tiles; the cp.async
-- tile where A is transposed), as direct launches of the same AOT kernels.
-- C = op(A) op(B), alpha 1, beta 0, A and B random in [-1, 1]. TFLOP/s =
-- 2MNK / median of 20 after 3 warm-up runs (device events). Each result is
-- checked on 64 random elements against double dot products in Lua.
-- tools/bench_torch_gemm.py f32 gives cuBLAS on the row-major cases.
local G = hk.ops.gemm
local K = G.kernels
local cases = {
    {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {4096, 4096, 64},
    {4096, 4096, 4096, true, false}, {4096, 4096, 4096, false, true}, {1024, 1024, 4096}, {256, 256, 8192},
}
print(("gemm f32 routes on %s"):format(hk.device().name or "?"))
local SG = 4 * 2 * 16 * (128 + 4) * 4 -- hkg_sgemm's stages (gemm.c's SG_SHARED)
for _, cs in ipairs(cases) do
    local m, n, k, ta, tb = cs[1], cs[2], cs[3], cs[4] or false, cs[5] or false
    local a = hk.alloc(m * k, "f32"):rand{lo = -1, hi = 1}
    local b = hk.alloc(k * n, "f32"):rand{lo = -1, hi = 1}
    local c = hk.alloc(m * n, "f32")
    -- the kernels' strides (row-major C): A(i, p), B(p, j)
    local sam, sak = ta and 1 or k, ta and m or 1
    local sbk, sbn = tb and 1 or n, tb and k or 1
    local big = ((m + 127) // 128) * ((n + 127) // 128) >= 128
    local before
    if big then
        local sh = (sam == 1 and sbn == 1) and SG or 0
        local l = K.gemm_f32_f32{grid = {(n + 127) // 128, (m + 127) // 128, 1}, block = 256, shared = sh}
        before = function() l(a, b, c, m, n, k, sam, sak, sbk, sbn, n, 0, 0, 0, 1.0, 0.0) end
    else
        local l = K.gemm64_f32_f32{grid = {(n + 63) // 64, (m + 63) // 64, 1}, block = 256}
        before = function() l(a, b, c, m, n, k, sam, sak, sbk, sbn, n, 0, 0, 0, 1.0, 0.0) end
    end
    local function op() G.matmul(c, a, b, m, n, k, ta, tb) end
    local function checked()
        local bad = 0
        for _ = 1, 64 do
            local i, j = math.random(0, m - 1), math.random(0, n - 1)
            local s, sabs = 0, 0
            for p = 0, k - 1 do
                local x = a[i * sam + p * sak + 1] * b[p * sbk + j * sbn + 1]
                s, sabs = s + x, sabs + math.abs(x)
            end
            if not (math.abs(c[i * n + j + 1] - s) <= 1e-5 * math.sqrt(k) * sabs + 1e-6) then bad = bad + 1 end
        end
        return bad == 0 and "" or ("  WRONG (%d of 64)"):format(bad)
    end
    local res = {}
    for _, route in ipairs({{"before", before}, {"op", op}}) do
        c:fill(0 / 0)
        route[2]()
        hk.sync()
        local ok = checked()
        local r = hk.bench(route[2], {flops = 2.0 * m * n * k, reps = 20, warmup = 3, print = false})
        res[#res + 1] = ("%s %8.4f ms %7.2f TFLOP/s%s"):format(route[1], r.median,
            2.0 * m * n * k / (r.median * 1e-3) / 1e12, ok)
    end
    print(("  %5d x %5d x %5d %-5s %-5s  %s  |  %s"):format(m, n, k, ta and "ta" or "", tb and "tb" or "", res[1],
        res[2]))
end
