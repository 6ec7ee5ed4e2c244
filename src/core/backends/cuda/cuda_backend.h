/* State shared by the NVIDIA backend's files. The backend is the module
 * hipkit-backend-cuda.so: it links NVRTC and opens the CUDA driver at probe
 * time (cuda_driver.c), so on a machine without a driver it still compiles
 * for named architectures and reads cubins, and the core lists the backend
 * as unavailable with the reason. */
#ifndef HKC_CUDA_BACKEND_H
#define HKC_CUDA_BACKEND_H

#include "cuda_driver.h"
#include <nvrtc.h>

#include "internal.h"

#define CUDA_MAX_DEVICES 16

typedef struct cuda_device {
    CUdevice dev;
    CUcontext ctx;      /* the primary context, retained */
    int cc_major, cc_minor;
    unsigned generation; /* bumped when the context is reset after a fault */
    char last_kernels[512]; /* kernels launched since the last sync, for fault messages */
    const char *last_noted; /* the name last added to last_kernels (a fast path) */
    char dead[1536];        /* why the device cannot be used again, once a fault made it so */
    char name[128];     /* cuDeviceGetName, for messages */
    int retains;        /* primary-context retains this backend holds (released at destroy) */
} cuda_device;

/* A buffer's backend state (hk_buffer's impl; views have none and use their
 * parent's). Every buffer is on cuda_impl.buffers: launches check pointer
 * arguments against stale ones, and sync writes staged mmap copies back. */
typedef enum cuda_buffer_kind {
    CUDA_BUF_DEVICE,     /* cuMemAlloc */
    CUDA_BUF_MANAGED,    /* cuMemAllocManaged */
    CUDA_BUF_HOST,       /* cuMemHostAlloc, mapped */
    CUDA_BUF_REGISTERED, /* mmap: the mapping registered with cuMemHostRegister */
    CUDA_BUF_STAGED,     /* mmap: a device copy of the mapping (registration refused) */
} cuda_buffer_kind;

typedef struct cuda_buffer {
    struct cuda_buffer *next, *prev;
    hk_buffer *b;
    int dev;             /* backend device index */
    cuda_buffer_kind kind;
    unsigned generation; /* context generation it was allocated in */
    CUdeviceptr dptr;    /* what kernels use */
    size_t bytes;        /* of dptr's allocation or registration (>= b->bytes) */
    void *host;          /* HOST: the allocation; REGISTERED: the registered base; STAGED: the mapping */
    int dirty;           /* STAGED and writable: the copy may differ from the file */
} cuda_buffer;

typedef struct cuda_impl {
    int driver; /* libcuda opened (cuda_driver.c); else compile-only */
    int ndev;
    cuda_device devs[CUDA_MAX_DEVICES];
    char toolchain[128];
    pthread_mutex_t lock; /* guards buffers and the devices' last_kernels */
    cuda_buffer *buffers;
    int any_staged; /* a staged mmap copy was ever made: launches then mark them dirty */
} cuda_impl;

/* A loaded code object: the CUmodule plus a copy of the image, so the module
 * can be loaded again after a context reset. */
typedef struct cuda_module {
    int dev;
    unsigned generation;
    CUmodule mod;
    void *image;  /* NUL-terminated copy (PTX is text) */
    size_t size;
    struct cuda_function *fns; /* looked up so far, freed with the module */
} cuda_module;

/* A kernel handle (hk_kernel's bfn), owned by its module: the core frees
 * kernels without telling the backend. */
typedef struct cuda_function {
    struct cuda_function *next;
    cuda_module *m;
    unsigned generation;
    CUfunction fn;
    char name[256]; /* the symbol (mangled for C++ kernels) */
    size_t param_end; /* end of the last parameter per the driver; 0 unknown */
} cuda_function;

/* cuda_compile.c: NVRTC with the HIP compatibility headers. */
const char *hkc_cuda_toolchain(hkc_backend *be, hkc_cache *cache);
int hkc_cuda_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                     size_t *code_size, hkc_strbuf *log);
/* For a named architecture (sm_XY), with no device: compile-only work. */
int hkc_cuda_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                              hkc_strbuf *err);
int hkc_cuda_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                            void **code, size_t *code_size, hkc_strbuf *log);
/* cuda_offline.c: nvcc for code objects to ship (one cubin, or a fatbin). */
int hkc_cuda_compile_offline(hkc_backend *be, const char *const *targets, int ntargets,
                             const hkc_compile_job *job, void **code, size_t *code_size,
                             hkc_strbuf *log);
/* cuda_image.c: the code_inspect slot (cubins; a fatbin is named, not opened). */
int hkc_cuda_code_inspect(hkc_backend *be, const void *code, size_t size, hk_code_info **out,
                          hkc_strbuf *err);

/* cuda_image.c: what a code object holds, read without the driver. */
typedef enum cuda_image_kind { CUDA_IMAGE_CUBIN, CUDA_IMAGE_PTX, CUDA_IMAGE_FATBIN, CUDA_IMAGE_UNKNOWN } cuda_image_kind;
cuda_image_kind hkc_cuda_image_kind(const void *data, size_t size);
/* For a cubin: its sm architecture (e.g. 90), 0 if unknown. */
int hkc_cuda_cubin_arch(const void *data, size_t size);
/* The backend's image_rank slot: a cubin for sm_XY runs on sm_XZ, Z >= Y. */
int hkc_cuda_image_rank(const char *target, const char *dev);
/* Kernel entry names in a cubin (symbols as stored, mangled for C++);
 * *names is malloc'd, an array of count NUL-terminated strings in one block. */
int hkc_cuda_cubin_kernels(const void *data, size_t size, char ***names, int *count);
/* The function name of a symbol: "scale" for "_Z5scalePfi", the symbol
 * itself for extern "C" kernels. Writes at most cap bytes into out. */
void hkc_cuda_plain_name(const char *symbol, char *out, size_t cap);

/* Names a CUresult: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access ...". */
const char *hkc_cuda_error(CUresult r, char *buf, size_t cap);

#endif
