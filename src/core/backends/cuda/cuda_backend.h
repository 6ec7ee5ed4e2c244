/* State shared by the NVIDIA backend's files. The backend is the module
 * hipkit-backend-cuda.so: it links NVRTC and opens the CUDA driver at probe
 * time (cuda_driver.c), so on a machine without a driver it still compiles
 * for named architectures and reads cubins, and the core lists the backend
 * as unavailable with the reason. */
#ifndef HKC_CUDA_BACKEND_H
#define HKC_CUDA_BACKEND_H

#include "cuda_driver.h"
#include <nvrtc.h>

#include "backend.h"
#include "name_expr.h" /* hkc_plain_name */
#include "../gpu_common.h"

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
    void *stage;        /* pinned bounce for small downloads (cuda_memory.c), NULL until used */
    /* Early start (HK_LAUNCH_EARLY_START) follows only a kernel: set by a
     * launch, cleared by every other call (hkc_cuda_use_dev), since a copy
     * or an event between two kernels must order them fully. */
    int after_kernel;
    CUstream after_kernel_on; /* the stream of that kernel (NULL: the legacy one) */
    unsigned stage_gen; /* the context generation stage was allocated in */
} cuda_device;

/* A buffer's backend state: g first (gpu_common.h). Every buffer is on
 * cuda_impl.buffers: launches check pointer arguments against stale ones,
 * and sync writes staged mmap copies back. */
typedef struct cuda_buffer {
    hkc_gpu_buffer g;    /* g.kind: cuMemAlloc, cuMemAllocManaged, cuMemHostAlloc, cuMemHostRegister */
    unsigned generation; /* context generation it was allocated in */
    CUdeviceptr dptr;    /* what kernels use */
    size_t bytes;        /* of dptr's allocation or registration (>= b->bytes) */
    void *host;          /* HOST: the allocation; REGISTERED: the registered base; STAGED: the mapping */
} cuda_buffer;

typedef struct cuda_impl {
    int driver; /* libcuda opened (cuda_driver.c); else compile-only */
    int ndev;
    cuda_device devs[CUDA_MAX_DEVICES];
    char toolchain[128];
    hkc_gpu_buffers buffers; /* its lock also guards the devices' last_kernels */
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
    /* The dynamic shared memory the function was opted into with
     * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (0: the default 48
     * KiB), valid for generation dyn_shared_gen: a reload after a context
     * reset gets a fresh CUfunction without the attribute. Under the
     * buffers lock. */
    unsigned dyn_shared;
    unsigned dyn_shared_gen;
    int ptx_version; /* of the code it was built from (90: sm_90); 0 until read */
} cuda_function;

static inline cuda_impl *cuda_impl_of(hkc_backend *be) { return be->impl; }

/* cuda_device.c: contexts and faults. */
/* How many times the device's primary context was reset in this process. */
unsigned hkc_cuda_epoch(const cuda_device *cd);
/* The kernels that were running at the device's last reset, for messages. */
void hkc_cuda_fault_names(const cuda_device *cd, char *out, size_t cap);
/* Errors after which the context is unusable until it is reset. */
int hkc_cuda_is_sticky(CUresult r);
/* Makes device d's context current on this thread. */
CUresult hkc_cuda_use_dev(cuda_impl *c, int d);
/* Says in msg that a kernel faulted, resets the device's primary context
 * and bumps its generation. */
void hkc_cuda_fault_reset(hkc_backend *be, int d, CUresult r, hkc_strbuf *msg);
/* One failed driver call: HK_EFAULT after a reset for a sticky error, else
 * `code` with "WHAT: ERROR"; into err when given, else to hkc_fail. */
