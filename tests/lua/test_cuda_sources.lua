-- CUDA kernel sources as they are, on any backend: <cuda_fp8.h>'s types
-- and conversions, <cuda/std/limits>, CUDA's SIMD and dp4a intrinsics, the
-- 16-bit atomicCAS candle's half max is built on, min() of a coordinate,
-- shuffles of bfloat16. Each kernel runs on fresh random data with
-- poisoned outputs and is checked against a reference written here from
-- the formats' definitions (on the NVIDIA backend the toolkit's own
-- cuda_fp8.h answers, so the same checks hold hipkit's header to CUDA's).
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed)

local src = [[
#include "cuda_fp16.h"
#include "cuda_bf16.h"
#include "cuda_fp8.h"
#include <cuda/std/limits>
#include <stdint.h>

extern "C" __global__ void f8_decode(const uint8_t *in, float *e4, float *e5, __half *h4, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_fp8_e4m3 a;
    a.__x = in[i];
    __nv_fp8_e5m2 b;
    b.__x = in[i];
    e4[i] = float(a);
    e5[i] = float(b);
    h4[i] = __half(__nv_cvt_fp8_to_halfraw(in[i], __NV_E4M3));
}

extern "C" __global__ void f8_encode(const float *x, uint8_t *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[5 * i + 0] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
    out[5 * i + 1] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E4M3);
    out[5 * i + 2] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
    out[5 * i + 3] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E5M2);
    out[5 * i + 4] = __nv_fp8_e4m3(x[i]).__x;
}

extern "C" __global__ void simd(const int *a, const int *b, int *subss, int *dp, unsigned int *dpu, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    subss[i] = __vsubss4(a[i], b[i]);
    dp[i] = __dp4a(a[i], b[i], i - 500);
    dpu[i] = __dp4a((unsigned int)a[i], (unsigned int)b[i], (unsigned int)i);
}

// candle's atomicMaxf for __half, as compatibility.cuh writes it (sm_70+)
__device__ __half half_max_cas(__half *address, __half val)
{
    unsigned short int *casted = (unsigned short int *)address;
    unsigned short int old = *casted, assumed;
    do {
        assumed = old;
        __half cur = __ushort_as_half(assumed);
        __half pick = __half2float(val) > __half2float(cur) ? val : cur;
        old = atomicCAS(casted, assumed, __half_as_ushort(pick));
    } while (assumed != old);
    return __ushort_as_half(old);
}

extern "C" __global__ void hmax(const __half *x, __half *out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        half_max_cas(out + (i & 1), x[i]);
}

extern "C" __global__ void misc(const __nv_bfloat16 *x, float *warp_max, long long *lim)
{
    __nv_bfloat16 v = x[threadIdx.x];
    for (int m = 16; m > 0; m >>= 1) {
        __nv_bfloat16 o = __shfl_xor_sync(0xffffffffu, v, m, 32);
        v = __bfloat162float(o) > __bfloat162float(v) ? o : v;
    }
    if (threadIdx.x % 32 == 0)
        warp_max[threadIdx.x / 32] = __bfloat162float(v);
    if (threadIdx.x == 0) {
        lim[0] = cuda::std::numeric_limits<int>::max();
        lim[1] = cuda::std::numeric_limits<short>::lowest();
        lim[2] = min(1000u, blockDim.x);
    }
}
]]

-- CUDA's own sources test __CUDA_ARCH__, which only the NVIDIA backend
-- defines; this one does not need it.
local m = hk.compile(src, {name = "cuda_style.cu"})
local names = {}
for _, n in ipairs(m:kernels()) do names[n] = true end
t.ok(names.f8_decode and names.f8_encode and names.simd and names.hmax and names.misc,
     "a CUDA source with cuda_fp8.h and cuda/std/limits compiles on the " .. hk.device().backend
     .. " backend, every kernel listed")

