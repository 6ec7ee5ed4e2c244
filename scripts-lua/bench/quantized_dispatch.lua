-- Host time to queue a q4_0 matvec (14336 x 4096, q8_1 x) through the op
-- against a direct launch of its kernel, and the time a call of 700
-- queued back to back: whether the host's dispatch or the GPU bounds a
-- chain of matvecs.
--   hipkit --backend cuda scripts-lua/bench/quantized_dispatch.lua
local Q = hk.ops.quantized
if (hk.device().max_shared_per_block or 0) < 164 * 1024 then
    print(("%s: %d bytes of shared memory a block; these launches ask for 164 KiB (sm_90 and later)"):format(
        hk.device().name or "?", hk.device().max_shared_per_block or 0))
    return
end
local rows, cols = 14336, 4096
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local xq = hk.alloc(cols, "q8_1"); Q.quantize(xq, x)
local y = hk.alloc(rows, "f32")
local ws = {}
for i = 1, 7 do ws[i] = hk.alloc(rows * cols, "q4_0"); ws[i]:view("u8"):rand{seed = i, lo = 0, hi = 255} end
local k = Q.kernels["matvec_q4_0_q8_1_ring"]{grid = 132, block = 256, shared = 4 * 16 * 2304 + 40 * 128 + 32, early = true}
hk.sync()
for _, what in ipairs{"op", "kernel", "op", "kernel"} do
  local n = 700
  local t0 = hk.clock()
  for i = 1, n do
    local w = ws[(i - 1) % 7 + 1]
    if what == "op" then Q.matvec(y, w, xq) else k(w, xq, y, rows, cols, 4) end
  end
  local t1 = hk.clock()
  hk.sync()
  local t2 = hk.clock()
  print(("%-6s enqueue %.2f us/call, to the end %.2f us/call"):format(what, (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6))
end
