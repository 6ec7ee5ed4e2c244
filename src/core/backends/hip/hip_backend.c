/* The AMD ROCm backend: devices, memory in every mode, code objects, launch
 * and events through the HIP runtime. Compilation (hiprtc) is in
 * hip_compile.c, code-object reading in hip_codeobj.c / hip_comgr.c.
 *
 * What was run where: no AMD GPU exists on the machines this was built on.
 * Probe, compile, load-time picking, metadata and argument packing were
 * exercised with the real ROCm 5.2 libraries; the paths below that need a
 * device (allocation, launch, events) are written against the HIP API and
 * tested by tests/hip/test_hip_device.c, which skips without an AMD GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_backend.h"
#include "hip_codeobj.h"
#include "hip_comgr.h"

static hip_impl *impl_of(hkc_backend *be) { return be->impl; }

const char *hkc_hip_error(hipError_t e, char *buf, size_t cap)
{
    const char *name = hipGetErrorName(e), *text = hipGetErrorString(e);
    if (!strcmp(name, text)) /* ROCm 5 answers the name for both */
        snprintf(buf, cap, "%s", name);
    else
        snprintf(buf, cap, "%s: %s", name, text);
    return buf;
}

static int hip_fail(const hk_context *ctx, hipError_t e, int code, const char *what)
{
    char eb[256];
    if (e == hipErrorOutOfMemory)
        code = HK_ENOMEM;
    return hkc_fail(ctx, code, "%s: %s", what, hkc_hip_error(e, eb, sizeof eb));
}

/* Every call that touches a device makes it current first: the HIP runtime
 * keeps the current device per thread. */
static hipError_t use_dev(hkc_backend *be, int d) { return hipSetDevice(impl_of(be)->devs[d].ordinal); }

/* ------------------------------------------------------------- devices */

static void read_device(hip_device *hd, int ordinal)
{
    hipDeviceProp_t p;
    memset(&p, 0, sizeof p);
    hd->ordinal = ordinal;
    if (hipGetDeviceProperties(&p, ordinal) != hipSuccess)
        return;
    snprintf(hd->name, sizeof hd->name, "%.127s", p.name[0] ? p.name : "AMD GPU");
    snprintf(hd->arch, sizeof hd->arch, "%.95s", p.gcnArchName);
    hd->pageable = p.pageableMemoryAccess;
    hd->managed = p.managedMemory;
}

static int hip_probe(hkc_backend *be, hkc_strbuf *reason)
{
    hip_impl *h = calloc(1, sizeof *h);
    if (!h) {
        hkc_strbuf_puts(reason, "out of memory");
        return 0;
    }
    pthread_mutex_init(&h->lock, NULL);
    hkc_hip_compile_init(h);
    be->impl = h; /* kept with no device: compile-only work needs it */

    int count = 0;
    char eb[256];
    hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess) {
        hkc_strbuf_printf(reason, "no AMD GPU (hipGetDeviceCount: %s); compiling for a target "
                                  "(hipkit compile --offload-arch) and hipkit inspect still work",
                          hkc_hip_error(e, eb, sizeof eb));
        return 0;
    }
    if (count > HIP_MAX_DEVICES)
        count = HIP_MAX_DEVICES;
    const char *arch = getenv("HIPKIT_ARCH");
    for (int i = 0; i < count; i++) {
        hip_device *hd = &h->devs[h->ndev];
        read_device(hd, i);
        if (!hd->arch[0])
            continue;
        memcpy(hd->target, hd->arch, sizeof hd->target);
        if (arch && *arch) {
            hkc_strbuf err;
            hkc_strbuf_init(&err);
            if (hkc_hip_target_normalize(be, arch, hd->target, sizeof hd->target, &err) != 0) {
                hkc_warn(be->ctx, "HIPKIT_ARCH ignored: %s", err.data);
                memcpy(hd->target, hd->arch, sizeof hd->target);
            } else if (!hkc_hip_target_compatible(hd->target, hd->arch)) {
                hkc_warn(be->ctx, "HIPKIT_ARCH=%s: code compiled for it will not load on %s (%s)",
                         arch, hd->name, hd->arch);
            }
            hkc_strbuf_free(&err);
        }
        h->ndev++;
    }
    if (!h->ndev)
        hkc_strbuf_printf(reason, count ? "the HIP runtime reports %d device(s) but none answered "
                                          "hipGetDeviceProperties"
                                        : "the HIP runtime reports %d devices", count);
    return h->ndev;
}

