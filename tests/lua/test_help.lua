-- help()'s entries are the one source of the API reference: every function
-- of hk, hk.cache and the buffer, module and kernel methods has one, every
-- entry names something that exists, and docs/lua-api.md's reference is
-- what hk.docs("markdown") generates from them.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

local entries = hk.docs()
local by_name = {}
for _, e in ipairs(entries) do
    t.ok(e.section ~= "" and e.signature ~= "" and e.doc ~= "" and not e.doc:find("\n"),
        e.name .. ": a section, a signature and one doc line")
    by_name[e.name] = e
end

local b = hk.alloc(1)
local m = hk.compile('extern "C" __global__ void k(int *v) {}')
local function methods(obj)
    local mt = getmetatable(obj)
    return type(mt.methods) == "table" and mt.methods or mt.__index
end
local owners = {
    {"hk.", hk}, {"hk.cache.", hk.cache}, {"hk.plugins.", hk.plugins}, {"b:", methods(b)},
    {"m:", methods(m)}, {"k:", methods(m.k)},
    {"g:", methods(hk.graph(function() end))},
}
owners[#owners + 1] = {"s:", methods(hk.stream())}
owners[#owners + 1] = {"e:", methods(hk.event())}
-- a function, or a table that is called as one (hk.plugins)
local function callable(v)
    local mt = getmetatable(v)
    return type(v) == "function" or (type(v) == "table" and mt and mt.__call ~= nil)
end
local missing = {}
for _, o in ipairs(owners) do
    for name, v in pairs(o[2]) do
        if callable(v) and not by_name[o[1] .. name] then
            missing[#missing + 1] = o[1] .. name
        end
    end
end
table.sort(missing)
t.is(table.concat(missing, " "), "", "every function of hk and every method has a help entry")

local stale = {}
for _, e in ipairs(entries) do
    local owner, key = e.name:match("^(.*[.:])([%w_]+)$")
    local v
    if not owner then v = _G[e.name] else
        for _, o in ipairs(owners) do if o[1] == owner then v = o[2][key] end end
    end
    if not callable(v) then stale[#stale + 1] = e.name end
end
t.is(table.concat(stale, " "), "", "every entry names a function that exists")

local path = arg[0]:match("(.*/)") .. "../../docs/lua-api.md"
local f = assert(io.open(path))
local text = f:read("a")
f:close()
local section = text:match("<!%-%- reference:begin %-%->\n(.-)<!%-%- reference:end %-%->")
t.ok(section ~= nil, "docs/lua-api.md has the reference markers")
t.ok(section == hk.docs("markdown"),
    "docs/lua-api.md's reference is generated from the entries (regenerate it with " ..
    "hipkit -e 'io.write(hk.docs(\"markdown\"))' between the markers)")
t.ok(tostring(hk):find("^hk: hipkit's module") and tostring(hk):find("\n  Buffers +hk%.alloc"),
    "tostring(hk) lists the module's sections")

t.done()
