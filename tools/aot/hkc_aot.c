/* hkc-aot: compiles a HIP source ahead of time into the code object hipkit's
 * JIT would make for it, so a plugin can embed it (issue 6).
 *
 *   hkc-aot --backend host|cuda --target T --name N IN.hip -o OUT [--tag TAGFILE]
 *
 * N is the module name the plugin loader compiles under
 * ("plugin-FAMILY-SOURCE", see hkc_plugin_source_module in src/core/plugin_image.c): the name is
 * part of what the compilers see, so it must match for the image to equal
 * the JIT's. It calls the JIT's own pipeline through the public API
 * (hk_compile_for_target, default options, the disk cache off), so an image
 * is what the JIT would make. TAGFILE receives the backend's toolchain
 * identity (the cache's), embedded beside the image.
 *
 * host: T must be this machine's target id (uname's machine, what the host
 *       backend reports); the image is a shared object built by the system
 *       C++ compiler (HIPKIT_CXX), checked at load for HK_HOST_ABI_VERSION.
 * cuda: T is sm_XY; NVRTC needs no GPU and no driver.
 * hip:  T is an AMD target id (gfx90a, gfx90a:xnack-); hiprtc needs no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"

static int usage(void)
{
    fprintf(stderr, "usage: hkc-aot --backend host|cuda|hip --target T --name N IN.hip -o OUT "
                    "[--tag TAGFILE]\n");
    return 2;
}

static int write_all(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "hkc-aot: cannot write %s\n", path);
    return !ok;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        char *bigger = n == cap ? realloc(buf, (cap *= 2) + 1) : buf;
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    if (buf)
        buf[n] = 0;
    fclose(f);
    return buf;
}

/* The cache's identity of the backend's compiler. */
static const char *toolchain_of(hk_context *ctx, const char *backend)
{
    hk_backend_info bi;
    for (int i = 0; i < hk_backend_count(ctx); i++)
        if (hk_backend_get(ctx, i, &bi) == 0 && !strcmp(bi.name, backend))
            return bi.toolchain ? bi.toolchain : "";
    return "";
}

int main(int argc, char **argv)
{
    const char *backend = NULL, *target = NULL, *name = NULL, *in = NULL, *out = NULL,
               *tagfile = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--backend") ? &backend
                            : !strcmp(a, "--target") ? &target
                            : !strcmp(a, "--name")   ? &name
                            : !strcmp(a, "-o")       ? &out
                            : !strcmp(a, "--tag")    ? &tagfile
                                                     : NULL;
        if (slot) {
            if (++i >= argc)
                return usage();
            *slot = argv[i];
        } else if (a[0] == '-' || in) {
            return usage();
        } else {
            in = a;
        }
    }
    if (!backend || !target || !name || !in || !out)
        return usage();
    char *source = read_all(in);
    if (!source) {
        fprintf(stderr, "hkc-aot: cannot read %s\n", in);
        return 1;
    }
    /* A build tool keeps out of the user's cache and loads no plugins (the
     * ones being built need these images). */
    setenv("HIPKIT_CACHE", "off", 1);
    hk_context_options co;
    hk_context_options_defaults(&co);
    co.quiet = 1;
    co.no_plugins = 1;
    co.backend = "host";
    hk_context *ctx = NULL;
    if (hk_context_create(&co, &ctx) != 0) {
        fprintf(stderr, "hkc-aot: no hipkit context: %s\n", hk_errmsg(NULL));
        free(source);
        return 1;
    }
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = name;
    o.no_cache = 1;
    void *code = NULL;
    size_t size = 0;
    int rc = 0;
    if (hk_compile_for_target(ctx, backend, target, source, &o, &code, &size, NULL) != 0) {
        fprintf(stderr, "hkc-aot: %s (%s %s): %s\n", in, backend, target, hk_errmsg(ctx));
        rc = 1;
    } else {
        rc = write_all(out, code, size);
        const char *tag = toolchain_of(ctx, backend);
        if (!rc && tagfile)
            rc = write_all(tagfile, tag, strlen(tag));
    }
    free(code);
    free(source);
    hk_context_destroy(ctx);
    return rc;
}
