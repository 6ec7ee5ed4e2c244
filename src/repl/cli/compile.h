/* `hipkit compile`: code objects built ahead of time. aot.c parses the
 * command line; aot_build.c has the library build the code object, writes
 * it and lists its kernels. */
#ifndef HKL_AOT_H
#define HKL_AOT_H

#include <stddef.h>

/* argv[1] is "compile". Returns the exit status. */
int hkl_cmd_compile(int argc, char **argv);

#define HKL_AOT_MAX_TARGETS 16
#define HKL_AOT_MAX_EXTRA 128

/* One run of `hipkit compile`, as parsed. */
typedef struct hkl_aot_job {
    const char *file;                        /* the source */
    const char *out;                         /* NULL: beside the source */
    const char *targets;                     /* the comma-separated list given */
    const char *extra[HKL_AOT_MAX_EXTRA];    /* -D and -I, in order */
    int nextra;
    int opt_level;                           /* -O<n>; -1 when not given */
} hkl_aot_job;

/* Builds job for backend ("hip", "cuda") through hk_compile_offline, writes
 * the file and says what it holds. The exit status: 0 written, 1 failed,
 * 2 bad usage. */
int hkl_aot_build(const char *backend, const hkl_aot_job *job);

/* OUT when the user gave none: the source's name with its extension
 * replaced by ext (".cubin"). */
void hkl_aot_default_out(const char *file, const char *ext, char *out, size_t cap);

#endif
