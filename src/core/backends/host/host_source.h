/* The translation unit the CPU backend compiles for one HIP source. */
#ifndef HKC_HOST_SOURCE_H
#define HKC_HOST_SOURCE_H

#include "source_scan.h"
#include "strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes into out the translation unit the CPU backend compiles:
 * `#include <hip/hip_runtime.h>` (hiprtc sources need not include it), a
 * `#line 1 "<name>"` so compiler errors cite the user's file and lines, the
 * user's source with every `extern __shared__ TYPE NAME[];` (any whitespace,
 * with or without __align__/alignas/__attribute__ qualifiers) rewritten:
 * - inside a function body to `TYPE *NAME = (TYPE *)hk_host_dynamic_shared();`
 *   on the same line (line numbers do not move);
 * - at namespace scope to `#define NAME ((TYPE *)hk_host_dynamic_shared())` on
 *   its own line, followed by a #line directive restoring the numbering;
 * then the kernel table (HK_HOST_KERNEL... macros of hip_runtime.h) for
 * kernels[0..nkernels), of which only name and uses_sync are read. Comments,
 * string and character literals and preprocessor lines are left alone.
 * Returns 0, or HK_EINVAL with a message in err (a NULL argument, a kernel
 * name that is not an identifier), or HK_ENOMEM when out ran out of memory. */
int hkc_host_source_prepare(const char *name, const char *source,
                            const struct hkc_source_kernel *kernels, int nkernels,
                            const char *const *globals, int nglobals, hkc_strbuf *out,
                            hkc_strbuf *err);

#ifdef __cplusplus
}
#endif

#endif
