-- Kernels split at their barriers are compiled as loops only: the module
-- carries no fibers copy of them, only the translation unit to build one
-- (hk_host_fibers_unit), compiled when first needed. What needs it: a
-- fault in loop mode, whose thread is found by running the block again on
-- fibers (in the compiling process, after a cache hit in another, with the
-- module's variables as the faulted run saw them), and a code object built
-- in the default mode loaded under HIPKIT_HOST_MODE=fibers. Random data,
-- random faulting threads, results against a reference in Lua.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local exe = arg[-1]
local N = 11
local function skip_all(why)
    for _ = 1, N do t.skip("loops-only kernels and their fibers copy", why) end
    t.done()
end
if hk.device().backend ~= "host" then return skip_all("the CPU backend's") end
if not exe or not exe:find("hipkit") then return skip_all("the hipkit program is not arg[-1]") end

math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 1000)
local tag = math.random(1 << 30)
local src = ([[
#include <hip/hip_runtime.h>
// %d
__device__ int target_t;
extern "C" __global__ void mirror(const float *in, float *out, int n, int fb, int ft) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    float v = s[127 - t];
    if ((int)blockIdx.x == fb && t == ft) out[n + 16] = v;
    else out[blockIdx.x * 128 + t] = v;
}
extern "C" __global__ void by_var(float *out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = (float)t;
    __syncthreads();
    out[t == target_t && blockIdx.x == 0 ? n + 16 : blockIdx.x * 64 + t] = s[63 - t];
}
]]):format(tag)

local m = hk.compile(src, {name = "copy.hip"})
if m.mirror:info().mode ~= "loops" then
    return skip_all("not loop mode here: " .. tostring(m.mirror:info().mode_reason))
end
local vg = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true) ~= nil

local nb = math.random(3, 9)
local x = hk.alloc(nb * 128, "f32"):rand{seed = tag % 100000}
local xs = x:totable()
local out = hk.alloc(nb * 128, "f32")
local function mirror_bad(o)
    local bad = 0
    for b = 0, nb - 1 do
        for i = 0, 127 do
            if o[b * 128 + i + 1] ~= xs[b * 128 + 127 - i + 1] then bad = bad + 1 end
        end
    end
    return bad
end
m.mirror:launch(nb, 128, x, out, nb * 128, -1, -1)
t.is(mirror_bad(out:totable()), 0, "the loops-only kernel mirrors every block")

local sh = function(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local fb, ft = math.random(0, nb - 1), math.random(0, 127)
if vg then
    t.skip("a fault in a loops-only kernel names its block and thread", "under valgrind")
    t.skip("a fault found through a module variable names its thread", "under valgrind")
else
    local ok, err = pcall(m.mirror.launch, m.mirror, nb, 128, x, out, nb * 128, fb, ft)
    t.ok(not ok and err:find("kernel mirror faulted", 1, true) and
         err:find(("in block (%d, 0, 0), thread (%d, 0, 0)"):format(fb, ft), 1, true),
         ("a fault in a loops-only kernel names block %d, thread %d: %s"):format(fb, ft, tostring(err)))
    -- the thread that faults is chosen by a module variable: the fibers copy
    -- (a module of its own) must see the value the faulted run saw
    local tt = math.random(0, 63)
    m:global("target_t", "i32")[1] = tt
    local o2 = hk.alloc(2 * 64, "f32")
    ok, err = pcall(m.by_var.launch, m.by_var, 2, 64, o2, 2 * 64)
    t.ok(not ok and err:find(("in block (0, 0, 0), thread (%d, 0, 0)"):format(tt), 1, true),
         ("a fault found through a module variable names thread %d: %s"):format(tt, tostring(err)))
end

-- other processes: one compiling the same source (a cache hit: no source
-- at hand, the fibers copy comes from the code object's unit), one loading
-- the saved code object with HIPKIT_HOST_MODE=fibers
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -m 700 " .. sh(dir))
local saved = dir .. "/copy.so"
m:save(saved)
local child = dir .. "/child.lua"
local f = assert(io.open(child, "w"))
f:write([==[
local how, saved, nb, fb, ft, seed = ...
nb, fb, ft, seed = tonumber(nb), tonumber(fb), tonumber(ft), tonumber(seed)
local m = how == "load" and hk.load(saved) or hk.compile(io.open(saved .. ".hip"):read("a"), {name = "copy.hip"})
local k = how == "load" and m:kernel("mirror", "const float *in, float *out, int n, int fb, int ft") or m.mirror
local i = k:info()
print("mode " .. i.mode .. " origin " .. i.origin .. " why " .. tostring(i.mode_reason))
local x = hk.alloc(nb * 128, "f32"):rand{seed = seed}
local xs = x:totable()
local out = hk.alloc(nb * 128, "f32")
k:launch(nb, 128, x, out, nb * 128, -1, -1)
local o, bad = out:totable(), 0
for b = 0, nb - 1 do
    for j = 0, 127 do
        if o[b * 128 + j + 1] ~= xs[b * 128 + 127 - j + 1] then bad = bad + 1 end
    end
end
print("bad " .. bad)
if os.getenv("LD_PRELOAD") and os.getenv("LD_PRELOAD"):find("vgpreload", 1, true) then return end
local ok, err = pcall(k.launch, k, nb, 128, x, out, nb * 128, fb, ft)
print("err " .. tostring(err))
]==])
f:close()
f = assert(io.open(saved .. ".hip", "w"))
f:write(src)
f:close()
local function run(env, how)
    local p = io.popen(("%s HIPKIT_CACHE_DIR=%s %s --backend host %s %s %s %d %d %d %d 2>&1"):format(
        env, sh(hk.cache.dir()), sh(exe), sh(child), how, -- this process's cache, wherever it is
        sh(saved), nb, fb, ft, tag % 100000))
    local s = p:read("a")
    p:close()
    return s, (s:gsub("\n", " | ")) -- the second for test names: one line
end
local function check(s, s1, mode, name)
    t.ok(s:find("mode " .. mode, 1, true), name .. ": runs as " .. mode .. ": " .. s1)
    t.ok(s:find("\nbad 0", 1, true), name .. ": mirrors every block")
    if vg then
        t.skip(name .. ": a fault names its block and thread", "under valgrind")
    else
        t.ok(s:find(("in block (%d, 0, 0), thread (%d, 0, 0)"):format(fb, ft), 1, true),
             ("%s: a fault names block %d, thread %d"):format(name, fb, ft))
    end
end
local hit, hit1 = run("HIPKIT_HOST_MODE=auto", "compile")
t.ok(hit:find("origin cache", 1, true), "another process compiling the same source hits the cache: " .. hit1)
check(hit, hit1, "loops", "a cache hit")
local fib, fib1 = run("HIPKIT_HOST_MODE=fibers", "load")
check(fib, fib1, "fibers", "loaded under HIPKIT_HOST_MODE=fibers")
t.ok(fib:find("why HIPKIT_HOST_MODE=fibers", 1, true), "and says why: " .. fib1)
os.execute("rm -rf " .. sh(dir))
t.done()
