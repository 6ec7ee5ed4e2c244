/* hipkit: a runtime for exploring GPU kernels written in HIP.
 *
 * Conventions
 * - Every function that can fail returns 0 (HK_OK) or a negative HK_E* code.
 *   The human-readable detail (a compile log, the parameter that was wrong, the
 *   backend's own message) is kept per context and per thread and read with
 *   hk_errmsg(). Functions that only read a property never fail.
 * - Handles are opaque. Option structs are filled by a *_defaults() function
 *   first, so that fields added later keep old callers working.
 * - Objects belong to the context that made them and must be freed before it.
 *   Nothing here is safe to call on one context from two threads at once,
 *   except hk_errmsg (each thread has its own message).
 */
#ifndef HIPKIT_H
#define HIPKIT_H

#include <stddef.h>
#include <stdint.h>

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HK_BUILDING_HIPKIT) && defined(__GNUC__)
#define HK_API __attribute__((visibility("default")))
#else
#define HK_API
#endif

/* ---------------------------------------------------------------- errors */

/* One list generates the codes, hk_errname and hk_strerror. */
#define HK_ERROR_MAP(X)                                                     \
    X(INVAL, 1, "invalid argument")                                         \
    X(NOMEM, 2, "out of memory")                                            \
    X(NODEV, 3, "no such device")                                           \
    X(UNAVAIL, 4, "backend unavailable")                                    \
    X(COMPILE, 5, "compile failed")                                         \
    X(NOTFOUND, 6, "not found")                                             \
    X(IO, 7, "input/output error")                                          \
    X(ARG, 8, "bad kernel argument")                                        \
    X(LAUNCH, 9, "bad launch configuration")                                \
    X(FAULT, 10, "kernel faulted")                                          \
    X(UNSUPPORTED, 11, "not supported by this backend")                     \
    X(FORMAT, 12, "unrecognised code object")                               \
    X(STATE, 13, "object in the wrong state")                               \
    X(BACKEND, 14, "backend error")                                         \
    X(RANGE, 15, "value out of range")                                      \
    X(INTR, 16, "interrupted")

typedef enum hk_error {
    HK_OK = 0,
#define HK_ERROR_ENUM_(name, num, text) HK_E##name = -(num),
    HK_ERROR_MAP(HK_ERROR_ENUM_)
#undef HK_ERROR_ENUM_
} hk_error;

/* Short name of a code ("HK_ECOMPILE"), "HK_OK", or "HK_E?" if unknown. */
HK_API const char *hk_errname(int err);
/* One-line description of a code; never NULL. */
HK_API const char *hk_strerror(int err);

typedef struct hk_context hk_context;

/* Detail of the last failure of a call on ctx made by this thread: a compile
 * log with line numbers, the name of a wrong parameter, ... Empty string when
 * there is none. ctx may be NULL for failures of hk_context_create and of
 * calls that take no context (hk_size_parse). The pointer stays valid until
 * the next failing call on ctx from this thread. */
HK_API const char *hk_errmsg(const hk_context *ctx);

/* ------------------------------------------------------------ data types */

typedef enum hk_dtype {
    HK_F16, HK_BF16, HK_F32, HK_F64,
    HK_I8, HK_I16, HK_I32, HK_I64,
    HK_U8, HK_U16, HK_U32, HK_U64,
    /* ggml's block formats, bit-exact with its layouts: a buffer of these
     * holds whole blocks (hk_dtype_block elements each); its length counts
     * elements, hk_dtype_size is the size of one block. */
    HK_Q4_0, HK_Q4_1, HK_Q5_0, HK_Q5_1, HK_Q8_0, HK_Q8_1,
    HK_Q2_K, HK_Q3_K, HK_Q4_K, HK_Q5_K, HK_Q6_K, HK_Q8_K,
    /* hipkit's own: q4_0's values and bytes in blocks of 8 groups (256
     * elements, 144 bytes): their 8 x 16 nibble bytes, then their 8 f16
     * scales (docs/families/quantized.md); hk.ops.quantized.repack makes
     * it from q4_0 and back. */
    HK_Q4_0R,
    HK_DTYPE_COUNT
} hk_dtype;

/* "f32", "bf16", ...; NULL for an invalid value. */
HK_API const char *hk_dtype_name(hk_dtype t);
/* Size of one element in bytes (of one block for a quantized dtype), 0 for
 * an invalid value. */
HK_API size_t hk_dtype_size(hk_dtype t);
/* Elements per block: 32 (q4_0 ... q8_1) or 256 (the k-quants, q4_0r) for the
 * quantized dtypes, 1 for the others, 0 for an invalid value. */
HK_API size_t hk_dtype_block(hk_dtype t);
/* Parses "f32" etc. Returns 0 and sets *out, or HK_EINVAL. */
HK_API int hk_dtype_parse(const char *name, hk_dtype *out);

/* IEEE binary16 and bfloat16 conversions, rounding to nearest even (NaN
 * stays NaN, overflow gives infinity). */
HK_API uint16_t hk_f32_to_f16(float f);
HK_API float hk_f16_to_f32(uint16_t h);
HK_API uint16_t hk_f32_to_bf16(float f);
HK_API float hk_bf16_to_f32(uint16_t h);

/* One element of a dtype, written from a number with the rules of kernel
 * arguments (hk_launch): the same value is accepted or refused in both.
 * - An integer dtype takes only integral values within its range:
 *   HK_EINVAL for a fraction, NaN or infinity (hk_dtype_store_f64),
 *   HK_ERANGE for a value outside hk_dtype_int_range.
 * - f64 takes any value; f32, f16 and bf16 go through float, rounding to
 *   nearest even, and a finite value that would become infinity is HK_ERANGE
 *   (a double just below f16's rounding edge 65520 gives 65504); infinities
 *   and NaN pass.
 * dst needs hk_dtype_size(t) bytes, any alignment; nothing is written on
 * failure. HK_EINVAL also for an invalid dtype or a NULL dst. These set no
 * hk_errmsg: the caller knows the value and says what it was. */
HK_API int hk_dtype_store_f64(hk_dtype t, void *dst, double x);
HK_API int hk_dtype_store_i64(hk_dtype t, void *dst, int64_t v);
HK_API int hk_dtype_store_u64(hk_dtype t, void *dst, uint64_t v);
/* One element of t at src: as a double (exact for every float dtype and for
 * integers up to 2^53 in magnitude, rounded to nearest beyond), or as a
 * 64-bit integer (an integer dtype's value sign- or zero-extended, converted
 * as C converts between int64_t and uint64_t: a u64 above INT64_MAX reads as
 * a negative int64). Float dtypes read as 0 through the integer loads, use
 * hk_dtype_load_f64; an invalid dtype or a NULL src reads as 0. */
