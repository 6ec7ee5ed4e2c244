/* Test plugin for the launch model of ABI 1.4 (tests/test_plugin_launch.c,
 * tests/lua/test_plugin_launch.lua): per-row mean and variance with one
 * block per row and blockDim floats of dynamic shared memory, a row maximum
 * with one warp per row, a 2-D explicit-geometry kernel, a host op chaining
 * two explicit launches, a two-output kernel in two dtypes, (ABI 1.5) a
 * host op counting into scratch memory and reading the count back, and a
 * host op reporting the host table's warp size and compute units. */
#include <hipkit/plugin.h>

HK_PLUGIN_DEFINE(stats);
HK_PLUGIN_EXPORT int hk_plugin_stats_init(const hk_plugin_api *api);

static const char src[] =
    "#include <hip/hip_runtime.h>\n"
    /* the sum of every thread's v, in thread 0's sh[0]; any blockDim */
    "__device__ float block_sum(float *sh, float v) {\n"
    "  unsigned t = threadIdx.x;\n"
    "  sh[t] = v;\n"
    "  __syncthreads();\n"
    "  for (unsigned s = 1; s < blockDim.x; s *= 2) {\n"
    "    if (t % (2 * s) == 0 && t + s < blockDim.x) sh[t] += sh[t + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  float r = sh[0];\n"
    "  __syncthreads();\n"
    "  return r;\n"
    "}\n"
    "extern \"C\" __global__ void row_stats_f32(const float *x, float *mean, float *var,\n"
    "                                          int rows, int cols) {\n"
    "  extern __shared__ float sh[];\n"
    "  int r = blockIdx.x;\n"
    "  if (r >= rows) return;\n"
    "  const float *row = x + (size_t)r * cols;\n"
    "  float s = 0;\n"
    "  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];\n"
    "  float m = block_sum(sh, s) / cols;\n"
    "  float q = 0;\n"
    "  for (int c = threadIdx.x; c < cols; c += blockDim.x) q += (row[c] - m) * (row[c] - m);\n"
    "  float v = block_sum(sh, q) / cols;\n"
    "  if (threadIdx.x == 0) { mean[r] = m; var[r] = v; }\n"
    "}\n"
    "extern \"C\" __global__ void row_max_f32(const float *x, float *out, int rows, int cols) {\n"
    "  int per = blockDim.x / warpSize;\n"
    "  int r = blockIdx.x * per + threadIdx.x / warpSize;\n"
    "  int lane = threadIdx.x % warpSize;\n"
    "  float m = -3.4e38f;\n"
    "  if (r < rows)\n"
    "    for (int c = lane; c < cols; c += warpSize) m = fmaxf(m, x[(size_t)r * cols + c]);\n"
    "  for (int o = warpSize / 2; o > 0; o /= 2) m = fmaxf(m, __shfl_down(m, o));\n"
    "  if (r < rows && lane == 0) out[r] = m;\n"
    "}\n"
    "extern \"C\" __global__ void row_apply_f32(const float *x, const float *mean,\n"
    "                                          const float *var, float *y, int rows, int cols) {\n"
    "  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (r < rows && c < cols)\n"
    "    y[(size_t)r * cols + c] = (x[(size_t)r * cols + c] - mean[r]) * rsqrtf(var[r] + 1e-5f);\n"
    "}\n"
    "#define SINCOS(T, name)                                                       \\\n"
    "  extern \"C\" __global__ void name(const T *x, T *s, T *c, size_t n) {          \\\n"
    "    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;        \\\n"
    "         i += (size_t)gridDim.x * blockDim.x) { s[i] = sin(x[i]); c[i] = cos(x[i]); } \\\n"
    "  }\n"
    "SINCOS(float, sincos_f32)\n"
    "SINCOS(double, sincos_f64)\n"
    "extern \"C\" __global__ void count_nonfinite_f32(const float *x, unsigned *count, size_t n) {\n"
    "  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    if (!isfinite(x[i])) atomicAdd(count, 1u);\n"
    "}\n";

