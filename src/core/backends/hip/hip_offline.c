/* Code objects to ship (`hipkit compile --offload-arch`, hk_compile_offline):
 * built by ROCm's hipcc, or the clang HIPKIT_HIPCC names, on any machine,
 * GPU or not. One target gives a raw AMDGPU ELF, several a clang offload
 * bundle. The JIT (hip_compile.c) uses hiprtc instead; this is the
 * compiler users ship with. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_backend.h"
#include "pp_text.h"
#include "process.h"

extern const hkc_embedded_file hkc_hip_headers[];
extern const hkc_embedded_file hkc_hip_cuda_headers[];

typedef struct toolchain {
    char path[4096];
    int clang;         /* a bare clang, which needs -x hip and the ROCm folder */
    char rocm[4096];   /* clang only: --rocm-path */
    char devlib[4096]; /* clang only: --rocm-device-lib-path, "" when under rocm */
} toolchain;

/* name in $ROCM_PATH/bin, $ROCM_PATH/llvm/bin, PATH, /opt/rocm/bin,
 * /opt/rocm/llvm/bin: an explicit ROCM_PATH wins over whatever PATH has. */
static int find_tool(const char *name, char *out, size_t cap)
{
    const char *rocm = getenv("ROCM_PATH");
    char bin[4200] = "", llvm[4200] = "";
    if (rocm && rocm[0]) {
        snprintf(bin, sizeof bin, "%s/bin", rocm);
        snprintf(llvm, sizeof llvm, "%s/llvm/bin", rocm);
    }
    const char *first[] = {bin, llvm, NULL};
    const char *last[] = {"/opt/rocm/bin", "/opt/rocm/llvm/bin", NULL};
    return hkc_find_program(name, first, last, out, cap) == 0;
}

/* Where ROCm lives for a bare clang: ROCM_PATH, else the folder above the
 * compiler's bin/ (or llvm/bin/); the device libraries under it, or (Debian)
 * under lib/<multiarch>/. */
static void clang_rocm(toolchain *tc)
{
    const char *env = getenv("ROCM_PATH");
    if (env && env[0]) {
        snprintf(tc->rocm, sizeof tc->rocm, "%s", env);
    } else {
        snprintf(tc->rocm, sizeof tc->rocm, "%s", tc->path);
        char *slash = strrchr(tc->rocm, '/');
        if (slash)
            *slash = 0; /* the bin folder */
        size_t n = strlen(tc->rocm);
        if (n >= 9 && !strcmp(tc->rocm + n - 9, "/llvm/bin"))
            tc->rocm[n - 9] = 0;
        else if (n >= 4 && !strcmp(tc->rocm + n - 4, "/bin"))
            tc->rocm[n - 4] = 0;
        if (!tc->rocm[0])
            snprintf(tc->rocm, sizeof tc->rocm, "/");
    }
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s/amdgcn/bitcode", tc->rocm);
    if (access(pattern, R_OK) == 0)
        return;
    snprintf(pattern, sizeof pattern, "%s/lib/*/amdgcn/bitcode", tc->rocm);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
        snprintf(tc->devlib, sizeof tc->devlib, "%s", g.gl_pathv[0]);
    globfree(&g);
}

/* HIPKIT_HIPCC, else hipcc, amdclang++, clang++ in that order. */
static int find_toolchain(toolchain *tc, hkc_strbuf *log)
{
    memset(tc, 0, sizeof *tc);
    const char *env = getenv("HIPKIT_HIPCC");
    int found = 0;
    if (env && env[0]) {
        found = find_tool(env, tc->path, sizeof tc->path);
        if (!found) {
            hkc_strbuf_printf(log, "HIPKIT_HIPCC names '%s', which is not an executable here", env);
            return HK_ENOTFOUND;
        }
    } else {
        static const char *const names[] = {"hipcc", "amdclang++", "clang++"};
        for (size_t i = 0; i < sizeof names / sizeof *names && !found; i++)
            found = find_tool(names[i], tc->path, sizeof tc->path);
        if (!found) {
            hkc_strbuf_puts(log, "no AMD compiler found: looked for hipcc, amdclang++ and clang++ "
                                 "in $ROCM_PATH/bin, $ROCM_PATH/llvm/bin, PATH, /opt/rocm/bin and "
                                 "/opt/rocm/llvm/bin; install ROCm, set ROCM_PATH, or name the "
                                 "compiler in HIPKIT_HIPCC");
            return HK_ENOTFOUND;
        }
    }
    const char *base = strrchr(tc->path, '/');
    base = base ? base + 1 : tc->path;
    tc->clang = strstr(base, "clang") != NULL;
    if (tc->clang)
        clang_rocm(tc);
    return 0;
}

