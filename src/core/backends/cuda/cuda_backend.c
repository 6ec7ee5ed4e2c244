/* The NVIDIA backend: the CUDA driver API behind the vtable.
 *
 * Contexts. Each device uses its primary context, retained at probe. The
 * calling thread may change between calls, so every slot makes the context
 * current first (use_dev).
 *
 * Faults. A kernel fault is sticky: every later call in the context returns
 * the same error. Whichever call sees it first (synchronize, an event, a
 * copy, the next launch) resets the primary context, bumps the device's
 * generation and returns HK_EFAULT naming the kernels launched since the
 * last synchronize. Objects remember the generation they were made in:
 * modules and kernels are reloaded from their image on next use; buffers
 * and events from before are refused with a message saying why. The
 * generation is per process (a reset reaches every hk_context using the
 * device), so it lives in a static table, not in cuda_impl.
 *
 * Writable file mappings. The kernel refuses long-term pins of ext4 file
 * pages, so cuMemHostRegister fails for them (tmpfs works; DESIGN.md).
 * Those buffers get a device copy instead (CUDA_BUF_STAGED), written back
 * to the mapping by `synchronize` (which hk_buffer_sync calls before its
 * msync) and by buf_unregister at free: the vtable has no per-buffer sync
 * slot, so synchronize writes back every dirty staged buffer of its device.
 * Their host pointer is NULL, so the core and the REPL go through
 * upload/download and never read a stale mapping. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_backend.h"

__attribute__((visibility("default"))) const unsigned hkc_backend_module_abi = HKC_BACKEND_MODULE_ABI;

/* ------------------------------------------------ process-wide fault state */

/* Per CUDA device ordinal: how many times its primary context was reset in
 * this process, and which kernels were running at the last reset. */
static atomic_uint reset_epoch[CUDA_MAX_DEVICES];
/* Bumped whenever hipkit makes a context stop being current (see use_dev). */
static atomic_uint ctx_epoch;
static char fault_kernels[CUDA_MAX_DEVICES][512];
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned epoch_of(const cuda_device *cd) { return atomic_load(&reset_epoch[cd->dev]); }

static void fault_names(const cuda_device *cd, char *out, size_t cap)
{
    pthread_mutex_lock(&fault_lock);
    snprintf(out, cap, "%s", fault_kernels[cd->dev][0] ? fault_kernels[cd->dev] : "a kernel");
    pthread_mutex_unlock(&fault_lock);
}

/* ------------------------------------------------------------ driver glue */

const char *hkc_cuda_error(CUresult r, char *buf, size_t cap)
{
    const char *name = NULL, *text = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    if (cuGetErrorString(r, &text) != CUDA_SUCCESS)
        text = NULL;
    if (r == CUDA_ERROR_STUB_LIBRARY) /* the stub answers nothing, not even its own name */
        snprintf(buf, cap, "CUDA_ERROR_STUB_LIBRARY: libcuda is the toolkit's stub, not an NVIDIA "
                           "driver (is the driver installed?)");
    else if (name)
        snprintf(buf, cap, "%s: %s", name, text ? text : "no description");
    else
        snprintf(buf, cap, "CUDA error %d", (int)r);
    return buf;
}

/* Errors after which the context is unusable until it is reset. */
static int is_sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
        return 1;
    default:
        return 0;
    }
}

static cuda_impl *impl_of(hkc_backend *be) { return be->impl; }

/* Makes device d's context current on this thread. A reset made through
 * another hk_context (same process, same device) shows as a newer epoch:
 * take the primary context's handle again. */
static CUresult use_dev(cuda_impl *c, int d)
{
    cuda_device *cd = &c->devs[d];
    unsigned e = epoch_of(cd);
    if (cd->generation != e) {
        CUcontext nc;
        if (cuDevicePrimaryCtxRetain(&nc, cd->dev) == CUDA_SUCCESS) {
            cd->ctx = nc;
            cd->retains++;
        }
        cd->generation = e;
    }
    if (!cd->ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* Every launch passes here, so the context this thread made current is
     * remembered, tagged with a process-wide count of the times hipkit took
     * a context away (teardown, fault reset): any of those makes every
     * thread ask the driver again. A program that switches contexts itself
     * on a thread hipkit uses must use the primary context (CuPy and PyTorch
     * do) or call hk_synchronize after switching back. */
    static _Thread_local CUcontext cached;
    static _Thread_local unsigned cached_epoch;
    unsigned ep = atomic_load_explicit(&ctx_epoch, memory_order_relaxed);
    if (cached == cd->ctx && cached_epoch == ep)
        return CUDA_SUCCESS;
    CUcontext cur = NULL;
    CUresult r = CUDA_SUCCESS;
    if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != cd->ctx)
        r = cuCtxSetCurrent(cd->ctx);
    if (r == CUDA_SUCCESS) {
        cached = cd->ctx;
        cached_epoch = ep;
    }
    return r;
}

static hk_buffer *root_of(hk_buffer *b)
{
    return b->parent ? b->parent : b;
}

/* Called with a sticky error: says so in msg, resets the device's primary
 * context and bumps its generation. Staged mmap copies die with the
 * context; their unsynced changes are reported lost. */
static void fault_reset(hkc_backend *be, int d, CUresult r, hkc_strbuf *msg)
{
    cuda_impl *c = impl_of(be);
    cuda_device *cd = &c->devs[d];
    char eb[256];
    hkc_cuda_error(r, eb, sizeof eb);
    pthread_mutex_lock(&c->lock);
    char kernels[512];
    snprintf(kernels, sizeof kernels, "%s", cd->last_kernels);
    cd->last_kernels[0] = 0;
    if (kernels[0])
        hkc_strbuf_printf(msg, "a kernel faulted on cuda:%d (after launching %s): %s", d, kernels, eb);
    else
        hkc_strbuf_printf(msg, "a kernel faulted on cuda:%d: %s", d, eb);

    /* Release ours, reset (in case another user holds it), take it again. */
    if (c->driver)
        cuCtxSetCurrent(NULL);
    atomic_fetch_add(&ctx_epoch, 1);
    if (cd->ctx && cd->retains > 0) {
        cuDevicePrimaryCtxRelease(cd->dev);
        cd->retains--;
    }
    cuDevicePrimaryCtxReset(cd->dev);
    CUcontext nc = NULL;
    CUresult rr = cuDevicePrimaryCtxRetain(&nc, cd->dev);
    if (rr == CUDA_SUCCESS) {
        cd->ctx = nc;
        cd->retains++;
        cuCtxSetCurrent(nc);
        hkc_strbuf_puts(msg, "; the GPU context was reset: buffers and modules from before are invalid");
    } else {
        /* Measured on an H100 (driver 580): after CUDA_ERROR_ILLEGAL_ADDRESS
         * even a reset primary context cannot be retained again; the
         * driver keeps the error for the life of the process. */
        char eb2[256];
        cd->ctx = NULL;
        hkc_cuda_error(rr, eb2, sizeof eb2);
        snprintf(cd->dead, sizeof cd->dead,
                 "cuda:%d cannot be used again in this process: CUDA keeps the fault%s%s until the "
                 "process ends (a new context fails with %s); restart hipkit to use this GPU again, "
                 "the host backend still works",
                 d, kernels[0] ? " of " : "", kernels, eb2);
        hkc_strbuf_printf(msg, "; %s", cd->dead);
    }
    pthread_mutex_lock(&fault_lock);
    snprintf(fault_kernels[cd->dev], sizeof fault_kernels[cd->dev], "%s", kernels);
    unsigned old = atomic_fetch_add(&reset_epoch[cd->dev], 1);
    pthread_mutex_unlock(&fault_lock);
    cd->generation = old + 1;

    for (cuda_buffer *cb = c->buffers; cb; cb = cb->next)
        if (cb->dev == d && cb->kind == CUDA_BUF_STAGED && cb->dirty && cb->generation == old) {
            hkc_warn(be->ctx, "file %s: changes kernels or uploads made since the last sync are lost "
                              "(the GPU context was reset)", cb->b->map.path);
            cb->dirty = 0;
        }
    pthread_mutex_unlock(&c->lock);
}