HK_API double hk_dtype_load_f64(hk_dtype t, const void *src);
HK_API int64_t hk_dtype_load_i64(hk_dtype t, const void *src);
HK_API uint64_t hk_dtype_load_u64(hk_dtype t, const void *src);
/* The smallest and largest value of an integer dtype. Returns 0, or
 * HK_EINVAL for a float or invalid dtype or a NULL pointer. */
HK_API int hk_dtype_int_range(hk_dtype t, int64_t *lo, uint64_t *hi);

/* --------------------------------------------------------------- context */

typedef struct hk_context_options {
    size_t size;         /* sizeof(hk_context_options), set by _defaults */
    const char *backend; /* "host", "hip", "cuda"; NULL: HIPKIT_BACKEND, else the best present */
    int device;          /* index within the backend; -1: HIPKIT_DEVICE, else 0 */
    int quiet;           /* nonzero: no warnings on stderr (cache trouble, compiler warnings) */
    int no_plugins;      /* nonzero: load no plugin families (build tools, embedders) */
    int probe_plugins;   /* nonzero: run each plugin's init in a forked child first, and refuse
                            one whose init crashes there (hipkit info, hipkit plugins) */
} hk_context_options;

HK_API void hk_context_options_defaults(hk_context_options *o);

/* Probes every backend and selects one device. Fails with HK_EUNAVAIL when the
 * requested backend cannot be used (hk_errmsg(NULL) says why). */
HK_API int hk_context_create(const hk_context_options *o, hk_context **out);
HK_API void hk_context_destroy(hk_context *ctx);

/* -------------------------------------------------- backends and devices */

typedef struct hk_backend_info {
    const char *name;      /* "host", "hip", "cuda" */
    int available;         /* nonzero if it has at least one usable device */
    const char *reason;    /* why it is unavailable; "" when available */
    const char *toolchain; /* compiler identity that goes into cache keys */
    int device_count;
} hk_backend_info;

HK_API int hk_backend_count(const hk_context *ctx);
HK_API int hk_backend_get(const hk_context *ctx, int i, hk_backend_info *out);

typedef struct hk_device_info {
    char name[128];
    char target[96];       /* full target id: "gfx90a:sramecc+:xnack-", "sm_90", "x86_64" */
    const char *backend;
    int index;             /* within its backend */
    uint64_t total_memory;
    int compute_units;
    int warp_size;
    int managed_memory;    /* managed allocations supported */
    int pageable_memory;   /* kernels may touch ordinary host memory */
    uint32_t max_threads_per_block;
    uint32_t max_block[3];
    uint32_t max_grid[3];
    size_t max_shared_per_block;
} hk_device_info;

/* Devices of every available backend, in selection order. */
HK_API int hk_device_count(const hk_context *ctx);
HK_API int hk_device_get(const hk_context *ctx, int i, hk_device_info *out);
/* Finds "host", "host:0", "cuda:1", or a plain index ("2"). Returns the
 * device's index for hk_device_get, or HK_ENODEV. */
HK_API int hk_device_find(const hk_context *ctx, const char *spec);
/* Makes device i (an hk_device_get index) the one new objects are made on. */
HK_API int hk_device_select(hk_context *ctx, int i);
HK_API int hk_device_current(const hk_context *ctx);

/* --------------------------------------------------------------- buffers */

typedef enum hk_mem_mode {
    HK_MEM_DEVICE,  /* device memory */
    HK_MEM_MANAGED, /* migrates between host and device on demand */
    HK_MEM_HOST,    /* pinned host memory mapped into the device */
    HK_MEM_MMAP,    /* a mapped file, registered so kernels read it */
    HK_MEM_MODE_COUNT
} hk_mem_mode;

HK_API const char *hk_mem_mode_name(hk_mem_mode m);
HK_API int hk_mem_mode_parse(const char *name, hk_mem_mode *out);

typedef struct hk_buffer hk_buffer;

/* count elements of dtype in memory mode; contents are undefined. */
HK_API int hk_buffer_alloc(hk_context *ctx, size_t count, hk_dtype dtype,
                           hk_mem_mode mode, hk_buffer **out);

typedef struct hk_mmap_options {
    size_t size;
    uint64_t offset; /* bytes into the file; a multiple of the page size */
    uint64_t length; /* bytes; 0: to the end of the file */
    int writable;    /* changes reach the file on hk_buffer_sync and free */
    int create;      /* with writable: create or extend the file to offset+length */
} hk_mmap_options;

HK_API void hk_mmap_options_defaults(hk_mmap_options *o);
/* Maps a file as a buffer of dtype. Read-only unless o->writable. */
HK_API int hk_buffer_mmap(hk_context *ctx, const char *path, hk_dtype dtype,
                          const hk_mmap_options *o, hk_buffer **out);

/* Writes an mmap buffer's changes back to its file (no-op for other modes).
 * Returns HK_EIO naming the file if the write-back fails. */
HK_API int hk_buffer_sync(hk_buffer *b);
/* Frees b (syncing a writable mmap first). Returns that sync's result;
 * the buffer is freed either way. NULL is a no-op. */
HK_API int hk_buffer_free(hk_buffer *b);

HK_API hk_dtype hk_buffer_dtype(const hk_buffer *b);
HK_API size_t hk_buffer_length(const hk_buffer *b); /* elements */
HK_API size_t hk_buffer_bytes(const hk_buffer *b);
HK_API hk_mem_mode hk_buffer_mode(const hk_buffer *b);
/* Index of the device (for hk_device_get) the buffer lives on. */
HK_API int hk_buffer_device(const hk_buffer *b);
/* A host pointer to the data when the host can read it directly (managed,
 * host and mmap modes, and every mode on the host backend), else NULL. Call
 * hk_synchronize before reading what a kernel wrote. */
HK_API void *hk_buffer_host_ptr(hk_buffer *b);

/* A view of part of b as another element type, for deliberate
 * reinterpretation: `count` elements of `dtype` starting `offset` bytes into
 * b (the range must fit; offset must be a multiple of dtype's size). The view
 * shares b's memory, can be passed to kernels like any buffer, and is freed
 * with hk_buffer_free, which then frees only the view. b must outlive it. */
HK_API int hk_buffer_view(hk_buffer *b, hk_dtype dtype, size_t offset, size_t count,
                          hk_buffer **out);
/* Nonzero when b is a view (hk_buffer_view). */
HK_API int hk_buffer_is_view(const hk_buffer *b);
/* Nonzero when a and b share any byte of memory: the same buffer, a view
 * and its parent, or two views whose byte ranges meet. Buffers of different
 * devices, and empty ones, share none. */
