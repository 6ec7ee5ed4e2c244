/* The NVIDIA backend's modules: loading code objects (again after a context
 * reset), listing their kernels and finding functions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

/* ---------------------------------------------------------------- modules */

/* Loads m->image into the device's current context, with the JIT's error
 * log for PTX. The message goes into err. */
static int load_image(hkc_backend *be, cuda_module *m, hkc_strbuf *err)
{
    cuda_impl *c = cuda_impl_of(be);
    const cuda_device *cd = &c->devs[m->dev];
    CUresult r = hkc_cuda_use_dev(c, m->dev);
    if (r != CUDA_SUCCESS)
        return hkc_cuda_fail(be, m->dev, r, err, HK_EBACKEND, "cannot load the module on cuda:%d", m->dev);
    char log[4096] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)(sizeof log - 1)};
    unsigned gen = hkc_cuda_epoch(cd);
    CUmodule mod;
    r = cuModuleLoadDataEx(&mod, m->image, 2, opts, vals);
    if (r == CUDA_SUCCESS) {
        m->mod = mod;
        m->generation = gen;
        return 0;
    }
    if (hkc_cuda_is_sticky(r))
        return hkc_cuda_fail(be, m->dev, r, err, HK_EFAULT, "cuModuleLoadData");
    char eb[256];
    hkc_cuda_error(r, eb, sizeof eb);
    cuda_image_kind kind = hkc_cuda_image_kind(m->image, m->size);
    int want = cd->cc_major * 10 + cd->cc_minor;
    int arch = kind == CUDA_IMAGE_CUBIN ? hkc_cuda_cubin_arch(m->image, m->size) : 0;
    if (kind == CUDA_IMAGE_CUBIN && arch && arch != want &&
        (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE)) {
        hkc_strbuf_printf(err, "the cubin is for sm_%d; device %d is sm_%d (%s): rebuild it with "
                               "`nvcc -cubin -arch=sm_%d FILE.cu` (or a fatbin with PTX), or compile "
                               "the source with hk.compile", arch, m->dev, want, cd->name, want);
        return HK_EFORMAT;
    }
    if (kind == CUDA_IMAGE_FATBIN && r == CUDA_ERROR_NO_BINARY_FOR_GPU) {
        hkc_strbuf_printf(err, "the fatbin holds no code for sm_%d (%s) and no PTX the driver can "
                               "compile: rebuild it with `nvcc -fatbin -arch=sm_%d FILE.cu`",
                          want, cd->name, want);
        return HK_EFORMAT;
    }
    static const char *const kind_names[] = {"cubin", "PTX", "fatbin", "code object"};
    hkc_strbuf_printf(err, "cannot load the %s on cuda:%d (%s, sm_%d): %s", kind_names[kind], m->dev,
                      cd->name, want, eb);
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        hkc_strbuf_puts(err, " (the PTX is newer than this driver: compile it with a toolkit no "
                             "newer than the driver, or update the driver)");
    log[sizeof log - 1] = 0;
    if (log[0])
        hkc_strbuf_printf(err, "\n%s", log);
    int bad_image = r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_INVALID_PTX ||
                    r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_NO_BINARY_FOR_GPU;
    return bad_image ? HK_EFORMAT : HK_EBACKEND;
}

/* A module from before a reset is loaded again from its image. */
int hkc_cuda_ensure_module(hkc_backend *be, cuda_module *m, hkc_strbuf *err)
{
    cuda_impl *c = cuda_impl_of(be);
    CUresult r = hkc_cuda_use_dev(c, m->dev);
    if (r != CUDA_SUCCESS)
        return hkc_cuda_fail(be, m->dev, r, err, HK_EBACKEND, "cuCtxSetCurrent");
    if (m->generation == hkc_cuda_epoch(&c->devs[m->dev]))
        return 0;
    m->mod = NULL;
    return load_image(be, m, err);
}

int hkc_cuda_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **bmod,
                            hkc_strbuf *err)
{
    if (hkc_cuda_image_kind(code, size) == CUDA_IMAGE_UNKNOWN) {
        hkc_strbuf_puts(err, "not a cubin, PTX or fatbin");
        return HK_EFORMAT;
    }
    cuda_module *m = calloc(1, sizeof *m);
    char *image = malloc(size + 1);
    if (!m || !image) {
        free(m);
        free(image);
        hkc_strbuf_puts(err, "out of memory");
        return HK_ENOMEM;
    }
    memcpy(image, code, size);
    image[size] = 0; /* PTX is loaded as a C string */
    m->dev = dev;
    m->image = image;
    m->size = size;
    int r = load_image(be, m, err);
    if (r) {
        free(image);
        free(m);
        return r;
    }
    *bmod = m;
    return 0;
}

