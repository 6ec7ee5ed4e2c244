-- hipkit's result tables print as short aligned reports (tostring and
-- print both), and stay plain tables for fields and ipairs.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

hk.device("host")
local m = hk.compile([[
extern "C" __global__ void twice(int *v, int n) { int i = threadIdx.x; if (i < n) v[i] = 2 * v[i]; }
extern "C" __global__ void other(float *v) { __syncthreads(); }
]])

local ks = m:kernels()
t.is(tostring(ks), "2 kernels: twice, other", "m:kernels() prints as a line")
t.is(ks[1] .. #ks, "twice2", "and is still the list of names")
t.is(tostring(hk.compile("extern \"C\" __global__ void one() {}"):kernels()), "1 kernel: one", "one kernel")

local info = tostring(m.twice:info())
local want = {
    "^kernel twice%(int %*v, int n%)\n",
    "\n  origin     %a",
    "\n  registers  ",
    "\n  shared     0 B\n",
    "\n  local      0 B\n",
    "\n  arguments  16 B: v @0 %(8 B%), n @8 %(4 B%)\n",
    "\n  block      up to 1024 threads$",
}
for _, pat in ipairs(want) do
    t.ok(info:find(pat) ~= nil, "k:info() card has " .. pat:gsub("\n", "|"))
end
t.ok(tostring(m.other:info()):find("threads, uses barriers$") ~= nil, "the card says a kernel uses barriers")
t.is(m.twice:info().kernarg_size, 16, "the card's fields read as before")

local v = hk.from({1, 2, 3}, "i32")
t.is(tostring(v:stats()), "n 3  mean 2  std 0.816497  min 1  max 3", "b:stats() prints as a line")
t.is(tostring(hk.from({1, 0 / 0, 1 / 0}, "f32"):stats()):match("nan %d+  inf %d+$"), "nan 1  inf 1",
    "stats count NaN and infinities when there are any")

local devs = tostring(hk.devices())
t.ok(devs:find("^%d+ devices?\n  1  ") ~= nil, "hk.devices() prints a count and one line per device")
t.ok(devs:find("host:0", 1, true) ~= nil, "naming the host device")

local bs = tostring(hk.backends())
t.ok(bs:find("^%d+ backends?\n") and bs:find("\n  host  1 device%(s%)"), "hk.backends() aligns the names")

local b = hk.bench(function() m.twice:launch(1, 64, v, 3) end, {print = false, label = "twice", bytes = 12, reps = 3})
t.ok(tostring(b):find("^twice: median %d+%.%d+ ms %(min %d+%.%d+, max %d+%.%d+, 3 runs%), %d+%.%d GB/s$") ~= nil,
    "hk.bench's result prints as the timing line: " .. tostring(b))
t.is(b.label, "twice", "and keeps its label")

local ps = tostring(hk.plugins())
t.ok(ps:find("^%d+ kernel famil") ~= nil and ps:find("\n  binary  ") ~= nil, "hk.plugins() lists the families")
t.ok(ps:find("kernels +%d+ ops") ~= nil, "with their kernel and op counts")

t.done()
