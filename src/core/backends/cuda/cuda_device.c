/* The NVIDIA backend's devices: the driver's primary contexts, probe and
 * device info, and the fault handling every other file of the backend goes
 * through (hkc_cuda_use_dev, hkc_cuda_fail).
 *
 * Contexts. Each device uses its primary context, retained at probe. The
 * calling thread may change between calls, so every slot makes the context
 * current first (hkc_cuda_use_dev).
 *
 * Faults. A kernel fault is sticky: every later call in the context returns
 * the same error. Whichever call sees it first (synchronize, an event, a
 * copy, the next launch) resets the primary context, bumps the device's
 * generation and returns HK_EFAULT naming the kernels launched since the
 * last synchronize. Objects remember the generation they were made in:
 * modules and kernels are reloaded from their image on next use; buffers
 * and events from before are refused with a message saying why. The
 * generation is per process (a reset reaches every hk_context using the
 * device), so it lives in a static table, not in cuda_impl. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

/* ------------------------------------------------ process-wide fault state */

/* Per CUDA device ordinal: how many times its primary context was reset in
 * this process, and which kernels were running at the last reset. */
static atomic_uint reset_epoch[CUDA_MAX_DEVICES];
/* Bumped whenever hipkit makes a context stop being current (see hkc_cuda_use_dev). */
static atomic_uint ctx_epoch;
static char fault_kernels[CUDA_MAX_DEVICES][512];
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned hkc_cuda_epoch(const cuda_device *cd) { return atomic_load(&reset_epoch[cd->dev]); }

void hkc_cuda_fault_names(const cuda_device *cd, char *out, size_t cap)
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
int hkc_cuda_is_sticky(CUresult r)
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

/* Makes device d's context current on this thread. A reset made through
 * another hk_context (same process, same device) shows as a newer epoch:
 * take the primary context's handle again. */
CUresult hkc_cuda_use_dev(cuda_impl *c, int d)
{
    cuda_device *cd = &c->devs[d];
    cd->after_kernel = 0; /* whatever the caller queues next, it is no kernel of ours yet */
    unsigned e = hkc_cuda_epoch(cd);
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

/* Called with a sticky error: says so in msg, resets the device's primary
 * context and bumps its generation. Staged mmap copies die with the
 * context; their unsynced changes are reported lost. */
void hkc_cuda_fault_reset(hkc_backend *be, int d, CUresult r, hkc_strbuf *msg)
{
    cuda_impl *c = cuda_impl_of(be);
    cuda_device *cd = &c->devs[d];
    char eb[256];
    hkc_cuda_error(r, eb, sizeof eb);
    pthread_mutex_lock(&c->buffers.lock);
    char kernels[512];
    snprintf(kernels, sizeof kernels, "%s", cd->last_kernels);
    cd->last_kernels[0] = 0;
    if (kernels[0])
        hkc_strbuf_printf(msg, "a kernel faulted on cuda:%d (after launching %s): %s", d, kernels, eb);
    else
        hkc_strbuf_printf(msg, "a kernel faulted on cuda:%d: %s", d, eb);

    /* Release ours, reset (in case another user holds it), take it again. */
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

    HKC_GPU_BUFFERS_EACH(cuda_buffer, cb, &c->buffers)
        if (cb->g.dev == d && cb->g.kind == HKC_GPU_BUF_STAGED && cb->g.dirty && cb->generation == old) {
            hkc_warn(be->ctx, "file %s: changes kernels or uploads made since the last sync are lost "
                              "(the GPU context was reset)", cb->g.b->map.path);
            cb->g.dirty = 0;
        }
    pthread_mutex_unlock(&c->buffers.lock);
}

/* One failed driver call: a sticky error goes through hkc_cuda_fault_reset and
 * becomes HK_EFAULT; anything else is `code` with "WHAT: ERROR". The message
 * goes into err when given, else to hkc_fail. */
int hkc_cuda_fail(hkc_backend *be, int d, CUresult r, hkc_strbuf *err, int code, const char *fmt, ...)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    cuda_device *cd = &cuda_impl_of(be)->devs[d];
    if (cd->dead[0]) {
        code = HK_EUNAVAIL;
        hkc_strbuf_puts(&msg, cd->dead);
    } else if (hkc_cuda_is_sticky(r)) {
        code = HK_EFAULT;
        hkc_cuda_fault_reset(be, d, r, &msg);
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
        cd->generation = hkc_cuda_epoch(cd);
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
int hkc_cuda_probe(hkc_backend *be, hkc_strbuf *reason)
{
    cuda_impl *c = calloc(1, sizeof *c);
    if (!c) {
        hkc_strbuf_puts(reason, "out of memory");
        return 0;
    }
    /* Recursive: synchronize holds it while a write-back may hit a fault,
     * whose reset takes it again. */
    hkc_gpu_buffers_init(&c->buffers, 1);
    be->impl = c;
    c->driver = hkc_cuda_driver_open(reason) == 0;
    int n = c->driver ? probe_devices(c, reason) : 0;
    if (n == 0)
        hkc_strbuf_puts(reason, "; compiling for an architecture (hipkit compile --cuda-arch) "
                                "and hipkit inspect still work");
    return n;
}

void hkc_cuda_destroy(hkc_backend *be)
{
    cuda_impl *c = cuda_impl_of(be);
    /* Buffers still alive: a staged copy would die with the context, so
     * write what kernels changed back to the file first. */
    for (int d = 0; d < c->ndev; d++) {
        int staged = 0;
        HKC_GPU_BUFFERS_EACH(cuda_buffer, cb, &c->buffers)
            staged |= cb->g.dev == d && cb->g.kind == HKC_GPU_BUF_STAGED && cb->g.dirty;
        if (staged && hkc_cuda_use_dev(c, d) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS)
            HKC_GPU_BUFFERS_EACH(cuda_buffer, cb, &c->buffers)
                if (cb->g.dev == d && cb->g.kind == HKC_GPU_BUF_STAGED && cb->g.dirty &&
                    cb->generation == hkc_cuda_epoch(&c->devs[d]))
                    hkc_cuda_write_back(be, cb, 0);
    }
    while (c->buffers.head) {
        cuda_buffer *cb = (cuda_buffer *)(void *)c->buffers.head;
        c->buffers.head = cb->g.next;
        cb->g.b->impl = NULL;
        free(cb);
    }
    for (int d = 0; d < c->ndev; d++)
        if (c->devs[d].stage && hkc_cuda_use_dev(c, d) == CUDA_SUCCESS)
            hkc_cuda_stage_free(&c->devs[d]);
    if (c->driver)
        cuCtxSetCurrent(NULL);
    atomic_fetch_add(&ctx_epoch, 1);
    for (int d = 0; d < c->ndev; d++)
        while (c->devs[d].retains-- > 0)
            cuDevicePrimaryCtxRelease(c->devs[d].dev);
    hkc_gpu_buffers_destroy(&c->buffers);
    free(c);
    be->impl = NULL;
}

static int dev_attr(CUdevice dev, CUdevice_attribute a)
{
    int v = 0;
    return cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
}

/* max_shared_per_block is the opt-in maximum (227 KiB on sm_90, 163 KiB on
 * sm_80), not the default 48 KiB: a launch asking for more than the default
 * opts its function in (hkc_cuda_launch), so the core's check_config
 * compares against what a launch can really get. */
int hkc_cuda_device_info(hkc_backend *be, int index, hk_device_info *out)
{
    cuda_impl *c = cuda_impl_of(be);
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
    int optin = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    int dflt = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    out->max_shared_per_block = (size_t)(optin > dflt ? optin : dflt);
    return 0;
}
