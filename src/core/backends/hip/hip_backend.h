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

#include "backend.h"
#include "../gpu_common.h"

#define HIP_MAX_DEVICES 16

/* hk_grid_wait() (early start's wait, hipkit.h) for every compile: AMD GPUs
 * run launches one after another, so it does nothing here. */
#define HKC_HIP_GRID_WAIT_DEFINE "-Dhk_grid_wait()=((void)0)"
/* The header every compile includes first (include/hipkit_amd_prelude.h):
 * what a .cu source sees in CUDA without including anything. */
#define HKC_HIP_PRELUDE "hipkit_amd_prelude.h"

typedef struct hip_device {
    int ordinal;        /* the HIP runtime's device number */
    char name[128];
    char arch[96];   /* the device's full target id (gcnArchName) */
    char target[96]; /* what code is compiled for: arch, or HIPKIT_ARCH; loading matches arch */
    int pageable;    /* the device reaches pageable host memory (HMM/XNACK) */
    int managed;
} hip_device;

/* A buffer's backend state: g first (gpu_common.h). g.kind: hipMalloc,
 * hipMallocManaged, hipHostMalloc (mapped), hipHostRegister, or a staged
 * device copy of a mapping. */
typedef struct hip_buffer {
    hkc_gpu_buffer g;
    void *mem;  /* what to free or unregister */
    void *host; /* STAGED: the mapping the copy stands for */
} hip_buffer;

typedef struct hip_impl {
    int ndev;
    hip_device devs[HIP_MAX_DEVICES];
    char toolchain[160];
    int native_headers; /* this ROCm ships hip/hip_bf16.h */
    hkc_gpu_buffers buffers;
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
int hkc_hip_preprocess(hkc_backend *be, int dev, const hkc_compile_job *job, hkc_strbuf *pp,
                       hkc_strbuf *log);
int hkc_hip_compile_offline(hkc_backend *be, const char *const *targets, int ntargets,
                            const hkc_compile_job *job, void **code, size_t *code_size,
                            hkc_strbuf *log);
int hkc_hip_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                    size_t *code_size, hkc_strbuf *log);
/* Called once by probe: the toolchain string and which headers to supply. */
void hkc_hip_compile_init(hip_impl *h);

static inline hip_impl *hip_impl_of(hkc_backend *be) { return be->impl; }

/* hip_device.c */
int hkc_hip_probe(hkc_backend *be, hkc_strbuf *reason);
void hkc_hip_destroy(hkc_backend *be);
int hkc_hip_device_info(hkc_backend *be, int index, hk_device_info *out);
/* hkc_fail with "WHAT: ERROR"; out of memory is HK_ENOMEM whatever code says. */
int hkc_hip_fail(const hk_context *ctx, hipError_t e, int code, const char *what);
/* Every call that touches a device makes it current first: the HIP runtime
 * keeps the current device per thread. */
hipError_t hkc_hip_use_dev(hkc_backend *be, int d);

/* hip_memory.c */
int hkc_hip_buf_alloc(hk_buffer *b);
void hkc_hip_buf_free(hk_buffer *b);
int hkc_hip_buf_register(hk_buffer *b);
void hkc_hip_buf_unregister(hk_buffer *b);
int hkc_hip_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes);
int hkc_hip_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes);
int hkc_hip_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                     size_t bytes);
int hkc_hip_buf_fill(hk_buffer *b, const void *value);
/* Frees or unregisters a buffer's memory. */
void hkc_hip_release(hip_buffer *hb);
/* A dirty staged copy back into its mapping: 0, or an HK_E* code with the
 * error set (a file truncated meanwhile is named, never SIGBUS). */
int hkc_hip_write_back(hip_buffer *hb);
/* As hkc_hip_write_back after synchronizing the device, warning on failure:
 * the last chance at free and teardown. */
void hkc_hip_final_write_back(hk_buffer *b, hip_buffer *hb);

/* hip_module.c */
int hkc_hip_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **bmod,
                        hkc_strbuf *err);
void hkc_hip_module_unload(hkc_backend *be, void *bmod);
int hkc_hip_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count);
int hkc_hip_module_global(hkc_backend *be, void *bmod, const char *name, void **kptr,
                          void **hptr, size_t *bytes, hkc_strbuf *err);
int hkc_hip_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                         hk_kernel_info *info, hkc_strbuf *err);

/* hip_launch.c: launches, synchronize, events. */
int hkc_hip_launch(hkc_backend *be, int dev, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                   const void *kernarg, size_t size);
int hkc_hip_synchronize(hkc_backend *be, int dev);
int hkc_hip_event_create(hk_event *e);
void hkc_hip_event_destroy(hk_event *e);
int hkc_hip_event_record(hk_event *e);
int hkc_hip_event_synchronize(hk_event *e);
int hkc_hip_event_elapsed_ms(hk_event *a, hk_event *b, double *ms);
/* launch on a stream (NULL: the default stream). */
int hkc_hip_launch_on(hkc_backend *be, int dev, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                      const void *kernarg, size_t size, hipStream_t stream);
/* hip_stream.c: streams (hipStream_t, blocking with the default stream). */
int hkc_hip_stream_create(hk_stream *s);
void hkc_hip_stream_destroy(hk_stream *s);
int hkc_hip_stream_synchronize(hk_stream *s);
int hkc_hip_stream_query(hk_stream *s);
int hkc_hip_stream_launch(hk_stream *s, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                          const void *kernarg, size_t size);
int hkc_hip_stream_upload(hk_stream *s, hk_buffer *b, size_t offset, const void *src, size_t bytes);
int hkc_hip_stream_download(hk_stream *s, hk_buffer *b, size_t offset, void *dst, size_t bytes);
int hkc_hip_stream_copy(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                        size_t src_offset, size_t bytes);
int hkc_hip_stream_record(hk_event *e, hk_stream *s);
int hkc_hip_stream_wait_event(hk_stream *s, hk_event *e);

/* hip_inspect.c: the code-object slots, no device needed. */
int hkc_hip_code_inspect(hkc_backend *be, const void *code, size_t size, hk_code_info **out,
                         hkc_strbuf *err);
int hkc_hip_code_extract(hkc_backend *be, const void *code, size_t size, const char *entry,
                         void **out, size_t *out_size, hkc_strbuf *err);
/* Frees an entry's kernels and their arguments. */
void hkc_hip_entry_clear(hk_code_entry *e);
/* The AMDGPU entries of data (*entries malloc'd), or HK_EFORMAT saying what
 * the bytes are. */
struct hip_bundle_entry;
int hkc_hip_entries_of(const void *code, size_t size, struct hip_bundle_entry **entries, int *count,
                       hkc_strbuf *err);
/* hip_disasm.c */
int hkc_hip_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                   hkc_strbuf *out);

/* hip_graph.c: the vtable's graph slots (hipGraph). */
int hkc_hip_graph_create(hkc_backend *be, int dev, const hkc_graph_launch *launches, int n, void **bgraph);
int hkc_hip_graph_launch(hkc_backend *be, int dev, void *bgraph);
void hkc_hip_graph_destroy(hkc_backend *be, void *bgraph);

#endif
