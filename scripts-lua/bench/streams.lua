-- Streams on the current device: what they cost and what they overlap.
--  1. launch cost from Lua: 2000 launches of an empty kernel, k:launch on
--     the default stream against s:launch on a stream (us per launch, wall
--     clock around the loop and the final sync);
--  2. two kernels of about the same length (a fixed number of dependent
--     multiply-adds per thread, few blocks, so one does not fill the
--     device) one after the other on one stream, then on two streams;
--  3. a host-to-device copy from a pinned (host-mode) buffer next to such a
--     kernel: each alone, then both at once on two streams.
-- Times are medians of 5 runs (ms, wall clock from the first call to the
-- last sync). arg[1]: "small" for the CPU backend.
local small = arg and arg[1] == "small"
local reps = 5
print(("streams on %s (%s)"):format(hk.device().name or "?", hk.device().backend or "?"))

local m = hk.compile([[
extern "C" __global__ void empty() {}
extern "C" __global__ void spin(float *x, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  for (int k = 0; k < iters; k++) v = v * 0.999999f + 0.5f;
  x[i] = v;
}
]])

local function median(f)
    local t = {}
    for r = 1, reps do
        hk.sync()
        local t0 = hk.clock()
        f()
        hk.sync()
        t[r] = (hk.clock() - t0) * 1e3
    end
    table.sort(t)
    return t[(reps + 1) // 2]
end

-- 1. launch cost
local s, s2 = hk.stream(), hk.stream()
local n_launch = small and 200 or 2000
local e = m.empty
local d0 = median(function() for _ = 1, n_launch do e:launch(1, 1) end end)
local d1 = median(function() for _ = 1, n_launch do s:launch(e, 1, 1) end s:sync() end)
print(("launch: k:launch %.2f us, s:launch %.2f us per launch (%d launches)"):format(
    d0 * 1e3 / n_launch, d1 * 1e3 / n_launch, n_launch))

-- 2. two kernels: one stream, then two
local blocks, threads = small and 2 or 8, small and 64 or 128
local iters = small and 20000 or 2000000
local a, b = hk.alloc(blocks * threads):rand(), hk.alloc(blocks * threads):rand()
local k = m.spin
local one = median(function() k:launch(blocks, threads, a, iters) end)
local serial = median(function() s:launch(k, blocks, threads, a, iters):launch(k, blocks, threads, b, iters):sync() end)
local both = median(function()
    s:launch(k, blocks, threads, a, iters)
    s2:launch(k, blocks, threads, b, iters)
    s:sync()
    s2:sync()
end)
print(("kernels: one %.3f ms; two on one stream %.3f ms; on two streams %.3f ms (%.2fx)"):format(
    one, serial, both, serial / both))

-- 3. pinned host-to-device copy next to a kernel
local n = small and (1 << 20) or (64 << 20)
local pin, dev = hk.alloc(n, "f32", "host"):rand(), hk.alloc(n, "f32")
local big_blocks = small and 2 or 132
local c = hk.alloc(big_blocks * threads):rand()
local copy = median(function() s:copy(dev, pin):sync() end)
local kern = median(function() s2:launch(k, big_blocks, threads, c, iters):sync() end)
local over = median(function()
    s:copy(dev, pin)
    s2:launch(k, big_blocks, threads, c, iters)
    s:sync()
    s2:sync()
end)
print(("copy %d MiB host->device %.3f ms (%.1f GB/s); kernel %.3f ms; both on two streams %.3f ms " ..
    "(sum %.3f)"):format(n * 4 >> 20, copy, n * 4 / (copy * 1e-3) / 1e9, kern, over, copy + kern))
assert(dev:allclose(pin, 0, 0), "the copied buffer is wrong")
print("copy checked")
