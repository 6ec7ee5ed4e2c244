/* `hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] | --offload-arch
 * gfx90a[,gfx1030...] [-o OUT] [-DNAME[=V]] [-IDIR] [-O0..3]`: the command
 * line, shared by both kinds of target. One kind per run; the library's
 * hk_compile_offline builds it (the backend runs the vendor's compiler),
 * compile_build.c writes and describes it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "compile.h"

#define USAGE                                                                                     \
    "usage: hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] [-o OUT] [-DNAME[=V]] [-IDIR] "  \
    "[-O0..3]\n"                                                                                  \
    "       hipkit compile FILE.hip --offload-arch gfx90a[,gfx1030...] [-o OUT] [-DNAME[=V]] "    \
    "[-IDIR] [-O0..3]\n"                                                                          \
    "       hipkit compile --plugin FAMILY FILE.hip... [-o OUT.c] [--targets "                     \
    "BACKEND:TARGET,...] [--symbol NAME]\n"

void hkl_compile_default_out(const char *file, const char *ext, char *out, size_t cap)
{
    snprintf(out, cap, "%s", file);
    char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (dot && dot != out && (!slash || dot > slash + 1))
        *dot = 0;
    strncat(out, ext, cap - strlen(out) - 1);
}

/* The value of "--name V" or "--name=V" at argv[*i], else NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

int hkl_cmd_compile(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) /* a plugin's image table: another job */
        if (!strcmp(argv[i], "--plugin"))
            return hkl_cmd_compile_plugin(argc, argv);
    hkl_compile_job job;
    memset(&job, 0, sizeof job);
    job.opt_level = -1;
    const char *cuda = NULL, *amd = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        if ((v = option_value(argc, argv, &i, "--cuda-arch", &missing)) != NULL)
            cuda = v;
        else if ((v = option_value(argc, argv, &i, "--offload-arch", &missing)) != NULL)
            amd = v;
        else if (missing) {
            fprintf(stderr, "hipkit compile: '%s' needs a list of targets\n%s", a, USAGE);
            return 2;
        } else if (!strcmp(a, "-o")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hipkit compile: '-o' needs a file name\n");
                return 2;
            }
            job.out = argv[++i];
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3])
            job.opt_level = a[2] - '0';
        else if ((!strncmp(a, "-D", 2) || !strncmp(a, "-I", 2)) && a[2]) {
            if (job.nextra == HKL_COMPILE_MAX_EXTRA) {
                fprintf(stderr, "hipkit compile: more than %d -D and -I options\n", HKL_COMPILE_MAX_EXTRA);
                return 2;
            }
            job.extra[job.nextra++] = a;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "hipkit compile: unknown option '%s'%s\n", a,
                    a[1] == 'O' ? " (optimisation levels: -O0, -O1, -O2, -O3)" : "");
            return 2;
        } else if (!job.file)
            job.file = a;
        else {
            fprintf(stderr, "hipkit compile: one source file at a time ('%s' and '%s')\n", job.file, a);
            return 2;
        }
    }
    if (cuda && amd) {
        fprintf(stderr, "hipkit compile: --cuda-arch and --offload-arch in one run: one kind of "
                        "target per run (a cubin/fatbin, or an AMD code object/bundle)\n");
        return 2;
    }
    if (!job.file || (!cuda && !amd)) {
        fputs(USAGE, stderr);
        return 2;
    }
    job.targets = cuda ? cuda : amd;
    if (!job.targets[0]) {
        fprintf(stderr, "hipkit compile: %s needs at least one target\n", cuda ? "--cuda-arch" : "--offload-arch");
        return 2;
    }
    if (access(job.file, R_OK) != 0) {
        fprintf(stderr, "hipkit compile: cannot read '%s': %s\n", job.file, strerror(errno));
        return 1;
    }
    return hkl_compile_build(cuda ? "cuda" : "hip", &job);
}
