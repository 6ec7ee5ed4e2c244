/* Whole files into memory, for the hipkit program (it uses libhipkit's
 * public API only, so it reads files itself). */
#ifndef HKL_FILE_READ_H
#define HKL_FILE_READ_H

#include <stddef.h>

/* Reads the regular file at path into *data (malloc'd, NUL-terminated
 * beyond *size). 0, or a negative errno. */
int hkl_file_read(const char *path, char **data, size_t *size);

#endif