/* argv under construction: the strings it points to live in `store`. */
typedef struct argv_builder {
    char *av[64 + 2 * 16 + 256];
    int n;
    hkc_strbuf store[24];
    int nstore;
} argv_builder;

static void arg(argv_builder *a, const char *s)
{
    if (a->n + 1 < (int)(sizeof a->av / sizeof a->av[0]))
        a->av[a->n++] = (char *)s;
    a->av[a->n] = NULL;
}

static void argf(argv_builder *a, const char *fmt, const char *value)
{
    if (a->nstore == (int)(sizeof a->store / sizeof a->store[0]))
        return;
    hkc_strbuf *s = &a->store[a->nstore++];
    hkc_strbuf_init(s);
    hkc_strbuf_printf(s, fmt, value);
    arg(a, s->data);
}

static void argv_free(argv_builder *a)
{
    for (int i = 0; i < a->nstore; i++)
        hkc_strbuf_free(&a->store[i]);
}

/* The compiler and what it needs to compile HIP for the device only. */
static void base_args(const toolchain *tc, argv_builder *a)
{
    arg(a, tc->path);
    arg(a, HKC_HIP_GRID_WAIT_DEFINE);
    if (tc->clang) {
        /* --cuda-device-only: the spelling every HIP-capable clang knows */
        arg(a, "-x");
        arg(a, "hip");
        argf(a, "--rocm-path=%s", tc->rocm);
        if (tc->devlib[0])
            argf(a, "--rocm-device-lib-path=%s", tc->devlib);
        arg(a, "--cuda-device-only");
    } else {
        arg(a, "--offload-device-only");
    }
}

/* hipcc runs NVIDIA's nvcc when HIP_PLATFORM says nvidia. */
#define HIPCC_ENV "HIP_PLATFORM=amd"

/* Parameter names reach the code object's metadata (and so hipkit inspect
 * and hk.load's signature check) only with -fhip-kernel-arg-name, which
 * clang 15 (ROCm 5.3) brought: asked of the compiler on an empty file. */
static int knows_arg_names(const toolchain *tc, const char *target)
{
    argv_builder a = {.n = 0};
    base_args(tc, &a);
    argf(&a, "--offload-arch=%s", target);
    arg(&a, "-fhip-kernel-arg-name");
    arg(&a, "-nogpuinc");
    arg(&a, "-nogpulib");
    arg(&a, "-fsyntax-only");
    if (!tc->clang) {
        arg(&a, "-x");
        arg(&a, "hip");
    }
    arg(&a, "/dev/null");
    int ok = hkc_run_capture(a.av, tc->clang ? NULL : HIPCC_ENV, NULL) == 0;
    argv_free(&a);
    return ok;
}

/* ROCm 5 has no <hip/hip_bf16.h> and lacks parts of HIP's device API that
 * hipkit's kernels use: where the compiler's ROCm has hip/hip_runtime.h but
 * no hip/hip_bf16.h, hipkit's compatibility headers (the ones hiprtc gets)
 * go first on the include path. */
static int needs_compat_headers(const toolchain *tc)
{
    char prefix[4096], probe[4200];
    if (tc->clang) {
        snprintf(prefix, sizeof prefix, "%s", tc->rocm);
    } else { /* .../bin/hipcc -> ... */
        snprintf(prefix, sizeof prefix, "%s", tc->path);
        for (int up = 0; up < 2; up++) {
            char *slash = strrchr(prefix, '/');
            if (!slash)
                return 0;
            *slash = 0;
        }
    }
    snprintf(probe, sizeof probe, "%s/include/hip/hip_runtime.h", prefix);
    if (access(probe, R_OK) != 0)
        return 0;
    snprintf(probe, sizeof probe, "%s/include/hip/hip_bf16.h", prefix);
    return access(probe, R_OK) != 0;
}

/* The optimisation level among the user's flags (-O0..-O3), else -O3. */
static const char *opt_level(const hkc_compile_job *job)
{
    const char *o = "-O3";
    for (int i = 0; i < job->nflags; i++)
        if (job->flags[i][0] == '-' && job->flags[i][1] == 'O')
            o = job->flags[i];
    return o;
}

/* Writes the source where the compiler can read it, unless it came from a
 * file the compiler reads itself. */