/* One failed driver call: a sticky error goes through fault_reset and
 * becomes HK_EFAULT; anything else is `code` with "WHAT: ERROR". The message
 * goes into err when given, else to hkc_fail. */
static int cu_fail(hkc_backend *be, int d, CUresult r, hkc_strbuf *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int cu_fail(hkc_backend *be, int d, CUresult r, hkc_strbuf *err, int code, const char *fmt, ...)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    cuda_device *cd = &impl_of(be)->devs[d];
    if (cd->dead[0]) {
        code = HK_EUNAVAIL;
        hkc_strbuf_puts(&msg, cd->dead);
    } else if (is_sticky(r)) {
        code = HK_EFAULT;
        fault_reset(be, d, r, &msg);
    } else {
        char eb[256];
        va_list ap;
        va_start(ap, fmt);
        hkc_strbuf_vprintf(&msg, fmt, ap);
        va_end(ap);
        hkc_strbuf_printf(&msg, ": %s", hkc_cuda_error(r, eb, sizeof eb));
    }
    if (err)
        hkc_strbuf_append(err, msg.data, msg.len);
    else
        hkc_fail(be->ctx, code, "%s", msg.data);
    hkc_strbuf_free(&msg);
    return code;
}

/* ------------------------------------------------------------ probe, info */

