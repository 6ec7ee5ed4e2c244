-- Loop mode on the CPU backend (issue 19): kernels written the way libraries
-- write them, checked against a CPU reference on random data; meson runs
-- this with HIPKIT_HOST_MODE=loops (each must say "loops") and =fibers;
-- unset (auto, the default) they say "loops" too.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
if hk.device().backend ~= "host" then
    t.skip("loop mode", "the CPU backend's")
    t.done()
    return
end
local want = os.getenv("HIPKIT_HOST_MODE") == "fibers" and "fibers" or "loops"
local m = hk.compile([[
#include <hip/hip_runtime.h>
extern "C" __global__ void block_sum(const float *in, float *out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void scan(const float *in, float *out) {
    __shared__ float s[256];
    int tid = threadIdx.x, base = blockIdx.x * 256;
    s[tid] = in[base + tid];
    __syncthreads();
    for (int off = 1; off < 256; off *= 2) {
        float v = tid >= off ? s[tid - off] : 0.0f;
        __syncthreads();
        s[tid] += v;
        __syncthreads();
    }
    out[base + tid] = s[tid];
}
extern "C" __global__ void transpose(const float *in, float *out, int w, int h) {
    __shared__ float tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    int ox = blockIdx.y * 16 + threadIdx.x, oy = blockIdx.x * 16 + threadIdx.y;
    if (ox < h && oy < w) out[oy * h + ox] = tile[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 16) {
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
extern "C" __global__ void bitonic(float *d) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = d[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = 2; k <= 256; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            unsigned p = tid ^ j;
            if (p > tid) {
                float a = s[tid], b = s[p];
                if (((tid & k) == 0) == (a > b)) { s[tid] = b; s[p] = a; }
            }
            __syncthreads();
        }
    d[blockIdx.x * 256 + tid] = s[tid];
}
extern "C" __global__ void blelloch(const float *in, float *out) {
    __shared__ float s[256];
    int tid = threadIdx.x, base = blockIdx.x * 256;
    s[2 * tid] = in[base + 2 * tid];
    s[2 * tid + 1] = in[base + 2 * tid + 1];
    int off = 1;
    for (int d = 128; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = off * (2 * tid + 1) - 1, bi = off * (2 * tid + 2) - 1;
            s[bi] += s[ai];
        }
        off *= 2;
    }
    if (tid == 0) s[255] = 0.0f;
    for (int d = 1; d < 256; d *= 2) {
        off >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = off * (2 * tid + 1) - 1, bi = off * (2 * tid + 2) - 1;
            float v = s[ai];
            s[ai] = s[bi];
            s[bi] += v;
        }
    }
    __syncthreads();
    out[base + 2 * tid] = s[2 * tid];
    out[base + 2 * tid + 1] = s[2 * tid + 1];
}
#define TILE 16
extern "C" __global__ void matmul_edge(const float *A, const float *B, float *C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = row < n && k0 + (int)threadIdx.x < n ? A[row * n + k0 + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = col < n && k0 + (int)threadIdx.y < n ? B[(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}
extern "C" __global__ void reduce_shfl(const float *in, float *out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x, i = blockIdx.x * 256 + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int st = 128; st >= warpSize; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid < warpSize) {
        float v = s[tid];
        for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_down(v, off);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
extern "C" __global__ void reduce_warp(const float *in, float *out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x, i = blockIdx.x * 256 + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int st = 128; st >= warpSize; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    float v = tid < warpSize ? s[tid] : 0.0f;
    for (int off = warpSize / 2; off > 0; off >>= 1)
        v += __shfl_down(v, off);
    if (tid == 0) out[blockIdx.x] = v;
}
extern "C" __global__ void warp_max(const float *in, float *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[t];
    for (int m = 1; m < warpSize; m *= 2) {
        float o = 0.0f;
        o = __shfl_xor(v, m);
        v = fmaxf(v, o);
    }
    float first = in[t];
    first = __shfl(first, 0);
    float prev = in[t];
    prev = __shfl_up(prev, 1);
    out[3 * t] = v;
    out[3 * t + 1] = first;
    out[3 * t + 2] = prev;
}
extern "C" __global__ void divergent(float *out) {
    if (threadIdx.x < 4) __syncthreads();
    out[threadIdx.x] = 1.0f;
}
]], {name = "loops.hip"})
for _, k in ipairs{"block_sum", "scan", "transpose", "matmul", "bitonic", "blelloch", "matmul_edge", "reduce_warp", "warp_max"} do
    local i = m[k]:info()
    t.is(i.mode, want, k .. " runs as " .. want .. (i.mode_reason and (": " .. i.mode_reason) or ""))
end
local d = m.divergent:info()
t.ok(d.mode == "fibers" and (want == "fibers" or d.mode_reason:find("barrier inside an if", 1, true)),
     "a barrier under an if keeps the fibers and says why: " .. tostring(d.mode_reason))

local n = 4096
local x = hk.alloc(n, "f32"):rand{seed = 19}
local xs = x:totable()
local o = hk.alloc(n // 256, "f32")
m.block_sum:launch(n // 256, 256, x, o, n)
local bad = 0
for b = 0, n // 256 - 1 do
    local s = 0
    for i = 1, 256 do s = s + xs[b * 256 + i] end
    if math.abs(o[b + 1] - s) > 1e-3 * math.abs(s) + 1e-3 then bad = bad + 1 end
end
t.is(bad, 0, "block sums match the CPU")

local sc = hk.alloc(n, "f32")
m.scan:launch(n // 256, 256, x, sc)
local st = sc:totable()
bad = 0
for b = 0, n // 256 - 1 do
    local s = 0
    for i = 1, 256 do
        s = s + xs[b * 256 + i]
        if math.abs(st[b * 256 + i] - s) > 1e-3 * math.abs(s) + 1e-3 then bad = bad + 1 end
    end
end
t.is(bad, 0, "block prefix sums match the CPU")

local w, h = 40, 24
local ti = hk.alloc(w * h, "f32"):rand{seed = 7}
local to = hk.alloc(w * h, "f32")
m.transpose:launch({(w + 15) // 16, (h + 15) // 16}, {16, 16}, ti, to, w, h)
local a, b = ti:totable(), to:totable()
bad = 0
for y = 0, h - 1 do
    for xx = 0, w - 1 do
        if b[xx * h + y + 1] ~= a[y * w + xx + 1] then bad = bad + 1 end
    end
end
t.is(bad, 0, "the shared-memory transpose matches")

local mn = 32
local A = hk.alloc(mn * mn, "f32"):rand{seed = 3}
local B = hk.alloc(mn * mn, "f32"):rand{seed = 4}
local C = hk.alloc(mn * mn, "f32")
m.matmul:launch({mn // 16, mn // 16}, {16, 16}, A, B, C, mn)
local at, bt, ct = A:totable(), B:totable(), C:totable()
bad = 0
for r = 0, mn - 1 do
    for c = 0, mn - 1 do
        local s = 0
        for k = 0, mn - 1 do s = s + at[r * mn + k + 1] * bt[k * mn + c + 1] end
        if math.abs(ct[r * mn + c + 1] - s) > 1e-3 * math.abs(s) + 1e-3 then bad = bad + 1 end
    end
end
t.is(bad, 0, "the tiled matmul matches")

local srt = hk.alloc(1024, "f32"):rand{seed = 5}
local before = srt:totable()
m.bitonic:launch(4, 256, srt)
local after = srt:totable()
bad = 0
for blk = 0, 3 do
    local ref = {}
    for i = 1, 256 do ref[i] = before[blk * 256 + i] end
    table.sort(ref)
    for i = 1, 256 do if after[blk * 256 + i] ~= ref[i] then bad = bad + 1 end end
end
t.is(bad, 0, "the bitonic sort in shared memory sorts each block")

local bl = hk.alloc(n, "f32")
m.blelloch:launch(n // 256, 128, x, bl)
local blt = bl:totable()
bad = 0
for blk = 0, n // 256 - 1 do
    local s = 0
    for i = 1, 256 do
        if math.abs(blt[blk * 256 + i] - s) > 1e-3 * math.abs(s) + 1e-3 then bad = bad + 1 end
        s = s + xs[blk * 256 + i]
    end
end
t.is(bad, 0, "the Blelloch (work-efficient) exclusive scan matches the CPU")

local en = 40 -- not a multiple of the tile: the last tile is partial
local EA = hk.alloc(en * en, "f32"):rand{seed = 8}
local EB = hk.alloc(en * en, "f32"):rand{seed = 9}
local EC = hk.alloc(en * en, "f32")
m.matmul_edge:launch({(en + 15) // 16, (en + 15) // 16}, {16, 16}, EA, EB, EC, en)
local ea, eb, ec = EA:totable(), EB:totable(), EC:totable()
bad = 0
for r = 0, en - 1 do
    for c = 0, en - 1 do
        local s = 0
        for k = 0, en - 1 do s = s + ea[r * en + k + 1] * eb[k * en + c + 1] end
        if math.abs(ec[r * en + c + 1] - s) > 1e-3 * math.abs(s) + 1e-3 then bad = bad + 1 end
    end
end
t.is(bad, 0, "the tiled matmul with a partial last tile matches the CPU")

-- a tree in shared memory, then a warp-shuffle tail: run by every thread it
-- splits at the shuffle (loops); under `if (tid < warpSize)` it keeps the
-- fibers and says why
local rs = m.reduce_shfl:info()
t.ok(want == "fibers" and rs.mode == "fibers" or
     rs.mode == "fibers" and tostring(rs.mode_reason):find("warp shuffle in an if", 1, true),
     "a warp-shuffle tail under an if runs on fibers and says why: " .. tostring(rs.mode_reason))
local rn = n + 100
local rx = hk.alloc(rn, "f32"):rand{seed = 11}
local rxs = rx:totable()
local nb = (rn + 255) // 256
for _, k in ipairs{"reduce_shfl", "reduce_warp"} do
    local ro = hk.alloc(nb, "f32")
    m[k]:launch(nb, 256, rx, ro, rn)
    bad = 0
    for blk = 0, nb - 1 do
        local s = 0
        for i = blk * 256 + 1, math.min(rn, blk * 256 + 256) do s = s + rxs[i] end
        if math.abs(ro[blk + 1] - s) > 1e-3 * math.abs(s) + 1e-3 then bad = bad + 1 end
    end
    t.is(bad, 0, k .. ": the block reduction with a warp-shuffle tail matches the CPU")
end

-- __shfl_xor butterfly (warp maximum), __shfl from lane 0, __shfl_up by 1
-- (lane 0 keeps its own), 192 threads: three whole warps of 64
local wx = hk.alloc(2 * 192, "f32"):rand{seed = 12}
local wxs = wx:totable()
local wo = hk.alloc(3 * 2 * 192, "f32")
m.warp_max:launch(2, 192, wx, wo)
local wot = wo:totable()
bad = 0
for w = 0, 2 * 192 // 64 - 1 do
    local mx = -math.huge
    for l = 0, 63 do mx = math.max(mx, wxs[w * 64 + l + 1]) end
    for l = 0, 63 do
        local g = w * 64 + l
        local prev = l == 0 and wxs[g + 1] or wxs[g]
        if wot[3 * g + 1] ~= mx or wot[3 * g + 2] ~= wxs[w * 64 + 1] or wot[3 * g + 3] ~= prev then
            bad = bad + 1
        end
    end
end
t.is(bad, 0, "__shfl_xor, __shfl and __shfl_up match the CPU")

-- Parameters the body changes are each thread's own (a region's loop over
-- the threads must not change them once per thread): pointers moved to the
-- block's row (`x += blockIdx.x * n`, as row kernels do), a count changed by
-- each thread differently, and a pointer moved after the barrier.
do
    local pm = hk.compile([[
    #include <hip/hip_runtime.h>
    extern "C" __global__ void rows_reversed(const float *x, float *y, int n, int k) {
        __shared__ float tile[256];
        x += blockIdx.x * n;
        y += (long long)blockIdx.x * n;
        k -= threadIdx.x % 3;
        tile[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] * k : 0.0f;
        __syncthreads();
        y += 0;
        if (threadIdx.x < n) y[threadIdx.x] = tile[n - 1 - threadIdx.x] + k;
        k *= 2;
        x = nullptr;
        __syncthreads();
        if (threadIdx.x == 0) y[0] += k - k + (x == nullptr ? 0.0f : 1.0f);
    }
    ]], {name = "params.hip"})
    local info = pm.rows_reversed:info()
    t.is(info.mode, want, "a kernel that changes its parameters runs as " .. want ..
        (info.mode_reason and (" (" .. info.mode_reason .. ")") or ""))
    local rows, n, k = 5, 200, 7
    local x = hk.alloc(rows * n, "f32"):rand{lo = -1, hi = 1}
    local y = hk.alloc(rows * n, "f32"):fill(0 / 0)
    pm.rows_reversed:launch(rows, 256, x, y, n, k)
    local xv, yv, nbad = x:totable(), y:totable(), 0
    for r = 0, rows - 1 do
        for i = 0, n - 1 do
            local src = n - 1 - i -- thread src wrote tile[src] with its own k
            local want_v = xv[r * n + src + 1] * (k - src % 3) + (k - i % 3)
            if math.abs(yv[r * n + i + 1] - want_v) > 1e-5 * (math.abs(want_v) + 1) then nbad = nbad + 1 end
        end
    end
    t.is(nbad, 0, "changed parameters: each thread's own copy, every block its own row")
end

-- A fault in a kernel compiled just now (libclang ran in this process: its
-- crash handlers must not stand between the fault and hipkit's handler),
-- in blocks run by the worker threads: the address is the real one.
-- Under valgrind a fresh libclang parse takes about a minute: the plain and
-- sanitizer passes run this point, valgrind's pass skips it.
local maps = io.open("/proc/self/maps")
local under_valgrind = maps and maps:read("a"):find("vgpreload", 1, true)
if maps then maps:close() end
local function fault_after_compile()
    local fm = hk.compile(string.format([[
    #include <hip/hip_runtime.h>
    // %d %d
    extern "C" __global__ void fault(int *p, int n) { __syncthreads(); p[n + threadIdx.x] = 1; }
    ]], os.time(), math.random(1 << 30)), {name = "fault.hip"})
    local small = hk.alloc(1024, "i32")
    local okf, err = pcall(function() fm.fault:launch(8, 4, small, 1024) end)
    t.ok(not okf and tostring(err):find("past the end of a buffer of 1024 i32", 1, true) and
         tostring(err):find("thread (", 1, true),
         "a fault right after the compile names the buffer, block and thread: " .. tostring(err))
end
if under_valgrind then
    t.skip("a fault right after the compile names the buffer, block and thread",
           "a fresh libclang parse under valgrind takes a minute")
else
    fault_after_compile()
end
t.done()