static void final_write_back(hk_buffer *b, hip_buffer *hb);
static void release(hip_buffer *hb);

static void hip_destroy(hkc_backend *be)
{
    hip_impl *h = impl_of(be);
    while (h->buffers) { /* buffers the user never freed: keep their data, free the memory */
        hip_buffer *hb = h->buffers;
        h->buffers = hb->next;
        final_write_back(hb->b, hb);
        if (hb->kind == HIP_BUF_STAGED)
            hb->b->hptr = hb->host;
        release(hb);
        hb->b->impl = NULL;
        free(hb);
    }
    pthread_mutex_destroy(&h->lock);
    free(h);
    be->impl = NULL;
}

static int hip_device_info(hkc_backend *be, int index, hk_device_info *out)
{
    const hip_device *hd = &impl_of(be)->devs[index];
    hipDeviceProp_t p;
    memset(&p, 0, sizeof p);
    hipError_t e = hipGetDeviceProperties(&p, hd->ordinal);
    if (e != hipSuccess)
        return hip_fail(be->ctx, e, HK_EBACKEND, "hipGetDeviceProperties");
    snprintf(out->name, sizeof out->name, "%s", hd->name);
    snprintf(out->target, sizeof out->target, "%s", hd->target);
    out->total_memory = p.totalGlobalMem;
    out->compute_units = p.multiProcessorCount;
    out->warp_size = p.warpSize;
    out->managed_memory = hd->managed;
    out->pageable_memory = hd->pageable;
    out->max_threads_per_block = (uint32_t)p.maxThreadsPerBlock;
    for (int i = 0; i < 3; i++) {
        out->max_block[i] = (uint32_t)p.maxThreadsDim[i];
        out->max_grid[i] = (uint32_t)p.maxGridSize[i];
    }
    out->max_shared_per_block = p.sharedMemPerBlock;
    return 0;
}

/* -------------------------------------------------------------- memory */

static void list_add(hip_impl *h, hip_buffer *hb)
{
    pthread_mutex_lock(&h->lock);
    hb->next = h->buffers;
    if (h->buffers)
        h->buffers->prev = hb;
    h->buffers = hb;
    pthread_mutex_unlock(&h->lock);
}

static void list_remove(hip_impl *h, hip_buffer *hb)
{
    pthread_mutex_lock(&h->lock);
    if (hb->prev)
        hb->prev->next = hb->next;
    else
        h->buffers = hb->next;
    if (hb->next)
        hb->next->prev = hb->prev;
    pthread_mutex_unlock(&h->lock);
}

static int track(hk_buffer *b, hip_buffer_kind kind, void *mem)
{
    hip_buffer *hb = calloc(1, sizeof *hb);
    if (!hb)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    hb->b = b;
    hb->kind = kind;
    hb->mem = mem;
    b->impl = hb;
    list_add(impl_of(b->dev->be), hb);
    return 0;
}

