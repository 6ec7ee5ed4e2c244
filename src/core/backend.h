/* The backend vtable: the only door between the core and a vendor runtime,
 * and everything of the core a backend may use (the structs its slots
 * receive, the error helpers, strbuf). Backends include this header, not
 * internal.h, which keeps the context, the module table and hk_kernel.
 *
 * The core checks every argument at the public entry points (sizes, ranges,
 * device limits, argument types) before calling a slot, so a backend trusts
 * what it receives. Slots typed with __typeof__ of the public function they
 * serve receive the public handles and must keep that function's contract;
 * the others take the structs below. Optional slots are NULL and the
 * core says "not supported by this backend" for them. Each backend fills one
 * static const table with designated initialisers. */
#ifndef HKC_BACKEND_H
#define HKC_BACKEND_H

#include <stdarg.h>
#include <stdint.h>

#include "hipkit/hipkit.h"
#include "cache.h"
#include "signature.h"
#include "strbuf.h"

typedef struct hkc_backend hkc_backend;
typedef struct hkc_backend_ops hkc_backend_ops;

/* One backend of a context; impl is the backend's own state. */
struct hkc_backend {
    const hkc_backend_ops *ops;
    hk_context *ctx;
    void *impl;
    int ndev;
    int first_device; /* index of its device 0 in ctx->devices */
    hkc_strbuf reason;
    /* Set by the core for every backend (host_memory.c, hkc_host_guarded):
     * runs fn(arg), which touches the memory of buffers b and other (may be
     * NULL) on the calling thread; when either is a file mapping, under the
     * CPU backend's fault recovery, so that a file another process truncated
     * fails with HK_EIO naming it ("what": "reading", "writing", ...)
     * instead of SIGBUS. 0 or that error. fn holds no lock and allocates
     * nothing: a fault leaves it by a jump. */
    int (*guarded)(const hk_buffer *b, const hk_buffer *other, void (*fn)(void *), void *arg,
                   const char *what);
};

/* What the kernel launched last (on a device, or into a recording graph)
 * may write, for early start (launch_early.c): the address ranges of the
 * allocations it took as non-const pointers. */
#define HKC_WRITES_MAX 8
typedef struct hkc_kernel_writes {
    int valid;          /* a kernel was launched */
    int unknown;        /* it may write memory not listed (packed, opaque pointers, > MAX) */
    const void *stream; /* the hk_stream it went to, NULL: the default one */
    int n;
    uintptr_t lo[HKC_WRITES_MAX], hi[HKC_WRITES_MAX];
} hkc_kernel_writes;

typedef struct hkc_device {
    hkc_backend *be;
    int index; /* within the backend */
    hk_device_info info;
    hkc_kernel_writes last_writes; /* the core's: the last kernel launched on it */
} hkc_device;

typedef struct hkc_mapping {
    char *path;
    int fd;
    void *base;       /* page-aligned start of the mapping */
    size_t map_bytes; /* length of the mapping */
    int writable;
} hkc_mapping;

struct hk_buffer {
    hk_context *ctx;
    hkc_device *dev;
    int device; /* index in ctx->devices */
    hk_dtype dtype;
    hk_mem_mode mode;
    size_t count, bytes;
    void *kptr; /* address kernels use */
    void *hptr; /* host view or NULL */
    void *impl;
    hkc_mapping map; /* mmap mode */
    hk_buffer *parent; /* set for views: the memory is the parent's */
    int borrowed;      /* a module variable's memory (hk_module_global): the module's */
};

struct hk_event {
    hk_context *ctx;
    hkc_device *dev;
    void *impl;
};

/* A stream (hk_stream_create); the core keeps the context's in a list so
 * that hk_context_destroy ends those the caller left. */
struct hk_stream {
    hk_context *ctx;
    hkc_device *dev;
    void *impl;
    hk_stream *next;
};

/* What a launch needs of its kernel: function_get's handle and, for
 * messages and for checking pointer arguments, its name, signature (the
 * layout of the packed arguments) and info. */
