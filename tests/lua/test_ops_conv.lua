-- The conv family (plugins/conv): every op x f32 f64 f16 bf16 against a
-- direct loop in double in Lua, on random data, outputs poisoned (NaN)
-- first. Shapes are awkward on purpose: odd sizes, batch 3, stride 2,
-- padding, dilation 2, groups 2, 1x1 kernels; conv2d and conv1d through
-- both the direct kernel and the implicit GEMM (several pixel and channel
-- tiles, a partial last k step), conv2d_nhwc too. Error bound per element:
-- rel * sum |x w| + the output's rounding. Shapes are small (the CPU
-- backend runs the GEMM's 256-thread blocks as fibers); HIPKIT_TEST_HEAVY=1
-- or a GPU (HIPKIT_TEST_BACKEND) adds bigger ones.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local C = hk.ops.conv
local gpu = (os.getenv("HIPKIT_TEST_BACKEND") or "host") ~= "host"
local heavy = gpu or os.getenv("HIPKIT_TEST_HEAVY") == "1"
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
local dtypes = valgrind and {"f32", "f16"} or {"f32", "f64", "f16", "bf16"}
local rel = {f32 = 1e-5, f64 = 1e-12, f16 = 1e-5, bf16 = 1e-5}
local out_eps = {f32 = 2 ^ -23, f64 = 2 ^ -52, f16 = 2 ^ -10, bf16 = 2 ^ -7}
-- the output's step below its smallest normal (subnormals round absolutely:
-- an f16 output near 1e-5 is a few hundred of 2^-24 steps, not 2^-10 of itself)
local out_tiny = {f32 = 2 ^ -149, f64 = 2 ^ -1074, f16 = 2 ^ -24, bf16 = 2 ^ -133}
local nan = 0 / 0

-- random values from Lua through hk.from: buffer:rand trips Lua 5.4.4's
-- lua_settop bug under valgrind (the __close of its to-be-closed slot can
-- grow the stack under lua_settop, which then writes to the freed stack)
local function rand(n, dt)
    local v = {}
    for i = 1, n do v[i] = math.random() * 2 - 1 end
    return hk.from(v, dt)
end
local function poisoned(n, dt) return hk.alloc(n, dt):fill(nan) end

