/* The core's kernels on the CPU backend against CPU references, on fresh
 * random data, with outputs poisoned before each launch. */
#include "testutil.h"

static hk_context *ctx;

static hk_buffer *upload_f32(const float *data, size_t n)
{
    hk_buffer *b = NULL;
    if (hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &b) != 0 ||
        hk_buffer_upload(b, 0, data, n * sizeof(float)) != 0)
        tap_diag("upload: %s", hk_errmsg(ctx));
    return b;
}

static hk_buffer *poisoned_f32(size_t n)
{
    hk_buffer *b = NULL;
    float nan = NAN;
    if (hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &b) != 0 || hk_buffer_fill(b, &nan) != 0)
        tap_diag("alloc: %s", hk_errmsg(ctx));
    return b;
}

static int max_rel_err_ok(const float *got, const float *want, size_t n, float tol, const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        float d = fabsf(got[i] - want[i]);
        if (!(d <= tol * (1.0f + fabsf(want[i])))) {
            if (!bad)
                first = i;
            bad++;
        }
    }
    if (bad)
        tap_diag("%s: %zu of %zu wrong; first at %zu: got %g want %g", what, bad, n, first,
                 got[first], want[first]);
    return bad == 0;
}

static void test_axpb(void)
{
    static const char *src =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = a * x[i] + b;\n"
        "}\n";
    hk_module *m = NULL;
    hk_kernel *k = tu_kernel(ctx, &m, src, "axpb");
    if (!tap_ok(k != NULL, "axpb compiles"))
        return;
    const int n = 100003;
    float *x = malloc(n * 4), *y = malloc(n * 4), *ref = malloc(n * 4);
    for (int i = 0; i < n; i++)
        x[i] = tu_uniform(-10, 10);
    float a = tu_uniform(-3, 3), b = tu_uniform(-3, 3);
    for (int i = 0; i < n; i++)
        ref[i] = a * x[i] + b;
    hk_buffer *dx = upload_f32(x, n), *dy = poisoned_f32(n);
    hk_launch_config cfg = tu_cfg((n + 127) / 128, 1, 1, 128, 1, 1, 0);
    hk_arg args[] = {hk_arg_float(a), hk_arg_buffer(dx), hk_arg_float(b), hk_arg_buffer(dy), hk_arg_int(n)};
    int r = hk_launch(k, &cfg, args, 5);
    tap_ok(r == 0, "axpb launches (%s)", r ? hk_errmsg(ctx) : "ok");
    hk_buffer_download(dy, 0, y, n * 4);
    tap_ok(max_rel_err_ok(y, ref, n, 1e-6f, "axpb"), "y = a*x + b matches the CPU for %d elements", n);
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    if (tu_on_host())
        tap_ok(info.uses_barriers == 0, "axpb runs as a plain loop (no barriers)");
    char *text = NULL;
    r = hk_kernel_disasm(k, &text);
    if (r == 0)
        tap_ok(strstr(text, "axpb") != NULL, "hk_kernel_disasm shows axpb's machine code");
    else
        tap_ok(r == HK_EUNSUPPORTED && strstr(hk_errmsg(ctx), "objdump"),
               "without a disassembler, disasm says which tool is missing: %s", hk_errmsg(ctx));
    free(text);
    uint16_t h = hk_f32_to_f16(1.5f), bf = hk_f32_to_bf16(-2.0f);
    tap_ok(h == 0x3e00 && hk_f16_to_f32(h) == 1.5f && bf == 0xc000 && hk_bf16_to_f32(bf) == -2.0f,
           "public f16/bf16 conversions give the known bit patterns");
    hk_buffer_free(dx);
    hk_buffer_free(dy);
    hk_module_free(m);
    free(x);
    free(y);
    free(ref);
}

static const char *matmul_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void matmul_naive(const float *A, const float *B, float *C, int n) {\n"
    "  int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (row < n && col < n) {\n"
    "    float acc = 0.0f;\n"
    "    for (int k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];\n"
    "    C[row * n + col] = acc;\n"
    "  }\n"
    "}\n"
    "#define TILE 16\n"
    "extern \"C\" __global__ void matmul_tiled(const float *A, const float *B, float *C, int n) {\n"
    "  __shared__ float As[TILE][TILE];\n"
    "  __shared__ float Bs[TILE][TILE];\n"
    "  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;\n"
    "  float acc = 0.0f;\n"
    "  for (int t = 0; t < (n + TILE - 1) / TILE; t++) {\n"
    "    int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;\n"
    "    As[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;\n"
    "    Bs[threadIdx.y][threadIdx.x] = (br < n && col < n) ? B[br * n + col] : 0.0f;\n"
    "    __syncthreads();\n"
    "    for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (row < n && col < n) C[row * n + col] = acc;\n"
    "}\n";

static void cpu_matmul(const float *A, const float *B, float *C, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int k = 0; k < n; k++)
                acc += (double)A[i * n + k] * B[k * n + j];
            C[i * n + j] = (float)acc;
        }
}

