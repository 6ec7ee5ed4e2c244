-- The reference the quantized bench checks share (quantized_tc_check.lua,
-- quantized_mma_check.lua): y = W x in double precision, and each row's
-- sum |w x| (the scale an f32 matvec's error is measured against).
-- wv: W's dequantized values, row-major (a Lua table from :totable()), xv
-- x's. Returns the two tables, row r at r + 1.
return function(wv, xv, rows, cols)
    local sums, mags = {}, {}
    for r = 0, rows - 1 do
        local s, a = 0.0, 0.0
        for c = 1, cols do
            local p = wv[r * cols + c] * xv[c]
            s, a = s + p, a + math.abs(p)
        end
        sums[r + 1], mags[r + 1] = s, a
    end
    return sums, mags
end