HK_API int hk_buffer_overlap(const hk_buffer *a, const hk_buffer *b);

/* Byte ranges; each is checked against the buffer's size. */
HK_API int hk_buffer_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes);
HK_API int hk_buffer_download(hk_buffer *b, size_t offset, void *dst, size_t bytes);
HK_API int hk_buffer_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                          size_t src_offset, size_t bytes);
/* Sets every element to *value (one element of the buffer's dtype). */
HK_API int hk_buffer_fill(hk_buffer *b, const void *value);

/* --------------------------------------------------------------- modules */

typedef struct hk_module hk_module;
typedef struct hk_kernel hk_kernel;

typedef struct hk_compile_options {
    size_t size;
    const char *name;                /* shown in logs and cache file names; default "module" */
    const char *const *flags;        /* extra compiler flags, nflags of them */
    int nflags;
    const char *const *defines;      /* "NAME" or "NAME=VALUE", ndefines of them */
    int ndefines;
    const char *const *include_dirs; /* searched for #include "..." (and hashed into the cache key) */
    int ninclude_dirs;
    int no_cache;                    /* nonzero: neither read nor write the disk cache */
    /* The file the source was read from, or NULL. Offline compilers
     * (hk_compile_offline) compile that file itself, so their messages name
     * it and its own folder is searched for its quoted includes. */
    const char *path;
    /* Kernel template instantiations to compile and list as kernels, by
     * name expression as CuPy's name_expressions: "reduce<float, 256>",
     * "ns::scale<double>". Each is launched by that name (hk_module_kernel
     * normalises spacing) with its parameter types as the arguments make
     * them. Kernels in namespaces need no entry: they are "ns::kern". */
    const char *const *instantiate;
    int ninstantiate;
} hk_compile_options;

HK_API void hk_compile_options_defaults(hk_compile_options *o);

/* Compiles HIP source for the current device. HK_ECOMPILE on a compile error,
 * with the compiler's log (file:line: message) in hk_errmsg. */
HK_API int hk_module_compile(hk_context *ctx, const char *source,
                             const hk_compile_options *o, hk_module **out);
/* Loads a code object built for the current device's backend. HK_EFORMAT when
 * the bytes are no code object the backend understands, with the reason. */
HK_API int hk_module_load_bytes(hk_context *ctx, const void *data, size_t size,
                                const char *name, hk_module **out);
HK_API int hk_module_load_file(hk_context *ctx, const char *path, hk_module **out);
/* Frees the module. Its kernels become invalid. NULL is a no-op. */
HK_API void hk_module_free(hk_module *m);

HK_API const char *hk_module_name(const hk_module *m);
/* The module's code object (a shared object on the host backend, a cubin or
 * PTX on NVIDIA): what hk_module_load_* takes back, so a compiled module can
 * be saved and loaded later. Valid while the context lives. */
HK_API int hk_module_code(const hk_module *m, const void **data, size_t *size);
HK_API int hk_module_kernel_count(const hk_module *m);
HK_API const char *hk_module_kernel_name(const hk_module *m, int i);

/* Looks up a kernel. Its parameters come from the module (its source or code
 * object metadata). HK_ENOTFOUND lists the kernels the module has. */
HK_API int hk_module_kernel(hk_module *m, const char *name, hk_kernel **out);
/* As hk_module_kernel, with the parameter list given by the caller as C
 * ("float a, const float *x, float *y, int n"); it overrides the module's
 * own and must agree with it where the module knows sizes. */
HK_API int hk_module_kernel_sig(hk_module *m, const char *name,
                                const char *signature, hk_kernel **out);

/* --------------------------------------------------------------- kernels */

typedef enum hk_param_kind {
    HK_PARAM_SCALAR,  /* passed by value; see dtype (or is_bool) */
    HK_PARAM_POINTER, /* a buffer; dtype is the pointee, HK_DTYPE_COUNT for void* */
    HK_PARAM_VECTOR,  /* a vector type by value (float4, int2, __half2, ...): dtype is
                       * the element type; size / hk_dtype_size(dtype) lanes */
} hk_param_kind;

typedef struct hk_param_info {
    const char *name;    /* "" when unnamed */
    const char *type;    /* as written, normalised: "const float *" */
    hk_param_kind kind;
    hk_dtype dtype;
    int is_const;        /* pointee is const */
    int is_bool;
    uint32_t size, align, offset; /* in the kernarg buffer */
} hk_param_info;

typedef enum hk_code_origin {
    HK_ORIGIN_JIT,   /* compiled in this process */
    HK_ORIGIN_CACHE, /* read from the disk cache */
    HK_ORIGIN_MEMORY,/* this context compiled the same thing before */
    HK_ORIGIN_AOT,   /* built ahead and embedded */
    HK_ORIGIN_FILE,  /* loaded by the user from bytes or a file */
} hk_code_origin;

HK_API const char *hk_code_origin_name(hk_code_origin o);

typedef struct hk_kernel_info {
    const char *name;
    int param_count;
    uint32_t kernarg_size;
    uint32_t max_threads_per_block;
    int registers;          /* -1 when the backend cannot tell */
    int64_t static_shared;  /* bytes, -1 unknown */
    int64_t local_bytes;    /* per-thread private/stack bytes, -1 unknown */
    hk_code_origin origin;
    double compile_ms;      /* time spent getting the code (compile or cache read) */
    int uses_barriers;      /* host backend: runs its threads as fibers */
} hk_kernel_info;

/* A buffer over the module variable `name` (a __device__, __constant__ or
 * __managed__ variable at namespace scope, "ns::var" in a namespace on the
 * CPU backend), as CuPy's get_global: its bytes as elements of dtype
 * (HK_EINVAL when they do not divide). Kernels of the module read what is
 * uploaded to it. The memory is the module's: hk_buffer_free frees only the
 * handle, and the buffer must not be used after the module is freed.
 * HK_ENOTFOUND (naming the variables the source has) when there is none. */
HK_API int hk_module_global(hk_module *m, const char *name, hk_dtype dtype, hk_buffer **out);
HK_API const char *hk_kernel_name(const hk_kernel *k);
HK_API int hk_kernel_get_info(const hk_kernel *k, hk_kernel_info *out);
/* How the CPU backend runs the kernel's threads: "loop" (a plain loop: no
 * barrier), "loops" (split at its barriers, each stretch between two a loop
 * over the block's threads) or "fibers" (each thread a fiber), with *why
 * (when why is not NULL) saying why it is not "loops" ("" otherwise).
 * NULL on other backends. The strings live as long as the kernel. */
