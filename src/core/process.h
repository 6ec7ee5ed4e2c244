/* External programs: the one PATH search, the one process runner and the
 * private folders through which hipkit hands files to a compiler. Used by
 * the core and by backends (the host backend's C++ compiler and objdump,
 * hipcc and nvcc for code objects built ahead of time, nvdisasm). */
#ifndef HKC_PROCESS_H
#define HKC_PROCESS_H

#include <stddef.h>

#include "strbuf.h"

/* A file embedded in the library at build time (tools/embed.py), such as a
 * backend's HIP headers. Arrays of them end with a NULL path. */
typedef struct hkc_embedded_file {
    const char *path;
    const char *data;
    size_t size;
} hkc_embedded_file;

/* Finds an executable named `name`: a name with a '/' is taken as it is;
 * otherwise each folder of `first` (NULL-terminated, may be NULL), then
 * PATH, then each of `last`. Empty or NULL folders are skipped. Writes the
 * path into out; 0 when found, -1 when not. */
int hkc_find_program(const char *name, const char *const *first, const char *const *last,
                     char *out, size_t cap);

/* Runs argv (argv[0] a path, or a name PATH resolves) with stdin on
 * /dev/null and stdout and stderr both appended to out (NULL: they go
 * nowhere), with envset ("NAME=VALUE", may be NULL) added to its
 * environment. Returns its exit status, 128 + the signal that ended it, or
 * -errno when it could not start. */
int hkc_run_capture(char *const argv[], const char *envset, hkc_strbuf *out);

/* A new folder only the user can read, under $TMPDIR or /tmp, named
 * "hipkit-<what>-<pid>-XXXXXX" (<what> lower-case letters); its path into
 * dir. 0, or -errno. hk_tempdirs_sweep removes those of a process that no
 * longer exists. */
int hkc_tempdir_create(const char *what, char *dir, size_t cap);
/* Writes data as dir/relpath, making the folders relpath names. 0, or -errno. */
int hkc_tempdir_write(const char *dir, const char *relpath, const void *data, size_t size);
/* Writes every file of an embedded array under dir. 0, or -errno. */
int hkc_tempdir_write_all(const char *dir, const hkc_embedded_file *files);
/* Removes dir and everything in it. */
void hkc_tempdir_remove(const char *dir);

#endif
