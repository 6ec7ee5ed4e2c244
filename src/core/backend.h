/* The backend vtable: the only door between the core and a vendor runtime.
 *
 * The core checks every argument at the public entry points (sizes, ranges,
 * device limits, argument types) before calling a slot, so a backend trusts
 * what it receives. Slots typed with __typeof__ of the public function they
 * serve receive the public handles and must keep that function's contract;
 * the others take core structs (internal.h). Optional slots are NULL and the
 * core says "not supported by this backend" for them. Each backend fills one
 * static const table with designated initialisers. */
#ifndef HKC_BACKEND_H
#define HKC_BACKEND_H

#include "hipkit/hipkit.h"
#include "strbuf.h"

typedef struct hkc_backend hkc_backend;
typedef struct hkc_backend_ops hkc_backend_ops;

/* What a loaded code object says about one of its kernels. A backend that
 * knows the parameter layout (host module tables, AMD .args metadata) fills
 * nparams/param_size/param_align so the core can cross-check a parsed or
 * user-given signature; -1 nparams means unknown. */
typedef struct hkc_kernel_meta {
    char name[256];
    int nparams;
    uint32_t param_size[64];
    uint32_t param_align[64];
    int uses_sync;
} hkc_kernel_meta;

/* A source to compile, with everything that must go into the cache key
 * already decided by the core. */
typedef struct hkc_compile_job {
    const char *name;         /* module name (file names, logs) */
    const char *source;       /* as the user wrote it */
    const char *const *flags; /* user flags, then -D defines, then -I dirs */
    int nflags;
    /* kernels found in the source, for backends that generate entry code */
    const struct hkc_source_kernel *kernels;
    int nkernels;
} hkc_compile_job;

struct hkc_backend_ops {
    const char *name;
    const char *code_ext; /* cache file extension: "so", "hsaco", "cubin" */

    /* Finds devices. Returns the count (>= 0); 0 with `reason` filled when
     * the backend is present but unusable. Sets be->impl. */
    int (*probe)(hkc_backend *be, hkc_strbuf *reason);
    void (*destroy)(hkc_backend *be);
    int (*device_info)(hkc_backend *be, int index, hk_device_info *out);
    /* Compiler identity for cache keys and folder names, e.g. the first line
     * of `c++ --version` plus a hash of hipkit's own device headers. */
    const char *(*toolchain)(hkc_backend *be);

    /* Memory. b->ctx, dtype, mode, count, bytes and device are set; fill
     * b->kptr (the address a kernel uses) and b->hptr (host view or NULL),
     * and b->impl if needed. */
    int (*buf_alloc)(hk_buffer *b);
    void (*buf_free)(hk_buffer *b);
    /* mmap mode: b->hptr is the mapping (b->map.writable says how); make it
     * reachable from kernels and set b->kptr. NULL: kptr = hptr. */
    int (*buf_register)(hk_buffer *b);
    void (*buf_unregister)(hk_buffer *b);
    __typeof__(hk_buffer_upload) *buf_upload;
    __typeof__(hk_buffer_download) *buf_download;
    __typeof__(hk_buffer_copy) *buf_copy;
    __typeof__(hk_buffer_fill) *buf_fill;

    /* Compiles job for device `dev` into a code object (malloc'd into
     * *code), or returns HK_ECOMPILE with the compiler's log in `log`. */
    int (*compile)(hkc_backend *be, int dev, const hkc_compile_job *job,
                   void **code, size_t *code_size, hkc_strbuf *log);
    /* Loads a code object; HK_EFORMAT with the reason in err when it is not
     * one this backend can run on device `dev`. */
    int (*module_load)(hkc_backend *be, int dev, const void *code, size_t size,
                       void **bmod, hkc_strbuf *err);
    void (*module_unload)(hkc_backend *be, void *bmod);
    /* The kernels a loaded module holds; *metas is malloc'd. */
    int (*module_kernels)(hkc_backend *be, void *bmod, hkc_kernel_meta **metas,
                          int *count);
    /* Finds a function and fills what the backend knows of info (registers,
     * shared and local bytes, max threads); sets *bfn. */
    int (*function_get)(hkc_backend *be, void *bmod, const char *name,
                        void **bfn, hk_kernel_info *info, hkc_strbuf *err);
    /* Launches k (k->bfn) with a packed, checked argument buffer. */
    __typeof__(hk_launch_packed) *launch;
    int (*synchronize)(hkc_backend *be, int dev);

    /* Events; the core allocates hk_event and calls these on e->impl. */
    int (*event_create)(hk_event *e);
    void (*event_destroy)(hk_event *e);
    __typeof__(hk_event_record) *event_record;
    __typeof__(hk_event_synchronize) *event_synchronize;
    __typeof__(hk_event_elapsed_ms) *event_elapsed_ms;

    /* Optional: disassembly of one kernel of a code object into out, or
     * HK_EUNSUPPORTED with the reason in out. */
    int (*disasm)(hkc_backend *be, const void *code, size_t size, const char *kernel,
                  hkc_strbuf *out);
};

/* The built-in backend. */
extern const hkc_backend_ops hkc_backend_host;

/* Backend modules (hipkit-backend-NAME.so) share these structures with the
 * core, so a module is only loaded by the hipkit it was built with: it
 * exports `hkc_backend_module_abi` (this value) and `hkc_backend_NAME_ops`. */
#define HKC_BACKEND_MODULE_ABI 1u

#endif