-- fp8 from the definition: kind = {m = mantissa bits, bias, e4m3 = true/false}
local E4 = {m = 3, bias = 7, max = 0x7e, e4m3 = true}
local E5 = {m = 2, bias = 15, max = 0x7b, e4m3 = false}
local function decode(byte, k)
    local sign = byte >= 0x80 and -1 or 1
    local mag = byte & 0x7f
    local field, mant = mag >> k.m, mag & ((1 << k.m) - 1)
    if k.e4m3 and mag == 0x7f then return 0 / 0 end
    if not k.e4m3 and field == 31 then return mant == 0 and sign * math.huge or 0 / 0 end
    if field == 0 then return sign * mant * 2.0 ^ (1 - k.bias - k.m) end
    return sign * (1 + mant / (1 << k.m)) * 2.0 ^ (field - k.bias)
end
-- nearest finite code to |x|, ties to the even code; the code one past the
-- largest finite value stands for "overflow"
local function encode(x, k, sat)
    if x ~= x then return nil end -- NaN: checked by class below
    local sign = (x < 0 or 1 / x < 0) and 0x80 or 0
    local a = math.abs(x)
    local top = decode(k.max, k) + (decode(k.max, k) - decode(k.max - 1, k)) -- past the max
    local best, bd = nil, math.huge
    for c = 0, k.max + 1 do
        local v = c <= k.max and decode(c, k) or top
        local d = math.abs(v - a)
        if d < bd or (d == bd and c % 2 == 0) then best, bd = c, d end
    end
    if a > top or best == k.max + 1 then
        best = sat and k.max or (k.e4m3 and 0x7f or 0x7c)
    end
    return sign | best
end

local all = {}
for i = 0, 255 do all[i + 1] = i end
local bytes = hk.from(all, "u8")
local e4, e5, h4 = hk.alloc(256, "f32"), hk.alloc(256, "f32"), hk.alloc(256, "f16")
e4:fill(12345); e5:fill(12345); h4:fill(12345)
m.f8_decode:launch(2, 128, bytes, e4, e5, h4, 256)
local g4, g5, gh = e4:totable(), e5:totable(), h4:totable()
local bad = {}
for b = 0, 255 do
    local r4, r5 = decode(b, E4), decode(b, E5)
    local same = function(x, y) return (x ~= x and y ~= y) or x == y end
    if not (same(g4[b + 1], r4) and same(g5[b + 1], r5) and same(gh[b + 1], r4)) then
        bad[#bad + 1] = string.format("0x%02x: e4m3 %s (want %s) e5m2 %s (want %s) half %s", b,
            g4[b + 1], r4, g5[b + 1], r5, gh[b + 1])
    end
