/* `hipkit inspect FILE [--kernel NAME] [--disasm] | --extract ENTRY -o OUT`:
 * a code object's entries, kernels, arguments and resources, as the backend
 * that reads its format describes them (hk_code_inspect), with no GPU; a
 * GGUF model file's metadata and tensors (inspect_gguf.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect.h"
#include "file_read.h"

#define USAGE "usage: hipkit inspect FILE [--kernel NAME] [--disasm]\n" \
              "       hipkit inspect FILE --extract ENTRY -o OUT\n"

const char *hkl_format_name(const char *format)
{
    if (!strcmp(format, "amdgpu-elf"))
        return "AMDGPU code object";
    if (!strcmp(format, "offload-bundle"))
        return "clang offload bundle";
    return format;
}

static const char *or_dash(const char *s)
{
    return s[0] ? s : "-";
}

static void print_kernel(const hk_code_kernel *k, const char *format)
{
    printf("  kernel %s (symbol %s)\n", k->name, or_dash(k->symbol));
    if (!strcmp(format, "cubin")) { /* .nv.info gives the parameters' places, not their names or types */
        if (k->nargs < 0) {
            printf("    parameters: not stated in this cubin (no .nv.info section for the kernel)\n");
        } else if (k->nargs == 0) {
            printf("    no parameters\n");
        } else {
            printf("    %3s %6s %4s  (a cubin records neither names nor types)\n", "#", "offset", "size");
            for (int i = 0; i < k->nargs; i++)
                printf("    %3d %6u %4u\n", i, k->args[i].offset, k->args[i].size);
            printf("    parameter space: %u bytes\n", k->kernarg_size);
        }
        printf("    registers and limits: not read from a cubin here (a kernel loaded on an NVIDIA device "
               "reports them in k:info())\n"
               "    warp %u\n", k->wavefront_size);
        return;
    }
    int explicit_args = 0, hidden = 0, typed = 0;
    uint32_t hidden_bytes = 0, hidden_from = UINT32_MAX;
    size_t namew = 4;
    for (int i = 0; i < k->nargs; i++) {
        const hk_code_arg *a = &k->args[i];
        if (a->hidden) {
            hidden++;
            hidden_bytes += a->size;
            if (a->offset < hidden_from)
                hidden_from = a->offset;
        } else {
            explicit_args++;
            typed |= a->type_name[0] != 0;
            if (strlen(a->name) > namew)
                namew = strlen(a->name);
        }
    }
    /* the type last, as it may hold spaces ("const float*"); no column at
     * all when the compiler recorded none (clang's HIP metadata) */
    if (explicit_args) {
        printf("    %3s %6s %4s  %-14s %-9s %s%*s%s\n", "#", "offset", "size", "kind", "space", "name",
               typed ? (int)namew - 2 : 0, "", typed ? "type" : "");
        for (int i = 0, idx = 0; i < k->nargs; i++) {
            const hk_code_arg *a = &k->args[i];
            if (a->hidden)
                continue;
            printf("    %3d %6u %4u  %-14s %-9s %-*s%s%s\n", idx++, a->offset, a->size,
                   or_dash(a->value_kind), or_dash(a->address_space), typed ? (int)namew : 0,
                   or_dash(a->name), typed ? "  " : "", typed ? or_dash(a->type_name) : "");
        }
    } else {
        printf("    no explicit arguments\n");
    }
    if (hidden)
        printf("    hidden arguments: %d, %u bytes from offset %u (filled by the runtime)\n", hidden,
               hidden_bytes, hidden_from);
    printf("    kernarg segment: %u bytes, align %u\n", k->kernarg_size, k->kernarg_align);
    printf("    registers: %d SGPRs, %d VGPRs", k->sgprs, k->vgprs);
    if (k->agprs >= 0)
        printf(", %d AGPRs", k->agprs);
    if (k->sgpr_spills >= 0 || k->vgpr_spills >= 0)
        printf("; spills: %d SGPRs, %d VGPRs", k->sgpr_spills, k->vgpr_spills);
    printf("\n    LDS %u bytes, scratch %u bytes per work-item\n", k->lds_bytes, k->scratch_bytes);
    printf("    max flat workgroup size %u, wavefront %u\n", k->max_flat_workgroup_size,
           k->wavefront_size);
}

static int has_kernel(const hk_code_entry *e, const char *name)
{
    for (int k = 0; k < e->nkernels; k++)
        if (!strcmp(e->kernels[k].name, name) || !strcmp(e->kernels[k].symbol, name))
            return 1;
    return 0;
}

/* "vector_add, scale" over every entry, each name once. */
static void list_kernels(FILE *f, const hk_code_info *info)
{
    int first = 1;
    for (int i = 0; i < info->nentries; i++)
        for (int k = 0; k < info->entries[i].nkernels; k++) {
            const char *name = info->entries[i].kernels[k].name;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = has_kernel(&info->entries[j], name);
            for (int j = 0; j < k && !seen; j++)
                seen = !strcmp(info->entries[i].kernels[j].name, name);
            if (!seen) {
                fprintf(f, "%s%s", first ? "" : ", ", name);
                first = 0;
            }
        }
    if (first)
        fputs("none", f);
}

