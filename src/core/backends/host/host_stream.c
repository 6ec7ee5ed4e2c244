/* The CPU backend's streams and events. A stream is a worker thread that
 * runs its queue in order: launches (on the block pool when it is free,
 * else on the stream's thread alone, so two streams' kernels overlap),
 * copies, event records and waits. A failed operation's error (with the
 * kernel, block and thread of a fault) is kept until the stream's next
 * synchronize or query returns it; the operations queued behind it are
 * dropped meanwhile, except event records, which always run so that other
 * streams waiting on them go on.
 *
 * Every queue and event is under host_impl.stream_lock. Events count
 * records: `seq` is the latest queued, `done` the latest reached; a wait
 * queued on a stream takes the `seq` of its time and waits for `done` to
 * reach it, so a wait only ever depends on work queued before it. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_backend.h"
#include "host_exec.h"

enum { OP_LAUNCH, OP_UPLOAD, OP_DOWNLOAD, OP_COPY, OP_RECORD, OP_WAIT };

typedef struct host_event {
    double t;      /* when the latest record was reached, ms */
    uint64_t seq;  /* records made */
    uint64_t done; /* records reached */
    int waiters;   /* waits queued on it, not yet run */
} host_event;

typedef struct hop {
    struct hop *next;
    int kind;
    /* OP_LAUNCH */
    hkc_launch_kernel k;
    hk_launch_config cfg;
    void *kernarg; /* a copy, aligned as the caller's */
    /* copies: into/from b at off, with src (a buffer) at soff or host */
    hk_buffer *b, *src;
    size_t off, soff, bytes;
    void *host; /* OP_UPLOAD, OP_DOWNLOAD: the caller's memory */
    /* OP_RECORD, OP_WAIT */
    host_event *ev;
    uint64_t target;
} hop;

typedef struct host_stream {
    struct host_stream *next; /* host_impl.streams */
    hkc_backend *be;
    pthread_t thread;
    pthread_cond_t work, idle;
    hop *head, *tail;
    int running; /* the head is being run */
    int quit;
    int err;      /* first error of queued work, not yet returned */
    char *msg;
    unsigned long dropped; /* operations skipped since */
} host_stream;

static host_impl *impl_of(const hk_stream *s) { return s->dev->be->impl; }

static void free_op(hop *op)
{
    free(op->kernarg);
    free(op);
}

static void reach(host_impl *h, host_event *ev, uint64_t target)
{
    ev->t = hkc_now_ms();
    if (ev->done < target)
        ev->done = target;
    pthread_cond_broadcast(&h->event_cv);
}

/* Runs op on the stream's thread, without the lock; a failure's message is
 * in this thread's slot of the context. */
static int run_op(host_stream *st, hop *op)
{
    host_impl *h = st->be->impl;
    switch (op->kind) {
    case OP_LAUNCH:
        return hkc_host_run_launch(st->be, &op->k, &op->cfg, op->kernarg, 1);
    case OP_UPLOAD:
        return hkc_host_move(op->b, NULL, (char *)op->b->hptr + op->off, op->host, op->bytes, "writing");
    case OP_DOWNLOAD:
        return hkc_host_move(op->b, NULL, op->host, (char *)op->b->hptr + op->off, op->bytes, "reading");
    case OP_COPY:
        return hkc_host_move(op->b, op->src, (char *)op->b->hptr + op->off,
                             (char *)op->src->hptr + op->soff, op->bytes, "copying");
    case OP_WAIT:
        pthread_mutex_lock(&h->stream_lock);
        while (op->ev->done < op->target)
            pthread_cond_wait(&h->event_cv, &h->stream_lock);
        pthread_mutex_unlock(&h->stream_lock);
        return 0;
    }
    return 0;
}

static void *stream_main(void *vp)
{
    host_stream *st = vp;
    host_impl *h = st->be->impl;
    pthread_mutex_lock(&h->stream_lock);
    for (;;) {
        while (!st->head && !st->quit)
            pthread_cond_wait(&st->work, &h->stream_lock);
        if (!st->head)
            break;
        hop *op = st->head;
        int skip = st->err != 0;
        st->running = 1;
        int r = 0;
        if (op->kind == OP_RECORD) {
            reach(h, op->ev, op->target);
        } else if (!skip) {
            pthread_mutex_unlock(&h->stream_lock);
            r = run_op(st, op);
            pthread_mutex_lock(&h->stream_lock);
        }
        if (op->kind == OP_WAIT && --op->ev->waiters == 0)
            pthread_cond_broadcast(&h->event_cv);
        if (skip && op->kind != OP_RECORD)
            st->dropped++;
        if (r < 0 && !st->err) {
            st->err = r;
            const char *m = hk_errmsg(st->be->ctx);
            st->msg = strdup(m && *m ? m : hk_strerror(r));
        }
        st->head = op->next;
        if (!st->head)
            st->tail = NULL;
        st->running = 0;
        free_op(op);
        if (!st->head)
            pthread_cond_broadcast(&st->idle);
    }
    pthread_mutex_unlock(&h->stream_lock);
    hkc_host_exec_thread_release();
    return NULL;
}

