/* What `hipkit inspect` (cmd_inspect.c) and `hipkit compile` share: a
 * context for device-free work (context.c) and the names of code object
 * formats. */
#ifndef HKL_CLI_INSPECT_H
#define HKL_CLI_INSPECT_H

#include <stddef.h>

#include <hipkit/hipkit.h>

/* A quiet context for device-free work: the default backend, else the host
 * backend (HIPKIT_BACKEND may name one that is unavailable here; inspection
 * asks every loaded backend anyway). NULL with the reason in why. */
hk_context *hkl_inspect_context(char *why, size_t cap);

/* "AMDGPU code object" for "amdgpu-elf", "clang offload bundle" for
 * "offload-bundle", else the format as given. */
const char *hkl_format_name(const char *format);

/* Nonzero when path starts with GGUF's magic; hkl_inspect_gguf lists its
 * metadata and tensors (inspect_gguf.c) and returns the exit status. */
int hkl_is_gguf(const char *path);
int hkl_inspect_gguf(const char *path);

#endif
