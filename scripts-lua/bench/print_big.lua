-- print of a 10^8-element buffer must return at once: it reads six elements.
local n = tonumber(arg and arg[1]) or 100000000
local b = hk.alloc(n, "f32")
local t0 = os.clock()
local s = tostring(b)
local ms = (os.clock() - t0) * 1e3
print(s)
print(("tostring of a %d-element buffer: %.3f ms"):format(n, ms))
