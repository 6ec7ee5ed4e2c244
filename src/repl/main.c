/* hipkit: the Lua REPL, the script runner, and subcommands that need no Lua
 * (info, cache, plugins, compile, inspect).
 *
 *   hipkit [options] [SCRIPT [args]]
 *   hipkit info
 *   hipkit cache stats|clear|prune [MAX]
 *   hipkit compile FILE.hip --cuda-arch ... | --offload-arch ...
 *   hipkit inspect FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "hkl.h"
#include "cli/compile.h"
#include "cli/inspect.h"
#include "line_edit.h"
#include "repl.h"

static const char *progname = "hipkit";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: hipkit [options] [SCRIPT [args]]\n"
        "       hipkit info\n"
        "       hipkit cache stats|clear|prune [MAX]\n"
        "       hipkit plugins\n"
        "       hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] [-o OUT] [-DNAME[=V]] [-IDIR] [-O0..3]\n"
        "       hipkit compile FILE.hip --offload-arch gfx90a[,gfx1030...] [-o OUT] [-DNAME[=V]] [-IDIR] [-O0..3]\n"
        "       hipkit inspect FILE [--kernel NAME] [--disasm] | --extract ENTRY -o OUT\n"
        "\n"
        "With no SCRIPT, an interactive Lua 5.4 session with the `hk` module\n"
        "(a terminal), or the Lua program read from stdin (anything else).\n"
        "SCRIPT must end in .lua or be a path; `-` reads it from stdin. It sees\n"
        "its arguments in the global table `arg` (arg[0] is SCRIPT) and as `...`.\n"
        "\n"
        "options:\n"
        "  -e STMT          run the Lua statement STMT (may repeat; before SCRIPT)\n"
        "  -i               interactive session after SCRIPT and -e\n"
        "  -q               quiet: no banner, no warnings from hipkit\n"
        "  --backend NAME   use backend NAME (host, hip, cuda)\n"
        "  --device N       use device N of that backend\n"
        "  --help           this text\n"
        "  --version        versions of hipkit, Lua and line editing\n"
        "  --               stop handling options\n"
        "\n"
        "subcommands:\n"
        "  info             backends, devices, the compile cache, plugins\n"
        "  plugins          kernel families with their kernels and doc lines\n"
        "  cache stats      where the compile cache is and how big\n"
        "  cache clear      remove every entry of the compile cache\n"
        "  cache prune [MAX]  evict least recently used entries until the cache\n"
        "                   is under MAX bytes (512M, 1.5G, 2GiB: powers of 1024;\n"
        "                   default: its cap)\n"
        "  compile FILE     code objects built ahead, which hk.load takes: with\n"
        "                   --cuda-arch a cubin (one arch) or fatbin (several) by\n"
        "                   nvcc; with --offload-arch an AMDGPU code object .co (one\n"
        "                   target) or offload bundle .hipfb (several) by hipcc\n"
        "  inspect FILE     a code object's targets, kernels, arguments, registers\n"
        "                   and memory, with no GPU; --kernel NAME, --disasm,\n"
        "                   --extract ENTRY -o OUT (one entry of a bundle)\n"
        "\n"
        "environment:\n"
        "  HIPKIT_BACKEND       backend when --backend is absent\n"
        "  HIPKIT_DEVICE        device index when --device is absent\n"
        "  HIPKIT_CXX           the C++ compiler of the host backend\n"
        "  HIPKIT_HOST_THREADS  threads the host backend runs blocks on\n"
        "  HIPKIT_CACHE         compile cache mode: rw, ro or off\n"
        "  HIPKIT_CACHE_DIR     compile cache folder\n"
        "  HIPKIT_CACHE_MAX     compile cache cap in bytes (512M, 1.5G, 2GiB: powers of 1024)\n"
        "  HIPKIT_HIPCC         the compiler of `compile --offload-arch` (default: hipcc,\n"
        "                       else amdclang++ or clang++, in ROCM_PATH, PATH, /opt/rocm)\n"
        "  XDG_STATE_HOME       the REPL's history is $XDG_STATE_HOME/hipkit/history\n"
        "                       (default ~/.local/state/hipkit/history)\n");
}

static int bad_usage(const char *fmt, const char *what)
{
    fprintf(stderr, "%s: ", progname);
    fprintf(stderr, fmt, what);
    fputs("\n", stderr);
    usage(stderr);
    return 2;
}

static void version(void)
{
    printf("hipkit %s\n%s\nline editing: %s\n", HK_VERSION_STRING, LUA_RELEASE, hkl_line_editing());
}

/* ----------------------------------------------------------- subcommands */

