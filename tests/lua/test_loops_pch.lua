-- libclang's precompiled hip_runtime.h for loop mode's parse: built at the
-- first compile that parses, kept in the disk cache, used by the next
-- process (whose work folder is a new one), and a damaged entry costs only
-- time: every compile still runs its kernel in loop mode with the right
-- result. Each step is a new hipkit process with a cache of its own.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local exe = arg[-1]
local function skip_all(why)
    for _ = 1, 6 do t.skip("libclang's precompiled header", why) end
    t.done()
end
if hk.device().backend ~= "host" then return skip_all("the CPU backend's") end
if not exe or not exe:find("hipkit") then return skip_all("the hipkit program is not arg[-1]") end
local probe = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void probe(float *x) { x[threadIdx.x] = 1; __syncthreads(); }
]], {name = "pch_probe.hip"})
if probe.probe:info().mode ~= "loops" then
    return skip_all("no loop mode here: " .. tostring(probe.probe:info().mode_reason))
end

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -m 700 " .. sh_quote(dir))
-- the child: a block sum in a source of its own, on random data, checked
-- against a sum in double; prints its mode and its count of wrong sums
local child = dir .. "/child.lua"
local f = assert(io.open(child, "w"))
f:write([==[
local tag = ...
local m = hk.compile(([[
#include <hip/hip_runtime.h>
// ]] .. tag .. [[

extern "C" __global__ void block_sum(const float *in, float *out) {
    __shared__ float s[96];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 96 + tid];
    __syncthreads();
    for (int st = 48; st > 2; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0] + s[1] + s[2];
}
]]), {name = "pch_child.hip"})
local nb = 37
local x = hk.alloc(nb * 96, "f32"):rand{seed = tonumber(tag)}
local xs = x:totable()
local o = hk.alloc(nb, "f32"):fill(-1e30)
m.block_sum:launch(nb, 96, x, o)
local bad = 0
for b = 0, nb - 1 do
    local s = 0
    for j = 1, 96 do s = s + xs[b * 96 + j] end
    if math.abs(o[b + 1] - s) > 1e-4 * math.abs(s) + 1e-4 then bad = bad + 1 end
end
print("mode " .. m.block_sum:info().mode .. " bad " .. bad)
]==])
f:close()
local function run(tag)
    local p = io.popen(string.format("HIPKIT_CACHE_DIR=%s HIPKIT_HOST_PCH=1 %s --backend host %s %d 2>&1",
                                     sh_quote(dir .. "/cache"), sh_quote(exe), sh_quote(child), tag))
    local out = p:read("a")
    p:close()
    return out
end
local function pch_files()
    local p = io.popen("ls " .. sh_quote(dir .. "/cache/loops-pch") .. " 2>/dev/null")
    local names = {}
    for l in p:lines() do names[#names + 1] = l end
    p:close()
    return names
end
local base = math.random(1, 1 << 20)
local out = run(base)
t.ok(out:find("mode loops bad 0", 1, true), "first process: loop mode, right sums: " .. out)
local names = pch_files()
t.is(#names, 1, "the precompiled header is in the disk cache")
out = run(base + 1)
t.ok(out:find("mode loops bad 0", 1, true), "a new process (a new work folder) parses with it: " .. out)
-- damage the entry's bytes in the middle: the cache's checksum refuses it
if names[1] then
    local path = dir .. "/cache/loops-pch/" .. names[1]
    local g = assert(io.open(path, "r+b"))
    local size = g:seek("end")
    g:seek("set", size // 2)
    g:write(string.rep("\0", 4096))
    g:close()
end
out = run(base + 2)
t.ok(out:find("mode loops bad 0", 1, true), "a damaged entry: still loop mode, right sums: " .. out)
local function middle_is_zero()
    local g = io.open(dir .. "/cache/loops-pch/" .. (pch_files()[1] or "none"), "rb")
    if not g then return true end
    local size = g:seek("end")
    g:seek("set", size // 2)
    local bytes = g:read(4096) or ""
    g:close()
    return bytes == string.rep("\0", 4096)
end
t.ok(#pch_files() == 1 and not middle_is_zero(), "the damaged entry was replaced by a rebuilt one")
out = run(base + 3)
t.ok(out:find("mode loops bad 0", 1, true), "and the next process uses the new one: " .. out)
os.execute("rm -rf " .. sh_quote(dir))
t.done()
