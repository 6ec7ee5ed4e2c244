/* `hipkit compile --offload-arch`: ahead-of-time code objects for AMD GPUs,
 * built by ROCm's hipcc (or its clang) on any machine, GPU or not. One target
 * writes a raw AMDGPU ELF (.co), several a clang offload bundle (.hipfb, the
 * name clang gives HIP fat binaries); hk.load takes either. Prints what it
 * wrote and, through hk_code_inspect, the kernels inside. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aot.h"
#include "hip_codeobj.h"
#include "inspect.h"

#ifdef HKL_HAVE_HIP_HEADERS
extern const hkc_embedded_file hkc_hip_headers[];
#endif

typedef struct toolchain {
    char path[4096];
    int clang;         /* a bare clang, which needs -x hip and the ROCm folder */
    char rocm[4096];   /* clang only: --rocm-path */
    char devlib[4096]; /* clang only: --rocm-device-lib-path, "" when under rocm */
} toolchain;

static int executable(const char *dir, const char *name, char *out, size_t cap)
{
    if (!dir || !dir[0])
        return 0;
    if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap)
        return 0;
    return access(out, X_OK) == 0;
}

/* name in $ROCM_PATH/bin, $ROCM_PATH/llvm/bin, PATH, /opt/rocm/bin,
 * /opt/rocm/llvm/bin: an explicit ROCM_PATH wins over whatever PATH has. */
static int find_tool(const char *name, char *out, size_t cap)
{
    const char *rocm = getenv("ROCM_PATH");
    char dir[4200];
    if (rocm && rocm[0]) {
        snprintf(dir, sizeof dir, "%s/bin", rocm);
        if (executable(dir, name, out, cap))
            return 1;
        snprintf(dir, sizeof dir, "%s/llvm/bin", rocm);
        if (executable(dir, name, out, cap))
            return 1;
    }
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)n, n ? p : ".");
        if (executable(dir, name, out, cap))
            return 1;
        p += n + (p[n] == ':');
    }
    return executable("/opt/rocm/bin", name, out, cap) || executable("/opt/rocm/llvm/bin", name, out, cap);
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
static int find_toolchain(toolchain *tc)
{
    memset(tc, 0, sizeof *tc);
    const char *env = getenv("HIPKIT_HIPCC");
    int found = 0;
    if (env && env[0]) {
        if (strchr(env, '/'))
            found = snprintf(tc->path, sizeof tc->path, "%s", env) < (int)sizeof tc->path;
        else
            found = find_tool(env, tc->path, sizeof tc->path);
        if (!found) {
            fprintf(stderr, "hipkit compile: HIPKIT_HIPCC names '%s', which is not an executable "
                            "here\n", env);
            return -1;
        }
    } else {
        static const char *const names[] = {"hipcc", "amdclang++", "clang++"};
        for (size_t i = 0; i < sizeof names / sizeof *names && !found; i++)
            found = find_tool(names[i], tc->path, sizeof tc->path);
        if (!found) {
            fprintf(stderr, "hipkit compile: no AMD compiler found: looked for hipcc, amdclang++ and "
                            "clang++ in $ROCM_PATH/bin, $ROCM_PATH/llvm/bin, PATH, /opt/rocm/bin and "
                            "/opt/rocm/llvm/bin; install ROCm, set ROCM_PATH, or name the compiler "
                            "in HIPKIT_HIPCC\n");
            return -1;
        }
    }
    const char *base = strrchr(tc->path, '/');
    base = base ? base + 1 : tc->path;
    tc->clang = strstr(base, "clang") != NULL;
    if (tc->clang)
        clang_rocm(tc);
    return 0;
}

