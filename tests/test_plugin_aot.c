/* Build-time AOT of the shipped plugins (issue 6): every configured image is
 * embedded in fill and affine, a fitting one is loaded (origin aot) and
 * computes correctly, HIPKIT_PLUGIN_AOT=off falls back to the JIT (origin
 * jit or cache), and the fit rules (exact, CUDA minor, AMD features).
 *
 * Built with -DTEST_PLUGIN_BUILD_DIR="BUILD/plugins" and
 * -DTEST_AOT_TARGETS="host:x86_64,cuda:sm_80,..." (plugins/meson.build's
 * aot_targets); links hipkit_internal for hkc_plugin_image_get/_fit. */
#include <hipkit/plugin.h>

#include "testutil.h"

/* internal (src/core/plugin_image.c) */
int hkc_plugin_image_get(const hk_context *ctx, const char *family, int i, const char **source,
                         const char **backend, const char **target, const char **toolchain,
                         const void **data, size_t *size);
int hkc_plugin_image_fit(const hk_context *ctx, const char *backend, const char *target,
                         const char *dev);

static hk_context *context(void)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = tu_backend();
    o.quiet = 1;
    hk_context *ctx = NULL;
    if (hk_context_create(&o, &ctx) != 0) {
        printf("Bail out! cannot create a context: %s\n", hk_errmsg(NULL));
        exit(1);
    }
    return ctx;
}

static int find_image(hk_context *ctx, const char *family, const char *backend,
                      const char *target, size_t *size, const char **tag)
{
    const char *s, *b, *t;
    const void *d;
    for (int i = 0; hkc_plugin_image_get(ctx, family, i, &s, &b, &t, tag, &d, size) == 0; i++)
        if (!strcmp(b, backend) && !strcmp(t, target))
            return 1;
    return 0;
}

/* Does the current device have an image of `family` that fits? */
static int device_fits(hk_context *ctx, const char *family)
{
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    const char *s, *b, *t, *tag;
    const void *d;
    size_t n;
    for (int i = 0; hkc_plugin_image_get(ctx, family, i, &s, &b, &t, &tag, &d, &n) == 0; i++)
        if (!strcmp(b, di.backend) && hkc_plugin_image_fit(ctx, b, t, di.target))
            return 1;
    return 0;
}

static const char *oname(hk_code_origin o)
{
    const char *n = hk_code_origin_name(o);
    return n ? n : "(none)";
}

static hk_code_origin origin_of(hk_context *ctx, const char *family, const char *kernel)
{
    hk_kernel *k = NULL;
    if (hk_plugin_kernel(ctx, family, kernel, &k) != 0) {
        tap_diag("%s.%s: %s", family, kernel, hk_errmsg(ctx));
        return (hk_code_origin)-1;
    }
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    return info.origin;
}

/* fill_f32 then affine_f32 (y = 3y - 1) over n elements; 1 if right. */
static int run_ops(hk_context *ctx)
{
    enum { N = 10007 };
    hk_buffer *y = NULL;
    if (hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &y) != 0)
        return 0;
    hk_arg fa[] = {hk_arg_buffer(y), hk_arg_float(2.5), hk_arg_uint(N)};
    hk_arg aa[] = {hk_arg_buffer(y), hk_arg_buffer(y), hk_arg_float(3), hk_arg_float(-1),
                   hk_arg_uint(N)};
    int ok = hk_plugin_launch(ctx, "fill", "fill_f32", NULL, fa, 3) == 0 &&
             hk_plugin_launch(ctx, "affine", "affine_f32", NULL, aa, 5) == 0 &&
             hk_synchronize(ctx) == 0;
    static float h[N];
    ok = ok && hk_buffer_download(y, 0, h, sizeof h) == 0;
    for (int i = 0; ok && i < N; i++)
        ok = h[i] == 6.5f;
    if (!ok)
        tap_diag("run_ops: %s", hk_errmsg(ctx));
    hk_buffer_free(y);
    return ok;
}

static void test_images_present(void)
{
    hk_context *ctx = context();
    const char *families[] = {"fill", "affine"};
    char targets[] = TEST_AOT_TARGETS;
    for (char *save = NULL, *bt = strtok_r(targets, ",", &save); bt;
         bt = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(bt, ':');
        if (!colon)
            continue;
        *colon = 0;
        for (int f = 0; f < 2; f++) {
            size_t n = 0;
            const char *tag = NULL;
            int has = find_image(ctx, families[f], bt, colon + 1, &n, &tag);
            tap_ok(has && n > 0 && tag && *tag, "%s carries its %s %s image (%zu bytes, %s)",
                   families[f], bt, colon + 1, n, has ? tag : "absent");
        }
        *colon = ':';
    }
    hk_context_destroy(ctx);
}

static void test_aot_used(void)
{
    unsetenv("HIPKIT_PLUGIN_AOT");
    hk_context *ctx = context();
    hk_device_info di;
    hk_device_get(ctx, hk_device_current(ctx), &di);
    if (!device_fits(ctx, "fill") || !device_fits(ctx, "affine")) {
        tap_skip("an AOT image is used", "no image fits this device");
        hk_context_destroy(ctx);
        return;
    }
    hk_code_origin of = origin_of(ctx, "fill", "fill_f32"),
                   oa = origin_of(ctx, "affine", "affine_f32");
    tap_ok(of == HK_ORIGIN_AOT && oa == HK_ORIGIN_AOT,
           "on %s %s both families load their AOT image (origin %s, %s)", di.backend,
           di.target, oname(of), oname(oa));
    tap_ok(run_ops(ctx), "AOT kernels compute y = 3 * 2.5 - 1");
    hk_context_destroy(ctx);
}