typedef struct hkc_launch_kernel {
    void *bfn;
    const char *name;
    const hkc_signature *sig;
    const hk_kernel_info *info;
} hkc_launch_kernel;

/* One launch of a graph (graph_create): the kernel, its configuration
 * and its packed, checked argument bytes. */
typedef struct hkc_graph_launch {
    hkc_launch_kernel k;
    hk_launch_config cfg;
    const void *kernarg;
    size_t size;
} hkc_graph_launch;

/* Errors: set the detail message of the calling thread for ctx (NULL: the
 * context-less one) and return code. */
extern _Thread_local int hkc_loading_user_code;

int hkc_fail(const hk_context *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hkc_vfail(const hk_context *ctx, int code, const char *fmt, va_list ap);
/* A warning: to stderr unless ctx->quiet. */
void hkc_warn(const hk_context *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Milliseconds on a monotonic clock. */
double hkc_now_ms(void);

/* What a loaded code object says about one of its kernels. A backend that
 * knows the parameter layout (host module tables, AMD .args metadata) fills
 * nparams/param_size/param_align so the core can cross-check a parsed or
 * user-given signature; -1 nparams means unknown. */
typedef struct hkc_kernel_meta {
    char name[256];
    char symbol[256];          /* the code object's symbol when it is not name, or "" */
    int nparams;
    uint32_t param_size[64];
    uint32_t param_align[64];  /* 0: unknown (AMD .args give offsets, not alignment) */
    uint32_t param_offset[64]; /* valid when has_offsets */
    int has_offsets;
    int uses_sync;
    /* host backend: "loop" (no barrier), "loops" (split at its barriers) or
     * "fibers", and why not "loops"; "" elsewhere */
    char exec_mode[8];
    char exec_why[256];
} hkc_kernel_meta;

/* The meta of a kernel an inspection described: its explicit parameters
 * (hidden ones are the runtime's) by size and kernarg offset. */
static inline void hkc_kernel_meta_from_code(const hk_code_kernel *k, hkc_kernel_meta *out)
{
    *out = (hkc_kernel_meta){.nparams = 0, .has_offsets = 1, .uses_sync = 0};
    for (size_t i = 0; i + 1 < sizeof out->name && k->name[i]; i++)
        out->name[i] = k->name[i];
    for (int a = 0; a < k->nargs && out->nparams < 64; a++) {
        if (k->args[a].hidden)
            continue;
        out->param_size[out->nparams] = k->args[a].size;
        out->param_offset[out->nparams] = k->args[a].offset;
        out->nparams++;
    }
    for (int a = 0, seen = 0; a < k->nargs; a++) /* more than the table holds: no check */
        if (!k->args[a].hidden && ++seen > 64)
            out->nparams = -1;
    if (k->nargs < 0) /* the code object does not state them (a cubin without .nv.info) */
        out->nparams = -1;
}

/* A source to compile, with everything that must go into the cache key
 * already decided by the core. */
typedef struct hkc_compile_job {
    const char *name;         /* module name (file names, logs) */
    const char *source;       /* as the user wrote it */
    const char *path;         /* the file it was read from, or NULL */
    const char *const *flags; /* user flags, then -D defines, then -I dirs */
    int nflags;
    /* kernels found in the source, for backends that generate entry code */
    const struct hkc_source_kernel *kernels;
    int nkernels;
    /* module variables found in the source (qualified names), for backends
     * that generate a table of them */
    const char *const *globals;
    int nglobals;
    /* Out, for backends with lowers_names: per kernel whose name is a name
     * expression (name_expr.h: `ns::kern`, `reduce<float, 4>`), the symbol
     * the compiler gave it (malloc'd); entries left NULL are the name. */
    char **lowered;
} hkc_compile_job;

struct hkc_backend_ops {
    const char *name;
    const char *code_ext; /* cache file extension: "so", "hsaco", "cubin" */
    /* Alignment of 32-byte vectors passed by value (double4, long4, ...):
     * HIP's compilers use 32, CUDA's 16. Signatures are laid out with it. */
    uint32_t wide_vector_align;
    /* Nonzero: compile mangles kernels named by expressions and reports
     * their symbols in job->lowered (NVRTC's and hiprtc's name expressions);
     * the core keeps them beside the cached code object. Zero: the code
     * object lists such kernels by their names (the host's kernel table). */
    int lowers_names;

    /* Finds devices. Returns the count (>= 0); 0 with `reason` filled when
     * the backend is present but unusable. Sets be->impl. */
    int (*probe)(hkc_backend *be, hkc_strbuf *reason);
    void (*destroy)(hkc_backend *be);
    int (*device_info)(hkc_backend *be, int index, hk_device_info *out);
    /* Compiler identity for cache keys and folder names, e.g. the first line
     * of `c++ --version` plus a hash of hipkit's own device headers. A
     * backend may remember what is slow to learn in `cache` (may be NULL). */
    const char *(*toolchain)(hkc_backend *be, hkc_cache *cache);

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

    /* Optional: job's source preprocessed as `compile` would see it (same
     * headers, flags and defines; `__global__` left as a word), cut down to
     * the user's lines with line markers (pp_text.h): kernels are found in
     * it, so macro-generated ones are and `#if 0` ones are not. dev is -1
     * for a named target. NULL, or HK_EUNSUPPORTED (no preprocessor on
     * this machine): the source is scanned as written. */
    int (*preprocess)(hkc_backend *be, int dev, const hkc_compile_job *job, hkc_strbuf *out,
                      hkc_strbuf *log);
    /* Compiles job for device `dev` into a code object (malloc'd into
     * *code), or returns HK_ECOMPILE with the compiler's log in `log`. */
    int (*compile)(hkc_backend *be, int dev, const hkc_compile_job *job,
                   void **code, size_t *code_size, hkc_strbuf *log);
    /* Loads a code object; HK_EFORMAT with the reason in err when it is not
     * one this backend can run on device `dev`. hkc_loading_user_code is set
     * while the code comes from a user (hk_module_load_bytes), not from a
     * compile or the cache: a backend that can prove such code harmless
     * before loading it (the host backend: in a child process) does. */
    int (*module_load)(hkc_backend *be, int dev, const void *code, size_t size,
                       void **bmod, hkc_strbuf *err);
    void (*module_unload)(hkc_backend *be, void *bmod);
    /* The kernels a loaded module holds; *metas is malloc'd. */
    int (*module_kernels)(hkc_backend *be, void *bmod, hkc_kernel_meta **metas,
                          int *count);
    /* Optional: the module variable `name` of a loaded module: the address
     * kernels use, a host view or NULL, its size. HK_ENOTFOUND when the
     * module has no such variable. */
    int (*module_global)(hkc_backend *be, void *bmod, const char *name, void **kptr,
                         void **hptr, size_t *bytes, hkc_strbuf *err);
    /* Finds a function and fills what the backend knows of info (registers,
     * shared and local bytes, max threads); sets *bfn. */
    int (*function_get)(hkc_backend *be, void *bmod, const char *name,
                        void **bfn, hk_kernel_info *info, hkc_strbuf *err);
    /* Launches k (k->bfn) on device `dev` with a packed, checked argument
     * buffer of `size` bytes, laid out as k->sig says. */
    int (*launch)(hkc_backend *be, int dev, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                  const void *kernarg, size_t size);
    int (*synchronize)(hkc_backend *be, int dev);

    /* Events; the core allocates hk_event and calls these on e->impl. */
    int (*event_create)(hk_event *e);
    void (*event_destroy)(hk_event *e);
    __typeof__(hk_event_record) *event_record;
    __typeof__(hk_event_synchronize) *event_synchronize;
    __typeof__(hk_event_elapsed_ms) *event_elapsed_ms;

    /* Optional: how well a code object built ahead of time for `target` fits
     * a device whose target id is `dev` (both as device_info reports them),
     * when they differ: 0 not at all, else 1..999, higher closer; for an
     * identical name, above 1000 to rank the image over the exact match
     * (CUDA's sm_90a on an sm_90 device), else anything. NULL: only an
     * exact match fits. The vendor's compatibility rule lives here, so the
     * core ranks plugin images without knowing any vendor. */
    int (*image_rank)(const char *target, const char *dev);

    /* Optional: disassembly of one kernel of a code object into out, or
     * HK_EUNSUPPORTED with the reason in out. */
    int (*disasm)(hkc_backend *be, const void *code, size_t size, const char *kernel,
                  hkc_strbuf *out);

    /* Optional, and usable with no device (probe may have found none; it
     * still sets be->impl): compile-only work and code-object inspection. */
    /* Canonical form of a target id (what cache keys and folders hold), or
     * HK_EINVAL with the reason in err. */
    int (*target_normalize)(hkc_backend *be, const char *target, char *out, size_t cap,
                            hkc_strbuf *err);
    /* As compile, for a normalised target instead of a device. */
    int (*compile_target)(hkc_backend *be, const char *target, const hkc_compile_job *job,
                          void **code, size_t *code_size, hkc_strbuf *log);
    /* Optional: a code object to ship, built by the vendor's offline compiler
     * (hipcc, nvcc) for normalised targets: one target's raw code object, or
     * a bundle of several. HK_ENOTFOUND when the compiler is missing,
     * HK_ECOMPILE with its messages in log. */
    int (*compile_offline)(hkc_backend *be, const char *const *targets, int ntargets,
                           const hkc_compile_job *job, void **code, size_t *code_size,
                           hkc_strbuf *log);
    /* Describes a code object; HK_EFORMAT when it is not this backend's. */
    int (*code_inspect)(hkc_backend *be, const void *code, size_t size, hk_code_info **out,
                        hkc_strbuf *err);
    /* One entry of a code object as standalone bytes (malloc'd). */
    int (*code_extract)(hkc_backend *be, const void *code, size_t size, const char *entry,
                        void **out, size_t *out_size, hkc_strbuf *err);

    /* graphs (graph.c, hk_graph_*): optional, all three or none. NULL: the
     * core replays the recorded list through `launch` (the host backend).
     * graph_create builds a native graph of n launches on device dev, each
     * after the one before, as `launch` would run them; it copies what it
     * keeps (the launches' argument bytes are freed after). The kernels'
     * handles stay valid while the graph is launched: the core refuses to
     * launch a graph whose module was freed, and destroys native graphs
     * before the backend. */
    int (*graph_create)(hkc_backend *be, int dev, const hkc_graph_launch *launches, int n,
                        void **bgraph);
    int (*graph_launch)(hkc_backend *be, int dev, void *bgraph);
    void (*graph_destroy)(hkc_backend *be, void *bgraph);
    /* streams. Optional as a group (NULL stream_create: hk_stream_create
     * says not supported). The core allocates hk_stream (s->dev set) and
     * calls these on s->impl; what they receive is checked as for launch
     * and buf_*. `synchronize` must wait for every stream of the device
     * too. stream_destroy comes after stream_synchronize. */
    int (*stream_create)(hk_stream *s);
    void (*stream_destroy)(hk_stream *s);
    __typeof__(hk_stream_synchronize) *stream_synchronize;
    __typeof__(hk_stream_query) *stream_query;
    /* As launch, queued on s; kernarg is the caller's (copy it). */
    int (*stream_launch)(hk_stream *s, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                         const void *kernarg, size_t size);
    __typeof__(hk_buffer_upload_on) *stream_upload;
    __typeof__(hk_buffer_download_on) *stream_download;
    __typeof__(hk_buffer_copy_on) *stream_copy;
    __typeof__(hk_event_record_on) *stream_record;
    __typeof__(hk_stream_wait_event) *stream_wait_event;
};

/* The built-in backend. */
extern const hkc_backend_ops hkc_backend_host;

/* Backend modules (hipkit-backend-NAME.so) share these structures with the
 * core, so a module is only loaded by the hipkit it was built with: it
 * exports `hkc_backend_module_abi` (this value) and `hkc_backend_NAME_ops`. */
#define HKC_BACKEND_MODULE_ABI 1u

#endif
