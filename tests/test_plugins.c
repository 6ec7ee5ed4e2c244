/* Plugins: the shipped families against CPU references, and the loader's
 * refusals (ABI, failing init, duplicate family, world-writable folder,
 * registration after init) with their messages. */
#include <dlfcn.h>
#include <sys/stat.h>

#include <hipkit/plugin.h>

#include "testutil.h"

#define POISON 0xa5

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

/* The entry named `name`, or -1. */
static int entry(hk_context *ctx, const char *name, hk_plugin_info *out)
{
    for (int i = 0; i < hk_plugin_count(ctx); i++)
        if (hk_plugin_get(ctx, i, out) == 0 && !strcmp(out->name, name))
            return i;
    return -1;
}

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* y has n + 16 elements, all poisoned; the op gets count n. Returns the
 * buffer (downloaded into *host) after the launch. */
static hk_buffer *poisoned(hk_context *ctx, size_t n, hk_dtype t, void **host)
{
    hk_buffer *b = NULL;
    if (hk_buffer_alloc(ctx, n + 16, t, HK_MEM_MANAGED, &b) != 0)
        return NULL;
    size_t bytes = (n + 16) * hk_dtype_size(t);
    *host = malloc(bytes);
    memset(*host, POISON, bytes);
    hk_buffer_upload(b, 0, *host, bytes);
    return b;
}

static int tail_poisoned(const unsigned char *p, size_t n, hk_dtype t)
{
    size_t es = hk_dtype_size(t);
    for (size_t i = n * es; i < (n + 16) * es; i++)
        if (p[i] != POISON)
            return 0;
    return 1;
}

static double elem(const void *p, hk_dtype t, size_t i)
{
    switch (t) {
    case HK_F32: return ((const float *)p)[i];
    case HK_F16: return hk_f16_to_f32(((const uint16_t *)p)[i]);
    case HK_BF16: return hk_bf16_to_f32(((const uint16_t *)p)[i]);
    case HK_I32: return ((const int32_t *)p)[i];
    default: return NAN;
    }
}

static double rounded(double v, hk_dtype t)
{
    switch (t) {
    case HK_F16: return hk_f16_to_f32(hk_f32_to_f16((float)v));
    case HK_BF16: return hk_bf16_to_f32(hk_f32_to_bf16((float)v));
    case HK_F32: return (float)v;
    default: return v;
    }
}

static void test_fill(hk_context *ctx, const char *kernel, hk_dtype t, double v, size_t n)
{
    void *host = NULL;
    hk_buffer *y = poisoned(ctx, n, t, &host);
    hk_arg args[3] = {hk_arg_buffer(y), t == HK_I32 ? hk_arg_int((int64_t)v) : hk_arg_float(v),
                      hk_arg_uint(n)};
    int r = hk_plugin_launch(ctx, "fill", kernel, NULL, args, 3);
    if (r == 0)
        r = hk_synchronize(ctx);
    hk_buffer_download(y, 0, host, (n + 16) * hk_dtype_size(t));
    size_t bad = 0;
    double want = rounded(v, t);
    for (size_t i = 0; i < n; i++)
        bad += elem(host, t, i) != want;
    tap_ok(r == 0 && bad == 0 && tail_poisoned(host, n, t), "fill.%s n=%zu: every element is %g, nothing past n written (%zu bad) %s",
           kernel, n, want, bad, r ? hk_errmsg(ctx) : "");
    free(host);
    hk_buffer_free(y);
}

