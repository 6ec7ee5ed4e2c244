/* The AMD backend's modules: loading code objects (the ELF for the device
 * picked from a bundle), their kernels from comgr, functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_backend.h"
#include "hip_codeobj.h"
#include "hip_comgr.h"

/* ------------------------------------------------------------- modules */

int hkc_hip_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **bmod,
                           hkc_strbuf *err)
{
    hip_impl *h = hip_impl_of(be);
    const void *elf;
    size_t elf_size;
    char picked[96];
    /* the runtime matches code against the device itself, whatever
     * HIPKIT_ARCH says code should be compiled for */
    if (hkc_hip_pick(code, size, h->devs[dev].arch, &elf, &elf_size, picked, sizeof picked, err) != 0)
        return HK_EFORMAT;
    hip_module *m = calloc(1, sizeof *m);
    if (!m || !(m->elf = malloc(elf_size))) {
        free(m);
        hkc_strbuf_puts(err, "out of memory");
        return HK_ENOMEM;
    }
    memcpy(m->elf, elf, elf_size);
    m->elf_size = elf_size;
    m->dev = dev;
    snprintf(m->meta.target, sizeof m->meta.target, "%s", picked);
    int r = hkc_hip_comgr_kernels(m->elf, m->elf_size, &m->meta, err);
    if (r == 0) {
        hipError_t e = hkc_hip_use_dev(be, dev);
        if (e != hipSuccess) {
            char eb[256];
            hkc_strbuf_printf(err, "hipSetDevice(%d): %s", h->devs[dev].ordinal,
                              hkc_hip_error(e, eb, sizeof eb));
            r = HK_EBACKEND;
        } else if ((e = hipModuleLoadData(&m->mod, m->elf)) != hipSuccess) {
            char eb[256];
            hkc_strbuf_printf(err, "hipModuleLoadData (code object for %s on %s, %s): %s", picked,
                              h->devs[dev].name, h->devs[dev].arch, hkc_hip_error(e, eb, sizeof eb));
            r = e == hipErrorOutOfMemory ? HK_ENOMEM : HK_EFORMAT;
        }
    }
    if (r != 0) {
        hkc_hip_entry_clear(&m->meta);
        free(m->elf);
        free(m);
        return r;
    }
    *bmod = m;
    return 0;
}

void hkc_hip_module_unload(hkc_backend *be, void *bmod)
{
    hip_module *m = bmod;
    hkc_hip_use_dev(be, m->dev);
    hipModuleUnload(m->mod);
    while (m->fns) {
        hip_function *f = m->fns;
        m->fns = f->next;
        free(f);
    }
    hkc_hip_entry_clear(&m->meta);
    free(m->elf);
    free(m);
}

int hkc_hip_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count)
{
    (void)be;
    hip_module *m = bmod;
    *metas = calloc((size_t)m->meta.nkernels + 1, sizeof **metas);
    if (!*metas)
        return HK_ENOMEM;
    for (int k = 0; k < m->meta.nkernels; k++)
        hkc_kernel_meta_from_code(&m->meta.kernels[k], &(*metas)[k]);
    *count = m->meta.nkernels;
    return 0;
}

int hkc_hip_module_global(hkc_backend *be, void *bmod, const char *name, void **kptr,
                          void **hptr, size_t *bytes, hkc_strbuf *err)
{
    hip_module *m = bmod;
    hipError_t e = hkc_hip_use_dev(be, m->dev);
    const char *call = "hipSetDevice";
    hipDeviceptr_t d = 0;
    size_t size = 0;
    if (e == hipSuccess) {
        call = "hipModuleGetGlobal";
        e = hipModuleGetGlobal(&d, &size, m->mod, name);
    }
    if (e != hipSuccess) {
        char eb[256];
        hkc_strbuf_printf(err, "no module variable '%s' (%s: %s)", name, call,
                          hkc_hip_error(e, eb, sizeof eb));
        return e == hipErrorNotFound ? HK_ENOTFOUND : HK_EBACKEND;
    }
    *kptr = (void *)d;
    *hptr = NULL;
    *bytes = size;
    return 0;
}

int hkc_hip_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                            hk_kernel_info *info, hkc_strbuf *err)
{
    hip_module *m = bmod;
    const hk_code_kernel *k = NULL;
    for (int i = 0; i < m->meta.nkernels; i++)
        if (!strcmp(m->meta.kernels[i].name, name))
            k = &m->meta.kernels[i];
    if (!k) {
        hkc_strbuf_printf(err, "the code object's metadata has no kernel '%s'", name);
        return HK_ENOTFOUND;
    }
    hip_function *f = calloc(1, sizeof *f);
    if (!f) {
        hkc_strbuf_puts(err, "out of memory");
        return HK_ENOMEM;
    }
    hipError_t e = hkc_hip_use_dev(be, m->dev);
    const char *call = "hipSetDevice";
    if (e == hipSuccess) {
        call = "hipModuleGetFunction";
        e = hipModuleGetFunction(&f->fn, m->mod, name);
    }
    if (e != hipSuccess) {
        char eb[256];
        hkc_strbuf_printf(err, "%s: %s", call, hkc_hip_error(e, eb, sizeof eb));
        free(f);
        return e == hipErrorNotFound ? HK_ENOTFOUND : HK_EBACKEND;
    }
    f->next = m->fns;
    m->fns = f;
    info->registers = k->vgprs;
    info->static_shared = k->lds_bytes;
    info->local_bytes = k->scratch_bytes;
    if (k->max_flat_workgroup_size && k->max_flat_workgroup_size < info->max_threads_per_block)
        info->max_threads_per_block = k->max_flat_workgroup_size;
    *bfn = f;
    return 0;
}