/* The devices the driver has, retained into c; their count. */
static int probe_devices(cuda_impl *c, hkc_strbuf *reason)
{
    char eb[256];
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
        hkc_strbuf_printf(reason, "cuInit: %s", hkc_cuda_error(r, eb, sizeof eb));
        return 0;
    }
    int count = 0;
    r = cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
        hkc_strbuf_printf(reason, "cuDeviceGetCount: %s", hkc_cuda_error(r, eb, sizeof eb));
        return 0;
    }
    if (count <= 0) {
        hkc_strbuf_puts(reason, "the driver reports no CUDA devices");
        return 0;
    }
    if (count > CUDA_MAX_DEVICES)
        count = CUDA_MAX_DEVICES;
    for (int i = 0; i < count; i++) {
        cuda_device *cd = &c->devs[c->ndev];
        CUdevice dev;
        r = cuDeviceGet(&dev, i);
        if (r == CUDA_SUCCESS && (dev < 0 || dev >= CUDA_MAX_DEVICES))
            continue; /* ordinals index reset_epoch */
        if (r == CUDA_SUCCESS)
            r = cuDevicePrimaryCtxRetain(&cd->ctx, dev);
        if (r != CUDA_SUCCESS) {
            if (!reason->len)
                hkc_strbuf_printf(reason, "device %d: cuDevicePrimaryCtxRetain: %s", i,
                                  hkc_cuda_error(r, eb, sizeof eb));
            continue;
        }
        cd->dev = dev;
        cd->retains = 1;
        cd->generation = epoch_of(cd);
        cuDeviceGetAttribute(&cd->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        cuDeviceGetAttribute(&cd->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        if (cuDeviceGetName(cd->name, (int)sizeof cd->name, dev) != CUDA_SUCCESS)
            snprintf(cd->name, sizeof cd->name, "CUDA device %d", i);
        c->ndev++;
    }
    if (c->ndev)
        hkc_strbuf_clear(reason); /* a device that failed while others work is no reason */
    return c->ndev;
}

/* The backend's state exists even with no driver or device: NVRTC and nvcc
 * compile for named architectures, and cubins are read, without either. */
static int cuda_probe(hkc_backend *be, hkc_strbuf *reason)
{
    cuda_impl *c = calloc(1, sizeof *c);
    if (!c) {
        hkc_strbuf_puts(reason, "out of memory");
        return 0;
    }
    /* Recursive: synchronize holds it while a write-back may hit a fault,
     * whose reset takes it again. */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    be->impl = c;
    c->driver = hkc_cuda_driver_open(reason) == 0;
    int n = c->driver ? probe_devices(c, reason) : 0;
    if (n == 0)
        hkc_strbuf_puts(reason, "; compiling for an architecture (hipkit compile --cuda-arch) "
                                "and hipkit inspect still work");
    return n;
}

static int write_back(hkc_backend *be, cuda_buffer *cb, int via_fail);

static void cuda_destroy(hkc_backend *be)
{
    cuda_impl *c = impl_of(be);
    /* Buffers still alive: a staged copy would die with the context, so
     * write what kernels changed back to the file first. */
    for (int d = 0; d < c->ndev; d++) {
        int staged = 0;
        for (cuda_buffer *cb = c->buffers; cb; cb = cb->next)
            staged |= cb->dev == d && cb->kind == CUDA_BUF_STAGED && cb->dirty;
        if (staged && use_dev(c, d) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS)
            for (cuda_buffer *cb = c->buffers; cb; cb = cb->next)
                if (cb->dev == d && cb->kind == CUDA_BUF_STAGED && cb->dirty &&
                    cb->generation == epoch_of(&c->devs[d]))
                    write_back(be, cb, 0);
    }
    while (c->buffers) {
        cuda_buffer *cb = c->buffers;
        c->buffers = cb->next;
        cb->b->impl = NULL;
        free(cb);
    }
    if (c->driver)
        cuCtxSetCurrent(NULL);
    atomic_fetch_add(&ctx_epoch, 1);
    for (int d = 0; d < c->ndev; d++)
        while (c->devs[d].retains-- > 0)
            cuDevicePrimaryCtxRelease(c->devs[d].dev);
    pthread_mutex_destroy(&c->lock);
    free(c);
    be->impl = NULL;
}

static int dev_attr(CUdevice dev, CUdevice_attribute a)
{
    int v = 0;
    return cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
}

/* max_shared_per_block is the default per-block limit (48 KiB), not the
 * opt-in maximum (227 KiB on sm_90): beyond the default a kernel needs
 * cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
 * which nothing here sets yet. */
static int cuda_device_info(hkc_backend *be, int index, hk_device_info *out)
{
    cuda_impl *c = impl_of(be);
    const cuda_device *cd = &c->devs[index];
    CUdevice dev = cd->dev;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", cd->name);
    snprintf(out->target, sizeof out->target, "sm_%d", cd->cc_major * 10 + cd->cc_minor);
    size_t total = 0;
    if (cuDeviceTotalMem(&total, dev) == CUDA_SUCCESS)
        out->total_memory = total;
    out->compute_units = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    out->warp_size = dev_attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    out->managed_memory = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 0;
    out->pageable_memory = dev_attr(dev, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0;
    out->max_threads_per_block = (uint32_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    out->max_block[0] = (uint32_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    out->max_block[1] = (uint32_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    out->max_block[2] = (uint32_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    out->max_grid[0] = (uint32_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    out->max_grid[1] = (uint32_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    out->max_grid[2] = (uint32_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    out->max_shared_per_block = (size_t)dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    return 0;
}

/* ---------------------------------------------------------------- buffers */

static void list_add(cuda_impl *c, cuda_buffer *cb)
{
    pthread_mutex_lock(&c->lock);
    cb->prev = NULL;
    cb->next = c->buffers;
    if (c->buffers)
        c->buffers->prev = cb;
    c->buffers = cb;
    pthread_mutex_unlock(&c->lock);
}

static void list_remove(cuda_impl *c, cuda_buffer *cb)
{
    pthread_mutex_lock(&c->lock);
    if (cb->prev)
        cb->prev->next = cb->next;
    else
        c->buffers = cb->next;
    if (cb->next)
        cb->next->prev = cb->prev;
    pthread_mutex_unlock(&c->lock);
}

static int is_current(cuda_impl *c, const cuda_buffer *cb)
{
    return cb->generation == epoch_of(&c->devs[cb->dev]);
}

/* Refuses a buffer from before a reset: its memory is gone. */
static int check_fresh(hk_buffer *b)
{
    cuda_buffer *cb = root_of(b)->impl;
    cuda_impl *c = impl_of(b->dev->be);
    if (!cb || is_current(c, cb))
        return 0;
    char k[512];
    fault_names(&c->devs[cb->dev], k, sizeof k);
    return hkc_fail(b->ctx, HK_ESTATE, "buffer allocated before the GPU context was reset after a "
                                       "fault in %s; allocate it again", k);
}

static void *dev_ptr(CUdeviceptr p) { return (void *)(uintptr_t)p; }
static CUdeviceptr kptr_of(const hk_buffer *b) { return (CUdeviceptr)(uintptr_t)b->kptr; }

static int cuda_buf_alloc(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    cuda_impl *c = impl_of(be);
    int d = b->dev->index;
    cuda_buffer *cb = calloc(1, sizeof *cb);
    if (!cb)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    cb->b = b;
    cb->dev = d;
    cb->bytes = b->bytes ? b->bytes : 1; /* the driver refuses 0 bytes */
    CUresult r = use_dev(c, d);
    cb->generation = epoch_of(&c->devs[d]);
    const char *what = "cuMemAlloc";
    if (r == CUDA_SUCCESS) {
        switch (b->mode) {
        case HK_MEM_DEVICE:
            cb->kind = CUDA_BUF_DEVICE;
            r = cuMemAlloc(&cb->dptr, cb->bytes);
            break;
        case HK_MEM_MANAGED:
            cb->kind = CUDA_BUF_MANAGED;
            what = "cuMemAllocManaged";
            r = cuMemAllocManaged(&cb->dptr, cb->bytes, CU_MEM_ATTACH_GLOBAL);
            break;
        case HK_MEM_HOST:
            cb->kind = CUDA_BUF_HOST;
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
        return cu_fail(be, d, r, NULL, code, "cannot allocate %zu bytes of %s memory on cuda:%d (%s)",
                       b->bytes, hk_mem_mode_name(b->mode), d, what);
    }
    b->kptr = dev_ptr(cb->dptr);
    b->hptr = b->mode == HK_MEM_MANAGED ? dev_ptr(cb->dptr) : b->mode == HK_MEM_HOST ? cb->host : NULL;
    b->impl = cb;
    list_add(c, cb);
    return 0;
}

/* Memory from before a reset went with the old context: freeing its address
 * now could free someone else's new allocation at the same place. */
static void release_memory(cuda_impl *c, cuda_buffer *cb)
{
    if (!is_current(c, cb) || use_dev(c, cb->dev) != CUDA_SUCCESS)
        return;
    switch (cb->kind) {
    case CUDA_BUF_DEVICE:
    case CUDA_BUF_MANAGED:
    case CUDA_BUF_STAGED:
        cuMemFree(cb->dptr);
        break;
    case CUDA_BUF_HOST:
        cuMemFreeHost(cb->host);
        break;
    case CUDA_BUF_REGISTERED:
        cuMemHostUnregister(cb->host);
        break;
    }
}

static void cuda_buf_free(hk_buffer *b)
{
    cuda_buffer *cb = b->impl;
    if (!cb)
        return;
    cuda_impl *c = impl_of(b->dev->be);
    list_remove(c, cb);
    release_memory(c, cb);
    free(cb);
    b->impl = NULL;
}

/* Staged copy -> the mapping. via_fail: report through hkc_fail (sync);
 * else warn (free, destroy: nobody gets a return code). */
static int write_back(hkc_backend *be, cuda_buffer *cb, int via_fail)
{
    cuda_impl *c = impl_of(be);
    hk_buffer *b = cb->b;
    CUresult r = use_dev(c, cb->dev);
    if (r == CUDA_SUCCESS)
        r = cuMemcpyDtoH(cb->host, cb->dptr, b->bytes);
    if (r == CUDA_SUCCESS) {
        cb->dirty = 0;
        return 0;
    }
    if (via_fail)
        return cu_fail(be, cb->dev, r, NULL, HK_EIO, "writing '%s' back from its device copy",
                       b->map.path);
    char eb[256];
    hkc_warn(be->ctx, "file %s: kernels' changes could not be written back: %s", b->map.path,
             hkc_cuda_error(r, eb, sizeof eb));
    return HK_EIO;
}

static int cuda_buf_register(hk_buffer *b)
{
    hkc_backend *be = b->dev->be;
    cuda_impl *c = impl_of(be);
    int d = b->dev->index;
    if (!b->bytes) { /* the core mapped an inaccessible page: nothing to register */
        b->kptr = NULL;
        return 0;
    }
    cuda_buffer *cb = calloc(1, sizeof *cb);
    if (!cb)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    cb->b = b;
    cb->dev = d;
    CUresult r = use_dev(c, d);
    cb->generation = epoch_of(&c->devs[d]);
    if (r != CUDA_SUCCESS) {
        free(cb);
        return cu_fail(be, d, r, NULL, HK_EBACKEND, "mmap '%s': cuCtxSetCurrent", b->map.path);
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
        cb->kind = CUDA_BUF_REGISTERED;
        cb->host = (void *)lo;
        cb->bytes = hi - lo;
        b->kptr = dev_ptr(cb->dptr);
        b->impl = cb;
        list_add(c, cb);
        return 0;
    }
    if (is_sticky(r)) {
        free(cb);
        return cu_fail(be, d, r, NULL, HK_EFAULT, "mmap '%s'", b->map.path);
    }
    /* Registration refused: work on a device copy. */
    char eb[256], eb2[256];
    hkc_cuda_error(r, eb, sizeof eb);
    CUresult ra = cuMemAlloc(&cb->dptr, b->bytes);
    if (ra == CUDA_SUCCESS) {
        ra = cuMemcpyHtoD(cb->dptr, b->hptr, b->bytes);
        if (ra != CUDA_SUCCESS)
            cuMemFree(cb->dptr);
    }
    if (ra != CUDA_SUCCESS) {
        free(cb);
        if (is_sticky(ra))
            return cu_fail(be, d, ra, NULL, HK_EFAULT, "mmap '%s'", b->map.path);
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
    cb->kind = CUDA_BUF_STAGED;
    c->any_staged = 1;
    cb->host = b->hptr;
    cb->bytes = b->bytes;
    b->kptr = dev_ptr(cb->dptr);
    b->hptr = NULL; /* the host reads the copy through download, never a stale mapping */
    b->impl = cb;
    list_add(c, cb);
    return 0;
}

static void cuda_buf_unregister(hk_buffer *b)
{
    cuda_buffer *cb = b->impl;
    if (!cb)
        return;
    hkc_backend *be = b->dev->be;
    cuda_impl *c = impl_of(be);
    /* hk_buffer_free synced first; this catches a sync that failed part way. */
    if (cb->kind == CUDA_BUF_STAGED && cb->dirty && b->map.writable && is_current(c, cb))
        write_back(be, cb, 0);
    list_remove(c, cb);
    release_memory(c, cb);
    free(cb);
    b->impl = NULL;
}

static void mark_dirty(hk_buffer *b)
{
    cuda_buffer *cb = root_of(b)->impl;
    if (cb && cb->kind == CUDA_BUF_STAGED && root_of(b)->map.writable)
        cb->dirty = 1;
}

static int cuda_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    hkc_backend *be = b->dev->be;
    int d = b->dev->index, r = check_fresh(b);
    if (r)
        return r;
    CUresult cr = use_dev(impl_of(be), d);
    if (cr == CUDA_SUCCESS)
        cr = cuMemcpyHtoD(kptr_of(b) + offset, src, bytes);
    if (cr != CUDA_SUCCESS)
        return cu_fail(be, d, cr, NULL, HK_EBACKEND, "upload of %zu bytes (cuMemcpyHtoD)", bytes);
    mark_dirty(b);
    return 0;
}

static int cuda_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    hkc_backend *be = b->dev->be;
    int d = b->dev->index, r = check_fresh(b);
    if (r)
        return r;
    CUresult cr = use_dev(impl_of(be), d);
    if (cr == CUDA_SUCCESS)
        cr = cuMemcpyDtoH(dst, kptr_of(b) + offset, bytes);
    if (cr != CUDA_SUCCESS)
        return cu_fail(be, d, cr, NULL, HK_EBACKEND, "download of %zu bytes (cuMemcpyDtoH)", bytes);
    return 0;
}

/* cuMemcpyDtoD does not promise memmove semantics: overlapping ranges of
 * one buffer go through a temporary device buffer. */
static int cuda_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                         size_t bytes)
{
    hkc_backend *be = dst->dev->be;
    int d = dst->dev->index, r = check_fresh(dst);
    if (!r)
        r = check_fresh(src);
    if (r)
        return r;
    CUdeviceptr to = kptr_of(dst) + dst_offset, from = kptr_of(src) + src_offset;
    if (to == from)
        return 0;
    CUresult cr = use_dev(impl_of(be), d);
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
        return cu_fail(be, d, cr, NULL, cr == CUDA_ERROR_OUT_OF_MEMORY ? HK_ENOMEM : HK_EBACKEND,
                       "copy of %zu bytes (cuMemcpyDtoD)", bytes);
    mark_dirty(dst);
    return 0;
}

static int cuda_buf_fill(hk_buffer *b, const void *value)
{
    hkc_backend *be = b->dev->be;
    int d = b->dev->index, r = check_fresh(b);
    if (r)
        return r;
    size_t es = hk_dtype_size(b->dtype);
    CUdeviceptr p = kptr_of(b);
    CUresult cr = use_dev(impl_of(be), d);
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
        return cu_fail(be, d, cr, NULL, HK_EBACKEND, "fill of %zu bytes", b->bytes);
    mark_dirty(b);
    return 0;
}

/* ---------------------------------------------------------------- modules */

/* Loads m->image into the device's current context, with the JIT's error
 * log for PTX. The message goes into err. */
static int load_image(hkc_backend *be, cuda_module *m, hkc_strbuf *err)
{
    cuda_impl *c = impl_of(be);
    const cuda_device *cd = &c->devs[m->dev];
    CUresult r = use_dev(c, m->dev);
    if (r != CUDA_SUCCESS)
        return cu_fail(be, m->dev, r, err, HK_EBACKEND, "cannot load the module on cuda:%d", m->dev);
    char log[4096] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)(sizeof log - 1)};
    unsigned gen = epoch_of(cd);
    CUmodule mod;
    r = cuModuleLoadDataEx(&mod, m->image, 2, opts, vals);
    if (r == CUDA_SUCCESS) {
        m->mod = mod;
        m->generation = gen;
        return 0;
    }
    if (is_sticky(r))
        return cu_fail(be, m->dev, r, err, HK_EFAULT, "cuModuleLoadData");
    char eb[256];
    hkc_cuda_error(r, eb, sizeof eb);
    cuda_image_kind kind = hkc_cuda_image_kind(m->image, m->size);
    int want = cd->cc_major * 10 + cd->cc_minor;
    int arch = kind == CUDA_IMAGE_CUBIN ? hkc_cuda_cubin_arch(m->image, m->size) : 0;
    if (kind == CUDA_IMAGE_CUBIN && arch && arch != want &&
        (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE)) {
        hkc_strbuf_printf(err, "the cubin is for sm_%d; device %d is sm_%d (%s): rebuild it with "
                               "`nvcc -cubin -arch=sm_%d FILE.cu` (or a fatbin with PTX), or compile "
                               "the source with hk.compile", arch, m->dev, want, cd->name, want);
        return HK_EFORMAT;
    }
    if (kind == CUDA_IMAGE_FATBIN && r == CUDA_ERROR_NO_BINARY_FOR_GPU) {
        hkc_strbuf_printf(err, "the fatbin holds no code for sm_%d (%s) and no PTX the driver can "
                               "compile: rebuild it with `nvcc -fatbin -arch=sm_%d FILE.cu`",
                          want, cd->name, want);
        return HK_EFORMAT;
    }
    static const char *const kind_names[] = {"cubin", "PTX", "fatbin", "code object"};
    hkc_strbuf_printf(err, "cannot load the %s on cuda:%d (%s, sm_%d): %s", kind_names[kind], m->dev,
                      cd->name, want, eb);
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        hkc_strbuf_puts(err, " (the PTX is newer than this driver: compile it with a toolkit no "
                             "newer than the driver, or update the driver)");
    log[sizeof log - 1] = 0;
    if (log[0])
        hkc_strbuf_printf(err, "\n%s", log);
    int bad_image = r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_INVALID_PTX ||
                    r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_NO_BINARY_FOR_GPU;
    return bad_image ? HK_EFORMAT : HK_EBACKEND;
}

/* A module from before a reset is loaded again from its image. */
static int ensure_module(hkc_backend *be, cuda_module *m, hkc_strbuf *err)
{
    cuda_impl *c = impl_of(be);
    CUresult r = use_dev(c, m->dev);
    if (r != CUDA_SUCCESS)
        return cu_fail(be, m->dev, r, err, HK_EBACKEND, "cuCtxSetCurrent");
    if (m->generation == epoch_of(&c->devs[m->dev]))
        return 0;
    m->mod = NULL;
    return load_image(be, m, err);
}

static int cuda_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **bmod,
                            hkc_strbuf *err)
{
    if (hkc_cuda_image_kind(code, size) == CUDA_IMAGE_UNKNOWN) {
        hkc_strbuf_puts(err, "not a cubin, PTX or fatbin");
        return HK_EFORMAT;
    }
    cuda_module *m = calloc(1, sizeof *m);
    char *image = malloc(size + 1);
    if (!m || !image) {
        free(m);
        free(image);
        hkc_strbuf_puts(err, "out of memory");
        return HK_ENOMEM;
    }
    memcpy(image, code, size);
    image[size] = 0; /* PTX is loaded as a C string */
    m->dev = dev;
    m->image = image;
    m->size = size;
    int r = load_image(be, m, err);
    if (r) {
        free(image);
        free(m);
        return r;
    }
    *bmod = m;
    return 0;
}

static void cuda_module_unload(hkc_backend *be, void *bmod)
{
    cuda_impl *c = impl_of(be);
    cuda_module *m = bmod;
    if (m->mod && m->generation == epoch_of(&c->devs[m->dev]) && use_dev(c, m->dev) == CUDA_SUCCESS)
        cuModuleUnload(m->mod);
    while (m->fns) {
        cuda_function *f = m->fns;
        m->fns = f->next;
        free(f);
    }
    free(m->image);
    free(m);
}

/* Parameter sizes from the driver (CUDA 12.4+). Alignment is not reported:
 * it is what a C compiler gives a parameter of that size (the largest power
 * of two dividing the size, at most 16: 1, 2, 4, 8 for scalars and
 * pointers, 16 for float4-like types), lowered until it divides the
 * parameter's offset. Returns the count, or -1 when unknown. */
static int param_info(CUfunction fn, uint32_t *sizes, uint32_t *aligns, int cap, size_t *end)
{
    *end = 0;
    for (int i = 0;; i++) {
        size_t off = 0, size = 0;
        CUresult r = cuFuncGetParamInfo(fn, (size_t)i, &off, &size);
        if (r == CUDA_ERROR_FUNCTION_NOT_LOADED && cuFuncLoad(fn) == CUDA_SUCCESS)
            r = cuFuncGetParamInfo(fn, (size_t)i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            return i; /* past the last parameter */
        if (r != CUDA_SUCCESS || i >= cap || size > UINT32_MAX)
            return -1;
        uint32_t a = 1;
        while (a < 16 && size % (2u * a) == 0)
            a *= 2;
        while (a > 1 && off % a)
            a /= 2;
        if (sizes) {
            sizes[i] = (uint32_t)size;
            aligns[i] = a;
        }
        if (off + size > *end)
            *end = off + size;
    }
}

/* Collects (function, symbol) pairs of a module: every kind through
 * cuModuleEnumerateFunctions (CUDA 12.4+), cubins also from their symbol
 * table if that fails. *syms is one malloc'd block. */
static int list_functions(cuda_module *m, CUfunction **fns, const char ***syms, int *count)
{
    *fns = NULL;
    *syms = NULL;
    *count = 0;
    unsigned n = 0;
    if (cuModuleGetFunctionCount(&n, m->mod) == CUDA_SUCCESS) {
        CUfunction *f = calloc(n ? n : 1, sizeof *f);
        const char **s = calloc(n ? n : 1, sizeof *s);
        if (!f || !s) {
            free(f);
            free(s);
            return HK_ENOMEM;
        }
        int ok = cuModuleEnumerateFunctions(f, n, m->mod) == CUDA_SUCCESS;
        for (unsigned i = 0; ok && i < n; i++)
            ok = cuFuncGetName(&s[i], f[i]) == CUDA_SUCCESS && s[i];
        if (ok) {
            *fns = f;
            *syms = s;
            *count = (int)n;
            return 0;
        }
        free(f);
        free(s);
    }
    if (hkc_cuda_image_kind(m->image, m->size) != CUDA_IMAGE_CUBIN)
        return 0;
    char **names = NULL;
    int nn = 0;
    if (hkc_cuda_cubin_kernels(m->image, m->size, &names, &nn) != 0 || nn <= 0) {
        free(names);
        return 0;
    }
    CUfunction *f = calloc((size_t)nn, sizeof *f);
    const char **s = calloc((size_t)nn, sizeof *s);
    if (!f || !s) {
        free(f);
        free(s);
        free(names);
        return HK_ENOMEM;
    }
    int k = 0;
    for (int i = 0; i < nn; i++)
        if (cuModuleGetFunction(&f[k], m->mod, names[i]) == CUDA_SUCCESS &&
            cuFuncGetName(&s[k], f[k]) == CUDA_SUCCESS && s[k])
            k++; /* the driver's copy of the name outlives `names` */
    free(names);
    *fns = f;
    *syms = s;
    *count = k;
    return 0;
}

/* Kernels are listed by plain name ("scale"), which is what the source
 * scanner finds; overloads sharing a plain name are listed by symbol. */
static int plain_unique(const char *const *syms, int n, int i, char *plain, size_t cap)
{
    hkc_cuda_plain_name(syms[i], plain, cap);
    char other[256];
    for (int j = 0; j < n; j++) {
        if (j == i)
            continue;
        hkc_cuda_plain_name(syms[j], other, sizeof other);
        if (!strcmp(other, plain))
            return 0;
    }
    return 1;
}

static int cuda_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count)
{
    cuda_module *m = bmod;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = ensure_module(be, m, &err);
    if (r) {
        hkc_fail(be->ctx, r, "%s", err.data);
        hkc_strbuf_free(&err);
        return r;
    }
    hkc_strbuf_free(&err);
    CUfunction *fns;
    const char **syms;
    int n;
    r = list_functions(m, &fns, &syms, &n);
    if (r)
        return hkc_fail(be->ctx, r, "out of memory");
    hkc_kernel_meta *out = calloc(n ? (size_t)n : 1, sizeof *out);
    if (!out) {
        free(fns);
        free(syms);
        return hkc_fail(be->ctx, HK_ENOMEM, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        hkc_kernel_meta *mt = &out[k];
        char plain[256];
        const char *name = plain_unique(syms, n, i, plain, sizeof plain) ? plain : syms[i];
        if (strlen(name) >= sizeof mt->name)
            continue; /* cannot be named through the core */
        snprintf(mt->name, sizeof mt->name, "%s", name);
        size_t end;
        mt->nparams = param_info(fns[i], mt->param_size, mt->param_align, 64, &end);
        mt->uses_sync = 0;
        k++;
    }
    free(fns);
    free(syms);
    *metas = out;
    *count = k;
    return 0;
}

/* The symbol for `name`: itself when the module has it, else the one
 * function whose plain name it is. */
static int resolve_symbol(cuda_module *m, const char *name, CUfunction *fn, char *sym, size_t cap,
                          hkc_strbuf *err)
{
    if (cuModuleGetFunction(fn, m->mod, name) == CUDA_SUCCESS) {
        snprintf(sym, cap, "%s", name);
        return 0;
    }
    CUfunction *fns;
    const char **syms;
    int n, found = -1, many = 0;
    if (list_functions(m, &fns, &syms, &n))
        return HK_ENOMEM;
    char plain[256];
    for (int i = 0; i < n; i++) {
        hkc_cuda_plain_name(syms[i], plain, sizeof plain);
        if (strcmp(plain, name))
            continue;
        if (found >= 0)
            many = 1;
        else
            found = i;
    }
    int r = 0;
    if (found < 0) {
        hkc_strbuf_printf(err, "the module has no function '%s'", name);
        r = HK_ENOTFOUND;
    } else if (many) {
        hkc_strbuf_printf(err, "'%s' names several kernels (overloads): use the symbol, e.g. '%s'",
                          name, syms[found]);
        r = HK_ENOTFOUND;
    } else if (strlen(syms[found]) >= cap) {
        hkc_strbuf_printf(err, "the symbol of '%s' is too long", name);
        r = HK_ENOTFOUND;
    } else {
        *fn = fns[found];
        snprintf(sym, cap, "%s", syms[found]);
    }
    free(fns);
    free(syms);
    return r;
}

static int cuda_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                             hk_kernel_info *info, hkc_strbuf *err)
{
    cuda_module *m = bmod;
    int r = ensure_module(be, m, err);
    if (r)
        return r;
    CUfunction fn;
    char sym[256];
    r = resolve_symbol(m, name, &fn, sym, sizeof sym, err);
    if (r)
        return r;
    cuda_function *f = NULL;
    for (cuda_function *g = m->fns; g; g = g->next)
        if (!strcmp(g->name, sym))
            f = g;
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f) {
            hkc_strbuf_puts(err, "out of memory");
            return HK_ENOMEM;
        }
        f->m = m;
        snprintf(f->name, sizeof f->name, "%s", sym);
        f->next = m->fns;
        m->fns = f;
    }
    f->fn = fn;
    f->generation = m->generation;
    cuFuncLoad(fn); /* lazy loading: some attributes need the function loaded */
    int v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fn) == CUDA_SUCCESS)
        info->registers = v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn) == CUDA_SUCCESS)
        info->static_shared = v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn) == CUDA_SUCCESS)
        info->local_bytes = v;
    if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) == CUDA_SUCCESS && v > 0)
        info->max_threads_per_block = (uint32_t)v;
    size_t end;
    if (param_info(fn, NULL, NULL, 4096, &end) >= 0) /* kernargs are at most 4 KiB */
        f->param_end = end;
    *bfn = f;
    return 0;
}

