/* Kernels of a loaded module: lookup by name (name expressions normalised),
 * the signature from the source or the user checked against the code
 * object, kernel info, disassembly, parameters; and module variables
 * (hk_module_global). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "name_expr.h"

static const hkc_kernel_meta *find_meta(const hkc_modentry *e, const char *name)
{
    for (int i = 0; i < e->nmetas; i++)
        if (!strcmp(e->metas[i].name, name))
            return &e->metas[i];
    return NULL;
}

static const hkc_source_kernel *find_src(const hkc_modentry *e, const char *name)
{
    for (int i = 0; i < e->nsrc_kernels; i++)
        if (!strcmp(e->src_kernels[i].name, name))
            return &e->src_kernels[i];
    return NULL;
}

int hkc_signature_check(hk_context *ctx, const char *name, const hkc_signature *sig,
                        const hkc_kernel_meta *meta)
{
    if (meta->nparams < 0)
        return 0;
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    hkc_signature_format(sig, &s);
    int r = 0;
    if (meta->nparams != sig->count) {
        r = hkc_fail(ctx, HK_EARG, "kernel %s: the signature %s has %d parameters, the code object %d",
                     name, s.data, sig->count, meta->nparams);
        goto done;
    }
    for (int i = 0; i < sig->count; i++) {
        const hkc_param *p = &sig->params[i];
        if (p->size != meta->param_size[i] ||
            (meta->param_align[i] && p->align != meta->param_align[i])) {
            if (meta->param_align[i])
                r = hkc_fail(ctx, HK_EARG,
                             "kernel %s: parameter %d '%s' (%s) is %u bytes aligned to %u in the "
                             "signature, but %u bytes aligned to %u in the code object",
                             name, i + 1, p->name, p->type, p->size, p->align, meta->param_size[i],
                             meta->param_align[i]);
            else
                r = hkc_fail(ctx, HK_EARG,
                             "kernel %s: parameter %d '%s' (%s) is %u bytes in the signature, but %u "
                             "bytes in the code object",
                             name, i + 1, p->name, p->type, p->size, meta->param_size[i]);
            goto done;
        }
        if (meta->has_offsets && p->offset != meta->param_offset[i]) {
            r = hkc_fail(ctx, HK_EARG,
                         "kernel %s: parameter %d '%s' (%s) sits at kernarg offset %u in the signature, "
                         "but at offset %u in the code object",
                         name, i + 1, p->name, p->type, p->offset, meta->param_offset[i]);
            goto done;
        }
    }
done:
    hkc_strbuf_free(&s);
    return r;
}

static int kernel_find(hk_module *m, const char *name, const char *sigtext, hk_kernel **out);

/* C++ overloads share a name, and hipkit finds a kernel by its name: said
 * with every definition's line, and what to do instead. */
static int overloaded_kernel(hk_context *ctx, const hk_module *m, const hkc_source_kernel *sk)
{
    const hkc_modentry *e = m->entry;
    hkc_strbuf lines;
    hkc_strbuf_init(&lines);
    int n = 0;
    for (int i = 0; i < e->nsrc_kernels; i++)
        if (!strcmp(e->src_kernels[i].name, sk->name))
            hkc_strbuf_printf(&lines, "%s%d", n++ ? ", " : "", e->src_kernels[i].line);
    int r = hkc_fail(ctx, HK_EARG,
                     "module '%s': kernel %s is overloaded (%d definitions, at lines %s); hipkit finds a "
                     "kernel by its name alone, so none of them can be launched: give each its own "
                     "name (or add an extern \"C\" kernel of its own name that calls the one you want)",
                     m->name, sk->name, n, lines.data);
    hkc_strbuf_free(&lines);
    return r;
}

/* A name expression is looked up in the one spelling discovery records it
 * in (name_expr.h): "reduce<float,4>" finds "reduce<float, 4>". */
static int kernel_get(hk_module *m, const char *name, const char *sigtext, hk_kernel **out)
{
    if (!m || !name || !out)
        return hkc_fail(m ? m->ctx : NULL, HK_EINVAL, "kernel lookup: module, name or out is NULL");
    *out = NULL;
    if (!hkc_name_is_expression(name))
        return kernel_find(m, name, sigtext, out);
    hkc_strbuf norm, err;
    hkc_strbuf_init(&norm);
    hkc_strbuf_init(&err);
    int r = hkc_name_expr_normalize(name, &norm, &err);
    if (r == 0)
        r = kernel_find(m, norm.data, sigtext, out);
    else
        r = hkc_fail(m->ctx, r, "module '%s': %s", m->name, err.data);
    hkc_strbuf_free(&norm);
    hkc_strbuf_free(&err);
    return r;
}