static int source_file(const hkc_compile_job *job, const char *dir, hkc_strbuf *path,
                       hkc_strbuf *log)
{
    if (job->path) {
        hkc_strbuf_puts(path, job->path);
        return 0;
    }
    hkc_strbuf_printf(path, "%s/%s.hip", dir, job->name);
    char rel[300];
    snprintf(rel, sizeof rel, "%s.hip", job->name);
    int e = hkc_tempdir_write(dir, rel, job->source, strlen(job->source));
    if (e != 0)
        hkc_strbuf_printf(log, "cannot write the source under %s: %s", dir, strerror(-e));
    return e ? HK_EIO : 0;
}

int hkc_hip_compile_offline(hkc_backend *be, const char *const *targets, int ntargets,
                            const hkc_compile_job *job, void **code, size_t *code_size,
                            hkc_strbuf *log)
{
    (void)be;
    toolchain tc;
    int r = find_toolchain(&tc, log);
    if (r != 0)
        return r;
    char dir[4096];
    int e = hkc_tempdir_create("offline", dir, sizeof dir);
    if (e != 0) {
        hkc_strbuf_printf(log, "cannot make a private temporary folder: %s", strerror(-e));
        return HK_EIO;
    }
    argv_builder a = {.n = 0};
    hkc_strbuf src, out;
    hkc_strbuf_init(&src);
    hkc_strbuf_init(&out);
    hkc_strbuf_printf(&out, "%s/out.co", dir);
    r = source_file(job, dir, &src, log);
    if (r != 0)
        goto done;
    base_args(&tc, &a);
    for (int i = 0; i < ntargets; i++)
        argf(&a, "--offload-arch=%s", targets[i]);
    if (ntargets == 1)
        arg(&a, "--no-gpu-bundle-output");
    arg(&a, opt_level(job));
    arg(&a, "-std=c++17");
    if (knows_arg_names(&tc, targets[0]))
        arg(&a, "-fhip-kernel-arg-name");
    if (hkc_tempdir_write_all(dir, hkc_hip_cuda_headers) != 0 ||
        (needs_compat_headers(&tc) && hkc_tempdir_write_all(dir, hkc_hip_headers) != 0)) {
        hkc_strbuf_printf(log, "cannot write hipkit's headers under %s", dir);
        r = HK_EIO;
        goto done;
    }
    argf(&a, "-I%s", dir);
    arg(&a, "-include");
    arg(&a, HKC_HIP_PRELUDE);
    for (int i = 0; i < job->nflags; i++)
        if (!(job->flags[i][0] == '-' && job->flags[i][1] == 'O'))
            arg(&a, job->flags[i]);
    arg(&a, "-c");
    arg(&a, src.data);
    arg(&a, "-o");
    arg(&a, out.data);
    int st = hkc_run_capture(a.av, tc.clang ? NULL : HIPCC_ENV, log);
    if (st != 0) {
        hkc_strbuf_printf(log, "%s%s failed (%s %d)%s", log->len ? "\n" : "", tc.path,
                          st < 0 ? "error" : "exit", st < 0 ? -st : st,
                          st == 127 || st < 0 ? ": is ROCm installed? set ROCM_PATH or HIPKIT_HIPCC"
                                              : "");
        r = HK_ECOMPILE;
        goto done;
    }
    char *data = NULL;
    size_t size = 0;
    if (hkc_read_file(out.data, &data, &size) != 0) {
        hkc_strbuf_printf(log, "%s said it wrote %s, which cannot be read", tc.path, out.data);
        r = HK_ECOMPILE;
        goto done;
    }
    *code = data;
    *code_size = size;
done:
    argv_free(&a);
    hkc_strbuf_free(&src);
    hkc_strbuf_free(&out);
    hkc_tempdir_remove(dir);
    return r;
}

/* ------------------------------------------------------------ discovery */

/* A line of the preprocessed text is the user's unless it comes from the
 * headers hipkit serves (dir) or a system header (ROCm's). */
static int user_file(const char *file, int system, void *arg)
{
    const char *ours = arg;
    return !system && file[0] != '<' && strncmp(file, ours, strlen(ours)) != 0;
}

/* ROCm's headers spell the HIP qualifiers as attributes; discovery reads
 * the words (source_scan.c), so they are put back. */
static void restore_qualifiers(const char *in, hkc_strbuf *out)
{
    static const struct {
        const char *attr, *word;
    } q[] = {
        {"__attribute__((global))", "__global__"},     {"__attribute__((device))", "__device__"},
        {"__attribute__((constant))", "__constant__"}, {"__attribute__((shared))", "__shared__"},
        {"__attribute__((managed))", "__managed__"},
    };
    for (const char *p = in; *p;) {
        size_t i = 0, n = sizeof q / sizeof *q;
        while (i < n && strncmp(p, q[i].attr, strlen(q[i].attr)))
            i++;
        if (i < n) {
            hkc_strbuf_puts(out, q[i].word);
            p += strlen(q[i].attr);
        } else {
            const char *next = strchr(p + 1, '_');
            size_t len = next ? (size_t)(next - p) : strlen(p);
            hkc_strbuf_append(out, p, len);
            p += len;
        }
    }
}

