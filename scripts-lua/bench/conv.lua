-- The conv family on the current device, the shapes of issue 14: conv2d
-- N32 C64 56x56 K64 3x3 pad 1 (f32, f16, bf16; NCHW through the implicit
-- GEMM and the direct kernel, NHWC), conv1d N16 C256 L4096 K256 k5 pad 2
-- (f32, f16), and the memory-bound ops on N32 C64 56x56 f32 (max and avg
-- pool 2x2, im2col 3x3 pad 1 of N8, nearest upsampling x2) next to a device
-- copy (b:copy) moving the same bytes. TFLOP/s (2 flops per multiply-add) or GB/s (bytes
-- read + written) by device events, median of 20 after 3 warm-up runs.
-- tools/bench_torch_conv.py measures PyTorch (cuDNN, TF32 off) on the same
-- cases. arg[1]: "small" for the CPU backend (N2, fewer repetitions).
local small = arg and arg[1] == "small"
local C = hk.ops.conv
local N = small and 2 or 32
local reps, warm = small and 2 or 20, small and 1 or 3
print(("conv on %s"):format(hk.device().name or "?"))

local function time(fn, flops, bytes)
    fn()
    hk.sync()
    local r = hk.bench(fn, {reps = reps, warmup = warm, print = false})
    local rate = flops and ("%8.2f TFLOP/s"):format(flops / (r.median * 1e-3) / 1e12)
        or ("%8.1f GB/s"):format(bytes / (r.median * 1e-3) / 1e9)
    return r.median, rate
end

-- one output of an NCHW convolution against a Lua dot product
local function spot(y, x, w, n, c, h, wd, k, r, s, pad, dt)
    local img, ko, oy, ox = n - 1, k // 2, h // 2, 0
    local want, scale = 0, 0
    for ci = 0, c - 1 do for a = 0, r - 1 do for b = 0, s - 1 do
        local iy, ix = oy - pad + a, ox - pad + b
        if iy >= 0 and iy < h and ix >= 0 and ix < wd then
            local v = x[((img * c + ci) * h + iy) * wd + ix + 1] * w[((ko * c + ci) * r + a) * s + b + 1]
            want, scale = want + v, scale + math.abs(v)
        end
    end end end
    local got = y[((img * k + ko) * h + oy) * wd + ox + 1]
    return math.abs(got - want) <= (dt == "f32" and 1e-4 or 2e-2) * scale + 1e-6
end

local function conv2d(dt, algo, nhwc)
    local c, h, w, k = 64, 56, 56, 64
    local x = hk.alloc(N * c * h * w, dt):rand{seed = 1, lo = -1, hi = 1}
    local wt = hk.alloc(k * c * 9, dt):rand{seed = 2, lo = -1, hi = 1}
    local y = hk.alloc(N * k * h * w, dt)
    local run = nhwc and function() C.conv2d_nhwc(y, x, wt, {N, h, w, c}, {k, 3, 3, c}, 1, 1, 1, 1) end
        or function() C.conv2d(y, x, wt, {N, c, h, w}, {k, c, 3, 3}, 1, 1, 1, 1, algo) end
    local ms, rate = time(run, 2.0 * N * k * h * w * c * 9)
    local ok = nhwc or spot(y, x, wt, N, c, h, w, k, 3, 3, 1, dt)
    print(("  conv2d %-4s N%d C64 56x56 K64 3x3 p1 %-6s %9.3f ms %s%s"):format(dt, N,
        nhwc and "nhwc" or algo == 1 and "direct" or algo == 3 and "gemm" or "igemm", ms, rate,
        ok and "" or "  WRONG RESULT"))
end

local function conv1d(dt)
    local c, l, k = 256, small and 512 or 4096, 256
    local x = hk.alloc(16 * c * l, dt):rand{seed = 1, lo = -1, hi = 1}
    local wt = hk.alloc(k * c * 5, dt):rand{seed = 2, lo = -1, hi = 1}
    local y = hk.alloc(16 * k * l, dt)
    local ms, rate = time(function() C.conv1d(y, x, wt, {16, c, l}, {k, c, 5}, 1, 2, 1, 1) end,
        2.0 * 16 * k * l * c * 5)
    print(("  conv1d %-4s N16 C256 L%d K256 k5 p2     %9.3f ms %s"):format(dt, l, ms, rate))
end

-- memory-bound ops: GB/s of bytes in + out, then copy2d moving as many
local function memop(name, nin, nout, fn)
    local x, y = hk.alloc(nin, "f32"):rand{seed = 3}, hk.alloc(nout, "f32")
    local ms, rate = time(function() fn(y, x) end, nil, 4.0 * (nin + nout))
    local half = (nin + nout) // 2
    local cx, cy = hk.alloc(half, "f32"), hk.alloc(half, "f32")
    local cms, crate = time(function() cy:copy(cx) end, nil, 8.0 * half)
    print(("  %-34s %9.3f ms %s   device copy of the same bytes %9.3f ms %s"):format(name, ms, rate, cms, crate))
    x:free(); y:free(); cx:free(); cy:free()
end

for _, dt in ipairs(small and {"f32"} or {"f32", "f16", "bf16"}) do
    conv2d(dt, 2)
    conv2d(dt, 3) -- unfold + gemm.matmul (algo 0 picks it for f16 and bf16)
    if dt == "f32" then conv2d(dt, 1) end
    conv2d(dt, 0, true)
end
conv1d("f32")
if not small then conv1d("f16") end
local P = N * 64 * 56 * 56
memop("max_pool2d 2x2 f32", P, P // 4, function(y, x) C.max_pool2d(y, x, {N, 64, 56, 56}, 2) end)
memop("avg_pool2d 2x2 f32", P, P // 4, function(y, x) C.avg_pool2d(y, x, {N, 64, 56, 56}, 2) end)
memop("upsample_nearest2d x2 f32", P, P * 4, function(y, x) C.upsample_nearest2d(y, x, {N, 64, 56, 56}, 112) end)
local I = (small and 1 or 8) * 64 * 56 * 56
memop("im2col 3x3 p1 f32 (N8)", I, I * 9, function(y, x) C.im2col(y, x, {small and 1 or 8, 64, 56, 56}, 3, 1, 1, 1) end)
