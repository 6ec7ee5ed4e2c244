/* `hipkit compile`: code objects built ahead of time. aot.c parses the
 * command line and runs the compiler; aot_cuda.c (nvcc) and aot_amd.c
 * (hipcc or clang) each build one kind. */
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

/* Each returns the exit status: 0 written, 1 failed, 2 bad usage. */
int hkl_aot_cuda(const hkl_aot_job *job);
int hkl_aot_amd(const hkl_aot_job *job);

/* Runs argv[0] (a path, or a name PATH resolves) with the caller's stdout and
 * stderr, so the compiler's own messages reach the user (quiet: with both
 * on /dev/null, for probes); with envset ("NAME=VALUE", may be NULL) added
 * to its environment. Returns its exit status, 127 when it cannot be
 * started, -1 when it cannot be forked. */
int hkl_aot_run(char **argv, const char *envset, int quiet);
/* A backend's HIP headers as tools/embed.py embeds them. */
typedef struct hkc_embedded_file {
    const char *path;
    const char *data;
    size_t size;
} hkc_embedded_file;
/* Writes the headers under a new private folder (its name into dir), for a
 * compiler's -I; 0, or 1 having said why. */
int hkl_aot_headers_write(const hkc_embedded_file *files, char *dir, size_t cap);
void hkl_aot_headers_remove(const hkc_embedded_file *files, const char *dir);
/* OUT when the user gave none: the source's name with its extension
 * replaced by ext (".cubin"). */
void hkl_aot_default_out(const char *file, const char *ext, char *out, size_t cap);

#endif
