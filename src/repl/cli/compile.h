/* `hipkit compile`: code objects built ahead of time. cmd_compile.c parses
 * the command line; compile_build.c has the library build the code object,
 * writes it and lists its kernels. */
#ifndef HKL_CLI_COMPILE_H
#define HKL_CLI_COMPILE_H

#include <stddef.h>

#define HKL_COMPILE_MAX_TARGETS 16
#define HKL_COMPILE_MAX_EXTRA 128

/* One run of `hipkit compile`, as parsed. */
typedef struct hkl_compile_job {
    const char *file;                         /* the source */
    const char *out;                          /* NULL: beside the source */
    const char *targets;                      /* the comma-separated list given */
    const char *extra[HKL_COMPILE_MAX_EXTRA]; /* -D and -I, in order */
    int nextra;
    int opt_level;                            /* -O<n>; -1 when not given */
} hkl_compile_job;

/* Builds job for backend ("hip", "cuda") through hk_compile_offline, writes
 * the file and says what it holds. The exit status: 0 written, 1 failed,
 * 2 bad usage. */
int hkl_compile_build(const char *backend, const hkl_compile_job *job);

/* OUT when the user gave none: the source's name with its extension
 * replaced by ext (".cubin"). */
void hkl_compile_default_out(const char *file, const char *ext, char *out, size_t cap);

#endif