HK_API const char *hk_kernel_exec_mode(const hk_kernel *k, const char **why);
HK_API int hk_kernel_param(const hk_kernel *k, int i, hk_param_info *out);
/* The parameter list as C, "(float a, const float *x)", into buf. Returns
 * the length it needed (like snprintf). */
HK_API size_t hk_kernel_signature(const hk_kernel *k, char *buf, size_t cap);

/* The kernel's machine code as text, when the backend has a disassembler
 * (the host backend uses objdump when it is on PATH). *out is malloc'd.
 * HK_EUNSUPPORTED says why when it cannot. */
HK_API int hk_kernel_disasm(const hk_kernel *k, char **out);

/* ---------------------------------------------------------------- launch */

typedef struct hk_dim3 {
    uint32_t x, y, z;
} hk_dim3;

/* Fields added later default to 0 in C++, so {grid, block, shared} still
 * compiles warning-free there (C zeroes what an initializer leaves out). */
#ifdef __cplusplus
#define HK_ADDED_LATER = 0
#else
#define HK_ADDED_LATER
#endif

typedef struct hk_launch_config {
    hk_dim3 grid;         /* blocks */
    hk_dim3 block;        /* threads per block */
    size_t shared_bytes;  /* dynamic shared memory per block */
    uint32_t flags HK_ADDED_LATER;       /* HK_LAUNCH_*; 0: starts after the work before it */
    uint32_t early_reads HK_ADDED_LATER; /* with HK_LAUNCH_EARLY_START: bit i = argument i (a
                                          * buffer, i < 32) is read before hk_grid_wait() */
} hk_launch_config;

/* Early start (NVIDIA sm_90 and newer: programmatic dependent launch). The
 * kernel may start while the kernel before it on the same stream (or graph)
 * is still running, so its blocks are resident and its first loads in
 * flight when that one ends: on an H100 a chain of 14336 x 4096 q4_0
 * matvecs runs 8-12 % faster (docs/RESULTS.md). The kernel must call
 * hk_grid_wait() before it reads memory that earlier work may write (other
 * than the buffers named in early_reads) and before it writes any memory;
 * hk_grid_wait() returns when the kernel before has finished and its writes
 * are visible, and lets the kernel after start early in turn. The core
 * checks the buffers of early_reads against the buffers that the kernel
 * before took as non-const pointers, and launches without early start where
 * they overlap or where it cannot tell (that kernel was launched packed, or
 * took an opaque pointer). The launch is then an ordinary one, as it is on
 * other backends and older GPUs, where hk_grid_wait() does nothing. */
#define HK_LAUNCH_EARLY_START 1u

typedef enum hk_arg_kind {
    HK_ARG_INT,    /* v.i: converted to the parameter's integer or float type */
    HK_ARG_UINT,   /* v.u */
    HK_ARG_FLOAT,  /* v.f: to a float parameter, or an integer one if integral */
    HK_ARG_BOOL,   /* v.i != 0 */
    HK_ARG_BUFFER, /* v.buf: to a pointer parameter of the same element type */
    HK_ARG_NULL,   /* a null pointer, refused unless the caller means it: see below */
    HK_ARG_VECTOR, /* v.vec: one double per lane of a vector parameter, each converted
                    * as a scalar of the element type; read during hk_launch only */
} hk_arg_kind;

typedef struct hk_arg {
    hk_arg_kind kind;
    union {
        int64_t i;
        uint64_t u;
        double f;
        hk_buffer *buf;
        const double *vec; /* as many values as the parameter has lanes */
    } v;
} hk_arg;

static inline hk_arg hk_arg_int(int64_t i) { hk_arg a; a.kind = HK_ARG_INT; a.v.i = i; return a; }
static inline hk_arg hk_arg_uint(uint64_t u) { hk_arg a; a.kind = HK_ARG_UINT; a.v.u = u; return a; }
static inline hk_arg hk_arg_float(double f) { hk_arg a; a.kind = HK_ARG_FLOAT; a.v.f = f; return a; }
static inline hk_arg hk_arg_bool(int b) { hk_arg a; a.kind = HK_ARG_BOOL; a.v.i = b != 0; return a; }
static inline hk_arg hk_arg_buffer(hk_buffer *b) { hk_arg a; a.kind = HK_ARG_BUFFER; a.v.buf = b; return a; }
static inline hk_arg hk_arg_null(void) { hk_arg a; a.kind = HK_ARG_NULL; a.v.u = 0; return a; }
/* For a float4 parameter: const double v[4] = {x, y, z, w}; hk_arg_vector(v). */
static inline hk_arg hk_arg_vector(const double *values) { hk_arg a; a.kind = HK_ARG_VECTOR; a.v.vec = values; return a; }

/* Checks count, types and ranges of args against k's parameters and the
 * configuration against the device's limits, packs the kernel arguments and
 * launches. A buffer argument that is NULL is an error (HK_EARG); pass
 * hk_arg_null() to mean a null pointer. Every error names the parameter.
 * On the host backend the launch has finished when this returns and a kernel
 * that faults returns HK_EFAULT naming the kernel. */
HK_API int hk_launch(hk_kernel *k, const hk_launch_config *cfg,
                     const hk_arg *args, int nargs);

/* Launches with an argument buffer the caller packed (C struct layout of the
 * parameters; hk_kernel_param gives offsets). Only the size is checked. */
HK_API int hk_launch_packed(hk_kernel *k, const hk_launch_config *cfg,
                            const void *kernarg, size_t size);

/* Waits for all work on the current device. */
HK_API int hk_synchronize(hk_context *ctx);

/* Asks every launch on the host backend to stop at its next safe point:
 * blocks not yet started are skipped, blocks waiting at a barrier or warp
 * operation end there, blocks running between barriers finish. The launch
 * then returns HK_EINTR saying how many blocks ran; buffers stay valid.
 * Launches that start while the request stands fail at once the same way.
 * A GPU cannot be stopped: its work runs to its end. Async-signal-safe, so
 * a SIGINT handler may call it. The request stands until
 * hk_interrupt_reset(). */
HK_API void hk_interrupt(void);
HK_API void hk_interrupt_reset(void);

/* Checked mode on the host backend (docs/host-backend.md), a memcheck for
 * kernels that needs no GPU: on (1) or off (0) for the buffers allocated
 * after the call, in every context of the process; on < 0 only asks.
 * A checked buffer ends at its trailing guard page (or within 15 bytes of
 * it) and the bytes of its pages around the data hold canaries compared
 * after each launch, so a kernel's access just outside it fails the launch
 * naming the buffer, its argument and the offset. Buffers keep the mode
 * they were allocated in: turning it off leaves existing checked buffers
 * checked until freed, turning it on does not check buffers allocated
 * before. Static __shared__ canaries follow the setting at each launch.
 * The start value is HIPKIT_CHECK's (unset or "0": off). GPU backends
 * ignore it (compute-sanitizer is their tool). Returns the previous
 * setting, 0 or 1. */
