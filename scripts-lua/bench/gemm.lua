-- The gemm family on the current device: C = A B (row-major, no
-- transposes, alpha 1, beta 0) for f32, f16 and bf16 (C of the input's
-- dtype), sizes M x N x K = 512^3, 1024^3, 4096^3 and the skinny
-- 4096 x 4096 x 64; TFLOP/s (2 M N K flops) by device events, median of
-- 20 after 3 warm-up runs. tools/bench_torch_gemm.py measures PyTorch
-- (cuBLAS, TF32 off) on the same cases. arg[1]: a dtype to run alone;
-- arg[2]: "small" for the CPU (sizes 256^3 and 1024^3, f32 only).
local only, small = arg and arg[1], arg and arg[2] == "small"
local sizes = {{512, 512, 512}, {1024, 1024, 1024}, {4096, 4096, 4096}, {4096, 4096, 64}}
local dtypes = {"f32", "f16", "bf16"}
if small then sizes, dtypes = {{256, 256, 256}, {1024, 1024, 1024}}, {"f32"} end
print(("gemm on %s"):format(hk.device().name or "?"))
for _, dt in ipairs(dtypes) do
    if not only or only == dt then
        for _, s in ipairs(sizes) do
            local m, n, k = s[1], s[2], s[3]
            local a = hk.alloc(m * k, dt):rand{seed = 1, lo = -1, hi = 1}
            local b = hk.alloc(k * n, dt):rand{seed = 2, lo = -1, hi = 1}
            local c = hk.alloc(m * n, dt)
            local function run() hk.ops.gemm.matmul(c, a, b, m, n, k) end
            run()
            hk.sync()
            local r = hk.bench(run, {flops = 2.0 * m * n * k, reps = small and 3 or 20, warmup = small and 1 or 3,
                print = false})
            -- one element against a dot product in Lua: the run computed C
            local i, j = m // 3, n // 2
            local want, scale = 0, 0
            for q = 0, k - 1 do
                local x = a[i * k + q + 1] * b[q * n + j + 1]
                want, scale = want + x, scale + math.abs(x)
            end
            local ok = math.abs(c[i * n + j + 1] - want) <= (dt == "f32" and 1e-4 or 2e-2) * scale + 1e-6
            print(("  %-5s %5d x %5d x %5d %9.3f ms %9.2f TFLOP/s%s"):format(dt, m, n, k, r.median,
                2.0 * m * n * k / (r.median * 1e-3) / 1e12, ok and "" or "  WRONG RESULT"))
        end
    end
end
