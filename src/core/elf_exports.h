/* The exports of a shared object, read from its file's bytes without
 * loading it (elf_exports.c). */
#ifndef HKC_ELF_EXPORTS_H
#define HKC_ELF_EXPORTS_H

#include <stddef.h>

#define HKC_ELF_NOT_ELF (-1)    /* not a 64-bit little-endian ELF shared object */
#define HKC_ELF_NO_SYMBOLS (-2) /* no readable dynamic symbol table */

/* Sets found[k] to 1 when the object defines and exports names[k] (global
 * or weak, default or protected visibility), else 0. Returns 0, or one of
 * the codes above. */
int hkc_elf_exports(const void *data, size_t size, const char *const *names, int n, int *found);

#endif