end
t.ok(#bad == 0, "every one of the 256 fp8 bytes decodes exactly as e4m3, e5m2 and e4m3 to half"
     .. (#bad > 0 and " (" .. #bad .. " wrong; first " .. bad[1] .. ")" or ""))

-- inputs: random magnitudes from far below the least subnormal to past the
-- largest value, every midpoint between neighbouring fp8 values (the ties),
-- and the edges
local xs = {0.0, -0.0, math.huge, -math.huge, 448, 464, 465, -464, 480, 57344, 61440, 61439,
            65536, 2.0 ^ -9, 2.0 ^ -10, 2.0 ^ -10 * 1.0001, 2.0 ^ -17, 2.0 ^ -18, 1e30, -1e-30}
for _, k in ipairs({E4, E5}) do
    for c = 0, k.max - 1 do
        local mid = (decode(c, k) + decode(c + 1, k)) / 2
        xs[#xs + 1] = mid
        xs[#xs + 1] = -mid
    end
end
for _ = 1, 1500 do
    local v = 2.0 ^ (math.random() * 40 - 22) * (math.random() < 0.5 and -1 or 1)
    xs[#xs + 1] = v
end
local n = #xs
local x = hk.from(xs, "f32")
local xv = x:totable() -- as f32 holds them
local out = hk.alloc(5 * n, "u8")
out:fill(0xAB)
m.f8_encode:launch((n + 127) // 128, 128, x, out, n)
local got = out:totable()
bad = {}
local function check(i, j, k, sat, what)
    local g, want = got[5 * (i - 1) + j + 1], encode(xv[i], k, sat)
    local ok
    if want == nil then -- NaN in: a NaN of the kind out
        ok = k.e4m3 and (g & 0x7f) == 0x7f or (not k.e4m3 and (g & 0x7c) == 0x7c and (g & 3) ~= 0)
    else
        ok = g == want
    end
    if not ok then
        bad[#bad + 1] = string.format("%s(%.9g) = 0x%02x, want %s", what, xv[i], g,
                                      want and string.format("0x%02x", want) or "NaN")
    end
end
for i = 1, n do
    check(i, 0, E4, true, "e4m3 satfinite")
    check(i, 1, E4, false, "e4m3 nosat")
    check(i, 2, E5, true, "e5m2 satfinite")
    check(i, 3, E5, false, "e5m2 nosat")
    check(i, 4, E4, true, "__nv_fp8_e4m3")
end
t.ok(#bad == 0, string.format("%d floats (ties, edges, random) to e4m3 and e5m2 in both saturation "
     .. "modes and by the constructor, each to the nearest even code", n)
     .. (#bad > 0 and " (" .. #bad .. " wrong; first " .. bad[1] .. ")" or ""))
local nan_in = hk.from({0 / 0}, "f32")
local nan_out = hk.alloc(5, "u8")
nan_out:fill(0)
m.f8_encode:launch(1, 32, nan_in, nan_out, 1)
local nv = nan_out:totable()
t.ok((nv[1] & 0x7f) == 0x7f and (nv[2] & 0x7f) == 0x7f and (nv[3] & 0x7c) == 0x7c and (nv[3] & 3) ~= 0,
     "NaN converts to NaN (e4m3 S.1111.111, e5m2 S.11111.xx with xx nonzero)")

-- SIMD and dp4a against byte-wise references
local cnt = 1000
local function rint() return math.random(0, 0xffffffff) - (1 << 31) end
local av, bv = {}, {}
for i = 1, cnt do av[i], bv[i] = rint(), rint() end
local a, b = hk.from(av, "i32"), hk.from(bv, "i32")
local subss, dp, dpu = hk.alloc(cnt, "i32"), hk.alloc(cnt, "i32"), hk.alloc(cnt, "u32")
subss:fill(-7); dp:fill(-7); dpu:fill(7)
m.simd:launch((cnt + 127) // 128, 128, a, b, subss, dp, dpu, cnt)
local gs, gd, gu = subss:totable(), dp:totable(), dpu:totable()
local function sbyte(w, j) local v = (w >> (8 * j)) & 0xff return v >= 128 and v - 256 or v end
local function ubyte(w, j) return (w >> (8 * j)) & 0xff end
local function wrap32s(v) v = v & 0xffffffff return v >= (1 << 31) and v - (1 << 32) or v end
local bs, bd, bu = 0, 0, 0
local rs, rd, ru = {}, {}, {} -- the references, for the own-intrinsics check below
for i = 1, cnt do
    local r, d, u = 0, i - 1 - 500, i - 1
    for j = 0, 3 do
        local s = sbyte(av[i], j) - sbyte(bv[i], j)
        s = s < -128 and -128 or s > 127 and 127 or s
        r = r | ((s & 0xff) << (8 * j))
        d = d + sbyte(av[i], j) * sbyte(bv[i], j)
        u = u + ubyte(av[i], j) * ubyte(bv[i], j)
    end
    rs[i], rd[i], ru[i] = wrap32s(r), wrap32s(d), u & 0xffffffff
    if gs[i] ~= wrap32s(r) then bs = bs + 1 end
    if gd[i] ~= wrap32s(d) then bd = bd + 1 end
    if gu[i] ~= u & 0xffffffff then bu = bu + 1 end
end
t.ok(bs == 0, string.format("__vsubss4 saturates each signed byte (%d of %d wrong)", bs, cnt))
t.ok(bd == 0 and bu == 0, string.format("__dp4a signed and unsigned: byte products plus c "
     .. "(%d and %d of %d wrong)", bd, bu, cnt))

-- ggml's HIP code once defined CUDA's intrinsics itself, off NVIDIA:
-- the source's own definitions compile beside hipkit's and are the ones
-- called; CUDA's char4 / uchar4 forms of __dp4a.
local own = hk.compile([[
#ifndef __CUDA_ARCH__
static __device__ __forceinline__ int __dp4a(const int a, const int b, int c)
{
    const signed char *x = (const signed char *)&a, *y = (const signed char *)&b;
    return c + x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + OWN_MARK;
}
static __device__ __forceinline__ unsigned int __vsubss4(unsigned int a, unsigned int b)
{
    unsigned int r = 0;
    for (int k = 0; k < 32; k += 8) {
        int d = (int)(signed char)(a >> k) - (int)(signed char)(b >> k);
        d = d < -128 ? -128 : d > 127 ? 127 : d;
        r |= (unsigned int)(d & 0xff) << k;
    }
    return r;
}
#endif
extern "C" __global__ void own(const int *a, const int *b, int *subss, int *dp, int *dpc, unsigned int *dpuc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    subss[i] = __vsubss4(a[i], b[i]);
    dp[i] = __dp4a(a[i], b[i], i - 500);
    char4 ca = make_char4(a[i], a[i] >> 8, a[i] >> 16, a[i] >> 24);
    char4 cb = make_char4(b[i], b[i] >> 8, b[i] >> 16, b[i] >> 24);
    uchar4 ua = make_uchar4(a[i], a[i] >> 8, a[i] >> 16, a[i] >> 24);
    uchar4 ub = make_uchar4(b[i], b[i] >> 8, b[i] >> 16, b[i] >> 24);
    dpc[i] = __dp4a(ca, cb, i - 500);
    dpuc[i] = __dp4a(ua, ub, (unsigned int)i);
}
]], {name = "own_simd.cu", defines = {hk.device().backend == "cuda" and "OWN_MARK=0" or "OWN_MARK=1000000"}})
local osub, odp, odpc, odpu = hk.alloc(cnt, "i32"), hk.alloc(cnt, "i32"), hk.alloc(cnt, "i32"), hk.alloc(cnt, "u32")
osub:fill(-7); odp:fill(-7); odpc:fill(-7); odpu:fill(7)
own.own:launch((cnt + 127) // 128, 128, a, b, osub, odp, odpc, odpu, cnt)
local mark = hk.device().backend == "cuda" and 0 or 1000000
local os_, od, oc, ou = osub:totable(), odp:totable(), odpc:totable(), odpu:totable()
local wo, wc = 0, 0
for i = 1, cnt do
    if os_[i] ~= rs[i] or od[i] ~= wrap32s(rd[i] + mark) then wo = wo + 1 end
    if oc[i] ~= rd[i] or ou[i] ~= ru[i] then wc = wc + 1 end
end
t.ok(wo == 0, string.format("a source's own __dp4a and __vsubss4 compile beside hipkit's and are "
     .. "the ones called (%d of %d wrong)", wo, cnt))
t.ok(wc == 0, string.format("__dp4a of char4 and of uchar4 (%d of %d wrong)", wc, cnt))

-- candle's half max by the 16-bit atomicCAS: every thread of many blocks
-- on two words; the result is the largest input of each parity
local hn = 3001
local hx = hk.alloc(hn, "f16")
hx:rand{lo = -100, hi = 100}
local hout = hk.from({-65504, -65504}, "f16")
m.hmax:launch(5, 96, hx, hout, hn)
local hv, want = hx:totable(), {-65504, -65504}
for i = 1, hn do
    local p = (i - 1) % 2 + 1
    if hv[i] > want[p] then want[p] = hv[i] end
end
local hg = hout:totable()
t.ok(hg[1] == want[1] and hg[2] == want[2],
     string.format("16-bit atomicCAS: half max of %d values over 480 threads (%s %s, want %s %s)",
                   hn, hg[1], hg[2], want[1], want[2]))

-- bfloat16 shuffles stay bfloat16; numeric_limits; min(n, blockDim.x)
local bx = hk.alloc(64, "bf16")
bx:rand{lo = -50, hi = 50}
local wmax, lim = hk.alloc(2, "f32"), hk.alloc(3, "i64")
wmax:fill(0 / 0); lim:fill(-1)
m.misc:launch(1, 64, bx, wmax, lim)
local bvv, wm = bx:totable(), wmax:totable()
local r1, r2 = -math.huge, -math.huge
for i = 1, 32 do r1 = math.max(r1, bvv[i]) end
for i = 33, 64 do r2 = math.max(r2, bvv[i]) end
t.ok(wm[1] == r1 and wm[2] == r2, "__shfl_xor_sync of a bfloat16: each warp's maximum")
local lv = lim:totable()
t.ok(lv[1] == 2147483647 and lv[2] == -32768 and lv[3] == 64,
     "cuda::std::numeric_limits<int>::max(), <short>::lowest(), min(1000u, blockDim.x)")

-- A source that tests __CUDA_ARCH__ (candle's compatibility.cuh) and fails
-- where it is undefined: the error says so and how to set it.
if hk.device().backend ~= "cuda" then
    local arch_src = [[
#include "cuda_fp16.h"
#if __CUDA_ARCH__ < 800
__device__ __half __hmax_nan(__half a, __half b) { return a; }
#endif
extern "C" __global__ void k(__half *p) { p[0] = __hmax_nan(p[0], p[1]); }
]]
    local ok, err = pcall(hk.compile, arch_src, {name = "arch.cu"})
    t.ok(not ok and tostring(err):find("__CUDA_ARCH__", 1, true)
         and tostring(err):find("defines", 1, true),
         "a compile error in a source that tests __CUDA_ARCH__ ends with a note on defining it")
    local m2 = hk.compile(arch_src, {name = "arch.cu", defines = {"__CUDA_ARCH__=800"}})
    t.ok(m2.k ~= nil, "the same source compiles with defines = {\"__CUDA_ARCH__=800\"}")
else
    t.skip("a note on __CUDA_ARCH__ in a compile error", "the NVIDIA backend defines __CUDA_ARCH__")
    t.skip("a source that tests __CUDA_ARCH__ with it defined", "the NVIDIA backend defines __CUDA_ARCH__")
end

-- A whole program (rocm-examples' main.hip: host code, main, <<<>>>): the
-- compile error ends with a note on what hipkit compiles and how to give
-- it the kernels; the same file with its host part left out compiles.
local program = [[
#include <hip/hip_runtime.h>
__global__ void scale(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }
#ifndef KERNELS_ONLY
#include <vector>
int main()
{
    std::vector<float> h(64, 1.0f);
    float *d;
    hipMalloc(&d, 64 * sizeof(float));
    scale<<<1, 64>>>(d, 64);
    throw 1;
}
#endif
]]
local okp, errp = pcall(hk.compile, program, {name = "main.hip"})
t.ok(okp or tostring(errp):find("looks like a whole program", 1, true),
     "a whole program that does not compile ends with a note on giving hipkit the kernels"
     .. (okp and " (it compiled here)" or ""))
local mp = hk.compile(program, {name = "main.hip", defines = {"KERNELS_ONLY"}})
local xp = hk.from({1, 2, 3}, "f32")
mp.scale:launch(1, 64, xp, 3)
local vp = xp:totable()
t.ok(vp[1] == 2 and vp[2] == 4 and vp[3] == 6, "with defines = {\"KERNELS_ONLY\"} its kernel compiles and runs")

t.done()
