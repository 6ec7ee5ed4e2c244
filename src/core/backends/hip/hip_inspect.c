/* The AMD backend's code-object slots: inspection and extraction of raw
 * AMDGPU ELF files and clang offload bundles (disassembly: hip_disasm.c). They need
 * comgr and no device: `hipkit inspect` works on any machine with ROCm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_backend.h"
#include "hip_codeobj.h"
#include "hip_comgr.h"

void hkc_hip_entry_clear(hk_code_entry *e)
{
    for (int k = 0; k < e->nkernels; k++)
        free(e->kernels[k].args);
    free(e->kernels);
    e->kernels = NULL;
    e->nkernels = 0;
}

/* The module keeps its own free: it does not link libhipkit's. */
static void info_free(hk_code_info *info)
{
    for (int i = 0; i < info->nentries; i++)
        hkc_hip_entry_clear(&info->entries[i]);
    free(info->entries);
    free(info);
}

int hkc_hip_entries_of(const void *code, size_t size, hip_bundle_entry **entries, int *count,
                      hkc_strbuf *err)
{
    hip_code_kind kind = hkc_hip_code_kind(code, size);
    if (kind != HIP_CODE_ELF && kind != HIP_CODE_BUNDLE && kind != HIP_CODE_COMPRESSED_BUNDLE) {
        hkc_strbuf_printf(err, "this is %s, not an AMD code object", hkc_hip_code_describe(code, size));
        return HK_EFORMAT;
    }
    if (hkc_hip_code_entries(code, size, entries, count, err) != 0)
        return kind == HIP_CODE_COMPRESSED_BUNDLE ? HK_EUNSUPPORTED : HK_EFORMAT;
    return 0;
}

int hkc_hip_code_inspect(hkc_backend *be, const void *code, size_t size, hk_code_info **out,
                         hkc_strbuf *err)
{
    (void)be;
    *out = NULL;
    hip_bundle_entry *ents = NULL;
    int n = 0, r = hkc_hip_entries_of(code, size, &ents, &n, err);
    if (r != 0)
        return r;
    hk_code_info *info = calloc(1, sizeof *info);
    if (!info || !(info->entries = calloc((size_t)n + 1, sizeof *info->entries))) {
        free(info);
        free(ents);
        hkc_strbuf_puts(err, "out of memory");
        return HK_ENOMEM;
    }
    snprintf(info->format, sizeof info->format, "%s",
             hkc_hip_code_kind(code, size) == HIP_CODE_ELF ? "amdgpu-elf" : "offload-bundle");
    for (int i = 0; i < n && r == 0; i++) {
        hk_code_entry *e = &info->entries[info->nentries++];
        snprintf(e->id, sizeof e->id, "%s", ents[i].id);
        snprintf(e->target, sizeof e->target, "%s", ents[i].target);
        e->offset = ents[i].offset;
        e->size = ents[i].size;
        r = hkc_hip_comgr_kernels((const char *)code + e->offset, e->size, e, err);
        if (r != 0 && ents[i].id[0]) {
            hkc_strbuf s;
            hkc_strbuf_init(&s);
            hkc_strbuf_printf(&s, "bundle entry %s: %s", ents[i].id, err->data);
            hkc_strbuf_clear(err);
            hkc_strbuf_puts(err, s.data);
            hkc_strbuf_free(&s);
        }
    }
    free(ents);
    if (r != 0) {
        info_free(info);
        return r == HK_EFORMAT ? HK_EBACKEND : r; /* ours, but unreadable: not "someone else's" */
    }
    *out = info;
    return 0;
}

/* Entry `which`, named by bundle id or target id (any spelling of it). */
static const hip_bundle_entry *find_entry(const hip_bundle_entry *ents, int n, const char *which)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(ents[i].id, which) || !strcmp(ents[i].target, which))
            return &ents[i];
    hip_target t;
    hkc_strbuf ignore;
    hkc_strbuf_init(&ignore);
    char norm[96] = "";
    if (hkc_hip_target_parse(which, &t, &ignore) == 0)
        hkc_hip_target_format(&t, norm, sizeof norm);
    const hip_bundle_entry *hit = NULL;
    for (int i = 0; norm[0] && !hit && i < n; i++) {
        char ent[96] = "";
        hkc_strbuf_clear(&ignore);
        if (hkc_hip_target_parse(ents[i].target, &t, &ignore) == 0)
            hkc_hip_target_format(&t, ent, sizeof ent);
        if (!strcmp(ent, norm))
            hit = &ents[i];
    }
    hkc_strbuf_free(&ignore);
    return hit;
}

int hkc_hip_code_extract(hkc_backend *be, const void *code, size_t size, const char *entry,
                         void **out, size_t *out_size, hkc_strbuf *err)
{
    (void)be;
    hip_bundle_entry *ents = NULL;
    int n = 0, r = hkc_hip_entries_of(code, size, &ents, &n, err);
    if (r != 0)
        return r;
    const hip_bundle_entry *e = find_entry(ents, n, entry);
    if (!e) {
        hkc_strbuf_printf(err, "no entry '%s'; the file holds:", entry);
        for (int i = 0; i < n; i++)
            hkc_strbuf_printf(err, " %s (%s)", ents[i].target, ents[i].id[0] ? ents[i].id : "raw ELF");
        free(ents);
        return HK_ENOTFOUND;
    }
    *out = malloc(e->size ? e->size : 1);
    if (!*out) {
        free(ents);
        return HK_ENOMEM;
    }
    memcpy(*out, (const char *)code + e->offset, e->size);
    *out_size = e->size;
    free(ents);
    return 0;
}
