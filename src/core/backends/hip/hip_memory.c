/* The AMD backend's buffers: allocation in every mode, mmap registration
 * (with a device copy where the runtime refuses it), copies and fills. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_backend.h"

/* -------------------------------------------------------------- memory */

static int track(hk_buffer *b, hkc_gpu_buffer_kind kind, void *mem)
{
    hip_buffer *hb = calloc(1, sizeof *hb);
    if (!hb)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    hb->g.b = b;
    hb->g.dev = b->dev->index;
    hb->g.kind = kind;
    hb->mem = mem;
    b->impl = hb;
    hkc_gpu_buffers_add(&hip_impl_of(b->dev->be)->buffers, &hb->g);
    return 0;
}

int hkc_hip_buf_alloc(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    const hip_device *hd = &hip_impl_of(be)->devs[b->dev->index];
    hipError_t e = hkc_hip_use_dev(be, b->dev->index);
    size_t bytes = b->bytes ? b->bytes : 1;
    void *p = NULL;
    hkc_gpu_buffer_kind kind = HKC_GPU_BUF_DEVICE;
    if (e == hipSuccess) {
        switch (b->mode) {
        case HK_MEM_MANAGED:
            kind = HKC_GPU_BUF_MANAGED;
            if (!hd->pageable)
                hkc_warn(b->ctx, "managed memory on %s (%s): the device does not page on demand "
                                 "(XNACK off or no HMM), so it behaves as pinned host memory",
                         hd->name, hd->arch);
            e = hipMallocManaged(&p, bytes, hipMemAttachGlobal);
            b->kptr = b->hptr = p;
            break;
        case HK_MEM_HOST:
            kind = HKC_GPU_BUF_HOST;
            e = hipHostMalloc(&p, bytes, hipHostMallocMapped);
            if (e == hipSuccess) {
                b->hptr = p;
                e = hipHostGetDevicePointer(&b->kptr, p, 0);
                if (e != hipSuccess)
                    hipHostFree(p);
            }
            break;
        default:
            e = hipMalloc(&p, bytes);
            b->kptr = p;
            b->hptr = NULL;
            break;
        }
    }
    if (e != hipSuccess) {
        char what[160];
        snprintf(what, sizeof what, "allocating %zu bytes (%s) on %s", b->bytes,
                 hk_mem_mode_name(b->mode), hd->name);
        return hkc_hip_fail(b->ctx, e, HK_EBACKEND, what);
    }
    return track(b, kind, p);
}

void hkc_hip_release(hip_buffer *hb)
{
    switch (hb->g.kind) {
    case HKC_GPU_BUF_HOST:
        hipHostFree(hb->mem);
        break;
    case HKC_GPU_BUF_REGISTERED:
        hipHostUnregister(hb->mem);
        break;
    default: /* device, managed and staged copies */
        hipFree(hb->mem);
        break;
    }
}

void hkc_hip_buf_free(hk_buffer *b)
{
    hip_buffer *hb = b->impl;
    if (!hb)
        return;
    hkc_hip_use_dev(b->dev->be, b->dev->index);
    hkc_gpu_buffers_remove(&hip_impl_of(b->dev->be)->buffers, &hb->g);
    hkc_hip_release(hb);
    free(hb);
    b->impl = NULL;
}

/* The runtime's half of a staged copy's moves (hkc_gpu_map_move). */
typedef struct stage_xfer {
    hk_context *ctx;
    void *mem;
} stage_xfer;

static int stage_to_device(void *x, size_t off, void *bounce, size_t n)
{
    stage_xfer *s = x;
    hipError_t e = hipMemcpy((char *)s->mem + off, bounce, n, hipMemcpyHostToDevice);
    return e == hipSuccess ? 0 : hkc_hip_fail(s->ctx, e, HK_EBACKEND, "hipMemcpy");
}

static int stage_from_device(void *x, size_t off, void *bounce, size_t n)
{
    stage_xfer *s = x;
    hipError_t e = hipMemcpy(bounce, (char *)s->mem + off, n, hipMemcpyDeviceToHost);
    return e == hipSuccess ? 0 : hkc_hip_fail(s->ctx, e, HK_EBACKEND, "hipMemcpy");
}

