-- Hardening (issue 12): misuse that once crashed, hung or answered wrongly.
-- Each case failed on the main branch before its fix. Any backend.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

-- A table whose every field read runs fn first: the options' __index.
local function trap(fn, fields)
    return setmetatable({}, {__index = function(_, k)
        fn()
        return fields and fields[k]
    end})
end

-- 1. Lua code a call runs cannot free what the call is using.
do
    local b = hk.alloc(1000, "f32", "host")
    t.errors("in use by b:rand", "b:rand: options' __index freeing the buffer",
             function() b:rand(trap(function() b:free() end)) end)
    t.ok(pcall(b.fill, b, 1), "the buffer is usable after the refused free")
    t.errors("in use by b:plot", "b:plot: options' __index freeing the buffer",
             function() b:plot(trap(function() b:free() end, {print = false})) end)
    local png = os.tmpname()
    local ok_png = pcall(b.png, b, png, {kind = "line"})
    if ok_png then
        t.errors("in use by b:png", "b:png: options' __index freeing the buffer",
                 function() b:png(png, trap(function() b:free() end)) end)
    else
        t.skip("b:png", "built without libpng")
    end
    os.remove(png)
    local other = hk.alloc(1000, "f32", "host")
    other:fill(1)
    t.errors("in use by b:allclose", "b:allclose(fn): the callback freeing the buffer",
             function() b:allclose(function(i) b:free() return 1 end) end)
    t.errors("in use by b:allclose", "b:allclose(table): the table's __index freeing the buffer",
             function() b:allclose(setmetatable({}, {__len = function() return 1000 end,
                 __index = function() b:free() return 1 end})) end)
    local path = os.tmpname()
    t.errors("in use by b:save", "b:save: the shape's __index freeing the buffer",
             function() b:save(path, setmetatable({}, {__len = function() return 1 end,
                 __index = function() b:free() return 1000 end})) end)
    os.remove(path)
    -- a view's parent is held too: freeing it would free the view's memory
    local v = b:view("f32", 0, 10)
    t.errors("in use by b:rand", "b:rand on a view: freeing the buffer it views",
             function() v:rand(trap(function() b:free() end)) end)
    t.ok(b:allclose(function() return 1 end), "the buffer still holds its data")
    b:free()
    t.ok(not pcall(function() return b[1] end), "after the calls return, free works")
    other:free()

    -- k:launch: a vector argument's __index frees a buffer packed before it,
    -- or the kernel's module
    local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void put(float *out, float2 v) { if (!threadIdx.x) out[0] = v.x + v.y; }
]], {name = "test_hardening_put"})
    local out = hk.alloc(1, "f32", "host")
    local lanes = setmetatable({}, {__index = function(_, i)
        if i == 1 then out:free() end
        return i == 1 and 1 or (i == 2 and 2 or nil)
    end})
    t.errors("in use by k:launch", "k:launch: a vector's __index freeing a buffer argument",
             function() m.put:launch(1, 1, out, lanes) end)
    t.ok(pcall(m.put.launch, m.put, 1, 1, out, {1, 2}) and out[1] == 3,
         "the launch works with the buffer intact")
    local k = m.put
    local freeing = setmetatable({}, {__index = function(_, i)
        if i == 1 then m:free() end
        return i <= 2 and i or nil
    end})
    t.errors("in use by k:launch", "k:launch: a vector's __index freeing the module",
             function() k:launch(1, 1, out, freeing) end)
    t.ok(pcall(k.launch, k, 1, 1, out, {2, 2}) and out[1] == 4, "the module is still there")
    m:free()
    t.errors("module was freed", "after the launch returns, m:free() works",
             function() k:launch(1, 1, out, {1, 1}) end)
end

t.done()