static void test_affine(hk_context *ctx, const char *kernel, hk_dtype t, size_t n)
{
    size_t es = hk_dtype_size(t);
    hk_buffer *x = NULL;
    hk_buffer_alloc(ctx, n, t, HK_MEM_MANAGED, &x);
    unsigned char *xs = malloc(n * es);
    for (size_t i = 0; i < n; i++) {
        float f = tu_uniform(-10, 10);
        if (t == HK_F32)
            ((float *)xs)[i] = f;
        else if (t == HK_F16)
            ((uint16_t *)xs)[i] = hk_f32_to_f16(f);
        else
            ((uint16_t *)xs)[i] = hk_f32_to_bf16(f);
    }
    hk_buffer_upload(x, 0, xs, n * es);
    void *host = NULL;
    hk_buffer *y = poisoned(ctx, n, t, &host);
    float a = tu_uniform(-3, 3), b = tu_uniform(-3, 3);
    hk_arg args[5] = {hk_arg_buffer(x), hk_arg_buffer(y), hk_arg_float(a), hk_arg_float(b),
                      hk_arg_uint(n)};
    int r = hk_plugin_launch(ctx, "affine", kernel, NULL, args, 5);
    if (r == 0)
        r = hk_synchronize(ctx);
    hk_buffer_download(y, 0, host, (n + 16) * es);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double want = rounded((double)a * elem(xs, t, i) + b, t);
        double got = elem(host, t, i);
        double tol = t == HK_F32 ? 1e-5 : t == HK_F16 ? 2e-3 : 1.6e-2;
        if (!(fabs(got - want) <= tol * (1 + fabs(want))))
            bad++;
    }
    tap_ok(r == 0 && bad == 0 && tail_poisoned(host, n, t),
           "affine.%s n=%zu matches a*x+b on random data (%zu bad) %s", kernel, n, bad,
           r ? hk_errmsg(ctx) : "");
    free(xs);
    free(host);
    hk_buffer_free(x);
    hk_buffer_free(y);
}

static void test_ops(void)
{
    hk_context *ctx = context();
    hk_plugin_info p;
    if (entry(ctx, "fill", &p) < 0 || entry(ctx, "affine", &p) < 0) {
        tap_skip("shipped families", "fill/affine not loaded (libhipkit not in its build tree?)");
        hk_context_destroy(ctx);
        return;
    }
    size_t sizes[] = {1, 1000003};
    for (int s = 0; s < 2; s++) {
        test_fill(ctx, "fill_f32", HK_F32, tu_uniform(-100, 100), sizes[s]);
        test_fill(ctx, "fill_f16", HK_F16, tu_uniform(-100, 100), sizes[s]);
        test_fill(ctx, "fill_bf16", HK_BF16, tu_uniform(-100, 100), sizes[s]);
        test_fill(ctx, "fill_i32", HK_I32, (double)(int32_t)tu_next(), sizes[s]);
        test_affine(ctx, "affine_f32", HK_F32, sizes[s]);
        test_affine(ctx, "affine_f16", HK_F16, sizes[s]);
        test_affine(ctx, "affine_bf16", HK_BF16, sizes[s]);
    }
    /* mismatches name the operand */
    hk_buffer *f = NULL, *h = NULL;
    hk_buffer_alloc(ctx, 8, HK_F32, HK_MEM_MANAGED, &f);
    hk_buffer_alloc(ctx, 8, HK_F16, HK_MEM_MANAGED, &h);
    hk_arg a1[5] = {hk_arg_buffer(f), hk_arg_buffer(h), hk_arg_float(1), hk_arg_float(0), hk_arg_uint(8)};
    int r = hk_plugin_launch(ctx, "affine", "affine_f32", NULL, a1, 5);
    tap_ok(r == HK_EARG && has(hk_errmsg(ctx), "'y'"), "a dtype mismatch names the operand: %s", hk_errmsg(ctx));
    hk_arg a2[5] = {hk_arg_buffer(f), hk_arg_buffer(f), hk_arg_float(1), hk_arg_float(0), hk_arg_uint(9)};
    r = hk_plugin_launch(ctx, "affine", "affine_f32", NULL, a2, 5);
    tap_ok(r == HK_EARG && has(hk_errmsg(ctx), "operand x"), "a short buffer names the operand: %s", hk_errmsg(ctx));
    r = hk_plugin_launch(ctx, "affine", "nope", NULL, a2, 5);
    tap_ok(r == HK_ENOTFOUND && has(hk_errmsg(ctx), "affine_f16"), "an unknown kernel lists the family's: %s", hk_errmsg(ctx));
    hk_buffer_free(f);
    hk_buffer_free(h);
    hk_context_destroy(ctx);
}

