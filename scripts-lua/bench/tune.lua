-- hk.peaks, hk.autotune and hk.bench{...} on the current device: the
-- device's copy and matrix-product peaks (measured again), an elementwise
-- kernel tuned over block size and items per thread, and the winner
-- compared with a fixed configuration. Run on a GPU:
--   hipkit --backend cuda scripts-lua/bench/tune.lua [n]
local n = tonumber(arg and arg[1]) or (hk.device().backend == "host" and (1 << 20) or (1 << 26))
local t0 = hk.clock()
local p = hk.peaks{refresh = true}
print(string.format("%s (measured in %.2f s)", tostring(p), hk.clock() - t0))

local m = hk.compile([[
#include <hip/hip_runtime.h>
#ifndef ITEMS
#define ITEMS 1
#endif
extern "C" __global__ void axpy(float *y, const float *x, float a, int n)
{
    int base = (blockIdx.x * blockDim.x) * ITEMS + threadIdx.x;
    for (int j = 0; j < ITEMS; j++) {
        int i = base + j * blockDim.x;
        if (i < n)
            y[i] = a * x[i] + y[i];
    }
}
]], {name = "tune-axpy"})
local x, y = hk.alloc(n, "f32"):rand{seed = 1}, hk.alloc(n, "f32"):fill(0)
t0 = hk.clock()
local best, res = hk.autotune(m.axpy, {
    block = {64, 128, 256, 512, 1024, 2048}, defines = {ITEMS = {1, 2, 4, 8}},
    grid = function(cfg) return (n + cfg.block * cfg.ITEMS - 1) // (cfg.block * cfg.ITEMS) end,
    retune = true}, y, x, 0.5, n)
print(string.format("autotune took %.2f s", hk.clock() - t0))
print(res)
print(best)
t0 = hk.clock()
local again, res2 = hk.autotune(m.axpy, {
    block = {64, 128, 256, 512, 1024, 2048}, defines = {ITEMS = {1, 2, 4, 8}},
    grid = function(cfg) return (n + cfg.block * cfg.ITEMS - 1) // (cfg.block * cfg.ITEMS) end}, y, x, 0.5, n)
print(string.format("the same autotune again: cached=%s in %.3f ms", tostring(res2.cached), (hk.clock() - t0) * 1000))

local fixed = m.axpy{grid = (n + 63) // 64, block = 64}
hk.bench({{"block 64, ITEMS 1", function() fixed(y, x, 0.5, n) end},
          {"autotuned", function() again(y, x, 0.5, n) end}},
         {bytes = 3 * 4 * n, flops = 2 * n, reps = 20})
