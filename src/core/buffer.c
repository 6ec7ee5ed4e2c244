/* Buffers in the four memory modes. The core checks sizes and ranges and owns
 * file mappings; the backend owns the memory itself. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static int check_buffer(const hk_buffer *b, const char *fn)
{
    if (!b)
        return hkc_fail(NULL, HK_EINVAL, "%s: buffer is NULL", fn);
    return 0;
}

static hk_buffer *new_buffer(hk_context *ctx, size_t count, hk_dtype dtype, hk_mem_mode mode)
{
    hk_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->ctx = ctx;
    b->device = ctx->current;
    b->dev = hkc_current_device(ctx);
    b->dtype = dtype;
    b->mode = mode;
    b->count = count;
    if (hkc_dtype_bytes(dtype, count, &b->bytes) != 0)
        b->bytes = 0; /* the callers checked count first */
    b->map.fd = -1;
    return b;
}

HK_API int hk_buffer_alloc(hk_context *ctx, size_t count, hk_dtype dtype, hk_mem_mode mode,
                           hk_buffer **out)
{
    int r;
    if (!ctx || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_alloc: context or out is NULL");
    *out = NULL;
    if (!hk_dtype_name(dtype))
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_alloc: invalid dtype %d", (int)dtype);
    if (mode == HK_MEM_MMAP)
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_alloc: mmap buffers come from hk_buffer_mmap (a file)");
    if ((unsigned)mode >= HK_MEM_MODE_COUNT)
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_alloc: invalid memory mode %d", (int)mode);
    size_t bytes;
    r = hkc_dtype_bytes(dtype, count, &bytes);
    if (r == HK_EINVAL)
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_alloc: %zu elements are no whole number of %s "
                        "blocks (%zu elements each)", count, hk_dtype_name(dtype),
                        hk_dtype_block(dtype));
    if (r)
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_alloc: %zu elements of %s overflow the address space",
                        count, hk_dtype_name(dtype));
    hkc_device *dev = hkc_current_device(ctx);
    if (mode == HK_MEM_MANAGED && !dev->info.managed_memory)
        return hkc_fail(ctx, HK_EUNSUPPORTED, "device %s:%d (%s) does not support managed memory",
                        dev->be->ops->name, dev->index, dev->info.name);
    hk_buffer *b = new_buffer(ctx, count, dtype, mode);
    if (!b)
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    r = dev->be->ops->buf_alloc(b);
    if (r != 0) {
        free(b);
        return r;
    }
    *out = b;
    return 0;
}

