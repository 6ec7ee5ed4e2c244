-- A tiny TAP producer for hipkit's Lua tests:
--   local t = require("tap"); t.ok(cond, name); t.is(got, want, name); t.done()
-- Scripts find it with package.path set from their own folder (see the top
-- of test_buffers.lua).
local M = {}
local count, failed = 0, 0

local function show(v)
    if type(v) == "string" then return string.format("%q", v) end
    return tostring(v)
end

function M.diag(msg)
    for line in (tostring(msg) .. "\n"):gmatch("(.-)\n") do
        print("# " .. line)
    end
end

function M.ok(cond, name)
    count = count + 1
    print(string.format("%s %d - %s", cond and "ok" or "not ok", count, name or ""))
    if not cond then
        failed = failed + 1
        local info = debug.getinfo(2, "Sl")
        if info and info.short_src == debug.getinfo(1, "S").short_src then
            info = debug.getinfo(3, "Sl") -- called through a helper here
        end
        if info then M.diag(string.format("  at %s:%d", info.short_src, info.currentline)) end
    end
    return cond
end

-- Equal with ==, so 1 and 1.0 match; NaN never does.
function M.is(got, want, name)
    local good = got == want
    if not M.ok(good, name) then
        M.diag("       got: " .. show(got))
        M.diag("  expected: " .. show(want))
    end
    return good
end

-- |got - want| <= tol
function M.near(got, want, tol, name)
    local good = type(got) == "number" and math.abs(got - want) <= tol
    if not M.ok(good, name) then
        M.diag(string.format("  got %s, want %s within %s", show(got), show(want), show(tol)))
    end
    return good
end

-- fn(...) raises an error whose message contains `pattern` (plain text).
function M.errors(pattern, name, fn, ...)
    local good, err = pcall(fn, ...)
    local pass = not good and tostring(err):find(pattern, 1, true) ~= nil
    if not M.ok(pass, name) then
        M.diag(good and "  no error raised" or ("  error was: " .. tostring(err)))
        M.diag("  expected it to contain: " .. pattern)
    end
    return pass
end

function M.skip(name, why)
    count = count + 1
    print(string.format("ok %d - %s # SKIP %s", count, name or "", why or ""))
end

function M.done()
    print("1.." .. count)
    if failed > 0 then M.diag(string.format("failed %d of %d", failed, count)) end
    os.exit(failed == 0 and 0 or 1, true) -- close the state: finalizers run
end

return M
