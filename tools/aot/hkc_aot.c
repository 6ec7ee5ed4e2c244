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
 * identity (the cache's) and the image's source key, embedded beside the
 * image: the loader ignores an image whose key is not the embedded
 * source's (src/repl/cli/aot_image.c, shared with `hipkit compile
 * --plugin`).
 *
 * host: T must be this machine's target id (uname's machine, what the host
 *       backend reports); the image is a shared object built by the system
 *       C++ compiler (HIPKIT_CXX), checked at load for HK_HOST_ABI_VERSION.
 * cuda: T is sm_XY; NVRTC needs no GPU and no driver.
 * hip:  T is an AMD target id (gfx90a, gfx90a:xnack-); hiprtc needs no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_image.h"

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
    char why[1024];
    hk_context *ctx = hkl_aot_context(why, sizeof why);
    if (!ctx) {
        fprintf(stderr, "hkc-aot: no hipkit context: %s\n", why);
        free(source);
        return 1;
    }
    void *code = NULL;
    size_t size = 0;
    char *tag = NULL;
    int rc = 0;
    if (hkl_aot_image(ctx, backend, target, name, source, &code, &size, &tag) != 0) {
        fprintf(stderr, "hkc-aot: %s (%s %s): %s\n", in, backend, target, hk_errmsg(ctx));
        rc = 1;
    } else {
        rc = write_all(out, code, size);
        if (!rc && tagfile)
            rc = write_all(tagfile, tag, strlen(tag));
    }
    free(tag);
    free(code);
    free(source);
    hk_context_destroy(ctx);
    return rc;
}
