/* Code objects without a device: inspection, extraction and disassembly of
 * a file's bytes, routed to the backend that reads that format (AMD code
 * objects need only comgr, so this works on a machine with no GPU). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "name_expr.h"

/* The first loaded backend with `slot` that recognises the bytes; *r gets
 * its answer. Backends answer HK_EFORMAT for bytes that are not theirs. */
typedef int (*try_fn)(hkc_backend *be, void *arg, hkc_strbuf *err);

static int route(hk_context *ctx, const char *what, int (*has)(const hkc_backend_ops *), try_fn fn,
                 void *arg)
{
    hkc_strbuf err, why;
    hkc_strbuf_init(&err);
    hkc_strbuf_init(&why);
    int r = HK_EFORMAT;
    for (int i = 0; i < ctx->nbackends; i++) {
        hkc_backend *be = &ctx->backends[i];
        if (!be->impl || !has(be->ops)) {
            /* a module that did not load might have read them: say why */
            if (has(be->ops) || !be->ops->probe)
                hkc_strbuf_printf(&why, "; the %s backend is not loaded: %s", be->ops->name,
                                  be->reason.data);
            continue;
        }
        hkc_strbuf_clear(&err);
        r = fn(be, arg, &err);
        if (r != HK_EFORMAT)
            break;
        hkc_strbuf_printf(&why, "; %s backend: %s", be->ops->name, err.data);
    }
    if (r == HK_EFORMAT)
        r = hkc_fail(ctx, r, "%s: no backend reads these bytes%s", what, why.data);
    else if (r != 0)
        r = hkc_fail(ctx, r, "%s", err.data);
    hkc_strbuf_free(&err);
    hkc_strbuf_free(&why);
    return r;
}

typedef struct code_args {
    const void *data;
    size_t size;
    const char *name; /* entry or kernel */
    hk_code_info *info;
    hkc_backend *reader; /* the backend whose format it is */
    void *out;
    size_t out_size;
    hkc_strbuf text;
} code_args;

static int has_inspect(const hkc_backend_ops *o) { return o->code_inspect != NULL; }
static int has_extract(const hkc_backend_ops *o) { return o->code_extract != NULL; }
static int has_disasm(const hkc_backend_ops *o) { return o->disasm != NULL && o->code_inspect != NULL; }

static int do_inspect(hkc_backend *be, void *arg, hkc_strbuf *err)
{
    code_args *a = arg;
    a->reader = be;
    return be->ops->code_inspect(be, a->data, a->size, &a->info, err);
}

static int do_extract(hkc_backend *be, void *arg, hkc_strbuf *err)
{
    code_args *a = arg;
    return be->ops->code_extract(be, a->data, a->size, a->name, &a->out, &a->out_size, err);
}

/* A kernel a code object names only by its mangled symbol (AMD's metadata:
 * "_Z16block_prefix_sumPfii", descriptor "<that>.kd") gets the function's
 * name as written in the source, as a cubin's do; its symbol keeps the
 * mangled one. */
static void plain_names(hk_code_info *info)
{
    for (int i = 0; i < info->nentries; i++)
        for (int k = 0; k < info->entries[i].nkernels; k++) {
            hk_code_kernel *ck = &info->entries[i].kernels[k];
            char plain[sizeof ck->name];
            hkc_plain_name(ck->name, plain, sizeof plain);
            if (!strcmp(plain, ck->name))
                continue;
            if (!ck->symbol[0] || !strncmp(ck->symbol, ck->name, strlen(ck->name)))
                snprintf(ck->symbol, sizeof ck->symbol, "%s", ck->name);
            memcpy(ck->name, plain, sizeof plain);
        }
}

/* Only a backend that recognises the format (its inspect succeeds) is asked
 * to disassemble: the host backend's objdump would take any ELF. */
static int do_disasm(hkc_backend *be, void *arg, hkc_strbuf *err)
{
    code_args *a = arg;
    hk_code_info *info = NULL;
    int r = be->ops->code_inspect(be, a->data, a->size, &info, err);
    if (r != 0) {
        hk_code_info_free(info);
        return r;
    }
    /* a kernel named as written in the source: the backend looks for its symbol */
    plain_names(info);
    char symbol[sizeof info->entries[0].kernels[0].symbol] = "";
    for (int i = 0; a->name && !symbol[0] && i < info->nentries; i++)
        for (int k = 0; !symbol[0] && k < info->entries[i].nkernels; k++) {
            const hk_code_kernel *ck = &info->entries[i].kernels[k];
            if (!strcmp(ck->name, a->name) && ck->symbol[0])
                snprintf(symbol, sizeof symbol, "%s", ck->symbol);
        }
    hk_code_info_free(info);
    r = be->ops->disasm(be, a->data, a->size, symbol[0] ? symbol : a->name, &a->text);
    if (r != 0) {
        hkc_strbuf_puts(err, a->text.data);
        return r == HK_EFORMAT ? HK_EBACKEND : r;
    }
    return 0;
}

static int check_args(hk_context *ctx, const void *data, const void *out, const char *fn)
{
    if (!ctx || !data || !out)
        return hkc_fail(ctx, HK_EINVAL, "%s: context, data or out is NULL", fn);
    return 0;
}

/* Whether kernel names ck: its name, its symbol, or the symbol without a
 * descriptor's ".kd". */
