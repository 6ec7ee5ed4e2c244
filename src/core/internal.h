/* Core structures shared by the files of src/core: the context, the module
 * table, modules and kernels. What backends may use is in backend.h. */
#ifndef HKC_INTERNAL_H
#define HKC_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "hipkit/hipkit.h"
#include "backend.h"
#include "cache.h"
#include "arg_pack.h"
#include "signature.h"
#include "source_scan.h"
#include "strbuf.h"

#define HKC_MAX_BACKENDS 4

typedef struct hkc_modentry hkc_modentry;
typedef struct hkc_plugins hkc_plugins;

struct hk_context {
    hkc_backend backends[HKC_MAX_BACKENDS];
    int nbackends;
    hkc_device *devices;
    int ndevices;
    int current;
    int quiet;
    pthread_key_t errkey;
    hkc_cache *cache;
    hkc_modentry *modules; /* in-memory table of loaded code, by key */
    hkc_plugins *plugins;  /* loaded plugin families (plugin_load.c) */
    /* graphs (graph.c) */
    hk_graph *graph_rec; /* being recorded (hk_graph_begin), or NULL */
    hk_graph *graphs;    /* made and not yet destroyed */
    int graph_paused;    /* > 0: a plugin kernel compiles on first use while recording */
    hk_stream *streams;    /* live streams (stream.c) */
};

/* A loaded backend module, shared by every hk_module made from the same key
 * in one context (the in-memory table). */
struct hkc_modentry {
    hkc_modentry *next;
    hkc_cache_key key;
    int has_key;
    int refs;
    hkc_device *dev;
    void *bmod;
    hkc_kernel_meta *metas;
    int nmetas;
    hkc_source_kernel *src_kernels; /* from the source, when compiled */
    int nsrc_kernels;
    char **src_globals;             /* module variables found in the source */
    int nsrc_globals;
    void *code; /* the code object, kept for disassembly */
    size_t code_size;
};

struct hk_module {
    hk_context *ctx;
    hkc_modentry *entry;
    char *name;
    hk_code_origin origin;
    double compile_ms;
    hk_kernel **kernels; /* looked up so far, freed with the module */
    int nkernels;
};

struct hk_kernel {
    hk_module *m;
    char *name;
    void *bfn;
    int user_sig; /* signature given by the caller, not the module */
    hkc_signature sig;
    hk_kernel_info info;
    char exec_mode[8]; /* hk_kernel_exec_mode */
    char exec_why[256];
};

/* The calling thread's error message slot (error.c); hkc_fail and
 * hkc_warn are in backend.h. */
void hkc_errkey_create(hk_context *ctx);
void hkc_errkey_delete(hk_context *ctx);
/* The code the calling thread's last hkc_fail recorded (0 after a reset). */
int hkc_last_fail_code(void);
void hkc_last_fail_reset(void);

/* dtype helpers (dtype.c) */
uint16_t hkc_f32_to_f16(float f);
float hkc_f16_to_f32(uint16_t h);
uint16_t hkc_f32_to_bf16(float f);
float hkc_bf16_to_f32(uint16_t h);
/* What a dtype's elements (a quantized dtype's blocks) must be aligned to,
 * and the bytes of count elements: HK_EINVAL when count is no whole number
 * of blocks (or t is invalid), HK_ERANGE past SIZE_MAX. */
size_t hkc_dtype_align(hk_dtype t);
int hkc_dtype_bytes(hk_dtype t, size_t count, size_t *bytes);
/* The largest finite value of a float dtype, for overflow messages
 * (dtype_codec.c). */
double hkc_dtype_float_max(hk_dtype t);

static inline hkc_device *hkc_current_device(const hk_context *ctx)
{
    return &ctx->devices[ctx->current];
}

/* Whether byte ranges [a, a + na) and [b, b + nb) share a byte: buffer
 * overlaps, queued copies, early start's hazards. */
static inline int hkc_ranges_meet(uintptr_t a, size_t na, uintptr_t b, size_t nb)
{
    return a < b + nb && b < a + na;
}

/* Destroys the streams the caller left (context teardown, stream.c). */
void hkc_streams_destroy_all(hk_context *ctx);
/* HK_EINVAL naming fn and `what` when dev is not s's device. */
int hkc_stream_check_device(const hk_stream *s, const hkc_device *dev, const char *fn,
                            const char *what);
/* Waits for the queued work of every stream of dev, if it has any (before
 * memory is freed); their errors stay for their synchronize. */
