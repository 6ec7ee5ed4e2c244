/* Finding the kernels in HIP source text: their names, parameter lists,
 * lines, linkage and whether they may synchronise. */
#ifndef HKC_SOURCE_SCAN_H
#define HKC_SOURCE_SCAN_H

#include "signature.h"
#include "strbuf.h"

/* One __global__ function found in source text. */
typedef struct hkc_source_kernel {
    char *name;
    hkc_signature sig;
    int line;          /* 1-based line of the declaration */
    int extern_c;      /* declared extern "C" (its symbol name is unmangled) */
    int uses_sync;     /* may reach a barrier or warp operation: see below */
} hkc_source_kernel;

/* Finds the __global__ function definitions in HIP source (comments, string
 * literals and preprocessor lines are skipped; templates are not supported and
 * are skipped). uses_sync is conservative: set when the kernel's body, or any
 * text outside every __global__ body (device helpers, macros), mentions
 * __syncthreads, __syncwarp, a __shfl*, __ballot, __any, __all, __activemask
 * or __reduce_*; `extra_text` (headers the source includes, may be NULL) is
 * scanned as outside text too. Returns 0, or HK_EINVAL with a message naming
 * the kernel and line when a parameter list does not parse. */
int hkc_source_scan(const char *src, const char *extra_text,
                    hkc_source_kernel **out, int *count, hkc_strbuf *err);
void hkc_source_kernels_free(hkc_source_kernel *k, int count);

#endif