/* Kernel discovery as hiprtc sees the source: the AMD compiler's own
 * preprocessor (-E, device side, the target's macros) with hipkit's ROCm 5
 * compatibility headers first and the preprocessor's part of the user's
 * flags. HK_EUNSUPPORTED when no AMD compiler is here: the core then scans
 * the source as written. */
int hkc_hip_preprocess(hkc_backend *be, int dev, const hkc_compile_job *job, hkc_strbuf *pp,
                       hkc_strbuf *log)
{
    hip_impl *h = be->impl;
    toolchain tc;
    hkc_strbuf why;
    hkc_strbuf_init(&why);
    int r = find_toolchain(&tc, &why);
    hkc_strbuf_free(&why);
    if (r != 0)
        return HK_EUNSUPPORTED;
    const char *target = h && dev >= 0 && dev < h->ndev ? h->devs[dev].target : "gfx90a";
    char dir[4096];
    if (hkc_tempdir_create("pp", dir, sizeof dir) != 0 ||
        hkc_tempdir_write_all(dir, hkc_hip_headers) != 0 ||
        hkc_tempdir_write_all(dir, hkc_hip_cuda_headers) != 0) {
        hkc_strbuf_puts(log, "cannot write hipkit's headers to a private temporary folder");
        hkc_tempdir_remove(dir);
        return HK_EIO;
    }
    hkc_strbuf text, src, out;
    hkc_strbuf_init(&text);
    hkc_strbuf_init(&src);
    hkc_strbuf_init(&out);
    hkc_pp_line_directive(&text, 1, job->path ? job->path : job->name);
    hkc_strbuf_puts(&text, job->source);
    hkc_strbuf_puts(&text, "\n");
    hkc_strbuf_printf(&src, "%s/source.hip", dir);
    hkc_strbuf_printf(&out, "%s/source.ii", dir);
    r = hkc_tempdir_write(dir, "source.hip", text.data, text.len) ? HK_EIO : 0;
    argv_builder a = {.n = 0};
    base_args(&tc, &a);
    argf(&a, "--offload-arch=%s", target);
    arg(&a, "-std=c++17");
    arg(&a, "-nogpulib");
    argf(&a, "-I%s", dir);
    arg(&a, "-include");
    arg(&a, HKC_HIP_PRELUDE);
    if (job->path) { /* its own folder, for its quoted includes */
        const char *slash = strrchr(job->path, '/');
        hkc_strbuf d;
        hkc_strbuf_init(&d);
        if (slash)
            hkc_strbuf_append(&d, job->path, slash > job->path ? (size_t)(slash - job->path) : 1);
        else
            hkc_strbuf_puts(&d, ".");
        argf(&a, "-I%s", d.data);
        hkc_strbuf_free(&d);
    }
    for (int i = 0; i < job->nflags; i++)
        if (hkc_pp_is_pp_flag(job->flags[i]))
            arg(&a, job->flags[i]);
    if (!tc.clang) {
        arg(&a, "-x");
        arg(&a, "hip");
    }
    arg(&a, "-E");
    arg(&a, src.data);
    arg(&a, "-o");
    arg(&a, out.data);
    char *data = NULL;
    if (r == 0) {
        int st = hkc_run_capture(a.av, tc.clang ? NULL : HIPCC_ENV, log);
        if (st != 0 || hkc_read_file(out.data, &data, NULL) != 0) {
            hkc_strbuf_printf(log, "%spreprocessing %s for kernel discovery failed (%s, exit %d)",
                              log->len ? "\n" : "", job->name, tc.path, st);
            r = HK_ECOMPILE;
        }
    }
    if (r == 0) {
        hkc_strbuf_clear(log);
        hkc_strbuf words;
        hkc_strbuf_init(&words);
        restore_qualifiers(data, &words);
        hkc_pp_filter(words.data, user_file, dir, pp);
        hkc_strbuf_free(&words);
    }
    free(data);
    argv_free(&a);
    hkc_strbuf_free(&text);
    hkc_strbuf_free(&src);
    hkc_strbuf_free(&out);
    hkc_tempdir_remove(dir);
    return r;
}
