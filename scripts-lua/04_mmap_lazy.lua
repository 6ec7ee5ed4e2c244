-- A 256 MiB file mapped and registered as a buffer, read by a kernel at
-- chosen offsets, checked against the values written. The file is written
-- through a writable map by a kernel (Lua would take a minute for 256 MiB).
local path = os.tmpname()
local mib = tonumber(arg and arg[1]) or 256
local n = mib * 1024 * 1024 // 4

local m = hk.compile([==[
#include <hip/hip_runtime.h>
extern "C" __global__ void stamp(unsigned *data, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x)
        data[i] = (unsigned)i * 2654435761u;
}
extern "C" __global__ void gather(const unsigned *data, const unsigned long long *at,
                                  unsigned *out, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) out[i] = data[at[i]];
}
]==], {name = "mmap_lazy"})

-- element i (0-based) holds i * 2654435761 mod 2^32, computed here in Lua
local function value(i) return (i * 2654435761) % 4294967296 end

local w = hk.mmap(path, "u32", {write = true, create = true, length = n * 4})
m.stamp:launch(1024, 256, w, n)
w:free() -- writes the pages back to the file

local buf = hk.mmap(path, "u32") -- read-only this time
print(buf)
local offsets = {0, 1, 4096, 65535, n // 3, n // 2, n - 2, n - 1}
math.randomseed(7)
for _ = 1, 56 do offsets[#offsets + 1] = math.random(0, n - 1) end
local at = hk.from(offsets, "u64")
local out = hk.alloc(#offsets, "u32"):fill(0xDEADBEEF)
m.gather:launch(1, 64, buf, at, out, #offsets)
hk.sync()
local bad = 0
for i, off in ipairs(offsets) do
    if out[i] ~= value(off) then
        bad = bad + 1
        print(("offset %d: got %d want %d"):format(off, out[i], value(off)))
    end
end
-- the bytes on disk agree too, read with plain Lua io at one offset
local f = assert(io.open(path, "rb"))
f:seek("set", 4 * (n // 2))
local disk = string.unpack("<I4", f:read(4))
f:close()
if disk ~= value(n // 2) then bad = bad + 1 end
buf:free()
os.remove(path)
print(("mmap of %d MiB, %d offsets read by a kernel: %d wrong"):format(mib, #offsets, bad))
if bad > 0 then os.exit(1) end
print("ok")