void hkc_streams_wait(hk_context *ctx, hkc_device *dev);
/* The first error a stream of dev holds (each taken), or 0: hk_synchronize
 * reports errors of work on every stream. */
int hkc_streams_take_errors(hk_context *ctx, hkc_device *dev);

/* Unloads every module of the in-memory table (context teardown). */
void hkc_module_table_clear(hk_context *ctx);

/* Plugins (plugin_load.c): loaded when the context is made, their modules freed
 * before the memory table is cleared. */
void hkc_plugins_load(hk_context *ctx, int probe);
/* backends/host/host_memory.c: every backend's `guarded` (backend.h). */
int hkc_host_guarded(const hk_buffer *b, const hk_buffer *other, void (*fn)(void *), void *arg,
                     const char *what);
void hkc_plugins_unload(hk_context *ctx);
/* Reads the error flags host ops left on `device` (plugin_flags.c), after
 * a wait for it: 0, or the error of the first one raised, naming its op. */
int hkc_plugin_flags_wait(hk_context *ctx, int device);

/* A signature must agree with what the code object says of its parameters
 * (sizes, alignments and offsets where known): a wrong one would pack
 * arguments the kernel reads differently. HK_EARG naming the parameter. */
/* module.c: loads a code object into a new memory-table entry (its
 * kernels' metadata read), and makes a module over an entry. */
int hkc_entry_load(hk_context *ctx, hkc_device *dev, const void *code, size_t size,
                   hkc_modentry **out);
int hkc_module_new(hk_context *ctx, hkc_modentry *e, const char *name, hk_code_origin origin,
                   double ms, hk_module **out);
/* The declarations of the kernels of `source` (discovery without a
 * compile: the preprocessed text is cached as a compile caches it), given
 * to m when it has none (a module loaded from an image of that source). */
int hkc_module_discover(hk_module *m, const char *source, const hk_compile_options *o);
/* Frees a looked-up kernel (module.c frees a module's, kernel.c a failed lookup). */
void hkc_kernel_free(hk_kernel *k);
int hkc_signature_check(hk_context *ctx, const char *name, const hkc_signature *sig,
                        const hkc_kernel_meta *meta);

/* Early start (launch_early.c). hkc_writes_note records what a launch of
 * sig with args (NULL: packed) on stream may write; hkc_writes_forget
 * says "anything" (a graph replay). hkc_early_flags checks cfg's flags and
 * early_reads against args (HK_EINVAL naming the argument) and gives the
 * flags the launch may use: early start dropped where a buffer it reads
 * early may be written by prev's kernel, or prev ran on another stream. */
void hkc_writes_note(hkc_kernel_writes *w, const void *stream, const hkc_signature *sig, const hk_arg *args,
                     int nargs);
void hkc_writes_forget(hkc_kernel_writes *w);
int hkc_early_flags(hk_context *ctx, const char *kernel, const hkc_kernel_writes *prev, const void *stream,
                    const hk_launch_config *cfg, const hk_arg *args, int nargs, uint32_t *flags);

/* Graphs (graph.c). While ctx records, launch.c hands each checked, packed
 * launch to hkc_graph_capture instead of the backend (args: the hk_arg
 * list it was packed from, for the buffers it uses; NULL for packed
 * launches). */
int hkc_graph_capture(hk_kernel *k, const hk_launch_config *cfg, const void *kernarg, size_t size,
                      const hk_arg *args, int nargs);
/* Raw scratch for an op recorded into ctx's graph (ctx records): a device
 * buffer of count elements of t that the graph owns, freed with it. */
int hkc_graph_scratch(hk_context *ctx, hk_dtype t, size_t count, hk_buffer **out);
/* What the recording's last node may write (early start between nodes). */
hkc_kernel_writes *hkc_graph_writes(hk_graph *g);
/* 0 unless ctx records a graph; then the recording is discarded and the
 * call fails: HK_ESTATE "CALL cannot be captured in a graph (WHY)". The
 * calls that queue no launch (copies, host access, compiles, syncs) call
 * it first. */
int hkc_graph_refuse(hk_context *ctx, const char *call, const char *why);
/* A buffer or module is being freed: the graphs (and the recording) that
 * use it, or a buffer it views, can no longer launch. */
void hkc_graph_forget(hk_context *ctx, const void *obj);
/* Context teardown: every graph's backend object released, the graphs
 * left to hk_graph_destroy. */
void hkc_graph_context_end(hk_context *ctx);

#endif
