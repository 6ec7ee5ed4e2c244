-- hk.gguf on a large file: open and list a GGUF file of `gib` GiB (arg[1],
-- default 4) of f32 tensors that this script writes (sparse: it takes no
-- disk), which must not read the tensor data (ms to open and list), then
-- the first kernel over a mapped tensor (a sum of its u32 words) in GB/s,
-- next to the same kernel over a pinned host copy and a device copy.
local gib = tonumber(arg and arg[1]) or 4
local path = (os.getenv("TMPDIR") or "/tmp") .. "/hk-bench-gguf.gguf"
local per = 1 << 30
local function str(s) return string.pack("<s8", s) end
local parts = {"GGUF", string.pack("<I4I8I8", 3, gib, 1), str("general.name"),
               string.pack("<I4", 8), str("bench")}
for i = 0, gib - 1 do
    parts[#parts + 1] = str("blk." .. i .. ".weight") ..
                        string.pack("<I4I8I8I4I8", 2, per // 4 // 4096, 4096, 0, i * per)
end
local head = table.concat(parts)
head = head .. string.rep("\0", (32 - #head % 32) % 32)
local f = assert(io.open(path, "wb"))
f:write(head)
f:seek("set", #head + gib * per - 1)
f:write("\0")
f:close()

local t0 = hk.clock()
local g = hk.gguf(path)
local n = 0
for _, tensor in ipairs(g.tensors) do n = n + tensor.bytes end
local open_ms = (hk.clock() - t0) * 1e3
print(("open and list %s: %d tensors, %.1f GiB, %.2f ms"):format(path, #g.tensors, n / per, open_ms))

local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void sum_u32(const unsigned *v, unsigned long long *out, unsigned long long n) {
  unsigned long long acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)blockDim.x * gridDim.x)
    acc += v[i];
  atomicAdd(out, acc);
}]])
local out = hk.alloc(1, "u64")
local function run(b)
    local words = b:view("u32")
    local s = hk.clock()
    m.sum_u32:launch(1024, 256, words, out, #words)
    hk.sync()
    return hk.clock() - s
end
local tensor = g.tensors[1]
local mapped = tensor.buffer
local first = run(mapped)
local pinned = hk.gguf(path, {mode = "host"}).tensors[1].buffer
local dev = hk.gguf(path, {mode = "device"}).tensors[1].buffer
run(pinned)
run(dev)
local again = run(mapped)
local gb = tensor.bytes / 1e9
print(("first kernel over the mapped tensor: %.1f GB/s (again: %.1f GB/s); pinned copy %.1f GB/s; device copy %.1f GB/s")
      :format(gb / first, gb / again, gb / run(pinned), gb / run(dev)))
os.remove(path)
