/* State shared by the AMD backend's files. The backend is the module
 * hipkit-backend-hip.so: it links the HIP runtime (which carries hiprtc in
 * ROCm 5.x) and comgr, so a machine without them cannot load it and the core
 * lists the backend as unavailable with the loader's message. With the
 * libraries but no AMD GPU, probe finds no device yet keeps the backend's
 * state: compile-only work and inspection need no device. */
#ifndef HKC_HIP_BACKEND_H
#define HKC_HIP_BACKEND_H

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

#include "internal.h"

#define HIP_MAX_DEVICES 16

typedef struct hip_device {
    int ordinal;        /* the HIP runtime's device number */
    char name[128];
    char arch[96];   /* the device's full target id (gcnArchName) */
    char target[96]; /* what code is compiled for: arch, or HIPKIT_ARCH; loading matches arch */
    int pageable;    /* the device reaches pageable host memory (HMM/XNACK) */
    int managed;
} hip_device;

/* A buffer's backend state (hk_buffer's impl; views have none, their
 * parent's stands for them). */
typedef enum hip_buffer_kind {
    HIP_BUF_DEVICE,     /* hipMalloc */
    HIP_BUF_MANAGED,    /* hipMallocManaged */
    HIP_BUF_HOST,       /* hipHostMalloc, mapped */
    HIP_BUF_REGISTERED, /* mmap: the mapping registered with hipHostRegister */
    HIP_BUF_STAGED,     /* mmap: a device copy (registration refused), written back if writable */
} hip_buffer_kind;

typedef struct hip_buffer {
    struct hip_buffer *next, *prev;
    hk_buffer *b;
    hip_buffer_kind kind;
    void *mem;  /* what to free or unregister */
    void *host; /* STAGED: the mapping the copy stands for */
    int dirty;  /* STAGED and writable: the copy may differ from the mapping */
} hip_buffer;

typedef struct hip_impl {
    int ndev;
    hip_device devs[HIP_MAX_DEVICES];
    char toolchain[160];
    int native_headers; /* this ROCm ships hip/hip_bf16.h */
    pthread_mutex_t lock; /* guards buffers */
    hip_buffer *buffers;
    int any_staged;       /* a staged mmap copy was ever made: launches then mark them dirty */
} hip_impl;

/* A loaded code object: the module and the ELF picked for the device. */
typedef struct hip_module {
    int dev;
    hipModule_t mod;
    void *elf;
    size_t elf_size;
    hk_code_entry meta; /* its kernels, from comgr */
    struct hip_function *fns;
} hip_module;

typedef struct hip_function {
    struct hip_function *next;
    hipFunction_t fn;
} hip_function;

/* "hipErrorNoDevice: no ROCm-capable device is detected" */
const char *hkc_hip_error(hipError_t e, char *buf, size_t cap);

/* hip_compile.c: hiprtc, with hipkit's compatibility headers for what this
 * ROCm lacks; target ids; the toolchain identity. */
const char *hkc_hip_toolchain(hkc_backend *be, hkc_cache *cache);
int hkc_hip_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                             hkc_strbuf *err);
int hkc_hip_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                           void **code, size_t *code_size, hkc_strbuf *log);
/* hip_offline.c: hipcc (or clang) for code objects to ship */
int hkc_hip_compile_offline(hkc_backend *be, const char *const *targets, int ntargets,
                            const hkc_compile_job *job, void **code, size_t *code_size,
                            hkc_strbuf *log);
int hkc_hip_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                    size_t *code_size, hkc_strbuf *log);
/* Called once by probe: the toolchain string and which headers to supply. */
void hkc_hip_compile_init(hip_impl *h);

/* hip_inspect.c: the code-object slots, no device needed. */
int hkc_hip_code_inspect(hkc_backend *be, const void *code, size_t size, hk_code_info **out,
                         hkc_strbuf *err);
int hkc_hip_code_extract(hkc_backend *be, const void *code, size_t size, const char *entry,
                         void **out, size_t *out_size, hkc_strbuf *err);
/* Frees an entry's kernels and their arguments. */
void hkc_hip_entry_clear(hk_code_entry *e);
int hkc_hip_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                   hkc_strbuf *out);

#endif