static void test_refusals(void)
{
    setenv("HIPKIT_PLUGIN_PATH", TEST_PLUGIN_DIR, 1);
    hk_context *ctx = context();
    hk_plugin_info p;
    char newer_abi[32], host_abi[32]; /* the test plugin claims the next minor */
    snprintf(newer_abi, sizeof newer_abi, "ABI %d.%d", HK_ABI_VERSION_MAJOR, HK_ABI_VERSION_MINOR + 7);
    snprintf(host_abi, sizeof host_abi, "ABI %d.%d", HK_ABI_VERSION_MAJOR, HK_ABI_VERSION_MINOR);
    int i = entry(ctx, "badabi", &p);
    tap_ok(i >= 0 && has(p.error, "plugin 'badabi'") && has(p.error, newer_abi) && has(p.error, host_abi),
           "a plugin for a newer minor ABI is refused naming both ABIs: %s", i >= 0 ? p.error : "(absent)");
    i = entry(ctx, "shortabi", &p);
    tap_ok(i >= 0 && has(p.error, "hk_plugin_shortabi_abi is 1 byte") && has(p.error, "const unsigned [2]"),
           "a plugin whose ABI symbol is not two unsigned ints is refused, its size named: %s",
           i >= 0 ? p.error : "(absent)");
    i = entry(ctx, "initfail", &p);
    tap_ok(i >= 0 && has(p.error, "init failed") && has(p.error, "deliberate failure number 42"),
           "a failing init is reported with its message: %s", i >= 0 ? p.error : "(absent)");
    int fams = 0;
    for (int k = 0; k < hk_plugin_count(ctx); k++)
        if (hk_plugin_get(ctx, k, &p) == 0 && !strcmp(p.name, "initfail") && !*p.error)
            fams++;
    tap_ok(fams == 0, "nothing the failing plugin registered stays");
    i = entry(ctx, "dupfam", &p);
    tap_ok(i >= 0 && !*p.error && !strcmp(p.version, "a"), "the first family 'dupfam' loads (from dupa)");
    i = entry(ctx, "dupb", &p);
    tap_ok(i >= 0 && has(p.error, "family 'dupfam' is already registered"),
           "a second family of the same name is refused: %s", i >= 0 ? p.error : "(absent)");
    tap_ok(hk_plugin_find(ctx, "fill") >= 0 || hk_plugin_find(ctx, "dupfam") >= 0,
           "the other plugins still load");
    char path[4096];
    snprintf(path, sizeof path, "%s/hipkit-plugin-dupa.so", TEST_PLUGIN_DIR);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const hk_plugin_api *const *kept = dl ? dlsym(dl, "hk_plugin_dupa_kept") : NULL;
    int late = kept && *kept ? (*kept)->register_family(*kept, "late", "1", "after init") : 0;
    tap_ok(late < 0 && hk_plugin_find(ctx, "late") < 0, "registering after init is refused (%d)", late);
    /* an explicit-geometry kernel needs a configuration, and then runs */
    hk_buffer *b = NULL;
    hk_buffer_alloc(ctx, 1, HK_I32, HK_MEM_MANAGED, &b);
    int32_t zero = 0, got = -1;
    hk_buffer_upload(b, 0, &zero, 4);
    hk_arg arg = hk_arg_buffer(b);
    int r1 = hk_plugin_launch(ctx, "dupfam", "k", NULL, &arg, 1);
    hk_launch_config one = {{1, 1, 1}, {1, 1, 1}, 0};
    int r2 = hk_plugin_launch(ctx, "dupfam", "k", &one, &arg, 1);
    hk_synchronize(ctx);
    hk_buffer_download(b, 0, &got, 4);
    tap_ok(r1 == HK_ELAUNCH && r2 == 0 && got == 1, "explicit geometry: refused without grid/block, runs with them");
    /* an image built from an older source is ignored: the source runs */
    hk_kernel *ks = NULL;
    hk_kernel_info ki;
    got = 0;
    hk_buffer_upload(b, 0, &zero, 4);
    int r3 = hk_plugin_launch(ctx, "stale", "put", &one, &arg, 1);
    hk_synchronize(ctx);
    hk_buffer_download(b, 0, &got, 4);
    int r4 = hk_plugin_kernel(ctx, "stale", "put", &ks);
    if (r4 == 0)
        hk_kernel_get_info(ks, &ki);
    tap_ok(r3 == 0 && got == 2 && r4 == 0 && ki.origin != HK_ORIGIN_AOT,
           "a stale image is ignored: the embedded source runs (p[0] = %d, origin %s)", (int)got,
           r4 == 0 && hk_code_origin_name(ki.origin) ? hk_code_origin_name(ki.origin) : "?");
    hk_buffer_free(b);
    hk_context_destroy(ctx);

    char dir[] = "/tmp/hk-plugins-XXXXXX";
    if (!mkdtemp(dir)) {
        tap_skip("world-writable folder", "mkdtemp failed");
        return;
    }
    chmod(dir, 0777);
    setenv("HIPKIT_PLUGIN_PATH", dir, 1);
    ctx = context();
    i = entry(ctx, dir, &p);
    tap_ok(i >= 0 && has(p.error, "world-writable"), "a world-writable folder is refused: %s",
           i >= 0 ? p.error : "(absent)");
    hk_context_destroy(ctx);
    rmdir(dir);
    unsetenv("HIPKIT_PLUGIN_PATH");
}

