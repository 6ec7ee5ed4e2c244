/* What the plugin files of src/core share: the families plugins register,
 * the session each plugin's init registers through, and the list a context
 * holds. One file per job: plugin_api.c (the table plugins register
 * through), plugin_load.c (finding, checking and loading them),
 * plugin_query.c (what they registered), plugin_image.c (AOT image or JIT
 * for a source), plugin_launch.c (a kernel launched by its geometry rule),
 * plugin_ops.c (host ops that chain launches), plugin_scratch.c (the
 * scratch memory and copies ops use), plugin_reload.c (a plugin loaded
 * again in a running session). */
#ifndef HKC_PLUGIN_INTERNAL_H
#define HKC_PLUGIN_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "hipkit/plugin.h"
#include "internal.h"

/* At most this many operand extents a kernel (kept inline: nothing more to
 * free). */
#define PL_MAX_EXTENTS 8

typedef struct pl_kernel {
    char *name, *source, *signature, *doc;
    hk_plugin_geometry geom;
    /* the rest of its hk_plugin_rule (ABI 1.4; zero from add_kernel) */
    unsigned shared_per_thread, shared_fixed, max_block;
    hk_plugin_extent ext[PL_MAX_EXTENTS];
    int next;
    /* bit i: pointer operand i may be hk.null (ABI 1.9, the rule's
     * may_be_null; a parameter named info may be, whatever the bits) */
    unsigned long long may_be_null;
    int null_any; /* a plugin built before 1.9: any operand may be hk.null */
    int src;          /* index in the family's sources */
    hk_kernel **ks;   /* per device, looked up on first use */
} pl_kernel;

/* An image built ahead of time (add_image); data is the plugin's. */
typedef struct pl_image {
    char *backend, *target, *toolchain;
    const void *data;
    size_t size;
} pl_image;

typedef struct pl_source {
    char *name, *text;
    hk_module **mods; /* per device, compiled on first use */
    pl_image *imgs;
    int nimgs;
} pl_source;

typedef struct pl_op {
    char *name, *usage, *doc;
    hk_plugin_op_fn fn;
} pl_op;

typedef struct pl_session pl_session;
typedef struct pl_scratch pl_scratch;
typedef struct pl_flag_area pl_flag_area;

/* An entry: a family, or a refused plugin (error set). */
typedef struct pl_family {
    char *name, *version, *description, *path, *error;
    pl_session *owner; /* NULL for refusals */
    pl_source *srcs;
    int nsrcs;
    pl_kernel *ks;
    int nks;
    pl_op *ops;
    int nops;
} pl_family;

/* The table handed to one plugin's init: the public part first, so the host
 * finds its state from the pointer the plugin passes back. Kept until the
 * context ends, so a plugin that keeps the pointer gets refusals, not a
 * crash. */
struct pl_session {
    hk_plugin_api api;
    hkc_plugins *owner;
    unsigned abi_minor; /* the plugin ABI minor it was built for */
    char *plugin; /* its name */
    int open;     /* registration allowed (during init) */
    hkc_strbuf err;
};

struct hkc_plugins {
    hk_context *ctx;
    pl_family **fams;
    int nfams, capfams;
    pl_session **sess;
    int nsess, capsess;
    char **seen; /* real paths loaded, so a folder listed twice loads once */
    int nseen;
    /* Families replaced by a reload (plugin_reload.c), freed with the
     * context: kernels and names taken from them before stay valid. */
    pl_family **retired;
    int nretired;
    int probe; /* run each init in a forked child first (plugin_load.c) */
    pl_scratch *scratch; /* host ops' scratch pool (plugin_scratch.c) */
    int nscratch, capscratch;
    pl_flag_area *flags; /* host ops' error flags, by device (plugin_flags.c) */
    int nflags;
    int reading_flags; /* a read is under way: its own download must not start another */
    int op_depth;      /* host->call_op nesting (plugin_ops.c) */
    /* Plugin files found but not loaded yet (plugin_load.c): a plugin's
     * init runs when its family is first asked for. */
    struct pl_pending *pending;
    int npending, cappending;
    int scanning; /* the folders are being read: refusals join `pending` */
};

/* plugin_scratch.c: the scratch buffers one op call holds (views of pool
 * buffers), released when the op returns. */
#define HKC_SCRATCH_MAX 16
typedef struct hkc_scratch_list {
    hk_buffer *views[HKC_SCRATCH_MAX];
    int pool[HKC_SCRATCH_MAX];
    int read_zero[HKC_SCRATCH_MAX]; /* read back whole as zeros, nothing launched since */
    int n;
} hkc_scratch_list;
/* zeroed: every byte zero (host->scratch), else as the pool left it
 * (host->scratch_raw) */
