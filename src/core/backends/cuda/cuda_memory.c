/* The NVIDIA backend's buffers: allocation in every mode, mmap
 * registration, copies and fills, and the list of live buffers.
 *
 * Writable file mappings. The kernel refuses long-term pins of ext4 file
 * pages, so cuMemHostRegister fails for them (tmpfs works; DESIGN.md).
 * Those buffers get a device copy instead (HKC_GPU_BUF_STAGED), written back
 * to the mapping by `synchronize` (which hk_buffer_sync calls before its
 * msync) and by buf_unregister at free: the vtable has no per-buffer sync
 * slot, so synchronize writes back every dirty staged buffer of its device.
 * Their host pointer is NULL, so the core and the REPL go through
 * upload/download and never read a stale mapping. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_backend.h"

static hk_buffer *root_of(hk_buffer *b)
{
    return b->parent ? b->parent : b;
}

/* ---------------------------------------------------------------- buffers */

static int is_current(cuda_impl *c, const cuda_buffer *cb)
{
    return cb->generation == hkc_cuda_epoch(&c->devs[cb->g.dev]);
}

/* Refuses a buffer from before a reset: its memory is gone. */
static int check_fresh(hk_buffer *b)
{
    cuda_buffer *cb = root_of(b)->impl;
    cuda_impl *c = cuda_impl_of(b->dev->be);
    if (!cb || is_current(c, cb))
        return 0;
    char k[512];
    hkc_cuda_fault_names(&c->devs[cb->g.dev], k, sizeof k);
    return hkc_fail(b->ctx, HK_ESTATE, "buffer allocated before the GPU context was reset after a "
                                       "fault in %s; allocate it again", k);
}

static void *dev_ptr(CUdeviceptr p) { return (void *)(uintptr_t)p; }
static CUdeviceptr kptr_of(const hk_buffer *b) { return (CUdeviceptr)(uintptr_t)b->kptr; }

