/* The NVIDIA backend's launches, synchronize and events. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

/* ----------------------------------------------------------------- launch */

/* Appends a kernel name to the device's list for fault messages, once. */
static void note_kernel(cuda_impl *c, int d, const char *name)
{
    if (c->devs[d].last_noted == name && c->devs[d].last_kernels[0])
        return; /* the same kernel again: nothing new to note */
    pthread_mutex_lock(&c->buffers.lock);
    c->devs[d].last_noted = name;
    char *list = c->devs[d].last_kernels;
    size_t cap = sizeof c->devs[d].last_kernels, len = strlen(list), n = strlen(name);
    int seen = 0;
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == 0)) {
            seen = 1;
            break;
        }
    if (!seen && (len < 4 || strcmp(list + len - 3, "...") != 0)) {
        if (len + n + 2 + 5 < cap)
            snprintf(list + len, cap - len, "%s%s", len ? ", " : "", name);
        else
            snprintf(list + len, cap - len, "%s", len ? ", ..." : "...");
    }
    pthread_mutex_unlock(&c->buffers.lock);
}

/* After a reset, pointer arguments inside a buffer from before (and in no
 * current one) are refused: the core only hands over packed bytes, so this
 * reads them back through the kernel's signature. */
static int check_stale_args(hkc_backend *be, const hkc_launch_kernel *k, const cuda_device *cd, int d,
                            const void *kernarg, size_t size)
{
    cuda_impl *c = cuda_impl_of(be);
    unsigned gen = hkc_cuda_epoch(cd);
    if (gen == 0)
        return 0; /* never reset */
    int r = 0;
    pthread_mutex_lock(&c->buffers.lock);
    for (int i = 0; i < k->sig->count && !r; i++) {
        const hkc_param *p = &k->sig->params[i];
        if (p->kind != HK_PARAM_POINTER || p->size != sizeof(uint64_t) || p->offset + 8 > size)
            continue;
        uint64_t v;
        memcpy(&v, (const char *)kernarg + p->offset, sizeof v);
        if (!v)
            continue;
        int stale = 0, fresh = 0;
        HKC_GPU_BUFFERS_EACH(cuda_buffer, cb, &c->buffers) {
            if (cb->g.dev != d || v < cb->dptr || v >= cb->dptr + cb->bytes)
                continue;
            if (cb->generation == gen)
                fresh = 1;
            else
                stale = 1;
        }
        if (stale && !fresh) {
            char fk[512];
            hkc_cuda_fault_names(cd, fk, sizeof fk);
            r = hkc_fail(be->ctx, HK_ESTATE,
                         "kernel %s: parameter %d '%s' is a buffer allocated before the GPU context "
                         "was reset after a fault in %s; allocate it again", k->name, i + 1, p->name, fk);
        }
    }
    pthread_mutex_unlock(&c->buffers.lock);
    return r;
}

/* CUDA gives a block 48 KiB of shared memory unless its function was opted
 * into more (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), up to the
 * device's opt-in maximum less the kernel's static shared memory, which
 * check_config has already compared (the device info reports the opt-in
 * maximum). Set once per function and size: only a larger size sets it
 * again, and a reload after a reset starts over. */
#define CUDA_DEFAULT_SHARED 49152u

static int opt_in_shared(hkc_backend *be, const hkc_launch_kernel *k, cuda_function *f, size_t bytes)
{
    if (bytes + (k->info->static_shared > 0 ? (size_t)k->info->static_shared : 0) <= CUDA_DEFAULT_SHARED)
        return 0;
    cuda_impl *c = cuda_impl_of(be);
    CUresult cr = CUDA_SUCCESS;
    pthread_mutex_lock(&c->buffers.lock);
    if (f->dyn_shared_gen != f->generation || f->dyn_shared < bytes) {
        cr = cuFuncSetAttribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
        if (cr == CUDA_SUCCESS) {
            f->dyn_shared = (unsigned)bytes;
            f->dyn_shared_gen = f->generation;
        }
    }
    pthread_mutex_unlock(&c->buffers.lock);
    if (cr == CUDA_SUCCESS)
        return 0;
    char eb[256];
    hkc_cuda_error(cr, eb, sizeof eb);
    int optin = 0;
    cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, c->devs[f->m->dev].dev);
    long long avail = optin - (k->info->static_shared > 0 ? k->info->static_shared : 0);
    return hkc_fail(be->ctx, HK_ELAUNCH,
                    "kernel %s: %zu bytes of dynamic shared memory asked, %lld available per block "
                    "(cuFuncSetAttribute: %s)", k->name, bytes, avail, eb);
}