-- got (a buffer) against want / scale (Lua arrays, 1-based)
local function check(got, want, scale, dt, name)
    local g = got:totable()
    local worst, at = -1, nil
    for i = 1, #want do
        local tol = rel[dt] * scale[i] + out_eps[dt] * math.abs(want[i]) + out_tiny[dt]
        local e = math.abs(g[i] - want[i]) / tol
        if not (e <= 1) then e = math.huge end
        if e > worst then worst, at = e, i end
    end
    t.ok(worst <= 1 and #g >= #want, name)
    if worst > 1 then t.diag(("  element %d: got %s, want %s"):format(at, tostring(g[at]), tostring(want[at]))) end
end

-- geometry {n, c, h, w, k, r, s, sh, sw, ph, pw, dh, dw, groups}
local function out_size(q)
    q.oh = (q.h + 2 * q.ph - q.dh * (q.r - 1) - 1) // q.sh + 1
    q.ow = (q.w + 2 * q.pw - q.dw * (q.s - 1) - 1) // q.sw + 1
    return q
end

local function ref_conv(xv, wv, q, nhwc)
    local cg, kg = q.c // q.groups, q.k // q.groups
    local want, scale = {}, {}
    local function xat(img, c, y, x)
        if nhwc then return xv[((img * q.h + y) * q.w + x) * q.c + c + 1] end
        return xv[((img * q.c + c) * q.h + y) * q.w + x + 1]
    end
    local function wat(ko, ci, r, s)
        if nhwc then return wv[((ko * q.r + r) * q.s + s) * cg + ci + 1] end
        return wv[((ko * cg + ci) * q.r + r) * q.s + s + 1]
    end
    for img = 0, q.n - 1 do for ko = 0, q.k - 1 do for oy = 0, q.oh - 1 do for ox = 0, q.ow - 1 do
        local grp, sum, sabs = ko // kg, 0, 0
        for ci = 0, cg - 1 do for r = 0, q.r - 1 do for s = 0, q.s - 1 do
            local y, x = oy * q.sh - q.ph + r * q.dh, ox * q.sw - q.pw + s * q.dw
            if y >= 0 and y < q.h and x >= 0 and x < q.w then
                local v = xat(img, grp * cg + ci, y, x) * wat(ko, ci, r, s)
                sum, sabs = sum + v, sabs + math.abs(v)
            end
        end end end
        local i = nhwc and (((img * q.oh + oy) * q.ow + ox) * q.k + ko + 1)
            or (((img * q.k + ko) * q.oh + oy) * q.ow + ox + 1)
        want[i], scale[i] = sum, sabs
    end end end end
    return want, scale
end

local function conv_case(dt, q, algo, rank, nhwc)
    out_size(q)
    local cg = q.c // q.groups
    local x, w = rand(q.n * q.c * q.h * q.w, dt), rand(q.k * cg * q.r * q.s, dt)
    local y = poisoned(q.n * q.k * q.oh * q.ow, dt)
    local name = ("%s %s n%d c%d %dx%d k%d %dx%d s%d,%d p%d,%d d%d,%d g%d algo %d"):format(
        nhwc and "conv2d_nhwc" or rank == 3 and "conv1d" or "conv2d", dt, q.n, q.c, q.h, q.w, q.k, q.r, q.s,
        q.sh, q.sw, q.ph, q.pw, q.dh, q.dw, q.groups, algo)
    if rank == 3 then
        C.conv1d(y, x, w, {q.n, q.c, q.w}, {q.k, cg, q.s}, q.sw, q.pw, q.dw, q.groups, algo)
    elseif nhwc then
        C.conv2d_nhwc(y, x, w, {q.n, q.h, q.w, q.c}, {q.k, q.r, q.s, cg}, {q.sh, q.sw}, {q.ph, q.pw},
            {q.dh, q.dw}, q.groups)
    elseif q.sh == q.sw and q.ph == q.pw and q.dh == q.dw then
        C.conv2d(y, x, w, {q.n, q.c, q.h, q.w}, {q.k, cg, q.r, q.s}, q.sh, q.ph, q.dh, q.groups, algo)
    else
        C.conv2d(y, x, w, {q.n, q.c, q.h, q.w}, {q.k, cg, q.r, q.s}, {q.sh, q.sw}, {q.ph, q.pw}, {q.dh, q.dw},
            q.groups, algo)
    end
    local want, scale = ref_conv(x:totable(), w:totable(), q, nhwc)
    check(y, want, scale, dt, name)
end

local function G(n, c, h, w, k, r, s, st, p, d, g)
    return {n = n, c = c, h = h, w = w, k = k, r = r, s = s, sh = st[1], sw = st[2], ph = p[1], pw = p[2],
            dh = d[1], dw = d[2], groups = g}
end

local conv2d_cases = {
    G(3, 4, 9, 7, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1),
    G(1, 4, 11, 10, 4, 3, 2, {2, 1}, {1, 0}, {2, 1}, 2),   -- stride 2, dilation 2, groups 2
    G(2, 3, 5, 6, 5, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1),     -- 1x1
    G(1, 6, 8, 8, 6, 3, 3, {2, 2}, {2, 2}, {2, 2}, 3),
    G(1, 1, 1, 1, 1, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1),
}
for _, dt in ipairs(dtypes) do
    for _, q in ipairs(conv2d_cases) do
        for _, algo in ipairs({1, 2}) do conv_case(dt, q, algo, 4) end
    end
    conv_case(dt, G(3, 4, 7, 5, 6, 3, 3, {1, 2}, {1, 1}, {1, 2}, 2), 0, 4, true)
    -- conv1d: height 1
    conv_case(dt, G(3, 5, 1, 13, 4, 1, 3, {1, 2}, {0, 1}, {1, 2}, 1), 1, 3)
    conv_case(dt, G(3, 5, 1, 13, 4, 1, 3, {1, 2}, {0, 1}, {1, 2}, 1), 2, 3)
    conv_case(dt, G(2, 4, 1, 9, 6, 1, 1, {1, 1}, {0, 0}, {1, 1}, 2), 2, 3)
    -- the GEMM route (im2col into scratch, then gemm.matmul through
    -- host->call_op): one group; algo 0 picks it for half types
    for _, q in ipairs(conv2d_cases) do
        if q.groups == 1 then conv_case(dt, q, 3, 4) end
    end
    conv_case(dt, G(3, 5, 1, 13, 4, 1, 3, {1, 2}, {0, 1}, {1, 2}, 1), 3, 3)
    conv_case(dt, G(2, 3, 7, 6, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1), 0, 4)
    -- rows of 16 output pixels, stride 1: on a GPU the route's columns take
    -- unfold_tiled's 16-byte runs (every shift of a 3-tap row)
    conv_case(dt, G(2, 3, 6, 16, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1), 3, 4)
end
-- algo 0 picks the GEMM route for f32 when 128 or more output channels
-- fill the gemm's tiles (a conv1d, as issue 14's)
conv_case("f32", G(2, 3, 1, 11, 130, 1, 3, {1, 1}, {0, 1}, {1, 1}, 1), 0, 3)
do
    local ok, err = pcall(C.conv2d, hk.alloc(4 * 11 * 10, "f32"), hk.alloc(4 * 11 * 10, "f32"),
        hk.alloc(4 * 2 * 9, "f32"), {1, 4, 11, 10}, {4, 2, 3, 3}, 1, 1, 1, 2, 3)
    t.ok(not ok and tostring(err):find("algo 3 (im2col + gemm) takes NCHW, one group", 1, true),
        "algo 3 with two groups is refused: " .. tostring(err))
