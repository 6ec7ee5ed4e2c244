/* Streams: ordered queues of work that run while the caller goes on. The
 * core checks arguments and keeps the context's list; each backend queues
 * (host_stream.c: a worker thread per stream; cuda and hip: their streams).
 * Launches on a stream are in launch.c, copies in buffer.c. */
#include <stdlib.h>

#include "internal.h"

static int supported(hk_context *ctx, const hkc_device *dev, const char *fn)
{
    if (!dev->be->ops->stream_create)
        return hkc_fail(ctx, HK_EUNSUPPORTED, "%s: the %s backend has no streams", fn,
                        dev->be->ops->name);
    return 0;
}

HK_API int hk_stream_create(hk_context *ctx, hk_stream **out)
{
    if (!ctx || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_stream_create: context or out is NULL");
    *out = NULL;
    hkc_device *dev = hkc_current_device(ctx);
    int r = supported(ctx, dev, "hk_stream_create");
    if (r)
        return r;
    hk_stream *s = calloc(1, sizeof *s);
    if (!s)
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    s->ctx = ctx;
    s->dev = dev;
    r = dev->be->ops->stream_create(s);
    if (r) {
        free(s);
        return r;
    }
    s->next = ctx->streams;
    ctx->streams = s;
    *out = s;
    return 0;
}

HK_API void hk_stream_destroy(hk_stream *s)
{
    if (!s)
        return;
    for (hk_stream **pp = &s->ctx->streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    /* Its work runs to its end first: buffers it uses may be freed next. */
    s->dev->be->ops->stream_synchronize(s);
    s->dev->be->ops->stream_destroy(s);
    free(s);
}

void hkc_streams_destroy_all(hk_context *ctx)
{
    while (ctx->streams)
        hk_stream_destroy(ctx->streams);
}

HK_API int hk_stream_synchronize(hk_stream *s)
{
    if (!s)
        return hkc_fail(NULL, HK_EINVAL, "hk_stream_synchronize: stream is NULL");
    return s->dev->be->ops->stream_synchronize(s);
}

HK_API int hk_stream_query(hk_stream *s)
{
    if (!s)
        return hkc_fail(NULL, HK_EINVAL, "hk_stream_query: stream is NULL");
    return s->dev->be->ops->stream_query(s);
}

HK_API int hk_stream_device(const hk_stream *s) { return s ? (int)(s->dev - s->ctx->devices) : -1; }

int hkc_stream_check_device(const hk_stream *s, const hkc_device *dev, const char *fn,
                            const char *what)
{
    if (s->dev != dev)
        return hkc_fail(s->ctx, HK_EINVAL, "%s: the stream is on device %d, the %s on device %d", fn,
                        (int)(s->dev - s->ctx->devices), what, (int)(dev - s->ctx->devices));
    return 0;
}

void hkc_streams_wait(hk_context *ctx, hkc_device *dev)
{
    for (hk_stream *s = ctx->streams; s; s = s->next)
        if (s->dev == dev) {
            /* synchronize waits for every stream of the device and leaves
             * their errors for their own synchronize */
            dev->be->ops->synchronize(dev->be, dev->index);
            return;
        }
}

int hkc_streams_take_errors(hk_context *ctx, hkc_device *dev)
{
    int first = 0;
    for (hk_stream *s = ctx->streams; s; s = s->next) {
        if (s->dev != dev)
            continue;
        int r = s->dev->be->ops->stream_query(s);
        if (r < 0 && !first)
            first = r;
    }
    return first;
}

HK_API int hk_event_record_on(hk_event *e, hk_stream *s)
{
    if (!s)
        return hk_event_record(e);
    if (!e)
        return hkc_fail(s->ctx, HK_EINVAL, "hk_event_record_on: event is NULL");
    int r = hkc_stream_check_device(s, e->dev, "hk_event_record_on", "event");
    return r ? r : s->dev->be->ops->stream_record(e, s);
}

HK_API int hk_stream_wait_event(hk_stream *s, hk_event *e)
{
    if (!s || !e)
        return hkc_fail(s ? s->ctx : NULL, HK_EINVAL, "hk_stream_wait_event: stream or event is NULL");
    int r = hkc_stream_check_device(s, e->dev, "hk_stream_wait_event", "event");
    return r ? r : s->dev->be->ops->stream_wait_event(s, e);
}
