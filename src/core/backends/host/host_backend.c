/* The CPU backend: always built, always available. Buffers are host memory
 * between guard pages; kernels are shared objects built by the system C++
 * compiler; a launch runs the grid on a thread pool and has finished when it
 * returns. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

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
    const char *env = getenv("HIPKIT_HOST_THREADS");
    if (env && atoi(env) > 0)
        return atoi(env);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int host_probe(hkc_backend *be, hkc_strbuf *reason)
{
    host_impl *h = calloc(1, sizeof *h);
    if (!h) {
        hkc_strbuf_puts(reason, "out of memory");
        return 0;
    }
    h->nthreads = host_threads();
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

static void host_destroy(hkc_backend *be)
{
    host_impl *h = be->impl;
    hkc_host_pool_destroy(h->pool);
    hkc_host_compile_cleanup(h);
    while (h->allocs) {
        host_alloc *a = h->allocs;
        h->allocs = a->next;
        munmap(a->region, a->region_bytes);
        free(a);
    }
    free(h);
    be->impl = NULL;
    if (atomic_fetch_sub(&live_instances, 1) == 1)
        hkc_host_exec_thread_release();
}

static int host_device_info(hkc_backend *be, int index, hk_device_info *out)
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

/* ---------------------------------------------------------------- memory */

/* Start of the data is 64-byte aligned (the widest vector load) and its end
 * as close to the trailing guard page as that allows, so an overrun faults at
 * once; at most 63 bytes past the end go unnoticed. */
#define DATA_ALIGN 64

static int host_buf_alloc(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (b->bytes + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
    size_t data_pages = (data + page - 1) / page * page;
    if (!data_pages)
        data_pages = page;
    size_t total = data_pages + 2 * page;
    host_alloc *a = calloc(1, sizeof *a);
    char *region = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                        -1, 0);
    if (!a || region == MAP_FAILED) {
        free(a);
        if (region != MAP_FAILED)
            munmap(region, total);
        return hkc_fail(b->ctx, HK_ENOMEM, "cannot allocate %zu bytes of %s memory", b->bytes,
                        hk_mem_mode_name(b->mode));
    }
    mprotect(region, page, PROT_NONE);
    mprotect(region + page + data_pages, page, PROT_NONE);
    char *end = region + page + data_pages;
    b->kptr = b->hptr = data ? end - data : end - DATA_ALIGN;
    a->b = b;
    a->region = region;
    a->region_bytes = total;
    a->next = h->allocs;
    h->allocs = a;
    b->impl = a;
    return 0;
}

static void host_buf_free(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    for (host_alloc **pp = &h->allocs; *pp; pp = &(*pp)->next) {
        if (*pp != b->impl)
            continue;
        host_alloc *a = *pp;
        *pp = a->next;
        munmap(a->region, a->region_bytes);
        free(a);
        return;
    }
}

static int host_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    memcpy((char *)b->hptr + offset, src, bytes);
    return 0;
}

static int host_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    memcpy(dst, (char *)b->hptr + offset, bytes);
    return 0;
}

static int host_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                         size_t bytes)
{
    memmove((char *)dst->hptr + dst_offset, (char *)src->hptr + src_offset, bytes);
    return 0;
}

static int host_buf_fill(hk_buffer *b, const void *value)
{
    size_t es = hk_dtype_size(b->dtype);
    unsigned char *p = b->hptr;
    if (!b->count)
        return 0;
    memcpy(p, value, es);
    /* Doubling copies: a few memcpy calls for any size. */
    size_t done = es;
    while (done < b->bytes) {
        size_t n = done < b->bytes - done ? done : b->bytes - done;
        memcpy(p + done, p, n);
        done += n;
    }
    return 0;
}

/* Names the buffer an address falls in or next to, for fault messages. An
 * address inside a buffer's guard pages belongs to that buffer; one farther
 * away is described against the nearest buffer below it, as "nearest". */
