-- The gemm family (plugins/gemm): hk.ops.gemm.matmul against a reference
-- computed in double in Lua, on random data with outputs poisoned (NaN)
-- first: every dtype pair, sizes 1x1x1, 17x33x65 and 1000x1x1000, both
-- layouts, all four transposes, beta != 0, leading dimensions wider than
-- the matrix, strided batches; the 64 x 64 tile and the 128 x 128 one.
-- Error bound per element: rel[dtype] * sum |alpha a b| + |beta c| terms,
-- rel f32 1e-5 sqrt(k) (+ output rounding), f16/bf16 1e-2, f64 1e-12.
-- On a GPU (HIPKIT_TEST_BACKEND) or with HIPKIT_TEST_HEAVY=1 the sizes
-- 300x257x129, 1024x1024x64, 2049x1031x130 (64 x 64 tiles), 2048x2048x40 and
-- 2050x2056x72 (the big tiles: blocks inside C, a partial last k tile, blocks
-- on the edges; 3000 random elements of C checked) run too, and on a GPU
-- four shapes of Hopper's wgmma path (2048x2048x192 and the like) and four
-- of f32's cp.async-fed 128 x 128 tile (2049x1031x133 and the like), three
-- large enough that matmul packs A or B first, three with so few tiles
-- that it splits them along k; gemm_pack_f32 and gemm_splitk_f32 launched
-- directly on every backend.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")

local G = hk.ops.gemm
local gpu = (os.getenv("HIPKIT_TEST_BACKEND") or "host") ~= "host"
local heavy = gpu or os.getenv("HIPKIT_TEST_HEAVY") == "1"
local valgrind = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
local nan = 0 / 0
local N = hk.null -- matmul's "default" (a nil would end the arguments)
local function opt(v) if v == nil then return N end return v end
local pairs_ = {{"f32", "f32"}, {"f64", "f64"}, {"f16", "f16"}, {"f16", "f32"}, {"bf16", "bf16"}, {"bf16", "f32"}}
local rel = {f32 = 1e-5, f64 = 1e-12, f16 = 1e-2, bf16 = 1e-2}
local out_eps = {f32 = 2 ^ -23, f64 = 2 ^ -52, f16 = 2 ^ -10, bf16 = 2 ^ -7}
-- the output's step below its smallest normal: a subnormal output rounds
-- absolutely (an f16 near 1e-5 is a few hundred 2^-24 steps, not 2^-10 of itself)
local out_tiny = {f32 = 2 ^ -149, f64 = 2 ^ -1074, f16 = 2 ^ -24, bf16 = 2 ^ -133}