void hkc_cuda_module_unload(hkc_backend *be, void *bmod)
{
    cuda_impl *c = cuda_impl_of(be);
    cuda_module *m = bmod;
    if (m->mod && m->generation == hkc_cuda_epoch(&c->devs[m->dev]) && hkc_cuda_use_dev(c, m->dev) == CUDA_SUCCESS)
        cuModuleUnload(m->mod);
    while (m->fns) {
        cuda_function *f = m->fns;
        m->fns = f->next;
        free(f);
    }
    free(m->image);
    free(m);
}

/* Parameter sizes from the driver (CUDA 12.4+). Alignment is not reported:
 * it is what a C compiler gives a parameter of that size (the largest power
 * of two dividing the size, at most 16: 1, 2, 4, 8 for scalars and
 * pointers, 16 for float4-like types), lowered until it divides the
 * parameter's offset. Returns the count, or -1 when unknown. */
static int param_info(CUfunction fn, uint32_t *sizes, uint32_t *aligns, int cap, size_t *end)
{
    *end = 0;
    for (int i = 0;; i++) {
        size_t off = 0, size = 0;
        CUresult r = cuFuncGetParamInfo(fn, (size_t)i, &off, &size);
        if (r == CUDA_ERROR_FUNCTION_NOT_LOADED && cuFuncLoad(fn) == CUDA_SUCCESS)
            r = cuFuncGetParamInfo(fn, (size_t)i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            return i; /* past the last parameter */
        if (r != CUDA_SUCCESS || i >= cap || size > UINT32_MAX)
            return -1;
        uint32_t a = 1;
        while (a < 16 && size % (2u * a) == 0)
            a *= 2;
        while (a > 1 && off % a)
            a /= 2;
        if (sizes) {
            sizes[i] = (uint32_t)size;
            aligns[i] = a;
        }
        if (off + size > *end)
            *end = off + size;
    }
}

/* Collects (function, symbol) pairs of a module: every kind through
 * cuModuleEnumerateFunctions (CUDA 12.4+), cubins also from their symbol
 * table if that fails. *syms is one malloc'd block. */
static int list_functions(cuda_module *m, CUfunction **fns, const char ***syms, int *count)
{
    *fns = NULL;
    *syms = NULL;
    *count = 0;
    unsigned n = 0;
    if (cuModuleGetFunctionCount(&n, m->mod) == CUDA_SUCCESS) {
        CUfunction *f = calloc(n ? n : 1, sizeof *f);
        const char **s = calloc(n ? n : 1, sizeof *s);
        if (!f || !s) {
            free(f);
            free(s);
            return HK_ENOMEM;
        }
        int ok = cuModuleEnumerateFunctions(f, n, m->mod) == CUDA_SUCCESS;
        for (unsigned i = 0; ok && i < n; i++)
            ok = cuFuncGetName(&s[i], f[i]) == CUDA_SUCCESS && s[i];
        if (ok) {
            *fns = f;
            *syms = s;
            *count = (int)n;
            return 0;
        }
        free(f);
        free(s);
    }
    if (hkc_cuda_image_kind(m->image, m->size) != CUDA_IMAGE_CUBIN)
        return 0;
    char **names = NULL;
    int nn = 0;
    if (hkc_cuda_cubin_kernels(m->image, m->size, &names, &nn) != 0 || nn <= 0) {
        free(names);
        return 0;
    }
    CUfunction *f = calloc((size_t)nn, sizeof *f);
    const char **s = calloc((size_t)nn, sizeof *s);
    if (!f || !s) {
        free(f);
        free(s);
        free(names);
        return HK_ENOMEM;
    }
    int k = 0;
    for (int i = 0; i < nn; i++)
        if (cuModuleGetFunction(&f[k], m->mod, names[i]) == CUDA_SUCCESS &&
            cuFuncGetName(&s[k], f[k]) == CUDA_SUCCESS && s[k])
            k++; /* the driver's copy of the name outlives `names` */
    free(names);
    *fns = f;
    *syms = s;
    *count = k;
    return 0;
}

/* Kernels are listed by plain name ("scale"), which is what the source
 * scanner finds; overloads sharing a plain name are listed by symbol. */
static int plain_unique(const char *const *syms, int n, int i, char *plain, size_t cap)
{
    hkc_plain_name(syms[i], plain, cap);
    char other[256];
    for (int j = 0; j < n; j++) {
        if (j == i)
            continue;
        hkc_plain_name(syms[j], other, sizeof other);
        if (!strcmp(other, plain))
            return 0;
    }
    return 1;
}

int hkc_cuda_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count)
{
    cuda_module *m = bmod;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = hkc_cuda_ensure_module(be, m, &err);
    if (r) {
        hkc_fail(be->ctx, r, "%s", err.data);
        hkc_strbuf_free(&err);
        return r;
    }
    hkc_strbuf_free(&err);
    CUfunction *fns;
    const char **syms;
    int n;
    r = list_functions(m, &fns, &syms, &n);
    if (r)
        return hkc_fail(be->ctx, r, "out of memory");
    hkc_kernel_meta *out = calloc(n ? (size_t)n : 1, sizeof *out);
    if (!out) {
        free(fns);
        free(syms);
        return hkc_fail(be->ctx, HK_ENOMEM, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        hkc_kernel_meta *mt = &out[k];
        char plain[256];
        const char *name = plain_unique(syms, n, i, plain, sizeof plain) ? plain : syms[i];
        if (strlen(name) >= sizeof mt->name)
            continue; /* cannot be named through the core */
        snprintf(mt->name, sizeof mt->name, "%s", name);
        if (name != syms[i] && strlen(syms[i]) < sizeof mt->symbol)
            snprintf(mt->symbol, sizeof mt->symbol, "%s", syms[i]);
        size_t end;
        mt->nparams = param_info(fns[i], mt->param_size, mt->param_align, 64, &end);
        mt->uses_sync = 0;
        k++;
    }
    free(fns);
    free(syms);
    *metas = out;
    *count = k;
    return 0;
}

/* The symbol for `name`: itself when the module has it, else the one
 * function whose plain name it is. */
static int resolve_symbol(cuda_module *m, const char *name, CUfunction *fn, char *sym, size_t cap,
                          hkc_strbuf *err)
{
    if (cuModuleGetFunction(fn, m->mod, name) == CUDA_SUCCESS) {
        snprintf(sym, cap, "%s", name);
        return 0;
    }
    CUfunction *fns;
    const char **syms;
    int n, found = -1, many = 0;
    if (list_functions(m, &fns, &syms, &n))
        return HK_ENOMEM;
    char plain[256];
    for (int i = 0; i < n; i++) {
        hkc_plain_name(syms[i], plain, sizeof plain);
        if (strcmp(plain, name))
            continue;
        if (found >= 0)
            many = 1;
        else
            found = i;
    }
    int r = 0;
    if (found < 0) {
        hkc_strbuf_printf(err, "the module has no function '%s'", name);
        r = HK_ENOTFOUND;
    } else if (many) {
        hkc_strbuf_printf(err, "'%s' names several kernels (overloads): use the symbol, e.g. '%s'",
                          name, syms[found]);
        r = HK_ENOTFOUND;
    } else if (strlen(syms[found]) >= cap) {
        hkc_strbuf_printf(err, "the symbol of '%s' is too long", name);
        r = HK_ENOTFOUND;
    } else {
        *fn = fns[found];
        snprintf(sym, cap, "%s", syms[found]);
    }
    free(fns);
    free(syms);
    return r;
}

int hkc_cuda_module_global(hkc_backend *be, void *bmod, const char *name, void **kptr,
                           void **hptr, size_t *bytes, hkc_strbuf *err)
{
    cuda_module *m = bmod;
    int r = hkc_cuda_ensure_module(be, m, err);
    if (r)
        return r;
    CUdeviceptr d = 0;
    size_t size = 0;
    CUresult e = cuModuleGetGlobal_v2(&d, &size, m->mod, name);
    if (e != CUDA_SUCCESS) {
        hkc_strbuf_printf(err, "no module variable '%s' (cuModuleGetGlobal: %d)", name, (int)e);
        return e == CUDA_ERROR_NOT_FOUND ? HK_ENOTFOUND : HK_EBACKEND;
    }
    *kptr = (void *)(uintptr_t)d;
    *hptr = NULL;
    *bytes = size;
    return 0;
}

int hkc_cuda_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                             hk_kernel_info *info, hkc_strbuf *err)
{
    cuda_module *m = bmod;
    int r = hkc_cuda_ensure_module(be, m, err);
    if (r)
        return r;
    CUfunction fn;
    char sym[256];
    r = resolve_symbol(m, name, &fn, sym, sizeof sym, err);
    if (r)
        return r;
    cuda_function *f = NULL;
    for (cuda_function *g = m->fns; g; g = g->next)
        if (!strcmp(g->name, sym))
            f = g;
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f) {
            hkc_strbuf_puts(err, "out of memory");
            return HK_ENOMEM;
        }
        f->m = m;
        snprintf(f->name, sizeof f->name, "%s", sym);
        f->next = m->fns;
        m->fns = f;
    }
    f->fn = fn;
    f->generation = m->generation;
    cuFuncLoad(fn); /* lazy loading: some attributes need the function loaded */
    int v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fn) == CUDA_SUCCESS)
        info->registers = v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn) == CUDA_SUCCESS)
        info->static_shared = v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn) == CUDA_SUCCESS)
        info->local_bytes = v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) == CUDA_SUCCESS && v > 0)
        info->max_threads_per_block = (uint32_t)v;
    size_t end;
    if (param_info(fn, NULL, NULL, 4096, &end) >= 0) /* kernargs are at most 4 KiB */
        f->param_end = end;
    *bfn = f;
    return 0;
}