HK_API int hk_check_mode(int on);

/* Removes the private folders hipkit makes under $TMPDIR (or /tmp) that
 * belong to the user and to a process that no longer exists (killed before
 * it could clean up). Returns how many it removed. */
HK_API int hk_tempdirs_sweep(void);

/* ---------------------------------------------------------------- events */

typedef struct hk_event hk_event;

HK_API int hk_event_create(hk_context *ctx, hk_event **out);
HK_API void hk_event_destroy(hk_event *e);
/* Marks the point in the device's work queue reached so far. */
HK_API int hk_event_record(hk_event *e);
HK_API int hk_event_synchronize(hk_event *e);
/* Milliseconds between two recorded events (both must have completed). */
HK_API int hk_event_elapsed_ms(hk_event *start, hk_event *end, double *ms);

/* ---------------------------------------------------------------- graphs */

/* A graph: kernel launches recorded once and replayed as one unit (a CUDA
 * graph on the cuda backend, a hipGraph on hip, the recorded list replayed
 * through the normal launch path on the host backend), for launch-bound
 * work of many small kernels. */
typedef struct hk_graph hk_graph;

/* Starts recording on ctx's current device. Until hk_graph_end, hk_launch,
 * hk_launch_packed, hk_plugin_launch, hk_plugin_call_op and hk_graph_launch
 * check and pack their arguments as usual and record the launch with its
 * configuration and packed argument bytes instead of running it: nothing
 * runs while recording. What cannot be captured fails with HK_ESTATE naming
 * the call, and the recording is then discarded (hk_graph_end returns that
 * error): a host read or write of a buffer (hk_buffer_download, _upload,
 * _copy, _fill, _sync, and hk_buffer_host_ptr, which returns NULL), a plugin
 * op's scratch memory, a compile or load (hk_module_compile,
 * hk_module_load_*; a plugin kernel's first use still compiles), a
 * synchronize, an event, a launch on another device, freeing a buffer or
 * module a recorded launch uses. HK_ESTATE when ctx is already recording. */
HK_API int hk_graph_begin(hk_context *ctx);
/* Ends the recording and makes the graph (possibly of no launches) in *out;
 * on failure (the first capture error above, or the backend's graph build
 * failing) nothing is made, *out is NULL, and hk_errmsg says why.
 * HK_ESTATE when ctx is not recording. */
HK_API int hk_graph_end(hk_context *ctx, hk_graph **out);
/* Nonzero while ctx records a graph. */
HK_API int hk_graph_recording(const hk_context *ctx);
/* Replays the recorded launches in their order, with the captured
 * configurations and argument values, on the device they were recorded on.
 * As hk_launch: on the host backend the launches have finished when it
 * returns; on a GPU they are queued. HK_ESTATE when a buffer or module the
 * graph uses was freed (the message names it, the node and its kernel) or
 * the context was destroyed. While recording, the graph's launches are
 * recorded into the new graph. */
HK_API int hk_graph_launch(hk_graph *g);
/* Frees g (NULL is a no-op). Valid after hk_context_destroy too, which
 * releases what the backend held for every graph of the context. */
HK_API void hk_graph_destroy(hk_graph *g);

typedef struct hk_graph_info {
    int nodes;           /* recorded launches */
    int device;          /* hk_device_get index it replays on */
    const char *backend; /* "host", "cuda", "hip" */
    const char *replay;  /* "CUDA graph", "hipGraph" or "recorded list" */
    int buffers;         /* distinct buffers its launches pass (not hk_launch_packed's) */
    int valid;           /* 0 once something it uses was freed */
    const char *invalid; /* why, or "" */
} hk_graph_info;
HK_API int hk_graph_get_info(const hk_graph *g, hk_graph_info *out);

typedef struct hk_graph_node_info {
    const char *kernel;      /* its name */
    hk_launch_config config;
    const void *args;        /* the packed argument bytes as captured */
    size_t args_size;
} hk_graph_node_info;
/* Node i (0-based, in launch order). HK_ERANGE past the end. */
HK_API int hk_graph_node_get(const hk_graph *g, int i, hk_graph_node_info *out);
/* --------------------------------------------------------------- streams */

/* A stream is an ordered queue of work on one device that runs while the
 * host goes on (CUDA streams, hipStream_t; on the host backend a worker
 * thread per stream). Code that asks for no stream is unchanged: hk_launch,
 * the buffer copies and hk_event_record use the device's default stream,
 * which waits for the work already queued on every stream of the device
 * before it starts (CUDA's legacy default stream) and has finished its own
 * work on the host backend when the call returns. Docs: docs/c-api.md
 * "Streams".
 *
 * Errors of queued work (a fault, an interrupt) are kept by the stream and
 * returned, with the kernel, block and thread, by the next
 * hk_stream_synchronize or hk_stream_query of that stream (or by
 * hk_synchronize); the stream's work queued after the failed one is dropped
 * and the stream takes new work again once the error was returned.
 * Freeing a buffer (or a module) waits for the queued work of every stream
 * of its device first, so work never runs on freed memory. */
typedef struct hk_stream hk_stream;

/* A stream on the current device. */
HK_API int hk_stream_create(hk_context *ctx, hk_stream **out);
/* Waits for s's queued work, then frees it; an error the work left is
 * dropped. NULL is a no-op. */
HK_API void hk_stream_destroy(hk_stream *s);
/* Waits until everything queued on s so far has run; returns the first
 * error of that work (0 when all of it ran). */
HK_API int hk_stream_synchronize(hk_stream *s);
/* 1 while work queued on s has not finished, 0 when all of it has, or the
 * error that work left (as hk_stream_synchronize, without waiting). */
HK_API int hk_stream_query(hk_stream *s);
/* Index of the device (for hk_device_get) the stream belongs to. */
HK_API int hk_stream_device(const hk_stream *s);

/* hk_launch and hk_launch_packed on stream s (NULL: the default stream, as
 * hk_launch). Arguments are checked and packed before the call returns, so
 * args (and a kernarg buffer) may be reused at once; the buffers they name
 * must live until the launch has run. A kernel of another device than s's
 * is HK_EINVAL. */
HK_API int hk_launch_on(hk_stream *s, hk_kernel *k, const hk_launch_config *cfg,
                        const hk_arg *args, int nargs);