HK_API void hk_mmap_options_defaults(hk_mmap_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

static void unmap(hkc_mapping *m)
{
    if (m->base && m->map_bytes)
        munmap(m->base, m->map_bytes);
    if (m->fd >= 0)
        close(m->fd);
    free(m->path);
    m->base = NULL;
    m->fd = -1;
    m->path = NULL;
}

HK_API int hk_buffer_mmap(hk_context *ctx, const char *path, hk_dtype dtype,
                          const hk_mmap_options *o, hk_buffer **out)
{
    hk_mmap_options defaults;
    if (!o) {
        hk_mmap_options_defaults(&defaults);
        o = &defaults;
    }
    if (!ctx || !out || !path)
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_mmap: context, path or out is NULL");
    *out = NULL;
    if (!hk_dtype_name(dtype))
        return hkc_fail(ctx, HK_EINVAL, "hk_buffer_mmap: invalid dtype %d", (int)dtype);
    long page = sysconf(_SC_PAGESIZE);
    if (o->offset % (uint64_t)page)
        return hkc_fail(ctx, HK_EINVAL, "mmap '%s': offset %llu is not a multiple of the page size (%ld)",
                        path, (unsigned long long)o->offset, page);
    /* O_NONBLOCK: a FIFO would block the open until a peer came; it is
     * refused below, by the descriptor's type. Regular files ignore it. */
    int flags = (o->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK |
                (o->writable && o->create ? O_CREAT : 0);
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return hkc_fail(ctx, HK_EIO, "mmap '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return hkc_fail(ctx, HK_EIO, "mmap '%s': not a regular file", path);
    }
    uint64_t fsize = (uint64_t)st.st_size;
    uint64_t length = o->length;
    if (o->writable && o->create && length && o->offset + length > fsize) {
        if (ftruncate(fd, (off_t)(o->offset + length)) != 0) {
            int e = errno;
            close(fd);
            return hkc_fail(ctx, HK_EIO, "mmap '%s': cannot extend to %llu bytes: %s", path,
                            (unsigned long long)(o->offset + length), strerror(e));
        }
        fsize = o->offset + length;
    }
    if (o->offset > fsize) {
        close(fd);
        return hkc_fail(ctx, HK_EINVAL, "mmap '%s': offset %llu is past the end of the file (%llu bytes)",
                        path, (unsigned long long)o->offset, (unsigned long long)fsize);
    }
    if (!length)
        length = fsize - o->offset;
    if (o->offset + length > fsize) {
        close(fd);
        return hkc_fail(ctx, HK_EINVAL, "mmap '%s': offset %llu + length %llu is past the end of the file (%llu bytes)",
                        path, (unsigned long long)o->offset, (unsigned long long)length,
                        (unsigned long long)fsize);
    }
    size_t esize = hk_dtype_size(dtype);
    if (length % esize) {
        close(fd);
        return hkc_fail(ctx, HK_EINVAL, "mmap '%s': %llu bytes is not a whole number of %s %s",
                        path, (unsigned long long)length, hk_dtype_name(dtype),
                        hk_dtype_block(dtype) > 1 ? "blocks" : "elements");
    }
    hk_buffer *b = new_buffer(ctx, (size_t)(length / esize * hk_dtype_block(dtype)), dtype,
                              HK_MEM_MMAP);
    if (!b) {
        close(fd);
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    }
    b->map.fd = fd;
    b->map.writable = o->writable;
    b->map.path = strdup(path);
    b->map.map_bytes = length ? (size_t)length : (size_t)page;
    int prot = PROT_READ | (o->writable ? PROT_WRITE : 0);
    void *p = length ? mmap(NULL, (size_t)length, prot, MAP_SHARED, fd, (off_t)o->offset)
                     : mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        b->map.base = NULL;
        unmap(&b->map);
        free(b);
        return hkc_fail(ctx, HK_EIO, "mmap '%s': %s", path, strerror(e));
    }
    b->map.base = p;
    b->hptr = p;
    b->kptr = p;
    hkc_device *dev = hkc_current_device(ctx);
    if (dev->be->ops->buf_register) {
        int r = dev->be->ops->buf_register(b);
        if (r != 0) {
            unmap(&b->map);
            free(b);
            return r;
        }
    }
    *out = b;
    return 0;
}

HK_API int hk_buffer_view(hk_buffer *b, hk_dtype dtype, size_t offset, size_t count,
                          hk_buffer **out)
{
    int r = check_buffer(b, "hk_buffer_view");
    if (r)
        return r;
    if (!out)
        return hkc_fail(b->ctx, HK_EINVAL, "hk_buffer_view: out is NULL");
    *out = NULL;
    if (!hk_dtype_name(dtype))
        return hkc_fail(b->ctx, HK_EINVAL, "hk_buffer_view: invalid dtype %d", (int)dtype);
    size_t es = hk_dtype_size(dtype), align = hkc_dtype_align(dtype), bytes = 0;
    /* The address itself must suit the element: a misaligned pointer is a
     * fault on a GPU, so a view of a view checks its absolute position. A
     * quantized block needs its scales' alignment, not its odd size's. */
    if (((uintptr_t)b->kptr + offset) % align)
        return hkc_fail(b->ctx, HK_EINVAL,
                        "view: offset %zu puts %s elements at a position that is not a multiple of "
                        "%s (%zu)", offset, hk_dtype_name(dtype),
                        align == es ? "their size" : "their alignment", align);
    r = hkc_dtype_bytes(dtype, count, &bytes);
    if (r == HK_EINVAL)
        return hkc_fail(b->ctx, HK_EINVAL, "view: %zu elements are no whole number of %s blocks "
                        "(%zu elements each)", count, hk_dtype_name(dtype), hk_dtype_block(dtype));
    if (r)
        return hkc_fail(b->ctx, HK_EINVAL, "view: %zu %s need more than SIZE_MAX bytes", count,
                        hk_dtype_name(dtype));
    if (offset > b->bytes || bytes > b->bytes - offset)
        return hkc_fail(b->ctx, HK_EINVAL,
                        "view: %zu %s from byte %zu would end at byte %zu; the buffer has %zu bytes",
                        count, hk_dtype_name(dtype), offset, offset + bytes, b->bytes);
    /* A view of a view is a view of the original, at the offsets added up. */
    char *base = b->kptr, *hbase = b->hptr;
    while (b->parent)
        b = b->parent;
    hk_buffer *v = calloc(1, sizeof *v);
    if (!v)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    *v = *b;
    v->parent = b;
    v->dtype = dtype;
    v->count = count;
    v->bytes = bytes;
    v->kptr = base + offset;
    v->hptr = hbase ? hbase + offset : NULL;
    v->impl = NULL;
    *out = v;
    return 0;
}

HK_API int hk_buffer_is_view(const hk_buffer *b) { return b && b->parent != NULL; }

HK_API int hk_buffer_overlap(const hk_buffer *a, const hk_buffer *b)
{
    if (!a || !b || !a->bytes || !b->bytes || a->ctx != b->ctx || a->device != b->device)
        return 0;
    /* views: their parent's memory, offset */
    return hkc_ranges_meet((uintptr_t)a->kptr, a->bytes, (uintptr_t)b->kptr, b->bytes);
}

HK_API int hk_buffer_sync(hk_buffer *b)
{
    int r = check_buffer(b, "hk_buffer_sync");
    if (r)
        return r;
    if (b->parent)
        return hk_buffer_sync(b->parent);
    if (b->mode != HK_MEM_MMAP || !b->map.writable || !b->bytes)
        return 0;
    r = hkc_graph_refuse(b->ctx, "hk_buffer_sync", "a write-back to a file waits for the device");
    if (r)
        return r;
    hkc_device *dev = b->dev;
    r = dev->be->ops->synchronize(dev->be, dev->index);
    if (r)
        return r;
    if (msync(b->map.base, b->map.map_bytes, MS_SYNC) != 0)
        return hkc_fail(b->ctx, HK_EIO, "writing '%s' back: %s", b->map.path, strerror(errno));
    return 0;
}

HK_API int hk_buffer_free(hk_buffer *b)
{
    if (!b)
        return 0;
    hkc_graph_forget(b->ctx, b);
    if (b->parent || b->borrowed) { /* a view (or a module variable) owns nothing but itself */
        free(b);
        return 0;
    }
    int r = 0;
    const hkc_backend_ops *ops = b->dev->be->ops;
    hkc_streams_wait(b->ctx, b->dev); /* queued work may still use it */
    if (b->mode == HK_MEM_MMAP) {
        r = hk_buffer_sync(b);
        if (ops->buf_unregister)
            ops->buf_unregister(b);
        unmap(&b->map);
    } else {
        ops->buf_free(b);
    }
    free(b);
    return r;
}

HK_API hk_dtype hk_buffer_dtype(const hk_buffer *b) { return b->dtype; }
HK_API size_t hk_buffer_length(const hk_buffer *b) { return b->count; }
HK_API size_t hk_buffer_bytes(const hk_buffer *b) { return b->bytes; }
HK_API hk_mem_mode hk_buffer_mode(const hk_buffer *b) { return b->mode; }
HK_API int hk_buffer_device(const hk_buffer *b) { return b->device; }
HK_API void *hk_buffer_host_ptr(hk_buffer *b)
{
    /* what the host does through the pointer cannot be seen, so it is refused
     * at the start: the caller's fallback (a download) is refused by name */
    if (b->ctx->graph_rec && hkc_graph_refuse(b->ctx, "hk_buffer_host_ptr", "a host access to a buffer"))
        return NULL;
    return b->hptr;
}

static int check_range(const hk_buffer *b, size_t offset, size_t bytes, const char *fn)
{
    if (offset > b->bytes || bytes > b->bytes - offset)
        return hkc_fail(b->ctx, HK_EINVAL,
                        "%s: bytes [%zu, %zu) are outside the buffer (%zu bytes)", fn, offset,
                        offset + bytes, b->bytes);
    return 0;
}

static int check_writable(const hk_buffer *b, const char *fn)
{
    if (b->mode == HK_MEM_MMAP && !b->map.writable)
        return hkc_fail(b->ctx, HK_EINVAL, "%s: '%s' is mapped read-only (map it with write to change it)",
                        fn, b->map.path);
    return 0;
}

static int upload_checks(hk_buffer *b, size_t offset, const void *src, size_t bytes, const char *fn)
{
    int r = check_buffer(b, fn);
    if (!r)
        r = hkc_graph_refuse(b->ctx, fn, "a host write to a buffer");
    if (!r && bytes && !src)
        r = hkc_fail(b->ctx, HK_EINVAL, "%s: source is NULL", fn);
    if (!r)
        r = check_range(b, offset, bytes, fn);
    if (!r)
        r = check_writable(b, fn);
    return r;
}

HK_API int hk_buffer_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    int r = upload_checks(b, offset, src, bytes, "hk_buffer_upload");
    if (r || !bytes)
        return r;
    return b->dev->be->ops->buf_upload(b, offset, src, bytes);
}

