-- What a CPU-backend module may use beyond hip_runtime.h, now that the
-- header leaves C++17's special math functions out of <cmath> and the link
-- reads only libc, libm and libgcc: a source that names a special function
-- (std::legendre, a plain beta(...) call, the float forms) gets them; a
-- kernel variable named beta changes nothing; a module that needs
-- libstdc++ (operator new in a kernel) is linked again with the default
-- libraries and runs. Random inputs, results against values computed here.
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local t = require("tap")
local N = 5
if hk.device().backend ~= "host" then
    for _ = 1, N do t.skip("special functions and the lean link", "the CPU backend's") end
    return t.done()
end

math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 1000)
local tag = tostring(os.time()) .. tostring(math.random(1 << 30))
local x, a, b = math.random() * 2 - 1, 1 + math.random() * 3, 1 + math.random() * 3

local m = hk.compile(([[
#include <hip/hip_runtime.h>
#include <cmath>
using namespace std;
extern "C" __global__ void spec_%s(double x, double a, double b, double *out) {
    if (threadIdx.x) return;
    out[0] = std::legendre(2, x);
    out[1] = beta(a, b);
    out[2] = std::riemann_zetaf(2.0f);
    out[3] = std::tgamma(a);
}
]]):format(tag), {name = "test_host_link_spec"})
local out = hk.alloc(4, "f64")
m["spec_" .. tag]:launch(1, 1, x, a, b, out)
hk.sync()
local function gamma(v) -- Lanczos, enough for a check at 1e-9
    local g, c = 7, {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
                     -176.61502916214059, 12.507343278686905, -0.13857109526572012,
                     9.9843695780195716e-6, 1.5056327351493116e-7}
    v = v - 1
    local s = c[1]
    for i = 1, 8 do s = s + c[i + 1] / (v + i) end
    local tt = v + g + 0.5
    return math.sqrt(2 * math.pi) * tt ^ (v + 0.5) * math.exp(-tt) * s
end
t.near(out[1], (3 * x * x - 1) / 2, 1e-12, "std::legendre(2, x)")
t.near(out[2], gamma(a) * gamma(b) / gamma(a + b), 1e-9 * out[2], "beta(a, b) by its plain name")
t.near(out[3], math.pi ^ 2 / 6, 1e-6, "std::riemann_zetaf(2)")

-- a variable named beta: no special functions, the usual gemm-like kernel
local m2 = hk.compile(([[
#include <hip/hip_runtime.h>
extern "C" __global__ void axpby_%s(float *y, const float *x, float alpha, float beta, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + beta * y[i] + sinf(0.0f);
}
]]):format(tag), {name = "test_host_link_beta"})
local n = 100
local xs, ys = hk.alloc(n, "f32"), hk.alloc(n, "f32")
for i = 1, n do xs[i] = i; ys[i] = 2 * i end
m2["axpby_" .. tag]:launch(1, 128, ys, xs, 2.0, 0.5, n)
hk.sync()
local ok = true
for i = 1, n do ok = ok and ys[i] == 3 * i end
t.ok(ok, "a kernel variable named beta, libm's sinf: the lean link")

-- operator new and delete in a kernel: libstdc++, linked again with the defaults
local m3 = hk.compile(([[
#include <hip/hip_runtime.h>
#include <new>
struct node { int v; node *next; };
extern "C" __global__ void newdel_%s(int *out, int n) {
    if (threadIdx.x) return;
    node *head = nullptr;
    for (int i = 0; i < n; i++) head = new node{i, head};
    int s = 0;
    while (head) { node *nx = head->next; s += head->v; delete head; head = nx; }
    int *arr = new int[n];
    for (int i = 0; i < n; i++) arr[i] = i;
    out[0] = s + arr[n - 1];
    delete[] arr;
}
]]):format(tag), {name = "test_host_link_new"})
local io = hk.alloc(1, "i32")
local k = math.random(10, 1000)
m3["newdel_" .. tag]:launch(1, 1, io, k)
hk.sync()
t.is(io[1], k * (k - 1) // 2 + k - 1, "operator new/delete in a kernel: linked with libstdc++")
t.done()
