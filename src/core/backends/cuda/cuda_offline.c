/* Code objects to ship (`hipkit compile --cuda-arch`, hk_compile_offline):
 * built by nvcc against hipkit's HIP compatibility headers (the ones NVRTC
 * gets). One architecture gives a cubin, several a fatbin. The JIT
 * (cuda_compile.c) uses NVRTC instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "process.h"

extern const hkc_embedded_file hkc_cuda_headers[];

int hkc_cuda_find_tool(const char *tool, char *out, size_t cap)
{
    char dirs[3][4200];
    const char *homes[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), HKC_CUDA_INCLUDE "/.."};
    const char *first[5] = {NULL};
    int n = 0;
    for (int i = 0; i < 3; i++)
        if (homes[i] && *homes[i]) {
            snprintf(dirs[i], sizeof dirs[i], "%s/bin", homes[i]);
            first[n++] = dirs[i];
        }
    first[n++] = "/usr/local/cuda/bin";
    return hkc_find_program(tool, first, NULL, out, cap);
}

int hkc_cuda_compile_offline(hkc_backend *be, const char *const *targets, int ntargets,
                             const hkc_compile_job *job, void **code, size_t *code_size,
                             hkc_strbuf *log)
{
    (void)be;
    char nvcc[4096];
    if (hkc_cuda_find_tool("nvcc", nvcc, sizeof nvcc) != 0) {
        hkc_strbuf_puts(log, "nvcc not found in $CUDA_HOME/bin, $CUDA_PATH/bin, "
                             HKC_CUDA_INCLUDE "/../bin, /usr/local/cuda/bin or PATH: is the CUDA "
                             "toolkit installed? set CUDA_HOME");
        return HK_ENOTFOUND;
    }
    char dir[4096];
    if (hkc_tempdir_create("offline", dir, sizeof dir) != 0 ||
        hkc_tempdir_write_all(dir, hkc_cuda_headers) != 0) {
        hkc_strbuf_puts(log, "cannot write hipkit's headers to a private temporary folder");
        hkc_tempdir_remove(dir);
        return HK_EIO;
    }
    enum { MAX_ARGS = 40 + 16 };
    int nflags = job->nflags;
    char **av = calloc((size_t)(MAX_ARGS + nflags), sizeof *av);
    char gencode[16][64], inc[4200], opt[32], src[4400], out[4200];
    int n = 0, r = 0;
    if (!av) {
        hkc_tempdir_remove(dir);
        return HK_ENOMEM;
    }
    av[n++] = nvcc;
    av[n++] = ntargets == 1 ? "-cubin" : "-fatbin";
    for (int i = 0; i < ntargets && i < 16; i++) {
        const char *sm = targets[i] + 3; /* normalised: "sm_90" */
        if (ntargets == 1)
            snprintf(gencode[i], sizeof gencode[i], "-arch=sm_%s", sm);
        else
            snprintf(gencode[i], sizeof gencode[i], "-gencode=arch=compute_%s,code=sm_%s", sm, sm);
        av[n++] = gencode[i];
    }
    av[n++] = "--std=c++17";
    snprintf(inc, sizeof inc, "-I%s", dir);
    av[n++] = inc;
    for (int i = 0; i < nflags; i++) {
        const char *f = job->flags[i];
        /* device code's level is ptxas's (3 unless told); nvcc's -O is the host's */
        if (f[0] == '-' && f[1] == 'O') {
            snprintf(opt, sizeof opt, "-Xptxas=%s", f);
            av[n++] = opt;
        } else {
            av[n++] = (char *)f;
        }
    }
    if (job->path) {
        snprintf(src, sizeof src, "%s", job->path);
    } else {
        snprintf(src, sizeof src, "%s/%s.cu", dir, job->name);
        char rel[300];
        snprintf(rel, sizeof rel, "%s.cu", job->name);
        if (hkc_tempdir_write(dir, rel, job->source, strlen(job->source)) != 0) {
            hkc_strbuf_printf(log, "cannot write the source under %s", dir);
            r = HK_EIO;
        }
    }
    snprintf(out, sizeof out, "%s/out.bin", dir);
    av[n++] = "-x";
    av[n++] = "cu";
    av[n++] = src;
    av[n++] = "-o";
    av[n++] = out;
    av[n] = NULL;
    int st = r ? 0 : hkc_run_capture(av, NULL, log);
    if (!r && st != 0) {
        hkc_strbuf_printf(log, "%s%s failed (%s %d)", log->len ? "\n" : "", nvcc,
                          st < 0 ? "error" : "exit", st < 0 ? -st : st);
        r = HK_ECOMPILE;
    }
    char *data = NULL;
    size_t size = 0;
    if (!r && hkc_read_file(out, &data, &size) != 0) {
        hkc_strbuf_printf(log, "nvcc said it wrote %s, which cannot be read", out);
        r = HK_ECOMPILE;
    }
    if (!r) {
        *code = data;
        *code_size = size;
    }
    free(av);
    hkc_tempdir_remove(dir);
    return r;
}