/* Every element of f32 buffer b equals v. */
static int all_equal(hk_context *ctx, hk_buffer *b, size_t n, float v)
{
    float *h = malloc(n * sizeof *h);
    int ok = h && hk_synchronize(ctx) == 0 && hk_buffer_download(b, 0, h, n * sizeof *h) == 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = h[i] == v;
    free(h);
    return ok;
}

/* hk_plugin_reload: the family comes back in its place, a kernel taken
 * before still runs, lookups by name find the new one, and failures leave
 * what is loaded alone. */
static void test_reload(void)
{
    setenv("HIPKIT_PLUGIN_PATH", TEST_PLUGIN_DIR, 1);
    hk_context *ctx = context();
    hk_plugin_info p;
    int i0 = entry(ctx, "affine", &p), n0 = hk_plugin_count(ctx);
    hk_kernel *k0 = NULL, *k1 = NULL;
    if (i0 < 0 || hk_plugin_kernel(ctx, "affine", "affine_f32", &k0) != 0) {
        tap_skip("reload", "the affine family is not loaded");
        hk_context_destroy(ctx);
        unsetenv("HIPKIT_PLUGIN_PATH");
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", p.path);
    int r = hk_plugin_reload(ctx, "affine");
    int i1 = entry(ctx, "affine", &p);
    tap_ok(r == 0 && i1 == i0 && hk_plugin_count(ctx) == n0 && !strcmp(p.path, path) && !*p.error,
           "affine reloads in its place (%d: %s)", r, r ? hk_errmsg(ctx) : p.path);
    r = hk_plugin_kernel(ctx, "affine", "affine_f32", &k1);
    tap_ok(r == 0 && k1 != k0, "its kernels are made again after a reload");
    enum { N = 1000 };
    hk_buffer *y = NULL;
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_MANAGED, &y);
    float one = 1;
    hk_buffer_fill(y, &one);
    hk_arg args[5] = {hk_arg_buffer(y), hk_arg_buffer(y), hk_arg_float(2), hk_arg_float(1),
                      hk_arg_uint(N)};
    hk_launch_config cfg = {{4, 1, 1}, {256, 1, 1}, 0};
    r = hk_launch(k0, &cfg, args, 5);
    tap_ok(r == 0 && all_equal(ctx, y, N, 3), "a kernel taken before the reload still runs (%s)",
           r ? hk_errmsg(ctx) : "y = 2*1 + 1");
    r = hk_plugin_launch(ctx, "affine", "affine_f32", NULL, args, 5);
    tap_ok(r == 0 && all_equal(ctx, y, N, 7), "a launch by name runs the reloaded family (%s)",
           r ? hk_errmsg(ctx) : "y = 2*3 + 1");
    hk_buffer_free(y);
    r = hk_plugin_reload(ctx, "nosuch");
    tap_ok(r == HK_ENOTFOUND && has(hk_errmsg(ctx), "'nosuch'"), "an unknown plugin: %s",
           hk_errmsg(ctx));
    r = hk_plugin_reload(ctx, "initfail");
    int i = entry(ctx, "initfail", &p);
    tap_ok(r == HK_EINVAL && has(hk_errmsg(ctx), "deliberate failure number 42") &&
               has(hk_errmsg(ctx), "what is loaded stays") && i >= 0 && *p.error &&
               hk_plugin_count(ctx) == n0,
           "a reload whose init fails leaves the list as it was: %s", hk_errmsg(ctx));
    hk_context_destroy(ctx);
    unsetenv("HIPKIT_PLUGIN_PATH");
}

int main(void)
{
    tap_init();
    tu_seed();
    if (tu_on_host() && !tu_have_cxx()) {
        tap_skip("plugins", "no C++ compiler for the host backend");
        printf("1..1\n");
        return 0;
    }
    test_ops();
    test_refusals();
    test_reload();
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