static int download_checks(hk_buffer *b, size_t offset, const void *dst, size_t bytes, const char *fn)
{
    int r = check_buffer(b, fn);
    if (!r)
        r = hkc_graph_refuse(b->ctx, fn, "a host read of a buffer");
    if (!r && bytes && !dst)
        r = hkc_fail(b->ctx, HK_EINVAL, "%s: destination is NULL", fn);
    if (!r)
        r = check_range(b, offset, bytes, fn);
    return r;
}

HK_API int hk_buffer_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    int r = download_checks(b, offset, dst, bytes, "hk_buffer_download");
    if (r || !bytes)
        return r;
    r = b->dev->be->ops->buf_download(b, offset, dst, bytes);
    return r ? r : hkc_plugin_flags_wait(b->ctx, b->device);
}

static int copy_checks(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                       size_t bytes, const char *fn)
{
    int r = check_buffer(dst, fn);
    if (!r)
        r = check_buffer(src, fn);
    if (!r)
        r = hkc_graph_refuse(dst->ctx, fn, "a copy between buffers");
    if (!r && dst->dev != src->dev)
        r = hkc_fail(dst->ctx, HK_EINVAL, "%s: buffers are on different devices (%d and %d)", fn,
                     dst->device, src->device);
    char what[64];
    snprintf(what, sizeof what, "%s (destination)", fn);
    if (!r)
        r = check_range(dst, dst_offset, bytes, what);
    snprintf(what, sizeof what, "%s (source)", fn);
    if (!r)
        r = check_range(src, src_offset, bytes, what);
    if (!r)
        r = check_writable(dst, fn);
    return r;
}