/* What a launch does before the driver sees it (a graph's build too): the
 * module and function loaded again after a reset, stale buffers refused,
 * the dynamic shared memory opted into. */
int hkc_cuda_launch_prepare(hkc_backend *be, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                            const void *kernarg, size_t size)
{
    cuda_impl *c = cuda_impl_of(be);
    cuda_function *f = k->bfn;
    cuda_module *m = f->m;
    int d = m->dev;
    const cuda_device *cd = &c->devs[d];
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = hkc_cuda_ensure_module(be, m, &err);
    if (!r && f->generation != m->generation) {
        CUresult cr = cuModuleGetFunction(&f->fn, m->mod, f->name);
        if (cr == CUDA_SUCCESS)
            f->generation = m->generation;
        else
            r = hkc_cuda_fail(be, d, cr, &err, HK_EBACKEND, "reloading kernel %s after the reset", f->name);
    }
    if (r) {
        hkc_fail(be->ctx, r, "kernel %s: %s", k->name, err.data);
        hkc_strbuf_free(&err);
        return r;
    }
    hkc_strbuf_free(&err);
    r = check_stale_args(be, k, cd, d, kernarg, size);
    if (!r)
        r = opt_in_shared(be, k, f, cfg->shared_bytes);
    return r;
}

int hkc_cuda_can_start_early(const cuda_device *cd, cuda_function *f)
{
    if (cd->cc_major < 9)
        return 0;
    if (!f->ptx_version && cuFuncGetAttribute(&f->ptx_version, CU_FUNC_ATTRIBUTE_PTX_VERSION, f->fn) != CUDA_SUCCESS)
        f->ptx_version = -1;
    return f->ptx_version >= 90;
}

void hkc_cuda_launch_noted(hkc_backend *be, int d, const char *name)
{
    note_kernel(cuda_impl_of(be), d, name);
}

int hkc_cuda_launch(hkc_backend *be, int dev, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                    const void *kernarg, size_t size)
{
    (void)dev; /* the module's device */
    return hkc_cuda_launch_on(be, k, cfg, kernarg, size, NULL);
}