int hkc_cuda_buf_alloc(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    cuda_impl *c = cuda_impl_of(be);
    int d = b->dev->index;
    cuda_buffer *cb = calloc(1, sizeof *cb);
    if (!cb)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    cb->g.b = b;
    cb->g.dev = d;
    cb->bytes = b->bytes ? b->bytes : 1; /* the driver refuses 0 bytes */
    CUresult r = hkc_cuda_use_dev(c, d);
    cb->generation = hkc_cuda_epoch(&c->devs[d]);
    const char *what = "cuMemAlloc";
    if (r == CUDA_SUCCESS) {
        switch (b->mode) {
        case HK_MEM_DEVICE:
            cb->g.kind = HKC_GPU_BUF_DEVICE;
            r = cuMemAlloc(&cb->dptr, cb->bytes);
            break;
        case HK_MEM_MANAGED:
            cb->g.kind = HKC_GPU_BUF_MANAGED;
            what = "cuMemAllocManaged";
            r = cuMemAllocManaged(&cb->dptr, cb->bytes, CU_MEM_ATTACH_GLOBAL);
            break;
        case HK_MEM_HOST:
            cb->g.kind = HKC_GPU_BUF_HOST;
            what = "cuMemHostAlloc";
            r = cuMemHostAlloc(&cb->host, cb->bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
            if (r == CUDA_SUCCESS) {
                what = "cuMemHostGetDevicePointer";
                r = cuMemHostGetDevicePointer(&cb->dptr, cb->host, 0);
                if (r != CUDA_SUCCESS) {
                    cuMemFreeHost(cb->host);
                    cb->host = NULL;
                }
            }
            break;
        default:
            free(cb);
            return hkc_fail(b->ctx, HK_EINVAL, "cuda: cannot allocate %s memory", hk_mem_mode_name(b->mode));
        }
    }
    if (r != CUDA_SUCCESS) {
        free(cb);
        int code = r == CUDA_ERROR_OUT_OF_MEMORY ? HK_ENOMEM : HK_EBACKEND;
        return hkc_cuda_fail(be, d, r, NULL, code, "cannot allocate %zu bytes of %s memory on cuda:%d (%s)",
                       b->bytes, hk_mem_mode_name(b->mode), d, what);
    }
    b->kptr = dev_ptr(cb->dptr);
    b->hptr = b->mode == HK_MEM_MANAGED ? dev_ptr(cb->dptr) : b->mode == HK_MEM_HOST ? cb->host : NULL;
    b->impl = cb;
    hkc_gpu_buffers_add(&c->buffers, &cb->g);
    return 0;
}

/* Memory from before a reset went with the old context: freeing its address
 * now could free someone else's new allocation at the same place. */
static void release_memory(cuda_impl *c, cuda_buffer *cb)
{
    if (!is_current(c, cb) || hkc_cuda_use_dev(c, cb->g.dev) != CUDA_SUCCESS)
        return;
    switch (cb->g.kind) {
    case HKC_GPU_BUF_DEVICE:
    case HKC_GPU_BUF_MANAGED:
    case HKC_GPU_BUF_STAGED:
        cuMemFree(cb->dptr);
        break;
    case HKC_GPU_BUF_HOST:
        cuMemFreeHost(cb->host);
        break;
    case HKC_GPU_BUF_REGISTERED:
        cuMemHostUnregister(cb->host);
        break;
    }
}

void hkc_cuda_buf_free(hk_buffer *b)
{
    cuda_buffer *cb = b->impl;
    if (!cb)
        return;
    cuda_impl *c = cuda_impl_of(b->dev->be);
    hkc_gpu_buffers_remove(&c->buffers, &cb->g);
    release_memory(c, cb);
    free(cb);
    b->impl = NULL;
}

/* The runtime's half of a staged copy's moves (hkc_gpu_map_move). */
typedef struct stage_xfer {
    hkc_backend *be;
    int dev;
    CUdeviceptr dptr;
} stage_xfer;

static int stage_to_device(void *x, size_t off, void *bounce, size_t n)
{
    stage_xfer *s = x;
    CUresult r = cuMemcpyHtoD(s->dptr + off, bounce, n);
    return r == CUDA_SUCCESS ? 0 : hkc_cuda_fail(s->be, s->dev, r, NULL, HK_EBACKEND, "cuMemcpyHtoD");
}

static int stage_from_device(void *x, size_t off, void *bounce, size_t n)
{
    stage_xfer *s = x;
    CUresult r = cuMemcpyDtoH(bounce, s->dptr + off, n);
    return r == CUDA_SUCCESS ? 0 : hkc_cuda_fail(s->be, s->dev, r, NULL, HK_EBACKEND, "cuMemcpyDtoH");
}

/* Staged copy -> the mapping, through this thread (hkc_gpu_map_move: a
 * file truncated meanwhile is an error naming it, not SIGBUS in the
 * driver). via_fail: report through hkc_fail (sync); else warn (free,
 * destroy: nobody gets a return code). */
int hkc_cuda_write_back(hkc_backend *be, cuda_buffer *cb, int via_fail)
{
    cuda_impl *c = cuda_impl_of(be);
    hk_buffer *b = cb->g.b;
    stage_xfer x = {be, cb->g.dev, cb->dptr};
    CUresult cr = hkc_cuda_use_dev(c, cb->g.dev);
    int r = cr == CUDA_SUCCESS ? hkc_gpu_map_move(be, b, cb->host, b->bytes, 0, stage_from_device, &x)
                               : hkc_cuda_fail(be, cb->g.dev, cr, NULL, HK_EBACKEND, "cuCtxSetCurrent");
    if (r == 0) {
        cb->g.dirty = 0;
        return 0;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", hk_errmsg(be->ctx));
    if (via_fail)
        return hkc_fail(be->ctx, HK_EIO, "writing '%s' back from its device copy: %s", b->map.path, why);
    hkc_warn(be->ctx, "file %s: kernels' changes could not be written back: %s", b->map.path, why);
    return HK_EIO;
}

int hkc_cuda_buf_register(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    cuda_impl *c = cuda_impl_of(be);
    int d = b->dev->index;
    if (!b->bytes) { /* the core mapped an inaccessible page: nothing to register */
        b->kptr = NULL;
        return 0;
    }
    cuda_buffer *cb = calloc(1, sizeof *cb);
    if (!cb)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    cb->g.b = b;
    cb->g.dev = d;
    CUresult r = hkc_cuda_use_dev(c, d);
    cb->generation = hkc_cuda_epoch(&c->devs[d]);
    if (r != CUDA_SUCCESS) {
        free(cb);
        return hkc_cuda_fail(be, d, r, NULL, HK_EBACKEND, "mmap '%s': cuCtxSetCurrent", b->map.path);
    }
    /* The core maps from a page-aligned file offset, so hptr is page aligned;
     * round the length up to whole pages (the last one is mapped). */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)b->hptr & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)b->hptr + b->bytes + page - 1) & ~(uintptr_t)(page - 1);
    unsigned flags = CU_MEMHOSTREGISTER_DEVICEMAP | (b->map.writable ? 0 : CU_MEMHOSTREGISTER_READ_ONLY);
    r = cuMemHostRegister((void *)lo, hi - lo, flags);
    if (r == CUDA_SUCCESS) {
        CUresult r2 = cuMemHostGetDevicePointer(&cb->dptr, b->hptr, 0);
        if (r2 != CUDA_SUCCESS) {
            cuMemHostUnregister((void *)lo);
            r = r2;
        }
    }
    if (r == CUDA_SUCCESS) {
        cb->g.kind = HKC_GPU_BUF_REGISTERED;
        cb->host = (void *)lo;
        cb->bytes = hi - lo;
        b->kptr = dev_ptr(cb->dptr);
        b->impl = cb;
        hkc_gpu_buffers_add(&c->buffers, &cb->g);
        return 0;
    }
    if (hkc_cuda_is_sticky(r)) {
        free(cb);
        return hkc_cuda_fail(be, d, r, NULL, HK_EFAULT, "mmap '%s'", b->map.path);
    }
    /* Registration refused: work on a device copy. */
    char eb[256], eb2[256];
    hkc_cuda_error(r, eb, sizeof eb);
    CUresult ra = cuMemAlloc(&cb->dptr, b->bytes);
    if (ra == CUDA_SUCCESS) {
        stage_xfer x = {be, d, cb->dptr};
        int rm = hkc_gpu_map_move(be, b, b->hptr, b->bytes, 1, stage_to_device, &x);
        if (rm != 0) {
            cuMemFree(cb->dptr);
            free(cb);
            return rm; /* the file, or the driver's error, is named */
        }
    }
    if (ra != CUDA_SUCCESS) {
        free(cb);
        if (hkc_cuda_is_sticky(ra))
            return hkc_cuda_fail(be, d, ra, NULL, HK_EFAULT, "mmap '%s'", b->map.path);
        return hkc_fail(b->ctx, ra == CUDA_ERROR_OUT_OF_MEMORY ? HK_ENOMEM : HK_EBACKEND,
                        "mmap '%s': the driver cannot register the mapping (cuMemHostRegister: %s) "
                        "and a %zu-byte device copy failed: %s", b->map.path, eb, b->bytes,
                        hkc_cuda_error(ra, eb2, sizeof eb2));
    }
    if (b->map.writable)
        hkc_warn(b->ctx, "file %s: writable file mappings cannot be pinned here (cuMemHostRegister: %s); "
                         "kernels work on a device copy written back on sync/free", b->map.path, eb);
    else
        hkc_warn(b->ctx, "file %s: the mapping cannot be registered (cuMemHostRegister: %s); "
                         "kernels read a device copy of it", b->map.path, eb);
    cb->g.kind = HKC_GPU_BUF_STAGED;
    c->buffers.any_staged = 1;
    cb->host = b->hptr;
    cb->bytes = b->bytes;
    b->kptr = dev_ptr(cb->dptr);
    b->hptr = NULL; /* the host reads the copy through download, never a stale mapping */
    b->impl = cb;
    hkc_gpu_buffers_add(&c->buffers, &cb->g);
    return 0;
}

