-- The source the quantized probes and checks compile: the shared part of
-- kernels/quantized/quantized.hip (everything before its instantiations,
-- "#define HKQ_DEQ"), then the named bench kernel files beside this script.
-- Usage: local source = dofile(dir .. "quantized_source.lua")
--        local src = source(path_to_quantized_hip, {"quantized_tma.hip"})
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local function read(path)
    local f = assert(io.open(path, "r"))
    local text = f:read("a")
    f:close()
    return text
end
return function(path, extras)
    local text = read(path)
    local src = text:sub(1, assert(text:find("#define HKQ_DEQ", 1, true)) - 1)
    for _, name in ipairs(extras or {}) do src = src .. read(here .. name) end
    return src
end