int hkc_cuda_fail(hkc_backend *be, int d, CUresult r, hkc_strbuf *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
int hkc_cuda_probe(hkc_backend *be, hkc_strbuf *reason);
void hkc_cuda_destroy(hkc_backend *be);
int hkc_cuda_device_info(hkc_backend *be, int index, hk_device_info *out);

/* cuda_memory.c */
int hkc_cuda_buf_alloc(hk_buffer *b);
void hkc_cuda_buf_free(hk_buffer *b);
int hkc_cuda_buf_register(hk_buffer *b);
void hkc_cuda_buf_unregister(hk_buffer *b);
int hkc_cuda_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes);
void hkc_cuda_stage_free(cuda_device *cd);
int hkc_cuda_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes);
int hkc_cuda_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                      size_t bytes);
int hkc_cuda_buf_fill(hk_buffer *b, const void *value);
/* A staged copy back into its mapping; via_fail: report through hkc_fail,
 * else warn. */
int hkc_cuda_write_back(hkc_backend *be, cuda_buffer *cb, int via_fail);

/* cuda_module.c */
int hkc_cuda_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **bmod,
                         hkc_strbuf *err);
void hkc_cuda_module_unload(hkc_backend *be, void *bmod);
int hkc_cuda_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count);
int hkc_cuda_module_global(hkc_backend *be, void *bmod, const char *name, void **kptr,
                           void **hptr, size_t *bytes, hkc_strbuf *err);
int hkc_cuda_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                          hk_kernel_info *info, hkc_strbuf *err);
/* Loads a module from before a reset again from its image. */
int hkc_cuda_ensure_module(hkc_backend *be, cuda_module *m, hkc_strbuf *err);

/* cuda_launch.c: launches, synchronize, events. */
int hkc_cuda_launch(hkc_backend *be, int dev, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                    const void *kernarg, size_t size);
int hkc_cuda_synchronize(hkc_backend *be, int dev);
int hkc_cuda_event_create(hk_event *e);
void hkc_cuda_event_destroy(hk_event *e);
int hkc_cuda_event_record(hk_event *e);
int hkc_cuda_event_synchronize(hk_event *e);
int hkc_cuda_event_elapsed_ms(hk_event *a, hk_event *b, double *ms);
/* Whether a launch of f on the device can start early (programmatic
 * dependent launch): the device is sm_90 or newer, and so was the code f
 * was built from (compute_80 PTX run on an H100 has no griddepcontrol in
 * its hk_grid_wait()). cuda_launch.c. */
int hkc_cuda_can_start_early(const cuda_device *cd, cuda_function *f);

/* launch and event_record on a stream (NULL: the legacy default stream). */
int hkc_cuda_launch_on(hkc_backend *be, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                       const void *kernarg, size_t size, CUstream stream);
int hkc_cuda_event_record_in(hk_event *e, CUstream stream);
/* The event's handle; *recorded 0 when it was never recorded in the
 * device's current context generation. */
CUevent hkc_cuda_event_handle(hk_event *e, int *recorded);
/* cuda_stream.c: streams (cuStream*, blocking with the legacy default
 * stream, so the default stream waits for their work). */
int hkc_cuda_stream_create(hk_stream *s);
void hkc_cuda_stream_destroy(hk_stream *s);
int hkc_cuda_stream_synchronize(hk_stream *s);
int hkc_cuda_stream_query(hk_stream *s);
int hkc_cuda_stream_launch(hk_stream *s, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                           const void *kernarg, size_t size);
int hkc_cuda_stream_record(hk_event *e, hk_stream *s);
int hkc_cuda_stream_wait_event(hk_stream *s, hk_event *e);
/* The stream's handle for use now (made again after a context reset, whose
 * queued work is gone); 0, or an error through hkc_fail. */
int hkc_cuda_stream_handle(hk_stream *s, CUstream *out);
/* cuda_memory.c: copies on a stream. */
int hkc_cuda_stream_upload(hk_stream *s, hk_buffer *b, size_t offset, const void *src, size_t bytes);
int hkc_cuda_stream_download(hk_stream *s, hk_buffer *b, size_t offset, void *dst, size_t bytes);
int hkc_cuda_stream_copy(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                         size_t src_offset, size_t bytes);

/* cuda_disasm.c */
int hkc_cuda_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                    hkc_strbuf *out);

