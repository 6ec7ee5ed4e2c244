-- hk.autotune, hk.bench over several functions and hk.peaks. The kernel
-- counts its own launches (thread 0 adds 1 to a counter), so "no timing
-- runs" is seen on the device, not taken from autotune's word. A define
-- makes half the configurations really slower (REPEAT times the work);
-- hk.clock around launches is the independent reference for which is
-- fastest. Disk-cache behaviour runs in child sessions (hipkit started
-- again, as a user's next session) with a fresh cache folder.
-- HIPKIT_TEST_BACKEND picks a GPU backend (tests/gpu/run.sh).
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local backend = os.getenv("HIPKIT_TEST_BACKEND") or "host"
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
local gpu = backend ~= "host"
local exe = arg[-1]

local src = [[
#include <hip/hip_runtime.h>
#ifndef REPEAT
#define REPEAT 1
#endif
extern "C" __global__ void work(float *y, const float *x, unsigned *launches, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        atomicAdd(launches, 1u);
    if (i < n) {
        float v = y[i];
        for (int r = 0; r < REPEAT; r++)
            v = v * 0.5f + x[i];
        y[i] = v;
    }
}
]]
local n = gpu and (1 << 20) or (valgrind and 512 or 4096)
local slow = gpu and 4000 or (valgrind and 3000 or 1000)
local warmup, reps = 1, 3
local m = hk.compile(src, {name = "tune-work"})
local k = m.work
local x = hk.alloc(n, "f32"):fill(1)
local y = hk.alloc(n, "f32"):fill(0)
local launches = hk.alloc(1, "u32"):fill(0)
local function count() return launches[1] end

local function space(extra)
    local s = {block = {64, 128, 4096}, defines = {REPEAT = {1, slow}},
               grid = function(cfg) return (n + cfg.block - 1) // cfg.block end,
               warmup = warmup, reps = reps, cache = false}
    for key, v in pairs(extra or {}) do s[key] = v end
    return s
end

-- ------------------------------------------------------- in one session
local best, res = hk.autotune(k, space(), y, x, launches, n)
t.is(#res, 6, "3 blocks x 2 values of REPEAT: 6 configurations")
t.is(res.timed, 4, "the 4 that launch were timed")
t.is(count(), 4 * (1 + warmup + reps), "each timed configuration ran 1 trial + warmup + reps launches")
local failed = 0
for _, e in ipairs(res) do
    if e.block == 4096 then
        failed = failed + 1
        t.ok(e.median == nil and type(e.error) == "string" and e.error:find("block", 1, true) ~= nil,
             "block 4096 is skipped with the reason: " .. tostring(e.error))
    end
end
t.is(failed, 2, "both configurations over the thread limit are in the table")
t.is(best.defines.REPEAT, 1, "the winner is a fast configuration")
t.is(best.REPEAT, 1, "defines are also fields of the winner")
local worst_fast, best_slow = 0, math.huge
for _, e in ipairs(res) do
    if e.median and e.defines.REPEAT == 1 then worst_fast = math.max(worst_fast, e.median) end
    if e.median and e.defines.REPEAT == slow then best_slow = math.min(best_slow, e.median) end
end
t.ok(worst_fast < best_slow, string.format("every fast configuration timed faster (%.4f ms) than every slow one (%.4f ms)",
                                           worst_fast, best_slow))
-- independent reference: the wall clock around launches of each variant
local function clock_ms(kern, block)
    local g = (n + block - 1) // block
    hk.sync()
    local t0 = hk.clock()
    for _ = 1, 3 do kern:launch(g, block, y, x, launches, n) end
    hk.sync()
    return (hk.clock() - t0) * 1000 / 3
end
local k_slow = hk.compile(src, {name = "tune-work", defines = {"REPEAT=" .. slow}}).work
t.ok(clock_ms(best.kernel, best.block) < clock_ms(k_slow, best.block),
     "hk.clock agrees: the winner's variant is faster than the slow one")
t.ok(best.grid == (n + best.block - 1) // best.block, "the winner's grid is the grid function's for its block")
t.ok(tostring(res):find("autotune work: 6 configurations", 1, true) ~= nil and tostring(res):find(" *", 1, true) ~= nil,
     "the results print as a table with the winner marked")
t.diag(tostring(res))

local before = count()
y:fill(0)
best(y, x, launches, n)
hk.sync()
t.is(count(), before + 1, "the winner launches with its configuration when called")
t.is(y[n], 1.0, "and computes what the kernel computes (0 * 0.5 + 1)")

before = count()
local best2, res2 = hk.autotune(k, space(), y, x, launches, n)
t.ok(res2.cached and count() == before and best2.block == best.block and best2.REPEAT == 1,
     "the same autotune again in the session: the winner, no launch")
before = count()
local _, res3 = hk.autotune(k, space{retune = true}, y, x, launches, n)
t.ok(not res3.cached and count() > before, "retune = true times again")
local _, res4 = hk.autotune(k, space(), y, x, launches, n // 2)
t.ok(not res4.cached, "another argument shape (n) is another key: timed")
t.ok(res4.key ~= res.key and res.key:find("arg4=int " .. n, 1, true) and res.key:find("arg1=buffer f32 " .. n, 1, true),
     "the key names buffer dtypes and lengths and integer arguments")

-- failures: too much shared memory, every configuration failing, misuse
local dev = hk.device()
local _, rs = hk.autotune(k, {configs = {{block = 64}, {block = 64, shared = dev.max_shared_per_block + 1024}},
                              grid = n // 64 + 1, cache = false, warmup = 0, reps = 1}, y, x, launches, n)
t.ok(rs[1].median and not rs[2].median and tostring(rs[2].error):find("shared", 1, true),
     "a configuration asking for too much shared memory is skipped with the reason: " .. tostring(rs[2].error))
local ok, err = pcall(hk.autotune, k, {block = {4096, 8192}, grid = 1, cache = false}, y, x, launches, n)
t.ok(not ok and tostring(err):find("no configuration ran", 1, true) and tostring(err):find("8192", 1, true),
     "no configuration that launches: an error listing the reasons")
ok, err = pcall(hk.autotune, k, {block = {64}, grid = 1, blok = 3}, y, x, launches, n)
t.ok(not ok and tostring(err):find("unknown field 'blok'", 1, true), "an unknown field of the space is refused")
ok, err = pcall(hk.autotune, k, {block = {64}}, y, x, launches, n)
t.ok(not ok and tostring(err):find("grid", 1, true), "a space without grid says so")
local _, rc = hk.autotune(k, space{defines = {REPEAT = {1, "nonsense("}}}, y, x, launches, n)
local compile_failed = false
for _, e in ipairs(rc) do
    if e.defines.REPEAT == "nonsense(" then compile_failed = compile_failed or tostring(e.error):find("^compile") ~= nil end
end
t.ok(compile_failed, "a define that does not compile is a skipped configuration")

-- ---------------------------------------------------- the disk cache
local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -m 700 " .. sh_quote(dir))
local child = dir .. "/child.lua"
local f = assert(io.open(child, "w"))
f:write(string.format([[
local n, slow = %d, %d
local k = hk.compile(%q, {name = "tune-work"}).work
local x, y = hk.alloc(n, "f32"):fill(1), hk.alloc(n, "f32")
local launches = hk.alloc(1, "u32"):fill(0)
local best, res = hk.autotune(k, {block = {64, 128, 4096}, defines = {REPEAT = {1, slow}},
    grid = function(cfg) return (n + cfg.block - 1) // cfg.block end, warmup = 1, reps = 3}, y, x, launches, n)
local p = hk.peaks()
print(string.format("cached=%%s launches=%%d block=%%d repeat=%%s peaks_cached=%%s",
                    tostring(res.cached), launches[1], best.block, tostring(best.REPEAT), tostring(p.cached)))
]], valgrind and 4096 or n, valgrind and 1000 or slow, src)) -- valgrind does not watch the child
f:close()
local function run_child()
    local p = io.popen(string.format("HIPKIT_CACHE_DIR=%s %s --backend %s %s 2>&1", sh_quote(dir .. "/cache"),
                                     sh_quote(exe), backend, sh_quote(child)))
    local out = p:read("a")
    p:close()
    return (out:gsub("\n+$", ""):gsub("\n", " | "))
end
local function record_file(kind)
    local p = io.popen("ls " .. sh_quote(dir .. "/cache/records") .. " 2>/dev/null")
    local names = p:read("a")
    p:close()
    local name = names:match("(" .. kind .. "%-[^\n]*%.txt)")
    return name and (dir .. "/cache/records/" .. name)
end

if exe and exe:find("hipkit", 1, true) and os.getenv("HK_TEST_NO_CHILD") ~= "1" then
    local out = run_child()
    t.ok(out:find("cached=false launches=20 ", 1, true) and out:find("repeat=1 peaks_cached=false", 1, true),
         "a first session times every configuration and measures the peaks: " .. out)
    local block = out:match("block=(%d+)")
    out = run_child()
    t.ok(out:find("cached=true launches=0 block=" .. tostring(block) .. " repeat=1 peaks_cached=true", 1, true),
         "a second session takes the winner and the peaks from the cache, with no launch: " .. out)
    local path = record_file("autotune")
    t.ok(path ~= nil, "the winner is a record in the cache's records/ folder")
    if path then
        local fh = io.open(path, "r+b")
        local size = fh:seek("end")
        fh:seek("set", size - 3)
        fh:write("XX")
        fh:close()
        out = run_child()
        t.ok(out:find("checksum mismatch", 1, true) and out:find("cached=false launches=20 ", 1, true),
             "a corrupt record is ignored with a warning, and the configurations are timed again: " .. out)
        -- a record of another key (the peaks') in the autotune record's place
        local peaks_path = record_file("peaks")
        os.execute("cp " .. sh_quote(peaks_path) .. " " .. sh_quote(path))
        out = run_child()
        t.ok(out:find("key mismatch", 1, true) and out:find("cached=false launches=20 ", 1, true),
             "a foreign record is ignored with a warning: " .. out)
        out = run_child()
        t.ok(out:find("cached=true launches=0 ", 1, true), "the record written again is used: " .. out)
    end
else
    for _ = 1, 6 do t.skip("disk cache in a second session", "the hipkit program is not arg[-1]") end
end
os.execute("rm -rf " .. sh_quote(dir))

-- -------------------------------------------------------------- peaks
local p = hk.peaks()
t.ok(p.copy_gbps > 0 and p.tflops > 0 and type(p.matmul) == "string", "hk.peaks: " .. tostring(p))
t.ok(hk.peaks().cached, "hk.peaks again: cached")
local pr = hk.peaks{refresh = true}
t.ok(not pr.cached and pr.copy_gbps > 0, "hk.peaks{refresh = true} measures again")
-- independent reference: the wall clock around large copies. Both sides
-- take their best of several tries: other work on the machine only ever
-- slows a try down, so the best ones are comparable.
local peak_best = pr.copy_gbps
for _ = 1, 2 do peak_best = math.max(peak_best, hk.peaks{refresh = true}.copy_gbps) end
local big = gpu and (64 << 20) or (8 << 20)
local s1, s2 = hk.alloc(big, "f32"):fill(1), hk.alloc(big, "f32")
local clock_gbps = 0
for _ = 1, 5 do
    s2:copy(s1)
    hk.sync()
    local t0 = hk.clock()
    for _ = 1, 2 do s2:copy(s1) end
    hk.sync()
    clock_gbps = math.max(clock_gbps, 2 * 2 * 4 * big / (hk.clock() - t0) / 1e9)
end
s1:free(); s2:free()
t.ok(peak_best < 3 * clock_gbps and peak_best > clock_gbps / 3,
     string.format("the copy peak (best %.1f GB/s) is within 3x of the wall clock's (best %.1f GB/s)", peak_best,
                   clock_gbps))

-- ------------------------------------------------ hk.bench comparison
local function runs(kern, block)
    return function() kern:launch((n + block - 1) // block, block, y, x, launches, n) end
end
local bytes = 3 * 4 * n
local cmp = hk.bench({{"slow", runs(k_slow, 64)}, {"fast", runs(best.kernel, 64)}},
                     {bytes = bytes, flops = 2 * n, reps = 3, warmup = 1, print = false})
t.is(#cmp, 2, "hk.bench{...}: one result per function")
t.ok(cmp[1].label == "slow" and cmp[2].label == "fast", "a list keeps its order and labels")
t.ok(cmp[1].ratio == 1 and cmp[2].ratio < 1 and cmp.fastest == 2, "ratios to the first; the fast one is the fastest")
t.ok(math.abs(cmp[2].gbps - bytes / (cmp[2].median * 1e-3) / 1e9) < 1e-9 * cmp[2].gbps,
     "GB/s is bytes over the median")
t.ok(math.abs(cmp[2].copy_fraction - cmp[2].gbps / cmp.peaks.copy_gbps) < 1e-12 and
     math.abs(cmp[2].matmul_fraction - cmp[2].tflops / cmp.peaks.tflops) < 1e-12,
     "fractions of the device's peaks")
local text = tostring(cmp)
t.ok(text:find("slow", 1, true) and text:find("fast ", 1, true) and text:find("fastest", 1, true) and
     text:find("GB/s", 1, true) and text:find("of copy", 1, true) and text:find("GFLOP/s", 1, true) and
     text:find("peaks: copy", 1, true), "the comparison prints as a table")
t.diag(text)
local row2 = text:match("\n(fast [^\n]*)")
t.ok(row2 and row2:find(string.format("%.4f", cmp[2].median), 1, true) and
     row2:find(string.format(cmp[2].ratio >= 0.01 and "%.2fx" or "%.1ex", cmp[2].ratio), 1, true) and
     row2:find(string.format(" %.0f%%", 100 * cmp[2].copy_fraction), 1, true),
     "a row shows the median, the ratio and the fraction of the copy peak: " .. tostring(row2))
local named = hk.bench({zeta = runs(best.kernel, 64), alpha = runs(best.kernel, 128)}, {reps = 2, print = false})
t.ok(named[1].label == "alpha" and named[2].label == "zeta" and named.peaks == nil,
     "a map is taken by name; no bytes or flops: no peaks measured")
t.ok(not tostring(named):find("GB/s", 1, true), "and no rate columns")
ok, err = pcall(hk.bench, {a = 3}, {print = false})
t.ok(not ok and tostring(err):find("entry 'a' is a number", 1, true), "a non-function entry is refused")
local single = hk.bench(runs(best.kernel, 64), {reps = 2, print = false, label = "one"})
t.ok(single.label == "one" and single.reps == 2, "hk.bench(f) still times one function")

t.done()