static void test_matmul(void)
{
    hk_module *m = NULL;
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "matmul";
    int r = hk_module_compile(ctx, matmul_src, &o, &m);
    if (!tap_ok(r == 0, "matmul module compiles (%s)", r ? hk_errmsg(ctx) : "ok"))
        return;
    hk_kernel *naive = NULL, *tiled = NULL;
    hk_module_kernel(m, "matmul_naive", &naive);
    hk_module_kernel(m, "matmul_tiled", &tiled);
    if (!naive || !tiled) { tap_ok(0, "matmul kernels found: %s", hk_errmsg(ctx)); return; }
    hk_kernel_info info;
    hk_kernel_get_info(tiled, &info);
    if (tu_on_host())
        tap_ok(info.uses_barriers == 1, "matmul_tiled is recognised as using barriers");
    const int n = 256;
    size_t nn = (size_t)n * n;
    float *A = malloc(nn * 4), *B = malloc(nn * 4), *I = malloc(nn * 4), *C = malloc(nn * 4),
          *ref = malloc(nn * 4);
    for (size_t i = 0; i < nn; i++) {
        A[i] = tu_uniform(-1, 1);
        B[i] = tu_uniform(-1, 1);
        I[i] = (i / n == i % n) ? 1.0f : 0.0f;
    }
    hk_buffer *dA = upload_f32(A, nn), *dB = upload_f32(B, nn), *dI = upload_f32(I, nn);
    hk_buffer *dC = poisoned_f32(nn);
    hk_launch_config cfg = tu_cfg(n / 16, n / 16, 1, 16, 16, 1, 0);

    hk_arg a1[] = {hk_arg_buffer(dA), hk_arg_buffer(dI), hk_arg_buffer(dC), hk_arg_int(n)};
    r = hk_launch(naive, &cfg, a1, 4);
    hk_buffer_download(dC, 0, C, nn * 4);
    tap_ok(r == 0 && !memcmp(C, A, nn * 4), "naive 256x256: A x identity == A exactly");

    float nan = NAN;
    hk_buffer_fill(dC, &nan);
    hk_arg a2[] = {hk_arg_buffer(dA), hk_arg_buffer(dB), hk_arg_buffer(dC), hk_arg_int(n)};
    r = hk_launch(naive, &cfg, a2, 4);
    hk_buffer_download(dC, 0, C, nn * 4);
    cpu_matmul(A, B, ref, n);
    tap_ok(r == 0 && max_rel_err_ok(C, ref, nn, 1e-4f, "naive"), "naive 256x256: random B matches the CPU");

    hk_buffer_fill(dC, &nan);
    r = hk_launch(tiled, &cfg, a2, 4);
    hk_buffer_download(dC, 0, C, nn * 4);
    tap_ok(r == 0 && max_rel_err_ok(C, ref, nn, 1e-4f, "tiled"),
           "tiled 256x256 with __shared__ and __syncthreads matches the CPU (%s)", r ? hk_errmsg(ctx) : "ok");

    /* An awkward size: partial tiles on both edges. */
    const int n2 = 100;
    hk_buffer_fill(dC, &nan);
    hk_launch_config cfg2 = tu_cfg((n2 + 15) / 16, (n2 + 15) / 16, 1, 16, 16, 1, 0);
    hk_arg a3[] = {hk_arg_buffer(dA), hk_arg_buffer(dB), hk_arg_buffer(dC), hk_arg_int(n2)};
    r = hk_launch(tiled, &cfg2, a3, 4);
    hk_buffer_download(dC, 0, C, (size_t)n2 * n2 * 4);
    cpu_matmul(A, B, ref, n2);
    tap_ok(r == 0 && max_rel_err_ok(C, ref, (size_t)n2 * n2, 1e-4f, "tiled100"),
           "tiled 100x100 (partial tiles) matches the CPU");

    hk_buffer_free(dA);
    hk_buffer_free(dB);
    hk_buffer_free(dI);
    hk_buffer_free(dC);
    hk_module_free(m);
    free(A);
    free(B);
    free(I);
    free(C);
    free(ref);
}