static void human_size(char *out, size_t n, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, n, "%llu B", (unsigned long long)bytes);
    else
        snprintf(out, n, "%.1f %s", v, units[u]);
}

/* A context on the default device. When HIPKIT_BACKEND or HIPKIT_DEVICE
 * names one that cannot be used, info and cache still work on the host
 * backend (which is always built), after saying so. */
static hk_context *open_context(void)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    hk_context *ctx = NULL;
    int rc = hk_context_create(&o, &ctx);
    if (rc != 0) {
        const char *msg = hk_errmsg(NULL);
        fprintf(stderr, "%s: %s\n", progname, msg[0] ? msg : hk_strerror(rc));
        o.backend = "host";
        o.device = 0;
        if (hk_context_create(&o, &ctx) != 0)
            return NULL;
        fprintf(stderr, "%s: using the host backend instead\n", progname);
    }
    return ctx;
}

static void print_cache(const hk_cache_stats *st)
{
    char size[32], cap[32];
    human_size(size, sizeof size, st->bytes);
    human_size(cap, sizeof cap, st->max_bytes);
    printf("  mode:    %s\n", st->mode);
    printf("  folder:  %s\n", st->dir[0] ? st->dir : "(none)");
    printf("  entries: %llu\n", (unsigned long long)st->entries);
    printf("  size:    %s (%llu bytes)\n", size, (unsigned long long)st->bytes);
    printf("  cap:     %s\n", st->max_bytes ? cap : "none");
}

/* Families (and refused plugins, with the reason); with kernels, each
 * kernel's signature and doc line too. */
static void print_plugins(hk_context *ctx, int kernels)
{
    int n = hk_plugin_count(ctx);
    if (n == 0)
        printf("  none found\n");
    for (int i = 0; i < n; i++) {
        hk_plugin_info p;
        if (hk_plugin_get(ctx, i, &p) != 0)
            continue;
        if (p.error && p.error[0]) {
            printf("  %s: refused: %s\n", p.name, p.error);
            continue;
        }
        printf("  %-8s %s, %d kernel%s: %s (%s)\n", p.name, p.version, p.nkernels,
               p.nkernels == 1 ? "" : "s", p.description, p.path);
        for (int k = 0; kernels && k < p.nkernels; k++) {
            hk_plugin_kernel_info ki;
            if (hk_plugin_kernel_get(ctx, i, k, &ki) == 0)
                printf("      %s(%s)\n          %s\n", ki.name, ki.signature, ki.doc);
        }
        for (int o = 0; kernels && o < p.nops; o++) {
            hk_plugin_op_info oi;
            if (hk_plugin_op_get(ctx, i, o, &oi) == 0)
                printf("      op %s(%s)\n          %s\n", oi.name, oi.usage, oi.doc);
        }
    }
}

static int cmd_info(int argc, char **argv)
{
    (void)argv;
    if (argc > 2)
        return bad_usage("'info' takes no arguments: '%s'", argv[2]);
    hk_context *ctx = open_context();
    if (ctx == NULL)
        return 1;
    printf("hipkit %s\n\nbackends:\n", HK_VERSION_STRING);
    for (int i = 0; i < hk_backend_count(ctx); i++) {
        hk_backend_info b;
        if (hk_backend_get(ctx, i, &b) != 0)
            continue;
        if (b.available)
            printf("  %-6s available (%d device%s); toolchain: %s\n", b.name, b.device_count,
                   b.device_count == 1 ? "" : "s", b.toolchain && b.toolchain[0] ? b.toolchain : "none");
        else
            printf("  %-6s unavailable: %s\n", b.name, b.reason && b.reason[0] ? b.reason : "unknown reason");
    }
    printf("\ndevices:\n");
    int cur = hk_device_current(ctx);
    for (int i = 0; i < hk_device_count(ctx); i++) {
        hk_device_info d;
        if (hk_device_get(ctx, i, &d) != 0)
            continue;
        printf("  %d%s %s:%d  %s\n", i, i == cur ? "*" : " ", d.backend, d.index, d.name);
        printf("      target %s, %.1f GiB, %d compute units, warp size %d, managed memory %s,"
               " max %u threads per block\n",
               d.target, (double)d.total_memory / (1024.0 * 1024 * 1024), d.compute_units,
               d.warp_size, d.managed_memory ? "yes" : "no", d.max_threads_per_block);
    }
    printf("\ncache:\n");
    hk_cache_stats st;
    if (hk_cache_get_stats(ctx, &st) == 0)
        print_cache(&st);
    else
        printf("  unknown: %s\n", hk_errmsg(ctx));
    printf("\nplugins (folders: the build's or the install's, then HIPKIT_PLUGIN_PATH):\n");
    print_plugins(ctx, 0);
    hk_context_destroy(ctx);
    return 0;
}