int hkc_plugin_scratch(hk_context *ctx, const char *dtype, size_t count, int zeroed, hkc_scratch_list *l,
                       hk_buffer **out);
void hkc_plugin_scratch_release(hk_context *ctx, hkc_scratch_list *l);
/* What an op did to its scratch since: a launch or an upload may have
 * written any of it; a download of a whole view that read only zeros
 * proves that view still zero (the download waited for the launches). */
void hkc_plugin_scratch_written(hkc_scratch_list *l);
void hkc_plugin_scratch_read(hkc_scratch_list *l, const hk_buffer *buf, size_t offset, const void *bytes,
                             size_t n);
void hkc_plugin_scratch_free_all(hkc_plugins *ps);

/* plugin_flags.c: error flags ops' kernels raise, read back by the core.
 * Whether they are read later (GPUs) or as the op returns (CPU backend). */
int hkc_plugin_flags_deferred(hk_context *ctx);
int hkc_plugin_error_flag(hk_context *ctx, const char *family, const char *op, size_t words,
                          hk_plugin_describe_fn describe, const void *data, size_t data_bytes,
                          hk_buffer **out);
/* Reads device's flags: 1 with the first raised one's message in msg, 0
 * when none was raised, or a negative error. host and call are the op's
 * while it returns, else NULL. */
int hkc_plugin_flags_read(hk_context *ctx, int device, const hk_plugin_host *host,
                          const hk_plugin_call *call, hkc_strbuf *msg);
void hkc_plugin_flags_free_all(hkc_plugins *ps);

/* Plugins may pass NULL for optional text (a doc, a version): it is kept
 * as "" so readers never check. */
static inline char *pl_dupstr(const char *s) { return strdup(s ? s : ""); }

/* plugin_load.c: the context's entry list; family_free takes a family
 * (or a refusal) whole, its modules included. */
int hkc_plugin_family_push(hkc_plugins *ps, pl_family *f);
/* The index of family `name` (as hkc_plugin_family_index), loading its
 * plugin first if it is found but not loaded yet: the file named after it,
 * else (a family registered by a plugin of another name, or none) every
 * plugin not loaded yet. -1 when there is none. */
int hkc_plugin_need(hkc_plugins *ps, const char *name);
/* Loads every plugin not loaded yet (listings). */
void hkc_plugins_load_all(hkc_plugins *ps);
void hkc_plugin_family_free(hk_context *ctx, pl_family *f);

/* plugin_api.c: the ABI's rule for family, backend and plugin names
 * ([a-z0-9_]+, at most 64), and the table one plugin's init is given. */
int hkc_plugin_valid_name(const char *n);
void hkc_plugin_api_fill(hk_plugin_api *api);

/* plugin_query.c: the index of the loaded family `name`, or -1 (refused
 * entries never match). */
int hkc_plugin_family_index(const hkc_plugins *ps, const char *name);

/* plugin_image.c: the module of src on the current device, made on first
 * use and kept in src->mods. */
int hkc_plugin_source_module(hk_context *ctx, const pl_family *f, pl_source *src, hk_module **out);

/* plugin_load.c, shared with plugin_reload.c: dlopen a plugin file and
 * check its exports and ABI (the init function, or NULL with why), and run
 * its init in a session of its own (0, or nonzero with why; nothing it
 * registered stays). New families are appended to ps->fams, with `path`
 * as their file. */
hk_plugin_init_fn *hkc_plugin_open(const char *file, const char *name, hkc_strbuf *why, unsigned *abi_minor);
int hkc_plugin_run_init(hkc_plugins *ps, hk_plugin_init_fn *init, unsigned abi_minor, const char *name,
                        const char *path, hkc_strbuf *why);

/* plugin_check.c: k's declared signature against its declaration found in
 * the source m was compiled from. 0, HK_EARG with the message, or 1 when m
 * knows no declaration of k (an image, or a kernel discovery missed). */
int hkc_plugin_check_module(hk_context *ctx, const pl_family *f, const pl_kernel *k,
                            const hk_module *m);

/* For tests and tools (tests/test_plugin_aot.c declares them itself). */
int hkc_plugin_image_fit(const hk_context *ctx, const char *backend, const char *target,
                         const char *dev);
int hkc_plugin_image_get(const hk_context *ctx, const char *family, int i, const char **source,
                         const char **backend, const char **target, const char **toolchain,
                         const void **data, size_t *size);

#endif