/* ----------------------------------------------------------------- launch */

/* Appends a kernel name to the device's list for fault messages, once. */
static void note_kernel(cuda_impl *c, int d, const char *name)
{
    if (c->devs[d].last_noted == name && c->devs[d].last_kernels[0])
        return; /* the same kernel again: nothing new to note */
    pthread_mutex_lock(&c->lock);
    c->devs[d].last_noted = name;
    char *list = c->devs[d].last_kernels;
    size_t cap = sizeof c->devs[d].last_kernels, len = strlen(list), n = strlen(name);
    int seen = 0;
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == 0)) {
            seen = 1;
            break;
        }
    if (!seen && (len < 4 || strcmp(list + len - 3, "...") != 0)) {
        if (len + n + 2 + 5 < cap)
            snprintf(list + len, cap - len, "%s%s", len ? ", " : "", name);
        else
            snprintf(list + len, cap - len, "%s", len ? ", ..." : "...");
    }
    pthread_mutex_unlock(&c->lock);
}

/* Every kernel may write any staged copy of its device. */
static void dirty_staged(cuda_impl *c, int d)
{
    if (!c->any_staged)
        return;
    pthread_mutex_lock(&c->lock);
    for (cuda_buffer *cb = c->buffers; cb; cb = cb->next)
        if (cb->dev == d && cb->kind == CUDA_BUF_STAGED && cb->b->map.writable)
            cb->dirty = 1;
    pthread_mutex_unlock(&c->lock);
}