int hkc_cuda_launch_on(hkc_backend *be, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                       const void *kernarg, size_t size, CUstream stream)
{
    cuda_impl *c = cuda_impl_of(be);
    cuda_function *f = k->bfn;
    int d = f->m->dev;
    cuda_device *cd = &c->devs[d];
    /* (read before prepare, which clears it) */
    int early = (cfg->flags & HK_LAUNCH_EARLY_START) && cd->after_kernel && cd->after_kernel_on == stream &&
                hkc_cuda_can_start_early(cd, f);
    int r = hkc_cuda_launch_prepare(be, k, cfg, kernarg, size);
    if (r)
        return r;

    /* Each parameter by address into the packed buffer, the form the
     * driver's launch path is built for (the raw cuLaunchKernel figures in
     * RESULTS.md use it too); offsets are the signature's C layout, which
     * module_kernels checked against the driver's cuFuncGetParamInfo. */
    void *params[64];
    int np = k->sig->count;
    /* sized to the parameters' own end: a larger buffer reads as "too many
     * arguments" (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) */
    size_t sz = f->param_end && f->param_end <= size ? f->param_end : size;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)kernarg, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     CU_LAUNCH_PARAM_END};
    for (int i = 0; i < np && np <= 64; i++)
        params[i] = (char *)kernarg + k->sig->params[i].offset;
    void **kp = np <= 64 && np ? params : NULL, **ex = np <= 64 ? NULL : extra;
    CUresult cr;
    if (early) { /* programmatic dependent launch: starts as the kernel before triggers */
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        at.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig lc;
        memset(&lc, 0, sizeof lc);
        lc.gridDimX = cfg->grid.x;
        lc.gridDimY = cfg->grid.y;
        lc.gridDimZ = cfg->grid.z;
        lc.blockDimX = cfg->block.x;
        lc.blockDimY = cfg->block.y;
        lc.blockDimZ = cfg->block.z;
        lc.sharedMemBytes = (unsigned)cfg->shared_bytes;
        lc.hStream = stream;
        lc.attrs = &at;
        lc.numAttrs = 1;
        cr = cuLaunchKernelEx(&lc, f->fn, kp, ex);
    } else {
        cr = cuLaunchKernel(f->fn, cfg->grid.x, cfg->grid.y, cfg->grid.z, cfg->block.x, cfg->block.y,
                            cfg->block.z, (unsigned)cfg->shared_bytes, stream, kp, ex);
    }
    if (cr == CUDA_SUCCESS) {
        cd->after_kernel = 1;
        cd->after_kernel_on = stream;
        note_kernel(c, d, k->name);
        hkc_gpu_buffers_mark_all_dirty(&c->buffers, d);
        return 0;
    }
    if (hkc_cuda_is_sticky(cr)) { /* an earlier kernel faulted */
        hkc_strbuf msg;
        hkc_strbuf_init(&msg);
        hkc_cuda_fault_reset(be, d, cr, &msg);
        r = hkc_fail(be->ctx, HK_EFAULT, "%s; %s was not launched", msg.data, k->name);
        hkc_strbuf_free(&msg);
        return r;
    }
    char eb[256];
    hkc_cuda_error(cr, eb, sizeof eb);
    if (cr == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
        return hkc_fail(be->ctx, HK_ELAUNCH,
                        "kernel %s: %s (block (%u, %u, %u): the kernel uses %d registers per thread; "
                        "launch fewer threads per block)",
                        k->name, eb, cfg->block.x, cfg->block.y, cfg->block.z, k->info->registers);
    return hkc_fail(be->ctx, HK_ELAUNCH, "kernel %s: %s: %s", k->name, early ? "cuLaunchKernelEx" : "cuLaunchKernel",
                    eb);
}

int hkc_cuda_synchronize(hkc_backend *be, int dev)
{
    cuda_impl *c = cuda_impl_of(be);
    CUresult cr = hkc_cuda_use_dev(c, dev);
    if (cr == CUDA_SUCCESS)
        cr = cuCtxSynchronize();
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(be, dev, cr, NULL, HK_EBACKEND, "cuda:%d: cuCtxSynchronize", dev);
    pthread_mutex_lock(&c->buffers.lock);
    c->devs[dev].last_kernels[0] = 0;
    pthread_mutex_unlock(&c->buffers.lock);
    /* Staged mmap copies go back to their mappings here; hk_buffer_sync
     * msyncs after. See the top of cuda_memory.c. */
    int r = 0;
    unsigned gen = hkc_cuda_epoch(&c->devs[dev]);
    pthread_mutex_lock(&c->buffers.lock);
    HKC_GPU_BUFFERS_EACH(cuda_buffer, cb, &c->buffers)
        if (!r && cb->g.dev == dev && cb->g.kind == HKC_GPU_BUF_STAGED && cb->g.dirty && cb->generation == gen)
            r = hkc_cuda_write_back(be, cb, 1);
    pthread_mutex_unlock(&c->buffers.lock);
    return r;
}

/* ----------------------------------------------------------------- events */

typedef struct cuda_event {
    CUevent ev;
    int dev;
    unsigned generation;
    int recorded;
} cuda_event;

static int event_new(hk_event *e, cuda_event *ce)
{
    hkc_backend *be = e->dev->be;
    cuda_impl *c = cuda_impl_of(be);
    CUresult cr = hkc_cuda_use_dev(c, ce->dev);
    ce->generation = hkc_cuda_epoch(&c->devs[ce->dev]);
    if (cr == CUDA_SUCCESS)
        cr = cuEventCreate(&ce->ev, CU_EVENT_DEFAULT);
    if (cr != CUDA_SUCCESS) {
        ce->ev = NULL;
        return hkc_cuda_fail(be, ce->dev, cr, NULL, HK_EBACKEND, "cuEventCreate");
    }
    ce->recorded = 0;
    return 0;
}