-- One case: p = {m, n, k, ta, tb, alpha, beta, col, batch, pad (extra ld), sa, sb, sc}
local function run_case(tin, tout, p)
    local m, n, k = p.m, p.n, p.k
    local batch, pad, col = p.batch or 1, p.pad or 0, p.col
    -- stored shapes (rows x cols of the storage's own row-major view)
    local function dims(r, c, tr) -- op() is r x c
        local swap = (tr and not col) or (col and not tr)
        local inner = swap and r or c
        local outer = swap and c or r
        return inner, outer, swap
    end
    local ai, ao = dims(m, k, p.ta)
    local bi, bo = dims(k, n, p.tb)
    local ci, co = dims(m, n, false)
    local lda, ldb, ldc = math.max(ai, 1) + pad, math.max(bi, 1) + pad, math.max(ci, 1) + pad
    local sa, sb, sc = ao * lda + (p.gap or 0), bo * ldb + (p.gap or 0), co * ldc + (p.gap or 0)
    local a = hk.alloc(math.max(sa * batch, 1), tin):rand{lo = -1, hi = 1}
    local b = hk.alloc(math.max(sb * batch, 1), tin):rand{lo = -1, hi = 1}
    local c = hk.alloc(math.max(sc * batch, 1), tout)
    if p.beta and p.beta ~= 0 then c:rand{lo = -1, hi = 1} else c:fill(nan) end
    local c0 = c:totable()
    local av, bv = a:totable(), b:totable()
    -- element (r, cc) of an op()'d operand stored with ld, batch offset z
    local function at(v, base, ld, r, cc, tr)
        local _, _, swap = dims(0, 0, tr)
        if swap then return v[base + cc * ld + r + 1] end
        return v[base + r * ld + cc + 1]
    end
    G.matmul(c, a, b, m, n, k, p.ta or false, p.tb or false, opt(p.alpha), opt(p.beta), lda, ldb, ldc, batch, sa,
        sb, sc, col or false)
    local got = c:totable()
    local alpha, beta = p.alpha or 1, p.beta or 0
    -- every element, or 3000 random ones of a large C
    local cells = {}
    if batch * m * n <= 50000 then
        for z = 0, batch - 1 do for i = 0, m - 1 do for j = 0, n - 1 do cells[#cells + 1] = {z, i, j} end end end
    else
        for s = 1, 3000 do cells[s] = {math.random(0, batch - 1), math.random(0, m - 1), math.random(0, n - 1)} end
    end
    for _, cell in ipairs(cells) do
        local z, i, j = cell[1], cell[2], cell[3]
        local s, sabs = 0, 0
        for q = 0, k - 1 do
            local x = at(av, z * sa, lda, i, q, p.ta) * at(bv, z * sb, ldb, q, j, p.tb)
            s, sabs = s + x, sabs + math.abs(x)
        end
        local ci_ = z * sc + (col and (j * ldc + i) or (i * ldc + j)) + 1
        local want = alpha * s
        local scale = math.abs(alpha) * sabs
        if beta ~= 0 then
            want = want + beta * c0[ci_]
            scale = scale + math.abs(beta * c0[ci_])
        end
        local tol = rel[tin] * (tin == "f32" and math.sqrt(k) or 1) * scale + out_eps[tout] * math.abs(want) + out_tiny[tout]
        if not (math.abs(got[ci_] - want) <= tol) then
            return false, ("batch %d C(%d,%d): got %s, want %s (tol %.3g)"):format(z, i, j, tostring(got[ci_]),
                tostring(want), tol)
        end
    end
    -- what lies between the matrices (padding, gaps) is untouched
    for idx = 1, #got do
        local z = (idx - 1) // math.max(sc, 1)
        local off = (idx - 1) % math.max(sc, 1)
        local r, cc = off // ldc, off % ldc
        local inside = z < batch and r < co and cc < ci
        if not inside and not (got[idx] == c0[idx] or (got[idx] ~= got[idx] and c0[idx] ~= c0[idx])) then
            return false, ("element %d outside C changed"):format(idx)
        end
    end
    return true
end

local function check(tin, tout, p, what)
    local ok, info = run_case(tin, tout, p)
    t.ok(ok, ("%s->%s %dx%dx%d %s"):format(tin, tout, p.m, p.n, p.k, what) ..
        (ok and "" or ": " .. tostring(info)))
end

-- every pair: the awkward sizes, row-major, no transposes
for _, pr in ipairs(pairs_) do
    local sizes = {{1, 1, 1}, {17, 33, 65}}
    if not valgrind or pr[1] == "f32" then sizes[#sizes + 1] = {1000, 1, 1000} end
    if heavy then
        sizes[#sizes + 1] = {300, 257, 129}
        sizes[#sizes + 1] = {1024, 1024, 64}
        sizes[#sizes + 1] = {2049, 1031, 130}
        sizes[#sizes + 1] = {2048, 2048, 40}
        sizes[#sizes + 1] = {2050, 2056, 72}
    end
    for _, s in ipairs(sizes) do
        check(pr[1], pr[2], {m = s[1], n = s[2], k = s[3]}, "row-major")
    end
end

-- transposes x layouts, alpha and beta, padded leading dimensions
for _, pr in ipairs({{"f32", "f32"}, {"f16", "f32"}, {"bf16", "bf16"}, {"f64", "f64"}}) do
    for _, col in ipairs({false, true}) do
        for _, tr in ipairs({{false, false}, {true, false}, {false, true}, {true, true}}) do
            check(pr[1], pr[2], {m = 19, n = 23, k = 37, ta = tr[1], tb = tr[2], col = col, alpha = -1.5,
                beta = 0.5, pad = 3}, ("%s ta=%s tb=%s alpha -1.5 beta 0.5 ld+3"):format(col and "col-major" or
                "row-major", tostring(tr[1]), tostring(tr[2])))
        end
    end
end

-- strided batches (with gaps between the items), K = 0 (C = beta C), M or N = 0
check("f32", "f32", {m = 9, n = 13, k = 21, batch = 3, gap = 5, beta = 2}, "batch 3, gaps, beta 2")
check("f16", "f16", {m = 40, n = 70, k = 24, batch = 4, ta = true}, "batch 4, transa")
check("bf16", "f32", {m = 33, n = 17, k = 48, batch = 2, tb = true, col = true}, "batch 2, col-major, transb")
check("f32", "f32", {m = 5, n = 6, k = 0, beta = 0.25}, "k = 0: C = beta C")
check("f64", "f64", {m = 0, n = 6, k = 4}, "m = 0: nothing")
if heavy then
    check("f16", "f16", {m = 130, n = 200, k = 100, batch = 5, ta = true, tb = true, beta = 1},
        "batch 5, both transposed, beta 1")
    check("f32", "f32", {m = 256, n = 384, k = 96, pad = 8, col = true}, "col-major, ld+8, 128x128 tiles")
end

-- On a GPU: shapes Hopper's wgmma path takes (k a multiple of 64, at least
-- 128 of the 128 x 256 tiles, unit strides with 16-byte rows) in each
-- operand layout, and one whose edge blocks take the mma.sync path; on other
-- GPUs the same products through their own paths.
if gpu then
    check("f16", "f16", {m = 2048, n = 2048, k = 192, alpha = -1.5, beta = 0.5}, "wgmma shape, alpha -1.5 beta 0.5")
    check("bf16", "f32", {m = 1024, n = 2048, k = 256, batch = 2, col = true, ta = true},
        "wgmma shape, batch 2, col-major, transa")
    check("f16", "f32", {m = 2048, n = 2048, k = 320, ta = true, tb = true, pad = 8},
        "wgmma shape, both transposed, ld+8")
    check("bf16", "bf16", {m = 2050, n = 2056, k = 192, tb = true}, "wgmma inside, mma.sync on the edges, transb")
    -- f32's 128 x 128 tile fed by cp.async on NVIDIA (16-byte copies along a
    -- unit stride, element copies else; partial k tiles, edges, ld, batches)
    check("f32", "f32", {m = 2049, n = 1031, k = 133, alpha = -1.5, beta = 0.5}, "f32 big tile, edges, alpha beta")
    check("f32", "f32", {m = 1030, n = 2048, k = 100, ta = true, pad = 3}, "f32 big tile, transa, ld+3")
    check("f32", "f32", {m = 2052, n = 1028, k = 133, ta = true, beta = 1}, "f32 big tile, transa, 16-byte copies")
    check("f32", "f32", {m = 1024, n = 1027, k = 67, tb = true, batch = 2, col = true},
        "f32 big tile, transb, col-major, batch 2")
    check("f32", "f32", {m = 2048, n = 1024, k = 48, ta = true, tb = true, pad = 4, gap = 3, batch = 2},
        "f32 big tile, both transposed, ld+4, gaps")
    -- products deep and wide enough that matmul packs a row-major A (a
    -- transposed B) into scratch first (gemm.c's pack_pays): odd sizes,
    -- ld, gaps, batches, beta, column-major
    check("f32", "f32", {m = 2100, n = 1030, k = 515, alpha = 0.75, beta = -0.5}, "f32 packed A, alpha beta")
    check("f32", "f32", {m = 1031, n = 1029, k = 517, tb = true, pad = 3, gap = 5, batch = 2},
        "f32 packed A and B, ld+3, gaps, batch 2")
    check("f32", "f32", {m = 1027, n = 1100, k = 640, ta = true, tb = true, col = true, batch = 2},
        "f32 column-major, both transposed: packs the view's operands")
    -- too few 128 x 128 tiles: split along k into 2, 16, 8 pieces summed
    -- by gemm_splitk_f32 (gemm.c's split_parts)
    check("f32", "f32", {m = 1000, n = 1030, k = 518, alpha = -1.5, beta = 0.5}, "f32 split in 2 along k, alpha beta")
    check("f32", "f32", {m = 300, n = 257, k = 1024}, "f32 split in 16 along k")
    check("f32", "f32", {m = 500, n = 700, k = 768, ta = true, col = true, beta = 0.5, pad = 3},
        "f32 split in 8, col-major, transa, ld+3, beta")
end

-- gemm_pack_f32 launched directly (what matmul runs before a large f32
-- product on NVIDIA): a strided, batched operand out to unit-stride rows,
-- poisoned first so an unwritten element shows, padding left alone
do
    local rows, cols, batch = 37, 70, 2
    local sr, sc, bsx, ldy = 1, 41, 41 * 70 + 7, 40
    local bsy = cols * ldy + 3
    local x = hk.alloc(bsx * batch, "f32"):rand{lo = -1, hi = 1}
    local y = hk.alloc(bsy * batch, "f32"):fill(nan)
    local pk = G.kernels.gemm_pack_f32
    pk{grid = {(cols + 31) // 32, (rows + 31) // 32, batch}, block = {32, 8}}(x, y, rows, cols, sr, sc, ldy, bsx, bsy)
    local xv, yv, bad = x:totable(), y:totable(), nil
    for z = 0, batch - 1 do
        for c = 0, cols - 1 do
            for r = 0, ldy - 1 do
                local got = yv[z * bsy + c * ldy + r + 1]
                if r < rows then
                    local want = xv[z * bsx + r * sr + c * sc + 1]
                    if got ~= want and not bad then bad = ("y(%d,%d,%d) %s, want %s"):format(z, r, c, got, want) end
                elseif got == got and not bad then
                    bad = ("padding y(%d,%d,%d) written"):format(z, r, c)
                end
            end
        end
    end
    t.ok(bad == nil, "gemm_pack_f32: 2 x 37 x 70, column stride 41, ld 40, batch gaps" ..
        (bad and ": " .. bad or ""))
    -- row-major source (unit stride along the columns): the case matmul packs
    local rows2, cols2 = 65, 33
    local x2 = hk.alloc(rows2 * cols2, "f32"):rand{lo = -1, hi = 1}
    local y2 = hk.alloc(cols2 * 68, "f32"):fill(nan)
    pk{grid = {(cols2 + 31) // 32, (rows2 + 31) // 32, 1}, block = {32, 8}}(x2, y2, rows2, cols2, cols2, 1, 68, 0, 0)
    local x2v, y2v, ok = x2:totable(), y2:totable(), true
    for r = 0, rows2 - 1 do
        for c = 0, cols2 - 1 do ok = ok and y2v[c * 68 + r + 1] == x2v[r * cols2 + c + 1] end
    end
    t.ok(ok, "gemm_pack_f32: a row-major 65 x 33 transposed into columns of 68")
end

-- gemm_splitk_f32 launched directly: C = alpha (sum of the pieces) + beta C
-- into a C with ld > n, its padding left alone; beta 0 never reads C
do
    local m, n, parts, ldc = 5, 300, 3, 303
    local w = hk.alloc(parts * m * n, "f32"):rand{lo = -1, hi = 1}
    local c = hk.alloc(m * ldc, "f32"):rand{lo = -1, hi = 1}
    local wv, c0 = w:totable(), c:totable()
    local sk = G.kernels.gemm_splitk_f32
    sk{grid = {(n + 255) // 256, m}, block = 256}(w, c, m, n, ldc, parts, 1.5, -0.5)
    local cv, bad = c:totable(), nil
    for i = 0, m - 1 do
        for j = 0, ldc - 1 do
            local idx = i * ldc + j + 1
            local want = c0[idx]
            if j < n then
                local s = 0
                for z = 0, parts - 1 do s = s + wv[z * m * n + i * n + j + 1] end
                want = 1.5 * s - 0.5 * c0[idx]
            end
            if not (math.abs(cv[idx] - want) <= 1e-6 * (math.abs(want) + 1)) and not bad then
                bad = ("C(%d,%d) %s, want %s"):format(i, j, cv[idx], want)
            end
        end
    end
    t.ok(bad == nil, "gemm_splitk_f32: 3 pieces of 5 x 300 into ld 303, alpha 1.5 beta -0.5" ..
        (bad and ": " .. bad or ""))
    c:fill(nan)
    sk{grid = {(n + 255) // 256, m}, block = 256}(w, c, m, n, ldc, parts, 2.0, 0.0)
    cv = c:totable()
    local ok = true
    for i = 0, m - 1 do
        for j = 0, n - 1 do
            local s = 0
            for z = 0, parts - 1 do s = s + wv[z * m * n + i * n + j + 1] end
            ok = ok and math.abs(cv[i * ldc + j + 1] - 2 * s) <= 1e-6 * (math.abs(2 * s) + 1)
        end
    end
    t.ok(ok, "gemm_splitk_f32: beta 0 over a NaN-filled C writes every element")
end

-- a broadcast operand: stride_b 0 shares one B across the batch
do
    local a = hk.alloc(2 * 4 * 3, "f32"):rand{lo = -1, hi = 1}
    local b = hk.alloc(3 * 5, "f32"):rand{lo = -1, hi = 1}
    local c = hk.alloc(2 * 4 * 5, "f32"):fill(nan)
    G.matmul(c, a, b, 4, 5, 3, N, N, N, N, N, N, N, 2, N, 0)
    local av, bv, cv, ok = a:totable(), b:totable(), c:totable(), true
    for z = 0, 1 do
        for i = 0, 3 do
            for j = 0, 4 do
                local s = 0
                for q = 0, 2 do s = s + av[z * 12 + i * 3 + q + 1] * bv[q * 5 + j + 1] end
                ok = ok and math.abs(cv[z * 20 + i * 5 + j + 1] - s) < 1e-5
            end
        end
    end
    t.ok(ok, "stride_b 0: one B for every batch item")
end

-- errors name what is wrong
local function fails(pattern, f, ...)
    local ok, err = pcall(f, ...)
    t.ok(not ok and tostring(err):find(pattern, 1, true), "error: " .. tostring(err))
end
local a, b, c = hk.alloc(12, "f32"), hk.alloc(12, "f32"), hk.alloc(9, "f32")
fails("c has 9 elements; this product needs 16", G.matmul, c, a, b, 4, 4, 3)
fails("a has 12 elements; this product needs 15", G.matmul, hk.alloc(25, "f32"), a, b, 5, 5, 3, false, false,
    N, N, N, 5)
fails("lda is 2; it must be at least 3", G.matmul, c, a, b, 3, 3, 3, N, N, N, N, 2)
fails("no kernel takes a (i32) and writes c (f32)", G.matmul, c, hk.alloc(12, "i32"), b, 3, 3, 3)
fails("a is f32 but b is f64", G.matmul, c, a, hk.alloc(12, "f64"), 3, 3, 3)
fails("no kernel takes a (f32) and writes c (f16)", G.matmul, hk.alloc(9, "f16"), a, b, 3, 3, 3)
fails("expects buffers c, a, b, then m, n, k", G.matmul, c, a, b, 3, 3)
fails("k (argument 6) is required", G.matmul, c, a, b, 3, 3, N)
fails("batch must be in [1, 65535]", G.matmul, c, a, b, 3, 3, 3, N, N, N, N, N, N, N, 0)
fails("stride_c 3 makes the batch's C matrices overlap", G.matmul, hk.alloc(30, "f32"), hk.alloc(30, "f32"),
    hk.alloc(30, "f32"), 2, 2, 2, N, N, N, N, N, N, N, 3, N, N, 3, true)
fails("m must be in [0, 2^31)", G.matmul, c, a, b, -1, 3, 3)
-- c over a or b: other tiles would read what is already overwritten;
-- beside them in one buffer is fine
do
    local big = hk.alloc(12 + 12 + 9, "f32"):rand{lo = -1, hi = 1}
    local va, vb, vc = big:view("f32", 0, 12), big:view("f32", 48, 12), big:view("f32", 96, 9)
    fails("c shares memory with a", G.matmul, big:view("f32", 0, 9), va, vb, 3, 3, 4)
    fails("c shares memory with b", G.matmul, big:view("f32", 88, 9), va, vb, 3, 3, 4)
    local bv = big:totable()
    G.matmul(vc, va, vb, 3, 3, 4)
    local cv, ok = vc:totable(), true
    for i = 0, 2 do
        for j = 0, 2 do
            local s = 0
            for q = 0, 3 do s = s + bv[i * 4 + q + 1] * bv[12 + q * 3 + j + 1] end
            ok = ok and math.abs(cv[i * 3 + j + 1] - s) < 1e-5
        end
    end
    t.ok(ok, "c beside a and b in one buffer: the product")
end

-- every kernel listed with a doc line, the explicit geometry, and the op
for _, p in ipairs(hk.plugins()) do
    if p.name == "gemm" then
        local ok = #p.kernels == 14 and #p.ops == 1
        for _, k in ipairs(p.kernels) do ok = ok and #k.doc > 0 and k.geometry == "explicit" end
        t.ok(ok, "hk.plugins() lists gemm's 14 kernels (explicit geometry, each with a doc line) and matmul")
    end
end
t.done()