void hkc_cuda_buf_unregister(hk_buffer *b)
{
    cuda_buffer *cb = b->impl;
    if (!cb)
        return;
    hkc_backend *be = b->dev->be;
    cuda_impl *c = cuda_impl_of(be);
    /* hk_buffer_free synced first; this catches a sync that failed part way. */
    if (cb->g.kind == HKC_GPU_BUF_STAGED && cb->g.dirty && b->map.writable && is_current(c, cb))
        hkc_cuda_write_back(be, cb, 0);
    hkc_gpu_buffers_remove(&c->buffers, &cb->g);
    release_memory(c, cb);
    free(cb);
    b->impl = NULL;
}

/* A registered mapping (hptr set) the driver reads or writes, maybe on
 * this thread: its pages are touched here first, so that a file truncated
 * before the call fails naming it instead of raising SIGBUS in the driver. */
static int touch_mapped(hk_buffer *b, size_t offset, size_t bytes, const char *what)
{
    if (!b->hptr || !hkc_gpu_file_of(b))
        return 0;
    return hkc_gpu_map_touch(b->dev->be, b, (char *)b->hptr + offset, bytes, what);
}

int hkc_cuda_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    hkc_backend *be = b->dev->be;
    int d = b->dev->index, r = check_fresh(b);
    if (!r)
        r = touch_mapped(b, offset, bytes, "writing");
    if (r)
        return r;
    CUresult cr = hkc_cuda_use_dev(cuda_impl_of(be), d);
    if (cr == CUDA_SUCCESS)
        cr = cuMemcpyHtoD(kptr_of(b) + offset, src, bytes);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(be, d, cr, NULL, HK_EBACKEND, "upload of %zu bytes (cuMemcpyHtoD)", bytes);
    hkc_gpu_buffers_mark_dirty(b);
    return 0;
}