static void wait_idle(host_impl *h, host_stream *st)
{
    while (st->head || st->running)
        pthread_cond_wait(&st->idle, &h->stream_lock);
}

void hkc_host_streams_drain(host_impl *h)
{
    pthread_mutex_lock(&h->stream_lock);
    for (host_stream *st = h->streams; st; st = st->next)
        wait_idle(h, st);
    pthread_mutex_unlock(&h->stream_lock);
}

int hkc_host_stream_create(hk_stream *s)
{
    host_impl *h = impl_of(s);
    host_stream *st = calloc(1, sizeof *st);
    if (!st)
        return hkc_fail(s->ctx, HK_ENOMEM, "out of memory");
    st->be = s->dev->be;
    pthread_cond_init(&st->work, NULL);
    pthread_cond_init(&st->idle, NULL);
    if (pthread_create(&st->thread, NULL, stream_main, st) != 0) {
        pthread_cond_destroy(&st->work);
        pthread_cond_destroy(&st->idle);
        free(st);
        return hkc_fail(s->ctx, HK_ENOMEM, "hk_stream_create: cannot start the stream's thread");
    }
    pthread_mutex_lock(&h->stream_lock);
    st->next = h->streams;
    h->streams = st;
    pthread_mutex_unlock(&h->stream_lock);
    s->impl = st;
    return 0;
}

void hkc_host_stream_destroy(hk_stream *s)
{
    host_impl *h = impl_of(s);
    host_stream *st = s->impl;
    pthread_mutex_lock(&h->stream_lock);
    wait_idle(h, st);
    for (host_stream **pp = &h->streams; *pp; pp = &(*pp)->next)
        if (*pp == st) {
            *pp = st->next;
            break;
        }
    st->quit = 1;
    pthread_cond_signal(&st->work);
    pthread_mutex_unlock(&h->stream_lock);
    pthread_join(st->thread, NULL);
    pthread_cond_destroy(&st->work);
    pthread_cond_destroy(&st->idle);
    free(st->msg);
    free(st);
}

/* Returns the kept error (taking it) as a failure of the calling thread. */
static int take_error(hk_stream *s, host_stream *st)
{
    int r = st->err;
    char *msg = st->msg;
    unsigned long dropped = st->dropped;
    st->err = 0;
    st->msg = NULL;
    st->dropped = 0;
    if (!r)
        return 0;
    if (dropped)
        hkc_fail(s->ctx, r, "on a stream: %s (%lu operation%s queued after it dropped)", msg, dropped,
                 dropped == 1 ? "" : "s");
    else
        hkc_fail(s->ctx, r, "on a stream: %s", msg);
    free(msg);
    return r;
}

int hkc_host_stream_synchronize(hk_stream *s)
{
    host_impl *h = impl_of(s);
    host_stream *st = s->impl;
    pthread_mutex_lock(&h->stream_lock);
    wait_idle(h, st);
    int r = take_error(s, st);
    pthread_mutex_unlock(&h->stream_lock);
    return r;
}

int hkc_host_stream_query(hk_stream *s)
{
    host_impl *h = impl_of(s);
    host_stream *st = s->impl;
    pthread_mutex_lock(&h->stream_lock);
    int r = st->err ? take_error(s, st) : (st->head || st->running) ? 1 : 0;
    pthread_mutex_unlock(&h->stream_lock);
    return r;
}

static hop *op_new(hk_stream *s, int kind)
{
    hop *op = calloc(1, sizeof *op);
    if (op)
        op->kind = kind;
    else
        hkc_fail(s->ctx, HK_ENOMEM, "out of memory");
    return op;
}

static void enqueue_locked(host_stream *st, hop *op)
{
    if (st->tail)
        st->tail->next = op;
    else
        st->head = op;
    st->tail = op;
    pthread_cond_signal(&st->work);
}

static int enqueue(hk_stream *s, hop *op)
{
    host_impl *h = impl_of(s);
    pthread_mutex_lock(&h->stream_lock);
    enqueue_locked(s->impl, op);
    pthread_mutex_unlock(&h->stream_lock);
    return 0;
}

