/* Kernel parameter lists: parsed from HIP source or given by the caller as C,
 * and the packing of typed arguments into a kernarg buffer with C struct
 * layout. Nothing here names a vendor API. */
#ifndef HKC_SIGNATURE_H
#define HKC_SIGNATURE_H

#include <stdint.h>

#include "hipkit/hipkit.h"
#include "strbuf.h"

typedef struct hkc_param {
    char *name;       /* "" when unnamed */
    char *type;       /* normalised C spelling: "const float *", "uint32_t", "__half", "float4" */
    hk_param_kind kind;
    hk_dtype dtype;   /* scalar type, vector element, or pointee; HK_DTYPE_COUNT for void* and
                       * unknown pointees */
    int is_const;     /* pointee const */
    int is_bool;      /* scalar bool (dtype is HK_U8, size 1) */
    uint32_t size, align, offset;
} hkc_param;

typedef struct hkc_signature {
    hkc_param *params;
    int count;
    uint32_t kernarg_size; /* rounded up to the largest alignment, as a C struct */
} hkc_signature;

/* Parses a C parameter list such as "float a, const float *__restrict__ x,
 * size_t n" (with or without the surrounding parentheses; "" and "void" are
 * empty lists). Computes offsets with C layout. On failure returns HK_EINVAL
 * and writes into err a message naming the parameter (by position and text)
 * and what was wrong. */
int hkc_signature_parse(const char *text, hkc_signature *out, hkc_strbuf *err);
void hkc_signature_free(hkc_signature *s);
int hkc_signature_copy(const hkc_signature *src, hkc_signature *dst);
/* Writes "(float a, const float *x)". */
void hkc_signature_format(const hkc_signature *s, hkc_strbuf *out);

/* A vector of 32 bytes, 1, 2 or 4 lanes (double4, long4, longlong4 and the
 * unsigned ones): CUDA aligns it to 16, as the parser does, HIP to 32. */
int hkc_param_is_wide_vector(const hkc_param *p);
/* Gives every wide vector of s alignment `align` (16 or 32) and lays s out
 * again. */
void hkc_signature_align_wide_vectors(hkc_signature *s, uint32_t align);

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

/* Checks args against sig and packs them into kernarg (sig->kernarg_size bytes,
 * zeroed padding). Rules:
 * - nargs must equal sig->count;
 * - a scalar parameter takes INT/UINT/FLOAT/BOOL; an integer parameter takes a
 *   FLOAT only if it is integral; every value must fit the type's range
 *   (floats to f16/bf16/f32 may round but not overflow to infinity);
 * - a pointer parameter takes a BUFFER whose dtype equals the pointee (any
 *   dtype for void* and unknown pointees) and whose device is `device`
 *   (hk_buffer_device), or NULL_ (a null pointer); a NULL hk_buffer* is an
 *   error;
 * - a vector parameter takes a VECTOR, one double per lane, each converted
 *   by the scalar rules for the element type (messages name the lane);
 * Each message names the kernel, the parameter (index and name) and the
 * offending value or type. Returns 0 or HK_EARG. */
int hkc_signature_pack(const hkc_signature *sig, const char *kernel,
                       const hk_arg *args, int nargs, int device,
                       void *kernarg, hkc_strbuf *err);

#endif
