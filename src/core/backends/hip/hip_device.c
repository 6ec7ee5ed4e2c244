/* The AMD backend's devices: probe, device info, and the error and
 * current-device helpers the backend's other files use.
 *
 * What was run where: no AMD GPU exists on the machines this was built on.
 * Probe, compile, load-time picking, metadata and argument packing were
 * exercised with the real ROCm 5.2 libraries; the paths that need a device
 * (allocation, launch, events) are written against the HIP API and tested
 * by tests/hip/test_hip_device.c, which skips without an AMD GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_backend.h"
#include "hip_codeobj.h"

const char *hkc_hip_error(hipError_t e, char *buf, size_t cap)
{
    const char *name = hipGetErrorName(e), *text = hipGetErrorString(e);
    if (!strcmp(name, text)) /* ROCm 5 answers the name for both */
        snprintf(buf, cap, "%s", name);
    else
        snprintf(buf, cap, "%s: %s", name, text);
    return buf;
}

int hkc_hip_fail(const hk_context *ctx, hipError_t e, int code, const char *what)
{
    char eb[256];
    if (e == hipErrorOutOfMemory)
        code = HK_ENOMEM;
    return hkc_fail(ctx, code, "%s: %s", what, hkc_hip_error(e, eb, sizeof eb));
}

/* Every call that touches a device makes it current first: the HIP runtime
 * keeps the current device per thread. */
hipError_t hkc_hip_use_dev(hkc_backend *be, int d) { return hipSetDevice(hip_impl_of(be)->devs[d].ordinal); }

/* ------------------------------------------------------------- devices */

static void read_device(hip_device *hd, int ordinal)
{
    hipDeviceProp_t p;
    memset(&p, 0, sizeof p);
    hd->ordinal = ordinal;
    if (hipGetDeviceProperties(&p, ordinal) != hipSuccess)
        return;
    snprintf(hd->name, sizeof hd->name, "%.127s", p.name[0] ? p.name : "AMD GPU");
    snprintf(hd->arch, sizeof hd->arch, "%.95s", p.gcnArchName);
    hd->pageable = p.pageableMemoryAccess;
    hd->managed = p.managedMemory;
}

int hkc_hip_probe(hkc_backend *be, hkc_strbuf *reason)
{
    hip_impl *h = calloc(1, sizeof *h);
    if (!h) {
        hkc_strbuf_puts(reason, "out of memory");
        return 0;
    }
    hkc_gpu_buffers_init(&h->buffers, 0);
    hkc_hip_compile_init(h);
    be->impl = h; /* kept with no device: compile-only work needs it */

    int count = 0;
    char eb[256];
    hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess) {
        hkc_strbuf_printf(reason, "no AMD GPU (hipGetDeviceCount: %s); compiling for a target "
                                  "(hipkit compile --offload-arch) and hipkit inspect still work",
                          hkc_hip_error(e, eb, sizeof eb));
        return 0;
    }
    if (count > HIP_MAX_DEVICES)
        count = HIP_MAX_DEVICES;
    const char *arch = getenv("HIPKIT_ARCH");
    for (int i = 0; i < count; i++) {
        hip_device *hd = &h->devs[h->ndev];
        read_device(hd, i);
        if (!hd->arch[0])
            continue;
        memcpy(hd->target, hd->arch, sizeof hd->target);
        if (arch && *arch) {
            hkc_strbuf err;
            hkc_strbuf_init(&err);
            if (hkc_hip_target_normalize(be, arch, hd->target, sizeof hd->target, &err) != 0) {
                hkc_warn(be->ctx, "HIPKIT_ARCH ignored: %s", err.data);
                memcpy(hd->target, hd->arch, sizeof hd->target);
            } else if (!hkc_hip_target_compatible(hd->target, hd->arch)) {
                hkc_warn(be->ctx, "HIPKIT_ARCH=%s: code compiled for it will not load on %s (%s)",
                         arch, hd->name, hd->arch);
            }
            hkc_strbuf_free(&err);
        }
        h->ndev++;
    }
    if (!h->ndev)
        hkc_strbuf_printf(reason, count ? "the HIP runtime reports %d device(s) but none answered "
                                          "hipGetDeviceProperties"
                                        : "the HIP runtime reports %d devices", count);
    return h->ndev;
}

void hkc_hip_destroy(hkc_backend *be)
{
    hip_impl *h = hip_impl_of(be);
    while (h->buffers.head) { /* buffers the user never freed: keep their data, free the memory */
        hip_buffer *hb = (hip_buffer *)(void *)h->buffers.head;
        h->buffers.head = hb->g.next;
        hkc_hip_final_write_back(hb->g.b, hb);
        if (hb->g.kind == HKC_GPU_BUF_STAGED)
            hb->g.b->hptr = hb->host;
        hkc_hip_release(hb);
        hb->g.b->impl = NULL;
        free(hb);
    }
    hkc_gpu_buffers_destroy(&h->buffers);
    free(h);
    be->impl = NULL;
}

int hkc_hip_device_info(hkc_backend *be, int index, hk_device_info *out)
{
    const hip_device *hd = &hip_impl_of(be)->devs[index];
    hipDeviceProp_t p;
    memset(&p, 0, sizeof p);
    hipError_t e = hipGetDeviceProperties(&p, hd->ordinal);
    if (e != hipSuccess)
        return hkc_hip_fail(be->ctx, e, HK_EBACKEND, "hipGetDeviceProperties");
    snprintf(out->name, sizeof out->name, "%s", hd->name);
    snprintf(out->target, sizeof out->target, "%s", hd->target);
    out->total_memory = p.totalGlobalMem;
    out->compute_units = p.multiProcessorCount;
    out->warp_size = p.warpSize;
    out->managed_memory = hd->managed;
    out->pageable_memory = hd->pageable;
    out->max_threads_per_block = (uint32_t)p.maxThreadsPerBlock;
    for (int i = 0; i < 3; i++) {
        out->max_block[i] = (uint32_t)p.maxThreadsDim[i];
        out->max_grid[i] = (uint32_t)p.maxGridSize[i];
    }
    out->max_shared_per_block = p.sharedMemPerBlock;
    return 0;
}