int hkc_host_stream_launch(hk_stream *s, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                           const void *kernarg, size_t size)
{
    hop *op = op_new(s, OP_LAUNCH);
    if (!op)
        return HK_ENOMEM;
    /* 16-aligned like the core's own packing buffer, whatever the size */
    op->kernarg = aligned_alloc(16, (size + 15) / 16 * 16 + 16);
    if (!op->kernarg) {
        free(op);
        return hkc_fail(s->ctx, HK_ENOMEM, "out of memory");
    }
    if (size)
        memcpy(op->kernarg, kernarg, size);
    op->k = *k;
    op->cfg = *cfg;
    return enqueue(s, op);
}

int hkc_host_stream_upload(hk_stream *s, hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    hop *op = op_new(s, OP_UPLOAD);
    if (!op)
        return HK_ENOMEM;
    op->host = (void *)src; /* read when the stream gets there, as CUDA does */
    op->b = b;
    op->off = offset;
    op->bytes = bytes;
    return enqueue(s, op);
}

int hkc_host_stream_download(hk_stream *s, hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    hop *op = op_new(s, OP_DOWNLOAD);
    if (!op)
        return HK_ENOMEM;
    op->b = b;
    op->off = offset;
    op->host = dst;
    op->bytes = bytes;
    return enqueue(s, op);
}

int hkc_host_stream_copy(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                         size_t src_offset, size_t bytes)
{
    hop *op = op_new(s, OP_COPY);
    if (!op)
        return HK_ENOMEM;
    op->b = dst;
    op->off = dst_offset;
    op->src = src;
    op->soff = src_offset;
    op->bytes = bytes;
    return enqueue(s, op);
}

int hkc_host_stream_record(hk_event *e, hk_stream *s)
{
    host_impl *h = impl_of(s);
    hop *op = op_new(s, OP_RECORD);
    if (!op)
        return HK_ENOMEM;
    op->ev = e->impl;
    pthread_mutex_lock(&h->stream_lock);
    op->target = ++op->ev->seq;
    enqueue_locked(s->impl, op);
    pthread_mutex_unlock(&h->stream_lock);
    return 0;
}

int hkc_host_stream_wait_event(hk_stream *s, hk_event *e)
{
    host_impl *h = impl_of(s);
    host_event *ev = e->impl;
    hop *op = op_new(s, OP_WAIT);
    if (!op)
        return HK_ENOMEM;
    op->ev = ev;
    pthread_mutex_lock(&h->stream_lock);
    op->target = ev->seq;
    if (ev->done >= op->target) { /* reached already, or never recorded */
        pthread_mutex_unlock(&h->stream_lock);
        free(op);
        return 0;
    }
    ev->waiters++;
    enqueue_locked(s->impl, op);
    pthread_mutex_unlock(&h->stream_lock);
    return 0;
}

/* ---------------------------------------------------------------- events */

int hkc_host_event_create(hk_event *e)
{
    e->impl = calloc(1, sizeof(host_event));
    return e->impl ? 0 : hkc_fail(e->ctx, HK_ENOMEM, "out of memory");
}

/* Records and waits still queued point at the event: they run first. */
void hkc_host_event_destroy(hk_event *e)
{
    host_impl *h = e->dev->be->impl;
    host_event *ev = e->impl;
    pthread_mutex_lock(&h->stream_lock);
    while (ev->done < ev->seq || ev->waiters)
        pthread_cond_wait(&h->event_cv, &h->stream_lock);
    pthread_mutex_unlock(&h->stream_lock);
    free(ev);
}

/* On the default stream: after the work queued on streams, at once. */
int hkc_host_event_record(hk_event *e)
{
    host_impl *h = e->dev->be->impl;
    host_event *ev = e->impl;
    hkc_host_streams_drain(h);
    pthread_mutex_lock(&h->stream_lock);
    reach(h, ev, ++ev->seq);
    pthread_mutex_unlock(&h->stream_lock);
    return 0;
}

int hkc_host_event_synchronize(hk_event *e)
{
    host_impl *h = e->dev->be->impl;
    host_event *ev = e->impl;
    pthread_mutex_lock(&h->stream_lock);
    int recorded = ev->seq > 0;
    while (ev->done < ev->seq)
        pthread_cond_wait(&h->event_cv, &h->stream_lock);
    pthread_mutex_unlock(&h->stream_lock);
    return recorded ? 0 : hkc_fail(e->ctx, HK_ESTATE, "the event was never recorded");
}

int hkc_host_event_elapsed_ms(hk_event *a, hk_event *b, double *ms)
{
    host_event *ta = a->impl, *tb = b->impl;
    if (!ta->seq || !tb->seq)
        return hkc_fail(a->ctx, HK_ESTATE, "both events must be recorded before timing them");
    int r = hkc_host_event_synchronize(a);
    if (!r)
        r = hkc_host_event_synchronize(b);
    if (r)
        return r;
    *ms = tb->t - ta->t;
    return 0;
}
