-- The gemm family's f32 kernels side by side on the current device, as JIT
-- variants of kernels/gemm/gemm.hip launched directly (hk.compile on its
-- text with only the f32 kernels kept, so each NVRTC compile takes seconds):
-- the plain SIMT tile (a launch with no dynamic shared memory) and the
-- cp.async-fed one (hkg_sgemm, NVIDIA sm_80+) for k-tile depths HKS_BK,
-- stage counts HKS_STAGES and warp shapes HKS_W (0: 32 x 64, 1: 64 x 32),
-- then the op (hk.ops.gemm.matmul, the AOT image). C = A B row-major, f32,
-- alpha 1, beta 0; A or B transposed and an odd shape too. Each result is
-- checked against double dot products in Lua on an 8 x 8 block of C at a
-- random place (and its corners for the odd shape). TFLOP/s = 2MNK / median
-- of 20 after 3 warm-up runs. arg[1]: the gemm.hip to compile (default:
-- kernels/gemm/gemm.hip); arg[2] "small": a quick look (the CPU backend,
-- where only the plain tile exists).
local path = arg and arg[1] or "kernels/gemm/gemm.hip"
local small = arg and arg[2] == "small"
local f = assert(io.open(path, "r"))
local text = f:read("a")
f:close()
-- only the f32 kernels: the other pairs' lines go
text = text:gsub("\nHKG_PAIR%((%w+),[^\n]*", function(tin) if tin ~= "f32" then return "\n" end end)
print(("gemm f32 variants on %s"):format(hk.device().name or "?"))
-- hkg_sgemm's SHARED: st stages of two bk x (128 + 4) f32 tiles
local function shared(bk, st) return st * 2 * bk * (128 + 4) * 4 end
local variants = {{"plain SIMT", {}, 0}}
if not small then
    for _, v in ipairs({{16, 4, 0}, {16, 3, 0}, {16, 2, 0}, {16, 4, 1}, {8, 4, 0}}) do
        variants[#variants + 1] = {("bk%d st%d w%d"):format(v[1], v[2], v[3]),
            {HKS_BK = v[1], HKS_STAGES = v[2], HKS_W = v[3]}, shared(v[1], v[2])}
    end
end
local kerns = {}
for i, v in ipairs(variants) do
    local t0 = os.clock()
    local mod = hk.compile(text, {name = "sgemm" .. i, defines = v[2]})
    kerns[i] = mod.gemm_f32_f32
    local info = kerns[i]:info()
    print(("  %-16s compiled in %.1f s: %s registers, %s bytes local"):format(v[1], os.clock() - t0,
        tostring(info.registers), tostring(info.local_bytes)))
end
-- X(r0 + e, p) for e < 8, p < k: x[e][p]; X(r, p) = buf[r sr + p sk]
local function rows8(buf, r0, k, sr, sk)
    local x = {}
    for e = 1, 8 do x[e] = {} end
    if sk == 1 then
        for e = 1, 8 do
            local t = buf:totable((r0 + e - 1) * sr + 1, (r0 + e - 1) * sr + k)
            for p = 1, k do x[e][p] = t[p] end
        end
    else
        for p = 0, k - 1 do
            local t = buf:totable(p * sk + r0 + 1, p * sk + r0 + 8)
            for e = 1, 8 do x[e][p + 1] = t[e] end
        end
    end
    return x
end
-- the 8 x 8 block of C at (i0, j0) against double dot products: bad elements
local function check_at(a, b, c, n, k, sam, sak, sbk, sbn, i0, j0)
    local ar, bc = rows8(a, i0, k, sam, sak), rows8(b, j0, k, sbn, sbk)
    local bad = 0
    for e = 1, 8 do
        local got = c:totable((i0 + e - 1) * n + j0 + 1, (i0 + e - 1) * n + j0 + 8)
        for g = 1, 8 do
            local want, scale = 0, 0
            for p = 1, k do
                local x = ar[e][p] * bc[g][p]
                want, scale = want + x, scale + math.abs(x)
            end
            if not (math.abs(got[g] - want) <= 1e-5 * math.sqrt(k) * scale + 1e-30) then bad = bad + 1 end
        end
    end
    return bad
end
local function check(a, b, c, m, n, k, sam, sak, sbk, sbn, corners)
    local bad = check_at(a, b, c, n, k, sam, sak, sbk, sbn, math.random(0, m - 8), math.random(0, n - 8))
    if corners then
        for _, at in ipairs({{m - 8, n - 8}, {0, n - 8}, {m - 8, 0}}) do
            bad = bad + check_at(a, b, c, n, k, sam, sak, sbk, sbn, at[1], at[2])
        end
    end
    return bad
end
local function report(what, m, n, k, ta, tb, r, bad)
    print(("  %5d x %5d x %5d ta=%-5s tb=%-5s %-16s %9.3f ms %8.2f TFLOP/s%s"):format(m, n, k, tostring(ta),
        tostring(tb), what, r.median, 2.0 * m * n * k / (r.median * 1e-3) / 1e12,
        bad == 0 and "  ok" or ("  WRONG (%d)"):format(bad)))
end
local function case(m, n, k, ta, tb, corners)
    local a = hk.alloc(m * k, "f32"):rand{seed = 1, lo = -1, hi = 1}
    local b = hk.alloc(k * n, "f32"):rand{seed = 2, lo = -1, hi = 1}
    local c = hk.alloc(m * n, "f32")
    local sam, sak = ta and 1 or k, ta and m or 1
    local sbk, sbn = tb and 1 or n, tb and k or 1
    local opts = {flops = 2.0 * m * n * k, reps = small and 3 or 20, warmup = small and 1 or 3, print = false}
    for i, v in ipairs(variants) do
        c:fill(0 / 0)
        local function run()
            kerns[i]{grid = {(n + 127) // 128, (m + 127) // 128, 1}, block = 256, shared = v[3]}(a, b, c, m, n, k,
                sam, sak, sbk, sbn, n, 0, 0, 0, 1.0, 0.0)
        end
        run()
        hk.sync()
        local r = hk.bench(run, opts)
        report(v[1], m, n, k, ta, tb, r, check(a, b, c, m, n, k, sam, sak, sbk, sbn, corners))
    end
    c:fill(0 / 0)
    local function op() hk.ops.gemm.matmul(c, a, b, m, n, k, ta, tb) end
    op()
    hk.sync()
    local r = hk.bench(op, opts)
    report("op (matmul)", m, n, k, ta, tb, r, check(a, b, c, m, n, k, sam, sak, sbk, sbn, corners))
end
if small then
    case(256, 256, 256, false, false, true)
    case(200, 136, 77, true, true, true)
    return
end
case(4096, 4096, 4096, false, false)
case(4096, 4096, 4096, true, false)
case(4096, 4096, 4096, false, true)
case(4096, 4096, 64, false, false)
case(1024, 1024, 1024, false, false)
case(512, 512, 512, false, false)
case(2050, 1029, 999, true, true, true)
