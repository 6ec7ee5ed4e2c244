/* State shared by the CPU backend's files. */
#ifndef HKC_HOST_BACKEND_H
#define HKC_HOST_BACKEND_H

#include <pthread.h>
#include <stddef.h>

#include "backend.h"
#include "hip/hipkit_host_abi.h"
#include "host_pool.h"
#include "process.h"

/* hipkit's HIP headers, as tools/embed.py embeds them. */
extern const hkc_embedded_file hkc_host_headers[];

typedef struct host_alloc {
    struct host_alloc *next;
    hk_buffer *b;
    char *region;  /* guard page, data pages, guard page */
    size_t region_bytes;
    int checked; /* allocated in checked mode: canaries around the data */
    int mapped;  /* an mmap-mode buffer's file mapping (buffer.c's to unmap), listed
                    so that a fault in it names it */
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
    hkc_cache *cache; /* the context's, as handed to hkc_host_toolchain: precompiled headers */
    int headers_written;
    unsigned serial;
    /* held by every compile and preprocess: a fibers copy (host_module.c)
     * is compiled on whatever thread a fault or load needs it */
    pthread_mutex_t compile_lock;
    /* loop mode's parse, started beside kernel discovery's preprocessor
     * for the compile expected next (host_compile.c) */
    struct host_early *early;
    host_alloc *allocs;
    pthread_mutex_t allocs_lock; /* allocs: stream threads read it in launches */
    /* streams (host_stream.c): the live ones, their queues and the events
     * recorded on them, all under stream_lock; event_cv is broadcast when
     * an event is reached */
    pthread_mutex_t stream_lock;
    pthread_cond_t event_cv;
    struct host_stream *streams;
    int nchecked; /* allocs with canaries: checked after each launch */
} host_impl;

/* host_device.c */
int hkc_host_probe(hkc_backend *be, hkc_strbuf *reason);
void hkc_host_destroy(hkc_backend *be);
int hkc_host_device_info(hkc_backend *be, int index, hk_device_info *out);

/* host_memory.c */
int hkc_host_buf_alloc(hk_buffer *b);
/* HIPKIT_CHECK=1 or hk_check_mode (host_memory.c): 1 when checked mode is
 * on. Then every buffer allocated ends at its guard page and its slack
 * bytes hold a canary; after a launch (sig and kernarg: its arguments, to
 * name the buffer) the check returns 1 with a message in msg when a kernel
 * changed one (re-arming it). */
int hkc_host_checked(void);
int hkc_host_check_canaries(host_impl *h, const hkc_signature *sig, const void *kernarg,
                            char *msg, size_t cap);
void hkc_host_buf_free(hk_buffer *b);
int hkc_host_buf_register(hk_buffer *b);
void hkc_host_buf_unregister(hk_buffer *b);
int hkc_host_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes);
int hkc_host_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes);
int hkc_host_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                      size_t bytes);
int hkc_host_buf_fill(hk_buffer *b, const void *value);
/* Moves bytes between b (and other, may be NULL) and dst/src under the
 * fault guard of mapped files, without waiting for streams (stream work). */
int hkc_host_move(hk_buffer *b, hk_buffer *other, void *dst, const void *src, size_t bytes,
                  const char *what);
/* Names the buffer that addr falls in or next to, for fault messages
 * (hkc_host_launch's describe_addr; vd is a hkc_host_describe). */
typedef struct hkc_host_describe {
    host_impl *h;
    const hkc_signature *sig; /* the launch's arguments, or NULL */
    const void *kernarg;
} hkc_host_describe;
void hkc_host_describe_addr(void *vd, void *addr, int signo, char *out, size_t cap);

/* host_module.c */
/* desc (a kernel of a loaded module) as it runs on fibers: desc itself, or
 * the kernel of the module's fibers copy (compiled the first time, its
 * module variables set to the module's) where the module was built
 * without one; NULL when that copy cannot be had. Any thread. */
const hk_host_kernel_desc *hkc_host_kernel_fibers(const hk_host_kernel_desc *desc);
int hkc_host_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **out,
                         hkc_strbuf *err);
void hkc_host_module_unload(hkc_backend *be, void *bmod);
int hkc_host_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count);
/* HIPKIT_HOST_MODE=fibers: no loop versions are written or run (the
 * default, auto, runs a kernel split at its barriers where the transform
 * proves it safe). */
int hkc_host_fibers_forced(void);
int hkc_host_module_global(hkc_backend *be, void *bmod, const char *name, void **kptr,
                           void **hptr, size_t *bytes, hkc_strbuf *err);
