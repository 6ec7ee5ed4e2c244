/* The AMD backend's streams: hipStream_t made with hipStreamDefault, so
 * they are blocking with the default stream that hk_launch and the plain
 * copies use (as the cuda backend's). Copies between buffers go by their
 * device addresses (host-mode buffers are mapped, registered mappings have
 * one), so a host-mode buffer <-> device copy is an async transfer.
 * Compile-checked only: no AMD GPU was at hand when this was written. */
#include <stdio.h>

#include "hip_backend.h"

static hipStream_t handle(const hk_stream *s) { return (hipStream_t)s->impl; }

int hkc_hip_stream_create(hk_stream *s)
{
    hipStream_t st;
    hipError_t e = hkc_hip_use_dev(s->dev->be, s->dev->index);
    if (e == hipSuccess)
        e = hipStreamCreateWithFlags(&st, hipStreamDefault);
    if (e != hipSuccess)
        return hkc_hip_fail(s->ctx, e, HK_EBACKEND, "hipStreamCreateWithFlags");
    s->impl = st;
    return 0;
}

void hkc_hip_stream_destroy(hk_stream *s)
{
    if (hkc_hip_use_dev(s->dev->be, s->dev->index) == hipSuccess)
        hipStreamDestroy(handle(s));
}

static int fail(const hk_stream *s, hipError_t e, const char *what)
{
    /* a kernel fault is reported by the first call after it */
    int code = e == hipErrorIllegalAddress || e == hipErrorLaunchFailure ? HK_EFAULT : HK_EBACKEND;
    return hkc_hip_fail(s->ctx, e, code, what);
}

int hkc_hip_stream_synchronize(hk_stream *s)
{
    hipError_t e = hkc_hip_use_dev(s->dev->be, s->dev->index);
    if (e == hipSuccess)
        e = hipStreamSynchronize(handle(s));
    return e == hipSuccess ? 0 : fail(s, e, "hipStreamSynchronize");
}

int hkc_hip_stream_query(hk_stream *s)
{
    hipError_t e = hipStreamQuery(handle(s));
    if (e == hipErrorNotReady)
        return 1;
    return e == hipSuccess ? 0 : fail(s, e, "hipStreamQuery");
}

int hkc_hip_stream_launch(hk_stream *s, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                          const void *kernarg, size_t size)
{
    return hkc_hip_launch_on(s->dev->be, s->dev->index, k, cfg, kernarg, size, handle(s));
}

static int copy(hk_stream *s, hk_buffer *dirty, void *dst, const void *src, size_t bytes,
                hipMemcpyKind kind, const char *what)
{
    hipError_t e = hkc_hip_use_dev(s->dev->be, s->dev->index);
    if (e == hipSuccess)
        e = hipMemcpyAsync(dst, src, bytes, kind, handle(s));
    if (e != hipSuccess) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s of %zu bytes (hipMemcpyAsync)", what, bytes);
        return fail(s, e, msg);
    }
    if (dirty)
        hkc_gpu_buffers_mark_dirty(dirty);
    return 0;
}

int hkc_hip_stream_upload(hk_stream *s, hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    return copy(s, b, (char *)b->kptr + offset, src, bytes, hipMemcpyHostToDevice, "upload");
}

int hkc_hip_stream_download(hk_stream *s, hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    return copy(s, NULL, dst, (char *)b->kptr + offset, bytes, hipMemcpyDeviceToHost, "download");
}

int hkc_hip_stream_copy(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                        size_t src_offset, size_t bytes)
{
    return copy(s, dst, (char *)dst->kptr + dst_offset, (char *)src->kptr + src_offset, bytes,
                hipMemcpyDeviceToDevice, "copy");
}

int hkc_hip_stream_record(hk_event *e, hk_stream *s)
{
    hipError_t r = hkc_hip_use_dev(s->dev->be, s->dev->index);
    if (r == hipSuccess)
        r = hipEventRecord((hipEvent_t)e->impl, handle(s));
    return r == hipSuccess ? 0 : fail(s, r, "hipEventRecord");
}

int hkc_hip_stream_wait_event(hk_stream *s, hk_event *e)
{
    hipError_t r = hkc_hip_use_dev(s->dev->be, s->dev->index);
    if (r == hipSuccess)
        r = hipStreamWaitEvent(handle(s), (hipEvent_t)e->impl, 0);
    return r == hipSuccess ? 0 : fail(s, r, "hipStreamWaitEvent");
}
