/* What AMD's code object manager (comgr) reads from one AMDGPU ELF code
 * object: kernels, their .args, resources, and disassembly. Needs no GPU. */
#ifndef HKC_HIP_COMGR_H
#define HKC_HIP_COMGR_H

#include <stddef.h>

#include "hipkit/hipkit.h"
#include "strbuf.h"

/* The kernels of an ELF code object from its metadata (amdhsa.kernels):
 * fills entry->kernels (calloc'd, args calloc'd per kernel; the core's
 * hk_code_info_free releases them) and entry->nkernels, and entry->target
 * from amdhsa.target when the metadata has it. Returns 0, or HK_EFORMAT
 * (not an AMDGPU ELF, malformed metadata, code object v2), HK_ENOMEM or
 * HK_EBACKEND with the reason in err; entry is untouched on failure. */
int hkc_hip_comgr_kernels(const void *elf, size_t size, hk_code_entry *entry, hkc_strbuf *err);

/* Disassembly of an ELF code object built for target id `target` (NULL or
 * "": the one its metadata states), the whole object or only `kernel` (NULL:
 * all; "name" or "name.kd"), appended to out. Returns 0, or HK_ENOTFOUND (no
 * such kernel, listing those it has), HK_EFORMAT (not an AMDGPU ELF, or a
 * corrupt one), HK_EINVAL (no target known), HK_ENOMEM or HK_EBACKEND, with
 * the reason in out. */
int hkc_hip_comgr_disasm(const void *elf, size_t size, const char *target, const char *kernel,
                         hkc_strbuf *out);

/* comgr's version, "comgr 2.4". */
const char *hkc_hip_comgr_version(void);

#endif
