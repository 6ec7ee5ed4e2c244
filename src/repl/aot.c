/* `hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] | --offload-arch
 * gfx90a[,gfx1030...] [-o OUT] [-DNAME[=V]] [-IDIR] [-O0..3]`: the command
 * line, shared by both kinds of target. One kind per run: a cubin or fatbin
 * comes from aot_cuda.c, an AMDGPU code object or offload bundle from
 * aot_amd.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aot.h"

#define USAGE                                                                                     \
    "usage: hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] [-o OUT] [-DNAME[=V]] [-IDIR] "  \
    "[-O0..3]\n"                                                                                  \
    "       hipkit compile FILE.hip --offload-arch gfx90a[,gfx1030...] [-o OUT] [-DNAME[=V]] "    \
    "[-IDIR] [-O0..3]\n"

int hkl_aot_run(char **argv, const char *envset, int quiet)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (envset)
            putenv((char *)envset);
        int null = quiet ? open("/dev/null", O_WRONLY) : -1;
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "hipkit compile: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int hkl_aot_headers_write(const hkc_embedded_file *files, char *dir, size_t cap)
{
    const char *td = getenv("TMPDIR");
    snprintf(dir, cap, "%s/hipkit-aot-XXXXXX", td && *td ? td : "/tmp");
    char path[4200];
    int ok = mkdtemp(dir) != NULL;
    if (ok) {
        snprintf(path, sizeof path, "%s/hip", dir);
        ok = mkdir(path, 0700) == 0 || errno == EEXIST;
    }
    for (const hkc_embedded_file *f = files; ok && f->path; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, f->path);
        FILE *fp = fopen(path, "wb");
        ok = fp && fwrite(f->data, 1, f->size, fp) == f->size;
        if (fp && fclose(fp) != 0)
            ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "hipkit compile: cannot write hipkit's headers under %s: %s\n", dir,
                strerror(errno));
        hkl_aot_headers_remove(files, dir);
        return 1;
    }
    return 0;
}

void hkl_aot_headers_remove(const hkc_embedded_file *files, const char *dir)
{
    char path[4200];
    for (const hkc_embedded_file *f = files; f->path; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, f->path);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/hip", dir);
    rmdir(path);
    rmdir(dir);
}

void hkl_aot_default_out(const char *file, const char *ext, char *out, size_t cap)
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
    hkl_aot_job job;
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
            if (job.nextra == HKL_AOT_MAX_EXTRA) {
                fprintf(stderr, "hipkit compile: more than %d -D and -I options\n", HKL_AOT_MAX_EXTRA);
                return 2;
            }
            job.extra[job.nextra++] = a;
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
    return cuda ? hkl_aot_cuda(&job) : hkl_aot_amd(&job);
}