static void describe_addr(void *vh, void *addr, char *out, size_t cap)
{
    host_impl *h = vh;
    char *p = addr;
    const hk_buffer *below = NULL;
    for (host_alloc *a = h->allocs; a; a = a->next) {
        hk_buffer *b = a->b;
        char *lo = b->kptr, *hi = lo + b->bytes;
        size_t es = hk_dtype_size(b->dtype);
        if (p >= a->region && p < a->region + a->region_bytes) {
            if (p >= hi)
                snprintf(out, cap, "(%zu bytes past the end of a buffer of %zu %s, element index %zu)",
                         (size_t)(p - hi), b->count, hk_dtype_name(b->dtype), (size_t)(p - lo) / es);
            else if (p < lo)
                snprintf(out, cap, "(%zu bytes before the start of a buffer of %zu %s)",
                         (size_t)(lo - p), b->count, hk_dtype_name(b->dtype));
            return;
        }
        if (lo <= p && (!below || lo > (char *)below->kptr))
            below = b;
    }
    if ((uintptr_t)addr < 65536)
        snprintf(out, cap, "(a null or nearly null pointer)");
    else if (below)
        snprintf(out, cap, "(nearest buffer below: %zu bytes past the end of a buffer of %zu %s)",
                 (size_t)(p - ((char *)below->kptr + below->bytes)), below->count,
                 hk_dtype_name(below->dtype));
}

/* --------------------------------------------------------------- modules */

typedef struct host_module {
    void *dl;
    const hk_host_kernel_desc *kernels;
    uint32_t count;
} host_module;

static int host_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **out,
                            hkc_strbuf *err)
{
    (void)dev;
    const unsigned char *c = code;
    if (size < 64 || memcmp(c, "\177ELF", 4) != 0) {
        hkc_strbuf_puts(err, "not an ELF shared object: the host backend loads the .so files its "
                             "compiler writes (as hk_module_code or m:save gives them)");
        return HK_EFORMAT;
    }
    int fd = memfd_create("hipkit-module", MFD_CLOEXEC);
    if (fd < 0) {
        hkc_strbuf_printf(err, "memfd_create: %s", strerror(errno));
        return HK_EIO;
    }
    int we = hkc_host_write_all(fd, c, size);
    if (we) {
        hkc_strbuf_printf(err, "writing the module to memory: %s", strerror(-we));
        close(fd);
        return HK_EIO;
    }
    /* The loader returns an already loaded object whose name matches, and
     * /proc/self/fd/N names repeat once N is reused: load through a link with
     * a name of its own. */
    host_impl *h = be->impl;
    int r = hkc_host_workdir(h, err);
    if (r) {
        close(fd);
        return r;
    }
    char target[64], path[4200];
    snprintf(target, sizeof target, "/proc/self/fd/%d", fd);
    snprintf(path, sizeof path, "%s/load-%u.so", h->workdir, h->serial++);
    if (symlink(target, path) != 0) {
        hkc_strbuf_printf(err, "cannot create %s: %s", path, strerror(errno));
        close(fd);
        return HK_EIO;
    }
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    unlink(path);
    close(fd);
    if (!dl) {
        hkc_strbuf_printf(err, "cannot load the module: %s", dlerror());
        return HK_EFORMAT;
    }
    const uint32_t *abi = dlsym(dl, "hk_host_module_abi");
    const uint32_t *count = dlsym(dl, "hk_host_kernel_count");
    const hk_host_kernel_desc *kernels = dlsym(dl, "hk_host_kernels");
    if (!abi || !count || !kernels) {
        hkc_strbuf_puts(err, "this shared object is no hipkit host module (it lacks hk_host_module_abi "
                             "and its kernel table)");
        dlclose(dl);
        return HK_EFORMAT;
    }
    if (*abi != HK_HOST_ABI_VERSION) {
        hkc_strbuf_printf(err, "the module was built for host ABI %u, this hipkit runs ABI %u: "
                               "compile it again", *abi, HK_HOST_ABI_VERSION);
        dlclose(dl);
        return HK_EFORMAT;
    }
    host_module *m = calloc(1, sizeof *m);
    if (!m) {
        dlclose(dl);
        return HK_ENOMEM;
    }
    m->dl = dl;
    m->kernels = kernels;
    m->count = *count;
    *out = m;
    return 0;
}

static void host_module_unload(hkc_backend *be, void *bmod)
{
    (void)be;
    host_module *m = bmod;
    dlclose(m->dl);
    free(m);
}

