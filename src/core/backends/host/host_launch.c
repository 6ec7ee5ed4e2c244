/* The CPU backend's launches (the grid on the thread pool, finished when
 * the call returns) and synchronize. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_backend.h"
#include "host_exec.h"

/* ---------------------------------------------------------------- launch */

atomic_int hkc_host_interrupt;

void hk_interrupt(void) { atomic_store(&hkc_host_interrupt, 1); }

void hk_interrupt_reset(void) { atomic_store(&hkc_host_interrupt, 0); }

int hkc_host_launch_kernel(hkc_backend *be, int dev, const hkc_launch_kernel *k,
                           const hk_launch_config *cfg, const void *kernarg, size_t size)
{
    (void)dev;
    (void)size;
    /* The default stream starts after the work queued on streams. */
    hkc_host_streams_drain(be->impl);
    return hkc_host_run_launch(be, k, cfg, kernarg, 0);
}

int hkc_host_run_launch(hkc_backend *be, const hkc_launch_kernel *k, const hk_launch_config *cfg,
                        const void *kernarg, int on_stream)
{
    host_impl *h = be->impl;
    hkc_host_launch L;
    memset(&L, 0, sizeof L);
    L.desc = k->bfn;
    L.kernarg = kernarg;
    L.grid = (hk_host_uint3){cfg->grid.x, cfg->grid.y, cfg->grid.z};
    L.block = (hk_host_uint3){cfg->block.x, cfg->block.y, cfg->block.z};
    L.shared_bytes = cfg->shared_bytes;
    L.nblocks = (uint64_t)cfg->grid.x * cfg->grid.y * cfg->grid.z;
    hkc_host_describe where = {h, k->sig, kernarg};
    L.fibers_copy = hkc_host_kernel_fibers;
    L.describe_addr = hkc_host_describe_addr;
    L.describe_ctx = &where;
    pthread_mutex_init(&L.msg_lock, NULL);
    int want = L.nblocks < (uint64_t)h->nthreads ? (int)L.nblocks : h->nthreads;
    /* About 16 chunks per thread: few trips to the shared counter, and still
     * room to even out blocks of unequal cost. */
    L.chunk = L.nblocks / ((uint64_t)want * 16);
    if (L.chunk < 1)
        L.chunk = 1;
    if (want <= 1 || (on_stream && hkc_host_pool_try_run(h->pool, hkc_host_exec_blocks, &L, want) != 0))
        hkc_host_exec_blocks(&L);
    else if (!on_stream)
        hkc_host_pool_run(h->pool, hkc_host_exec_blocks, &L, want);
    pthread_mutex_destroy(&L.msg_lock);
    fflush(stdout); /* device printf output shows when the launch ends */
    /* Checked after a fault too, so that its writes are not blamed on the
     * next launch. */
    char msg[256];
    int wild = h->nchecked && hkc_host_check_canaries(h, k->sig, kernarg, msg, sizeof msg);
    if (atomic_load(&L.failed))
        return hkc_fail(be->ctx, HK_EFAULT, "%s", L.msg);
    if (atomic_load(&L.interrupted))
        return hkc_fail(be->ctx, HK_EINTR, "kernel %s interrupted: %llu of %llu blocks ran to their end",
                        L.desc->name, (unsigned long long)atomic_load(&L.ran),
                        (unsigned long long)L.nblocks);
    if (wild)
        return hkc_fail(be->ctx, HK_EFAULT, "kernel %s failed: %s", L.desc->name, msg);
    return 0;
}

int hkc_host_synchronize(hkc_backend *be, int dev)
{
    (void)dev;
    /* default-stream launches finish before they return; streams' errors
     * stay for their own synchronize (the core collects them) */
    hkc_host_streams_drain(be->impl);
    return 0;
}