/* Small downloads (an op's out-of-range flag, a count, one element read
 * from Lua) go through a pinned bounce: a copy into pageable memory stages
 * through the driver's own buffer and costs about 8 us on the H100 where
 * an async copy into pinned memory and a stream sync cost about 2. */
#define CUDA_STAGE_BYTES 4096

void hkc_cuda_stage_free(cuda_device *cd)
{
    /* a stage from before a context reset died with that context */
    if (cd->stage && cd->stage_gen == hkc_cuda_epoch(cd))
        cuMemFreeHost(cd->stage);
    cd->stage = NULL;
}

static CUresult small_download(cuda_device *cd, void *dst, CUdeviceptr src, size_t bytes)
{
    if (cd->stage && cd->stage_gen != hkc_cuda_epoch(cd))
        cd->stage = NULL;
    CUresult cr = CUDA_SUCCESS;
    if (!cd->stage) {
        cr = cuMemHostAlloc(&cd->stage, CUDA_STAGE_BYTES, 0);
        if (cr != CUDA_SUCCESS) {
            cd->stage = NULL;
            return cuMemcpyDtoH(dst, src, bytes);
        }
        cd->stage_gen = hkc_cuda_epoch(cd);
    }
    /* the legacy stream 0 orders it after all earlier work, as cuMemcpyDtoH */
    cr = cuMemcpyDtoHAsync(cd->stage, src, bytes, 0);
    if (cr == CUDA_SUCCESS)
        cr = cuStreamSynchronize(0);
    if (cr == CUDA_SUCCESS)
        memcpy(dst, cd->stage, bytes);
    return cr;
}

int hkc_cuda_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    hkc_backend *be = b->dev->be;
    int d = b->dev->index, r = check_fresh(b);
    if (!r)
        r = touch_mapped(b, offset, bytes, "reading");
    if (r)
        return r;
    cuda_impl *c = cuda_impl_of(be);
    CUresult cr = hkc_cuda_use_dev(c, d);
    if (cr == CUDA_SUCCESS && bytes <= CUDA_STAGE_BYTES)
        cr = small_download(&c->devs[d], dst, kptr_of(b) + offset, bytes);
    else if (cr == CUDA_SUCCESS)
        cr = cuMemcpyDtoH(dst, kptr_of(b) + offset, bytes);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(be, d, cr, NULL, HK_EBACKEND, "download of %zu bytes (cuMemcpyDtoH)", bytes);
    return 0;
}

/* cuMemcpyDtoD does not promise memmove semantics: overlapping ranges of
 * one buffer go through a temporary device buffer. */
int hkc_cuda_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                         size_t bytes)
{
    hkc_backend *be = dst->dev->be;
    int d = dst->dev->index, r = check_fresh(dst);
    if (!r)
        r = check_fresh(src);
    if (!r)
        r = touch_mapped(src, src_offset, bytes, "copying");
    if (!r)
        r = touch_mapped(dst, dst_offset, bytes, "copying");
    if (r)
        return r;
    CUdeviceptr to = kptr_of(dst) + dst_offset, from = kptr_of(src) + src_offset;
    if (to == from)
        return 0;
    CUresult cr = hkc_cuda_use_dev(cuda_impl_of(be), d);
    if (cr == CUDA_SUCCESS) {
        if (to < from + bytes && from < to + bytes) {
            CUdeviceptr tmp;
            cr = cuMemAlloc(&tmp, bytes);
            if (cr == CUDA_SUCCESS) {
                cr = cuMemcpyDtoD(tmp, from, bytes);
                if (cr == CUDA_SUCCESS)
                    cr = cuMemcpyDtoD(to, tmp, bytes);
                cuMemFree(tmp);
            }
        } else {
            cr = cuMemcpyDtoD(to, from, bytes);
        }
    }
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(be, d, cr, NULL, cr == CUDA_ERROR_OUT_OF_MEMORY ? HK_ENOMEM : HK_EBACKEND,
                       "copy of %zu bytes (cuMemcpyDtoD)", bytes);
    hkc_gpu_buffers_mark_dirty(dst);
    return 0;
}

