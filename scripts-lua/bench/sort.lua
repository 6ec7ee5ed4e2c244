-- The sort family on random data, by device events (median of 20), next to
-- a device-to-device copy of the same matrix (the bandwidth floor):
--   argsort of each row of a rows x cols f32 matrix (default 16384 x 1024;
--   torch.argsort(dim=-1)), ascending and descending, u32 and i64 indices;
--   top-16 of each row (torch.topk);
--   the radix sort of 2^24 and 2^28 u32 and f32 keys with their indices
--   (torch.sort), and of the keys alone. The radix sort works in place, so
--   each run first copies the random keys in; that copy is timed alone and
--   subtracted. (Its scratch memory comes from the context's pool, zeroed
--   at each call: that memset is in the time.)
-- GB/s counts what each op must move: its input once and its outputs.
-- Usage: hipkit scripts-lua/bench/sort.lua [rows cols [log2 sizes...]]
--   (tools/bench_torch_sort.py takes the same arguments)
local rows = tonumber(arg and arg[1]) or 16384
local cols = tonumber(arg and arg[2]) or 1024
local sizes = {}
for i = 3, #(arg or {}) do sizes[#sizes + 1] = tonumber(arg[i]) end
if #sizes == 0 then sizes = {24, 28} end
local S = hk.ops.sort
local n = rows * cols

local function bench(f, bytes)
    f() -- first use: load or compile
    hk.sync()
    return hk.bench(f, {bytes = bytes, reps = 20, warmup = 3, print = false})
end

local function line(name, r, copy)
    print(("  %-28s %9.3f ms %8.0f GB/s  %.2fx copy"):format(name, r.median, r.gbps, r.gbps / copy))
end

print(("sort on %s"):format(hk.device().name or "?"))
local x = hk.alloc(n, "f32"):rand{seed = 1, lo = -4, hi = 4}
local y = hk.alloc(n, "f32")
local idx32, idx64 = hk.alloc(n, "u32"), hk.alloc(n, "i64")
local k = 16
local tv, ti = hk.alloc(rows * k, "f32"), hk.alloc(rows * k, "i64")
local copy = bench(function() y:copy(x) end, 8 * n)
print(("rows %d x %d f32"):format(rows, cols))
line("copy", copy, copy.gbps)
line("argsort -> u32", bench(function() S.argsort(idx32, x, cols) end, 8 * n), copy.gbps)
line("argsort descending -> u32", bench(function() S.argsort(idx32, x, cols, true) end, 8 * n), copy.gbps)
line("argsort -> i64", bench(function() S.argsort(idx64, x, cols) end, 12 * n), copy.gbps)
line(("topk k=%d -> f32, i64"):format(k), bench(function() S.topk(tv, ti, x, cols, k) end,
    4 * n + 12 * rows * k), copy.gbps)
-- a check: row 1 and the last row in order
S.argsort(idx32, x, cols)
hk.sync()
local ok = true
for _, r in ipairs({0, rows - 1}) do
    local v, o = x:totable(r * cols + 1, (r + 1) * cols), idx32:totable(r * cols + 1, (r + 1) * cols)
    for c = 2, cols do ok = ok and v[o[c - 1] + 1] <= v[o[c] + 1] end
end
print(ok and "  rows sorted" or "  WRONG RESULT")
x, y, idx32, idx64 = nil, nil, nil, nil
collectgarbage()

for _, lg in ipairs(sizes) do
    local m = 1 << lg
    for _, dt in ipairs({"u32", "f32"}) do
        local src = dt == "u32" and hk.alloc(m, dt):rand{seed = 2, lo = 0, hi = 4294967295}
            or hk.alloc(m, dt):rand{seed = 2, lo = -1e6, hi = 1e6}
        local keys, id = hk.alloc(m, dt), hk.alloc(m, "u32")
        print(("2^%d %s keys"):format(lg, dt))
        local c = bench(function() keys:copy(src) end, 8 * m)
        line("copy in", c, c.gbps)
        for _, with_idx in ipairs({true, false}) do
            local r = bench(function()
                keys:copy(src)
                if with_idx then S.sort(keys, id) else S.sort(keys) end
            end, 1)
            local ms = r.median - c.median
            local bytes = with_idx and 12 * m or 8 * m
            print(("  %-28s %9.3f ms %8.0f GB/s  %.2fx copy  (%.2f Gkeys/s)"):format(
                with_idx and "sort keys + indices" or "sort keys", ms, bytes / ms / 1e6,
                bytes / ms / 1e6 / c.gbps, m / ms / 1e6))
        end
        -- a check on the first 10^6 keys and the last
        S.sort(keys:copy(src), id)
        hk.sync()
        local head = keys:totable(1, math.min(m, 1000000))
        local good = true
        for i = 2, #head do good = good and head[i - 1] <= head[i] end
        good = good and keys[m] >= head[#head] and src[id[1] + 1] == keys[1]
        print(good and "  keys sorted" or "  WRONG RESULT")
        src, keys, id = nil, nil, nil
        collectgarbage()
    end
end
