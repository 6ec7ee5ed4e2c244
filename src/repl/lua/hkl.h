/* The `hk` Lua module: the declarations its files in src/repl/lua/ share.
 *
 * One hk_context per Lua state, created by hkl_open and kept in the registry.
 * Every failing hipkit call becomes a Lua error carrying hk_errmsg(ctx), so
 * the REPL's error handler prints it and the session goes on. */
#ifndef HKL_H
#define HKL_H

#include <hipkit/hipkit.h>
#include <lauxlib.h>
#include <lua.h>

/* Metatable names (shown by Lua in argument errors). Userdata whose
 * __index is a function (buffers, modules) also publish their method table
 * as the metatable field `methods`, which the REPL's completion reads. */
#define HKL_BUFFER "hk.buffer"
#define HKL_U64 "hk.u64" /* hk.u64(v): 64 unsigned bits for a kernel argument */
#define HKL_MODULE "hk.module"
#define HKL_KERNEL "hk.kernel"
#define HKL_LAUNCHER "hk.launcher"
#define HKL_DEVICE "hk.device"

/* Creates the context (backend/device per opts, may be NULL), registers every
 * metatable, and leaves the `hk` table on the stack. On failure pushes nil
 * and the message and returns 2; else returns 1. */
int hkl_open(lua_State *L, const hk_context_options *opts);
/* The Lua state's context. */
hk_context *hkl_ctx(lua_State *L);
/* Raises a Lua error with hipkit's message when rc != 0. */
void hkl_check(lua_State *L, int rc);
/* Raises "what: <hk_errmsg>" style errors for a failed call. */
int hkl_error(lua_State *L, int rc, const char *what);
/* t[key] = value on the table on top of the stack (a NULL string sets
 * nil): the records hk.devices, hk.backends and hk.plugins return. */
void hkl_set_str(lua_State *L, const char *key, const char *s);
void hkl_set_int(lua_State *L, const char *key, lua_Integer v);
void hkl_set_bool(lua_State *L, const char *key, int v);
/* Pushes the list {v1, ..., vn}, where push(L, i, ud) pushes the value of
 * 0-based item i: records listed from hk_*_count and hk_*_get. */
void hkl_push_list(lua_State *L, int n, void (*push)(lua_State *L, int i, void *ud), void *ud);
/* Raises an error for a key of the options table at idx (nil: none) that is
 * not in names (NULL-terminated), naming the function and the known keys. */
void hkl_check_options(lua_State *L, int idx, const char *const *names, const char *fn);

/* Holds (hold.c). A call that runs Lua code (an option's __index, a
 * callback) while it uses a buffer or a module holds it: each object has a
 * pin count, raised by a hold and dropped when the holding C function
 * returns or raises, and free() of a pinned object is an error. */
typedef struct hkl_pin {
    int count;
    const char *call; /* the latest holder, for the message ("b:rand") */
} hkl_pin;
typedef struct hkl_hold hkl_hold;
/* A hold for up to cap pins, which it drops when the running C function
 * returns or raises; it keeps the value at idx alive as long. Pushes one
 * to-be-closed value: call it after any lua_settop that would drop it. */
hkl_hold *hkl_hold_new(lua_State *L, int idx, int cap, const char *call);
/* lua_settop for a call holding values: Lua 5.4.0 to 5.4.4 keep a stack
 * pointer across the __close calls lua_settop makes, and a close that
 * grows the stack leaves it dangling (fixed in 5.4.5; Debian 12 ships
 * 5.4.4). Room made first means the close never moves the stack. */
static inline void hkl_settop(lua_State *L, int idx)
{
    lua_checkstack(L, 2 * LUA_MINSTACK);
    lua_settop(L, idx);
}
/* Pins p until the hold is closed (past cap, the hold pushes another). */
void hkl_hold_add(hkl_hold *h, hkl_pin *p);
/* Raises "<what>:free(): it is in use by <call> ..." when p is pinned. */
void hkl_pin_check_free(lua_State *L, const hkl_pin *p, const char *what);

