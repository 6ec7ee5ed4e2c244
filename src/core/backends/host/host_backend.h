/* State shared by the CPU backend's files. */
#ifndef HKC_HOST_BACKEND_H
#define HKC_HOST_BACKEND_H

#include <stddef.h>

#include "internal.h"
#include "host_pool.h"

#include "process.h"

/* hipkit's HIP headers, as tools/embed.py embeds them. */
extern const hkc_embedded_file hkc_host_headers[];

typedef struct host_alloc {
    struct host_alloc *next;
    hk_buffer *b;
    char *region;  /* guard page, data pages, guard page */
    size_t region_bytes;
} host_alloc;

typedef struct host_impl {
    hkc_host_pool *pool;
    int nthreads;
    char cpu_name[128];
    char arch[72];
    /* compiler */
    char toolchain[512];
    int toolchain_known;
    char *workdir; /* private temp folder: include/ with the headers, outputs */
    int headers_written;
    unsigned serial;
    host_alloc *allocs;
} host_impl;

/* host_compile.c */
const char *hkc_host_toolchain(hkc_backend *be, hkc_cache *cache);
int hkc_host_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                     size_t *code_size, hkc_strbuf *log);
void hkc_host_compile_cleanup(host_impl *h);
/* This machine's target only (compile-only work, build-time images). */
int hkc_host_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                              hkc_strbuf *err);
int hkc_host_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                            void **code, size_t *code_size, hkc_strbuf *log);
/* Writes all n bytes to fd; 0 or -errno. */
int hkc_host_write_all(int fd, const void *data, size_t n);
/* Writes a file with mode 0600; 0 or -errno. */
int hkc_host_write_file(const char *path, const char *data, size_t n);
/* host_disasm.c */
int hkc_host_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                    hkc_strbuf *out);
/* Creates the context's private temporary folder once. */
int hkc_host_workdir(host_impl *h, hkc_strbuf *err);

#endif