/* cuda_compile.c: NVRTC with the HIP compatibility headers. */
const char *hkc_cuda_toolchain(hkc_backend *be, hkc_cache *cache);
int hkc_cuda_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                     size_t *code_size, hkc_strbuf *log);
/* The source as NVRTC would see it, cut to the user's lines: discovery. */
int hkc_cuda_preprocess(hkc_backend *be, int dev, const hkc_compile_job *job, hkc_strbuf *pp,
                        hkc_strbuf *log);
/* For a named architecture (sm_XY), with no device: compile-only work. */
int hkc_cuda_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                              hkc_strbuf *err);
int hkc_cuda_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                            void **code, size_t *code_size, hkc_strbuf *log);
/* cuda_offline.c: nvcc for code objects to ship (one cubin, or a fatbin). */
/* A toolkit program (nvcc, cuobjdump) in $CUDA_HOME/bin, $CUDA_PATH/bin, the
 * toolkit hipkit was built with, /usr/local/cuda/bin, then PATH: the
 * toolkit the user named wins. 0 found, -1 not. */
int hkc_cuda_find_tool(const char *tool, char *out, size_t cap);
int hkc_cuda_compile_offline(hkc_backend *be, const char *const *targets, int ntargets,
                             const hkc_compile_job *job, void **code, size_t *code_size,
                             hkc_strbuf *log);
/* cuda_codeobj.c: the code_inspect slot (cubins; a fatbin is named, not opened). */
int hkc_cuda_code_inspect(hkc_backend *be, const void *code, size_t size, hk_code_info **out,
                          hkc_strbuf *err);

/* cuda_codeobj.c: what a code object holds, read without the driver. */
typedef enum cuda_image_kind { CUDA_IMAGE_CUBIN, CUDA_IMAGE_PTX, CUDA_IMAGE_FATBIN, CUDA_IMAGE_UNKNOWN } cuda_image_kind;
cuda_image_kind hkc_cuda_image_kind(const void *data, size_t size);
/* For a cubin: its sm architecture (e.g. 90), 0 if unknown. */
int hkc_cuda_cubin_arch(const void *data, size_t size);
/* 1 when a cubin is for an architecture-specific target (sm_90a), else 0. */
int hkc_cuda_cubin_arch_specific(const void *data, size_t size);
/* The backend's image_rank slot: a cubin for sm_XY runs on sm_XZ, Z >= Y;
 * one for sm_XYa on sm_XY only, ranked above the plain sm_XY (1001). */
int hkc_cuda_image_rank(const char *target, const char *dev);
/* "sm_86" -> 86, "sm_90a" -> 90 with *spec (may be NULL) set to 1; 0 for
 * any other name (cuda_codeobj.c). */
int hkc_cuda_sm_parse(const char *target, int *spec);
/* Kernel entry names in a cubin (symbols as stored, mangled for C++);
 * *names is malloc'd, an array of count NUL-terminated strings in one block. */
int hkc_cuda_cubin_kernels(const void *data, size_t size, char ***names, int *count);

/* Names a CUresult: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access ...". */
const char *hkc_cuda_error(CUresult r, char *buf, size_t cap);

/* graphs (cuda_graph.c): the vtable's graph slots. */
int hkc_cuda_graph_create(hkc_backend *be, int dev, const hkc_graph_launch *launches, int n,
                          void **bgraph);
int hkc_cuda_graph_launch(hkc_backend *be, int dev, void *bgraph);
void hkc_cuda_graph_destroy(hkc_backend *be, void *bgraph);
/* cuda_launch.c, for graphs: what hkc_cuda_launch does before the driver
 * sees a launch (reload after a reset, stale buffers, shared memory
 * opt-in), and the note of a launched kernel for fault messages. */
int hkc_cuda_launch_prepare(hkc_backend *be, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                            const void *kernarg, size_t size);
void hkc_cuda_launch_noted(hkc_backend *be, int d, const char *name);

#endif