int hkc_cuda_event_create(hk_event *e)
{
    cuda_event *ce = calloc(1, sizeof *ce);
    if (!ce)
        return hkc_fail(e->ctx, HK_ENOMEM, "out of memory");
    ce->dev = e->dev->index;
    int r = event_new(e, ce);
    if (r) {
        free(ce);
        return r;
    }
    e->impl = ce;
    return 0;
}

void hkc_cuda_event_destroy(hk_event *e)
{
    cuda_event *ce = e->impl;
    cuda_impl *c = cuda_impl_of(e->dev->be);
    if (ce->ev && ce->generation == hkc_cuda_epoch(&c->devs[ce->dev]) && hkc_cuda_use_dev(c, ce->dev) == CUDA_SUCCESS)
        cuEventDestroy(ce->ev);
    free(ce);
}

int hkc_cuda_event_record(hk_event *e) { return hkc_cuda_event_record_in(e, NULL); }

int hkc_cuda_event_record_in(hk_event *e, CUstream stream)
{
    cuda_event *ce = e->impl;
    hkc_backend *be = e->dev->be;
    cuda_impl *c = cuda_impl_of(be);
    if (!ce->ev || ce->generation != hkc_cuda_epoch(&c->devs[ce->dev])) { /* made before a reset */
        int r = event_new(e, ce);
        if (r)
            return r;
    }
    CUresult cr = hkc_cuda_use_dev(c, ce->dev);
    if (cr == CUDA_SUCCESS)
        cr = cuEventRecord(ce->ev, stream);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(be, ce->dev, cr, NULL, HK_EBACKEND, "cuEventRecord");
    ce->recorded = 1;
    return 0;
}

static int event_ready(hk_event *e, const char *what)
{
    cuda_event *ce = e->impl;
    cuda_impl *c = cuda_impl_of(e->dev->be);
    if (!ce->recorded)
        return hkc_fail(e->ctx, HK_ESTATE, "%s: the event was never recorded", what);
    if (ce->generation != hkc_cuda_epoch(&c->devs[ce->dev]))
        return hkc_fail(e->ctx, HK_ESTATE, "%s: the event was recorded before the GPU context was "
                                           "reset after a fault; record it again", what);
    return 0;
}

CUevent hkc_cuda_event_handle(hk_event *e, int *recorded)
{
    cuda_event *ce = e->impl;
    cuda_impl *c = cuda_impl_of(e->dev->be);
    /* one recorded before a reset marks work that is gone: nothing to wait for */
    *recorded = ce->recorded && ce->ev && ce->generation == hkc_cuda_epoch(&c->devs[ce->dev]);
    return ce->ev;
}

int hkc_cuda_event_synchronize(hk_event *e)
{
    cuda_event *ce = e->impl;
    hkc_backend *be = e->dev->be;
    int r = event_ready(e, "hk_event_synchronize");
    if (r)
        return r;
    CUresult cr = hkc_cuda_use_dev(cuda_impl_of(be), ce->dev);
    if (cr == CUDA_SUCCESS)
        cr = cuEventSynchronize(ce->ev);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(be, ce->dev, cr, NULL, HK_EBACKEND, "cuEventSynchronize");
    return 0;
}

/* Waits for both events first, so a caller that did not synchronize still
 * gets the time rather than CUDA_ERROR_NOT_READY. */
int hkc_cuda_event_elapsed_ms(hk_event *a, hk_event *b, double *ms)
{
    int r = event_ready(a, "hk_event_elapsed_ms (start)");
    if (!r)
        r = event_ready(b, "hk_event_elapsed_ms (end)");
    if (!r)
        r = hkc_cuda_event_synchronize(b);
    if (!r)
        r = hkc_cuda_event_synchronize(a);
    if (r)
        return r;
    cuda_event *ca = a->impl, *cb = b->impl;
    float t = 0;
    CUresult cr = cuEventElapsedTime(&t, ca->ev, cb->ev);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(a->dev->be, ca->dev, cr, NULL, HK_EBACKEND, "cuEventElapsedTime");
    *ms = t;
    return 0;
}