/* After a reset, pointer arguments inside a buffer from before (and in no
 * current one) are refused: the core only hands over packed bytes, so this
 * reads them back through the kernel's signature. */
static int check_stale_args(hk_kernel *k, const cuda_device *cd, int d, const void *kernarg,
                            size_t size)
{
    cuda_impl *c = impl_of(k->m->entry->dev->be);
    unsigned gen = epoch_of(cd);
    if (gen == 0)
        return 0; /* never reset */
    int r = 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < k->sig.count && !r; i++) {
        const hkc_param *p = &k->sig.params[i];
        if (p->kind != HK_PARAM_POINTER || p->size != sizeof(uint64_t) || p->offset + 8 > size)
            continue;
        uint64_t v;
        memcpy(&v, (const char *)kernarg + p->offset, sizeof v);
        if (!v)
            continue;
        int stale = 0, fresh = 0;
        for (cuda_buffer *cb = c->buffers; cb; cb = cb->next) {
            if (cb->dev != d || v < cb->dptr || v >= cb->dptr + cb->bytes)
                continue;
            if (cb->generation == gen)
                fresh = 1;
            else
                stale = 1;
        }
        if (stale && !fresh) {
            char fk[512];
            fault_names(cd, fk, sizeof fk);
            r = hkc_fail(k->m->ctx, HK_ESTATE,
                         "kernel %s: parameter %d '%s' is a buffer allocated before the GPU context "
                         "was reset after a fault in %s; allocate it again", k->name, i + 1, p->name, fk);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}

static int cuda_launch(hk_kernel *k, const hk_launch_config *cfg, const void *kernarg, size_t size)
{
    hkc_backend *be = k->m->entry->dev->be;
    cuda_impl *c = impl_of(be);
    cuda_function *f = k->bfn;
    cuda_module *m = f->m;
    int d = m->dev;
    const cuda_device *cd = &c->devs[d];
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int r = ensure_module(be, m, &err);
    if (!r && f->generation != m->generation) {
        CUresult cr = cuModuleGetFunction(&f->fn, m->mod, f->name);
        if (cr == CUDA_SUCCESS)
            f->generation = m->generation;
        else
            r = cu_fail(be, d, cr, &err, HK_EBACKEND, "reloading kernel %s after the reset", f->name);
    }
    if (r) {
        hkc_fail(k->m->ctx, r, "kernel %s: %s", k->name, err.data);
        hkc_strbuf_free(&err);
        return r;
    }
    hkc_strbuf_free(&err);
    r = check_stale_args(k, cd, d, kernarg, size);
    if (r)
        return r;

    /* Each parameter by address into the packed buffer, the form the
     * driver's launch path is built for (the raw cuLaunchKernel figures in
     * RESULTS.md use it too); offsets are the signature's C layout, which
     * module_kernels checked against the driver's cuFuncGetParamInfo. */
    void *params[64];
    int np = k->sig.count;
    CUresult cr;
    if (np <= 64) {
        for (int i = 0; i < np; i++)
            params[i] = (char *)kernarg + k->sig.params[i].offset;
        cr = cuLaunchKernel(f->fn, cfg->grid.x, cfg->grid.y, cfg->grid.z, cfg->block.x, cfg->block.y,
                            cfg->block.z, (unsigned)cfg->shared_bytes, NULL, np ? params : NULL, NULL);
    } else {
        /* sized to the parameters' own end: a larger buffer reads as "too
         * many arguments" (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) */
        size_t sz = f->param_end && f->param_end <= size ? f->param_end : size;
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)kernarg, CU_LAUNCH_PARAM_BUFFER_SIZE,
                         &sz, CU_LAUNCH_PARAM_END};
        cr = cuLaunchKernel(f->fn, cfg->grid.x, cfg->grid.y, cfg->grid.z, cfg->block.x, cfg->block.y,
                            cfg->block.z, (unsigned)cfg->shared_bytes, NULL, NULL, extra);
    }
    if (cr == CUDA_SUCCESS) {
        note_kernel(c, d, k->name);
        dirty_staged(c, d);
        return 0;
    }
    if (is_sticky(cr)) { /* an earlier kernel faulted */
        hkc_strbuf msg;
        hkc_strbuf_init(&msg);
        fault_reset(be, d, cr, &msg);
        r = hkc_fail(k->m->ctx, HK_EFAULT, "%s; %s was not launched", msg.data, k->name);
        hkc_strbuf_free(&msg);
        return r;
    }
    char eb[256];
    hkc_cuda_error(cr, eb, sizeof eb);
    if (cr == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
        return hkc_fail(k->m->ctx, HK_ELAUNCH,
                        "kernel %s: %s (block (%u, %u, %u): the kernel uses %d registers per thread; "
                        "launch fewer threads per block)",
                        k->name, eb, cfg->block.x, cfg->block.y, cfg->block.z, k->info.registers);
    return hkc_fail(k->m->ctx, HK_ELAUNCH, "kernel %s: cuLaunchKernel: %s", k->name, eb);
}