static int names_kernel(const hk_code_kernel *ck, const char *kernel)
{
    size_t n = strlen(ck->symbol);
    return !strcmp(ck->name, kernel) || !strcmp(ck->symbol, kernel) ||
           (n > 3 && !strcmp(ck->symbol + n - 3, ".kd") && strlen(kernel) == n - 3 &&
            !strncmp(ck->symbol, kernel, n - 3));
}

/* hk_code_inspect, also saying which backend read the bytes. */
static int inspect(hk_context *ctx, const void *data, size_t size, hk_code_info **out,
                   hkc_backend **reader)
{
    int r = check_args(ctx, data, out, "hk_code_inspect");
    if (r)
        return r;
    *out = NULL;
    code_args a = {.data = data, .size = size};
    r = route(ctx, "inspect", has_inspect, do_inspect, &a);
    if (r == 0) {
        plain_names(a.info);
        *out = a.info;
        if (reader)
            *reader = a.reader;
    } else {
        hk_code_info_free(a.info);
    }
    return r;
}

HK_API int hk_code_inspect(hk_context *ctx, const void *data, size_t size, hk_code_info **out)
{
    return inspect(ctx, data, size, out, NULL);
}

HK_API void hk_code_info_free(hk_code_info *info)
{
    if (!info)
        return;
    for (int i = 0; i < info->nentries; i++) {
        hk_code_entry *e = &info->entries[i];
        for (int k = 0; k < e->nkernels; k++)
            free(e->kernels[k].args);
        free(e->kernels);
    }
    free(info->entries);
    free(info);
}

HK_API int hk_code_extract(hk_context *ctx, const void *data, size_t size, const char *entry,
                           void **out, size_t *out_size)
{
    int r = check_args(ctx, data, out, "hk_code_extract");
    if (r)
        return r;
    if (!entry || !out_size)
        return hkc_fail(ctx, HK_EINVAL, "hk_code_extract: entry or out_size is NULL");
    *out = NULL;
    *out_size = 0;
    code_args a = {.data = data, .size = size, .name = entry};
    r = route(ctx, "extract", has_extract, do_extract, &a);
    if (r == 0) {
        *out = a.out;
        *out_size = a.out_size;
    }
    return r;
}

HK_API int hk_code_disasm(hk_context *ctx, const void *data, size_t size, const char *kernel,
                          char **out)
{
    int r = check_args(ctx, data, out, "hk_code_disasm");
    if (r)
        return r;
    *out = NULL;
    code_args a = {.data = data, .size = size, .name = kernel};
    hkc_strbuf_init(&a.text);
    r = route(ctx, "disassemble", has_disasm, do_disasm, &a);
    if (r == 0)
        *out = hkc_strbuf_take(&a.text);
    hkc_strbuf_free(&a.text);
    return r;
}

HK_API int hk_code_check_signature(hk_context *ctx, const void *data, size_t size,
                                   const char *kernel, const char *signature)
{
    if (!ctx || !data || !kernel || !signature)
        return hkc_fail(ctx, HK_EINVAL,
                        "hk_code_check_signature: context, data, kernel or signature is NULL");
    hkc_signature sig;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = hkc_signature_parse(signature, &sig, &err);
    if (r != 0) {
        r = hkc_fail(ctx, HK_EINVAL, "kernel %s: %s", kernel, err.data);
        hkc_strbuf_free(&err);
        return r;
    }
    hkc_strbuf_free(&err);
    hk_code_info *info = NULL;
    hkc_backend *reader = NULL;
    r = inspect(ctx, data, size, &info, &reader);
    if (r == 0) /* 32-byte vectors where the reader's compilers put them */
        hkc_signature_align_wide_vectors(&sig, reader->ops->wide_vector_align);
    int checked = 0;
    for (int i = 0; r == 0 && i < info->nentries; i++)
        for (int k = 0; r == 0 && k < info->entries[i].nkernels; k++) {
            const hk_code_kernel *ck = &info->entries[i].kernels[k];
            if (!names_kernel(ck, kernel))
                continue;
            hkc_kernel_meta meta;
            hkc_kernel_meta_from_code(ck, &meta);
            if (ck->nargs < 0) /* nothing to hold the signature against: not a pass */
                r = hkc_fail(ctx, HK_EFORMAT, "kernel %s: the code object (%s) does not state its parameters; "
                                              "nothing to check the signature against",
                             kernel, info->entries[i].target);
            else
                r = hkc_signature_check(ctx, kernel, &sig, &meta);
            if (r != 0 && info->nentries > 1) {
                char *msg = strdup(hk_errmsg(ctx)); /* hkc_fail rewrites the message it reads */
                hkc_fail(ctx, r, "%s (bundle entry %s)", msg ? msg : "", info->entries[i].target);
                free(msg);
            }
            checked++;
        }
    if (r == 0 && !checked) {
        hkc_strbuf names;
        hkc_strbuf_init(&names);
        for (int i = 0; i < info->nentries; i++)
            for (int k = 0; k < info->entries[i].nkernels; k++)
                hkc_strbuf_printf(&names, "%s%s", names.len ? ", " : "", info->entries[i].kernels[k].name);
        r = hkc_fail(ctx, HK_ENOTFOUND, "the code object has no kernel '%s' (it has: %s)", kernel,
                     names.len ? names.data : "none");
        hkc_strbuf_free(&names);
    }
    hk_code_info_free(info);
    hkc_signature_free(&sig);
    return r;
}