static int kernel_find(hk_module *m, const char *name, const char *sigtext, hk_kernel **out)
{
    hk_context *ctx = m->ctx;
    hkc_modentry *e = m->entry;
    const hkc_source_kernel *over = find_src(e, name);
    if (over && over->overloaded)
        return overloaded_kernel(ctx, m, over);
    const hkc_kernel_meta *meta = find_meta(e, name);
    if (!meta && strlen(name) >= sizeof meta->name)
        return hkc_fail(ctx, HK_ENOTFOUND,
                        "module '%s': kernel name of %zu characters; hipkit's kernel table holds names "
                        "of at most %zu (a longer one is listed cut short)",
                        m->name, strlen(name), sizeof meta->name - 1);
    if (!meta) {
        hkc_strbuf s;
        hkc_strbuf_init(&s);
        for (int i = 0; i < e->nmetas; i++)
            hkc_strbuf_printf(&s, "%s%s", i ? ", " : "", e->metas[i].name);
        int r = hkc_fail(ctx, HK_ENOTFOUND, "module '%s' has no kernel '%s' (it has: %s)", m->name,
                         name, e->nmetas ? s.data : "none");
        hkc_strbuf_free(&s);
        return r;
    }
    /* Already looked up with the same (absent) signature: reuse it. */
    if (!sigtext)
        for (int i = 0; i < m->nkernels; i++)
            if (!m->kernels[i]->user_sig && !strcmp(m->kernels[i]->name, name)) {
                *out = m->kernels[i];
                return 0;
            }

    hk_kernel *k = calloc(1, sizeof *k);
    hk_kernel **grown = realloc(m->kernels, (size_t)(m->nkernels + 1) * sizeof *grown);
    if (!k || !grown || !(k->name = strdup(name))) {
        free(k);
        if (grown)
            m->kernels = grown;
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    }
    m->kernels = grown;
    k->m = m;
    k->user_sig = sigtext != NULL;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r;
    if (sigtext) {
        r = hkc_signature_parse(sigtext, &k->sig, &err);
        if (r != 0)
            r = hkc_fail(ctx, HK_EINVAL, "kernel %s: %s", name, err.data);
    } else {
        const hkc_source_kernel *sk = find_src(e, name);
        if (sk && sk->unresolved && sk->by_value_class)
            r = hkc_fail(ctx, HK_EARG,
                         "kernel %s (line %d): %s, a struct or class by value: hipkit's launches pass "
                         "scalars, vectors and pointers, and no signature can describe it; pass its fields "
                         "as separate parameters, or a pointer to a buffer that holds it",
                         name, sk->line, sk->unresolved);
        else if (sk && sk->unresolved)
            r = hkc_fail(ctx, HK_EARG,
                         "kernel %s (line %d): %s; a buffer cannot be checked against it, so give the "
                         "kernel's signature as C (hk_module_kernel_sig, or m:kernel(\"%s\", "
                         "\"float *v, int n\") in Lua)",
                         name, sk->line, sk->unresolved, name);
        else if (sk)
            r = hkc_signature_copy(&sk->sig, &k->sig);
        else
            r = hkc_fail(ctx, HK_EINVAL,
                         "kernel %s: the code object does not describe its parameter types; "
                         "give its signature (hk_module_kernel_sig, or m:kernel(name, sig) in Lua)",
                         name);
    }
    if (r == 0)
    {
        /* 32-byte vectors by value sit where this backend's compiler puts them */
        hkc_signature_align_wide_vectors(&k->sig, e->dev->be->ops->wide_vector_align);
        r = hkc_signature_check(ctx, name, &k->sig, meta);
    }
    if (r == 0) {
        const hkc_backend_ops *ops = e->dev->be->ops;
        memset(&k->info, 0, sizeof k->info);
        k->info.registers = -1;
        k->info.static_shared = -1;
        k->info.local_bytes = -1;
        k->info.max_threads_per_block = e->dev->info.max_threads_per_block;
        r = ops->function_get(e->dev->be, e->bmod, meta->symbol[0] ? meta->symbol : name,
                              &k->bfn, &k->info, &err);
        if (r != 0)
            r = hkc_fail(ctx, r, "kernel %s: %s", name, err.data);
    }
    hkc_strbuf_free(&err);
    if (r != 0) {
        hkc_kernel_free(k);
        return r;
    }
    k->info.name = k->name;
    k->info.param_count = k->sig.count;
    k->info.kernarg_size = k->sig.kernarg_size;
    k->info.origin = m->origin;
    k->info.compile_ms = m->compile_ms;
    k->info.uses_barriers = meta->uses_sync;
    snprintf(k->exec_mode, sizeof k->exec_mode, "%s", meta->exec_mode);
    snprintf(k->exec_why, sizeof k->exec_why, "%s", meta->exec_why);
    m->kernels[m->nkernels++] = k;
    *out = k;
    return 0;
}

HK_API int hk_module_kernel(hk_module *m, const char *name, hk_kernel **out)
{
    return kernel_get(m, name, NULL, out);
}

HK_API int hk_module_kernel_sig(hk_module *m, const char *name, const char *signature,
                                hk_kernel **out)
{
    if (!signature)
        return hkc_fail(m ? m->ctx : NULL, HK_EINVAL, "hk_module_kernel_sig: signature is NULL");
    return kernel_get(m, name, signature, out);
}