static const char *reduce_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void block_sum(const float *x, float *out, unsigned n) {\n"
    "  extern __shared__ float partial[];\n"
    "  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + tid;\n"
    "  float v = 0.0f;\n"
    "  if (i < n) v += x[i];\n"
    "  if (i + blockDim.x < n) v += x[i + blockDim.x];\n"
    "  partial[tid] = v;\n"
    "  __syncthreads();\n"
    "  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {\n"
    "    if (tid < s) partial[tid] += partial[tid + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (tid == 0) out[blockIdx.x] = partial[0];\n"
    "}\n"
    "__device__ float warp_reduce(float v) {\n"
    "  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_down(v, off);\n"
    "  return v;\n"
    "}\n"
    "extern \"C\" __global__ void warp_sum(const float *x, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  float v = i < n ? x[i] : 0.0f;\n"
    "  v = warp_reduce(v);\n"
    "  if ((threadIdx.x % warpSize) == 0) out[i / warpSize] = v;\n"
    "}\n";

static void test_reductions(void)
{
    hk_module *m = NULL;
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "reduce";
    int r = hk_module_compile(ctx, reduce_src, &o, &m);
    if (!tap_ok(r == 0, "reduction module compiles (%s)", r ? hk_errmsg(ctx) : "ok"))
        return;
    hk_kernel *bs = NULL, *ws = NULL;
    hk_module_kernel(m, "block_sum", &bs);
    hk_module_kernel(m, "warp_sum", &ws);
    const unsigned n = 1000003, threads = 256;
    unsigned blocks = (n + threads * 2 - 1) / (threads * 2);
    float *x = malloc(n * 4), *out = malloc((size_t)n * 4);
    for (unsigned i = 0; i < n; i++)
        x[i] = tu_uniform(0, 1);
    hk_buffer *dx = upload_f32(x, n), *dout = poisoned_f32(n);
    hk_launch_config cfg = tu_cfg(blocks, 1, 1, threads, 1, 1, threads * sizeof(float));
    hk_arg args[] = {hk_arg_buffer(dx), hk_arg_buffer(dout), hk_arg_uint(n)};
    r = hk_launch(bs, &cfg, args, 3);
    hk_buffer_download(dout, 0, out, blocks * 4);
    int ok = r == 0;
    for (unsigned b = 0; ok && b < blocks; b++) {
        double ref = 0;
        for (unsigned i = b * threads * 2; i < (b + 1) * threads * 2 && i < n; i++)
            ref += x[i];
        if (!(fabs(out[b] - ref) <= 1e-3 * (1 + fabs(ref)))) {
            tap_diag("block %u: got %g want %g", b, out[b], ref);
            ok = 0;
        }
    }
    tap_ok(ok, "block reduction with dynamic shared memory: %u blocks match (%s)", blocks,
           r ? hk_errmsg(ctx) : "ok");

    float nan = NAN;
    hk_buffer_fill(dout, &nan);
    const int wn = 100000; /* not a multiple of 64: a partial last warp */
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    const int wsz = di.warp_size; /* 64 on the CPU backend (as CDNA), 32 on NVIDIA */
    hk_launch_config wcfg = tu_cfg((wn + 255) / 256, 1, 1, 256, 1, 1, 0);
    hk_arg wargs[] = {hk_arg_buffer(dx), hk_arg_buffer(dout), hk_arg_int(wn)};
    r = hk_launch(ws, &wcfg, wargs, 3);
    int nw = (wn + wsz - 1) / wsz;
    hk_buffer_download(dout, 0, out, (size_t)nw * 4);
    ok = r == 0;
    for (int w = 0; ok && w < nw; w++) {
        double ref = 0;
        for (int i = w * wsz; i < (w + 1) * wsz && i < wn; i++)
            ref += x[i];
        if (!(fabs(out[w] - ref) <= 1e-4 * (1 + fabs(ref)))) {
            tap_diag("warp %d: got %g want %g", w, out[w], ref);
            ok = 0;
        }
    }
    tap_ok(ok, "warp-shuffle reduction (warpSize %d): %d warps match (%s)", wsz, nw, r ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(dx);
    hk_buffer_free(dout);
    hk_module_free(m);
    free(x);
    free(out);
}

static void test_histogram(void)
{
    static const char *src =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void histogram(const unsigned *v, unsigned *bins, int n, int nbins) {\n"
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
        "    atomicAdd(&bins[v[i] % nbins], 1u);\n"
        "}\n";
    hk_module *m = NULL;
    hk_kernel *k = tu_kernel(ctx, &m, src, "histogram");
    if (!tap_ok(k != NULL, "histogram compiles"))
        return;
    const int n = 2000000, nbins = 37;
    unsigned *v = malloc(n * 4), bins[37], ref[37] = {0};
    for (int i = 0; i < n; i++) {
        v[i] = (unsigned)tu_next();
        ref[v[i] % nbins]++;
    }
    hk_buffer *dv, *db;
    hk_buffer_alloc(ctx, n, HK_U32, HK_MEM_DEVICE, &dv);
    hk_buffer_alloc(ctx, nbins, HK_U32, HK_MEM_DEVICE, &db);
    hk_buffer_upload(dv, 0, v, n * 4);
    unsigned zero = 0;
    hk_buffer_fill(db, &zero);
    hk_launch_config cfg = tu_cfg(64, 1, 1, 256, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(dv), hk_arg_buffer(db), hk_arg_int(n), hk_arg_int(nbins)};
    int r = hk_launch(k, &cfg, args, 4);
    hk_buffer_download(db, 0, bins, sizeof bins);
    tap_ok(r == 0 && !memcmp(bins, ref, sizeof bins),
           "histogram with atomicAdd from 64 concurrent blocks counts all %d values", n);
    hk_buffer_free(dv);
    hk_buffer_free(db);
    hk_module_free(m);
    free(v);
}

static void test_grid3d(void)
{
    static const char *src =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void index3d(unsigned *out, int nx, int ny, int nz) {\n"
        "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  int z = hipBlockIdx_z * hipBlockDim_z + hipThreadIdx_z;\n"
        "  if (x < nx && y < ny && z < nz)\n"
        "    out[(z * ny + y) * nx + x] = (unsigned)(x | (y << 10) | (z << 20)) ^ (gridDim.x * 7 + gridDim.y * 5 + gridDim.z * 3);\n"
        "}\n";
    hk_module *m = NULL;
    hk_kernel *k = tu_kernel(ctx, &m, src, "index3d");
    if (!tap_ok(k != NULL, "index3d compiles"))
        return;
    const int nx = 37, ny = 19, nz = 11;
    const uint32_t bx = 8, by = 4, bz = 2;
    uint32_t gx = (nx + bx - 1) / bx, gy = (ny + by - 1) / by, gz = (nz + bz - 1) / bz;
    size_t total = (size_t)nx * ny * nz;
    hk_buffer *d;
    hk_buffer_alloc(ctx, total, HK_U32, HK_MEM_DEVICE, &d);
    unsigned poison = 0xDEADBEEF;
    hk_buffer_fill(d, &poison);
    hk_launch_config cfg = tu_cfg(gx, gy, gz, bx, by, bz, 0);
    hk_arg args[] = {hk_arg_buffer(d), hk_arg_int(nx), hk_arg_int(ny), hk_arg_int(nz)};
    int r = hk_launch(k, &cfg, args, 4);
    unsigned *out = malloc(total * 4);
    hk_buffer_download(d, 0, out, total * 4);
    size_t bad = 0;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                unsigned want = (unsigned)(x | (y << 10) | (z << 20)) ^ (gx * 7 + gy * 5 + gz * 3);
                bad += out[((size_t)z * ny + y) * nx + x] != want;
            }
    tap_ok(r == 0 && bad == 0, "3-D grid (%u,%u,%u) x block (%u,%u,%u): every index right (%zu wrong)",
           gx, gy, gz, bx, by, bz, bad);
    hk_buffer_free(d);
    hk_module_free(m);
    free(out);
}

int main(void)
{
    tap_init();
    if (!tu_have_cxx()) {
        tap_skip("CPU backend kernels", "no C++ compiler (c++ or HIPKIT_CXX) on PATH");
        return tap_done();
    }
    tu_seed();
    ctx = tu_context();
    test_axpb();
    test_matmul();
    test_reductions();
    test_histogram();
    test_grid3d();
    hk_context_destroy(ctx);
    return tap_done();
}
