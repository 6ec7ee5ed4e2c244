-- Kernel templates by name expression, kernels in namespaces, and
-- m:reload (issue 17): instantiations asked for at compile time and named
-- later, their parameter types checked as the arguments make them, their
-- results checked against a reference in double on random data with the
-- outputs poisoned first. Any backend.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")

local seed = tonumber(os.getenv("HK_TEST_SEED")) or os.time()
math.randomseed(seed)
t.diag("seed " .. seed)

local src = [[
#include <hip/hip_runtime.h>
typedef float real;
namespace ops {
// a block-wide sum of each row, BLOCK threads per row, as libraries write it
template <typename T, typename Acc, int BLOCK = 64>
__global__ void row_sum(const T *__restrict__ x, Acc *out, int cols) {
    __shared__ Acc part[BLOCK];
    const T *row = x + (size_t)blockIdx.x * cols;
    Acc s = 0;
    for (int c = threadIdx.x; c < cols; c += BLOCK) s += (Acc)row[c];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}
template <typename T> __global__ void axpb(T a, const T *x, T b, T *y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
__global__ void negate(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = -x[i];
}
namespace inner { extern "C" __global__ void twice(double *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= 2; } }
}
]]

local m = hk.compile(src, {name = "tmpl.hip",
                           instantiate = {"ops::row_sum<float, double>", "ops::axpb<real>",
                                          "ops::row_sum<double,double,128>"}})
local names = {}
for _, n in ipairs(m:kernels()) do names[n] = true end
t.ok(names["ops::negate"] and names["ops::inner::twice"] and names["ops::row_sum<float, double>"]
     and names["ops::axpb<real>"] and names["ops::row_sum<double, double, 128>"],
     "kernels in namespaces and the instantiations asked for are listed: " .. table.concat(m:kernels(), ", "))
t.ok(not names["ops::row_sum"] and not names["row_sum"], "a template itself is no kernel")

-- row sums: rows x cols, cols not a power of two
local function check_row_sum(k, dtype, block, rows, cols)
    local x = hk.alloc(rows * cols, dtype)
    x:rand{lo = -1, hi = 1}
    local xs = x:totable()
    local out = hk.alloc(rows + 1, "f64")
    out:fill(0 / 0)
    k{grid = {rows}, block = {block}}(x, out, cols)
    local o, worst = out:totable(), 0
    for r = 1, rows do
        local s = 0
        for c = 1, cols do s = s + xs[(r - 1) * cols + c] end
        worst = math.max(worst, math.abs(o[r] - s))
    end
    t.ok(worst <= 1e-9 * cols and o[rows + 1] ~= o[rows + 1],
         string.format("%s: %d rows of %d, worst error %.3g, the element past the rows still poisoned",
                       tostring(k):match("hk.kernel ([^(]*)"), rows, cols, worst))
end
check_row_sum(m["ops::row_sum<float, double>"], "f32", 64, 37, 1000)
check_row_sum(m:kernel("ops::row_sum< double , double, 128 >"), "f64", 128, 5, 777)

-- the parameter types come from the arguments: a buffer of the wrong type is refused
t.errors("expects a buffer of f32", "ops::row_sum<float, double>: an f64 input is refused",
         function() m["ops::row_sum<float, double>"]{grid = {1}, block = {64}}(hk.alloc(4, "f64"), hk.alloc(1, "f64"), 4) end)
t.errors("expects a buffer of f64", "ops::row_sum<float, double>: an f32 output is refused",
         function() m["ops::row_sum<float, double>"]{grid = {1}, block = {64}}(hk.alloc(4, "f32"), hk.alloc(1, "f32"), 4) end)

-- a typedef as the argument, scalars by value of the template type
local n = 1001
local x, y = hk.alloc(n, "f32"), hk.alloc(n + 1, "f32")
x:rand{lo = -2, hi = 2}
y:fill(0 / 0)
m["ops::axpb<real>"]:launch(math.ceil(n / 128), 128, 1.5, x, -0.25, y, n)
local xs, ys, worst = x:totable(), y:totable(), 0
for i = 1, n do worst = math.max(worst, math.abs(ys[i] - (1.5 * xs[i] - 0.25))) end
t.ok(worst <= 1e-6 and ys[n + 1] ~= ys[n + 1], "ops::axpb<real> (real = float): y = 1.5x - 0.25 on 1001 elements")

-- an instantiation named later is compiled then (as CuPy's name expressions)
local d = hk.alloc(n, "f64")
d:rand{lo = -1, hi = 1}
local ds = d:totable()
local e = hk.alloc(n, "f64")
e:fill(0 / 0)
local kd = m:kernel("ops::axpb<double>")
t.ok(tostring(kd):find("double a, const double *x, double b, double *y, unsigned n", 1, true) ~= nil,
     "ops::axpb<double> named later has double parameters: " .. tostring(kd))
kd:launch(math.ceil(n / 64), 64, 3.0, d, 1.0, e, n)
local es = e:totable()
worst = 0
for i = 1, n do worst = math.max(worst, math.abs(es[i] - (3 * ds[i] + 1))) end
t.ok(worst <= 1e-12, "ops::axpb<double> runs: worst error " .. worst)
t.ok(m:kernel("ops::axpb<double>") ~= nil, "naming it again finds it")

-- namespaces
local neg = hk.alloc(n, "f32")
neg:fill(0 / 0)
m["ops::negate"]:launch(math.ceil(n / 256), 256, x, neg, n)
local ns_ok = true
local negs = neg:totable()
for i = 1, n do ns_ok = ns_ok and negs[i] == -xs[i] end
t.ok(ns_ok, "ops::negate runs by its qualified name")
local dd = hk.from({1, 2, 3}, "f64")
m["ops::inner::twice"]:launch(1, 4, dd, 3)
t.ok(dd[1] == 2 and dd[3] == 6, "an extern \"C\" kernel in a nested namespace runs as ops::inner::twice")

-- mistakes are named
t.errors("no kernel template 'ops::nothing'", "an instantiation of no template is refused naming it",
         function() return m:kernel("ops::nothing<int>") end)
t.errors("takes 3 template arguments (2 without a default), 1 given",
         "too few template arguments: said with the counts",
         hk.compile, src, {instantiate = {"ops::row_sum<float>"}})
t.errors("has no closing '>'", "a malformed name expression is refused",
         hk.compile, src, {instantiate = {"ops::axpb<float"}})

-- module variables: m:global (as CuPy's get_global)
local gm = hk.compile([[
#include <hip/hip_runtime.h>
#define TAPS 5
__constant__ float taps[TAPS];
__device__ int calls = 0, unused_after_comma[3] = {1, 2, 3};
namespace cfg { __device__ double scale = 1.0; }
extern "C" __global__ void fir(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) atomicAdd(&calls, 1);
    if (i >= n) return;
    float s = 0;
    for (int t = 0; t < TAPS; t++) s += (i - t >= 0 ? x[i - t] : 0.0f) * taps[t];
    y[i] = s;
}
]], {name = "globals.hip"})
local taps = gm:global("taps")
t.ok(#taps == 5 and taps:dtype() == "f32", "m:global('taps'): 5 f32 of __constant__ memory")
local tv = {}
for i = 1, 5 do tv[i] = math.random() - 0.5 end
taps:copy(hk.from(tv, "f32"))
local nx = 777
local xin, yout = hk.alloc(nx, "f32"), hk.alloc(nx + 1, "f32")
xin:rand{lo = -1, hi = 1}
yout:fill(0 / 0)
gm.fir:launch(math.ceil(nx / 128), 128, xin, yout, nx)
local xv, yv, tw = xin:totable(), yout:totable(), taps:totable()
worst = 0
for i = 1, nx do
    local s = 0
    for k = 1, 5 do if i - k + 1 >= 1 then s = s + xv[i - k + 1] * tw[k] end end
    worst = math.max(worst, math.abs(yv[i] - s))
end
t.ok(worst <= 1e-5 and yv[nx + 1] ~= yv[nx + 1], "a 5-tap filter read from the __constant__ taps: worst error " .. worst)
local calls = gm:global("calls", "i32")
t.ok(calls[1] == 1, "a __device__ counter the kernel bumped reads 1")
gm.fir:launch(1, 32, xin, yout, 3)
t.ok(calls[1] == 2, "and 2 after a second launch")
t.ok(gm:global("unused_after_comma", "i32")[3] == 3, "the second declarator of a line is found, initialised")
t.errors("not a whole number of f64", "a 4-byte variable as f64 is refused", function() return gm:global("calls", "f64") end)
t.errors("its __device__/__constant__ variables: taps, calls, unused_after_comma, cfg::scale",
         "an unknown variable is named with those the source has", function() return gm:global("nothing") end)
if hk.device().backend == "host" then
    t.ok(gm:global("cfg::scale", "f64")[1] == 1, "a namespaced variable by its qualified name")
else
    t.skip("namespaced variable", "by qualified name on the CPU backend only (docs/lua-api.md)")
end

-- m:reload(): a file edited in the session is compiled again
local path = os.tmpname() .. ".hip"
local function write(text)
    local f = assert(io.open(path, "w"))
    f:write(text)
    f:close()
end
write("#include <hip/hip_runtime.h>\nextern \"C\" __global__ void k(float *v) { v[threadIdx.x] = 1.0f; }\n")
local fm = hk.compile{path = path}
local old = fm.k
local v = hk.alloc(4, "f32")
old:launch(1, 4, v)
t.ok(v[1] == 1, "the file's first version runs")
write("#include <hip/hip_runtime.h>\nextern \"C\" __global__ void k(float *v) { v[threadIdx.x] = 2.0f; }\n"
      .. "extern \"C\" __global__ void added(float *v) { v[threadIdx.x] = 3.0f; }\n")
t.ok(fm:reload() == true, "m:reload() says the file changed")
fm.k:launch(1, 4, v)
t.ok(v[2] == 2, "after reload the kernel runs the new code")
fm.added:launch(1, 4, v)
t.ok(v[3] == 3, "a kernel the edit added is there")
old:launch(1, 4, v)
t.ok(v[4] == 1, "a kernel taken before the reload keeps the code it had")
t.ok(fm:reload() == false, "reloading an unchanged file says so")
t.errors("not compiled from a file", "m:reload() of a module compiled from a string is refused",
         function() m:reload() end)
os.remove(path)

t.done()