end
-- several tiles of 64 channels x 128 pixels, Q not a multiple of 8
conv_case("f32", G(3, 3, 9, 11, 70, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1), 2, 4)
if heavy then
    conv_case("f32", G(4, 16, 20, 20, 130, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2), 2, 4)
    conv_case("f16", G(4, 16, 20, 20, 130, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2), 2, 4)
    conv_case("f32", G(2, 32, 1, 300, 40, 1, 5, {1, 1}, {0, 2}, {1, 1}, 1), 2, 3)
    conv_case("bf16", G(2, 8, 17, 19, 24, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1), 2, 4, true)
end

-- conv_transpose: the reference scatters each input (the kernel gathers)
local function transpose_case(dt, q, op, rank)
    local kg, cg = q.k // q.groups, q.c // q.groups
    q.oh = (q.h - 1) * q.sh - 2 * q.ph + q.dh * (q.r - 1) + q.oph + 1
    q.ow = (q.w - 1) * q.sw - 2 * q.pw + q.dw * (q.s - 1) + q.opw + 1
    local x, w = rand(q.n * q.c * q.h * q.w, dt), rand(q.c * kg * q.r * q.s, dt)
    local y = poisoned(q.n * q.k * q.oh * q.ow, dt)
    if rank == 3 then
        C.conv_transpose1d(y, x, w, {q.n, q.c, q.w}, {q.c, kg, q.s}, q.sw, q.pw, q.opw, q.dw, q.groups)
    else
        C.conv_transpose2d(y, x, w, {q.n, q.c, q.h, q.w}, {q.c, kg, q.r, q.s}, {q.sh, q.sw}, {q.ph, q.pw},
            {q.oph, q.opw}, {q.dh, q.dw}, q.groups)
    end
    local xv, wv, want, scale = x:totable(), w:totable(), {}, {}
    for i = 1, q.n * q.k * q.oh * q.ow do want[i], scale[i] = 0, 0 end
    for img = 0, q.n - 1 do for ci = 0, q.c - 1 do for iy = 0, q.h - 1 do for ix = 0, q.w - 1 do
        local grp = ci // cg
        for kl = 0, kg - 1 do for r = 0, q.r - 1 do for s = 0, q.s - 1 do
            local oy, ox = iy * q.sh - q.ph + r * q.dh, ix * q.sw - q.pw + s * q.dw
            if oy >= 0 and oy < q.oh and ox >= 0 and ox < q.ow then
                local v = xv[((img * q.c + ci) * q.h + iy) * q.w + ix + 1] * wv[((ci * kg + kl) * q.r + r) * q.s + s + 1]
                local i = ((img * q.k + grp * kg + kl) * q.oh + oy) * q.ow + ox + 1
                want[i], scale[i] = want[i] + v, scale[i] + math.abs(v)
            end
        end end end
    end end end end
    check(y, want, scale, dt, ("%s %s n%d c%d %dx%d k%d %dx%d s%d,%d p%d,%d op%d,%d d%d,%d g%d"):format(op, dt,
        q.n, q.c, q.h, q.w, q.k, q.r, q.s, q.sh, q.sw, q.ph, q.pw, q.oph, q.opw, q.dh, q.dw, q.groups))
end

for _, dt in ipairs(dtypes) do
    local a = G(3, 4, 5, 6, 6, 3, 2, {2, 1}, {1, 0}, {1, 2}, 2)
    a.oph, a.opw = 1, 0
    transpose_case(dt, a, "conv_transpose2d", 4)
    local b = G(2, 3, 1, 7, 5, 1, 4, {1, 3}, {0, 2}, {1, 1}, 1)
    b.oph, b.opw = 0, 2
    transpose_case(dt, b, "conv_transpose1d", 3)
    local c = G(1, 2, 4, 4, 2, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1)
    c.oph, c.opw = 0, 0
    transpose_case(dt, c, "conv_transpose2d", 4)
end

