/* `hipkit compile`, after the command line: the library builds the code
 * object (hk_compile_offline: the backend runs hipcc or nvcc), this file
 * writes it and says what it holds, through hk_code_inspect. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "file_read.h"
#include "hipkit/hipkit.h"
#include "inspect.h"

/* One line per kernel, with the targets holding it when there are several. */
static void print_kernels(const hk_code_info *info)
{
    for (int i = 0; i < info->nentries; i++)
        for (int k = 0; k < info->entries[i].nkernels; k++) {
            const hk_code_kernel *kn = &info->entries[i].kernels[k];
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                for (int l = 0; l < info->entries[j].nkernels && !seen; l++)
                    seen = !strcmp(info->entries[j].kernels[l].name, kn->name);
            if (seen)
                continue;
            printf("  kernel %s", kn->name);
            /* a symbol that is not the name plus a suffix (AMD's .kd) is mangled */
            if (kn->symbol[0] && strncmp(kn->symbol, kn->name, strlen(kn->name)))
                printf(" (symbol %s)", kn->symbol);
            for (int j = i; info->nentries > 1 && j < info->nentries; j++)
                for (int l = 0; l < info->entries[j].nkernels; l++)
                    if (!strcmp(info->entries[j].kernels[l].name, kn->name))
                        printf("%s%s", j == i ? " (" : ", ", info->entries[j].target);
            printf("%s\n", info->nentries > 1 ? ")" : "");
        }
}

/* "wrote k.co: AMDGPU code object for gfx90a, 5320 bytes", then the kernels. */
static void report(hk_context *ctx, const char *out, const void *data, size_t size)
{
    hk_code_info *info = NULL;
    if (hk_code_inspect(ctx, data, size, &info) != 0) {
        printf("wrote %s: %zu bytes\n", out, size);
        fprintf(stderr, "hipkit compile: the kernels cannot be listed: %s\n", hk_errmsg(ctx));
        return;
    }
    const char *f = info->format;
    int one = info->nentries == 1;
    if (one && !strcmp(f, "amdgpu-elf"))
        printf("wrote %s: AMDGPU code object for %s, %zu bytes\n", out, info->entries[0].target, size);
    else if (one && !strcmp(f, "cubin"))
        printf("wrote %s: cubin for %s, %zu bytes\n", out, info->entries[0].target, size);
    else if (info->nentries > 0) {
        printf("wrote %s: %s with %d entr%s (", out,
               !strcmp(f, "offload-bundle") ? "offload bundle" : f, info->nentries,
               one ? "y" : "ies");
        for (int i = 0; i < info->nentries; i++)
            printf("%s%s", i ? ", " : "", info->entries[i].target);
        printf("), %zu bytes\n", size);
    } else {
        printf("wrote %s: %s, %zu bytes\n", out, f, size);
        if (!strcmp(f, "fatbin") || !strcmp(f, "ptx"))
            printf("  (its kernels are not listed: the driver picks a %s's code when it loads; one "
                   "--cuda-arch writes a cubin, whose kernels are)\n", f);
    }
    print_kernels(info);
    hk_code_info_free(info);
}

static int write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "hipkit compile: cannot write %s: %s\n", path, strerror(errno));
    return ok ? 0 : 1;
}

static int count_targets(const char *list)
{
    int n = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        n += len > 0;
        p += len + (p[len] == ',');
    }
    return n;
}

int hkl_compile_build(const char *backend, const hkl_compile_job *job)
{
    int several = count_targets(job->targets) > 1;
    const char *ext = !strcmp(backend, "cuda") ? (several ? ".fatbin" : ".cubin")
                                               : (several ? ".hipfb" : ".co");
    char outbuf[4096];
    const char *out = job->out;
    if (!out) {
        hkl_compile_default_out(job->file, ext, outbuf, sizeof outbuf);
        out = outbuf;
    }
    /* Before anything is compiled or written: the output would replace
     * the source (-o s.hip, or a default name that is the source's). */
    if (hkl_same_file(job->file, out)) {
        fprintf(stderr, "hipkit compile: the output '%s' is the source '%s'; writing it would "
                        "destroy the source: choose another -o\n", out, job->file);
        return 2;
    }
    char *source = NULL;
    int e = hkl_file_read(job->file, &source, NULL);
    if (e != 0) {
        fprintf(stderr, "hipkit compile: cannot read '%s': %s\n", job->file, hkl_file_strerror(e));
        return 1;
    }
    const char *defines[HKL_COMPILE_MAX_EXTRA], *dirs[HKL_COMPILE_MAX_EXTRA], *flags[1];
    char opt[16];
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    const char *slash = strrchr(job->file, '/');
    o.name = slash ? slash + 1 : job->file;
    o.path = job->file;
    for (int i = 0; i < job->nextra; i++) {
        if (job->extra[i][1] == 'D')
            defines[o.ndefines++] = job->extra[i] + 2;
        else
            dirs[o.ninclude_dirs++] = job->extra[i] + 2;
    }
    o.defines = defines;
    o.include_dirs = dirs;
    if (job->opt_level >= 0) {
        snprintf(opt, sizeof opt, "-O%d", job->opt_level);
        flags[0] = opt;
        o.flags = flags;
        o.nflags = 1;
    }
    char why[1024] = "";
    hk_context *ctx = hkl_inspect_context(why, sizeof why);
    if (!ctx) {
        fprintf(stderr, "hipkit compile: no hipkit context: %s\n", why);
        free(source);
        return 1;
    }
    void *code = NULL;
    size_t size = 0;
    int r = hk_compile_offline(ctx, backend, job->targets, source, &o, &code, &size);
    free(source);
    int rc = 0;
    if (r != 0) {
        fprintf(stderr, "hipkit compile: %s\n", hk_errmsg(ctx));
        rc = r == HK_EINVAL ? 2 : 1;
    } else {
        rc = write_file(out, code, size);
        if (rc == 0)
            report(ctx, out, code, size);
    }
    free(code);
    hk_context_destroy(ctx);
    return rc;
}