HK_API int hk_module_global(hk_module *m, const char *name, hk_dtype dtype, hk_buffer **out)
{
    if (!m || !name || !out)
        return hkc_fail(m ? m->ctx : NULL, HK_EINVAL, "hk_module_global: module, name or out is NULL");
    *out = NULL;
    hkc_modentry *e = m->entry;
    hkc_backend *be = e->dev->be;
    if (!hk_dtype_name(dtype))
        return hkc_fail(m->ctx, HK_EINVAL, "hk_module_global: invalid dtype %d", (int)dtype);
    if (!be->ops->module_global)
        return hkc_fail(m->ctx, HK_EUNSUPPORTED, "the %s backend cannot reach module variables",
                        be->ops->name);
    void *kptr = NULL, *hptr = NULL;
    size_t bytes = 0;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = be->ops->module_global(be, e->bmod, name, &kptr, &hptr, &bytes, &err);
    if (r != 0) {
        hkc_strbuf s;
        hkc_strbuf_init(&s);
        for (int i = 0; i < e->nsrc_globals; i++)
            hkc_strbuf_printf(&s, "%s%s", i ? ", " : "", e->src_globals[i]);
        r = hkc_fail(m->ctx, r, "module '%s': %s (its __device__/__constant__ variables: %s)",
                     m->name, err.data, s.len ? s.data : "none found in the source");
        hkc_strbuf_free(&s);
        hkc_strbuf_free(&err);
        return r;
    }
    hkc_strbuf_free(&err);
    size_t es = hk_dtype_size(dtype);
    if (bytes % es || ((uintptr_t)kptr % hkc_dtype_align(dtype)))
        return hkc_fail(m->ctx, HK_EINVAL,
                        "module variable '%s' is %zu bytes: not a whole number of %s elements", name,
                        bytes, hk_dtype_name(dtype));
    hk_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return hkc_fail(m->ctx, HK_ENOMEM, "out of memory");
    b->ctx = m->ctx;
    b->dev = e->dev;
    b->device = e->dev->be->first_device + e->dev->index;
    b->dtype = dtype;
    b->mode = HK_MEM_DEVICE;
    b->count = bytes / es * hk_dtype_block(dtype);
    b->bytes = bytes;
    b->kptr = kptr;
    b->hptr = hptr;
    b->map.fd = -1;
    b->borrowed = 1;
    *out = b;
    return 0;
}

HK_API const char *hk_kernel_name(const hk_kernel *k) { return k->name; }

HK_API int hk_kernel_disasm(const hk_kernel *k, char **out)
{
    if (!k || !out)
        return hkc_fail(NULL, HK_EINVAL, "hk_kernel_disasm: kernel or out is NULL");
    *out = NULL;
    hkc_modentry *e = k->m->entry;
    hkc_backend *be = e->dev->be;
    if (!be->ops->disasm)
        return hkc_fail(k->m->ctx, HK_EUNSUPPORTED, "the %s backend has no disassembler",
                        be->ops->name);
    if (!e->code)
        return hkc_fail(k->m->ctx, HK_ENOMEM, "the code object was not kept (out of memory)");
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    const hkc_kernel_meta *meta = find_meta(e, k->name);
    int r = be->ops->disasm(be, e->code, e->code_size,
                            meta && meta->symbol[0] ? meta->symbol : k->name, &s);
    if (r != 0) {
        hkc_fail(k->m->ctx, r, "kernel %s: %s", k->name, s.data);
        hkc_strbuf_free(&s);
        return r;
    }
    *out = hkc_strbuf_take(&s);
    return 0;
}

HK_API int hk_kernel_get_info(const hk_kernel *k, hk_kernel_info *out)
{
    *out = k->info;
    return 0;
}

HK_API const char *hk_kernel_exec_mode(const hk_kernel *k, const char **why)
{
    if (why)
        *why = k->exec_why;
    return k->exec_mode[0] ? k->exec_mode : NULL;
}

HK_API int hk_kernel_param(const hk_kernel *k, int i, hk_param_info *out)
{
    if (i < 0 || i >= k->sig.count)
        return hkc_fail(k->m->ctx, HK_EINVAL, "kernel %s has %d parameters; %d is out of range",
                        k->name, k->sig.count, i);
    const hkc_param *p = &k->sig.params[i];
    out->name = p->name;
    out->type = p->type;
    out->kind = p->kind;
    out->dtype = p->dtype;
    out->is_const = p->is_const;
    out->is_bool = p->is_bool;
    out->size = p->size;
    out->align = p->align;
    out->offset = p->offset;
    return 0;
}

HK_API size_t hk_kernel_signature(const hk_kernel *k, char *buf, size_t cap)
{
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    hkc_signature_format(&k->sig, &s);
    size_t n = s.len;
    if (cap) {
        size_t c = n < cap - 1 ? n : cap - 1;
        memcpy(buf, s.data, c);
        buf[c] = 0;
    }
    hkc_strbuf_free(&s);
    return n;
}
