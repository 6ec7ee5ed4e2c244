/* Every argument mistake gets its own message naming the parameter; a
 * compile error carries the compiler's line; a faulting kernel fails its
 * launch and the next launch in the same process works. */
#include "testutil.h"

static hk_context *ctx;

static int msg_has(const char *needle)
{
    const char *m = hk_errmsg(ctx);
    if (strstr(m, needle))
        return 1;
    tap_diag("message \"%s\" lacks \"%s\"", m, needle);
    return 0;
}

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void oob(float *y, int stride) {\n"
    "  y[(blockIdx.x * blockDim.x + threadIdx.x) * stride] = 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void checks(int v) {\n"
    "  assert(v > 0);\n"
    "}\n"
    "extern \"C\" __global__ void divide(int *out, int d) {\n"
    "  out[0] = 100 / d;\n"
    "}\n";

static void test_arguments(hk_kernel *k, hk_buffer *x, hk_buffer *y, hk_buffer *xd)
{
    hk_launch_config cfg = tu_cfg(1, 1, 1, 64, 1, 1, 0);
    int n = (int)hk_buffer_length(x);
    hk_arg good[] = {hk_arg_float(2), hk_arg_buffer(x), hk_arg_float(1), hk_arg_buffer(y), hk_arg_int(n)};
    int r = hk_launch(k, &cfg, good, 5);
    tap_ok(r == 0, "a correct launch works (%s)", r ? hk_errmsg(ctx) : "ok");

    r = hk_launch(k, &cfg, good, 4);
    tap_ok(r == HK_EARG && msg_has("expects 5 arguments") && msg_has("got 4"),
           "too few arguments: says how many it expects, and the signature");

    hk_arg wrongtype[] = {hk_arg_buffer(x), hk_arg_buffer(x), hk_arg_float(1), hk_arg_buffer(y), hk_arg_int(n)};
    r = hk_launch(k, &cfg, wrongtype, 5);
    tap_ok(r == HK_EARG && msg_has("parameter 1 'a'"), "a buffer for a float parameter names parameter 1 'a'");

    hk_arg wrongdtype[] = {hk_arg_float(2), hk_arg_buffer(xd), hk_arg_float(1), hk_arg_buffer(y), hk_arg_int(n)};
    r = hk_launch(k, &cfg, wrongdtype, 5);
    tap_ok(r == HK_EARG && msg_has("parameter 2 'x'") && msg_has("f64"),
           "an f64 buffer for const float *x names parameter 2 and both types");

    hk_arg range[] = {hk_arg_float(2), hk_arg_buffer(x), hk_arg_float(1), hk_arg_buffer(y), hk_arg_int(3000000000ll)};
    r = hk_launch(k, &cfg, range, 5);
    tap_ok(r == HK_EARG && msg_has("parameter 5 'n'") && msg_has("3000000000"),
           "3000000000 for int n is out of range, and says so");

    hk_arg frac[] = {hk_arg_float(2), hk_arg_buffer(x), hk_arg_float(1), hk_arg_buffer(y), hk_arg_float(2.5)};
    r = hk_launch(k, &cfg, frac, 5);
    tap_ok(r == HK_EARG && msg_has("parameter 5 'n'"), "2.5 for int n is refused");

    hk_arg nullbuf[] = {hk_arg_float(2), hk_arg_buffer(NULL), hk_arg_float(1), hk_arg_buffer(y), hk_arg_int(n)};
    r = hk_launch(k, &cfg, nullbuf, 5);
    tap_ok(r == HK_EARG && msg_has("parameter 2 'x'") && msg_has("hk_arg_null"),
           "a NULL buffer names the parameter and the deliberate alternative");

    hk_launch_config big = tu_cfg(1, 1, 1, 2048, 1, 1, 0);
    r = hk_launch(k, &big, good, 5);
    tap_ok(r == HK_ELAUNCH && msg_has("2048"), "a block of 2048 threads is refused before launch");

    hk_launch_config zero = tu_cfg(0, 1, 1, 64, 1, 1, 0);
    r = hk_launch(k, &zero, good, 5);
    tap_ok(r == HK_ELAUNCH && msg_has("grid.x is 0"), "a zero grid dimension is refused");

    hk_launch_config shared = tu_cfg(1, 1, 1, 64, 1, 1, 1 << 20);
    r = hk_launch(k, &shared, good, 5);
    tap_ok(r == HK_ELAUNCH && msg_has("shared"), "1 MiB of dynamic shared memory is refused");
}

static void test_compile_error(void)
{
    static const char *bad =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void broken(float *y) {\n"
        "  y[threadIdx.x] = undeclared_thing;\n"
        "}\n";
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "broken.hip";
    hk_module *m = NULL;
    int r = hk_module_compile(ctx, bad, &o, &m);
    tap_ok(r == HK_ECOMPILE && msg_has("broken.hip:3:") && msg_has("undeclared_thing"),
           "a compile error gives the compiler's message with file and line 3");
    tap_ok(m == NULL, "a failed compile returns no module");
}

static void test_faults(hk_module *m, hk_buffer *x, hk_buffer *y)
{
    hk_kernel *oob = NULL, *axpb = NULL, *checks = NULL, *divide = NULL;
    hk_module_kernel(m, "oob", &oob);
    hk_module_kernel(m, "axpb", &axpb);
    hk_module_kernel(m, "checks", &checks);
    hk_module_kernel(m, "divide", &divide);
    size_t n = hk_buffer_length(x);
    float *before = malloc(n * 4), *after = malloc(n * 4);
    hk_buffer_download(x, 0, before, n * 4);

    hk_launch_config cfg = tu_cfg(4, 1, 1, 64, 1, 1, 0);
    /* thread 1 writes 4096 bytes in: inside the guard page after y's 4000 */
    hk_arg a[] = {hk_arg_buffer(y), hk_arg_int(1024)};
    int r = hk_launch(oob, &cfg, a, 2);
    tap_ok(r == HK_EFAULT && msg_has("kernel oob faulted") && msg_has("past the end"),
           "an out-of-bounds write fails the launch naming the kernel and the buffer");
    hk_buffer_download(x, 0, after, n * 4);
    tap_ok(!memcmp(before, after, n * 4), "other buffers are intact after the fault");

    hk_launch_config one = tu_cfg(1, 1, 1, 64, 1, 1, 0);
    hk_arg good[] = {hk_arg_float(3), hk_arg_buffer(x), hk_arg_float(-1), hk_arg_buffer(y), hk_arg_int((int)n)};
    float nan = NAN;
    hk_buffer_fill(y, &nan);
    r = hk_launch(axpb, &one, good, 5);
    float *out = malloc(n * 4);
    hk_buffer_download(y, 0, out, n * 4);
    int ok = r == 0;
    for (size_t i = 0; i < 64 && i < n; i++)
        ok &= out[i] == 3 * before[i] - 1;
    tap_ok(ok, "the next launch in the same process works and is right");

    hk_arg av[] = {hk_arg_int(0)};
    r = hk_launch(checks, &one, av, 1);
    tap_ok(r == HK_EFAULT && msg_has("v > 0"), "a failed device assert fails the launch with the expression");
    av[0] = hk_arg_int(1);
    r = hk_launch(checks, &one, av, 1);
    tap_ok(r == 0, "the same kernel with a valid argument passes its assert");

    hk_buffer *d;
    hk_buffer_alloc(ctx, 1, HK_I32, HK_MEM_DEVICE, &d);
    hk_arg dv[] = {hk_arg_buffer(d), hk_arg_int(0)};
    r = hk_launch(divide, &one, dv, 2);
    tap_ok(r == HK_EFAULT && msg_has("division"), "integer division by zero fails the launch, not the process");
    hk_buffer_free(d);
    free(before);
    free(after);
    free(out);
}

static void test_misc(hk_module *m)
{
    hk_kernel *k = NULL;
    int r = hk_module_kernel(m, "nonesuch", &k);
    tap_ok(r == HK_ENOTFOUND && msg_has("nonesuch") && msg_has("axpb"),
           "an unknown kernel name lists the kernels the module has");
    r = hk_module_kernel_sig(m, "axpb", "float a, const float *x, float b, float *y", &k);
    tap_ok(r == HK_EARG && msg_has("4 parameters"), "a user signature that disagrees with the code object is refused");
    hk_buffer *b = NULL;
    r = hk_buffer_alloc(ctx, 10, HK_F32, HK_MEM_MMAP, &b);
    tap_ok(r == HK_EINVAL && msg_has("hk_buffer_mmap"), "hk_buffer_alloc in mmap mode points at hk_buffer_mmap");
    r = hk_buffer_mmap(ctx, "/nonexistent/file.bin", HK_F32, NULL, &b);
    tap_ok(r == HK_EIO && msg_has("/nonexistent/file.bin"), "a missing file is named");
    hk_context *bad = NULL;
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = "nonesuch";
    r = hk_context_create(&o, &bad);
    tap_ok(r == HK_EUNAVAIL && strstr(hk_errmsg(NULL), "unknown backend 'nonesuch'"),
           "an unknown backend is named (%s)", hk_errmsg(NULL));
    o.backend = "cuda";
    r = hk_context_create(&o, &bad);
    tap_ok(r == HK_EUNAVAIL && strstr(hk_errmsg(NULL), "cuda"), "an unavailable backend says why: %s",
           hk_errmsg(NULL));
}

int main(void)
{
    tap_init();
    if (!tu_have_cxx()) {
        tap_skip("error paths", "no C++ compiler (c++ or HIPKIT_CXX) on PATH");
        return tap_done();
    }
    tu_seed();
    ctx = tu_context();
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "errors";
    hk_module *m = NULL;
    int r = hk_module_compile(ctx, src, &o, &m);
    if (!tap_ok(r == 0, "test module compiles (%s)", r ? hk_errmsg(ctx) : "ok"))
        return tap_done();
    hk_kernel *k = NULL;
    hk_module_kernel(m, "axpb", &k);
    const int n = 1000;
    hk_buffer *x, *y, *xd;
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &x);
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &y);
    hk_buffer_alloc(ctx, n, HK_F64, HK_MEM_DEVICE, &xd);
    float *data = malloc(n * 4);
    for (int i = 0; i < n; i++)
        data[i] = tu_uniform(-5, 5);
    hk_buffer_upload(x, 0, data, n * 4);
    free(data);
    test_arguments(k, x, y, xd);
    test_compile_error();
    test_faults(m, x, y);
    test_misc(m);
    hk_buffer_free(x);
    hk_buffer_free(y);
    hk_buffer_free(xd);
    hk_module_free(m);
    hk_context_destroy(ctx);
    return tap_done();
}