HK_API int hk_launch_packed_on(hk_stream *s, hk_kernel *k, const hk_launch_config *cfg,
                               const void *kernarg, size_t size);

/* Copies queued on s (NULL: the default stream, as the plain calls), each
 * range checked before the call returns. Between two buffers of s's device
 * (device, managed, host or mmap mode) the copy is asynchronous: host and
 * registered mmap buffers are pinned memory the device reads and writes
 * directly, so a copy between a host-mode buffer and a device buffer is an
 * asynchronous host<->device transfer. With plain host memory (src, dst)
 * the copy happens when the stream reaches it: src must stay unchanged and
 * dst valid until then (hk_stream_synchronize), as CUDA asks. On a GPU a
 * copy from or to pageable memory does not overlap with other work (the
 * driver stages it); use a buffer of mode host for that. Overlapping
 * ranges of one buffer are HK_EINVAL on a stream. */
HK_API int hk_buffer_upload_on(hk_stream *s, hk_buffer *b, size_t offset, const void *src,
                               size_t bytes);
HK_API int hk_buffer_download_on(hk_stream *s, hk_buffer *b, size_t offset, void *dst,
                                 size_t bytes);
HK_API int hk_buffer_copy_on(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                             size_t src_offset, size_t bytes);

/* Records e at the point reached so far in s's queue (NULL: as
 * hk_event_record): hk_event_synchronize then waits for the work queued on
 * s before this call, and hk_event_elapsed_ms times between such marks. */
HK_API int hk_event_record_on(hk_event *e, hk_stream *s);
/* Makes the work queued on s after this call wait until e's latest record
 * (at the time of this call) has been reached; an event never recorded is
 * no wait. Returns at once. */
HK_API int hk_stream_wait_event(hk_stream *s, hk_event *e);

/* --------------------------------------- code objects, no device needed */

/* Compile-only work and inspection, for targets whose device need not be
 * present: hiprtc for any AMD target id on a machine without an AMD GPU. */

/* Compiles HIP source for `target` of backend `backend` ("hip": a target id
 * such as "gfx90a" or "gfx90a:sramecc+:xnack-") through the same cache as
 * hk_module_compile (the key holds the full target id). *code is malloc'd;
 * origin (may be NULL) says jit or cache. HK_EUNSUPPORTED when the backend
 * cannot compile without a device, HK_ENOTFOUND when it is not built, with
 * the reason. */
HK_API int hk_compile_for_target(hk_context *ctx, const char *backend, const char *target,
                                 const char *source, const hk_compile_options *o,
                                 void **code, size_t *size, hk_code_origin *origin);

/* Builds a code object to ship, as `hipkit compile` does: with the
 * backend's offline compiler (hip: hipcc, or the clang that HIPKIT_HIPCC
 * names; cuda: nvcc), for the comma-separated `targets`. One target gives
 * that target's raw code object (an AMDGPU ELF, a cubin), several a bundle
 * of them (a clang offload bundle, a fatbin); hk_module_load_bytes and
 * hk_code_inspect take either. The request goes through the same steps as
 * hk_compile_for_target (targets normalised and checked, flags, defines,
 * includes) but never through the disk cache: the offline compiler is not
 * part of the cache's toolchain identity. HK_EINVAL for a bad or repeated
 * target, HK_ENOTFOUND when the backend or its compiler is missing,
 * HK_ECOMPILE with the compiler's messages. *code is malloc'd. */
HK_API int hk_compile_offline(hk_context *ctx, const char *backend, const char *targets,
                              const char *source, const hk_compile_options *o, void **code,
                              size_t *size);

typedef struct hk_code_arg {
    char name[64];          /* "" when unnamed */
    char type_name[96];     /* as the compiler recorded it; "" unknown */
    char value_kind[40];    /* "global_buffer", "by_value", "hidden_block_count_x" ... */
    char address_space[16]; /* "global", "constant" ...; "" for values */
    uint32_t size, offset;  /* in the kernarg segment */
    int hidden;             /* filled by the runtime, not passed by the caller */
} hk_code_arg;

typedef struct hk_code_kernel {
    char name[256];         /* the function as the source names it, "vector_add" */
    char symbol[264];       /* its symbol: AMD's descriptor "vector_add.kd", or the
                             * mangled name where it differs ("_Z5scalePfi") */
    int nargs;              /* explicit and hidden */
    hk_code_arg *args;
    uint32_t kernarg_size, kernarg_align;
    int sgprs, vgprs, agprs;          /* -1 when the code object does not say */
    int sgpr_spills, vgpr_spills;     /* -1 when the code object does not say */
    uint32_t lds_bytes;               /* group segment, static */
    uint32_t scratch_bytes;           /* private segment, per work-item */
    uint32_t max_flat_workgroup_size;
    uint32_t wavefront_size;
} hk_code_kernel;

typedef struct hk_code_entry {
    char id[256];           /* bundle entry id ("hipv4-amdgcn-amd-amdhsa--gfx90a"); "" for a raw ELF */
    char target[96];        /* the target id the code object states, "gfx90a:sramecc+:xnack-" */
    size_t offset, size;    /* its bytes within the inspected data */
    int nkernels;
    hk_code_kernel *kernels;
} hk_code_entry;

typedef struct hk_code_info {
    char format[32];        /* "amdgpu-elf" or "offload-bundle" */
    int nentries;           /* device entries (a bundle's host entry is left out) */
    hk_code_entry *entries;
} hk_code_info;

/* Describes a code object (AMD: raw AMDGPU ELF or clang offload bundle,
 * read with comgr): per entry its target and kernels, with arguments and
 * resources. HK_EFORMAT says what the bytes are when no backend reads them. */
HK_API int hk_code_inspect(hk_context *ctx, const void *data, size_t size, hk_code_info **out);
HK_API void hk_code_info_free(hk_code_info *info);
/* The code object of one entry (by target id or bundle entry id, as
 * hk_code_inspect names them) as a standalone file's bytes; *out malloc'd. */
HK_API int hk_code_extract(hk_context *ctx, const void *data, size_t size, const char *entry,
                           void **out, size_t *out_size);
/* Disassembly of a code object's kernel (NULL: all of them; every entry of
 * a bundle, each under a header line). *out malloc'd. */
HK_API int hk_code_disasm(hk_context *ctx, const void *data, size_t size, const char *kernel,
                          char **out);

/* Checks a kernel signature (as C, like hk_module_kernel_sig takes) against
 * what the code object's metadata says of the kernel's parameters: count,
 * sizes and kernarg offsets, in every entry that has the kernel. HK_EARG
 * names the first parameter that disagrees; HK_ENOTFOUND lists the kernels.
 * hk_module_kernel_sig runs the same check when it loads for a device. */
