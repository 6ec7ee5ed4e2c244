/* The AMD backend's launches, synchronize and events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_backend.h"

/* The packed buffer goes in whole: HIP copies it into the kernarg segment
 * and appends the hidden arguments the metadata asks for. */
int hkc_hip_launch(hkc_backend *be, int dev, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                   const void *kernarg, size_t size)
{
    return hkc_hip_launch_on(be, dev, k, cfg, kernarg, size, NULL);
}

int hkc_hip_launch_on(hkc_backend *be, int dev, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                      const void *kernarg, size_t size, hipStream_t stream)
{
    hip_function *f = k->bfn;
    size_t sz = size;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, (void *)kernarg, HIP_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     HIP_LAUNCH_PARAM_END};
    hipError_t err = hkc_hip_use_dev(be, dev);
    if (err == hipSuccess)
        err = hipModuleLaunchKernel(f->fn, cfg->grid.x, cfg->grid.y, cfg->grid.z, cfg->block.x,
                                    cfg->block.y, cfg->block.z, (unsigned)cfg->shared_bytes, stream,
                                    NULL, extra);
    if (err == hipSuccess) {
        hkc_gpu_buffers_mark_all_dirty(&hip_impl_of(be)->buffers, dev);
        return 0;
    }
    char eb[256];
    return hkc_fail(be->ctx, HK_ELAUNCH, "kernel %s: hipModuleLaunchKernel: %s", k->name,
                    hkc_hip_error(err, eb, sizeof eb));
}

int hkc_hip_synchronize(hkc_backend *be, int dev)
{
    hip_impl *h = hip_impl_of(be);
    char eb[256];
    hipError_t e = hkc_hip_use_dev(be, dev);
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
    pthread_mutex_lock(&h->buffers.lock);
    HKC_GPU_BUFFERS_EACH(hip_buffer, hb, &h->buffers)
        if (!r && hb->g.kind == HKC_GPU_BUF_STAGED && hb->g.b->map.writable && hb->g.dev == dev &&
            hkc_hip_write_back(hb) != 0) {
            char why[512];
            snprintf(why, sizeof why, "%s", hk_errmsg(be->ctx));
            r = hkc_fail(be->ctx, HK_EIO, "writing the device copy of '%s' back to its mapping: %s",
                         hb->g.b->map.path, why);
        }
    pthread_mutex_unlock(&h->buffers.lock);
    return r;
}

/* -------------------------------------------------------------- events */

int hkc_hip_event_create(hk_event *e)
{
    hipEvent_t ev;
    hipError_t r = hkc_hip_use_dev(e->dev->be, e->dev->index);
    if (r == hipSuccess)
        r = hipEventCreate(&ev);
    if (r != hipSuccess)
        return hkc_hip_fail(e->ctx, r, HK_EBACKEND, "hipEventCreate");
    e->impl = ev;
    return 0;
}

void hkc_hip_event_destroy(hk_event *e)
{
    if (e->impl)
        hipEventDestroy((hipEvent_t)e->impl);
}

int hkc_hip_event_record(hk_event *e)
{
    hipError_t r = hkc_hip_use_dev(e->dev->be, e->dev->index);
    if (r == hipSuccess)
        r = hipEventRecord((hipEvent_t)e->impl, NULL);
    return r == hipSuccess ? 0 : hkc_hip_fail(e->ctx, r, HK_EBACKEND, "hipEventRecord");
}

int hkc_hip_event_synchronize(hk_event *e)
{
    hipError_t r = hipEventSynchronize((hipEvent_t)e->impl);
    return r == hipSuccess ? 0 : hkc_hip_fail(e->ctx, r, HK_EBACKEND, "hipEventSynchronize");
}

int hkc_hip_event_elapsed_ms(hk_event *a, hk_event *b, double *ms)
{
    float f = 0;
    hipError_t r = hipEventElapsedTime(&f, (hipEvent_t)a->impl, (hipEvent_t)b->impl);
    if (r != hipSuccess)
        return hkc_hip_fail(a->ctx, r, HK_EBACKEND, "hipEventElapsedTime");
    *ms = f;
    return 0;
}
