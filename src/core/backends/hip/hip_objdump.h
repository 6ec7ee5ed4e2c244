/* Disassembly of an AMDGPU ELF code object by LLVM's llvm-objdump: the
 * fallback for processors the installed comgr does not know. */
#ifndef HKC_HIP_OBJDUMP_H
#define HKC_HIP_OBJDUMP_H

#include <stddef.h>

#include "hipkit/hipkit.h"
#include "strbuf.h"

/* The code object (elf, size bytes) for processor proc ("gfx940"), all of
 * it or only `kernel` (NULL: all), appended to out. 0, or HK_EBACKEND (no
 * llvm-objdump, or it failed: the reason in out), HK_EIO, HK_ENOMEM. */
int hkc_hip_objdump_disasm(const void *elf, size_t size, const char *proc, const char *kernel,
                           hkc_strbuf *out);

#endif