/* A staged copy of a writable mapping goes back into the mapping (the core
 * msyncs it to the file after synchronize), when something may have changed
 * it since the last time; through this thread (hkc_gpu_map_move), so that
 * a file truncated meanwhile is an error naming it. */
int hkc_hip_write_back(hip_buffer *hb)
{
    if (!hb->g.dirty)
        return 0;
    hk_buffer *b = hb->g.b;
    stage_xfer x = {b->ctx, hb->mem};
    int r = hkc_gpu_map_move(b->dev->be, b, hb->host, b->bytes, 0, stage_from_device, &x);
    if (r == 0)
        hb->g.dirty = 0;
    return r;
}

/* mmap: register the mapping so kernels read the file's pages; where the
 * runtime refuses, kernels work on a device copy (written back on sync and
 * free when the mapping is writable), and the user is told. */
int hkc_hip_buf_register(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    const hip_device *hd = &hip_impl_of(be)->devs[b->dev->index];
    if (!b->bytes) {
        b->kptr = NULL;
        return 0;
    }
    hipError_t e = hkc_hip_use_dev(be, b->dev->index);
    if (e != hipSuccess)
        return hkc_hip_fail(b->ctx, e, HK_EBACKEND, "mmap: hipSetDevice");
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)b->hptr & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)b->hptr + b->bytes + page - 1) & ~(uintptr_t)(page - 1);
    unsigned flags = hipHostRegisterMapped;
#ifdef hipHostRegisterReadOnly /* ROCm 6 and newer */
    if (!b->map.writable)
        flags |= hipHostRegisterReadOnly;
#endif
    const char *call = "hipHostRegister";
    e = hipHostRegister((void *)lo, hi - lo, flags);
    if (e == hipSuccess) {
        void *dptr = NULL;
        call = "hipHostGetDevicePointer";
        e = hipHostGetDevicePointer(&dptr, (void *)lo, 0);
        if (e == hipSuccess) {
            if (!hd->pageable)
                hkc_warn(b->ctx, "file %s: %s has no HMM, so registering the mapping pinned all of "
                                 "it: its %zu bytes were read from disk now, not on first touch",
                         b->map.path, hd->name, b->bytes);
            b->kptr = (char *)dptr + ((uintptr_t)b->hptr - lo);
            return track(b, HKC_GPU_BUF_REGISTERED, (void *)lo);
        }
        hipHostUnregister((void *)lo);
    }
    /* Registration refused: a device copy. */
    char eb[300];
    size_t used = (size_t)snprintf(eb, sizeof eb, "%s: ", call);
    hkc_hip_error(e, eb + used, sizeof eb - used);
    void *copy = NULL;
    hipError_t ea = hipMalloc(&copy, b->bytes);
    if (ea == hipSuccess) {
        stage_xfer x = {b->ctx, copy};
        int rm = hkc_gpu_map_move(be, b, b->hptr, b->bytes, 1, stage_to_device, &x);
        if (rm != 0) {
            hipFree(copy);
            return rm; /* the file, or the runtime's error, is named */
        }
    }
    if (ea != hipSuccess) {
        char what[512];
        snprintf(what, sizeof what, "mmap '%s': the runtime cannot register the mapping (%s) and a "
                                    "%zu-byte device copy failed", b->map.path, eb, b->bytes);
        return hkc_hip_fail(b->ctx, ea, HK_EBACKEND, what);
    }
    hkc_warn(b->ctx, "file %s: the mapping cannot be registered (%s); kernels %s",
             b->map.path, eb,
             b->map.writable ? "work on a device copy written back on sync/free" : "read a device copy of it");
    b->kptr = copy;
    int r = track(b, HKC_GPU_BUF_STAGED, copy);
    if (r == 0) {
        hip_buffer *hb = b->impl;
        hb->host = b->hptr;
        hip_impl_of(be)->buffers.any_staged = 1;
        b->hptr = NULL; /* the host reads the copy through download, never a stale mapping */
    } else {
        hipFree(copy);
    }
    return r;
}

/* The last chance for a staged copy's changes (hk_buffer_free synced first;
 * this catches a sync that failed part way, and context teardown). */
