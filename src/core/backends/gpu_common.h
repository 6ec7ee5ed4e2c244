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

/* A file mapping another process truncates raises SIGBUS in whatever
 * touches its lost pages; inside a runtime's copy that cannot be recovered
 * (a jump out of the runtime would leave its locks held). So this thread
 * touches a mapping's pages itself, under the core's recovery
 * (hkc_backend.guarded), before or instead of the runtime: */
/* The file-backed buffer b is or views, or NULL. */
const hk_buffer *hkc_gpu_file_of(const hk_buffer *b);
/* Reads a byte of every page of [p, p + n) of b's mapping: 0, or HK_EIO
 * naming the file. For a registered mapping, before the runtime copies it
 * (a truncation during the copy itself is not covered: docs/RELIABILITY.md). */
int hkc_gpu_map_touch(hkc_backend *be, const hk_buffer *b, const void *p, size_t n, const char *what);
/* Moves `bytes` between map (the mapping of b) and device memory through a
 * host bounce buffer, chunk by chunk: xfer(xctx, offset, bounce, n) is the
 * runtime's copy between the device and the bounce (0 or an HK_E* code,
 * the error set); this thread copies between the bounce and the mapping
 * under recovery. to_device: mapping -> device. 0 or the first error. */
typedef int (*hkc_gpu_xfer_fn)(void *xctx, size_t offset, void *bounce, size_t n);
int hkc_gpu_map_move(hkc_backend *be, hk_buffer *b, unsigned char *map, size_t bytes, int to_device,
                     hkc_gpu_xfer_fn xfer, void *xctx);

#endif