static int hip_buf_alloc(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    const hip_device *hd = &impl_of(be)->devs[b->dev->index];
    hipError_t e = use_dev(be, b->dev->index);
    size_t bytes = b->bytes ? b->bytes : 1;
    void *p = NULL;
    hip_buffer_kind kind = HIP_BUF_DEVICE;
    if (e == hipSuccess) {
        switch (b->mode) {
        case HK_MEM_MANAGED:
            kind = HIP_BUF_MANAGED;
            if (!hd->pageable)
                hkc_warn(b->ctx, "managed memory on %s (%s): the device does not page on demand "
                                 "(XNACK off or no HMM), so it behaves as pinned host memory",
                         hd->name, hd->arch);
            e = hipMallocManaged(&p, bytes, hipMemAttachGlobal);
            b->kptr = b->hptr = p;
            break;
        case HK_MEM_HOST:
            kind = HIP_BUF_HOST;
            e = hipHostMalloc(&p, bytes, hipHostMallocMapped);
            if (e == hipSuccess) {
                b->hptr = p;
                e = hipHostGetDevicePointer(&b->kptr, p, 0);
                if (e != hipSuccess)
                    hipHostFree(p);
            }
            break;
        default:
            e = hipMalloc(&p, bytes);
            b->kptr = p;
            b->hptr = NULL;
            break;
        }
    }
    if (e != hipSuccess) {
        char what[160];
        snprintf(what, sizeof what, "allocating %zu bytes (%s) on %s", b->bytes,
                 hk_mem_mode_name(b->mode), hd->name);
        return hip_fail(b->ctx, e, HK_EBACKEND, what);
    }
    return track(b, kind, p);
}

static void release(hip_buffer *hb)
{
    switch (hb->kind) {
    case HIP_BUF_HOST:
        hipHostFree(hb->mem);
        break;
    case HIP_BUF_REGISTERED:
        hipHostUnregister(hb->mem);
        break;
    default: /* device, managed and staged copies */
        hipFree(hb->mem);
        break;
    }
}

static void hip_buf_free(hk_buffer *b)
{
    hip_buffer *hb = b->impl;
    if (!hb)
        return;
    use_dev(b->dev->be, b->dev->index);
    list_remove(impl_of(b->dev->be), hb);
    release(hb);
    free(hb);
    b->impl = NULL;
}

/* A staged copy of a writable mapping goes back into the mapping (the core
 * msyncs it to the file after synchronize), when something may have changed
 * it since the last time. */
static hipError_t write_back(hip_buffer *hb)
{
    if (!hb->dirty)
        return hipSuccess;
    hipError_t e = hipMemcpy(hb->host, hb->mem, hb->b->bytes, hipMemcpyDeviceToHost);
    if (e == hipSuccess)
        hb->dirty = 0;
    return e;
}

/* Which staged copies may change: the one written to, or (for a launch, whose
 * writes hipkit cannot see) all of the device's. */
static void mark_dirty(hk_buffer *b)
{
    hk_buffer *root = b->parent ? b->parent : b;
    hip_buffer *hb = root->impl;
    if (hb && hb->kind == HIP_BUF_STAGED && root->map.writable)
        hb->dirty = 1;
}

static void mark_all_dirty(hip_impl *h, int dev)
{
    if (!h->any_staged)
        return;
    pthread_mutex_lock(&h->lock);
    for (hip_buffer *hb = h->buffers; hb; hb = hb->next)
        if (hb->kind == HIP_BUF_STAGED && hb->b->map.writable && hb->b->dev->index == dev)
            hb->dirty = 1;
    pthread_mutex_unlock(&h->lock);
}

/* mmap: register the mapping so kernels read the file's pages; where the
 * runtime refuses, kernels work on a device copy (written back on sync and
 * free when the mapping is writable), and the user is told. */
static int hip_buf_register(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    const hip_device *hd = &impl_of(be)->devs[b->dev->index];
    if (!b->bytes) {
        b->kptr = NULL;
        return 0;
    }
    hipError_t e = use_dev(be, b->dev->index);
    if (e != hipSuccess)
        return hip_fail(b->ctx, e, HK_EBACKEND, "mmap: hipSetDevice");
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)b->hptr & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)b->hptr + b->bytes + page - 1) & ~(uintptr_t)(page - 1);
    unsigned flags = hipHostRegisterMapped;
