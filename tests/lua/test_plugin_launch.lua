-- The launch model of plugin ABI 1.4 from Lua (tests/plugins/launch on
-- HIPKIT_PLUGIN_PATH): per-row kernels through hk.ops, kernel objects of
-- plugin kernels, the host op with explicit launches, the two-output
-- dtype-picking form and op errors. References in double, random data,
-- outputs poisoned with NaN, odd sizes.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed)

local fams = {}
for _, p in ipairs(hk.plugins()) do fams[p.name] = p end
if not fams.stats then
    t.ok(false, "the stats test plugin loads (HIPKIT_PLUGIN_PATH=" .. tostring(os.getenv("HIPKIT_PLUGIN_PATH")) .. ")")
    t.done()
    return
end
local geom = {}
for _, k in ipairs(fams.stats.kernels) do geom[k.name] = k.geometry end
t.ok(geom.row_stats_f32 == "row_block" and geom.row_max_f32 == "row_warp" and geom.row_apply_f32 == "explicit",
    "hk.plugins() names the row geometries")

-- per-row mean and variance in double
local function row_ref(x, rows, cols)
    local mean, var = {}, {}
    for r = 0, rows - 1 do
        local s, q = 0, 0
        for c = 1, cols do s = s + x[r * cols + c] end
        local m = s / cols
        for c = 1, cols do q = q + (x[r * cols + c] - m) ^ 2 end
        mean[r + 1], var[r + 1] = m, q / cols
    end
    return mean, var
end

for _, dims in ipairs({{37, 1000}, {7, 3}, {1, 129}}) do
    local rows, cols = dims[1], dims[2]
    local x = hk.alloc(rows * cols, "f32"):rand{lo = -2, hi = 2}
    local m = hk.alloc(rows, "f32"):fill(0 / 0)
    local v = hk.alloc(rows, "f32"):fill(0 / 0)
    hk.ops.stats.row_stats_f32(x, m, v, rows, cols)
    local rm, rv = row_ref(x, rows, cols)
    t.ok(m:allclose(function(i) return rm[i] end, 1e-5, 1e-6) and v:allclose(function(i) return rv[i] end, 1e-4, 1e-6),
        ("row_stats_f32 %dx%d: a block per row, per-row outputs of length rows"):format(rows, cols))
    local mx = hk.alloc(rows, "f32"):fill(0 / 0)
    hk.ops.stats.row_max_f32(x, mx, rows, cols)
    t.ok(mx:allclose(function(i)
        local best = -math.huge
        for c = 1, cols do best = math.max(best, x[(i - 1) * cols + c]) end
        return best
    end, 0, 0), ("row_max_f32 %dx%d: a warp per row"):format(rows, cols))
end

-- the host op: row_stats then row_apply over an explicit 2-D grid
do
    local rows, cols = 13, 71
    local x = hk.alloc(rows * cols, "f32"):rand{lo = -3, hi = 3}
    local m, v = hk.alloc(rows, "f32"), hk.alloc(rows, "f32")
    local y = hk.alloc(rows * cols, "f32"):fill(0 / 0)
    hk.ops.stats.standardize(x, m, v, y, rows, cols)
    local rm, rv = row_ref(x, rows, cols)
    t.ok(y:allclose(function(i)
        local r = (i - 1) // cols + 1
        return (x[i] - rm[r]) / math.sqrt(rv[r] + 1e-5)
    end, 1e-4, 1e-5), "standardize: a host op chaining two explicit-configuration launches")
    local ok, err = pcall(hk.ops.stats.standardize, x, m, v, y, rows)
    err = tostring(err)
    local _, count = err:gsub("stats%.standardize", "")
    t.ok(not ok and err:find("stats.standardize(x, mean, var, y, rows, cols): expects", 1, true) and count == 1,
        "an op's error carries its usage once: " .. err)
    ok, err = pcall(hk.ops.stats.standardize, x, hk.alloc(rows - 1, "f32"), v, y, rows, cols)
    err = tostring(err)
    _, count = err:gsub("stats%.standardize", "")
    t.ok(not ok and err:find("operand mean", 1, true) and err:find("its extent rows is " .. rows, 1, true) and count == 1,
        "a per-row operand shorter than rows is named with its extent: " .. err)
end

