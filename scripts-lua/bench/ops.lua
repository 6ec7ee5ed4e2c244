-- Plugin kernels on big arrays: binary add, unary gelu and cast f32->bf16 on
-- 2^28 elements (pass another exponent as arg[1]), GB/s by device events.
-- tools/bench_torch_ops.py measures the same with PyTorch.
local n = 1 << (tonumber(arg and arg[1]) or 28)
local a = hk.alloc(n, "f32"):fill(1.5)
local b = hk.alloc(n, "f32"):fill(2.25)
local c = hk.alloc(n, "f32")
local h = hk.alloc(n, "bf16")
local add, gelu, cast = hk.ops.binary.add_f32, hk.ops.unary.gelu_f32, hk.ops.cast.cast_f32_bf16
add(a, b, c, n) -- first use: load or compile
gelu(a, c, n)
cast(a, h, n)
hk.sync()
local r1 = hk.bench(function() add(a, b, c, n) end, {label = "add f32", bytes = 12 * n, reps = 20})
local r2 = hk.bench(function() gelu(a, c, n) end, {label = "gelu f32", bytes = 8 * n, reps = 20})
local r3 = hk.bench(function() cast(a, h, n) end, {label = "cast f32->bf16", bytes = 6 * n, reps = 20})
hk.sync()
local ok = c[1] == c[1] and h[n] == 1.5
print(("ops on 2^%d elements: add %.0f GB/s, gelu %.0f GB/s, cast %.0f GB/s%s"):format(
    math.floor(math.log(n, 2) + 0.5), r1.gbps, r2.gbps, r3.gbps, ok and "" or " WRONG RESULT"))