/* check_finite(x): fails naming how many elements of x are NaN or
 * infinite. The count lives in zeroed scratch memory (ABI 1.5) and is read
 * back after the launch. */
static int check_finite(const hk_plugin_host *host, const hk_plugin_call *call,
                        const hk_plugin_arg *args, int nargs)
{
    if (!HK_PLUGIN_HOST_HAS(host, download))
        return host->fail(call, "needs a host of plugin ABI 1.5 (scratch, download)");
    if (nargs != 1 || args[0].kind != HK_PLUGIN_ARG_BUFFER)
        return host->fail(call, "expects one f32 buffer; got %d arguments", nargs);
    void *count = host->scratch(call, "u32", 1);
    if (!count)
        return -1;
    hk_plugin_arg a[3] = {args[0], {HK_PLUGIN_ARG_BUFFER, {.buf = count}}, {HK_PLUGIN_ARG_UINT, {0}}};
    a[2].v.u = host->length(call, args[0].v.buf);
    unsigned n = 0;
    int r = host->launch(call, "count_nonfinite_f32", a, 3);
    if (r == 0)
        r = host->download(call, count, 0, &n, sizeof n);
    if (r == 0 && n > 0)
        return host->fail(call, "x holds %u NaN or infinite values", n);
    return r;
}

/* standardize(x, mean, var, y, rows, cols): y = (x - mean) / sqrt(var +
 * 1e-5) per row, in two launches with explicit configurations: row_stats
 * with a block of 96 threads (the grid and shared memory from its rule),
 * then row_apply over a 2-D grid of 32 x 4 blocks. */
static int standardize(const hk_plugin_host *host, const hk_plugin_call *call,
                       const hk_plugin_arg *args, int nargs)
{
    if (nargs != 6 || !HK_PLUGIN_HOST_HAS(host, launch_config))
        return host->fail(call, "expects 4 buffers, rows and cols; got %d arguments", nargs);
    long long rows = args[4].v.i, cols = args[5].v.i;
    if (args[4].kind != HK_PLUGIN_ARG_INT || args[5].kind != HK_PLUGIN_ARG_INT || rows < 0 || cols < 1)
        return host->fail(call, "rows and cols must be integers (rows >= 0, cols >= 1)");
    hk_plugin_arg a[5] = {args[0], args[1], args[2], args[4], args[5]};
    hk_plugin_config stats = {{0, 0, 0}, {96, 1, 1}, 0};
    int r = host->launch_config(call, "row_stats_f32", &stats, a, 5);
    if (r != 0)
        return r;
    hk_plugin_config apply = {{(unsigned)((cols + 31) / 32), (unsigned)((rows + 3) / 4), 1}, {32, 4, 1}, 0};
    return host->launch_config(call, "row_apply_f32", &apply, args, 6);
}

/* device_shape(out): out[0] = the device's warp size, out[1] its compute
 * units, as the host table gives them (a u32 buffer of at least 2). */
static int device_shape(const hk_plugin_host *host, const hk_plugin_call *call,
                        const hk_plugin_arg *args, int nargs)
{
    if (!HK_PLUGIN_HOST_HAS(host, compute_units))
        return host->fail(call, "needs a host with compute_units");
    if (nargs != 1 || args[0].kind != HK_PLUGIN_ARG_BUFFER || host->length(call, args[0].v.buf) < 2)
        return host->fail(call, "expects one u32 buffer of 2 elements");
    unsigned v[2] = {host->warp_size(call), host->compute_units(call)};
    return host->upload(call, args[0].v.buf, 0, v, sizeof v);
}

