/* `hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] [-o OUT] [-DNAME[=V]]
 * [-IDIR]`: ahead-of-time code objects for the NVIDIA backend, built by nvcc
 * against hipkit's HIP compatibility headers (the same ones NVRTC gets). One
 * architecture writes a cubin, several a fatbin; hk.load takes either. Prints
 * what it wrote and the kernels inside. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aot.h"

#ifdef HKL_HAVE_CUDA_AOT
#include "cuda_backend.h"

typedef struct hkc_embedded_file {
    const char *path;
    const char *data;
    size_t size;
} hkc_embedded_file;
extern const hkc_embedded_file hkc_cuda_headers[];

static int find_nvcc(char *out, size_t cap)
{
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), HKL_CUDA_HOME, "/usr/local/cuda"};
    for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++) {
        if (!homes[i] || !*homes[i])
            continue;
        snprintf(out, cap, "%s/bin/nvcc", homes[i]);
        if (access(out, X_OK) == 0)
            return 0;
    }
    snprintf(out, cap, "nvcc"); /* let PATH decide */
    return 0;
}

/* Writes hipkit's headers under dir/hip/. */
static int write_headers(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/hip", dir);
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return -1;
    for (const hkc_embedded_file *f = hkc_cuda_headers; f->path; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, f->path);
        FILE *fp = fopen(path, "wb");
        if (!fp || fwrite(f->data, 1, f->size, fp) != f->size) {
            if (fp)
                fclose(fp);
            return -1;
        }
        fclose(fp);
    }
    return 0;
}

static void remove_headers(const char *dir)
{
    char path[4200];
    for (const hkc_embedded_file *f = hkc_cuda_headers; f->path; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, f->path);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/hip", dir);
    rmdir(path);
    rmdir(dir);
}

static int run(char **argv)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
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
                printf("  kernel %s%s%s%s\n", plain, strcmp(plain, names[i]) ? " (symbol " : "",
                       strcmp(plain, names[i]) ? names[i] : "", strcmp(plain, names[i]) ? ")" : "");
            }
            free(names);
        }
    } else {
        printf("wrote %s: %s, %ld bytes\n", out, kind == CUDA_IMAGE_FATBIN ? "fatbin" : "code object", n);
    }
    free(data);
    return 0;
}

int hkl_cmd_compile(int argc, char **argv)
{
    const char *file = NULL, *archs = NULL, *out = NULL;
    const char *extra[128];
    int nextra = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--cuda-arch") && i + 1 < argc)
            archs = argv[++i];
        else if (!strncmp(a, "--cuda-arch=", 12))
            archs = a + 12;
        else if (!strcmp(a, "--offload-arch") || !strncmp(a, "--offload-arch=", 15)) {
            fprintf(stderr, "hipkit compile: AMD targets (--offload-arch) need the AMD backend, "
                            "which this hipkit does not have yet; nothing was written\n");
            return 2;
        } else if (!strcmp(a, "-o") && i + 1 < argc)
            out = argv[++i];
        else if ((!strncmp(a, "-D", 2) || !strncmp(a, "-I", 2)) && nextra < 128)
            extra[nextra++] = a;
        else if (a[0] == '-') {
            fprintf(stderr, "hipkit compile: unknown option '%s'\n", a);
            return 2;
        } else if (!file)
            file = a;
        else {
            fprintf(stderr, "hipkit compile: one source file at a time ('%s' and '%s')\n", file, a);
            return 2;
        }
    }
    if (!file || !archs) {
        fprintf(stderr, "usage: hipkit compile FILE.hip --cuda-arch sm_90[,sm_80...] [-o OUT] [-DNAME[=V]] [-IDIR]\n");
        return 2;
    }
    if (access(file, R_OK) != 0) {
        fprintf(stderr, "hipkit compile: cannot read '%s': %s\n", file, strerror(errno));
        return 1;
    }
    /* the architectures: sm_XY, comma separated */
    char list[256];
    snprintf(list, sizeof list, "%s", archs);
    int arch[16], narch = 0;
    for (char *tok = strtok(list, ","); tok && narch < 16; tok = strtok(NULL, ",")) {
        int v;
        char tail;
        if (sscanf(tok, "sm_%d%c", &v, &tail) != 1 || v < 70 || v > 999) {
            fprintf(stderr, "hipkit compile: '%s' is no NVIDIA architecture (sm_70 or newer, e.g. sm_90)\n", tok);
            return 2;
        }
        arch[narch++] = v;
    }
    char outbuf[4096];
    if (!out) {
        snprintf(outbuf, sizeof outbuf, "%s", file);
        char *dot = strrchr(outbuf, '.'), *slash = strrchr(outbuf, '/');
        if (dot && (!slash || dot > slash))
            *dot = 0;
        strncat(outbuf, narch == 1 ? ".cubin" : ".fatbin", sizeof outbuf - strlen(outbuf) - 1);
        out = outbuf;
    }
    char tmp[4096];
    const char *td = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/hipkit-aot-XXXXXX", td && *td ? td : "/tmp");
    if (!mkdtemp(tmp) || write_headers(tmp) != 0) {
        fprintf(stderr, "hipkit compile: cannot write hipkit's headers under %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    char nvcc[4096], inc[4200], gencode[16][64];
    find_nvcc(nvcc, sizeof nvcc);
    snprintf(inc, sizeof inc, "-I%s", tmp);
    char *av[64 + 128];
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
    av[n++] = "--std=c++17";
    av[n++] = inc;
    for (int i = 0; i < nextra; i++)
        av[n++] = (char *)extra[i];
    av[n++] = "-x";
    av[n++] = "cu";
    av[n++] = (char *)file;
    av[n++] = "-o";
    av[n++] = (char *)out;
    av[n] = NULL;
    int st = run(av);
    remove_headers(tmp);
    if (st != 0) {
        fprintf(stderr, "hipkit compile: %s failed (exit %d)%s\n", nvcc, st,
                st == 127 ? ": is the CUDA toolkit installed? set CUDA_HOME" : "");
        return 1;
    }
    return list_kernels(out) == 0 ? 0 : 1;
}

#else

int hkl_cmd_compile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hipkit compile: this hipkit was built without the CUDA toolkit, and the AMD "
                    "backend does not exist yet: it can build no code objects ahead of time\n");
    return 1;
}

#endif