/* Adds hk.gguf (gguf.c) to the table on top of the stack. */
void hkl_gguf_register(lua_State *L);

/* Buffers (buffer.c). A buffer userdata owns its hk_buffer; a view
 * keeps its parent alive through its user value. */
typedef struct hkl_buffer {
    hk_buffer *b; /* NULL once freed (close or gc) */
} hkl_buffer;
/* Registers the buffer metatable and adds alloc, mmap, from, load_npy to
 * the table on top of the stack. */
void hkl_buffer_register(lua_State *L);
/* Pushes a new userdata owning b (takes ownership). parent_idx: stack index
 * of the buffer it views, or 0. */
void hkl_push_buffer(lua_State *L, hk_buffer *b, int parent_idx);
/* The live hk_buffer at idx, or a Lua error ("buffer was freed"). */
hk_buffer *hkl_check_buffer(lua_State *L, int idx);
/* For callers that checked the metatable themselves (the launch path): the
 * live hk_buffer of buffer userdata ud at idx, or a Lua error if freed. */
hk_buffer *hkl_buffer_live(lua_State *L, void *ud, int idx);
/* hkl_check_buffer, then holds the buffer (and those it views) for the
 * running C function: buf:free() on any of them raises an error naming call
 * (e.g. "b:rand") until the function returns. Pushes one to-be-closed
 * value (see hkl_hold). */
hk_buffer *hkl_hold_buffer(lua_State *L, int idx, const char *call);
/* The live hk_buffer of buffer userdata ud at idx (its metatable checked by
 * the caller), held by h with those it views: many buffers, one hold. */
hk_buffer *hkl_hold_buffer_in(lua_State *L, hkl_hold *h, void *ud, int idx);
/* A Lua error naming `what` when t is a block format (q4_0 ...), whose
 * elements cannot be read or written one by one. */
void hkl_check_addressable(lua_State *L, hk_dtype t, const char *what);
/* NULL when idx is not a buffer userdata. */
hkl_buffer *hkl_test_buffer(lua_State *L, int idx);
/* The host pointer through which this binding reads and writes b's
 * elements, or NULL: then they go through hk_buffer_download/upload. NULL
 * for device memory on a GPU, and for file mappings, whose file another
 * process may truncate: the library's copies catch that SIGBUS and fail
 * naming the file, a load through the pointer would end the process. */
unsigned char *hkl_host_ptr(hk_buffer *b);
/* Parses a dtype name at idx (default when absent) or errors listing names. */
hk_dtype hkl_check_dtype(lua_State *L, int idx, const char *def);
/* One element of dtype t at p, as a double. */
double hkl_load_f64(hk_dtype t, const void *p);
hk_mem_mode hkl_check_mode(lua_State *L, int idx, const char *def);

/* Plots (plot.c): adds buffer methods plot and png to the method table
 * on top of the stack. */
void hkl_plot_register(lua_State *L);
/* NumPy files (npy.c): adds save to the method table on top of the
 * stack; hkl_npy_load is hk.load_npy. */
void hkl_npy_register(lua_State *L);
int hkl_npy_load(lua_State *L);

/* Modules, kernels and launches (module.c): registers metatables and
 * adds compile and load to the table on top of the stack. */
void hkl_module_register(lua_State *L);
/* Pushes plugin kernel k (hk_plugin_kernel: the context keeps it) as the
 * kernel object hk.compile's modules give (module.c). */
void hkl_push_plugin_kernel(lua_State *L, hk_kernel *k);
/* A grid or block at idx: a number, or {x, y, z} / {x=, y=, z=}. */
hk_dim3 hkl_check_dim3(lua_State *L, int idx, const char *what);
/* Converts Lua values [first, first+n) to kernel arguments as k:launch
 * does. The calling C function's upvalue 1 must be the buffer metatable.
 * A table becomes the lanes of k's vector parameter at its position, stored
 * in vecs[i] (one row per argument); with k NULL a table is refused. */
