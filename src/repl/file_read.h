/* Whole files into memory, for the hipkit program (it uses libhipkit's
 * public API only, so it reads files itself). */
#ifndef HKL_FILE_READ_H
#define HKL_FILE_READ_H

#include <stddef.h>
#include <stdio.h>

/* The error for a path that is no regular file nor directory (a FIFO, a
 * socket, a device): reading one could block forever or never end. */
#define HKL_ENOTREG (-0x4000)

/* Opens the regular file at path for reading, without blocking on a FIFO.
 * 0 and *f, or a negative errno (-EISDIR, HKL_ENOTREG, ...). */
int hkl_file_open(const char *path, FILE **f);
/* Reads the regular file at path into *data (malloc'd, NUL-terminated
 * beyond *size). 0, or a negative errno as hkl_file_open. */
int hkl_file_read(const char *path, char **data, size_t *size);
/* The message for an error of hkl_file_open or hkl_file_read. */
const char *hkl_file_strerror(int e);
/* 1 when paths a and b name one existing file (the same device and inode:
 * hard links and symbolic links included), else 0. Commands that write an
 * output check it against their inputs first: writing would destroy the
 * input they are reading. */
int hkl_same_file(const char *a, const char *b);

#endif
