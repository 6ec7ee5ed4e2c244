/* The smallest complete hipkit program: compile y = a*x + b from HIP source
 * on the best backend present, launch it, check and print the result and
 * where the code came from. */
#include <hipkit/hipkit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *source =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + b;\n"
    "}\n";

#define CHECK(call)                                                                     \
    do {                                                                                \
        int rc_ = (call);                                                               \
        if (rc_ != 0) {                                                                 \
            fprintf(stderr, "%s failed: %s\n%s\n", #call, hk_strerror(rc_), hk_errmsg(ctx)); \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main(void)
{
    hk_context *ctx = NULL;
    if (hk_context_create(NULL, &ctx) != 0) {
        fprintf(stderr, "hipkit: %s\n", hk_errmsg(NULL));
        return 1;
    }
    hk_device_info dev;
    hk_device_get(ctx, hk_device_current(ctx), &dev);
    printf("device: %s:%d %s (%s)\n", dev.backend, dev.index, dev.name, dev.target);

    const int n = 1 << 20;
    const float a = 2.5f, b = -1.0f;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (int i = 0; i < n; i++)
        x[i] = (float)i / n;

    hk_module *m;
    hk_kernel *k;
    hk_buffer *dx, *dy;
    hk_compile_options opts;
    hk_compile_options_defaults(&opts);
    opts.name = "axpb";
    CHECK(hk_module_compile(ctx, source, &opts, &m));
    CHECK(hk_module_kernel(m, "axpb", &k));
    CHECK(hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &dx));
    CHECK(hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &dy));
    CHECK(hk_buffer_upload(dx, 0, x, n * sizeof *x));
    float nan = NAN;
    CHECK(hk_buffer_fill(dy, &nan));

    hk_launch_config cfg = {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0};
    hk_arg args[] = {hk_arg_float(a), hk_arg_buffer(dx), hk_arg_float(b), hk_arg_buffer(dy),
                     hk_arg_int(n)};
    CHECK(hk_launch(k, &cfg, args, 5));
    CHECK(hk_synchronize(ctx));
    CHECK(hk_buffer_download(dy, 0, y, n * sizeof *y));

    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += !(fabsf(y[i] - (a * x[i] + b)) <= 1e-6f);
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    char sig[256];
    hk_kernel_signature(k, sig, sizeof sig);
    printf("kernel: axpb%s\n", sig);
    printf("code: %s in %.1f ms\n", hk_code_origin_name(info.origin), info.compile_ms);
    printf("y[0..3] = %g %g %g %g ... y[%d] = %g\n", y[0], y[1], y[2], y[3], n - 1, y[n - 1]);
    printf("%s: %d of %d elements differ from a*x+b\n", bad ? "FAILED" : "ok", bad, n);

    hk_buffer_free(dx);
    hk_buffer_free(dy);
    hk_module_free(m);
    hk_context_destroy(ctx);
    free(x);
    free(y);
    return bad != 0;
}