#ifdef hipHostRegisterReadOnly /* ROCm 6 and newer */
    if (!b->map.writable)
        flags |= hipHostRegisterReadOnly;
#endif
    const char *call = "hipHostRegister";
    e = hipHostRegister((void *)lo, hi - lo, flags);
    if (e == hipSuccess) {
        void *dptr = NULL;
        call = "hipHostGetDevicePointer";
        e = hipHostGetDevicePointer(&dptr, (void *)lo, 0);
        if (e == hipSuccess) {
            if (!hd->pageable)
                hkc_warn(b->ctx, "file %s: %s has no HMM, so registering the mapping pinned all of "
                                 "it: its %zu bytes were read from disk now, not on first touch",
                         b->map.path, hd->name, b->bytes);
            b->kptr = (char *)dptr + ((uintptr_t)b->hptr - lo);
            return track(b, HIP_BUF_REGISTERED, (void *)lo);
        }
        hipHostUnregister((void *)lo);
    }
    /* Registration refused: a device copy. */
    char eb[300];
    size_t used = (size_t)snprintf(eb, sizeof eb, "%s: ", call);
    hkc_hip_error(e, eb + used, sizeof eb - used);
    void *copy = NULL;
    hipError_t ea = hipMalloc(&copy, b->bytes);
    if (ea == hipSuccess && (ea = hipMemcpy(copy, b->hptr, b->bytes, hipMemcpyHostToDevice)) != hipSuccess)
        hipFree(copy);
    if (ea != hipSuccess) {
        char what[512];
        snprintf(what, sizeof what, "mmap '%s': the runtime cannot register the mapping (%s) and a "
                                    "%zu-byte device copy failed", b->map.path, eb, b->bytes);
        return hip_fail(b->ctx, ea, HK_EBACKEND, what);
    }
    hkc_warn(b->ctx, "file %s: the mapping cannot be registered (%s); kernels %s",
             b->map.path, eb,
             b->map.writable ? "work on a device copy written back on sync/free" : "read a device copy of it");
    b->kptr = copy;
    int r = track(b, HIP_BUF_STAGED, copy);
    if (r == 0) {
        hip_buffer *hb = b->impl;
        hb->host = b->hptr;
        impl_of(be)->any_staged = 1;
        b->hptr = NULL; /* the host reads the copy through download, never a stale mapping */
    } else {
        hipFree(copy);
    }
    return r;
}

/* The last chance for a staged copy's changes (hk_buffer_free synced first;
 * this catches a sync that failed part way, and context teardown). */
static void final_write_back(hk_buffer *b, hip_buffer *hb)
{
    if (hb->kind != HIP_BUF_STAGED || !b->map.writable || !hb->dirty)
        return;
    hipError_t e = use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess)
        e = hipDeviceSynchronize();
    if (e == hipSuccess)
        e = write_back(hb);
    if (e != hipSuccess) {
        char eb[256];
        hkc_warn(b->ctx, "file %s: kernels' changes could not be written back: %s", b->map.path,
                 hkc_hip_error(e, eb, sizeof eb));
    }
}

static void hip_buf_unregister(hk_buffer *b)
{
    hip_buffer *hb = b->impl;
    if (hb)
        final_write_back(b, hb);
    if (hb && hb->kind == HIP_BUF_STAGED)
        b->hptr = hb->host;
    hip_buf_free(b);
}

static int copy_fail(hk_buffer *b, hipError_t e, const char *what, size_t bytes)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s of %zu bytes", what, bytes);
    return hip_fail(b->ctx, e, HK_EBACKEND, msg);
}

static int hip_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    hipError_t e = use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess)
        e = hipMemcpy((char *)b->kptr + offset, src, bytes, hipMemcpyHostToDevice);
    if (e != hipSuccess)
        return copy_fail(b, e, "upload", bytes);
    mark_dirty(b);
    return 0;
}

static int hip_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    hipError_t e = use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess)
        e = hipMemcpy(dst, (char *)b->kptr + offset, bytes, hipMemcpyDeviceToHost);
    return e == hipSuccess ? 0 : copy_fail(b, e, "download", bytes);
}

