-- What the quantized benches share (dofile it: it returns a table):
--   copy()                  a device-to-device copy of 256 MiB timed by
--                           hk.bench, the bandwidth the matvecs are held to
--   copies(fmt, n)          enough rows x cols (n values) matrices of fmt,
--                           random bytes, that together they exceed 4x a
--                           50 MB L2: a chain over them reads memory, not
--                           the cache; returns the list and one's bytes
local M = {}

function M.copy()
    local big = 256 << 20
    local src, dst = hk.alloc(big // 4, "f32"):rand{seed = 2}, hk.alloc(big // 4, "f32")
    local r = hk.bench(function() dst:copy(src) end, {bytes = 2 * big, reps = 20, warmup = 3, print = false})
    print(("  %-22s %8.3f ms %8.0f GB/s"):format("copy 256 MiB", r.median, r.gbps))
    return r
end

function M.copies(fmt, n)
    local w1 = hk.alloc(n, fmt)
    local bytes = #w1:view("u8")
    local count = math.min(64, math.max(2, math.ceil(200e6 / bytes)))
    local ws = {w1}
    for i = 2, count do ws[i] = hk.alloc(n, fmt) end
    for i, w in ipairs(ws) do w:view("u8"):rand{seed = i, lo = 0, hi = 255} end
    return ws, bytes
end

return M
