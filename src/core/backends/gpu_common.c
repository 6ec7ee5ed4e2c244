/* The live-buffer list of the GPU backends (gpu_common.h). */
#include "gpu_common.h"

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