static int hip_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                        size_t bytes)
{
    hipError_t e = use_dev(dst->dev->be, dst->dev->index);
    if (e == hipSuccess)
        e = hipMemcpy((char *)dst->kptr + dst_offset, (char *)src->kptr + src_offset, bytes,
                      hipMemcpyDeviceToDevice);
    if (e != hipSuccess)
        return copy_fail(dst, e, "copy", bytes);
    mark_dirty(dst);
    return 0;
}

static int hip_buf_fill(hk_buffer *b, const void *value)
{
    size_t es = hk_dtype_size(b->dtype);
    hipDeviceptr_t p = b->kptr;
    hipError_t e = use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess) {
        if (es == 1) {
            e = hipMemsetD8(p, *(const uint8_t *)value, b->count);
        } else if (es == 2) {
            uint16_t v;
            memcpy(&v, value, 2);
            e = hipMemsetD16(p, v, b->count);
        } else if (es == 4) {
            uint32_t v;
            memcpy(&v, value, 4);
            e = hipMemsetD32(p, (int)v, b->count);
        } else {
            /* One element, then doubling copies: log2(count) calls. */
            e = hipMemcpy(p, value, es, hipMemcpyHostToDevice);
            for (size_t done = es; e == hipSuccess && done < b->bytes;) {
                size_t n = done < b->bytes - done ? done : b->bytes - done;
                e = hipMemcpy((char *)p + done, p, n, hipMemcpyDeviceToDevice);
                done += n;
            }
        }
    }
    if (e != hipSuccess)
        return copy_fail(b, e, "fill", b->bytes);
    mark_dirty(b);
    return 0;
}

/* ------------------------------------------------------------- modules */

static int hip_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **bmod,
                           hkc_strbuf *err)
{
    hip_impl *h = impl_of(be);
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
        hipError_t e = use_dev(be, dev);
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

static void hip_module_unload(hkc_backend *be, void *bmod)
{
    hip_module *m = bmod;
    use_dev(be, m->dev);
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

static int hip_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count)
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

static int hip_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
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
    hipError_t e = use_dev(be, m->dev);
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

/* The packed buffer goes in whole: HIP copies it into the kernarg segment
 * and appends the hidden arguments the metadata asks for. */
static int hip_launch(hk_kernel *k, const hk_launch_config *cfg, const void *kernarg, size_t size)
{
    hkc_modentry *e = k->m->entry;
    hip_function *f = k->bfn;
    size_t sz = size;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, (void *)kernarg, HIP_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     HIP_LAUNCH_PARAM_END};
    hipError_t err = use_dev(e->dev->be, e->dev->index);
    if (err == hipSuccess)
        err = hipModuleLaunchKernel(f->fn, cfg->grid.x, cfg->grid.y, cfg->grid.z, cfg->block.x,
                                    cfg->block.y, cfg->block.z, (unsigned)cfg->shared_bytes, NULL,
                                    NULL, extra);
    if (err == hipSuccess) {
        mark_all_dirty(impl_of(e->dev->be), e->dev->index);
        return 0;
    }
    char eb[256];
    return hkc_fail(k->m->ctx, HK_ELAUNCH, "kernel %s: hipModuleLaunchKernel: %s", k->name,
                    hkc_hip_error(err, eb, sizeof eb));
}