HK_API int hk_code_check_signature(hk_context *ctx, const void *data, size_t size,
                                   const char *kernel, const char *signature);

/* ------------------------------------------------------------ GGUF files */

/* A GGUF model file (ggml's format, versions 2 and 3, little-endian): its
 * metadata, its tensor list, and each tensor as a buffer. Opening reads only
 * the header (the file is mapped, its tensor data never touched), checking
 * every count, length and offset against the file's size: a truncated file,
 * a tensor past the end, an unknown type, a bad magic or version is
 * HK_EFORMAT with the reason and the byte offset. Docs: docs/gguf.md. */
typedef struct hk_gguf hk_gguf;

/* Metadata value types, numbered as the file numbers them. */
typedef enum hk_gguf_type {
    HK_GGUF_U8, HK_GGUF_I8, HK_GGUF_U16, HK_GGUF_I16, HK_GGUF_U32, HK_GGUF_I32,
    HK_GGUF_F32, HK_GGUF_BOOL, HK_GGUF_STRING, HK_GGUF_ARRAY, HK_GGUF_U64,
    HK_GGUF_I64, HK_GGUF_F64,
    HK_GGUF_TYPE_COUNT
} hk_gguf_type;

typedef struct hk_gguf_kv {
    const char *key;       /* NUL-terminated */
    hk_gguf_type type;
    hk_gguf_type elem_type; /* an array's element type (never an array) */
    uint64_t count;        /* an array's elements, a string's bytes, 1 for a scalar */
    /* The value's bytes in the file, little-endian: a scalar, a string's
     * bytes (not NUL-terminated), a numeric array's elements; for an array
     * of strings use hk_gguf_kv_string. */
    const void *data;
} hk_gguf_kv;

typedef struct hk_gguf_tensor {
    const char *name;
    uint32_t ggml_type;    /* ggml's type number */
    const char *type_name; /* "f32", "q4_0", "iq2_xxs", ... */
    hk_dtype dtype;        /* its buffers' dtype; HK_U8 (raw blocks) for a type hipkit has none for */
    int ndim;              /* 1 to 4 */
    uint64_t shape[4];     /* ggml's order: shape[0] varies fastest (a row); unused ones are 1 */
    uint64_t elements;
    uint64_t offset;       /* of its data, in bytes from the start of the file */
    uint64_t bytes;
} hk_gguf_tensor;

/* Opens and checks a GGUF file. HK_EIO when it cannot be read, HK_EFORMAT
 * naming what is wrong and where. */
HK_API int hk_gguf_open(hk_context *ctx, const char *path, hk_gguf **out);
/* The same checks over bytes in memory (which must outlive the result);
 * its tensors' buffers can be copies only (no file to map). */
HK_API int hk_gguf_open_bytes(hk_context *ctx, const void *data, size_t size, hk_gguf **out);
/* Frees g; buffers from hk_gguf_tensor_buffer must be freed before. NULL
 * is a no-op. */
HK_API void hk_gguf_close(hk_gguf *g);
HK_API uint32_t hk_gguf_version(const hk_gguf *g);
/* general.alignment (default 32) and where the tensor data starts. */
HK_API uint64_t hk_gguf_alignment(const hk_gguf *g);
HK_API uint64_t hk_gguf_data_offset(const hk_gguf *g);

HK_API size_t hk_gguf_kv_count(const hk_gguf *g);
HK_API int hk_gguf_kv_get(const hk_gguf *g, size_t i, hk_gguf_kv *out);
/* Index of key, or HK_ENOTFOUND. */
HK_API int64_t hk_gguf_kv_find(const hk_gguf *g, const char *key);
/* A string value (j = 0) or element j of an array of strings: *s points
 * into the file, *len bytes, not NUL-terminated. HK_EINVAL otherwise. */
HK_API int hk_gguf_kv_string(const hk_gguf *g, size_t i, uint64_t j, const char **s, uint64_t *len);
/* "u8", "string", "array", ...; NULL for an invalid type. */
HK_API const char *hk_gguf_type_name(hk_gguf_type t);

HK_API size_t hk_gguf_tensor_count(const hk_gguf *g);
HK_API int hk_gguf_tensor_get(const hk_gguf *g, size_t i, hk_gguf_tensor *out);
/* Index of the tensor named name, or HK_ENOTFOUND. */
HK_API int64_t hk_gguf_tensor_find(const hk_gguf *g, const char *name);
/* Tensor i as a buffer of its dtype. HK_MEM_MMAP: the file's pages of that
 * tensor mapped read-only (zero copy where the device reads host memory;
 * hk_buffer_mmap's fallback and message where it cannot); any other mode:
 * a new buffer of that mode holding a copy. The buffer is freed with
 * hk_buffer_free, before hk_gguf_close. */
HK_API int hk_gguf_tensor_buffer(hk_gguf *g, size_t i, hk_mem_mode mode, hk_buffer **out);

/* ----------------------------------------------------------------- sizes */

/* Parses a byte count as people write it, the one grammar of
 * HIPKIT_CACHE_MAX and the hipkit program: digits, an optional fraction
 * (".5"), optional spaces, and an optional unit, in any case: B, or K, M, G,
 * T (powers of 1024) alone or followed by iB ("512", "64K", "1.5G",
 * "2 GiB", "512MiB"). A fraction needs a unit larger than B and is rounded
 * down to whole bytes. KB, MB, GB and TB are refused as ambiguous (1000 or
 * 1024). Returns 0 and sets *bytes (0 is a valid size); else *bytes is
 * untouched and hk_errmsg(NULL) says why: HK_EINVAL for no digits, an
 * unknown or ambiguous unit or a fraction of a byte, HK_ERANGE for more
 * than 2^64 - 1 bytes. */
HK_API int hk_size_parse(const char *text, uint64_t *bytes);

/* ----------------------------------------------------------------- cache */

typedef struct hk_cache_stats {
    char dir[1024];      /* "" when the cache is memory-only */
    const char *mode;    /* "rw", "ro", "off" or "memory-only" */
    uint64_t entries;
    uint64_t bytes;
    uint64_t max_bytes;
} hk_cache_stats;

HK_API int hk_cache_get_stats(hk_context *ctx, hk_cache_stats *out);
/* Removes every entry of the disk cache. */
HK_API int hk_cache_clear(hk_context *ctx);
/* Evicts least recently used entries until the cache is under max_bytes
 * (0: the configured cap). */
HK_API int hk_cache_prune(hk_context *ctx, uint64_t max_bytes);

