/* hipkit: the command line. Options and scripts go to the Lua program
 * (here, with the loop in repl.c and the `hk` module in lua/); subcommands
 * that need no Lua (info, cache, plugins, compile, inspect) to cli/.
 *
 *   hipkit [options] [SCRIPT [args]]
 *   hipkit info
 *   hipkit cache stats|clear|prune [MAX]
 *   hipkit compile FILE.hip --cuda-arch ... | --offload-arch ...
 *   hipkit compile --plugin FAMILY FILE.hip...
 *   hipkit inspect FILE
 *   hipkit plugin new NAME [DIR]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "cli/cli.h"
#include "lua/hkl.h"
#include "interrupt.h"
#include "line_edit.h"
#include "repl.h"

static const char *progname = "hipkit";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: hipkit [options] [SCRIPT [args]]\n"
        "       hipkit info [--json]\n"
        "       hipkit cache stats|clear|prune [MAX]\n"
        "       hipkit plugins [NAME] | --check NAME\n"
        "       hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] [-o OUT] [-DNAME[=V]] [-IDIR] [-O0..3]\n"
        "       hipkit compile FILE.hip --offload-arch gfx90a[,gfx1030...] [-o OUT] [-DNAME[=V]] [-IDIR] [-O0..3]\n"
        "       hipkit compile --plugin FAMILY FILE.hip... [-o OUT.c] [--targets BACKEND:TARGET,...] [--symbol NAME]\n"
        "       hipkit inspect FILE [--kernel NAME] [--disasm] | --extract ENTRY -o OUT\n"
        "       hipkit plugin new NAME [DIR]\n"
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
        "  info             backends, devices, the compile cache, plugins; --json\n"
        "                   for scripts\n"
        "  plugins [NAME]   kernel families with their kernels and doc lines; NAME:\n"
        "                   that family, or the kernels whose names hold it\n"
        "  plugins --check NAME  compile family NAME and check each kernel's declared\n"
        "                   signature against its source (status 1 on a mismatch)\n"
        "  plugin new NAME [DIR]  a plugin folder to start from (DIR, default NAME):\n"
        "                   C and HIP files, meson.build, Makefile, a Lua test\n"
        "  cache stats      where the compile cache is and how big\n"
        "  cache clear      remove every entry of the compile cache\n"
        "  cache prune [MAX]  evict least recently used entries until the cache\n"
        "                   is under MAX bytes (512M, 1.5G, 2GiB: powers of 1024;\n"
        "                   default: its cap)\n"
        "  compile FILE     code objects built ahead, which hk.load takes: with\n"
        "                   --cuda-arch a cubin (one arch) or fatbin (several) by\n"
        "                   nvcc; with --offload-arch an AMDGPU code object .co (one\n"
        "                   target) or offload bundle .hipfb (several) by hipcc;\n"
        "                   with --plugin FAMILY a plugin's AOT images as a C table\n"
        "                   (hk_FAMILY_images in FAMILY_images.c) for the targets\n"
        "                   hipkit was configured with, or --targets\n"
        "  inspect FILE     a code object's targets, kernels, arguments, registers\n"
        "                   and memory, or a GGUF model's metadata and tensors,\n"
        "                   with no GPU; --kernel NAME, --disasm,\n"
        "                   --extract ENTRY -o OUT (one entry of a bundle)\n"
        "\n"
        "environment:\n"
        "  HIPKIT_BACKEND       backend when --backend is absent\n"
        "  HIPKIT_DEVICE        device index when --device is absent\n"
        "  HIPKIT_CXX           the C++ compiler of the host backend\n"
        "  HIPKIT_HOST_THREADS  threads the host backend runs blocks on (1 to 4096)\n"
        "  HIPKIT_HOST_MODE     how the host backend runs kernels with barriers:\n"
        "                       auto (loops where proven safe, else fibers) or fibers\n"
        "  HIPKIT_CACHE         compile cache mode: rw, ro or off\n"
        "  HIPKIT_CACHE_DIR     compile cache folder\n"
        "  HIPKIT_CACHE_MAX     compile cache cap in bytes (512M, 1.5G, 2GiB: powers of 1024)\n"
        "  HIPKIT_FULL_LOG      1: compile errors keep the lines about hipkit's own headers\n"
        "  HIPKIT_HIPCC         the compiler of `compile --offload-arch` (default: hipcc,\n"
        "                       else amdclang++ or clang++, in ROCM_PATH, PATH, /opt/rocm)\n"
        "  XDG_STATE_HOME       the REPL's history is $XDG_STATE_HOME/hipkit/history\n"
        "                       (default ~/.local/state/hipkit/history)\n");
}

/* What went wrong in one line, then one line of usage: the whole text is
 * for --help. */
