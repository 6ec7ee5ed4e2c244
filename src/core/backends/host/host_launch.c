/* The CPU backend's launches (the grid on the thread pool, finished when
 * the call returns), synchronize and events. */
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
    L.describe_addr = hkc_host_describe_addr;
    L.describe_ctx = &where;
    pthread_mutex_init(&L.msg_lock, NULL);
    int want = L.nblocks < (uint64_t)h->nthreads ? (int)L.nblocks : h->nthreads;
    /* About 16 chunks per thread: few trips to the shared counter, and still
     * room to even out blocks of unequal cost. */
    L.chunk = L.nblocks / ((uint64_t)want * 16);
    if (L.chunk < 1)
        L.chunk = 1;
    if (want <= 1)
        hkc_host_exec_blocks(&L);
    else
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
    (void)be;
    (void)dev;
    return 0; /* launches finish before they return */
}

/* ---------------------------------------------------------------- events */

int hkc_host_event_create(hk_event *e)
{
    e->impl = calloc(1, sizeof(double) * 2);
    return e->impl ? 0 : hkc_fail(e->ctx, HK_ENOMEM, "out of memory");
}

void hkc_host_event_destroy(hk_event *e) { free(e->impl); }

int hkc_host_event_record(hk_event *e)
{
    double *t = e->impl;
    t[0] = hkc_now_ms();
    t[1] = 1;
    return 0;
}

int hkc_host_event_synchronize(hk_event *e)
{
    double *t = e->impl;
    return t[1] ? 0 : hkc_fail(e->ctx, HK_ESTATE, "the event was never recorded");
}

int hkc_host_event_elapsed_ms(hk_event *a, hk_event *b, double *ms)
{
    double *ta = a->impl, *tb = b->impl;
    if (!ta[1] || !tb[1])
        return hkc_fail(a->ctx, HK_ESTATE, "both events must be recorded before timing them");
    *ms = tb[0] - ta[0];
    return 0;
}