/* `hipkit plugins`: every family with its kernels and their doc lines. */
static int cmd_plugins(int argc, char **argv)
{
    if (argc > 2)
        return bad_usage("'plugins' takes no arguments: '%s'", argv[2]);
    hk_context *ctx = open_context();
    if (ctx == NULL)
        return 1;
    print_plugins(ctx, 1);
    hk_context_destroy(ctx);
    return 0;
}

static int cmd_cache(int argc, char **argv)
{
    if (argc < 3)
        return bad_usage("%s", "'cache' needs one of: stats, clear, prune [MAX]");
    const char *what = argv[2];
    uint64_t max = 0;
    if (strcmp(what, "prune") == 0) {
        if (argc > 4)
            return bad_usage("'cache prune' takes one MAX: '%s'", argv[4]);
        if (argc == 4 && hk_size_parse(argv[3], &max) != 0)
            return bad_usage("'cache prune': %s", hk_errmsg(NULL));
    } else if (strcmp(what, "stats") == 0 || strcmp(what, "clear") == 0) {
        if (argc > 3)
            return bad_usage("'cache %s' takes no arguments", what);
    } else {
        return bad_usage("unknown cache command '%s'", what);
    }

    hk_context *ctx = open_context();
    if (ctx == NULL)
        return 1;
    int status = 0;
    hk_cache_stats before, after;
    if (hk_cache_get_stats(ctx, &before) != 0) {
        fprintf(stderr, "%s: cache: %s\n", progname, hk_errmsg(ctx));
        hk_context_destroy(ctx);
        return 1;
    }
    if (strcmp(what, "stats") == 0) {
        printf("cache:\n");
        print_cache(&before);
    } else {
        int rc = what[0] == 'c' ? hk_cache_clear(ctx) : hk_cache_prune(ctx, max);
        if (rc != 0 || hk_cache_get_stats(ctx, &after) != 0) {
            fprintf(stderr, "%s: cache %s: %s\n", progname, what,
                    hk_errmsg(ctx)[0] ? hk_errmsg(ctx) : hk_strerror(rc));
            status = 1;
        } else {
            char b0[32], b1[32];
            human_size(b0, sizeof b0, before.bytes - (before.bytes >= after.bytes ? after.bytes : before.bytes));
            human_size(b1, sizeof b1, after.bytes);
            uint64_t gone = before.entries >= after.entries ? before.entries - after.entries : 0;
            printf("%s %s: removed %llu entr%s (%s); %llu left (%s)\n",
                   what[0] == 'c' ? "cleared" : "pruned", before.dir[0] ? before.dir : "the cache",
                   (unsigned long long)gone, gone == 1 ? "y" : "ies", b0,
                   (unsigned long long)after.entries, b1);
        }
    }
    hk_context_destroy(ctx);
    return status;
}

/* ---------------------------------------------------------------- the Lua program */

typedef struct options {
    hk_context_options ctx;
    const char **exprs; /* -e statements, in order */
    int nexprs;
    int interactive;    /* -i */
    int quiet;
    int script;         /* argv index of the script, 0 when none */
    int argc;
    char **argv;
    int status;         /* exit status decided inside the protected call */
} options;

/* Lua's convention: arg[0] the script, arg[1..] its arguments, negative
 * indices the interpreter and its options. */
