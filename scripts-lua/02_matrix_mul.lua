-- 256x256 matrix product: times the identity gives A back exactly, then a
-- random B against a CPU reference.
local n = 256
local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];
        C[row * n + col] = acc;
    }
}
]], {name = "matmul"})

local A = hk.alloc(n * n, "f32"):rand{seed = 1, lo = -1, hi = 1}
local I = hk.alloc(n * n, "f32"):fill(0)
for i = 0, n - 1 do I[i * n + i + 1] = 1 end
local C = hk.alloc(n * n, "f32"):fill(0 / 0)
local grid, block = {n // 16, n // 16}, {16, 16}
m.matmul:launch(grid, block, A, I, C, n)
hk.sync()
local ok = C:allclose(A, 0, 0)
print(("A x I == A: %s"):format(ok and "ok" or "FAILED"))
if not ok then os.exit(1) end

local B = hk.alloc(n * n, "f32"):rand{seed = 2, lo = -1, hi = 1}
C:fill(0 / 0)
m.matmul:launch(grid, block, A, B, C, n)
hk.sync()
local a, b = A:totable(), B:totable()
local ok2, _, msg = C:allclose(function(idx)
    local r, c = (idx - 1) // n, (idx - 1) % n
    local acc = 0.0
    for k = 0, n - 1 do acc = acc + a[r * n + k + 1] * b[k * n + c + 1] end
    return acc
end, 1e-4, 1e-5)
print(("A x B against a Lua loop: %s"):format(ok2 and "ok" or ("FAILED: " .. tostring(msg))))
if not ok2 then os.exit(1) end
