-- Error flags read later (plugin ABI 1.6, host->error_flag): on a GPU,
-- and on the CPU backend with HIPKIT_DEFER_CHECKS=1, an op's flags are
-- read at the next wait (a download, hk.sync, a read from Lua),
-- instead of as the op returns. The indexing family's out-of-range flag
-- is the example: the op returns, the wait raises its error naming the
-- op, the kernel and the position; the session goes on; the flags are
-- clear afterwards; more ops than the flag area holds read it as they go.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed .. " (HK_TEST_SEED=" .. seed .. " repeats this run)")
local env = os.getenv("HIPKIT_DEFER_CHECKS") or ""
if env == "0" or (env == "" and hk.device().backend == "host") then
    t.skip("error flags read later", "the CPU backend reads them as the op returns unless HIPKIT_DEFER_CHECKS=1 "
        .. "(tests/meson.build sets it)")
    t.done()
end

local I = hk.ops.indexing
local D, N, R = 50, 13, 7 -- src [D, R] rows, N of them selected
local function operands(bad_at)
    local src = hk.alloc(D * R, "f32"):rand()
    local ids = {}
    for i = 1, N do ids[i] = math.random(0, D - 1) end
    if bad_at then ids[bad_at] = D + 3 end
    return hk.alloc(N * R, "f32"):fill(0 / 0), src, ids
end
-- index_select's result for the ids in range, NaN (the poison) elsewhere
local function matches(dst, src, ids)
    local s, d = src:totable(), dst:totable()
    for i = 1, N do
        for c = 1, R do
            local want = ids[i] < D and s[ids[i] * R + c] or nil
            local got = d[(i - 1) * R + c]
            if want and got ~= want then return false end
            if not want and got == got then return false end
        end
    end
    return true
end

-- a good op, then a read: nothing raised, the result right
local dst, src, ids = operands()
I.index_select(dst, src, hk.from(ids, "u32"), D, R)
t.ok(matches(dst, src, ids), "an op with every index in range: the read raises nothing, the result is right")

-- a bad op returns; the read after it raises, naming op, kernel, position
dst, src, ids = operands(5)
local okop = pcall(I.index_select, dst, src, hk.from(ids, "u32"), D, R)
t.ok(okop, "the op with an index out of range returns (its flag is read later)")
local ok, err = pcall(function() return dst[1] end)
err = tostring(err)
t.ok(not ok and err:find("indexing.index_select (an earlier call", 1, true) and
    err:find(("kernel index_select_u32_f32: ids[4] is out of range [0, %d)"):format(D), 1, true),
    "the next read raises it: " .. err)
t.ok(matches(dst, src, ids), "and the rows of the good indices were written, the bad one's left alone")
t.ok(pcall(hk.sync), "the flag is clear once read: hk.sync raises nothing after")

-- hk.sync raises it too; the buffers the op used may be gone by then
do
    local d2, s2, i2 = operands(N)
    I.index_select(d2, s2, hk.from(i2, "u32"), D, R)
    d2:free()
    s2:free()
end
collectgarbage()
ok, err = pcall(hk.sync)
t.ok(not ok and tostring(err):find("ids[" .. (N - 1) .. "] is out of range", 1, true),
    "hk.sync raises it after the op's buffers were freed: " .. tostring(err))

-- two bad ops before one wait: the first is named, the other counted
-- (operands made first: making one from a table may wait too)
local d1, s1 = operands()
local d2, s2, i2 = operands(9)
local g, gids, sids = hk.alloc(N * R, "f32"), hk.alloc(N * R, "u32"):fill(D), hk.from(i2, "u32")
I.gather(g, s1, gids, D, R)
I.index_select(d2, s2, sids, D, R)
ok, err = pcall(function() return d1:totable() end)
t.ok(not ok and tostring(err):find("indexing.gather", 1, true) and
    tostring(err):find("and 1 more call with a raised flag", 1, true), "two raised flags: the first named, one more counted: " ..
    tostring(err))

-- the session goes on: more ops than the flag area's 512 words, one bad
-- among them, read once at the end
local x = hk.alloc(D * R, "f32"):rand()
local y = hk.alloc(N * R, "f32")
for i = 1, N do ids[i] = math.random(0, D - 1) end
local good = hk.from(ids, "u32")
local badids = {}
for i = 1, N do badids[i] = ids[i] end
badids[3] = D
local badbuf = hk.from(badids, "u32")
local failed_at
for i = 1, 700 do
    local okk, e = pcall(I.index_select, y, x, i == 333 and badbuf or good, D, R)
    if not okk then failed_at = failed_at or i .. ": " .. tostring(e) end
end
ok, err = pcall(hk.sync)
-- the area filled at op 512 is read by op 513's request: the bad op (333)
-- is raised there, as op 513's error, or at the final wait
t.ok((failed_at and failed_at:find("^513:") and failed_at:find("ids[2]", 1, true) and ok) or
    (not failed_at and not ok and tostring(err):find("ids[2]", 1, true)),
    "700 ops with one bad index among them: raised once (" .. tostring(failed_at or err) .. ")")
y:fill(0 / 0)
I.index_select(y, x, good, D, R)
t.ok(matches(y, x, ids), "and ops after it run and read as before")
t.done()
