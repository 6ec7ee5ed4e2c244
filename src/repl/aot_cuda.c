/* `hipkit compile --cuda-arch`: ahead-of-time code objects for the NVIDIA
 * backend, built by nvcc against hipkit's HIP compatibility headers (the same
 * ones NVRTC gets). One architecture writes a cubin, several a fatbin;
 * hk.load takes either. Prints what it wrote and the kernels inside. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aot.h"

#ifdef HKL_HAVE_CUDA_AOT
#include "cuda_backend.h"

extern const hkc_embedded_file hkc_cuda_headers[];

static void find_nvcc(char *out, size_t cap)
{
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), HKL_CUDA_HOME, "/usr/local/cuda"};
    for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++) {
        if (!homes[i] || !*homes[i])
            continue;
        snprintf(out, cap, "%s/bin/nvcc", homes[i]);
        if (access(out, X_OK) == 0)
            return;
    }
    snprintf(out, cap, "nvcc"); /* let PATH decide */
}

static int list_kernels(const char *out)
{
    FILE *f = fopen(out, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *data = malloc(n > 0 ? (size_t)n : 1);
    size_t got = data ? fread(data, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!data || got != (size_t)n) {
        free(data);
        return -1;
    }
    cuda_image_kind kind = hkc_cuda_image_kind(data, got);
    if (kind == CUDA_IMAGE_CUBIN) {
        char **names = NULL;
        int count = 0;
        printf("wrote %s: cubin for sm_%d, %ld bytes\n", out, hkc_cuda_cubin_arch(data, got), n);
        if (hkc_cuda_cubin_kernels(data, got, &names, &count) == 0) {
            for (int i = 0; i < count; i++) {
                char plain[256];
                hkc_cuda_plain_name(names[i], plain, sizeof plain);
                if (strcmp(plain, names[i]))
                    printf("  kernel %s (symbol %s)\n", plain, names[i]);
                else
                    printf("  kernel %s\n", plain);
            }
            free(names);
        }
    } else {
        printf("wrote %s: %s, %ld bytes\n", out, kind == CUDA_IMAGE_FATBIN ? "fatbin" : "code object", n);
    }
    free(data);
    return 0;
}

int hkl_aot_cuda(const hkl_aot_job *job)
{
    /* the architectures: sm_XY, comma separated */
    char list[256];
    snprintf(list, sizeof list, "%s", job->targets);
    int arch[HKL_AOT_MAX_TARGETS], narch = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v;
        char tail;
        if (sscanf(tok, "sm_%d%c", &v, &tail) != 1 || v < 70 || v > 999) {
            fprintf(stderr, "hipkit compile: '%s' is no NVIDIA architecture (sm_70 or newer, e.g. sm_90)\n", tok);
            return 2;
        }
        if (narch == HKL_AOT_MAX_TARGETS) {
            fprintf(stderr, "hipkit compile: more than %d architectures\n", HKL_AOT_MAX_TARGETS);
            return 2;
        }
        arch[narch++] = v;
    }
    if (narch == 0) {
        fprintf(stderr, "hipkit compile: --cuda-arch needs at least one architecture\n");
        return 2;
    }
    char outbuf[4096];
    const char *out = job->out;
    if (!out) {
        hkl_aot_default_out(job->file, narch == 1 ? ".cubin" : ".fatbin", outbuf, sizeof outbuf);
        out = outbuf;
    }
    char tmp[4096];
    if (hkl_aot_headers_write(hkc_cuda_headers, tmp, sizeof tmp) != 0)
        return 1;
    char nvcc[4096], inc[4200], gencode[HKL_AOT_MAX_TARGETS][64], opt[32];
    find_nvcc(nvcc, sizeof nvcc);
    snprintf(inc, sizeof inc, "-I%s", tmp);
    char *av[32 + HKL_AOT_MAX_TARGETS + HKL_AOT_MAX_EXTRA];
    int n = 0;
    av[n++] = nvcc;
    av[n++] = narch == 1 ? "-cubin" : "-fatbin";
    if (narch == 1) {
        snprintf(gencode[0], sizeof gencode[0], "-arch=sm_%d", arch[0]);
        av[n++] = gencode[0];
    } else {
        for (int i = 0; i < narch; i++) {
            snprintf(gencode[i], sizeof gencode[i], "-gencode=arch=compute_%d,code=sm_%d", arch[i], arch[i]);
            av[n++] = gencode[i];
        }
    }
    /* device code's level is ptxas's (3 unless told); nvcc's -O is the host's */
    if (job->opt_level >= 0) {
        snprintf(opt, sizeof opt, "-Xptxas=-O%d", job->opt_level);
        av[n++] = opt;
    }
    av[n++] = "--std=c++17";
    av[n++] = inc;
    for (int i = 0; i < job->nextra; i++)
        av[n++] = (char *)job->extra[i];
    av[n++] = "-x";
    av[n++] = "cu";
    av[n++] = (char *)job->file;
    av[n++] = "-o";
    av[n++] = (char *)out;
    av[n] = NULL;
    int st = hkl_aot_run(av, NULL, 0);
    hkl_aot_headers_remove(hkc_cuda_headers, tmp);
    if (st != 0) {
        fprintf(stderr, "hipkit compile: %s failed (exit %d)%s\n", nvcc, st,
                st == 127 ? ": is the CUDA toolkit installed? set CUDA_HOME" : "");
        return 1;
    }
    return list_kernels(out) == 0 ? 0 : 1;
}

#else

int hkl_aot_cuda(const hkl_aot_job *job)
{
    (void)job;
    fprintf(stderr, "hipkit compile: this hipkit was built without the CUDA toolkit: it can build "
                    "no NVIDIA code objects ahead of time (--offload-arch builds AMD ones)\n");
    return 1;
}

#endif
