-- The indexing family on issue 13's shapes (arg[1] scales every row count
-- down for a quick run, e.g. 16 on the CPU backend): index_select of 65536
-- random rows of 256 f32 from a 65536 x 256 matrix, gather along the last
-- dim of an 8192 x 8192 f32 matrix by random i64 ids, index_add of 65536
-- rows of 256 f32 into a 4096 x 256 matrix. GB/s by device events (median
-- of 20) next to a device-to-device copy in the same run. Each op is timed
-- twice: the op (hk.ops.indexing.OP, which reads the kernel's out-of-range
-- flag back after the launch, so its time includes that copy and wait) and
-- its kernel alone, launched with the op's GPU geometry. Bytes counted are what
-- each op must move: ids once, its output written once, every source
-- element read once (index_add also reads its destination).
local scale = tonumber(arg and arg[1]) or 1
local I = hk.ops.indexing
local rows, cols = 65536 // scale, 256
local g = 8192 // scale
local into = 4096 // scale

local function ids(n, hi, seed) return hk.alloc(n, "i64"):rand{seed = seed, lo = 0, hi = hi - 1} end

local sel_src = hk.alloc(rows * cols, "f32"):rand{seed = 1, lo = -1, hi = 1}
local sel_out = hk.alloc(rows * cols, "f32")
local sel_ids = ids(rows, rows, 2)
local gat_src = hk.alloc(g * g, "f32"):rand{seed = 3, lo = -1, hi = 1}
local gat_out = hk.alloc(g * g, "f32")
local gat_ids = ids(g * g, g, 4)
local add_dst = hk.alloc(into * cols, "f32"):fill(0)
local add_ids = ids(rows, into, 5)
local flag = hk.alloc(1, "u64"):fill(0)
local K = I.kernels

local cases = {
    {"copy", function() gat_out:copy(gat_src) end, 8 * g * g},
    {"index_select", function() I.index_select(sel_out, sel_src, sel_ids, rows, cols) end,
     8 * rows * cols + 8 * rows},
    {"  kernel", function()
        K.index_select_i64_f32{grid = (rows + 3) // 4, block = {64, 4}}(sel_ids, sel_src, sel_out, flag, 1,
            rows, rows, cols)
    end, 8 * rows * cols + 8 * rows},
    {"gather", function() I.gather(gat_out, gat_src, gat_ids, g) end, 16 * g * g},
    {"  kernel", function()
        K.gather_i64_f32{grid = (g * g + 1023) // 1024, block = 256}(gat_ids, gat_src, gat_out, flag, g, g, g, 1)
    end, 16 * g * g},
    {"index_add", function() I.index_add(add_dst, sel_src, add_ids, into, cols) end,
     4 * rows * cols + 8 * rows + 8 * into * cols},
    {"  kernel", function()
        K.index_add_i64_f32{grid = rows, block = {256, 1}}(add_ids, sel_src, add_dst, flag, 1, into, rows, cols)
    end, 4 * rows * cols + 8 * rows + 8 * into * cols},
}
for _, c in ipairs(cases) do c[2]() end -- first use: load or compile
hk.sync()
local copy
print(("indexing, f32 data, i64 ids (%s)"):format(hk.device().name or "?"))
for _, c in ipairs(cases) do
    local r = hk.bench(c[2], {bytes = c[3], reps = 20, warmup = 3, print = false})
    copy = copy or r.gbps
    print(("  %-14s %8.3f ms %8.0f GB/s  %.2fx copy"):format(c[1], r.median, r.gbps, r.gbps / copy))
end

-- the results are right: row 1 of the selection, one gathered element,
-- and no bare kernel launch raised the out-of-range flag
I.index_select(sel_out, sel_src, sel_ids, rows, cols)
I.gather(gat_out, gat_src, gat_ids, g)
hk.sync()
local r1, ok = sel_ids[1], true
for c = 1, cols do ok = ok and sel_out[c] == sel_src[r1 * cols + c] end
ok = ok and gat_out[g + 2] == gat_src[g + gat_ids[g + 2] + 1] and flag[1] == 0
print(ok and "  results checked" or "  WRONG RESULT")
if not ok then os.exit(1) end