/* Small text records kept in the disk cache beside compiled code: what a
 * tool measured once per device and reuses in later sessions (hk.autotune's
 * winners, hk.peaks' rates). They follow the cache's rules (docs/cache.md):
 * file <dir>/records/<kind>-<name>-<hash>.txt, header with checksum, temp
 * file and rename, folders owned by another user or writable by others
 * refused, the size cap, removed by hk_cache_clear. kind and name are for
 * people (sanitised as module names are); key identifies the record: it
 * is hashed into the file name and stored in the record, and a record whose
 * stored key differs is ignored with a warning.
 * hk_cache_record_get: 0 with *text malloc'd and NUL-terminated (free() it)
 * and *len (may be NULL) on a hit; HK_ENOTFOUND on a miss, including a
 * damaged or foreign record (a warning says which; rw mode removes a
 * damaged one) and a cache that is off or memory-only.
 * hk_cache_record_put: 0, also when the mode stores nothing (ro, off,
 * memory-only); a failed write is a warning, not an error, since the cache
 * only saves time. Both: HK_EINVAL for a NULL or empty argument. */
HK_API int hk_cache_record_get(hk_context *ctx, const char *kind, const char *name, const char *key,
                               char **text, size_t *len);
HK_API int hk_cache_record_put(hk_context *ctx, const char *kind, const char *name, const char *key,
                               const char *text, size_t len);

/* --------------------------------------------------------------- plugins */

/* Kernel families from plugins (include/hipkit/plugin.h, docs/plugins.md),
 * loaded when the context is created from the build's plugin folder (when
 * libhipkit runs from its build tree), the install's (LIBDIR/hipkit/plugins)
 * and the folders of HIPKIT_PLUGIN_PATH (colon separated), in that order.
 * Each entry is a loaded family or a plugin that was refused. */
typedef struct hk_plugin_info {
    const char *name;        /* the family; for a refused plugin, its file or folder */
    const char *version;     /* "" when refused */
    const char *description;
    const char *path;        /* the plugin's file */
    int nkernels;
    int nops;                /* host-side ops (hk_plugin_op_get) */
    const char *error;       /* "" when loaded, else why it was refused */
} hk_plugin_info;

HK_API int hk_plugin_count(const hk_context *ctx);
HK_API int hk_plugin_get(const hk_context *ctx, int i, hk_plugin_info *out);

typedef struct hk_plugin_kernel_info {
    const char *name;
    const char *signature;   /* as C: "float *y, float v, size_t n" */
    const char *doc;
    int geometry;            /* 0 explicit, 1 one-dimensional, 2 two-dimensional, 3 a block
                              * per row, 4 a warp per row (hk_plugin_geometry_kind) */
} hk_plugin_kernel_info;

/* Kernel i of entry `plugin` (an hk_plugin_get index). */
HK_API int hk_plugin_kernel_get(const hk_context *ctx, int plugin, int i,
                                hk_plugin_kernel_info *out);
/* Index of the entry of family `family`, or HK_ENOTFOUND listing them. */
HK_API int hk_plugin_find(const hk_context *ctx, const char *family);

/* A family's kernel for the current device, compiling the family's source
 * on first use (through hk_module_compile: the caches apply). Valid while
 * the context lives. HK_ENOTFOUND names what exists. */
HK_API int hk_plugin_kernel(hk_context *ctx, const char *family, const char *kernel,
                            hk_kernel **out);
/* Launches a family's kernel. cfg NULL: the kernel's geometry rule picks it
 * from the arguments (an explicit-geometry kernel needs cfg). Pointer
 * arguments are also checked to hold the element count the rule covers;
 * errors name the operand. */
HK_API int hk_plugin_launch(hk_context *ctx, const char *family, const char *kernel,
                            const hk_launch_config *cfg, const hk_arg *args, int nargs);

/* Compiles the source of a family's kernel (JIT or the disk cache, never an
 * AOT image) and checks the kernel's declared signature against its
 * declaration in the preprocessed source, pointer element types included.
 * 0; HK_EARG naming plugin, kernel, parameter, declared and source type;
 * HK_ENOTFOUND when discovery found no declaration of it (not checked).
 * A plugin kernel is also checked this way when its source is first
 * compiled for a launch. */
HK_API int hk_plugin_check_kernel(hk_context *ctx, const char *family, const char *kernel);

/* A family's host-side op (code in the plugin that runs several launches). */
typedef struct hk_plugin_op_info {
    const char *name;
    const char *usage; /* its arguments, "x, y, a, b" */
    const char *doc;
} hk_plugin_op_info;
HK_API int hk_plugin_op_get(const hk_context *ctx, int plugin, int i, hk_plugin_op_info *out);
/* Runs op `op` of `family` with args. HK_ENOTFOUND when the family has no
 * such op; otherwise 0 or the error of the launch or check that failed,
 * with its message. */
HK_API int hk_plugin_call_op(hk_context *ctx, const char *family, const char *op,
                             const hk_arg *args, int nargs);

/* The key an ahead-of-time image of a plugin source records (32 lowercase
 * hex digits and a NUL in out): a hash of the source text, o's module name
 * (default "module"), flags, defines and include folders, as the compile
 * cache hashes them, without the backend, target and toolchain that an
 * image names itself. Plugin sources are compiled under the name
 * "plugin-FAMILY-SOURCE" and default options. An image whose toolchain tag
 * ends in " source-key=KEY" (hkc-aot and `hipkit compile --plugin` write
 * it) is used only when KEY is the key of the source the plugin embeds;
 * otherwise it is stale, ignored with a warning, and the source compiled.
 * o may be NULL (defaults). HK_EINVAL for a NULL source or out. */
HK_API int hk_plugin_source_key(const char *source, const hk_compile_options *o, char out[33]);

/* Loads plugin `name` again from its file, after its author rebuilt it: a
 * private copy of the file is dlopen'ed (the old library stays mapped), its
 * init runs, and its families replace the old ones in the list, in their
 * places; their kernels compile (or take their AOT images) on first use.
 * name is one of the plugin's families or its file's NAME
 * (hipkit-plugin-NAME.so); a plugin that was refused may be reloaded too.
 * Kernels, ops and names taken from the old families stay valid until the
 * context ends and run the old code; lookups by name (hk_plugin_launch,
 * hk_plugin_call_op) find the new ones. On failure (HK_ENOTFOUND: no such
 * plugin; HK_EFORMAT: the file cannot be loaded or exports no hipkit
 * plugin ABI this hipkit takes; HK_EINVAL: its init failed) the loaded one
 * stays, and hk_errmsg says why. */
HK_API int hk_plugin_reload(hk_context *ctx, const char *name);

#ifdef __cplusplus
}
#endif

#endif