HK_API int hk_buffer_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                          size_t bytes)
{
    int r = copy_checks(dst, dst_offset, src, src_offset, bytes, "hk_buffer_copy");
    if (r || !bytes)
        return r;
    return dst->dev->be->ops->buf_copy(dst, dst_offset, src, src_offset, bytes);
}

/* The stream forms: the same checks, then the stream's queue. */
HK_API int hk_buffer_upload_on(hk_stream *s, hk_buffer *b, size_t offset, const void *src,
                               size_t bytes)
{
    if (!s)
        return hk_buffer_upload(b, offset, src, bytes);
    int r = upload_checks(b, offset, src, bytes, "hk_buffer_upload_on");
    if (!r)
        r = hkc_stream_check_device(s, b->dev, "hk_buffer_upload_on", "buffer");
    if (r || !bytes)
        return r;
    return s->dev->be->ops->stream_upload(s, b, offset, src, bytes);
}

HK_API int hk_buffer_download_on(hk_stream *s, hk_buffer *b, size_t offset, void *dst,
                                 size_t bytes)
{
    if (!s)
        return hk_buffer_download(b, offset, dst, bytes);
    int r = download_checks(b, offset, dst, bytes, "hk_buffer_download_on");
    if (!r)
        r = hkc_stream_check_device(s, b->dev, "hk_buffer_download_on", "buffer");
    if (r || !bytes)
        return r;
    return s->dev->be->ops->stream_download(s, b, offset, dst, bytes);
}

HK_API int hk_buffer_copy_on(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                             size_t src_offset, size_t bytes)
{
    if (!s)
        return hk_buffer_copy(dst, dst_offset, src, src_offset, bytes);
    int r = copy_checks(dst, dst_offset, src, src_offset, bytes, "hk_buffer_copy_on");
    /* Device copies in a queue promise no memmove order (cuMemcpyDtoDAsync). */
    uintptr_t to = 0, from = 0;
    if (!r) {
        to = (uintptr_t)dst->kptr + dst_offset;
        from = (uintptr_t)src->kptr + src_offset;
    }
    if (!r && bytes && to != from && hkc_ranges_meet(to, bytes, from, bytes))
        r = hkc_fail(s->ctx, HK_EINVAL, "hk_buffer_copy_on: the ranges overlap (copy through another "
                                        "buffer, or without a stream)");
    if (!r)
        r = hkc_stream_check_device(s, dst->dev, "hk_buffer_copy_on", "buffers");
    if (r || !bytes)
        return r;
    return s->dev->be->ops->stream_copy(s, dst, dst_offset, src, src_offset, bytes);
}

HK_API int hk_buffer_fill(hk_buffer *b, const void *value)
{
    int r = check_buffer(b, "hk_buffer_fill");
    if (!r)
        r = hkc_graph_refuse(b->ctx, "hk_buffer_fill", "a fill of a buffer");
    if (!r && !value)
        r = hkc_fail(b->ctx, HK_EINVAL, "hk_buffer_fill: value is NULL");
    if (!r)
        r = check_writable(b, "hk_buffer_fill");
    if (r || !b->bytes)
        return r;
    return b->dev->be->ops->buf_fill(b, value);
}
