-- Plugin kernels on big arrays: binary add, unary gelu and cast f32->bf16 on
-- 2^28 elements (pass another exponent as arg[1]) of random data, GB/s by
-- device events, next to a device copy of the same run (the floor).
-- tools/bench_torch_ops.py measures the same with PyTorch.
local n = 1 << (tonumber(arg and arg[1]) or 28)
local a = hk.alloc(n, "f32"):rand{seed = 1, lo = -4, hi = 4}
local b = hk.alloc(n, "f32"):rand{seed = 2, lo = -4, hi = 4}
local c = hk.alloc(n, "f32")
local h = hk.alloc(n, "bf16")
local add, gelu, cast = hk.ops.binary.add_f32, hk.ops.unary.gelu_f32, hk.ops.cast.cast_f32_bf16
add(a, b, c, n) -- first use: load or compile
gelu(a, c, n)
cast(a, h, n)
hk.sync()
local opt = function(bytes) return {bytes = bytes, reps = 20, warmup = 3, print = false} end
local r0 = hk.bench(function() c:copy(a) end, opt(8 * n))
local r1 = hk.bench(function() add(a, b, c, n) end, opt(12 * n))
local r2 = hk.bench(function() gelu(a, c, n) end, opt(8 * n))
local r3 = hk.bench(function() cast(a, h, n) end, opt(6 * n))
add(a, b, c, n)
cast(a, h, n)
hk.sync()
local ok = math.abs(c[n] - (a[n] + b[n])) <= 1e-6 * math.abs(a[n] + b[n]) and
    math.abs(h[7] - a[7]) <= 2 ^ -8 * math.abs(a[7])
print(("ops on 2^%d random f32: copy %.0f GB/s, add %.0f GB/s (%.3fx copy), gelu %.0f GB/s (%.3fx), " ..
    "cast %.0f GB/s (%.3fx)%s"):format(math.floor(math.log(n, 2) + 0.5), r0.gbps, r1.gbps, r1.gbps / r0.gbps,
    r2.gbps, r2.gbps / r0.gbps, r3.gbps, r3.gbps / r0.gbps, ok and "" or " WRONG RESULT"))
