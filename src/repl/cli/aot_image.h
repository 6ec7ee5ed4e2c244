/* Plugin kernels built ahead of time, as the plugin loader would compile
 * them (src/core/plugin_image.c): what `hipkit compile --plugin`
 * (cmd_compile_plugin.c) and the build's own tools/aot/hkc_aot.c share.
 * Public API only. */
#ifndef HKL_CLI_AOT_IMAGE_H
#define HKL_CLI_AOT_IMAGE_H

#include <stddef.h>

#include <hipkit/hipkit.h>

/* A context for building images: quiet, on the host backend (every loaded
 * backend compiles for its targets without a device), loading no plugins
 * (the ones being built need these images), with the disk cache off (a
 * build tool keeps out of the user's cache). NULL with the reason in why. */
hk_context *hkl_aot_context(char *why, size_t cap);

/* Compiles `source` for backend and target under the module name `module`
 * ("plugin-FAMILY-SOURCE", the loader's) with default options: *code (malloc'd)
 * is what the JIT would make. *tag (malloc'd) is the toolchain tag to embed
 * beside it: the backend's toolchain identity and " source-key=KEY"
 * (hk_plugin_source_key), by which the loader tells a stale image. 0, or
 * a hipkit error code with the message in hk_errmsg(ctx). */
int hkl_aot_image(hk_context *ctx, const char *backend, const char *target, const char *module,
                  const char *source, void **code, size_t *size, char **tag);

#endif