static void print_info(const char *path, size_t size, const hk_code_info *info, const char *only)
{
    printf("%s: %s (%s), %d entr%s, %zu bytes\n", path, hkl_format_name(info->format), info->format,
           info->nentries, info->nentries == 1 ? "y" : "ies", size);
    for (int i = 0; i < info->nentries; i++) {
        const hk_code_entry *e = &info->entries[i];
        if (only && !has_kernel(e, only))
            continue;
        printf("entry %d: target %s", i + 1, or_dash(e->target));
        if (e->id[0])
            printf(", id %s", e->id);
        printf(", offset %zu, %zu bytes, %d kernel%s\n", e->offset, e->size, e->nkernels,
               e->nkernels == 1 ? "" : "s");
        for (int k = 0; k < e->nkernels; k++)
            if (!only || !strcmp(e->kernels[k].name, only) || !strcmp(e->kernels[k].symbol, only))
                print_kernel(&e->kernels[k], info->format);
    }
    if (!info->nentries && (!strcmp(info->format, "fatbin") || !strcmp(info->format, "ptx")))
        printf("(a %s's code is picked by the driver when it loads; hipkit does not open it here: "
               "compile for one --cuda-arch to get a cubin to inspect)\n", info->format);
}

static int fail(hk_context *ctx, const char *what)
{
    const char *msg = ctx ? hk_errmsg(ctx) : "";
    fprintf(stderr, "hipkit inspect: %s%s%s\n", what ? what : "", what && msg[0] ? ": " : "", msg);
    return 1;
}

static int extract(hk_context *ctx, const char *path, const void *data, size_t size,
                   const char *entry, const char *out)
{
    void *bytes = NULL;
    size_t n = 0;
    if (hk_code_extract(ctx, data, size, entry, &bytes, &n) != 0)
        return fail(ctx, NULL);
    FILE *f = fopen(out, "wb");
    int ok = f && fwrite(bytes, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    free(bytes);
    if (!ok) {
        fprintf(stderr, "hipkit inspect: cannot write '%s': %s\n", out, strerror(errno));
        return 1;
    }
    printf("wrote %s: entry %s of %s, %zu bytes\n", out, entry, path, n);
    return 0;
}

int hkl_cmd_inspect(int argc, char **argv)
{
    const char *file = NULL, *kernel = NULL, *entry = NULL, *out = NULL;
    int disasm = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--kernel") ? &kernel : !strcmp(a, "--extract") ? &entry
                          : !strcmp(a, "-o") ? &out : NULL;
        if (slot) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hipkit inspect: '%s' needs a value\n%s", a, USAGE);
                return 2;
            }
            *slot = argv[++i];
        } else if (!strcmp(a, "--disasm"))
            disasm = 1;
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hipkit inspect: unknown option '%s'\n%s", a, USAGE);
            return 2;
        } else if (!file)
            file = a;
        else {
            fprintf(stderr, "hipkit inspect: one file at a time ('%s' and '%s')\n", file, a);
            return 2;
        }
    }
    if (!file || (entry && !out) || (out && !entry) || (entry && (kernel || disasm))) {
        if (file && entry && (kernel || disasm))
            fprintf(stderr, "hipkit inspect: --extract takes no --kernel or --disasm\n");
        else if (file && (entry || out))
            fprintf(stderr, "hipkit inspect: --extract ENTRY and -o OUT go together\n");
        fputs(USAGE, stderr);
        return 2;
    }

    if (!entry && !kernel && !disasm && hkl_is_gguf(file))
        return hkl_inspect_gguf(file);
    if (out && hkl_same_file(file, out)) {
        fprintf(stderr, "hipkit inspect: -o '%s' is the file being inspected ('%s'); writing it "
                        "would destroy it: choose another output\n", out, file);
        return 2;
    }
    char *data = NULL;
    size_t size = 0;
    int r = hkl_file_read(file, &data, &size);
    if (r != 0) {
        fprintf(stderr, "hipkit inspect: cannot read '%s': %s\n", file, hkl_file_strerror(r));
        return 1;
    }
    char why[1024] = "";
    hk_context *ctx = hkl_inspect_context(why, sizeof why);
    if (!ctx) {
        fprintf(stderr, "hipkit inspect: no hipkit context: %s\n", why);
        free(data);
        return 1;
    }
    int status = 0;
    hk_code_info *info = NULL;
    char *text = NULL;
    if (entry) {
        status = extract(ctx, file, data, size, entry, out);
    } else if (hk_code_inspect(ctx, data, size, &info) != 0) {
        status = fail(ctx, file);
    } else {
        int found = 0;
        for (int i = 0; kernel && i < info->nentries; i++)
            found |= has_kernel(&info->entries[i], kernel);
        if (kernel && !found) {
            fprintf(stderr, "hipkit inspect: no kernel '%s' in %s; its kernels: ", kernel, file);
            list_kernels(stderr, info);
            fputc('\n', stderr);
            status = 1;
        } else {
            print_info(file, size, info, kernel);
            if (disasm) {
                fflush(stdout);
                if (hk_code_disasm(ctx, data, size, kernel, &text) != 0)
                    status = fail(ctx, "disassembly");
                else
                    printf("\ndisassembly%s%s:\n%s", kernel ? " of " : "", kernel ? kernel : "", text);
            }
        }
    }
    free(text);
    hk_code_info_free(info);
    hk_context_destroy(ctx);
    free(data);
    return status;
}
