/* The CPU backend's device: the machine's CPU, probed once per context,
 * with a thread pool for launches. */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "env_values.h"
#include "host_backend.h"
#include "host_exec.h"
#include "host_fault.h"
#include "hip/hipkit_host_abi.h"

/* Backend instances alive in this process; the last one to go frees the
 * executor state of the thread that destroys it. */
static atomic_int live_instances;

static void read_cpu_name(char *out, size_t cap)
{
    snprintf(out, cap, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10))
            continue;
        char *v = strchr(line, ':');
        if (!v)
            break;
        v++;
        while (isspace((unsigned char)*v))
            v++;
        v[strcspn(v, "\n")] = 0;
        snprintf(out, cap, "%s", v);
        break;
    }
    fclose(f);
}

static int host_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return (int)hkc_env_long("HIPKIT_HOST_THREADS", 1, 4096, n > 0 ? n : 1);
}

int hkc_host_probe(hkc_backend *be, hkc_strbuf *reason)
{
    host_impl *h = calloc(1, sizeof *h);
    if (!h) {
        hkc_strbuf_puts(reason, "out of memory");
        return 0;
    }
    h->nthreads = host_threads();
    pthread_mutex_init(&h->allocs_lock, NULL);
    pthread_mutex_init(&h->compile_lock, NULL);
    pthread_mutex_init(&h->stream_lock, NULL);
    pthread_cond_init(&h->event_cv, NULL);
    h->pool = hkc_host_pool_create(h->nthreads, hkc_host_exec_thread_release);
    if (!h->pool) {
        free(h);
        hkc_strbuf_puts(reason, "cannot start worker threads");
        return 0;
    }
    h->nthreads = hkc_host_pool_size(h->pool);
    read_cpu_name(h->cpu_name, sizeof h->cpu_name);
    struct utsname u;
    snprintf(h->arch, sizeof h->arch, "%s", uname(&u) == 0 ? u.machine : "unknown");
    hkc_fault_install();
    atomic_fetch_add(&live_instances, 1);
    be->impl = h;
    return 1;
}

void hkc_host_destroy(hkc_backend *be)
{
    host_impl *h = be->impl;
    hkc_host_pool_destroy(h->pool);
    hkc_host_compile_cleanup(h);
    while (h->allocs) {
        host_alloc *a = h->allocs;
        h->allocs = a->next;
        if (!a->mapped)
            munmap(a->region, a->region_bytes);
        free(a);
    }
    pthread_mutex_destroy(&h->allocs_lock);
    pthread_mutex_destroy(&h->compile_lock);
    pthread_mutex_destroy(&h->stream_lock);
    pthread_cond_destroy(&h->event_cv);
    free(h);
    be->impl = NULL;
    if (atomic_fetch_sub(&live_instances, 1) == 1)
        hkc_host_exec_thread_release();
}

int hkc_host_device_info(hkc_backend *be, int index, hk_device_info *out)
{
    host_impl *h = be->impl;
    (void)index;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", h->cpu_name);
    snprintf(out->target, sizeof out->target, "%s", h->arch);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out->total_memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    out->compute_units = h->nthreads;
    out->warp_size = HK_HOST_WARP_SIZE;
    out->managed_memory = 1;
    out->pageable_memory = 1;
    out->max_threads_per_block = 1024;
    out->max_block[0] = out->max_block[1] = out->max_block[2] = 1024;
    out->max_grid[0] = 0x7fffffffu;
    out->max_grid[1] = out->max_grid[2] = 65535;
    out->max_shared_per_block = HK_HOST_MAX_DYNAMIC_SHARED;
    return 0;
}