int hkc_cuda_buf_fill(hk_buffer *b, const void *value)
{
    hkc_backend *be = b->dev->be;
    int d = b->dev->index, r = check_fresh(b);
    if (r)
        return r;
    size_t es = hk_dtype_size(b->dtype);
    CUdeviceptr p = kptr_of(b);
    CUresult cr = hkc_cuda_use_dev(cuda_impl_of(be), d);
    if (cr == CUDA_SUCCESS) {
        if (es == 1) {
            cr = cuMemsetD8(p, *(const uint8_t *)value, b->count);
        } else if (es == 2) {
            uint16_t v;
            memcpy(&v, value, 2);
            cr = cuMemsetD16(p, v, b->count);
        } else if (es == 4) {
            uint32_t v;
            memcpy(&v, value, 4);
            cr = cuMemsetD32(p, v, b->count);
        } else {
            /* One element, then doubling copies: log2(count) calls. */
            cr = cuMemcpyHtoD(p, value, es);
            size_t done = es;
            while (cr == CUDA_SUCCESS && done < b->bytes) {
                size_t n = done < b->bytes - done ? done : b->bytes - done;
                cr = cuMemcpyDtoD(p + done, p, n);
                done += n;
            }
        }
    }
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(be, d, cr, NULL, HK_EBACKEND, "fill of %zu bytes", b->bytes);
    hkc_gpu_buffers_mark_dirty(b);
    return 0;
}

/* ---------------------------------------------------- copies on a stream */

/* The async forms: pinned memory (host-mode buffers, registered mappings)
 * overlaps with kernels; pageable memory is staged by the driver, which
 * returns once an upload's bytes are staged and a download is done. */
int hkc_cuda_stream_upload(hk_stream *s, hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    CUstream st;
    int d = b->dev->index, r = check_fresh(b);
    if (!r)
        r = hkc_cuda_stream_handle(s, &st);
    if (r)
        return r;
    CUresult cr = cuMemcpyHtoDAsync(kptr_of(b) + offset, src, bytes, st);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(b->dev->be, d, cr, NULL, HK_EBACKEND, "upload of %zu bytes (cuMemcpyHtoDAsync)",
                             bytes);
    hkc_gpu_buffers_mark_dirty(b);
    return 0;
}

int hkc_cuda_stream_download(hk_stream *s, hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    CUstream st;
    int d = b->dev->index, r = check_fresh(b);
    if (!r)
        r = hkc_cuda_stream_handle(s, &st);
    if (r)
        return r;
    CUresult cr = cuMemcpyDtoHAsync(dst, kptr_of(b) + offset, bytes, st);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(b->dev->be, d, cr, NULL, HK_EBACKEND,
                             "download of %zu bytes (cuMemcpyDtoHAsync)", bytes);
    return 0;
}

/* Host-mode and registered buffers have device addresses too (kptr):
 * every pair of buffers is one copy on the stream, its direction taken
 * from the addresses (unified addressing). */
int hkc_cuda_stream_copy(hk_stream *s, hk_buffer *dst, size_t dst_offset, hk_buffer *src,
                         size_t src_offset, size_t bytes)
{
    CUstream st;
    int d = dst->dev->index, r = check_fresh(dst);
    if (!r)
        r = check_fresh(src);
    if (!r)
        r = hkc_cuda_stream_handle(s, &st);
    if (r)
        return r;
    CUresult cr = cuMemcpyAsync(kptr_of(dst) + dst_offset, kptr_of(src) + src_offset, bytes, st);
    if (cr != CUDA_SUCCESS)
        return hkc_cuda_fail(dst->dev->be, d, cr, NULL, HK_EBACKEND, "copy of %zu bytes (cuMemcpyAsync)",
                             bytes);
    hkc_gpu_buffers_mark_dirty(dst);
    return 0;
}