static void test_jit_fallback(void)
{
    setenv("HIPKIT_PLUGIN_AOT", "off", 1);
    hk_context *ctx = context();
    hk_code_origin of = origin_of(ctx, "fill", "fill_f32"),
                   oa = origin_of(ctx, "affine", "affine_f32");
    tap_ok((of == HK_ORIGIN_JIT || of == HK_ORIGIN_CACHE) &&
               (oa == HK_ORIGIN_JIT || oa == HK_ORIGIN_CACHE),
           "HIPKIT_PLUGIN_AOT=off compiles the sources (origin %s, %s)", oname(of),
           oname(oa));
    tap_ok(run_ops(ctx), "JIT kernels compute y = 3 * 2.5 - 1");
    hk_context_destroy(ctx);
    unsetenv("HIPKIT_PLUGIN_AOT");
}

static void test_fit_rules(void)
{
    hk_context *ctx = context();
    static const struct {
        const char *backend, *image, *dev;
        int fits; /* 3 above exact, 2 exact, 1 compatible, 0 no */
    } cases[] = {
        {"host", "x86_64", "x86_64", 2},
        {"host", "x86_64", "aarch64", 0},
        {"cuda", "sm_90", "sm_90", 2},
        {"cuda", "sm_80", "sm_86", 1},
        {"cuda", "sm_86", "sm_80", 0},
        {"cuda", "sm_80", "sm_90", 0},
        {"cuda", "sm_90a", "sm_90", 3}, /* what the JIT makes for a 9.0 device */
        {"cuda", "sm_90a", "sm_80", 0},
        {"cuda", "sm_90a", "sm_100", 0},
        {"cuda", "sm_80", "sm_90a", 0},
        {"hip", "gfx90a", "gfx90a:sramecc+:xnack-", 1},
        {"hip", "gfx90a:xnack-", "gfx90a:sramecc+:xnack-", 1},
        {"hip", "gfx90a:xnack+", "gfx90a:sramecc+:xnack-", 0},
        {"hip", "gfx90a", "gfx942:sramecc+:xnack-", 0},
        {"hip", "gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fit = hkc_plugin_image_fit(ctx, cases[i].backend, cases[i].image, cases[i].dev);
        if (fit < 0) {
            char name[160];
            snprintf(name, sizeof name, "%s image %s on %s", cases[i].backend, cases[i].image,
                     cases[i].dev);
            tap_skip(name, "that backend's module is not loaded");
            continue;
        }
        int got = fit > 1000 ? 3 : fit == 1000 ? 2 : fit > 0 ? 1 : 0;
        tap_ok(got == cases[i].fits, "%s image %s on %s: %s", cases[i].backend, cases[i].image,
               cases[i].dev,
               got == 3 ? "above exact" : got == 2 ? "exact" : got ? "compatible" : "no fit");
    }
    /* the closest CUDA minor wins among compatible ones */
    if (hkc_plugin_image_fit(ctx, "cuda", "sm_86", "sm_89") < 0)
        tap_skip("sm_86 beats sm_80 on sm_89", "the cuda backend module is not loaded");
    else
        tap_ok(hkc_plugin_image_fit(ctx, "cuda", "sm_86", "sm_89") >
                   hkc_plugin_image_fit(ctx, "cuda", "sm_80", "sm_89"),
               "sm_86 beats sm_80 on sm_89");
    hk_context_destroy(ctx);
}

/* Images carry the key of the source they were built from, and the key
 * follows everything the compile does (text, module name, defines). */
static void test_source_keys(void)
{
    const char *src = "extern \"C\" __global__ void k(float *y) { y[0] = 1; }";
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "plugin-x-x.hip";
    char a[33], b[33], c[33], d[33], e[33];
    const char *defs[] = {"N=2"};
    int r = hk_plugin_source_key(src, &o, a) | hk_plugin_source_key(src, &o, b);
    r |= hk_plugin_source_key("extern \"C\" __global__ void k(float *y) { y[0] = 2; }", &o, c);
    o.name = "plugin-x-y.hip";
    r |= hk_plugin_source_key(src, &o, d);
    o.name = "plugin-x-x.hip";
    o.defines = defs;
    o.ndefines = 1;
    r |= hk_plugin_source_key(src, &o, e);
    tap_ok(r == 0 && strlen(a) == 32 && !strcmp(a, b) && strcmp(a, c) && strcmp(a, d) &&
               strcmp(a, e),
           "source keys: stable, and another text, name or define gives another (%s)", a);
    tap_ok(hk_plugin_source_key(NULL, &o, a) == HK_EINVAL, "a NULL source has no key");
    hk_context *ctx = context();
    const char *s, *bk, *t, *tag;
    const void *data;
    size_t n;
    int all = 1, count = 0;
    for (int i = 0; hkc_plugin_image_get(ctx, "fill", i, &s, &bk, &t, &tag, &data, &n) == 0; i++) {
        const char *k = strstr(tag, "source-key=");
        all &= k && strlen(k) == 11 + 32;
        count++;
    }
    if (count == 0)
        tap_skip("fill's images name their source key", "no AOT images in this build");
    else
        tap_ok(all, "fill's %d images name their source key in their tags", count);
    hk_context_destroy(ctx);
}

int main(void)
{
    tap_init();
    setenv("HIPKIT_PLUGIN_PATH", TEST_PLUGIN_BUILD_DIR, 1);
    test_fit_rules();
    test_source_keys();
    test_images_present();
    test_aot_used();
    test_jit_fallback();
    return tap_done();
}