void hkc_hip_final_write_back(hk_buffer *b, hip_buffer *hb)
{
    if (hb->g.kind != HKC_GPU_BUF_STAGED || !b->map.writable || !hb->g.dirty)
        return;
    hipError_t e = hkc_hip_use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess)
        e = hipDeviceSynchronize();
    char eb[512];
    if (e != hipSuccess)
        hkc_hip_error(e, eb, sizeof eb);
    else if (hkc_hip_write_back(hb) != 0)
        snprintf(eb, sizeof eb, "%s", hk_errmsg(b->ctx));
    else
        return;
    hkc_warn(b->ctx, "file %s: kernels' changes could not be written back: %s", b->map.path, eb);
}

void hkc_hip_buf_unregister(hk_buffer *b)
{
    hip_buffer *hb = b->impl;
    if (hb)
        hkc_hip_final_write_back(b, hb);
    if (hb && hb->g.kind == HKC_GPU_BUF_STAGED)
        b->hptr = hb->host;
    hkc_hip_buf_free(b);
}

static int copy_fail(hk_buffer *b, hipError_t e, const char *what, size_t bytes)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s of %zu bytes", what, bytes);
    return hkc_hip_fail(b->ctx, e, HK_EBACKEND, msg);
}

/* A registered mapping (hptr set) the runtime reads or writes, maybe on
 * this thread: its pages are touched here first, so that a file truncated
 * before the call fails naming it instead of raising SIGBUS in the runtime. */
static int touch_mapped(hk_buffer *b, size_t offset, size_t bytes, const char *what)
{
    if (!b->hptr || !hkc_gpu_file_of(b))
        return 0;
    return hkc_gpu_map_touch(b->dev->be, b, (char *)b->hptr + offset, bytes, what);
}

int hkc_hip_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    int r = touch_mapped(b, offset, bytes, "writing");
    if (r)
        return r;
    hipError_t e = hkc_hip_use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess)
        e = hipMemcpy((char *)b->kptr + offset, src, bytes, hipMemcpyHostToDevice);
    if (e != hipSuccess)
        return copy_fail(b, e, "upload", bytes);
    hkc_gpu_buffers_mark_dirty(b);
    return 0;
}

int hkc_hip_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    int r = touch_mapped(b, offset, bytes, "reading");
    if (r)
        return r;
    hipError_t e = hkc_hip_use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess)
        e = hipMemcpy(dst, (char *)b->kptr + offset, bytes, hipMemcpyDeviceToHost);
    return e == hipSuccess ? 0 : copy_fail(b, e, "download", bytes);
}

int hkc_hip_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                        size_t bytes)
{
    int r = touch_mapped(src, src_offset, bytes, "copying");
    if (!r)
        r = touch_mapped(dst, dst_offset, bytes, "copying");
    if (r)
        return r;
    hipError_t e = hkc_hip_use_dev(dst->dev->be, dst->dev->index);
    if (e == hipSuccess)
        e = hipMemcpy((char *)dst->kptr + dst_offset, (char *)src->kptr + src_offset, bytes,
                      hipMemcpyDeviceToDevice);
    if (e != hipSuccess)
        return copy_fail(dst, e, "copy", bytes);
    hkc_gpu_buffers_mark_dirty(dst);
    return 0;
}

int hkc_hip_buf_fill(hk_buffer *b, const void *value)
{
    size_t es = hk_dtype_size(b->dtype);
    hipDeviceptr_t p = b->kptr;
    hipError_t e = hkc_hip_use_dev(b->dev->be, b->dev->index);
    if (e == hipSuccess) {
        if (es == 1) {
            e = hipMemsetD8(p, *(const uint8_t *)value, b->count);
        } else if (es == 2) {
            uint16_t v;
            memcpy(&v, value, 2);
            e = hipMemsetD16(p, v, b->count);
        } else if (es == 4) {
            uint32_t v;
            memcpy(&v, value, 4);
            e = hipMemsetD32(p, (int)v, b->count);
        } else {
            /* One element, then doubling copies: log2(count) calls. */
            e = hipMemcpy(p, value, es, hipMemcpyHostToDevice);
            for (size_t done = es; e == hipSuccess && done < b->bytes;) {
                size_t n = done < b->bytes - done ? done : b->bytes - done;
                e = hipMemcpy((char *)p + done, p, n, hipMemcpyDeviceToDevice);
                done += n;
            }
        }
    }
    if (e != hipSuccess)
        return copy_fail(b, e, "fill", b->bytes);
    hkc_gpu_buffers_mark_dirty(b);
    return 0;
}