void hkl_convert_args(lua_State *L, int first, int n, hk_arg *args, hk_kernel *k,
                      double (*vecs)[4]);
/* Reads the table at idx as the lanes of vector parameter p, kernel
 * argument argn (1-based, for messages), into out: {x, y, ...} by position,
 * or by the fields x, y, z, w when t[1] is nil. Each lane a number that a
 * double holds exactly; the wrong count or type is a Lua error naming the
 * parameter and the lane. */
void hkl_check_vector(lua_State *L, int idx, int argn, const hk_param_info *p, double *out);
/* k:launch(grid, block, ...) queued on stream s, the kernel at kidx and
 * grid, block, arguments after it (module.c; for s:launch). The calling C
 * function's upvalue 1 must be the buffer metatable. */
int hkl_launch_on(lua_State *L, hk_stream *s, int kidx);
/* Streams and events (stream.c): adds stream and event to the table on top
 * of the stack. */
#define HKL_STREAM "hk.stream"
#define HKL_EVENT "hk.event"
void hkl_stream_register(lua_State *L);
/* Buffer arithmetic (elementwise.c): + - * / on the buffer metatable and
 * the in-place methods add, sub, mul, div, through hk.ops.binary. */
void hkl_elementwise_register(lua_State *L);
/* Raises the error of a failed hk_module_compile: a compile log without
 * the lines about hipkit's own headers (compile_log.c). */
int hkl_compile_failed(lua_State *L, int rc);
/* Plugins (plugin.c): adds plugins and ops to the table on top of the
 * stack. */
void hkl_plugin_register(lua_State *L);
/* hk.plugins.reload (plugin_reload.c): makes hk.plugins, registered above,
 * a callable table holding reload. */
void hkl_plugin_reload_register(lua_State *L);

/* Graphs (graph.c): adds graph to the table on top of the stack and
 * registers the graph metatable. While hk.graph's function runs,
 * hkl_graph_recording is nonzero and hkl_graph_note(L, idx) keeps the value
 * at idx (a buffer a call takes, a launched kernel) alive with the graph;
 * callers test the counter first, so other calls pay one comparison. */
#define HKL_GRAPH "hk.graph"
extern int hkl_graph_recording;
void hkl_graph_note(lua_State *L, int idx);
void hkl_graph_register(lua_State *L);

/* Benchmarks (bench.c): adds bench to the table on top of the stack. */
void hkl_bench_register(lua_State *L);
/* hk.autotune, hk.peaks and hk.bench{...} (tune.c, tune.lua): run after
 * hkl_bench_register, on the hk table on top of the stack. */
void hkl_tune_register(lua_State *L);

/* Result tables (report.c): hkl_report gives the table on top the
 * metatable "hk.<kind>" (kind: kernels, kernel_info, stats, bench, devices,
 * backends, plugins), whose __tostring prints it as a short aligned
 * report; hkl_report_register creates them. */
void hkl_report(lua_State *L, const char *kind);
void hkl_report_register(lua_State *L);
/* A byte count as "1.5 KiB", "80 GiB" (powers of 1024). */
void hkl_format_bytes(double n, char *out, size_t cap);

/* help() (help.c): adds hk.docs to the hk table on top of the stack,
 * gives it a __tostring that lists its sections, and sets the global
 * `help`. */
void hkl_help_register(lua_State *L);

/* Sets field "target" of the table on top to what module m's code object
 * is for, as hk.inspect reads it (a cubin's sm_90 or sm_90a, an AMD code
 * object's target id); sets nothing for code with no one target (the CPU
 * backend's shared objects, fatbins, PTX) (hk.c). */
void hkl_set_code_target(lua_State *L, const hk_module *m);

/* Long work: a progress line on stderr after about a second, when stderr is
 * a terminal (progress.c). end() erases it. */
void hkl_progress_begin(const char *what);
void hkl_progress_end(void);

#endif
