-- Checked mode switched from Lua (issue 12, defect 9): hk.check(true)
-- checks the buffers allocated after it on the CPU backend. A checked
-- buffer ends at its guard page, so a write just past its end faults at
-- once and the launch names the buffer's argument and the offset; the
-- under-16-byte slack of a size that is no multiple of 16 and the bytes
-- before the start hold canaries checked after the launch. Buffers keep
-- the mode they were allocated in.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

if hk.device().backend ~= "host" then
    t.skip("checked mode", "guard pages and canaries are the CPU backend's")
    t.done()
    return
end
-- valgrind reports a deliberate fault itself before hipkit's handler turns
-- it into an error: the cases that fault a guard page are skipped there
local vg = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true) ~= nil
local env = (os.getenv("HIPKIT_CHECK") or "0") ~= "0"

local m = hk.compile([[
extern "C" __global__ void poke(float *dst, int at) { if (threadIdx.x == 0) dst[at] = 42.0f; }
]], {name = "checkmode"})
local function poke(buf, at) return pcall(m.poke.launch, m.poke, 1, 1, buf, at) end

t.is(hk.check(), env, "hk.check() says the mode HIPKIT_CHECK started with")
t.is(hk.check(false), env, "hk.check(false) returns the previous setting")
t.errors("boolean expected", "hk.check takes a boolean", function() hk.check(1) end)

-- Unchecked: 1000 f32 end 32 bytes before the guard page (64-byte aligned
-- start), so a write just past the end is silent. Why the mode exists.
local plain = hk.alloc(1000, "f32", "host"):fill(1)
t.ok(poke(plain, 1000), "unchecked: a write just past the end passes silently")

t.is(hk.check(true), false, "hk.check(true) turns it on, returning false")
t.is(hk.check(), true, "hk.check() now says true")
local a = hk.alloc(1000, "f32", "host"):fill(1)   -- 4000 bytes: ends at the page end
local odd = hk.alloc(1001, "f32", "host"):fill(1) -- 4004: 16-aligned, 12 bytes of slack
local other = hk.alloc(64, "f32", "host"):fill(7)

if not vg then
    local ok, e = poke(a, 1000)
    t.ok(not ok and e:find("0 bytes past the end of a buffer of 1000 f32, argument dst, element index 1000", 1, true),
         "checked: a write just past the end faults at once, naming argument and offset")
    if ok or not e:find("argument dst", 1, true) then t.diag(tostring(e)) end
    t.errors("past the end of a buffer of 1001 f32, argument dst",
             "a write past the slack of an odd size faults the same way",
             function() m.poke:launch(1, 1, odd, 1004) end)
else
    t.skip("checked: a write just past the end faults at once", "under valgrind")
    t.skip("a write past the slack of an odd size faults", "under valgrind")
end
local ok, e = poke(odd, 1001)
t.ok(not ok and e:find("it wrote 4 bytes past the end of a buffer of 1001 f32, argument dst (0 bytes past it; checked mode)", 1, true),
     "the slack of an odd size holds a canary: a write there fails the launch, naming the argument")
if ok or not e:find("argument dst", 1, true) then t.diag(tostring(e)) end
ok, e = poke(a, -1)
t.ok(not ok and e:find("4 bytes before the start of a buffer of 1000 f32, argument dst", 1, true),
     "a write just before the start: the canary before the data fails the launch")
t.ok(poke(a, 999), "a write inside a checked buffer launches")
t.ok(poke(odd, 1000), "... the last element of an odd size too")
t.ok(poke(plain, 1000), "a buffer allocated before hk.check(true) stays unchecked")
t.is(other[64], 7, "a buffer next to them is intact")
t.ok(poke(a, 999), "the canary was set again: the next launch passes")

t.is(hk.check(false), true, "hk.check(false) turns it off, returning true")
local late = hk.alloc(1000, "f32", "host"):fill(1)
t.ok(poke(late, 1000), "a buffer allocated after hk.check(false) is unchecked")
ok = poke(a, -1)
t.ok(not ok, "a buffer allocated in checked mode stays checked after it is turned off")
a:free()
odd:free()
t.ok(poke(late, 999), "with the checked buffers freed, launches still pass")
hk.check(env)
t.done()
