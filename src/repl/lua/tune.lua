-- hk.autotune, hk.bench over several functions, and hk.peaks: the parts
-- of the hk module written in Lua (embedded by tools/embed.py, run once by
-- tune.c when the module opens). C gives it the timing loop (hk.bench of
-- one function, bench.c) and the helpers in `C`: record_get/record_put
-- (the disk cache's records, hk_cache_record_*), source_key (a hash of a
-- text, hk_plugin_source_key) and recipe (how a kernel's module was made).
local hk, C = ...
local bench_one = hk.bench
local fmt = string.format

-- --------------------------------------------------------------- helpers

local function device_identity()
    local d = hk.device()
    local toolchain = ""
    for _, b in ipairs(hk.backends()) do
        if b.name == d.backend then toolchain = b.toolchain or "" end
    end
    return fmt("backend=%s\ndevice=%s\ntarget=%s\nmemory=%d\ncompute_units=%d\ntoolchain=%s",
               d.backend, d.name, d.target, d.memory or 0, d.compute_units or 0, toolchain), d
end

-- Sorted keys, so that texts built from tables do not depend on the order
-- pairs() happens to take.
local function sorted_keys(t)
    local ks = {}
    for k in pairs(t) do ks[#ks + 1] = k end
    table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
    return ks
end

local function dim_text(v)
    if type(v) == "table" then
        return fmt("%d,%d,%d", v.x or v[1] or 1, v.y or v[2] or 1, v.z or v[3] or 1)
    end
    return fmt("%d,1,1", v)
end

local function threads(v)
    if type(v) == "table" then return (v.x or v[1] or 1) * (v.y or v[2] or 1) * (v.z or v[3] or 1) end
    return v
end

-- One line per argument: a buffer by dtype and length, an integer (or a
-- boolean) by value since it usually sets a size, a non-integral number
-- only by its kind (alpha = 0.5 and 0.25 tune alike), a vector by lanes.
-- "1.00x", "1584x", "5.8e-04x": ratios far from 1 keep their digits.
local function ratio_text(r)
    if r >= 100 then return fmt("%.0fx", r) end
    if r >= 0.01 then return fmt("%.2fx", r) end
    return fmt("%.1ex", r)
end

-- An error's text without the "tune.lua:N:" that Lua puts before errors
-- raised by C functions called from here: the message is the launch's own.
local function reason(err)
    return (tostring(err):gsub("^tune%.lua:%d+: ", ""))
end

local function arg_shape(v)
    local ty = type(v)
    if ty == "number" then
        if math.type(v) == "integer" or v == math.floor(v) then return fmt("int %d", math.tointeger(v) or v) end
        return "float"
    elseif ty == "boolean" then
        return "bool " .. tostring(v)
    elseif ty == "table" then
        local parts = {}
        for i, x in ipairs(v) do parts[i] = arg_shape(x) end
        return "vector {" .. table.concat(parts, ", ") .. "}"
    elseif ty == "userdata" and v == hk.null then
        return "null"
    elseif ty == "userdata" and type(v.dtype) == "function" then
        return fmt("buffer %s %d", v:dtype(), #v)
    end
    return ty
end

-- --------------------------------------------------------------- autotune

local launch_fields = {block = true, shared = true, grid = true, defines = true}
local option_fields = {warmup = true, reps = true, key = true, cache = true, retune = true,
                       print = true, configs = true}

-- The configurations of a space: explicit configs = {...}, else every
-- combination of block x shared x each define's values.
local function expand(space)
    if space.configs ~= nil then
        local out = {}
        for i, c in ipairs(space.configs) do
            if type(c) ~= "table" or c.block == nil then
                error(fmt("hk.autotune: configs[%d] needs block=", i), 3)
            end
            out[i] = {block = c.block, shared = c.shared or 0, defines = c.defines or {}}
        end
        return out
    end
    -- a field is a list of candidates; a single value is a list of one
    -- (a 2-D block is therefore block = {{16, 16}, {32, 8}})
    local function list(v, default)
        if v == nil then return {default} end
        if type(v) == "table" then return v end
        return {v}
    end
    if space.block == nil then error("hk.autotune: the space needs block = {sizes...} (or configs = {...})", 3) end
    local blocks = list(space.block)
    local combos = {}
    for _, b in ipairs(blocks) do
        for _, s in ipairs(list(space.shared, 0)) do combos[#combos + 1] = {block = b, shared = s, defines = {}} end
    end
    for _, name in ipairs(sorted_keys(space.defines or {})) do
        local vals, grown = list(space.defines[name]), {}
        for _, c in ipairs(combos) do
            for _, v in ipairs(vals) do
                local d = {}
                for k, x in pairs(c.defines) do d[k] = x end
                d[name] = v
                grown[#grown + 1] = {block = c.block, shared = c.shared, defines = d}
            end
        end
        combos = grown
    end
    return combos
end

local function config_text(c)
    local parts = {"block " .. dim_text(c.block), "shared " .. tostring(c.shared)}
    for _, k in ipairs(sorted_keys(c.defines)) do parts[#parts + 1] = fmt("define %s=%s", k, tostring(c.defines[k])) end
    return table.concat(parts, "; ")
end

local winner_mt = {}
winner_mt.__name = "hk.autotune_winner"
winner_mt.__call = function(w, ...)
    return w.kernel{grid = w.grid, block = w.block, shared = w.shared}(...)
end
winner_mt.__tostring = function(w)
    local m = w.median and fmt(", %.4f ms", w.median) or ""
    return fmt("autotune winner: %s; grid %s%s%s", config_text(w), dim_text(w.grid), m,
               w.cached and " (from the cache)" or "")
end

-- The kernel for a configuration's defines: k itself without defines, else
-- k's module source compiled again with them (the module caches apply).
local function kernel_for(k, defines, variants)
    if next(defines) == nil then return k end
    local tag = config_text({block = 0, shared = 0, defines = defines})
    if variants[tag] then return variants[tag] end
    local recipe = C.recipe(k)
    if not recipe then
        error("hk.autotune: defines need a kernel compiled by hk.compile (a family's kernel has no source here)", 0)
    end
    local o = {}
    for key, v in pairs(recipe.options or {}) do o[key] = v end
    local defs = {}
    for i, d in ipairs(o.defines or {}) do defs[i] = d end
    for _, name in ipairs(sorted_keys(defines)) do defs[#defs + 1] = fmt("%s=%s", name, tostring(defines[name])) end
    o.defines = defs
    local m
    if recipe.path then
        o.path = recipe.path
        m = hk.compile(o)
    else
        m = hk.compile(recipe.source, o)
    end
    local kv = m:kernel(k:info().name)
    variants[tag] = kv
    return kv
end

local function grid_of(space, cfg)
    local g = space.grid
    if type(g) == "function" then
        local view = {block = cfg.block, shared = cfg.shared, defines = cfg.defines}
        for name, v in pairs(cfg.defines) do if view[name] == nil then view[name] = v end end
        return g(view)
    end
    if g == nil then error("hk.autotune: the space needs grid = n or grid = function(cfg) ... end", 0) end
    return g
end

local function key_text(k, space, configs, args, nargs)
    local lines = {"hipkit-autotune 1", (device_identity())}
    local recipe = C.recipe(k)
    local info = k:info()
    if recipe then
        local o = recipe.options or {}
        local opt_lines = {}
        for _, name in ipairs(sorted_keys(o)) do
            local v = o[name]
            opt_lines[#opt_lines + 1] = name .. "=" .. (type(v) == "table" and table.concat(v, "\1") or tostring(v))
        end
        lines[#lines + 1] = "module=" .. C.source_key(table.concat(opt_lines, "\n") .. "\n" .. (recipe.path or "") ..
                                                      "\n" .. recipe.source)
    else
        lines[#lines + 1] = "module=family kernel"
    end
    lines[#lines + 1] = "kernel=" .. info.name .. " " .. info.signature
    for i = 1, nargs do lines[#lines + 1] = fmt("arg%d=%s", i, arg_shape(args[i])) end
    for i, c in ipairs(configs) do lines[#lines + 1] = fmt("config%d=%s", i, config_text(c)) end
    if space.key ~= nil then lines[#lines + 1] = "user=" .. tostring(space.key) end
    return table.concat(lines, "\n"), info.name
end

local function record_text(w)
    return fmt("hipkit-autotune-winner 1\nconfig %s\nmedian %.17g\n", config_text(w), w.median or -1)
end

-- The configuration a record names, or nil and why.
local function record_winner(text, configs)
    local head, cfg, median = text:match("^(hipkit%-autotune%-winner 1)\nconfig ([^\n]*)\nmedian ([^\n]*)\n$")
    if not head then return nil, "not an autotune record" end
    for _, c in ipairs(configs) do
        if config_text(c) == cfg then return c, tonumber(median) end
    end
    return nil, "its configuration is not in the space"
end

local results_mt = {__name = "hk.autotune_results"}
results_mt.__tostring = function(r)
    local names = {}
    for _, e in ipairs(r) do for k in pairs(e.defines) do names[k] = true end end
    names = sorted_keys(names)
    local head = {fmt("%-14s %7s", "block", "shared")}
    for _, n in ipairs(names) do head[#head + 1] = fmt("%10s", n) end
    local lines = {fmt("autotune %s: %d configurations, %s", r.kernel, #r,
                       r.cached and "winner from the cache (none timed)" or fmt("%d timed", r.timed)),
                   table.concat(head, " ") .. fmt(" %12s %7s", "median ms", "ratio")}
    local best = r[r.best]
    for i, e in ipairs(r) do
        local row = {fmt("%-14s %7d", dim_text(e.block):gsub(",1,1$", ""):gsub(",1$", ""), e.shared)}
        for _, n in ipairs(names) do row[#row + 1] = fmt("%10s", tostring(e.defines[n] or "")) end
        if e.median then
            row[#row + 1] = fmt("%12.4f %8s%s", e.median, ratio_text(e.median / best.median),
                                i == r.best and " *" or "")
        else
            row[#row + 1] = fmt("%12s  %s", "-", e.error or (i == r.best and "* (cached)" or "not timed"))
        end
        lines[#lines + 1] = table.concat(row, " ")
    end
    return table.concat(lines, "\n")
end

local memo = {} -- key text -> record text, for this session

local function check_space(space)
    for name in pairs(space) do
        if not launch_fields[name] and not option_fields[name] then
            error(fmt("hk.autotune: unknown field '%s' in the space (block, shared, grid, defines, configs, " ..
                      "warmup, reps, key, cache, retune, print)", tostring(name)), 3)
        end
    end
end

-- Times one configuration; fills e.median ... or e.error.
local function time_config(k, space, e, args, nargs, variants, warmup, reps)
    local ok, kv = pcall(kernel_for, k, e.defines, variants)
    if not ok then e.error = "compile: " .. reason(kv):gsub("\n.*", ""); return end
    local okg, g = pcall(grid_of, space, e)
    if not okg then error(g, 0) end
    e.grid, e.kernel = g, kv
    local okl, launcher = pcall(kv, {grid = g, block = e.block, shared = e.shared})
    if not okl then e.error = reason(launcher); return end
    local function run() launcher(table.unpack(args, 1, nargs)) end
    local okr, err = pcall(run) -- a configuration the device refuses fails here, before timing
    if not okr then e.error = reason(err); return end
    local okb, r = pcall(bench_one, run, {warmup = warmup, reps = reps, print = false,
                                          label = config_text(e)})
    if not okb then e.error = reason(r); return end
    e.median, e.min, e.max = r.median, r.min, r.max
end

function hk.autotune(k, space, ...)
    if type(space) ~= "table" then error("hk.autotune(k, space, args...): space must be a table", 2) end
    if type(k) ~= "userdata" or type(k.info) ~= "function" then error("hk.autotune: k must be a kernel", 2) end
    check_space(space)
    local args, nargs = {...}, select("#", ...)
    local configs = expand(space)
    local key, kname = key_text(k, space, configs, args, nargs)
    local results = setmetatable({kernel = kname, key = key, timed = 0, cached = false}, results_mt)
    for i, c in ipairs(configs) do results[i] = {block = c.block, shared = c.shared, defines = c.defines} end
    local variants = {}
    local use_disk = space.cache ~= false
    local text = not space.retune and (memo[key] or (use_disk and C.record_get("autotune", kname, key)))
    if text then
        local c, why = record_winner(text, configs)
        if c then
            results.cached_median = why
            for i, e in ipairs(results) do
                if config_text(e) == config_text(c) then results.best = i end
            end
            local e = results[results.best]
            e.grid, e.kernel = grid_of(space, e), kernel_for(k, e.defines, variants)
            results.cached = true
            memo[key] = text
        else
            io.stderr:write(fmt("hipkit: warning: autotune record for %s ignored: %s\n", kname, why))
        end
    end
    if not results.cached then
        local warmup, reps = space.warmup or 2, space.reps or 10
        for i, e in ipairs(results) do
            time_config(k, space, e, args, nargs, variants, warmup, reps)
            if e.median then
                results.timed = results.timed + 1
                if not results.best or e.median < results[results.best].median then results.best = i end
            end
        end
        if not results.best then
            error("hk.autotune: no configuration ran:\n" .. tostring(results), 2)
        end
        local w = results[results.best]
        text = record_text(w)
        memo[key] = text
        if use_disk then C.record_put("autotune", kname, key, text) end
    end
    local w = results[results.best]
    local winner = setmetatable({block = w.block, shared = w.shared, defines = w.defines, grid = w.grid,
                                 kernel = w.kernel, median = w.median or results.cached_median,
                                 cached = results.cached}, winner_mt)
    for name, v in pairs(w.defines) do if winner[name] == nil then winner[name] = v end end
    if space.print then print(results) end
    return winner, results
end

-- ------------------------------------------------------------------ peaks

-- The FMA loop used for the matrix-product rate when the gemm family is not
-- loaded: eight independent chains per thread, so that the FMA units, not
-- one chain's latency, set the rate; the sum is stored so nothing is dead.
local fma_source = [[
#include <hip/hip_runtime.h>
extern "C" __global__ void hk_peak_fma(float *out, float seed, int iters)
{
    float a0 = seed + threadIdx.x, a1 = a0 + 1.0f, a2 = a0 + 2.0f, a3 = a0 + 3.0f;
    float a4 = a0 + 4.0f, a5 = a0 + 5.0f, a6 = a0 + 6.0f, a7 = a0 + 7.0f;
    const float m = 0.9999f, c = 0.0001f;
    for (int i = 0; i < iters; i++) {
        a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
        a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
]]

local function gemm_loaded()
    local ok, f = pcall(function() return hk.ops.gemm.matmul end)
    return ok and f ~= nil
end

-- Sizes: large enough on a GPU to reach its rates, small on the CPU backend
-- so that measuring stays well under a second there.
local function peak_plan(d)
    local host = d.backend == "host"
    return {
        copy_elems = host and (8 << 20) or (64 << 20), -- f32: 32 MiB or 256 MiB per buffer
        reps = host and 3 or 10,
        gemm_n = host and 192 or 4096,
        fma = host and {grid = math.max(1, d.compute_units or 1), block = 32, iters = 2048}
                    or {grid = 8 * math.max(1, d.compute_units or 1), block = 256, iters = 8192},
    }
end

local function measure_peaks(d, plan, use_gemm)
    local src = hk.alloc(plan.copy_elems, "f32"):fill(1)
    local dst = hk.alloc(plan.copy_elems, "f32")
    local bytes = 2 * 4 * plan.copy_elems -- read and write
    local copy = bench_one(function() dst:copy(src) end,
                           {warmup = 1, reps = plan.reps, bytes = bytes, print = false, label = "peak copy"})
    src:free(); dst:free()
    local flops_r, what
    if use_gemm then
        local n = plan.gemm_n
        local a = hk.alloc(n * n, "f32"):rand{seed = 1}
        local b = hk.alloc(n * n, "f32"):rand{seed = 2}
        local c = hk.alloc(n * n, "f32")
        local mm = hk.ops.gemm.matmul
        flops_r = bench_one(function() mm(c, a, b, n, n, n) end,
                            {warmup = 1, reps = plan.reps, flops = 2 * n * n * n, print = false, label = "peak gemm"})
        a:free(); b:free(); c:free()
        what = fmt("gemm f32 matmul %d^3", n)
    else
        local f = plan.fma
        local k = hk.compile(fma_source, {name = "hk-peak-fma"}):kernel("hk_peak_fma")
        local out = hk.alloc(f.grid * f.block, "f32")
        flops_r = bench_one(function() k:launch(f.grid, f.block, out, 1.0, f.iters) end,
                            {warmup = 1, reps = plan.reps, flops = 2 * 8 * f.iters * f.grid * f.block,
                             print = false, label = "peak fma"})
        out:free()
        what = fmt("FMA loop %d x %d threads x %d", f.grid, f.block, 8 * f.iters)
    end
    return {copy_gbps = copy.gbps, tflops = flops_r.tflops, matmul = what}
end

local peaks_memo = {}

local function peaks_text(p)
    return fmt("hipkit-peaks 1\ncopy_gbps %.17g\ntflops %.17g\nmatmul %s\n", p.copy_gbps, p.tflops, p.matmul)
end

local function peaks_parse(text)
    local g, t, m = text:match("^hipkit%-peaks 1\ncopy_gbps ([^\n]+)\ntflops ([^\n]+)\nmatmul ([^\n]+)\n$")
    g, t = tonumber(g), tonumber(t)
    if not (g and t and g > 0 and t > 0) then return nil end
    return {copy_gbps = g, tflops = t, matmul = m}
end

local peaks_mt = {__name = "hk.peaks"}
peaks_mt.__tostring = function(p)
    return fmt("peaks of %s: copy %.1f GB/s, matrix product %.3f TFLOP/s (%s)%s", p.device, p.copy_gbps,
               p.tflops, p.matmul, p.cached and ", from the cache" or "")
end

function hk.peaks(opts)
    if opts ~= nil and type(opts) ~= "table" then error("hk.peaks([{refresh = true}])", 2) end
    local refresh = opts and opts.refresh
    local ident, d = device_identity()
    local plan = peak_plan(d)
    local use_gemm = gemm_loaded()
    local key = fmt("hipkit-peaks 1\n%s\nmatmul=%s\ncopy=%d\nreps=%d", ident,
                    use_gemm and ("gemm " .. plan.gemm_n) or ("fma " .. plan.fma.grid .. " " .. plan.fma.block ..
                                                              " " .. plan.fma.iters), plan.copy_elems, plan.reps)
    local name = d.name:gsub("[^%w._-]", "_")
    local p, cached = nil, false
    if not refresh then
        if peaks_memo[key] then
            p, cached = peaks_parse(peaks_memo[key]), true
        else
            local text = C.record_get("peaks", name, key)
            if text then
                p = peaks_parse(text)
                if p then
                    cached = true
                else
                    io.stderr:write("hipkit: warning: peaks record for " .. d.name .. " ignored: not a peaks record\n")
                end
            end
        end
    end
    if not p then
        p = measure_peaks(d, plan, use_gemm)
        C.record_put("peaks", name, key, peaks_text(p))
    end
    peaks_memo[key] = peaks_text(p)
    p.device, p.cached = d.name, cached
    return setmetatable(p, peaks_mt)
end

-- ------------------------------------------------- hk.bench over several

-- The entries of hk.bench{...}: a list ({label, f}, {f, label = }, f) keeps
-- its order; a map {name = f} is taken by name.
local function bench_entries(fns)
    local list = {}
    if fns[1] ~= nil then
        for i, v in ipairs(fns) do
            local e
            if type(v) == "table" and getmetatable(v) == nil then
                e = {label = v.label or (type(v[1]) == "string" and v[1]) or ("#" .. i),
                     fn = v.fn or (type(v[1]) == "string" and v[2]) or v[1], bytes = v.bytes, flops = v.flops}
            else
                e = {label = "#" .. i, fn = v}
            end
            list[#list + 1] = e
        end
    else
        for _, name in ipairs(sorted_keys(fns)) do list[#list + 1] = {label = tostring(name), fn = fns[name]} end
    end
    if #list == 0 then error("hk.bench{...}: no functions to compare", 3) end
    for _, e in ipairs(list) do
        local mt = getmetatable(e.fn)
        if type(e.fn) ~= "function" and not (mt and mt.__call) then
            error(fmt("hk.bench{...}: entry '%s' is a %s, not a function", e.label, type(e.fn)), 3)
        end
        if type(e.fn) ~= "function" then -- a launcher or a callable table: the timing loop takes functions
            local callable = e.fn
            e.fn = function() callable() end
        end
    end
    return list
end

local compare_mt = {__name = "hk.bench_compare"}
compare_mt.__tostring = function(r)
    local rates = r.bytes_given or r.flops_given
    local head = fmt("%-20s %11s %9s", "", "median ms", "x first")
    if r.bytes_given then head = head .. fmt(" %10s %8s", "GB/s", "of copy") end
    if r.flops_given then head = head .. fmt(" %11s %8s", "GFLOP/s", "of mm") end
    local lines = {head}
    for i, e in ipairs(r) do
        local row = fmt("%-20s %11.4f %9s", e.label:sub(1, 20), e.median, ratio_text(e.ratio))
        if r.bytes_given then
            row = row .. (e.gbps and fmt(" %10.1f %7s", e.gbps, e.copy_fraction and fmt("%.0f%%", 100 * e.copy_fraction) or "-")
                          or fmt(" %10s %7s", "-", "-"))
        end
        if r.flops_given then
            row = row .. (e.tflops and fmt(" %11.2f %7s", 1000 * e.tflops, e.matmul_fraction and fmt("%.0f%%", 100 * e.matmul_fraction) or "-")
                          or fmt(" %11s %7s", "-", "-"))
        end
        lines[#lines + 1] = row .. (i == r.fastest and "  fastest" or "")
    end
    if rates and r.peaks then
        lines[#lines + 1] = fmt("(peaks: copy %.1f GB/s, %s %.2f GFLOP/s)", r.peaks.copy_gbps, r.peaks.matmul,
                                1000 * r.peaks.tflops)
    end
    return table.concat(lines, "\n")
end

local bench_options = {warmup = true, reps = true, bytes = true, flops = true, label = true, print = true,
                       peaks = true}

local function bench_compare(fns, opts)
    opts = opts or {}
    local entries = bench_entries(fns)
    local results = setmetatable({}, compare_mt)
    for i, e in ipairs(entries) do
        local o = {warmup = opts.warmup, reps = opts.reps, label = e.label, print = false,
                   bytes = e.bytes or opts.bytes, flops = e.flops or opts.flops}
        local r = bench_one(e.fn, o)
        results.bytes_given = results.bytes_given or (o.bytes and o.bytes > 0)
        results.flops_given = results.flops_given or (o.flops and o.flops > 0)
        results[i] = r
        if not results.fastest or r.median < results[results.fastest].median then results.fastest = i end
    end
    for _, r in ipairs(results) do
        r.ratio = r.median / results[1].median
        r.vs_fastest = r.median / results[results.fastest].median
    end
    if (results.bytes_given or results.flops_given) and opts.peaks ~= false then
        local p = hk.peaks()
        results.peaks = p
        for _, r in ipairs(results) do
            if r.gbps then r.copy_fraction = r.gbps / p.copy_gbps end
            if r.tflops then r.matmul_fraction = r.tflops / p.tflops end
        end
    end
    if opts.print == nil or opts.print then print(tostring(results)) end
    return results
end

function hk.bench(f, opts)
    if opts ~= nil then -- checked here so that the error names the caller's line
        if type(opts) ~= "table" then error(fmt("hk.bench: options must be a table, not a %s", type(opts)), 2) end
        for k in pairs(opts) do
            if not bench_options[k] then
                error(fmt("hk.bench: unknown option '%s' (known: warmup, reps, bytes, flops, label, print, peaks)",
                          tostring(k)), 2)
            end
        end
    end
    local mt = getmetatable(f)
    if type(f) == "table" and not (mt and mt.__call) then return bench_compare(f, opts) end
    local r = bench_one(f, opts) -- not a tail call: bench.c names this function's caller
    return r
end
