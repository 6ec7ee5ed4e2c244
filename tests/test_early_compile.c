/* hk_grid_wait() (early start's wait, docs/early-start.md) compiles on every
 * path that compiles kernels: the CPU backend, NVRTC for sm_90 (where it is
 * griddepcontrol) and sm_80 (nothing), nvcc, hiprtc and hipcc for an AMD
 * target (nothing). A path whose backend or compiler is absent says SKIP
 * with the reason. */
#include <string.h>

#include "testutil.h"

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void step(float *out, const float *in, const float *w, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  float wi = i < n ? w[i] : 0.0f;\n"
    "  hk_grid_wait();\n"
    "  if (i < n) out[i] = in[i] * wi;\n"
    "}\n";

static void one(hk_context *ctx, const char *backend, const char *target, int offline)
{
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "early_compile";
    void *code = NULL;
    size_t size = 0;
    int r = offline ? hk_compile_offline(ctx, backend, target, src, &o, &code, &size)
                    : hk_compile_for_target(ctx, backend, target, src, &o, &code, &size, NULL);
    char what[96];
    snprintf(what, sizeof what, "%s %s (%s)", backend, target ? target : "default", offline ? "offline" : "JIT");
    if (r == HK_ENOTFOUND || r == HK_EUNSUPPORTED)
        tap_skip(what, hk_errmsg(ctx));
    else
        tap_ok(r == 0 && code && size > 0, "%s: a kernel calling hk_grid_wait() compiles%s%s", what,
               r ? ": " : "", r ? hk_errmsg(ctx) : "");
    free(code);
}

int main(void)
{
    tap_init();
    hk_context_options opt;
    hk_context_options_defaults(&opt);
    opt.quiet = 1;
    hk_context *ctx = NULL;
    if (hk_context_create(&opt, &ctx) != 0) {
        printf("1..0 # SKIP no context: %s\n", hk_errmsg(NULL));
        return 0;
    }
#if defined(__aarch64__)
    one(ctx, "host", "aarch64", 0);
#else
    one(ctx, "host", "x86_64", 0);
#endif
    one(ctx, "cuda", "sm_90", 0);
    one(ctx, "cuda", "sm_80", 0);
    one(ctx, "cuda", "sm_90", 1);
    one(ctx, "hip", "gfx90a", 0);
    one(ctx, "hip", "gfx90a", 1);
    hk_context_destroy(ctx);
    return tap_done();
}