int hkl_cli_bad_usage(const char *fmt, const char *what)
{
    fprintf(stderr, "%s: ", progname);
    fprintf(stderr, fmt, what);
    fputs("\n", stderr);
    fputs("usage: hipkit [options] [SCRIPT [args]] | hipkit info|cache|plugins|compile|inspect ...;"
          " 'hipkit --help' says more\n", stderr);
    return 2;
}

static void version(void)
{
    printf("hipkit %s\n%s\nline editing: %s\n", HK_VERSION_STRING, LUA_RELEASE, hkl_line_editing());
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
static int signalled; /* the exit status a signal asks for, 0 if none */

static int run_chunk(lua_State *L, int status, int narg)
{
    if (status == LUA_OK) {
        hki_begin(L);
        status = hkr_call(L, narg, 0, 1);
        if (hki_end(L) && status != LUA_OK)
            signalled = 128 + (hki_quit_signal() ? hki_quit_signal() : SIGINT);
    }
    if (status != LUA_OK)
        hkr_report(L, "hipkit: ");
    return status;
}

/* os.exit closes the state by default, as a script's end does: buffers
 * and modules are freed and the context removes its temporary folder. */
static int os_exit_closing(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, 0);
    return 0;
}

static void wrap_os_exit(lua_State *L)
{
    lua_getglobal(L, "os");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "exit");
        lua_pushcclosure(L, os_exit_closing, 1);
        lua_setfield(L, -2, "exit");
    }
    lua_pop(L, 1);
}

/* A GPU's work cannot be stopped: Ctrl-C says that it is waited for. */
static void note_device(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    hk_device_info d;
    if (ctx != NULL && hk_device_get(ctx, hk_device_current(ctx), &d) == 0)
        hki_set_gpu(strcmp(d.backend, "host") != 0);
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
    wrap_os_exit(L);
    note_device(L);
    hki_install(1);

    for (int i = 0; i < o->nexprs; i++) {
        const char *e = o->exprs[i];
        int status = luaL_loadbuffer(L, e, strlen(e), "=(command line)");
        if (run_chunk(L, status, 0) != LUA_OK) {
            o->status = signalled ? signalled : 1;
            return 0;
        }
    }
    if (o->script && run_script(L, o) != LUA_OK) {
        o->status = signalled ? signalled : 1;
        return 0;
    }
    if (o->interactive || (o->script == 0 && o->nexprs == 0 && isatty(STDIN_FILENO))) {
        hki_install(0);
        hkr_repl(L, o->quiet);
        if (hki_quit_signal())
            o->status = 128 + hki_quit_signal();
    } else if (o->script == 0 && o->nexprs == 0) {
        int status = luaL_loadfile(L, NULL);
        if (run_chunk(L, status, 0) != LUA_OK)
            o->status = signalled ? signalled : 1;
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
                return hkl_cli_bad_usage("'%s' needs an argument", a);
            o->exprs[o->nexprs++] = stmt;
        } else if (strcmp(a, "--backend") == 0 || strncmp(a, "--backend=", 10) == 0) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (v == NULL || v[0] == '\0')
                return hkl_cli_bad_usage("'%s' needs a backend name", "--backend");
            o->ctx.backend = v;
        } else if (strcmp(a, "--device") == 0 || strncmp(a, "--device=", 9) == 0) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            char *end;
            long n = v ? strtol(v, &end, 10) : -1;
            if (v == NULL || v[0] == '\0' || *end != '\0' || n < 0 || n > 4096)
                return hkl_cli_bad_usage("'--device' needs a device index (0, 1, ...), got '%s'", v ? v : "");
            o->ctx.device = (int)n;
        } else {
            return hkl_cli_bad_usage("unknown option '%s'", a);
        }
    }
    if (i < argc) {
        if (i == 1 && !is_script_name(argv[i]))
            return hkl_cli_bad_usage("unknown command '%s' (a script must end in .lua or be a path)", argv[i]);
        o->script = i;
    }
    return -1;
}

/* The subcommands: a first argument naming one is never a script (those
 * end in .lua or hold a '/'). */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"info", hkl_cmd_info},       {"plugins", hkl_cmd_plugins}, {"compile", hkl_cmd_compile},
    {"inspect", hkl_cmd_inspect}, {"cache", hkl_cmd_cache},
    {"plugin", hkl_cmd_plugin},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc, argv);

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

    /* Folders of sessions that were killed before they could clean up. */
    hk_tempdirs_sweep();

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