static int cuda_synchronize(hkc_backend *be, int dev)
{
    cuda_impl *c = impl_of(be);
    CUresult cr = use_dev(c, dev);
    if (cr == CUDA_SUCCESS)
        cr = cuCtxSynchronize();
    if (cr != CUDA_SUCCESS)
        return cu_fail(be, dev, cr, NULL, HK_EBACKEND, "cuda:%d: cuCtxSynchronize", dev);
    pthread_mutex_lock(&c->lock);
    c->devs[dev].last_kernels[0] = 0;
    pthread_mutex_unlock(&c->lock);
    /* Staged mmap copies go back to their mappings here; hk_buffer_sync
     * msyncs after. See the top of this file. */
    int r = 0;
    unsigned gen = epoch_of(&c->devs[dev]);
    pthread_mutex_lock(&c->lock);
    for (cuda_buffer *cb = c->buffers; cb && !r; cb = cb->next)
        if (cb->dev == dev && cb->kind == CUDA_BUF_STAGED && cb->dirty && cb->generation == gen)
            r = write_back(be, cb, 1);
    pthread_mutex_unlock(&c->lock);
    return r;
}

/* ----------------------------------------------------------------- events */

typedef struct cuda_event {
    CUevent ev;
    int dev;
    unsigned generation;
    int recorded;
} cuda_event;

