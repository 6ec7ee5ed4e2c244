-- The streamed q8_1 matvec (matvec_<fmt>_q8_1_ring) launched directly with
-- 2, 3 and 4 stages, 14336 x 4096: chains of at least 70 launches back to
-- back over weight copies that exceed 4x a 50 MB L2, and the same chain as
-- a graph replayed; ratio to a device-to-device copy of the same run. What
-- the op's stage count a format (plugins/quantized/quantized.c,
-- ring_stages) was chosen by.
--   hipkit --backend cuda scripts-lua/bench/quantized_stages.lua
local Q = hk.ops.quantized
if (hk.device().max_shared_per_block or 0) < 164 * 1024 then
    print(("%s: %d bytes of shared memory a block; these launches ask for 164 KiB (sm_90 and later)"):format(
        hk.device().name or "?", hk.device().max_shared_per_block or 0))
    return
end
local rows, cols = 14336, 4096
local big = 256 << 20
local src, dst = hk.alloc(big // 4, "f32"):rand{seed = 2}, hk.alloc(big // 4, "f32")
local copy = hk.bench(function() dst:copy(src) end, {bytes = 2 * big, reps = 20, warmup = 3, print = false})
local x = hk.alloc(cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local xq = hk.alloc(cols, "q8_1"); Q.quantize(xq, x)
local y = hk.alloc(rows, "f32")
local piece = {q4_0 = 144, q8_0 = 272, q4_K = 144, q6_K = 210}
print(("copy %.0f GB/s"):format(copy.gbps))
for _, fmt in ipairs{"q4_0", "q4_K", "q6_K"} do
  local ws = {hk.alloc(rows * cols, fmt)}
  local bytes = #ws[1]:view("u8")
  local copies = math.max(2, math.ceil(200e6 / bytes))
  for i = 2, copies do ws[i] = hk.alloc(rows * cols, fmt) end
  for i, w in ipairs(ws) do w:view("u8"):rand{seed = i, lo = 0, hi = 255} end
  local line = fmt
  for _, st in ipairs{2, 3, 4} do
    local sh = (st * 16 * piece[fmt] * 16 + 15) // 16 * 16 + 40 * 128 + 8 * st
    if sh <= 227 * 1024 then
      local k = Q.kernels["matvec_" .. fmt .. "_q8_1_ring"]{grid = 132, block = 256, shared = math.max(sh, 164 * 1024), early = true}
      local passes = math.ceil(70 / copies)
      local function chain() for _ = 1, passes do for j = 1, copies do k(ws[j], xq, y, rows, cols, st) end end end
      chain()
      local moved = passes * copies * (bytes + 36 * cols // 32 + 4 * rows)
      local rc = hk.bench(chain, {bytes = moved, reps = 5, warmup = 1, print = false})
      local g = hk.graph(chain)
      local rg = hk.bench(function() g:launch() end, {bytes = moved, reps = 5, warmup = 1, print = false})
      line = line .. ("  %d stages c%.2f g%.2f"):format(st, rc.gbps / copy.gbps, rg.gbps / copy.gbps)
    end
  end
  print(line)
end