static void create_arg_table(lua_State *L, const options *o)
{
    int script = o->script ? o->script : o->argc;
    lua_createtable(L, o->argc - script, script + 1);
    for (int i = 0; i < o->argc; i++) {
        lua_pushstring(L, o->argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

/* Runs the chunk under its narg arguments (or reports the load error on
 * top when status is not LUA_OK) with a traceback, as scripts want. */
static int run_chunk(lua_State *L, int status, int narg)
{
    if (status == LUA_OK)
        status = hkr_call(L, narg, 0, 1);
    if (status != LUA_OK)
        hkr_report(L, "hipkit: ");
    return status;
}

static int run_script(lua_State *L, const options *o)
{
    const char *name = o->argv[o->script];
    /* luaL_loadfile(NULL) reads stdin and names it so. */
    int status = luaL_loadfile(L, strcmp(name, "-") == 0 ? NULL : name);
    if (status != LUA_OK)
        return run_chunk(L, status, 0);
    int nargs = o->argc - o->script - 1;
    luaL_checkstack(L, nargs + 3, "too many arguments to the script");
    for (int i = 0; i < nargs; i++)
        lua_pushstring(L, o->argv[o->script + 1 + i]);
    return run_chunk(L, LUA_OK, nargs);
}

/* Everything that touches Lua runs here, under lua_pcall, so even an error
 * outside a chunk (out of memory while setting up) is reported, not fatal. */
static int pmain(lua_State *L)
{
    options *o = lua_touserdata(L, 1);
    lua_settop(L, 0);
    luaL_openlibs(L);
    if (hkl_open(L, &o->ctx) != 1) {
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "%s: %s\n", progname, msg ? msg : "cannot open the hk module");
        o->status = 1;
        return 0;
    }
    lua_pushvalue(L, -1);
    lua_setglobal(L, "hk");
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_insert(L, -2);
    lua_setfield(L, -2, "hk"); /* require "hk" gives the same table */
    lua_settop(L, 0);
    create_arg_table(L, o);

    for (int i = 0; i < o->nexprs; i++) {
        const char *e = o->exprs[i];
        int status = luaL_loadbuffer(L, e, strlen(e), "=(command line)");
        if (run_chunk(L, status, 0) != LUA_OK) {
            o->status = 1;
            return 0;
        }
    }
    if (o->script && run_script(L, o) != LUA_OK) {
        o->status = 1;
        return 0;
    }
    if (o->interactive) {
        hkr_repl(L, o->quiet);
    } else if (o->script == 0 && o->nexprs == 0) {
        if (isatty(STDIN_FILENO)) {
            hkr_repl(L, o->quiet);
        } else {
            int status = luaL_loadfile(L, NULL);
            if (run_chunk(L, status, 0) != LUA_OK)
                o->status = 1;
        }
    }
    return 0;
}

static int is_script_name(const char *s)
{
    size_t n = strlen(s);
    return strcmp(s, "-") == 0 || strchr(s, '/') != NULL || (n > 4 && strcmp(s + n - 4, ".lua") == 0);
}

/* Parses options up to the script. Returns -1 to go on, else an exit
 * status. */
static int parse_args(int argc, char **argv, options *o)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || strcmp(a, "-") == 0)
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
            version();
            return 0;
        }
        if (strcmp(a, "-i") == 0) {
            o->interactive = 1;
        } else if (strcmp(a, "-q") == 0) {
            o->quiet = 1;
            o->ctx.quiet = 1;
        } else if (strncmp(a, "-e", 2) == 0) {
            const char *stmt = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (stmt == NULL)
                return bad_usage("'%s' needs an argument", a);
            o->exprs[o->nexprs++] = stmt;
        } else if (strcmp(a, "--backend") == 0 || strncmp(a, "--backend=", 10) == 0) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (v == NULL || v[0] == '\0')
                return bad_usage("'%s' needs a backend name", "--backend");
            o->ctx.backend = v;
        } else if (strcmp(a, "--device") == 0 || strncmp(a, "--device=", 9) == 0) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            char *end;
            long n = v ? strtol(v, &end, 10) : -1;
            if (v == NULL || v[0] == '\0' || *end != '\0' || n < 0 || n > 4096)
                return bad_usage("'--device' needs a device index (0, 1, ...), got '%s'", v ? v : "");
            o->ctx.device = (int)n;
        } else {
            return bad_usage("unknown option '%s'", a);
        }
    }
    if (i < argc) {
        if (i == 1 && !is_script_name(argv[i]))
            return bad_usage("unknown command '%s' (a script must end in .lua or be a path)", argv[i]);
        o->script = i;
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "info") == 0)
        return cmd_info(argc, argv);
    if (argc > 1 && strcmp(argv[1], "plugins") == 0)
        return cmd_plugins(argc, argv);
    if (argc > 1 && strcmp(argv[1], "compile") == 0)
        return hkl_cmd_compile(argc, argv);
    if (argc > 1 && strcmp(argv[1], "inspect") == 0)
        return hkl_cmd_inspect(argc, argv);
    if (argc > 1 && strcmp(argv[1], "cache") == 0)
        return cmd_cache(argc, argv);

    options o;
    memset(&o, 0, sizeof o);
    hk_context_options_defaults(&o.ctx);
    o.argc = argc;
    o.argv = argv;
    o.exprs = calloc((size_t)argc, sizeof *o.exprs);
    if (o.exprs == NULL) {
        fprintf(stderr, "%s: out of memory\n", progname);
        return 1;
    }
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.exprs);
        return rc;
    }

    lua_State *L = luaL_newstate();
    if (L == NULL) {
        fprintf(stderr, "%s: cannot create the Lua state: out of memory\n", progname);
        free(o.exprs);
        return 1;
    }
    lua_pushcfunction(L, pmain);
    lua_pushlightuserdata(L, &o);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        hkr_report(L, "hipkit: ");
        o.status = 1;
    }
    lua_close(L); /* frees buffers and modules, then the context */
    free(o.exprs);
    return o.status;
}