static int event_new(hk_event *e, cuda_event *ce)
{
    hkc_backend *be = e->dev->be;
    cuda_impl *c = impl_of(be);
    CUresult cr = use_dev(c, ce->dev);
    ce->generation = epoch_of(&c->devs[ce->dev]);
    if (cr == CUDA_SUCCESS)
        cr = cuEventCreate(&ce->ev, CU_EVENT_DEFAULT);
    if (cr != CUDA_SUCCESS) {
        ce->ev = NULL;
        return cu_fail(be, ce->dev, cr, NULL, HK_EBACKEND, "cuEventCreate");
    }
    ce->recorded = 0;
    return 0;
}

static int cuda_event_create(hk_event *e)
{
    cuda_event *ce = calloc(1, sizeof *ce);
    if (!ce)
        return hkc_fail(e->ctx, HK_ENOMEM, "out of memory");
    ce->dev = e->dev->index;
    int r = event_new(e, ce);
    if (r) {
        free(ce);
        return r;
    }
    e->impl = ce;
    return 0;
}

static void cuda_event_destroy(hk_event *e)
{
    cuda_event *ce = e->impl;
    cuda_impl *c = impl_of(e->dev->be);
    if (ce->ev && ce->generation == epoch_of(&c->devs[ce->dev]) && use_dev(c, ce->dev) == CUDA_SUCCESS)
        cuEventDestroy(ce->ev);
    free(ce);
}

static int cuda_event_record(hk_event *e)
{
    cuda_event *ce = e->impl;
    hkc_backend *be = e->dev->be;
    cuda_impl *c = impl_of(be);
    if (!ce->ev || ce->generation != epoch_of(&c->devs[ce->dev])) { /* made before a reset */
        int r = event_new(e, ce);
        if (r)
            return r;
    }
    CUresult cr = use_dev(c, ce->dev);
    if (cr == CUDA_SUCCESS)
        cr = cuEventRecord(ce->ev, NULL);
    if (cr != CUDA_SUCCESS)
        return cu_fail(be, ce->dev, cr, NULL, HK_EBACKEND, "cuEventRecord");
    ce->recorded = 1;
    return 0;
}

static int event_ready(hk_event *e, const char *what)
{
    cuda_event *ce = e->impl;
    cuda_impl *c = impl_of(e->dev->be);
    if (!ce->recorded)
        return hkc_fail(e->ctx, HK_ESTATE, "%s: the event was never recorded", what);
    if (ce->generation != epoch_of(&c->devs[ce->dev]))
        return hkc_fail(e->ctx, HK_ESTATE, "%s: the event was recorded before the GPU context was "
                                           "reset after a fault; record it again", what);
    return 0;
}

static int cuda_event_synchronize(hk_event *e)
{
    cuda_event *ce = e->impl;
    hkc_backend *be = e->dev->be;
    int r = event_ready(e, "hk_event_synchronize");
    if (r)
        return r;
    CUresult cr = use_dev(impl_of(be), ce->dev);
    if (cr == CUDA_SUCCESS)
        cr = cuEventSynchronize(ce->ev);
    if (cr != CUDA_SUCCESS)
        return cu_fail(be, ce->dev, cr, NULL, HK_EBACKEND, "cuEventSynchronize");
    return 0;
}

/* Waits for both events first, so a caller that did not synchronize still
 * gets the time rather than CUDA_ERROR_NOT_READY. */
static int cuda_event_elapsed_ms(hk_event *a, hk_event *b, double *ms)
{
    int r = event_ready(a, "hk_event_elapsed_ms (start)");
    if (!r)
        r = event_ready(b, "hk_event_elapsed_ms (end)");
    if (!r)
        r = cuda_event_synchronize(b);
    if (!r)
        r = cuda_event_synchronize(a);
    if (r)
        return r;
    cuda_event *ca = a->impl, *cb = b->impl;
    float t = 0;
    CUresult cr = cuEventElapsedTime(&t, ca->ev, cb->ev);
    if (cr != CUDA_SUCCESS)
        return cu_fail(a->dev->be, ca->dev, cr, NULL, HK_EBACKEND, "cuEventElapsedTime");
    *ms = t;
    return 0;
}

/* ------------------------------------------------------------------ disasm */

static int find_tool(const char *tool, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        if (n) {
            snprintf(out, cap, "%.*s/%s", (int)n, path, tool);
            if (access(out, X_OK) == 0)
                return 1;
        }
        path = colon ? colon + 1 : NULL;
    }
    const char *dirs[3] = {getenv("CUDA_HOME"), "/usr/local/cuda", NULL};
#ifdef HKC_CUDA_INCLUDE
    dirs[2] = HKC_CUDA_INCLUDE "/..";
#endif
    for (int i = 0; i < 3; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        snprintf(out, cap, "%s/bin/%s", dirs[i], tool);
        if (access(out, X_OK) == 0)
            return 1;
    }
    return 0;
}

/* Runs argv with stdout and stderr into out. Returns the exit status, or
 * -errno when it could not run. */