/* Parses the comma-separated target ids into their canonical spelling. */
static int parse_targets(const char *list, char out[][96], int *count)
{
    char copy[1024];
    if ((size_t)snprintf(copy, sizeof copy, "%s", list) >= sizeof copy) {
        fprintf(stderr, "hipkit compile: --offload-arch list too long\n");
        return 2;
    }
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        hip_target t;
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        int rc = hkc_hip_target_parse(tok, &t, &err);
        if (rc != 0)
            fprintf(stderr, "hipkit compile: bad AMD target '%s': %s\n", tok, err.data);
        hkc_strbuf_free(&err);
        if (rc != 0)
            return 2;
        if (n == HKL_AOT_MAX_TARGETS) {
            fprintf(stderr, "hipkit compile: more than %d targets\n", HKL_AOT_MAX_TARGETS);
            return 2;
        }
        hkc_hip_target_format(&t, out[n], sizeof out[n]);
        for (int i = 0; i < n; i++)
            if (!strcmp(out[i], out[n])) {
                fprintf(stderr, "hipkit compile: target %s is given twice\n", out[n]);
                return 2;
            }
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "hipkit compile: --offload-arch needs at least one target id (e.g. gfx90a)\n");
        return 2;
    }
    *count = n;
    return 0;
}

/* The kernels of each entry, through the core (which asks the AMD backend's
 * comgr reader): one line per kernel, with the targets holding it when the
 * file has several. */
static void print_kernels(const void *data, size_t size)
{
    char why[1024] = "";
    hk_context *ctx = hkl_inspect_context(why, sizeof why);
    hk_code_info *info = NULL;
    if (!ctx || hk_code_inspect(ctx, data, size, &info) != 0) {
        fprintf(stderr, "hipkit compile: the kernels cannot be listed: %s\n", ctx ? hk_errmsg(ctx) : why);
        hk_context_destroy(ctx);
        return;
    }
    for (int i = 0; i < info->nentries; i++)
        for (int k = 0; k < info->entries[i].nkernels; k++) {
            const char *name = info->entries[i].kernels[k].name;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                for (int l = 0; l < info->entries[j].nkernels && !seen; l++)
                    seen = !strcmp(info->entries[j].kernels[l].name, name);
            if (seen)
                continue;
            printf("  kernel %s", name);
            for (int j = i; info->nentries > 1 && j < info->nentries; j++)
                for (int l = 0; l < info->entries[j].nkernels; l++)
                    if (!strcmp(info->entries[j].kernels[l].name, name))
                        printf("%s%s", j == i ? " (" : ", ", info->entries[j].target);
            printf("%s\n", info->nentries > 1 ? ")" : "");
        }
    hk_code_info_free(info);
    hk_context_destroy(ctx);
}

/* "wrote k.co: AMDGPU code object for gfx90a, 5320 bytes", then the kernels. */
static int report(const char *out)
{
    char *data = NULL;
    size_t size = 0;
    if (hkc_read_file(out, &data, &size) != 0) {
        fprintf(stderr, "hipkit compile: the compiler said it wrote %s, which cannot be read\n", out);
        return 1;
    }
    hip_bundle_entry *e = NULL;
    int n = 0;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    if (hkc_hip_code_entries(data, size, &e, &n, &err) != 0) {
        printf("wrote %s: %s, %zu bytes\n", out, hkc_hip_code_describe(data, size), size);
    } else if (hkc_hip_code_kind(data, size) == HIP_CODE_ELF) {
        printf("wrote %s: AMDGPU code object for %s, %zu bytes\n", out, n ? e[0].target : "?", size);
    } else {
        printf("wrote %s: offload bundle with %d entr%s (", out, n, n == 1 ? "y" : "ies");
        for (int i = 0; i < n; i++)
            printf("%s%s", i ? ", " : "", e[i].target);
        printf("), %zu bytes\n", size);
    }
    hkc_strbuf_free(&err);
    free(e);
    print_kernels(data, size);
    free(data);
    return 0;
}

/* The compiler and what it needs to compile HIP for the device only. */
static int base_args(const toolchain *tc, char **av, char *rocm, char *devlib, size_t cap)
{
    int n = 0;
    av[n++] = (char *)tc->path;
    if (tc->clang) {
        /* --cuda-device-only: the spelling every HIP-capable clang knows */
        av[n++] = "-x";
        av[n++] = "hip";
        snprintf(rocm, cap, "--rocm-path=%s", tc->rocm);
        av[n++] = rocm;
        if (tc->devlib[0]) {
            snprintf(devlib, cap, "--rocm-device-lib-path=%s", tc->devlib);
            av[n++] = devlib;
        }
        av[n++] = "--cuda-device-only";
    } else {
        av[n++] = "--offload-device-only";
    }
    return n;
}

