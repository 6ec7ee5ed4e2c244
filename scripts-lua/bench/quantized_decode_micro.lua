-- How fast can a warp turn packed 4-bit weights into f32 products? A
-- microbenchmark of the decode step alone (docs/families/quantized-notes.md,
-- v18): every thread holds 8 words (64 nibbles, q4_0's layout: low nibbles
-- elements 0-15, high nibbles 16-31) and 8 x values in registers and runs
-- the step `iters` times, the words changing every iteration. Variants:
--   prmt:  v15's step, 2^23 + n by a byte permute, an FADD, an FFMA a weight
--   sub32: v17's, n as the subnormal float of its bits: a PRMT, an FFMA
--   h16:   two weights a LOP3 as f16 halves 1024 + n (or 1024 + 16 n), each
--          converted to f32 and the bias taken off in f32, then an FFMA
--   h16p:  the same, the bias taken off both halves by one HSUB2 before
--          the conversions (exact in f16)
--   h16s:  two weights a LOP3 as f16 subnormals n 2^-24, converted, an FFMA
--          (no bias: it would come off with x's sums)
-- Prints weights a nanosecond and each kernel's instruction mix.
-- NVIDIA only (PRMT, f16 conversions): other backends print a skip.
-- Usage: hipkit --backend cuda scripts-lua/bench/quantized_decode_micro.lua [iters]
local dev = hk.device()
if dev.backend ~= "cuda" then
    print("# SKIP: the decode microbenchmark needs the cuda backend")
    return
end
local iters = tonumber(arg and arg[1]) or 2048
local src = [[
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
__device__ inline unsigned lop_and_or(unsigned a, unsigned m, unsigned k)
{
    unsigned r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(a), "r"(m), "r"(k)); // (a & m) | k
    return r;
}
__device__ inline float mag(unsigned w, int k) { return __uint_as_float(__byte_perm(w, 0x4B000000u, 0x7440u + k)); }
__device__ inline float sub32(unsigned w, int k) { return __uint_as_float(__byte_perm(w, 0u, 0x4440u + k)); }
__device__ inline float lo(unsigned v) { return __low2float(*(const __half2 *)&v); }
__device__ inline float hi(unsigned v) { return __high2float(*(const __half2 *)&v); }
__device__ inline unsigned hsub(unsigned v, unsigned b)
{
    __half2 r = __hsub2(*(const __half2 *)&v, *(const __half2 *)&b);
    return *(const unsigned *)&r;
}
template <int V> __device__ inline void step(unsigned w, const float *x, float &s0, float &s1, unsigned K, unsigned M0,
                                             unsigned M1)
{
    if (V == 0) {
        unsigned a = w & 0x0F0F0F0Fu, b = (w >> 4) & 0x0F0F0F0Fu;
        for (int k = 0; k < 4; k++) s0 += (mag(a, k) - 8388616.0f) * x[k];
        for (int k = 0; k < 4; k++) s1 += (mag(b, k) - 8388616.0f) * x[4 + k];
    } else if (V == 1) {
        unsigned a = w & 0x0F0F0F0Fu, b = (w >> 4) & 0x0F0F0F0Fu;
        for (int k = 0; k < 4; k++) s0 += sub32(a, k) * x[k];
        for (int k = 0; k < 4; k++) s1 += sub32(b, k) * x[4 + k];
    } else if (V == 2 || V == 3) {
        unsigned v = w >> 8;
        unsigned A = lop_and_or(w, M0, K), C = lop_and_or(v, M0, K); // 1024 + n: elements 0, 2 / 1, 3
        unsigned B = lop_and_or(w, M1, K), D = lop_and_or(v, M1, K); // 1024 + 16 n: 16, 18 / 17, 19
        if (V == 3) {
            A = hsub(A, 0x64086408u), C = hsub(C, 0x64086408u);
            B = hsub(B, 0x64806480u), D = hsub(D, 0x64806480u);
            s0 += lo(A) * x[0]; s0 += lo(C) * x[1]; s0 += hi(A) * x[2]; s0 += hi(C) * x[3];
            s1 += lo(B) * x[4]; s1 += lo(D) * x[5]; s1 += hi(B) * x[6]; s1 += hi(D) * x[7];
        } else {
            s0 += (lo(A) - 1032.0f) * x[0]; s0 += (lo(C) - 1032.0f) * x[1];
            s0 += (hi(A) - 1032.0f) * x[2]; s0 += (hi(C) - 1032.0f) * x[3];
            s1 += (lo(B) - 1152.0f) * x[4]; s1 += (lo(D) - 1152.0f) * x[5];
            s1 += (hi(B) - 1152.0f) * x[6]; s1 += (hi(D) - 1152.0f) * x[7];
        }
    } else {
        unsigned v = w >> 8;
        unsigned A = w & M0, C = v & M0, B = w & M1, D = v & M1;
        s0 += lo(A) * x[0]; s0 += lo(C) * x[1]; s0 += hi(A) * x[2]; s0 += hi(C) * x[3];
        s1 += lo(B) * x[4]; s1 += lo(D) * x[5]; s1 += hi(B) * x[6]; s1 += hi(D) * x[7];
    }
}
template <int V> __device__ void run(const unsigned *wg, const float *xg, float *y, int iters, unsigned K)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned w[8];
    float x[8];
    for (int j = 0; j < 8; j++) w[j] = wg[(t * 8 + j) & 4095], x[j] = xg[(t + j) & 4095];
    // the masks in registers, so that (a & m) | k is one LOP3
    const unsigned M0 = K ^ 0x640F640Fu ^ 0x000F000Fu ^ 0x640F640Fu, M1 = M0 << 4;
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < 8; j++) step<V>(w[j] + i, x, s[j & 2], s[(j & 2) + 1], K, M0, M1);
    }
    y[t] = (s[0] + s[1]) + (s[2] + s[3]);
}
extern "C" __global__ void prmt(const unsigned *w, const float *x, float *y, int n, unsigned K) { run<0>(w, x, y, n, K); }
extern "C" __global__ void sub32(const unsigned *w, const float *x, float *y, int n, unsigned K) { run<1>(w, x, y, n, K); }
extern "C" __global__ void h16(const unsigned *w, const float *x, float *y, int n, unsigned K) { run<2>(w, x, y, n, K); }
extern "C" __global__ void h16p(const unsigned *w, const float *x, float *y, int n, unsigned K) { run<3>(w, x, y, n, K); }
extern "C" __global__ void h16s(const unsigned *w, const float *x, float *y, int n, unsigned K) { run<4>(w, x, y, n, K); }
]]
local m = hk.compile(src, {name = "quantized_decode_micro.hip"})
local grid, block = 132 * 8, 256
local w = hk.alloc(4096, "u32"):rand{seed = 1, lo = 0, hi = 4294967295}
local x = hk.alloc(4096, "f32"):rand{seed = 2, lo = -1, hi = 1}
local y = hk.alloc(grid * block, "f32")
local weights = grid * block * iters * 64
print(("decode micro on %s: %d blocks of %d, %d iterations of 64 weights a thread"):format(dev.name or "?", grid,
                                                                                           block, iters))
for _, name in ipairs{"prmt", "sub32", "h16", "h16p", "h16s"} do
    local k = m[name]
    local r = hk.bench(function() k{grid = grid, block = block}(w, x, y, iters, 0x64006400) end,
                       {reps = 5, warmup = 1, print = false})
    local ms = r.median
    local mix = {}
    local ok, dis = pcall(function() return k:disasm() end)
    if ok and dis then
        local counts = {}
        for op in dis:gmatch("/%*%x+%*/%s+([%u][%u%d_]*[%.%u%d]*)") do
            local base = op:match("^[%u%d_]+")
            counts[base] = (counts[base] or 0) + 1
        end
        local names = {}
        for o in pairs(counts) do names[#names + 1] = o end
        table.sort(names, function(a, b) return counts[a] > counts[b] end)
        for i = 1, math.min(9, #names) do mix[#mix + 1] = names[i] .. " " .. counts[names[i]] end
    end
    print(("  %-6s %8.3f ms  %7.1f G weights/s  regs %s   %s"):format(name, ms, weights / ms / 1e6,
                                                                    tostring(k:info().registers),
                                                                    table.concat(mix, ", ")))
end