static int run_capture(char *const argv[], hkc_strbuf *out)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return -e;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    char buf[65536];
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        hkc_strbuf_append(out, buf, (size_t)n);
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int ident_char(char ch)
{
    return ch == '_' || ch == '$' || ch == '.' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9');
}

static int names_kernel(const char *sym, const char *kernel)
{
    char plain[256];
    if (!strcmp(sym, kernel))
        return 1;
    hkc_cuda_plain_name(sym, plain, sizeof plain);
    return !strcmp(plain, kernel);
}

/* PTX has no SASS before the driver compiles it: show the kernel's PTX,
 * from its `.entry` line to the closing brace at the start of a line. */
static int ptx_entry(const char *ptx, const char *kernel, hkc_strbuf *out)
{
    for (const char *p = ptx; (p = strstr(p, ".entry")); p += 6) {
        const char *s = p + 6;
        if (*s != ' ' && *s != '\t')
            continue;
        while (*s == ' ' || *s == '\t')
            s++;
        const char *e = s;
        while (ident_char(*e))
            e++;
        char sym[512];
        if (e == s || (size_t)(e - s) >= sizeof sym)
            continue;
        memcpy(sym, s, (size_t)(e - s));
        sym[e - s] = 0;
        if (!names_kernel(sym, kernel))
            continue;
        const char *start = p;
        while (start > ptx && start[-1] != '\n')
            start--;
        const char *end = strstr(p, "\n}");
        end = end ? end + 2 : p + strlen(p);
        hkc_strbuf_printf(out, "// PTX of %s (the driver compiles it at load; for SASS load a cubin)\n", sym);
        hkc_strbuf_append(out, start, (size_t)(end - start));
        hkc_strbuf_puts(out, "\n");
        return 0;
    }
    hkc_strbuf_printf(out, "the PTX has no entry for kernel %s", kernel);
    return HK_ENOTFOUND;
}

/* Keeps the "Function : SYMBOL" sections of cuobjdump's output whose
 * symbol is the kernel (filtering here rather than with -fun, which wants
 * the exact symbol), with the "code for sm_XX" line above them. */
static int filter_sass(const char *all, const char *kernel, hkc_strbuf *out)
{
    int keep = 0, found = 0;
    const char *arch = NULL;
    size_t arch_len = 0;
    for (const char *line = all; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *t = line;
        while (t < line + len && (*t == ' ' || *t == '\t'))
            t++;
        if (!strncmp(t, "code for ", 9)) {
            arch = t;
            arch_len = (size_t)(line + len - t);
            keep = 0;
        } else if (!strncmp(t, "Function : ", 11)) {
            char sym[512];
            size_t n = (size_t)(line + len - (t + 11));
            while (n && (t[11 + n - 1] == ' ' || t[11 + n - 1] == '\r'))
                n--;
            keep = 0;
            if (n < sizeof sym) {
                memcpy(sym, t + 11, n);
                sym[n] = 0;
                keep = names_kernel(sym, kernel);
            }
            if (keep) {
                if (arch)
                    hkc_strbuf_printf(out, "%.*s\n", (int)arch_len, arch);
                found++;
            }
        } else if (!strncmp(t, "..........", 10)) {
            if (keep)
                hkc_strbuf_append(out, line, len + (nl ? 1 : 0));
            keep = 0;
            line = nl ? nl + 1 : NULL;
            continue;
        }
        if (keep)
            hkc_strbuf_append(out, line, len + (nl ? 1 : 0));
        line = nl ? nl + 1 : NULL;
    }
    return found;
}

static int cuda_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                       hkc_strbuf *out)
{
    (void)be;
    cuda_image_kind kind = hkc_cuda_image_kind(code, size);
    if (kind == CUDA_IMAGE_UNKNOWN) {
        hkc_strbuf_puts(out, "not a cubin, PTX or fatbin");
        return HK_EFORMAT;
    }
    if (kind == CUDA_IMAGE_PTX) {
        char *text = malloc(size + 1);
        if (!text) {
            hkc_strbuf_puts(out, "out of memory");
            return HK_ENOMEM;
        }
        memcpy(text, code, size);
        text[size] = 0;
        int r = ptx_entry(text, kernel, out);
        free(text);
        return r;
    }
    char tool[4096];
    if (!find_tool("cuobjdump", tool, sizeof tool)) {
        hkc_strbuf_puts(out, "cuobjdump not found (install the CUDA toolkit or put it on PATH)");
        return HK_EUNSUPPORTED;
    }
    const char *tmpdir = getenv("TMPDIR");
    char path[4200];
    snprintf(path, sizeof path, "%s/hipkit-disasm-XXXXXX.%s", tmpdir && *tmpdir ? tmpdir : "/tmp",
             kind == CUDA_IMAGE_CUBIN ? "cubin" : "fatbin");
    int fd = mkstemps(path, kind == CUDA_IMAGE_CUBIN ? 6 : 7);
    if (fd < 0) {
        hkc_strbuf_printf(out, "cannot create a temporary file for cuobjdump: %s", strerror(errno));
        return HK_EIO;
    }
    const char *p = code;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, p + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            hkc_strbuf_printf(out, "writing %s: %s", path, strerror(errno));
            close(fd);
            unlink(path);
            return HK_EIO;
        }
        done += (size_t)w;
    }
    close(fd);
    char *argv[] = {tool, "-sass", path, NULL};
    hkc_strbuf all;
    hkc_strbuf_init(&all);
    int status = run_capture(argv, &all);
    unlink(path);
    int r = 0;
    if (status != 0) {
        hkc_strbuf_printf(out, status < 0 ? "cannot run %s: %s" : "%s failed: %s", tool,
                          status < 0 ? strerror(-status) : all.data);
        r = HK_EUNSUPPORTED;
    } else if (!filter_sass(all.data, kernel, out)) {
        hkc_strbuf_clear(out);
        hkc_strbuf_printf(out, "cuobjdump shows no function for kernel %s", kernel);
        r = HK_ENOTFOUND;
    }
    hkc_strbuf_free(&all);
    return r;
}

/* ------------------------------------------------------------------ table */

__attribute__((visibility("default"))) const hkc_backend_ops hkc_backend_cuda_ops = {
    .name = "cuda",
    .code_ext = "cubin",
    .wide_vector_align = 16,
    .probe = cuda_probe,
    .destroy = cuda_destroy,
    .device_info = cuda_device_info,
    .toolchain = hkc_cuda_toolchain,
    .buf_alloc = cuda_buf_alloc,
    .buf_free = cuda_buf_free,
    .buf_register = cuda_buf_register,
    .buf_unregister = cuda_buf_unregister,
    .buf_upload = cuda_buf_upload,
    .buf_download = cuda_buf_download,
    .buf_copy = cuda_buf_copy,
    .buf_fill = cuda_buf_fill,
    .compile = hkc_cuda_compile,
    .target_normalize = hkc_cuda_target_normalize,
    .compile_target = hkc_cuda_compile_target,
    .compile_offline = hkc_cuda_compile_offline,
    .code_inspect = hkc_cuda_code_inspect,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_kernels = cuda_module_kernels,
    .function_get = cuda_function_get,
    .launch = cuda_launch,
    .synchronize = cuda_synchronize,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .image_rank = hkc_cuda_image_rank,
    .event_synchronize = cuda_event_synchronize,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .disasm = cuda_disasm,
};
