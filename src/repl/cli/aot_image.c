/* Plugin kernels built ahead of time (aot_image.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_image.h"

hk_context *hkl_aot_context(char *why, size_t cap)
{
    setenv("HIPKIT_CACHE", "off", 1);
    hk_context_options co;
    hk_context_options_defaults(&co);
    co.quiet = 1;
    co.no_plugins = 1;
    co.backend = "host";
    hk_context *ctx = NULL;
    if (hk_context_create(&co, &ctx) != 0) {
        snprintf(why, cap, "%s", hk_errmsg(NULL));
        return NULL;
    }
    return ctx;
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

int hkl_aot_image(hk_context *ctx, const char *backend, const char *target, const char *module,
                  const char *source, void **code, size_t *size, char **tag)
{
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = module;
    o.no_cache = 1;
    *code = NULL;
    *tag = NULL;
    int r = hk_compile_for_target(ctx, backend, target, source, &o, code, size, NULL);
    if (r != 0)
        return r;
    char key[33];
    o.no_cache = 0; /* not part of the key; the loader's options are the defaults */
    r = hk_plugin_source_key(source, &o, key);
    const char *tc = toolchain_of(ctx, backend);
    size_t n = strlen(tc) + sizeof " source-key=" + sizeof key;
    if (r == 0 && !(*tag = malloc(n)))
        r = HK_ENOMEM;
    if (r != 0) {
        free(*code);
        *code = NULL;
        return r;
    }
    snprintf(*tag, n, "%s%ssource-key=%s", tc, *tc ? " " : "", key);
    return 0;
}
