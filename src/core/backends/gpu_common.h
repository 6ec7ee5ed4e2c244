/* What the two GPU backends (cuda, hip) share: the list of live buffers
 * each keeps, and the bookkeeping of staged mmap copies. A file mapping the
 * runtime will not register is given to kernels as a device copy, written
 * back on synchronize and free when the mapping is writable; "dirty" says
 * the copy may differ from the mapping. Both backends build this file in. */
#ifndef HKC_GPU_COMMON_H
#define HKC_GPU_COMMON_H

#include <pthread.h>

#include "backend.h"

typedef enum hkc_gpu_buffer_kind {
    HKC_GPU_BUF_DEVICE,     /* device memory */
    HKC_GPU_BUF_MANAGED,    /* managed (unified) memory */
    HKC_GPU_BUF_HOST,       /* pinned host memory, mapped for the device */
    HKC_GPU_BUF_REGISTERED, /* mmap: the mapping registered with the runtime */
    HKC_GPU_BUF_STAGED,     /* mmap: a device copy of the mapping (registration refused) */
} hkc_gpu_buffer_kind;

/* The part of a backend's buffer record (hk_buffer's impl; views have none
 * and use their parent's) that the list works on. It is the record's first
 * member, named g, so a record and its hkc_gpu_buffer share an address. */
typedef struct hkc_gpu_buffer {
    struct hkc_gpu_buffer *next, *prev;
    hk_buffer *b;
    int dev; /* backend device index */
    hkc_gpu_buffer_kind kind;
    int dirty; /* STAGED and writable: the copy may differ from the mapping */
} hkc_gpu_buffer;

typedef struct hkc_gpu_buffers {
    pthread_mutex_t lock; /* guards the list (and what a backend says it also guards) */
    hkc_gpu_buffer *head;
    int any_staged; /* a staged copy was ever made: launches then mark them dirty */
} hkc_gpu_buffers;

/* Walks list l as records of type T (whose first member is g). */
#define HKC_GPU_BUFFERS_EACH(T, var, l) \
    for (T *var = (T *)(void *)(l)->head; var; var = (T *)(void *)var->g.next)

/* recursive: the lock may be taken again by its holder. */
void hkc_gpu_buffers_init(hkc_gpu_buffers *l, int recursive);
void hkc_gpu_buffers_destroy(hkc_gpu_buffers *l);
void hkc_gpu_buffers_add(hkc_gpu_buffers *l, hkc_gpu_buffer *g);
void hkc_gpu_buffers_remove(hkc_gpu_buffers *l, hkc_gpu_buffer *g);
/* A write to b (or to its parent, for a view) through the runtime: its
 * staged copy, if it has one and the mapping is writable, is now dirty. */
void hkc_gpu_buffers_mark_dirty(hk_buffer *b);
/* A launch on device dev: hipkit cannot see what a kernel writes, so every
 * writable staged copy of the device is dirty. */
void hkc_gpu_buffers_mark_all_dirty(hkc_gpu_buffers *l, int dev);

#endif
