/* hipkit plugin ABI: the only header a plugin includes.
 *
 * A plugin is a shared object named hipkit-plugin-NAME.so that exports
 *
 *     HK_PLUGIN_EXPORT const unsigned hk_plugin_NAME_abi[2] =
 *         {HK_PLUGIN_ABI_MAJOR, HK_PLUGIN_ABI_MINOR};
 *     HK_PLUGIN_EXPORT int hk_plugin_NAME_init(const hk_plugin_api *api);
 *
 * (HK_PLUGIN_DEFINE(NAME) writes the first line.) The host loads a plugin
 * built for its own ABI major and an older or equal minor, and refuses any
 * other with a message naming both. It then calls init once per hipkit
 * context, passing its API as a table: the plugin registers its families,
 * HIP sources and kernels through it, and returns 0, or nonzero after saying
 * why through api->error. The table's functions may be called during init
 * only; afterwards they return a negative number and do nothing.
 *
 * The table only ever grows at the end: a plugin built for an older minor
 * sees a prefix of it. Check api->size before using a field added in a later
 * minor (HK_PLUGIN_API_HAS(api, field)).
 *
 * A plugin never links against libhipkit.
 */
#ifndef HIPKIT_PLUGIN_H
#define HIPKIT_PLUGIN_H

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kept equal to HK_ABI_VERSION_MAJOR/MINOR of version.h (the core checks). */
#define HK_PLUGIN_ABI_MAJOR 1
#define HK_PLUGIN_ABI_MINOR 9

#if defined(__GNUC__)
#define HK_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define HK_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
#define HK_PLUGIN_EXTERN_C extern "C"
#else
#define HK_PLUGIN_EXTERN_C
#endif

/* Exports the ABI version the plugin was built for. */
#define HK_PLUGIN_DEFINE(name)                                                \
    HK_PLUGIN_EXTERN_C HK_PLUGIN_EXPORT const unsigned hk_plugin_##name##_abi[2]; \
    HK_PLUGIN_EXTERN_C HK_PLUGIN_EXPORT const unsigned hk_plugin_##name##_abi[2] = \
        {HK_PLUGIN_ABI_MAJOR, HK_PLUGIN_ABI_MINOR}

/* How an op picks its launch geometry from its arguments. */
typedef enum hk_plugin_geometry_kind {
    HK_PLUGIN_GEOM_EXPLICIT = 0, /* the caller gives grid and block */
    HK_PLUGIN_GEOM_1D = 1,       /* over an element count */
    HK_PLUGIN_GEOM_2D = 2,       /* over rows and columns */
    /* ABI 1.4, through add_kernel_rule only: per-row work over a rows x
     * cols view (rows_param, cols_param) */
    HK_PLUGIN_GEOM_ROW_BLOCK = 3, /* one block per row: grid.x = rows */
    HK_PLUGIN_GEOM_ROW_WARP = 4,  /* one warp per row: grid.x = ceil(rows / (block / warpSize)) */
} hk_plugin_geometry_kind;

typedef struct hk_plugin_geometry {
    int kind;            /* an hk_plugin_geometry_kind */
    /* 1-D: grid.x = min(ceil(count / block), max_blocks), count being the
     * value of parameter count_param (0-based); the kernel loops with a grid
     * stride. max_blocks 0: no cap. */
    int count_param;
    unsigned block;
    unsigned max_blocks;
    /* 2-D: x runs over columns, y over rows: grid = {ceil(cols / block_x),
     * ceil(rows / block_y)}. */
    int rows_param;
    int cols_param;
    unsigned block_x;
    unsigned block_y;
} hk_plugin_geometry;

/* ABI 1.4: the length an operand must have, as a function of the
 * arguments: scale times the values of the integer parameters named in
 * factors (per-row outputs: {out, {rows_param, -1, -1}, 1}; a gemm's C:
 * {c, {m_param, n_param, -1}, 1}). */