/* hipcc runs NVIDIA's nvcc when HIP_PLATFORM says nvidia. */
#define HIPCC_ENV "HIP_PLATFORM=amd"

/* Parameter names reach the code object's metadata (and so hipkit inspect
 * and hk.load's signature check) only with -fhip-kernel-arg-name, which
 * clang 15 (ROCm 5.3) brought: asked of the compiler on an empty file. */
static int knows_arg_names(const toolchain *tc, const char *target)
{
    char rocm[4200], devlib[4200], arch[128];
    char *av[24];
    int n = base_args(tc, av, rocm, devlib, sizeof rocm);
    snprintf(arch, sizeof arch, "--offload-arch=%.95s", target);
    av[n++] = arch;
    av[n++] = "-fhip-kernel-arg-name";
    av[n++] = "-nogpuinc";
    av[n++] = "-nogpulib";
    av[n++] = "-fsyntax-only";
    if (!tc->clang) {
        av[n++] = "-x";
        av[n++] = "hip";
    }
    av[n++] = "/dev/null";
    av[n] = NULL;
    return hkl_aot_run(av, tc->clang ? NULL : HIPCC_ENV, 1) == 0;
}

/* ROCm 5 has no <hip/hip_bf16.h> and lacks parts of HIP's device API that
 * hipkit's kernels use: where the compiler's ROCm has hip/hip_runtime.h but
 * no hip/hip_bf16.h, hipkit's compatibility headers (the ones hiprtc gets
 * from the AMD backend) go first on the include path. */
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

int hkl_aot_amd(const hkl_aot_job *job)
{
    char targets[HKL_AOT_MAX_TARGETS][96];
    int ntargets = 0;
    int rc = parse_targets(job->targets, targets, &ntargets);
    if (rc != 0)
        return rc;
    toolchain tc;
    if (find_toolchain(&tc) != 0)
        return 1;
    char outbuf[4096];
    const char *out = job->out;
    if (!out) {
        hkl_aot_default_out(job->file, ntargets == 1 ? ".co" : ".hipfb", outbuf, sizeof outbuf);
        out = outbuf;
    }

    char arch[HKL_AOT_MAX_TARGETS][128], opt[16], rocm[4200], devlib[4200];
    char *av[32 + HKL_AOT_MAX_TARGETS + HKL_AOT_MAX_EXTRA];
    int n = base_args(&tc, av, rocm, devlib, sizeof rocm);
    for (int i = 0; i < ntargets; i++) {
        snprintf(arch[i], sizeof arch[i], "--offload-arch=%.95s", targets[i]);
        av[n++] = arch[i];
    }
    if (ntargets == 1)
        av[n++] = "--no-gpu-bundle-output";
    snprintf(opt, sizeof opt, "-O%d", job->opt_level >= 0 ? job->opt_level : 3);
    av[n++] = opt;
    av[n++] = "-std=c++17";
    if (knows_arg_names(&tc, targets[0]))
        av[n++] = "-fhip-kernel-arg-name";
#ifdef HKL_HAVE_HIP_HEADERS
    char compat[4096] = "", inc[4200];
    if (needs_compat_headers(&tc)) {
        if (hkl_aot_headers_write(hkc_hip_headers, compat, sizeof compat) != 0)
            return 1;
        snprintf(inc, sizeof inc, "-I%s", compat);
        av[n++] = inc;
    }
#else
    (void)needs_compat_headers;
#endif
    for (int i = 0; i < job->nextra; i++)
        av[n++] = (char *)job->extra[i];
    av[n++] = "-c";
    av[n++] = (char *)job->file;
    av[n++] = "-o";
    av[n++] = (char *)out;
    av[n] = NULL;
    int st = hkl_aot_run(av, tc.clang ? NULL : HIPCC_ENV, 0);
#ifdef HKL_HAVE_HIP_HEADERS
    if (compat[0])
        hkl_aot_headers_remove(hkc_hip_headers, compat);
#endif
    if (st != 0) {
        fprintf(stderr, "hipkit compile: %s failed (exit %d)%s\n", tc.path, st,
                st == 127 ? ": is ROCm installed? set ROCM_PATH or HIPKIT_HIPCC" : "");
        return 1;
    }
    return report(out);
}
