/* The live-buffer list of the GPU backends (gpu_common.h). */
#include "gpu_common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hkc_gpu_buffers_init(hkc_gpu_buffers *l, int recursive)
{
    l->head = NULL;
    l->any_staged = 0;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    if (recursive)
        pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&l->lock, &ma);
    pthread_mutexattr_destroy(&ma);
}

void hkc_gpu_buffers_destroy(hkc_gpu_buffers *l) { pthread_mutex_destroy(&l->lock); }

void hkc_gpu_buffers_add(hkc_gpu_buffers *l, hkc_gpu_buffer *g)
{
    pthread_mutex_lock(&l->lock);
    g->prev = NULL;
    g->next = l->head;
    if (l->head)
        l->head->prev = g;
    l->head = g;
    pthread_mutex_unlock(&l->lock);
}

void hkc_gpu_buffers_remove(hkc_gpu_buffers *l, hkc_gpu_buffer *g)
{
    pthread_mutex_lock(&l->lock);
    if (g->prev)
        g->prev->next = g->next;
    else
        l->head = g->next;
    if (g->next)
        g->next->prev = g->prev;
    pthread_mutex_unlock(&l->lock);
}

void hkc_gpu_buffers_mark_dirty(hk_buffer *b)
{
    hk_buffer *root = b->parent ? b->parent : b;
    hkc_gpu_buffer *g = root->impl;
    if (g && g->kind == HKC_GPU_BUF_STAGED && root->map.writable)
        g->dirty = 1;
}

void hkc_gpu_buffers_mark_all_dirty(hkc_gpu_buffers *l, int dev)
{
    if (!l->any_staged)
        return;
    pthread_mutex_lock(&l->lock);
    for (hkc_gpu_buffer *g = l->head; g; g = g->next)
        if (g->dev == dev && g->kind == HKC_GPU_BUF_STAGED && g->b->map.writable)
            g->dirty = 1;
    pthread_mutex_unlock(&l->lock);
}

/* ------------------------------------------- a file mapping's pages */

const hk_buffer *hkc_gpu_file_of(const hk_buffer *b)
{
    while (b && b->parent)
        b = b->parent;
    return b && b->mode == HK_MEM_MMAP ? b : NULL;
}

typedef struct map_copy {
    void *dst;
    const void *src;
    size_t n;
    volatile unsigned char sink; /* touch: what was read, so the reads stay */
} map_copy;

static void do_copy(void *arg)
{
    map_copy *c = arg;
    memcpy(c->dst, c->src, c->n);
}

static void do_touch(void *arg)
{
    map_copy *c = arg;
    const volatile unsigned char *p = c->src;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char x = 0;
    for (size_t i = 0; i < c->n; i += page)
        x ^= p[i];
    if (c->n)
        x ^= p[c->n - 1];
    c->sink = x;
}

int hkc_gpu_map_touch(hkc_backend *be, const hk_buffer *b, const void *p, size_t n, const char *what)
{
    map_copy c = {NULL, p, n, 0};
    return n && p ? be->guarded(b, NULL, do_touch, &c, what) : 0;
}

/* 4 MiB: long enough that the runtime's per-call cost vanishes, short
 * enough to stay in cache-friendly reach of the copy that follows. */
#define BOUNCE_BYTES ((size_t)4 << 20)

int hkc_gpu_map_move(hkc_backend *be, hk_buffer *b, unsigned char *map, size_t bytes, int to_device,
                     hkc_gpu_xfer_fn xfer, void *xctx)
{
    size_t cap = bytes < BOUNCE_BYTES ? bytes : BOUNCE_BYTES;
    unsigned char *bounce = malloc(cap ? cap : 1);
    if (!bounce)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    int r = 0;
    for (size_t off = 0; off < bytes && r == 0; off += cap) {
        size_t n = bytes - off < cap ? bytes - off : cap;
        if (to_device) {
            map_copy c = {bounce, map + off, n, 0};
            r = be->guarded(b, NULL, do_copy, &c, "reading");
            if (r == 0)
                r = xfer(xctx, off, bounce, n);
        } else {
            r = xfer(xctx, off, bounce, n);
            map_copy c = {map + off, bounce, n, 0};
            if (r == 0)
                r = be->guarded(b, NULL, do_copy, &c, "writing");
        }
    }
    free(bounce);
    return r;
}
