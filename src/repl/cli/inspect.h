/* `hipkit inspect`: what a code object holds, read with no GPU (inspect.c),
 * and the helpers `hipkit compile` and hk.inspect share with it. */
#ifndef HKL_INSPECT_H
#define HKL_INSPECT_H

#include <stddef.h>

#include <hipkit/hipkit.h>

/* argv[1] is "inspect". Returns the exit status. */
int hkl_cmd_inspect(int argc, char **argv);

/* A quiet context for device-free work: the default backend, else the host
 * backend (HIPKIT_BACKEND may name one that is unavailable here; inspection
 * asks every loaded backend anyway). NULL with the reason in why. */
hk_context *hkl_inspect_context(char *why, size_t cap);

/* "AMDGPU code object" for "amdgpu-elf", "clang offload bundle" for
 * "offload-bundle", else the format as given. */
const char *hkl_format_name(const char *format);

#endif