int hkc_host_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                          hk_kernel_info *info, hkc_strbuf *err);

/* host_launch.c: launches and synchronize. A launch on a stream's thread
 * (on_stream) takes the pool only when it is free, else runs its blocks on
 * that thread alone, so two streams' kernels run at the same time. */
int hkc_host_launch_kernel(hkc_backend *be, int dev, const hkc_launch_kernel *k,
                           const hk_launch_config *cfg, const void *kernarg, size_t size);
int hkc_host_run_launch(hkc_backend *be, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                        const void *kernarg, int on_stream);
int hkc_host_synchronize(hkc_backend *be, int dev);

/* host_stream.c: streams (a worker thread each) and events. */
/* Waits until every stream of h has run all its queued work. */
void hkc_host_streams_drain(host_impl *h);
int hkc_host_stream_create(hk_stream *s);
void hkc_host_stream_destroy(hk_stream *s);
int hkc_host_stream_synchronize(hk_stream *s);
int hkc_host_stream_query(hk_stream *s);
int hkc_host_stream_launch(hk_stream *s, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                           const void *kernarg, size_t size);
int hkc_host_stream_upload(hk_stream *s, hk_buffer *b, size_t offset, const void *src, size_t bytes);
int hkc_host_stream_download(hk_stream *s, hk_buffer *b, size_t offset, void *dst, size_t bytes);
int hkc_host_stream_copy(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                         size_t src_offset, size_t bytes);
int hkc_host_stream_record(hk_event *e, hk_stream *s);
int hkc_host_stream_wait_event(hk_stream *s, hk_event *e);
int hkc_host_event_create(hk_event *e);
void hkc_host_event_destroy(hk_event *e);
int hkc_host_event_record(hk_event *e);
int hkc_host_event_synchronize(hk_event *e);
int hkc_host_event_elapsed_ms(hk_event *a, hk_event *b, double *ms);

/* host_compile.c */
const char *hkc_host_toolchain(hkc_backend *be, hkc_cache *cache);
int hkc_host_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                     size_t *code_size, hkc_strbuf *log);
void hkc_host_compile_cleanup(host_impl *h);
/* The code object of unit (a whole translation unit, as a module's
 * hk_host_fibers_unit holds it) compiled with the mode's options and flags
 * (each ending with a 0, the list with an empty one): from the disk cache,
 * else compiled and stored there. 0, or HK_E* with the compiler's words in
 * log. Any thread. */
int hkc_host_compile_unit(hkc_backend *be, const char *unit, const char *flags, void **code,
                          size_t *code_size, hkc_strbuf *log);
/* host_pch.c: puts a precompiled hip_runtime.h valid for the compile
 * command argv (argc words: compiler, options, no input or output) in the
 * work folder, from the disk cache or built and stored there; best effort. */
void hkc_host_pch_ensure(host_impl *h, const char *const *argv, int argc);
/* host_pch.c: the path (written into path) of libclang's precompiled
 * hip_runtime.h for the user's flags in the work folder, from the disk
 * cache or built and stored there; NULL when there is none. */
const char *hkc_host_loops_pch(host_impl *h, const char *include, const char *const *flags,
                               int nflags, char *path, size_t cap);
/* The source preprocessed for kernel discovery: the user's lines. */
int hkc_host_preprocess(hkc_backend *be, int dev, const hkc_compile_job *job, hkc_strbuf *out,
                        hkc_strbuf *log);
/* This machine's target only (compile-only work, build-time images). */
int hkc_host_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                              hkc_strbuf *err);
int hkc_host_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                            void **code, size_t *code_size, hkc_strbuf *log);
/* Writes all n bytes to fd; 0 or -errno. */
int hkc_host_write_all(int fd, const void *data, size_t n);
/* host_probe.c: the ELF structure of a shared object ld.so would read
 * first (0, or HK_EFORMAT with the reason in err); and a load of the object
 * at path in a forked child, which must exit cleanly before this process
 * loads it (0, or HK_EFORMAT with what the child met). */
int hkc_host_elf_check(const void *code, size_t size, hkc_strbuf *err);
int hkc_host_probe_load(const char *path, hkc_strbuf *err);
/* Writes a file with mode 0600; 0 or -errno. */
int hkc_host_write_file(const char *path, const char *data, size_t n);
/* host_disasm.c */
int hkc_host_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                    hkc_strbuf *out);
/* Creates the context's private temporary folder once. */
int hkc_host_workdir(host_impl *h, hkc_strbuf *err);

#endif