typedef struct hk_plugin_extent {
    int param;                /* a pointer parameter (0-based) */
    int factors[3];           /* integer parameters multiplied in; -1 ends the list */
    unsigned long long scale; /* a constant factor; 0 counts as 1 */
} hk_plugin_extent;

/* ABI 1.4: a geometry with dynamic shared memory and operand extents, for
 * add_kernel_rule. Grows only at the end: size says how much the plugin
 * filled in, fields past it count as zero.
 *
 * geom.kind picks the grid:
 *  - 1D, 2D: as hk_plugin_geometry says;
 *  - ROW_BLOCK: grid.x = rows, a block of geom.block threads, or, when 0,
 *    the smallest power of two >= cols, at least a warp and at most
 *    max_block (0: 1024; never above the device's limit);
 *  - ROW_WARP: a warp per row, geom.block threads a block (0: 256; rounded
 *    down to whole warps), grid.x = ceil(rows / (block / warpSize));
 *  - EXPLICIT: the caller gives grid and block (the shared formula and the
 *    extents still apply).
 * Dynamic shared memory is shared_per_thread * (threads of the block) +
 * shared_fixed bytes, unless the caller gives a nonzero amount.
 * Every pointer operand named in extents must hold its extent; under 1D,
 * 2D and the row kinds the others must hold the count (rows x cols).
 *
 * ABI 1.9: a pointer operand given hk.null (a NULL pointer) is refused
 * before the launch, unless its parameter is named info (candle's
 * convention: no layout, contiguous) or its bit is set in may_be_null (a
 * kernel that tests it: layernorm's bias, a sort's values; operands 0 to
 * 63). Kernels of plugins built for an older minor keep taking NULL
 * anywhere; rebuilding a plugin against this header opts it in. */
/* Fields a later minor adds to hk_plugin_rule default to 0 in C++14 and
 * later, so a positional initializer written for an older minor still
 * compiles warning-free there (C++11 would make the struct no aggregate:
 * no default there). C zeroes what an initializer leaves out, though
 * -Wextra warns about a positional one: designated initializers
 * (.size = sizeof rule, .geom = ...) do not draw it. */
#if defined(__cplusplus) && __cplusplus >= 201402L
#define HK_PLUGIN_ADDED = 0
#else
#define HK_PLUGIN_ADDED
#endif
typedef struct hk_plugin_rule {
    size_t size; /* sizeof(hk_plugin_rule) as the plugin was built */
    hk_plugin_geometry geom;
    unsigned shared_per_thread;
    unsigned shared_fixed;
    unsigned max_block;
    const hk_plugin_extent *extents; /* nextents of them, copied (at most 8) */
    int nextents;
    unsigned long long may_be_null HK_PLUGIN_ADDED; /* ABI 1.9: bit i: operand i may be NULL */
} hk_plugin_rule;

typedef struct hk_plugin_api hk_plugin_api;

/* Host-side ops (minor 2): code in the plugin that runs several launches.
 * An argument as the host passes it; kinds and layout are those of hipkit's
 * hk_arg, so the host hands its arguments over unchanged. */
enum {
    HK_PLUGIN_ARG_INT = 0,
    HK_PLUGIN_ARG_UINT = 1,
    HK_PLUGIN_ARG_FLOAT = 2,
    HK_PLUGIN_ARG_BOOL = 3,
    HK_PLUGIN_ARG_BUFFER = 4, /* v.buf: an opaque buffer */
    HK_PLUGIN_ARG_NULL = 5,
    HK_PLUGIN_ARG_VECTOR = 6, /* v.vec: one double per lane of a vector parameter (ABI 1.3) */
};
typedef struct hk_plugin_arg {
    int kind;
    union {
        long long i;
        unsigned long long u;
        double f;
        void *buf;
        const double *vec;
    } v;
} hk_plugin_arg;

/* One call of an op (opaque). */
typedef struct hk_plugin_call hk_plugin_call;

