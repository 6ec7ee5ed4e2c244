/* Packing typed launch arguments into a kernarg buffer laid out by a
 * signature, with the checks that name the wrong argument. */
#ifndef HKC_ARG_PACK_H
#define HKC_ARG_PACK_H

#include "hipkit/hipkit.h"
#include "signature.h"
#include "strbuf.h"

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
