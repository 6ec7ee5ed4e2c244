/* Events: marks in a device's work queue, for timing. */
#include <stdlib.h>

#include "internal.h"

HK_API int hk_event_create(hk_context *ctx, hk_event **out)
{
    if (!ctx || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_event_create: context or out is NULL");
    *out = NULL;
    hk_event *e = calloc(1, sizeof *e);
    if (!e)
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    e->ctx = ctx;
    e->dev = hkc_current_device(ctx);
    int r = e->dev->be->ops->event_create(e);
    if (r) {
        free(e);
        return r;
    }
    *out = e;
    return 0;
}

HK_API void hk_event_destroy(hk_event *e)
{
    if (!e)
        return;
    e->dev->be->ops->event_destroy(e);
    free(e);
}

HK_API int hk_event_record(hk_event *e)
{
    if (!e)
        return hkc_fail(NULL, HK_EINVAL, "hk_event_record: event is NULL");
    int r = hkc_graph_refuse(e->ctx, "hk_event_record", "an event marks the work queued so far");
    if (r)
        return r;
    return e->dev->be->ops->event_record(e);
}

HK_API int hk_event_synchronize(hk_event *e)
{
    if (!e)
        return hkc_fail(NULL, HK_EINVAL, "hk_event_synchronize: event is NULL");
    int r = hkc_graph_refuse(e->ctx, "hk_event_synchronize", "a wait for the device");
    if (r)
        return r;
    return e->dev->be->ops->event_synchronize(e);
}

HK_API int hk_event_elapsed_ms(hk_event *start, hk_event *end, double *ms)
{
    if (!start || !end || !ms)
        return hkc_fail(start ? start->ctx : NULL, HK_EINVAL, "hk_event_elapsed_ms: NULL argument");
    if (start->dev != end->dev)
        return hkc_fail(start->ctx, HK_EINVAL, "hk_event_elapsed_ms: events are on different devices");
    return start->dev->be->ops->event_elapsed_ms(start, end, ms);
}