/* A launch configuration an op gives (ABI 1.4). */
typedef struct hk_plugin_config {
    unsigned grid[3];    /* blocks in x, y, z; all 0: the rule's grid */
    unsigned block[3];   /* threads in x, y, z; all 0: the rule's block */
    size_t shared_bytes; /* dynamic shared memory; 0: the rule's formula */
} hk_plugin_config;

/* Fields added after minor 0 default to null in C++, so a table written
 * field by field for an older minor still compiles warning-free. */
#ifdef __cplusplus
#define HK_PLUGIN_LATER = nullptr
#else
#define HK_PLUGIN_LATER
#endif

struct hk_plugin_host;
/* Writes the message of a raised error flag (ABI 1.6, host->error_flag). */
typedef void (*hk_plugin_describe_fn)(const struct hk_plugin_host *host, const hk_plugin_call *call,
                                      const unsigned long long *words, const void *data, char *msg,
                                      size_t cap);

/* What an op may do, handed to it at each call. Grows only at the end. */
typedef struct hk_plugin_host {
    size_t size;
    /* Launches a kernel of the op's family, its grid from the kernel's
     * geometry rule; arguments are checked as hk_launch checks them. 0 or a
     * negative hipkit error code (the message is kept for the caller). */
    int (*launch)(const hk_plugin_call *call, const char *kernel, const hk_plugin_arg *args,
                  int nargs);
    /* Elements of a buffer argument, and its element type ("f32", ...). */
    size_t (*length)(const hk_plugin_call *call, const void *buf);
    const char *(*dtype)(const hk_plugin_call *call, const void *buf);
    /* Fails the call with a message (printf-style); returns the error code
     * for the op to return. */
    int (*fail)(const hk_plugin_call *call, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

    /* --- ABI 1.4: check HK_PLUGIN_HOST_HAS(host, field) first --- */

    /* Launches a kernel of the op's family with an explicit configuration
     * (hk_plugin_config): a zero grid lets the kernel's rule pick the grid
     * for cfg's block, a zero block the rule's block, zero shared_bytes the
     * rule's shared formula. Operands are checked as for launch. */
    int (*launch_config)(const hk_plugin_call *call, const char *kernel,
                         const hk_plugin_config *cfg, const hk_plugin_arg *args, int nargs);
    /* The current device's warp (wavefront) size: 32 on NVIDIA, 32 or 64
     * on AMD, the CPU backend's own. */
    unsigned (*warp_size)(const hk_plugin_call *call);

    /* --- ABI 1.5: check HK_PLUGIN_HOST_HAS(host, scratch) first --- */

    /* A temporary buffer of count elements of dtype ("u32", ...) on the
     * current device, every byte zero, passed to launches like any buffer.
     * It lives until the op returns; kernels the op launched may still use
     * it afterwards (the memory goes back to a pool that later launches
     * reach only after them). NULL on failure, with the call failed. */
    void *(*scratch)(const hk_plugin_call *call, const char *dtype, size_t count) HK_PLUGIN_LATER;
    /* Byte copies between host memory and a buffer argument or scratch
     * buffer, ordered after the kernels the op launched before: download
     * waits for them (a device-side flag read back, a count that sizes the
     * next launch). 0 or a negative hipkit error code. */
    int (*upload)(const hk_plugin_call *call, void *buf, size_t offset, const void *src,
                  size_t bytes) HK_PLUGIN_LATER;
    int (*download)(const hk_plugin_call *call, void *buf, size_t offset, void *dst,
                    size_t bytes) HK_PLUGIN_LATER;
    /* The backend of the current device ("host", "cuda", "hip"): an op
     * may shape its launch for a CPU (a block of one thread per row runs
     * no fibers there) where the rule's GPU geometry would be slow. */
    const char *(*backend)(const hk_plugin_call *call) HK_PLUGIN_LATER;

    /* --- ABI 1.6: check HK_PLUGIN_HOST_HAS(host, error_flag) first --- */

    /* Zeroed device memory of `words` u64 (1 to 8) for an error the op's
     * kernels find on the device (an index out of range), passed to
     * launches like a buffer; a kernel makes any word nonzero to raise it.
     * The op does not read it back: the core does, where the host waits
     * for the device anyway (the next download, hk_synchronize, a read
     * from Lua), or as the op returns where waiting costs nothing (the CPU
     * backend; HIPKIT_DEFER_CHECKS=0 or 1 forces either). If a word is
     * nonzero then, the core calls describe with the words and a copy of
     * data (at most 256 bytes) to write the message (NUL-terminated, at
     * most cap bytes), which becomes the error of the op or of the call
     * that waited, naming the op. host and call are the op's own when
     * describe runs as the op returns (it may read its arguments back
     * with host->download), NULL when it runs later. NULL on failure, with
     * the call failed. */
    void *(*error_flag)(const hk_plugin_call *call, size_t words, hk_plugin_describe_fn describe,
                        const void *data, size_t data_bytes) HK_PLUGIN_LATER;
    /* Calls another family's op (hk.ops.FAMILY.OP) with these arguments,
     * which may include this op's scratch buffers: a convolution handing
     * its im2col columns to the gemm family. Its errors come back prefixed
     * with this op's name; calls nest at most 8 deep. 0 or an error. */
    int (*call_op)(const hk_plugin_call *call, const char *family, const char *op, const hk_plugin_arg *args,
                   int nargs) HK_PLUGIN_LATER;
    /* As scratch, without the zeroing (a memset the device waits for: 40 us
     * for 115 MB on an H100): for memory the op's kernels write whole
     * before anything reads it. Its bytes are whatever they were. */
    void *(*scratch_raw)(const hk_plugin_call *call, const char *dtype, size_t count) HK_PLUGIN_LATER;
    /* The current device's compute units (SMs, CUs; the CPU backend's
     * worker threads), 0 where the backend cannot tell: a grid-stride op
     * sizes its grid by it. Check HK_PLUGIN_HOST_HAS(host, compute_units)
     * first. */
    unsigned (*compute_units)(const hk_plugin_call *call) HK_PLUGIN_LATER;

    /* --- ABI 1.7: check HK_PLUGIN_HOST_HAS(host, launch_early) first --- */

    /* launch_config with early start (HK_LAUNCH_EARLY_START, hipkit.h): the
     * kernel calls hk_grid_wait() before it touches any memory but the
     * buffer arguments whose bits are set in early_reads (bit i: args[i]),
     * which it may read before, so its blocks can start and load those
     * while the kernel before it ends. The host drops early start where one
     * of them may be written by that kernel, and where the device cannot
     * start early (then it is launch_config). */
    int (*launch_early)(const hk_plugin_call *call, const char *kernel, const hk_plugin_config *cfg,
                        const hk_plugin_arg *args, int nargs, unsigned early_reads) HK_PLUGIN_LATER;

    /* --- ABI 1.8: check HK_PLUGIN_HOST_HAS(host, overlap) first --- */

    /* 1 when buffers a and b (arguments or scratch) share any byte of
     * memory (hk_buffer_overlap: the same buffer, views whose ranges meet),
     * else 0. An op whose kernels read an input after others have begun
     * writing the output (a matvec's blocks each stage all of x) fails the
     * call when they do, rather than compute over its own results. */
    int (*overlap)(const hk_plugin_call *call, const void *a, const void *b) HK_PLUGIN_LATER;
} hk_plugin_host;

/* Whether the host table of an op call has `field` (added in a later
 * minor). */
#define HK_PLUGIN_HOST_HAS(host, field) \
    ((host)->size >= offsetof(hk_plugin_host, field) + sizeof((host)->field))

/* An op: 0, or the code host->launch or host->fail returned. */
typedef int (*hk_plugin_op_fn)(const hk_plugin_host *host, const hk_plugin_call *call,
                               const hk_plugin_arg *args, int nargs);


struct hk_plugin_api {
    size_t size;         /* sizeof the host's table: fields beyond it are absent */
    unsigned abi_major;  /* the host's ABI */
    unsigned abi_minor;

    /* A kernel family ("fill"): a name unique among loaded plugins
     * ([a-z0-9_]), a version and a one-line description. */
    int (*register_family)(const hk_plugin_api *api, const char *name, const char *version,
                           const char *description);
    /* HIP source text of the family, compiled when one of its kernels is
     * first used. The text is copied. */
    int (*add_source)(const hk_plugin_api *api, const char *family, const char *name,
                      const char *hip_source);
    /* A kernel of a source: its extern "C" name, its parameters as C
     * ("float *y, float v, size_t n"), its geometry rule and a doc line. */
    int (*add_kernel)(const hk_plugin_api *api, const char *family, const char *source_name,
                      const char *kernel_name, const char *signature,
                      const hk_plugin_geometry *geometry, const char *doc);
    /* Says why init (or a registration) failed; the host shows it with the
     * plugin's name. printf-style. */
    void (*error)(const hk_plugin_api *api, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

    /* --- minor 1 --- */

    /* A code object built ahead of time from one of the family's sources
     * (added before) for one backend ("host", "cuda", "hip") and target id
     * ("x86_64", "sm_90", "gfx90a:xnack-"). toolchain_tag names what built
     * it (informative). When a kernel of the source is first used on a
     * device, an image of that backend and exact target wins, then a
     * compatible one (CUDA: same major arch, lower or equal minor; AMD: a
     * feature the image leaves out matches either setting), else the source
     * is JIT-compiled. The data is NOT copied: it must stay valid for the
     * life of the process (static data in the plugin, which is never
     * unloaded). */
    int (*add_image)(const hk_plugin_api *api, const char *family, const char *source_name,
                     const char *backend, const char *target, const char *toolchain_tag,
                     const void *data, size_t size) HK_PLUGIN_LATER;

    /* --- minor 2 --- */

    /* A host-side op of the family: `usage` names its arguments
     * ("x, y, a, b"), doc says what it does. */
    int (*add_op)(const hk_plugin_api *api, const char *family, const char *name,
                  const char *usage, hk_plugin_op_fn fn, const char *doc) HK_PLUGIN_LATER;

    /* --- minor 4 --- */

    /* add_kernel with a full rule (hk_plugin_rule): the row geometries,
     * dynamic shared memory as a formula of the block size, and operands
     * whose length is a function of the arguments. */
    int (*add_kernel_rule)(const hk_plugin_api *api, const char *family, const char *source_name,
                           const char *kernel_name, const char *signature,
                           const hk_plugin_rule *rule, const char *doc) HK_PLUGIN_LATER;
};

/* One embedded image, as tools/aot/embed_images.py writes them (a table
 * ended by a zeroed entry). */
typedef struct hk_plugin_image {
    const char *source_name, *backend, *target, *toolchain_tag;
    const void *data;
    size_t size;
} hk_plugin_image;

/* Whether the host's table has `field` (added in some later minor). */
#define HK_PLUGIN_API_HAS(api, field) \
    ((api)->size >= offsetof(hk_plugin_api, field) + sizeof((api)->field))

typedef int hk_plugin_init_fn(const hk_plugin_api *api);

/* Arguments an op builds for host->launch, launch_config and call_op. */
static inline hk_plugin_arg hk_plugin_int_arg(long long v)
{
    hk_plugin_arg a;
    a.kind = HK_PLUGIN_ARG_INT;
    a.v.i = v;
    return a;
}
static inline hk_plugin_arg hk_plugin_buffer_arg(void *buf)
{
    hk_plugin_arg a;
    a.kind = HK_PLUGIN_ARG_BUFFER;
    a.v.buf = buf;
    return a;
}

/* Fails the call when buffer `out`, which the op writes, shares memory with
 * buffer `in`, which its kernels read while others already write `out`
 * (host->overlap; a host older than 1.8 cannot tell, and nothing fails):
 * 0, or the code host->fail returned. */
static inline int hk_plugin_apart(const hk_plugin_host *host, const hk_plugin_call *call, const void *out,
                                  const char *oname, const void *in, const char *iname)
{
    if (HK_PLUGIN_HOST_HAS(host, overlap) && host->overlap(call, out, in))
        return host->fail(call,
                          "%s shares memory with %s, which the op reads while it writes %s: give %s a buffer of "
                          "its own",
                          oname, iname, oname, oname);
    return 0;
}

/* An argument's kind in words, for an op's messages. */
static inline const char *hk_plugin_arg_kind(const hk_plugin_arg *a)
{
    switch (a->kind) {
    case HK_PLUGIN_ARG_BUFFER: return a->v.buf ? "a buffer" : "a NULL buffer";
    case HK_PLUGIN_ARG_INT:
    case HK_PLUGIN_ARG_UINT: return "an integer";
    case HK_PLUGIN_ARG_FLOAT: return "a number with a fraction";
    case HK_PLUGIN_ARG_BOOL: return "a boolean";
    case HK_PLUGIN_ARG_NULL: return "a null pointer";
    default: return "a vector";
    }
}

/* Checks an op's arguments against `kinds`, a letter each: b a buffer, i an
 * integer, f a flag (a boolean or an integer), n a number; those after a
 * '|' may be left out. On a mismatch fails the call with `usage` and what
 * is wrong: the count when it is outside the range, else the first
 * argument of the wrong kind, by position and by its name in `names`
 * (comma-separated, as many as letters). 0, or the code host->fail returned. */
static inline int hk_plugin_check_args(const hk_plugin_host *host, const hk_plugin_call *call,
                                       const hk_plugin_arg *args, int nargs, const char *kinds,
                                       const char *names, const char *usage)
{
    int need = 0, most = 0, i = 0;
    for (const char *k = kinds; *k; k++)
        if (*k == '|')
            need = most;
        else
            most++;
    if (!strchr(kinds, '|'))
        need = most;
    if (nargs < need || nargs > most)
        return host->fail(call, "expects %s; got %d arguments", usage, nargs);
    for (const char *k = kinds; *k && i < nargs; k++) {
        if (*k == '|')
            continue;
        const hk_plugin_arg *a = &args[i];
        int is_int = a->kind == HK_PLUGIN_ARG_INT || a->kind == HK_PLUGIN_ARG_UINT;
        int ok = *k == 'b'   ? a->kind == HK_PLUGIN_ARG_BUFFER && a->v.buf
                 : *k == 'i' ? is_int
                 : *k == 'f' ? is_int || a->kind == HK_PLUGIN_ARG_BOOL
                             : is_int || a->kind == HK_PLUGIN_ARG_FLOAT;
        if (!ok) {
            const char *name = names;
            for (int j = 0; j < i && name; j++)
                name = strchr(name, ',') ? strchr(name, ',') + 1 : NULL;
            int len = name ? (int)(strchr(name, ',') ? strchr(name, ',') - name : (long)strlen(name)) : 0;
            return host->fail(call, "expects %s; argument %d (%.*s) is %s", usage, i + 1, len, name ? name : "",
                              hk_plugin_arg_kind(a));
        }
        i++;
    }
    return 0;
}

/* Hands a table of images to add_image, after the sources they were built
 * from. A host older than minor 1 has no add_image: the images are skipped
 * and the sources JIT-compiled, so this returns 0. */
static inline int hk_plugin_add_images(const hk_plugin_api *api, const char *family,
                                       const hk_plugin_image *images)
{
    if (!HK_PLUGIN_API_HAS(api, add_image))
        return 0;
    int r = 0;
    for (const hk_plugin_image *im = images; r == 0 && im && im->data; im++)
        r = api->add_image(api, family, im->source_name, im->backend, im->target,
                           im->toolchain_tag, im->data, im->size);
    return r;
}

#ifdef __cplusplus
}
#endif

#endif
