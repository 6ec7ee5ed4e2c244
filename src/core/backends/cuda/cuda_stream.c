/* The NVIDIA backend's streams: CUstreams made with CU_STREAM_DEFAULT, so
 * they are blocking with the legacy default stream that hk_launch and the
 * plain copies use: default-stream work waits for theirs and they wait for
 * it, and code that never asks for a stream behaves as before.
 *
 * A fault in a kernel on a stream is sticky for the whole context: the
 * stream's synchronize (or any later call) returns it through
 * hkc_cuda_fail, which resets the context (cuda_device.c). A stream made
 * before a reset is made again on its next use; its queued work is gone
 * with the context. */
#include <stdlib.h>

#include "cuda_backend.h"

typedef struct cuda_stream {
    CUstream st;
    int dev;
    unsigned generation;
} cuda_stream;

static int stream_new(hk_stream *s, cuda_stream *cs)
{
    hkc_backend *be = s->dev->be;
    cuda_impl *c = cuda_impl_of(be);
    CUresult cr = hkc_cuda_use_dev(c, cs->dev);
    cs->generation = hkc_cuda_epoch(&c->devs[cs->dev]);
    if (cr == CUDA_SUCCESS)
        cr = cuStreamCreate(&cs->st, CU_STREAM_DEFAULT);
    if (cr != CUDA_SUCCESS) {
        cs->st = NULL;
        return hkc_cuda_fail(be, cs->dev, cr, NULL, HK_EBACKEND, "cuStreamCreate");
    }
    return 0;
}

int hkc_cuda_stream_create(hk_stream *s)
{
    cuda_stream *cs = calloc(1, sizeof *cs);
    if (!cs)
        return hkc_fail(s->ctx, HK_ENOMEM, "out of memory");
    cs->dev = s->dev->index;
    int r = stream_new(s, cs);
    if (r) {
        free(cs);
        return r;
    }
    s->impl = cs;
    return 0;
}

static int is_current(const hk_stream *s, const cuda_stream *cs)
{
    cuda_impl *c = cuda_impl_of(s->dev->be);
    return cs->st && cs->generation == hkc_cuda_epoch(&c->devs[cs->dev]);
}

void hkc_cuda_stream_destroy(hk_stream *s)
{
    cuda_stream *cs = s->impl;
    if (is_current(s, cs) && hkc_cuda_use_dev(cuda_impl_of(s->dev->be), cs->dev) == CUDA_SUCCESS)
        cuStreamDestroy(cs->st);
    free(cs);
}

int hkc_cuda_stream_handle(hk_stream *s, CUstream *out)
{
    cuda_stream *cs = s->impl;
    if (!is_current(s, cs)) {
        int r = stream_new(s, cs);
        if (r)
            return r;
    }
    CUresult cr = hkc_cuda_use_dev(cuda_impl_of(s->dev->be), cs->dev);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(s->dev->be, cs->dev, cr, NULL, HK_EBACKEND, "cuda:%d: cuCtxSetCurrent", cs->dev);
    *out = cs->st;
    return 0;
}

int hkc_cuda_stream_synchronize(hk_stream *s)
{
    cuda_stream *cs = s->impl;
    if (!is_current(s, cs))
        return 0; /* nothing queued since the reset */
    CUstream st;
    int r = hkc_cuda_stream_handle(s, &st);
    if (r)
        return r;
    CUresult cr = cuStreamSynchronize(st);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(s->dev->be, cs->dev, cr, NULL, HK_EBACKEND, "cuda:%d: cuStreamSynchronize",
                             cs->dev);
    return 0;
}

int hkc_cuda_stream_query(hk_stream *s)
{
    cuda_stream *cs = s->impl;
    if (!is_current(s, cs))
        return 0;
    CUstream st;
    int r = hkc_cuda_stream_handle(s, &st);
    if (r)
        return r;
    CUresult cr = cuStreamQuery(st);
    if (cr == CUDA_ERROR_NOT_READY)
        return 1;
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(s->dev->be, cs->dev, cr, NULL, HK_EBACKEND, "cuda:%d: cuStreamQuery", cs->dev);
    return 0;
}

int hkc_cuda_stream_launch(hk_stream *s, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                           const void *kernarg, size_t size)
{
    CUstream st;
    /* taking the handle queues nothing: the kernel before may still let
     * this one start early (hkc_cuda_use_dev forgets it) */
    cuda_device *cd = &cuda_impl_of(s->dev->be)->devs[((cuda_stream *)s->impl)->dev];
    int after = cd->after_kernel;
    CUstream after_on = cd->after_kernel_on;
    int r = hkc_cuda_stream_handle(s, &st);
    if (!r && after && after_on == st) /* (a stream made again after a reset is a new one) */
        cd->after_kernel = 1;
    /* cuLaunchKernel copies the arguments before it returns */
    return r ? r : hkc_cuda_launch_on(s->dev->be, k, cfg, kernarg, size, st);
}

int hkc_cuda_stream_record(hk_event *e, hk_stream *s)
{
    CUstream st;
    int r = hkc_cuda_stream_handle(s, &st);
    return r ? r : hkc_cuda_event_record_in(e, st);
}

int hkc_cuda_stream_wait_event(hk_stream *s, hk_event *e)
{
    cuda_stream *cs = s->impl;
    int recorded;
    CUevent ev = hkc_cuda_event_handle(e, &recorded);
    if (!recorded)
        return 0; /* as CUDA: an event never recorded is no wait */
    CUstream st;
    int r = hkc_cuda_stream_handle(s, &st);
    if (r)
        return r;
    CUresult cr = cuStreamWaitEvent(st, ev, 0);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(s->dev->be, cs->dev, cr, NULL, HK_EBACKEND, "cuStreamWaitEvent");
    return 0;
}