static int hip_synchronize(hkc_backend *be, int dev)
{
    hip_impl *h = impl_of(be);
    char eb[256];
    hipError_t e = use_dev(be, dev);
    if (e == hipSuccess)
        e = hipDeviceSynchronize();
    if (e != hipSuccess)
        return hkc_fail(be->ctx, e == hipErrorIllegalAddress || e == hipErrorLaunchFailure ? HK_EFAULT
                                                                                               : HK_EBACKEND,
                        "%s: hipDeviceSynchronize: %s", h->devs[dev].name,
                        hkc_hip_error(e, eb, sizeof eb));
    /* staged writable mmap copies that may have changed: bring the mappings
     * up to date (the core then msyncs them) */
    int r = 0;
    pthread_mutex_lock(&h->lock);
    for (hip_buffer *hb = h->buffers; hb && !r; hb = hb->next)
        if (hb->kind == HIP_BUF_STAGED && hb->b->map.writable && hb->b->dev->index == dev &&
            (e = write_back(hb)) != hipSuccess)
            r = hkc_fail(be->ctx, HK_EIO, "writing the device copy of '%s' back to its mapping: %s",
                         hb->b->map.path, hkc_hip_error(e, eb, sizeof eb));
    pthread_mutex_unlock(&h->lock);
    return r;
}

/* -------------------------------------------------------------- events */

static int hip_event_create(hk_event *e)
{
    hipEvent_t ev;
    hipError_t r = use_dev(e->dev->be, e->dev->index);
    if (r == hipSuccess)
        r = hipEventCreate(&ev);
    if (r != hipSuccess)
        return hip_fail(e->ctx, r, HK_EBACKEND, "hipEventCreate");
    e->impl = ev;
    return 0;
}

static void hip_event_destroy(hk_event *e)
{
    if (e->impl)
        hipEventDestroy((hipEvent_t)e->impl);
}

static int hip_event_record(hk_event *e)
{
    hipError_t r = use_dev(e->dev->be, e->dev->index);
    if (r == hipSuccess)
        r = hipEventRecord((hipEvent_t)e->impl, NULL);
    return r == hipSuccess ? 0 : hip_fail(e->ctx, r, HK_EBACKEND, "hipEventRecord");
}

static int hip_event_synchronize(hk_event *e)
{
    hipError_t r = hipEventSynchronize((hipEvent_t)e->impl);
    return r == hipSuccess ? 0 : hip_fail(e->ctx, r, HK_EBACKEND, "hipEventSynchronize");
}

static int hip_event_elapsed_ms(hk_event *a, hk_event *b, double *ms)
{
    float f = 0;
    hipError_t r = hipEventElapsedTime(&f, (hipEvent_t)a->impl, (hipEvent_t)b->impl);
    if (r != hipSuccess)
        return hip_fail(a->ctx, r, HK_EBACKEND, "hipEventElapsedTime");
    *ms = f;
    return 0;
}

/* ----------------------------------------------------------- the module */

__attribute__((visibility("default"))) const unsigned hkc_backend_module_abi = HKC_BACKEND_MODULE_ABI;

__attribute__((visibility("default"))) const hkc_backend_ops hkc_backend_hip_ops = {
    .name = "hip",
    .code_ext = "hsaco",
    .wide_vector_align = 32,
    .probe = hip_probe,
    .destroy = hip_destroy,
    .device_info = hip_device_info,
    .toolchain = hkc_hip_toolchain,
    .buf_alloc = hip_buf_alloc,
    .buf_free = hip_buf_free,
    .buf_register = hip_buf_register,
    .buf_unregister = hip_buf_unregister,
    .buf_upload = hip_buf_upload,
    .buf_download = hip_buf_download,
    .buf_copy = hip_buf_copy,
    .buf_fill = hip_buf_fill,
    .compile = hkc_hip_compile,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .module_kernels = hip_module_kernels,
    .function_get = hip_function_get,
    .launch = hip_launch,
    .synchronize = hip_synchronize,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_synchronize = hip_event_synchronize,
    .event_elapsed_ms = hip_event_elapsed_ms,
    .image_rank = hkc_hip_image_rank,
    .disasm = hkc_hip_disasm,
    .target_normalize = hkc_hip_target_normalize,
    .compile_target = hkc_hip_compile_target,
    .compile_offline = hkc_hip_compile_offline,
    .code_inspect = hkc_hip_code_inspect,
    .code_extract = hkc_hip_code_extract,
};
