-- The gemm family's Hopper paths side by side, as JIT variants of
-- kernels/gemm/gemm.hip launched directly (hk.compile{path = ...}): the
-- 128 x 256 f16/bf16 kernel given the wgmma ring (193 KiB of dynamic shared
-- memory: hkg_wgmma, sm_90a) or the mma.sync pipeline's 96 KiB (hkg_mma),
-- and wgmma storing C straight from its registers (HKW_DIRECT_C; with
-- HKW_STAGES3 set, 3 stages too), on C = A B row-major (and the transposed
-- layouts for 4096^3). Each result is checked against double dot products
-- in Lua on an 8 x 8 block of C at a random place. TFLOP/s = 2MNK / median of 20.
-- For a 9.0 device (H100): other GPUs refuse the 193 KiB or lack wgmma.
-- arg[1]: the kernels/gemm/gemm.hip to compile (default: that path);
-- arg[2] "small": two small cases only (the CPU backend).
local path = arg and arg[1] or "kernels/gemm/gemm.hip"
local small = arg and arg[2] == "small"
print(("gemm wgmma variants on %s"):format(hk.device().name or "?"))
local function variant(defs)
    return hk.compile{path = path, defines = defs}
end
local mods = {{"stages 4", variant({})}, {"direct C", variant({HKW_DIRECT_C = 1})}}
if os.getenv("HKW_STAGES3") then mods[#mods + 1] = {"stages 3", variant({HKW_STAGES = 3})} end
local MMA = 4 * (128 + 256) * 32 * 2
local function shared_for(name, stages)
    if name == "mma" then return MMA end
    return stages * (128 + 256) * 64 * 2 + 1024
end
-- X(r0 + e, p) for e < 8, p < k, read in runs: x[e][p]; sr, sk: strides
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
-- An 8 x 8 block of C at a random place against double dot products.
local function check(a, b, c, m, n, k, sam, sak, sbk, sbn)
    local i0, j0 = math.random(0, m - 8), math.random(0, n - 8)
    local ar, bc = rows8(a, i0, k, sam, sak), rows8(b, j0, k, sbn, sbk)
    local bad = 0
    for e = 1, 8 do
        local got = c:totable((i0 + e - 1) * n + j0 + 1, (i0 + e - 1) * n + j0 + 8)
        for f = 1, 8 do
            local want, scale = 0, 0
            for p = 1, k do
                local x = ar[e][p] * bc[f][p]
                want, scale = want + x, scale + math.abs(x)
            end
            if not (math.abs(got[f] - want) <= 1e-2 * scale + 1e-6) then bad = bad + 1 end
        end
    end
    return bad
end
-- A(i, p) = a[i sam + p sak], B(p, j) = b[p sbk + j sbn]; C row-major
local function case(dt, out, m, n, k, ta, tb)
    local a = hk.alloc(m * k, dt):rand{seed = 1, lo = -1, hi = 1}
    local b = hk.alloc(k * n, dt):rand{seed = 2, lo = -1, hi = 1}
    local c = hk.alloc(m * n, out)
    local sam, sak = ta and 1 or k, ta and m or 1
    local sbk, sbn = tb and 1 or n, tb and k or 1
    local rows = {}
    for _, mv in ipairs(mods) do
        local kern = mv[2]["gemm_" .. dt .. "_" .. out]
        local stages = mv[1] == "stages 3" and 3 or 4
        for _, path_ in ipairs(mv[1] == "stages 4" and {"wgmma", "mma"} or {"wgmma"}) do
            local sh = small and 0 or shared_for(path_, stages) -- the CPU backend: none
            c:fill(0 / 0)
            local function run()
                kern{grid = {(n + 255) // 256, (m + 127) // 128, 1}, block = 256, shared = sh}(a, b, c, m, n, k,
                    sam, sak, sbk, sbn, n, 0, 0, 0, 1.0, 0.0)
            end
            run()
            hk.sync()
            local r = hk.bench(run, {flops = 2.0 * m * n * k, reps = 20, warmup = 3, print = false})
            local bad = check(a, b, c, m, n, k, sam, sak, sbk, sbn)
            print(("  %-5s->%-5s %5d x %5d x %5d ta=%-5s tb=%-5s %-6s %-8s %9.3f ms %8.2f TFLOP/s%s"):format(dt,
                out, m, n, k, tostring(ta), tostring(tb), path_, mv[1], r.median,
                2.0 * m * n * k / (r.median * 1e-3) / 1e12, bad == 0 and "  ok" or ("  WRONG (%d of 64)"):format(bad)))
        end
    end
end
if small then -- a quick look on the CPU backend
    case("f16", "f16", 256, 512, 128, false, false)
    case("bf16", "f32", 256, 512, 128, true, true)
    return
end
case("f16", "f16", 4096, 4096, 4096, false, false)
case("bf16", "bf16", 4096, 4096, 4096, false, false)
case("f16", "f16", 4096, 4096, 4096, true, false)
case("f16", "f16", 4096, 4096, 4096, false, true)
case("bf16", "f32", 4096, 4096, 4096, true, true)
case("f16", "f16", 4096, 4096, 64, false, false)
case("f16", "f16", 1024, 1024, 1024, false, false)
local k = mods[1][2].gemm_f16_f16
local dis = k:disasm()
local n = 0
for _ in dis:gmatch("HGMMA") do n = n + 1 end
local h = 0
for _ in dis:gmatch("HMMA") do h = h + 1 end
local i = k:info()
print(("gemm_f16_f16 (JIT, target %s): %d HGMMA and %d HMMA instructions in its SASS; %s registers, %s bytes "
    .. "static shared"):format(tostring(i.target), n, h, tostring(i.registers), tostring(i.static_shared)))