-- im2col / im2col1d: out {n, oh, ow, c, r, s}
local function im2col_case(dt, q, rank)
    out_size(q)
    local x = rand(q.n * q.c * q.h * q.w, dt)
    local total = q.n * q.oh * q.ow * q.c * q.r * q.s
    local y = poisoned(total, dt)
    if rank == 3 then
        C.im2col1d(y, x, {q.n, q.c, q.w}, q.s, q.sw, q.pw, q.dw)
    else
        C.im2col(y, x, {q.n, q.c, q.h, q.w}, {q.r, q.s}, {q.sh, q.sw}, {q.ph, q.pw}, {q.dh, q.dw})
    end
    local xv, want, zero = x:totable(), {}, {}
    for img = 0, q.n - 1 do for oy = 0, q.oh - 1 do for ox = 0, q.ow - 1 do
        for c = 0, q.c - 1 do for r = 0, q.r - 1 do for s = 0, q.s - 1 do
            local iy, ix = oy * q.sh - q.ph + r * q.dh, ox * q.sw - q.pw + s * q.dw
            local v = 0
            if iy >= 0 and iy < q.h and ix >= 0 and ix < q.w then v = xv[((img * q.c + c) * q.h + iy) * q.w + ix + 1] end
            want[#want + 1], zero[#zero + 1] = v, 0
        end end end
    end end end
    check(y, want, zero, dt, ("%s %s n%d c%d %dx%d k%dx%d"):format(rank == 3 and "im2col1d" or "im2col", dt, q.n,
        q.c, q.h, q.w, q.r, q.s))
end

local function col2im1d_case(dt, n, lin, c, k, stride)
    local lout = (lin - 1) * stride + k
    local x, y = rand(n * lin * c * k, dt), poisoned(n * c * lout, dt)
    C.col2im1d(y, x, {n, lin, c, k}, stride)
    local xv, want, scale = x:totable(), {}, {}
    for i = 1, n * c * lout do want[i], scale[i] = 0, 0 end
    for b = 0, n - 1 do for il = 0, lin - 1 do for ci = 0, c - 1 do for kk = 0, k - 1 do
        local v = xv[((b * lin + il) * c + ci) * k + kk + 1]
        local i = (b * c + ci) * lout + il * stride + kk + 1
        want[i], scale[i] = want[i] + v, scale[i] + math.abs(v)
    end end end end
    check(y, want, scale, dt, ("col2im1d %s n%d lin%d c%d k%d stride %d"):format(dt, n, lin, c, k, stride))
end

local function pool_case(dt, op, n, c, h, w, kh, kw, sh, sw)
    local oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    local x, y = rand(n * c * h * w, dt), poisoned(n * c * oh * ow, dt)
    C[op](y, x, {n, c, h, w}, {kh, kw}, {sh, sw})
    local xv, want, scale = x:totable(), {}, {}
    for p = 0, n * c - 1 do for oy = 0, oh - 1 do for ox = 0, ow - 1 do
        local acc, sabs = op == "max_pool2d" and -math.huge or 0, 0
        for a = 0, kh - 1 do for b = 0, kw - 1 do
            local v = xv[p * h * w + (oy * sh + a) * w + ox * sw + b + 1]
            if op == "max_pool2d" then acc = math.max(acc, v) else acc, sabs = acc + v, sabs + math.abs(v) end
        end end
        if op == "avg_pool2d" then acc, sabs = acc / (kh * kw), sabs / (kh * kw) end
        want[#want + 1], scale[#scale + 1] = acc, sabs
    end end end
    check(y, want, scale, dt, ("%s %s n%d c%d %dx%d k%dx%d s%d,%d"):format(op, dt, n, c, h, w, kh, kw, sh, sw))
end

local function upsample_case(dt, rank, n, c, h, w, oh, ow)
    local x, y = rand(n * c * h * w, dt), poisoned(n * c * oh * ow, dt)
    if rank == 3 then C.upsample_nearest1d(y, x, {n, c, w}, ow) else C.upsample_nearest2d(y, x, {n, c, h, w}, {oh, ow}) end
    local xv, want, zero = x:totable(), {}, {}
    for p = 0, n * c - 1 do for oy = 0, oh - 1 do for ox = 0, ow - 1 do
        local iy, ix = math.min(math.floor(oy * (h / oh)), h - 1), math.min(math.floor(ox * (w / ow)), w - 1)
        want[#want + 1], zero[#zero + 1] = xv[p * h * w + iy * w + ix + 1], 0
    end end end
    check(y, want, zero, dt, ("upsample_nearest%dd %s %dx%d -> %dx%d"):format(rank - 2, dt, h, w, oh, ow))
end

for _, dt in ipairs(dtypes) do
    im2col_case(dt, G(3, 2, 5, 6, 0, 3, 2, {2, 1}, {1, 1}, {1, 2}, 1), 4)
    im2col_case(dt, G(1, 3, 4, 4, 0, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1), 4)
    im2col_case(dt, G(3, 3, 1, 11, 0, 1, 3, {1, 2}, {0, 1}, {1, 2}, 1), 3)
    col2im1d_case(dt, 3, 5, 2, 3, 2)
    col2im1d_case(dt, 1, 4, 3, 2, 3)  -- stride > k: gaps stay zero
    pool_case(dt, "avg_pool2d", 3, 2, 7, 9, 3, 2, 2, 2)
    pool_case(dt, "max_pool2d", 3, 2, 7, 9, 3, 2, 2, 2)
    pool_case(dt, "max_pool2d", 1, 3, 5, 5, 1, 1, 1, 1)
    -- 2x2 stride 2 on rows of 20 and 16 (f32: 16-byte loads, a tail of 2)
    pool_case(dt, "avg_pool2d", 2, 3, 6, 20, 2, 2, 2, 2)
    pool_case(dt, "max_pool2d", 2, 3, 6, 20, 2, 2, 2, 2)
    pool_case(dt, "max_pool2d", 1, 2, 5, 16, 2, 2, 2, 2)
    upsample_case(dt, 4, 3, 2, 3, 5, 7, 11)
    upsample_case(dt, 4, 1, 2, 6, 6, 4, 3)  -- downsampling too
    upsample_case(dt, 3, 2, 3, 1, 5, 1, 13)
    -- copy2d: 5 rows of 7 between rows of 9 and 11
    local src, dst = rand(4 * 9 + 7, dt), poisoned(4 * 11 + 7, dt)
    C.copy2d(dst, src, 5, 7, 9, 11)
    local sv, dv, good = src:totable(), dst:totable(), true
    for i = 0, 4 do for j = 0, 6 do
        if dv[i * 11 + j + 1] ~= sv[i * 9 + j + 1] then good = false end
    end end
    for i = 0, 3 do for j = 7, 10 do if dv[i * 11 + j + 1] == dv[i * 11 + j + 1] then good = false end end end
    t.ok(good, "copy2d " .. dt .. " 5x7, strides 9 and 11 (gaps untouched)")
end

-- the row kernels (im2col, upsampling) launched directly with odd blocks
-- and grids: lanes step along a row 4 elements at a time, rows over
-- threadIdx.y and the grid, so any shape covers every row once; rows of
-- 35 and 11 elements leave 16-byte stores unaligned on most rows
for _, dt in ipairs({"f32", "f16"}) do
    local K = C.kernels
    local x = rand(2 * 3 * 5 * 6, dt)
    local want_i, want_u = poisoned(2 * 5 * 6 * 3 * 3 * 3, dt), poisoned(2 * 3 * 7 * 11, dt)
    C.im2col(want_i, x, {2, 3, 5, 6}, 3, 1, 1, 1)
    C.upsample_nearest2d(want_u, x, {2, 3, 5, 6}, {7, 11})
    local want_m, want_a = poisoned(6 * 3 * 4, dt), poisoned(6 * 2 * 3, dt)
    C.max_pool2d(want_m, x, {2, 3, 5, 6}, 3, 1)
    C.avg_pool2d(want_a, x, {2, 3, 5, 6}, 2)
    local wi, wu, wm, wa, good = want_i:totable(), want_u:totable(), want_m:totable(), want_a:totable(), true
    for _, launch in ipairs({{1, {1, 1}}, {2, {3, 5}}, {3, {64, 4}}, {7, {2, 1}}}) do
        local yi, yu, ym, ya = poisoned(#wi, dt), poisoned(#wu, dt), poisoned(#wm, dt), poisoned(#wa, dt)
        local cfg = {grid = launch[1], block = launch[2]}
        K["im2col_" .. dt](cfg)(x, yi, 2, 3, 5, 6, 3, 3, 5, 6, 1, 1, 1, 1, 1, 1)
        K["upsample_nearest2d_" .. dt](cfg)(x, yu, 6, 5, 6, 7, 11, 5 / 7, 6 / 11)
        K["max_pool2d_" .. dt](cfg)(x, ym, 6, 5, 6, 3, 3, 1, 1, 3, 4)
        K["avg_pool2d_" .. dt](cfg)(x, ya, 6, 5, 6, 2, 2, 2, 2, 2, 3)
        for _, pair in ipairs({{yi, wi}, {yu, wu}, {ym, wm}, {ya, wa}}) do
            local g = pair[1]:totable()
            for i = 1, #pair[2] do good = good and g[i] == pair[2][i] end
        end
    end
    t.ok(good, "im2col, upsample_nearest2d, max_pool2d and avg_pool2d " .. dt ..
        " kernels: blocks 1x1, 3x5, 64x4, 2x1 give the op's output")
end

-- unfold (the GEMM route's columns, c r s rows of oh ow pixels an image)
-- against a Lua loop, launched with odd blocks and grids: 4 elements a lane
-- over rows of 25 pixels (stores unaligned on most rows)
for _, dt in ipairs({"f32", "f16", "f64"}) do
    local n, c, h, w, r, s, sh, sw, ph, pw, dh, dw = 2, 3, 5, 7, 3, 2, 1, 1, 1, 0, 1, 2
    local oh, ow = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1, (w + 2 * pw - dw * (s - 1) - 1) // sw + 1
    local x = rand(n * c * h * w, dt)
    local xv, want = x:totable(), {}
    for img = 0, n - 1 do for ci = 0, c - 1 do for a = 0, r - 1 do for b = 0, s - 1 do
        for oy = 0, oh - 1 do for ox = 0, ow - 1 do
            local iy, ix = oy * sh - ph + a * dh, ox * sw - pw + b * dw
            local inside = iy >= 0 and iy < h and ix >= 0 and ix < w
            want[#want + 1] = inside and xv[((img * c + ci) * h + iy) * w + ix + 1] or 0
        end end
    end end end end
    local good = true
    for _, launch in ipairs({{1, {1, 1}}, {2, {3, 5}}, {3, {64, 4}}, {7, {2, 1}}}) do
        local y = poisoned(#want, dt)
        C.kernels["unfold_" .. dt]{grid = launch[1], block = launch[2]}(x, y, n, c, h, w, r, s, oh, ow, sh, sw,
            ph, pw, dh, dw)
        local g = y:totable()
        for i = 1, #want do good = good and g[i] == want[i] end
    end
    t.ok(good, "unfold " .. dt .. " (the GEMM route's columns) equals a Lua loop under odd blocks and grids")
end

-- unfold_tiled (the GPU's unfold, a plane at a time through shared memory)
-- against the row kernel unfold, odd blocks and grids (a grid stride over
-- the planes). Element by element: stride 2 and dilation 2 along h,
-- padding on both sides, 6 x 7 output pixels (16-byte chunks that cross
-- output rows, taps and planes, stores unaligned on most planes). 16-byte
-- runs (stride 1 along w, 16 pixels a row): 9 taps along w, so the shifts
-- 0..8 mod 16 bytes all occur, stride 2 along h.
for _, case in ipairs({{2, 3, 12, 7, 2, 3, 2, 1, 1, 1, 2, 1}, {2, 2, 5, 16, 2, 9, 2, 1, 1, 4, 1, 1}}) do
for _, dt in ipairs({"f32", "f16", "f64"}) do
    local n, c, h, w, r, s, sh, sw, ph, pw, dh, dw = table.unpack(case)
    local oh, ow = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1, (w + 2 * pw - dw * (s - 1) - 1) // sw + 1
    local x = rand(n * c * h * w, dt)
    local want = poisoned(n * c * r * s * oh * ow, dt)
    C.kernels["unfold_" .. dt]{grid = 4, block = {8, 2}}(x, want, n, c, h, w, r, s, oh, ow, sh, sw, ph, pw, dh, dw)
    local size = dt == "f64" and 8 or dt == "f32" and 4 or 2
    local e = 16 // size
    local pitch = ((ow - 1) * sw + (s - 1) * dw + 1 + e - 1) // e * e
    local shared = (((oh - 1) * sh + (r - 1) * dh + 1) * pitch + e) * size
    local wv, good = want:totable(), true
    for _, launch in ipairs({{1, {256, 1}}, {2, {3, 5}}, {{4, 1, 1}, {32, 4}}, {9, {1, 1}}}) do
        local y = poisoned(#wv, dt)
        C.kernels["unfold_tiled_" .. dt]{grid = launch[1], block = launch[2], shared = shared}(x, y, n, c, h, w,
            r, s, oh, ow, sh, sw, ph, pw, dh, dw)
        local g = y:totable()
        for i = 1, #wv do good = good and g[i] == wv[i] end
    end
    t.ok(good and wv[1] == wv[1], ("unfold_tiled %s equals unfold: %d x %d pixels, strides, dilation, padding, "
        .. "odd launches"):format(dt, oh, ow))
end
end

-- im2col_tiled (the GPU's im2col, through shared memory) against the op
-- (the row kernel on the CPU): tiles of 28 pixels (shared memory sized for
-- 32, more than they need), a row of 34 pixels
-- split in two, stride 2 and dilation 2 along w, odd blocks and grids
for _, dt in ipairs({"f32", "f16"}) do
    local x = rand(1 * 2 * 4 * 70, dt)
    local oh, ow = (4 + 2 - 2) // 1 + 1, (70 + 2 - 5) // 2 + 1
    local want = poisoned(oh * ow * 2 * 2 * 3, dt)
    C.im2col(want, x, {1, 2, 4, 70}, {2, 3}, {1, 2}, {1, 1}, {1, 2})
    local size = dt == "f32" and 4 or 2
    local shared = 2 * 2 * ((32 - 1) * 2 + (3 - 1) * 2 + 1) * size
    local w, good = want:totable(), true
    for _, launch in ipairs({{1, {256, 1}}, {3, {3, 5}}, {{2, 1, 1}, {32, 4}}, {50, {2, 1}}}) do
        local y = poisoned(#w, dt)
        C.kernels["im2col_tiled_" .. dt]{grid = launch[1], block = launch[2], shared = shared}(x, y, 1, 2, 4, 70,
            2, 3, oh, ow, 1, 2, 1, 1, 1, 2)
        local g = y:totable()
        for i = 1, #w do good = good and g[i] == w[i] end
    end
    t.ok(good, "im2col_tiled " .. dt .. " equals im2col: 2 tiles a row, stride and dilation 2, odd launches")
end

-- im2col_tiled (tiles of 28 pixels, a row of 61 in three: 28, 28, 5) with
-- grids of 1, 3, 7 and 5 blocks, each taking several tiles; f64 too
-- (8-byte copies: cp.async on NVIDIA); 3 channels (27 taps a pixel: no
-- offset table) and 4 (36: the table)
for _, case in ipairs({{"f32", 3}, {"f32", 4}, {"f16", 3}, {"f16", 4}, {"f64", 4}}) do
    local dt, n, c, h, w = case[1], 2, case[2], 5, 61
    local x = rand(n * c * h * w, dt)
    local want = poisoned(n * h * w * c * 9, dt)
    C.im2col(want, x, {n, c, h, w}, 3, 1, 1, 1)
    local size = ({f32 = 4, f16 = 2, f64 = 8})[dt]
    local wv, good = want:totable(), true
    for _, launch in ipairs({{1, 256}, {3, 64}, {7, {8, 4}}, {5, 96}}) do
        local y = poisoned(#wv, dt)
        C.kernels["im2col_tiled_" .. dt]{grid = launch[1], block = launch[2], shared = c * 3 * (27 + 3) * size}(x, y,
            n, c, h, w, 3, 3, h, w, 1, 1, 1, 1, 1, 1)
        local g = y:totable()
        for i = 1, #wv do good = good and g[i] == wv[i] end
    end
    t.ok(good, ("im2col_tiled %s c%d equals im2col: several tiles a block"):format(dt, c))
end

-- max_pool2d propagates NaN
do
    local x, y = hk.from({1, nan, 3, 4, 5, 6, 7, 8}, "f32"), poisoned(2, "f32")
    C.max_pool2d(y, x, {1, 2, 2, 2}, 2)
    local v = y:totable()
    t.ok(v[1] ~= v[1] and v[2] == 8, "max_pool2d: a NaN in the window gives NaN, stride defaults to the kernel")
    -- and through the 16-byte path (rows of 8): NaN at row 0, column 5
    local vals = {}
    for i = 1, 16 do vals[i] = i end
    vals[6] = nan
    local y4 = poisoned(4, "f32")
    C.max_pool2d(y4, hk.from(vals, "f32"), {1, 1, 2, 8}, 2)
    local w = y4:totable()
    t.ok(w[1] == 10 and w[2] == 12 and w[3] ~= w[3] and w[4] == 16,
        "max_pool2d 2x2 on a row of 8: NaN only where the window holds it")
end

-- errors name the operand
do
    local x, w, y = hk.alloc(2 * 3 * 5 * 5, "f32"), hk.alloc(4 * 3 * 3 * 3, "f32"), hk.alloc(2 * 4 * 5 * 5, "f32")
    t.errors("out has 199 elements", "conv2d: a short out is named",
        C.conv2d, hk.alloc(199, "f32"), x, w, {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("x has 149 elements", "conv2d: a short x is named",
        C.conv2d, y, hk.alloc(149, "f32"), w, {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("w has 2 input channels per group", "conv2d: w's channels against x's",
        C.conv2d, y, x, w, {2, 3, 5, 5}, {4, 2, 3, 3}, 1, 1, 1, 1)
    t.errors("w is f16 but out is f32", "conv2d: mixed dtypes",
        C.conv2d, y, x, hk.alloc(108, "f16"), {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("groups 2 must", "conv2d: groups must divide the channels",
        C.conv2d, y, x, w, {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 2)
    t.errors("does not fit", "conv2d: a kernel larger than the padded input",
        C.conv2d, y, x, w, {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 0, 3, 1)
    t.errors("xshape", "conv2d: a shape of the wrong rank",
        C.conv2d, y, x, w, {2, 3, 5}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("geometry values", "conv2d: a mixed integer / table geometry",
        C.conv2d, y, x, w, {2, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, 1, 1, 1)
    t.errors("output_padding must be smaller", "conv_transpose1d: output_padding >= stride and dilation",
        C.conv_transpose1d, y, x, w, {2, 3, 5}, {3, 4, 3}, 1, 0, 1, 1, 1)
    t.errors("src has 10 elements", "copy2d: a short src is named", C.copy2d, y, hk.alloc(10, "f32"), 2, 6, 6, 6)
    t.errors("out has 201 elements; its shape needs 200", "conv2d: a longer out is refused (a shape worked out wrong)",
        C.conv2d, hk.alloc(201, "f32"), x, w, {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("x has 151 elements; its shape needs 150", "conv2d: a longer x is refused",
        C.conv2d, y, hk.alloc(151, "f32"), w, {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("out has 9 elements; its shape needs 4", "max_pool2d: an out sized for ceil mode is refused",
        C.max_pool2d, hk.alloc(9, "f32"), hk.alloc(25, "f32"), {1, 1, 5, 5}, 2)
    -- a stride of 0 is refused before anything divides by it (it killed the session with SIGFPE)
    t.errors("stride must be at least 1", "conv2d: a stride of 0 is refused", C.conv2d, hk.alloc(4, "f32"),
             hk.alloc(16, "f32"), hk.alloc(9, "f32"), {1, 1, 4, 4}, {1, 1, 3, 3}, 0, 0, 1, 1)
    t.errors("stride must be at least 1", "conv1d: a stride of 0 is refused", C.conv1d, hk.alloc(4, "f32"),
             hk.alloc(6, "f32"), hk.alloc(3, "f32"), {1, 1, 6}, {1, 1, 3}, 0, 0, 1, 1)
    -- errors number the arguments as the script wrote them (a shape table is one)
    t.errors("kernel (argument 4) must be an integer", "max_pool2d: a fractional kernel is argument 4",
        C.max_pool2d, hk.alloc(4, "f32"), hk.alloc(16, "f32"), {1, 1, 4, 4}, 2.5)
    t.errors("groups (argument 9) must be an integer", "conv2d: groups after table geometry is argument 9",
        C.conv2d, y, x, w, {2, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1.5)
    -- an output over an input: other blocks would read what is already overwritten
    local big = hk.alloc(2 * 3 * 5 * 5 + 108, "f32")
    t.errors("out shares memory with x", "conv2d: out over x is refused",
        C.conv2d, big:view("f32", 0, 2 * 4 * 5 * 5), big:view("f32", 0, 150), w, {2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("out shares memory with w", "conv2d: out over part of w is refused",
        C.conv2d, big:view("f32", 4 * 130, 128), x, big:view("f32", 4 * 150, 108), {2, 3, 4, 4}, {4, 3, 3, 3}, 1, 1, 1, 1)
    t.errors("dst shares memory with src", "copy2d: dst over src is refused",
        C.copy2d, big:view("f32", 4, 20), big:view("f32", 0, 20), 2, 6, 6, 6)
    t.errors("out shares memory with x", "max_pool2d: out over x is refused",
        C.max_pool2d, big:view("f32", 0, 2 * 3 * 2 * 2), big:view("f32", 0, 150), {2, 3, 5, 5}, 2)
    -- beside each other in one buffer is fine: copy2d from the front half to the back
    local both = hk.alloc(40, "f32"):rand{seed = seed, lo = -1, hi = 1}
    local before = both:totable()
    C.copy2d(both:view("f32", 80, 20), both:view("f32", 0, 20), 4, 5, 5, 5)
    local after, same = both:totable(), true
    for i = 1, 20 do same = same and after[20 + i] == before[i] and after[i] == before[i] end
    t.ok(same, "copy2d: dst beside src in one buffer copies")
end

t.done()