-- kernel objects of plugin kernels
do
    local k = hk.ops.stats.kernels.row_stats_f32
    local info = k:info()
    t.ok(tostring(k):find("hk.kernel row_stats_f32(const float *x", 1, true) and info.name == "row_stats_f32" and
        #info.params == 5 and info.params[2].dtype == "f32" and hk.ops.stats.kernels.row_stats_f32 == k,
        "hk.ops.stats.kernels.row_stats_f32 is a kernel object with k:info(), the same each time")
    local okd, text = pcall(k.disasm, k)
    t.ok(okd and #text > 0 or tostring(text):find("no disassembler", 1, true), "k:disasm() on a plugin kernel")
    local rows, cols = 5, 77
    local x = hk.alloc(rows * cols, "f32"):rand{lo = -1, hi = 1}
    local m = hk.alloc(rows, "f32"):fill(0 / 0)
    local v = hk.alloc(rows, "f32"):fill(0 / 0)
    k{grid = rows, block = 32, shared = 32 * 4}(x, m, v, rows, cols)
    local rm = row_ref(x, rows, cols)
    t.ok(m:allclose(function(i) return rm[i] end, 1e-5, 1e-6), "k{grid=, block=, shared=}(...) launches a plugin kernel")
    local a = hk.ops.affine.kernels.affine_f32
    local n = 1001
    local ax = hk.alloc(n, "f32"):rand{lo = -1, hi = 1}
    local ay = hk.alloc(n, "f32"):fill(0 / 0)
    a:launch(4, 256, ax, ay, 2, 0.5, n)
    t.ok(ay:allclose(function(i) return 2 * ax[i] + 0.5 end, 1e-6, 1e-6) and type(hk.ops.affine.affine_f32) == "function",
        "a shipped family's kernel object launches with k:launch; hk.ops.affine.affine_f32(...) is still a function")
    local okn, errn = pcall(function() return hk.ops.stats.kernels.nope end)
    t.ok(not okn and tostring(errn):find("row_stats_f32", 1, true), "an unknown kernel object lists the family's kernels")
end

-- two outputs picked by dtype: outputs first, then inputs
for _, dt in ipairs({"f32", "f64"}) do
    local n = 1003
    local x = hk.alloc(n, dt):rand{lo = -4, hi = 4}
    local s = hk.alloc(n, dt):fill(0 / 0)
    local c = hk.alloc(n, dt):fill(0 / 0)
    local s2, c2 = hk.ops.stats.sincos(s, c, x)
    local tol = dt == "f32" and 1e-5 or 1e-12
    t.ok(s2 == s and c2 == c and s:allclose(function(i) return math.sin(x[i]) end, tol, tol) and
        c:allclose(function(i) return math.cos(x[i]) end, tol, tol),
        "hk.ops.stats.sincos(s, c, x) picks sincos_" .. dt .. " and returns both outputs")
end
local ok, err = pcall(hk.ops.stats.sincos, hk.alloc(8, "f32"), hk.alloc(8, "f64"), hk.alloc(8, "f32"))
t.ok(not ok and tostring(err) == "stats.sincos: no kernel writes f32 from f64, f32 with 0 more value(s); it has: sincos_f32, sincos_f64",
    "mixed dtypes fit no two-output kernel: " .. tostring(err))
ok, err = pcall(hk.ops.stats.sincos, hk.alloc(8, "f32"), hk.alloc(4, "f32"), hk.alloc(8, "f32"))
t.ok(not ok and tostring(err):find("output 2 has 4 elements", 1, true), "a short second output is named: " .. tostring(err))

-- The host table's device queries: warp size and compute units as the
-- device reports them (an op sizes grid-stride grids by the latter)
do
    local shape = hk.alloc(2, "u32"):fill(0)
    hk.ops.stats.device_shape(shape)
    local d = hk.device()
    t.ok(shape[1] == d.warp_size and shape[2] == d.compute_units and shape[2] >= 1,
         ("host->warp_size and host->compute_units give the device's %d and %d (got %d, %d)"):format(
             d.warp_size, d.compute_units, shape[1], shape[2]))
end

-- ABI 1.5: scratch memory (zeroed at each request, pooled) and a count read back
do
    local n = 5003
    local x = hk.alloc(n, "f32"):rand{lo = -1, hi = 1}
    t.ok(pcall(hk.ops.stats.check_finite, x), "check_finite passes a finite buffer (the scratch count starts at 0)")
    local bad = {}
    for k = 1, 37 do bad[(k * 7919) % n] = true end
    local nbad = 0
    for i in pairs(bad) do x[i] = (nbad % 3 == 0) and 0 / 0 or ((nbad % 3 == 1) and 1 / 0 or -1 / 0); nbad = nbad + 1 end
    local msgs = {}
    for k = 1, 3 do
        local okc, errc = pcall(hk.ops.stats.check_finite, x)
        msgs[k] = not okc and tostring(errc) or "passed"
    end
    local want = "stats.check_finite(x): x holds " .. nbad .. " NaN or infinite values"
    t.ok(msgs[1] == want and msgs[2] == want and msgs[3] == want,
        "the count is read back after the launch, and the pooled scratch is zeroed again for each call: " .. msgs[1])
    local y = hk.alloc(4 * n, "f32"):rand()
    t.ok(pcall(hk.ops.stats.check_finite, y), "a larger request after smaller ones gets zeroed memory too")
end
t.done()