int hk_plugin_stats_init(const hk_plugin_api *api)
{
    if (!HK_PLUGIN_API_HAS(api, add_kernel_rule)) {
        api->error(api, "needs plugin ABI 1.4 (add_kernel_rule)");
        return 1;
    }
    int r = api->register_family(api, "stats", "1.0", "per-row statistics (launch model tests)");
    if (r == 0)
        r = api->add_source(api, "stats", "stats.hip", src);
    /* mean and var hold one value per row */
    static const hk_plugin_extent per_row[] = {{1, {3, -1, -1}, 1}, {2, {3, -1, -1}, 1}};
    hk_plugin_rule stats = {sizeof stats, {HK_PLUGIN_GEOM_ROW_BLOCK, 0, 0, 0, 3, 4, 0, 0},
                            sizeof(float), 0, 256, per_row, 2};
    if (r == 0)
        r = api->add_kernel_rule(api, "stats", "stats.hip", "row_stats_f32",
                                 "const float *x, float *mean, float *var, int rows, int cols",
                                 &stats, "per-row mean and variance: a block per row");
    static const hk_plugin_extent max_out[] = {{1, {2, -1, -1}, 1}};
    hk_plugin_rule rmax = {sizeof rmax, {HK_PLUGIN_GEOM_ROW_WARP, 0, 128, 0, 2, 3, 0, 0}, 0, 0, 0,
                           max_out, 1};
    if (r == 0)
        r = api->add_kernel_rule(api, "stats", "stats.hip", "row_max_f32",
                                 "const float *x, float *out, int rows, int cols", &rmax,
                                 "per-row maximum: a warp per row");
    static const hk_plugin_extent apply_ext[] = {
        {0, {4, 5, -1}, 1}, {1, {4, -1, -1}, 1}, {2, {4, -1, -1}, 1}, {3, {4, 5, -1}, 1}};
    hk_plugin_rule apply = {sizeof apply, {HK_PLUGIN_GEOM_EXPLICIT, 0, 0, 0, 0, 0, 0, 0}, 0, 0, 0,
                            apply_ext, 4};
    if (r == 0)
        r = api->add_kernel_rule(api, "stats", "stats.hip", "row_apply_f32",
                                 "const float *x, const float *mean, const float *var, float *y, "
                                 "int rows, int cols",
                                 &apply, "y = (x - mean) / sqrt(var + 1e-5) per row: explicit 2-D");
    hk_plugin_geometry g1 = {HK_PLUGIN_GEOM_1D, 3, 128, 64, 0, 0, 0, 0};
    if (r == 0)
        r = api->add_kernel(api, "stats", "stats.hip", "sincos_f32",
                            "const float *x, float *s, float *c, size_t n", &g1, "s, c = sin x, cos x");
    if (r == 0)
        r = api->add_kernel(api, "stats", "stats.hip", "sincos_f64",
                            "const double *x, double *s, double *c, size_t n", &g1,
                            "s, c = sin x, cos x (f64)");
    /* count holds one value: its extent is 1, not n */
    static const hk_plugin_extent one[] = {{1, {-1, -1, -1}, 1}};
    hk_plugin_rule gcount = {sizeof gcount, {HK_PLUGIN_GEOM_1D, 2, 128, 64, 0, 0, 0, 0}, 0, 0, 0, one, 1};
    if (r == 0)
        r = api->add_kernel_rule(api, "stats", "stats.hip", "count_nonfinite_f32",
                                 "const float *x, unsigned *count, size_t n", &gcount,
                                 "*count += the NaN and infinite elements of x");
    if (r == 0)
        r = api->add_op(api, "stats", "check_finite", "x", check_finite,
                        "fails naming how many elements of x are not finite (scratch + download)");
    if (r == 0)
        r = api->add_op(api, "stats", "standardize", "x, mean, var, y, rows, cols", standardize,
                        "per-row standardisation: row_stats then row_apply, explicit launches");
    if (r == 0)
        r = api->add_op(api, "stats", "device_shape", "out", device_shape,
                        "out = {warp size, compute units} of the current device (host table)");
    return r;
}