static int host_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count)
{
    (void)be;
    host_module *m = bmod;
    hkc_kernel_meta *out = calloc(m->count ? m->count : 1, sizeof *out);
    if (!out)
        return HK_ENOMEM;
    for (uint32_t i = 0; i < m->count; i++) {
        const hk_host_kernel_desc *d = &m->kernels[i];
        snprintf(out[i].name, sizeof out[i].name, "%s", d->name);
        out[i].nparams = d->nparams <= 64 ? (int)d->nparams : -1;
        for (uint32_t p = 0; p < d->nparams && p < 64; p++) {
            out[i].param_size[p] = d->param_size[p];
            out[i].param_align[p] = d->param_align[p];
        }
        out[i].uses_sync = (int)d->uses_sync;
    }
    *metas = out;
    *count = (int)m->count;
    return 0;
}

static int host_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                             hk_kernel_info *info, hkc_strbuf *err)
{
    (void)be;
    host_module *m = bmod;
    for (uint32_t i = 0; i < m->count; i++) {
        if (strcmp(m->kernels[i].name, name))
            continue;
        *bfn = (void *)&m->kernels[i];
        info->max_threads_per_block = 1024;
        return 0;
    }
    hkc_strbuf_printf(err, "no kernel '%s' in the module", name);
    return HK_ENOTFOUND;
}

/* ---------------------------------------------------------------- launch */

static int host_launch(hk_kernel *k, const hk_launch_config *cfg, const void *kernarg, size_t size)
{
    (void)size;
    hkc_backend *be = k->m->entry->dev->be;
    host_impl *h = be->impl;
    hkc_host_launch L;
    memset(&L, 0, sizeof L);
    L.desc = k->bfn;
    L.kernarg = kernarg;
    L.grid = (hk_host_uint3){cfg->grid.x, cfg->grid.y, cfg->grid.z};
    L.block = (hk_host_uint3){cfg->block.x, cfg->block.y, cfg->block.z};
    L.shared_bytes = cfg->shared_bytes;
    L.nblocks = (uint64_t)cfg->grid.x * cfg->grid.y * cfg->grid.z;
    L.describe_addr = describe_addr;
    L.describe_ctx = h;
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
    if (atomic_load(&L.failed))
        return hkc_fail(k->m->ctx, HK_EFAULT, "%s", L.msg);
    return 0;
}

static int host_synchronize(hkc_backend *be, int dev)
{
    (void)be;
    (void)dev;
    return 0; /* launches finish before they return */
}

/* ---------------------------------------------------------------- events */

static int host_event_create(hk_event *e)
{
    e->impl = calloc(1, sizeof(double) * 2);
    return e->impl ? 0 : hkc_fail(e->ctx, HK_ENOMEM, "out of memory");
}

static void host_event_destroy(hk_event *e) { free(e->impl); }

static int host_event_record(hk_event *e)
{
    double *t = e->impl;
    t[0] = hkc_now_ms();
    t[1] = 1;
    return 0;
}

static int host_event_synchronize(hk_event *e)
{
    double *t = e->impl;
    return t[1] ? 0 : hkc_fail(e->ctx, HK_ESTATE, "the event was never recorded");
}

static int host_event_elapsed_ms(hk_event *a, hk_event *b, double *ms)
{
    double *ta = a->impl, *tb = b->impl;
    if (!ta[1] || !tb[1])
        return hkc_fail(a->ctx, HK_ESTATE, "both events must be recorded before timing them");
    *ms = tb[0] - ta[0];
    return 0;
}

const hkc_backend_ops hkc_backend_host = {
    .name = "host",
    .code_ext = "so",
    .wide_vector_align = 32,
    .probe = host_probe,
    .destroy = host_destroy,
    .device_info = host_device_info,
    .toolchain = hkc_host_toolchain,
    .buf_alloc = host_buf_alloc,
    .buf_free = host_buf_free,
    .buf_register = NULL,
    .buf_unregister = NULL,
    .buf_upload = host_buf_upload,
    .buf_download = host_buf_download,
    .buf_copy = host_buf_copy,
    .buf_fill = host_buf_fill,
    .compile = hkc_host_compile,
    .target_normalize = hkc_host_target_normalize,
    .compile_target = hkc_host_compile_target,
    .module_load = host_module_load,
    .module_unload = host_module_unload,
    .module_kernels = host_module_kernels,
    .function_get = host_function_get,
    .launch = host_launch,
    .synchronize = host_synchronize,
    .event_create = host_event_create,
    .event_destroy = host_event_destroy,
    .event_record = host_event_record,
    .event_synchronize = host_event_synchronize,
    .event_elapsed_ms = host_event_elapsed_ms,
    .disasm = hkc_host_disasm,
};
