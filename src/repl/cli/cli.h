/* The hipkit program's subcommands, which need no Lua: each takes main's
 * argc and argv (argv[1] is its name) and returns the exit status (0 done,
 * 1 failed, 2 bad usage). They use libhipkit's public API only. */
#ifndef HKL_CLI_H
#define HKL_CLI_H

#include <hipkit/hipkit.h>

int hkl_cmd_info(int argc, char **argv);    /* cmd_info.c */
int hkl_cmd_plugins(int argc, char **argv); /* cmd_plugins.c */
int hkl_cmd_cache(int argc, char **argv);   /* cmd_cache.c */
int hkl_cmd_compile(int argc, char **argv); /* cmd_compile.c */
/* `compile --plugin`: a plugin's AOT image table (cmd_compile_plugin.c) */
int hkl_cmd_compile_plugin(int argc, char **argv);
/* `plugin new NAME [DIR]`: a plugin folder to start from (cmd_plugin_new.c) */
int hkl_cmd_plugin(int argc, char **argv);
int hkl_cmd_inspect(int argc, char **argv); /* cmd_inspect.c */

/* Prints "hipkit: " and fmt with what on stderr, then the usage; returns 2
 * (main.c, where the usage is). */
int hkl_cli_bad_usage(const char *fmt, const char *what);

/* A context on the default device. When HIPKIT_BACKEND or HIPKIT_DEVICE
 * names one that cannot be used, it says so on stderr and falls back to
 * the host backend (which is always built); NULL when even that fails
 * (context.c). plugins: HKL_NO_PLUGINS for a command that needs none (one
 * crashing plugin cannot take it down), HKL_PROBE_PLUGINS to run each
 * plugin's init in a child first (a crashing one is listed as refused). */
enum { HKL_NO_PLUGINS, HKL_PROBE_PLUGINS };
hk_context *hkl_cli_context(int plugins);

/* The cache's mode, folder, entries, size and cap, indented (cmd_cache.c). */
void hkl_cli_print_cache(const hk_cache_stats *st);
/* Families (and refused plugins, with the reason); with kernels nonzero,
 * each kernel's signature and doc line and each op too (cmd_plugins.c). */
void hkl_cli_print_plugins(hk_context *ctx, int kernels);

#endif
