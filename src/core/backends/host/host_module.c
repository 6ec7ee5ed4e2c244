/* The CPU backend's modules: shared objects built by host_compile.c,
 * loaded from memory, with the kernel table the generated code exports. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "env_values.h"
#include "host_backend.h"
#include "hip/hipkit_host_abi.h"

/* --------------------------------------------------------------- modules */

/* HIPKIT_HOST_MODE: how kernels with barriers run. Unset, "auto" or
 * "loops": the compile writes loop versions where the transform proves
 * them safe (host_compile.c) and they run wherever the module has one (a
 * kernel the transform refused has none: it runs on fibers); "fibers"
 * keeps every kernel on fibers, read when a module is compiled or loaded. */
int hkc_host_fibers_forced(void)
{
    return hkc_env_word("HIPKIT_HOST_MODE", hkc_host_mode_words, HKC_HOST_MODE_AUTO) == HKC_HOST_MODE_FIBERS;
}

/* A kernel as the core holds it (its bfn): the module's table entry first,
 * which the executor reads, then where it comes from. */
typedef struct host_kernel {
    hk_host_kernel_desc d;
    struct host_module *m;
    uint32_t index;
} host_kernel;

typedef struct host_module {
    void *dl;
    hkc_backend *be;
    /* The module's table, with run_block swapped for the loop version where
     * the module has one and HIPKIT_HOST_MODE allows it. */
    host_kernel *kernels;
    const hk_host_kernel_mode *modes; /* NULL in modules built before loop mode */
    uint32_t count;
    const hk_host_global_desc *globals; /* NULL in modules built before the table */
    const uint32_t *max_threads; /* __launch_bounds__ (0: none); NULL in older modules */
    /* Kernels split without a fibers copy (their table entry is their loop
     * version): the copies are a module of their own, compiled from
     * fibers_unit when first needed (a fault to find again on fibers,
     * HIPKIT_HOST_MODE=fibers at load) and kept in the disk cache. */
    const char *fibers_unit, *fibers_flags;
    pthread_mutex_t copy_lock;
    struct host_module *copy;
    int copy_failed; /* a compile failed once: not tried again for every fault */
} host_module;

static int module_load(hkc_backend *be, const void *code, size_t size, host_module **out,
                       hkc_strbuf *err);

/* Kernel i has no fibers copy in m. */
static int loops_only(const host_module *m, uint32_t i)
{
    return m->fibers_unit && m->modes && m->modes[i].run_loops &&
           m->kernels[i].d.run_block == m->modes[i].run_loops;
}

/* m->copy, compiled or from the cache the first time (under copy_lock). */
static int copy_get(host_module *m, hkc_strbuf *err)
{
    if (m->copy)
        return 0;
    if (m->copy_failed) {
        hkc_strbuf_puts(err, "its fibers copy did not compile before");
        return HK_ECOMPILE;
    }
    void *code = NULL;
    size_t size = 0;
    host_module *c = NULL;
    int r = hkc_host_compile_unit(m->be, m->fibers_unit, m->fibers_flags, &code, &size, err);
    if (r == 0)
        r = module_load(m->be, code, size, &c, err);
    free(code);
    if (r == 0 && (c->count != m->count || c->fibers_unit)) {
        hkc_strbuf_puts(err, "its fibers copy has another kernel table");
        hkc_host_module_unload(m->be, c);
        r = HK_EFORMAT;
    }
    for (uint32_t i = 0; r == 0 && i < m->count; i++)
        if (strcmp(c->kernels[i].d.name, m->kernels[i].d.name)) {
            hkc_strbuf_puts(err, "its fibers copy has another kernel table");
            hkc_host_module_unload(m->be, c);
            r = HK_EFORMAT;
        }
    if (r == 0)
        m->copy = c;
    else
        m->copy_failed = 1;
    return r;
}

const hk_host_kernel_desc *hkc_host_kernel_fibers(const hk_host_kernel_desc *d)
{
    host_kernel *k = (host_kernel *)d;
    host_module *m = k->m;
    if (!loops_only(m, k->index))
        return d; /* its own fibers copy: run with the runtime table without loop mode */
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    pthread_mutex_lock(&m->copy_lock);
    const hk_host_kernel_desc *r = NULL;
    if (copy_get(m, &err) == 0) {
        /* the module variables as the faulted run saw them */
        for (const hk_host_global_desc *g = m->globals; g && g->name; g++)
            for (const hk_host_global_desc *c = m->copy->globals; c && c->name; c++)
                if (!strcmp(g->name, c->name) && g->bytes == c->bytes)
                    memcpy(c->addr, g->addr, g->bytes);
        r = &m->copy->kernels[k->index].d;
    }
    pthread_mutex_unlock(&m->copy_lock);
    hkc_strbuf_free(&err); /* the fault is reported without its thread */
    return r;
}

static int module_load(hkc_backend *be, const void *code, size_t size, host_module **out,
                       hkc_strbuf *err)
{
    const unsigned char *c = code;
    if (size < 64 || memcmp(c, "\177ELF", 4) != 0) {
        hkc_strbuf_puts(err, "not an ELF shared object: the host backend loads the .so files its "
                             "compiler writes (as hk_module_code or m:save gives them)");
        return HK_EFORMAT;
    }
    int bad = hkc_host_elf_check(c, size, err);
    if (bad)
        return bad;
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
    int probe = hkc_loading_user_code ? hkc_host_probe_load(path, err) : 0;
    void *dl = probe ? NULL : dlopen(path, RTLD_NOW | RTLD_LOCAL);
    unlink(path);
    if (probe) {
        close(fd);
        return probe;
    }
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
    m->be = be;
    pthread_mutex_init(&m->copy_lock, NULL);
    m->count = *count;
    m->globals = dlsym(dl, "hk_host_globals");
    m->modes = dlsym(dl, "hk_host_kernel_modes");
    m->max_threads = dlsym(dl, "hk_host_kernel_max_threads");
    m->kernels = calloc(m->count ? m->count : 1, sizeof *m->kernels);
    if (!m->kernels) {
        dlclose(dl);
        free(m);
        return HK_ENOMEM;
    }
    const char *unit = dlsym(dl, "hk_host_fibers_unit"), *flags = dlsym(dl, "hk_host_fibers_flags");
    if (unit && flags) {
        m->fibers_unit = unit;
        m->fibers_flags = flags;
    }
    int fibers = hkc_host_fibers_forced();
    for (uint32_t i = 0; i < m->count; i++) {
        m->kernels[i] = (host_kernel){kernels[i], m, i};
        if (!fibers && m->modes && m->modes[i].run_loops)
            m->kernels[i].d.run_block = m->modes[i].run_loops;
    }
    *out = m;
    return 0;
}

int hkc_host_module_load(hkc_backend *be, int dev, const void *code, size_t size, void **out,
                         hkc_strbuf *err)
{
    (void)dev;
    host_module *m = NULL;
    int r = module_load(be, code, size, &m, err);
    if (r != 0)
        return r;
    /* HIPKIT_HOST_MODE=fibers and kernels built as loops only: the whole
     * module runs as its fibers copy (kernels and module variables; how
     * each kernel could run, for k:info, stays this module's) */
    int need = 0;
    for (uint32_t i = 0; hkc_host_fibers_forced() && i < m->count; i++)
        need |= loops_only(m, i);
    if (need) {
        hkc_strbuf why;
        hkc_strbuf_init(&why);
        r = copy_get(m, &why);
        if (r != 0) {
            hkc_strbuf_printf(err, "HIPKIT_HOST_MODE=fibers, and the module's kernels were built as "
                                   "loops only; compiling their fibers copy failed: %s", why.data);
            hkc_strbuf_free(&why);
            hkc_host_module_unload(be, m);
            return r;
        }
        hkc_strbuf_free(&why);
        for (uint32_t i = 0; i < m->count; i++)
            m->kernels[i].d = m->copy->kernels[i].d;
        m->globals = m->copy->globals;
    }
    *out = m;
    return 0;
}

void hkc_host_module_unload(hkc_backend *be, void *bmod)
{
    host_module *m = bmod;
    hkc_host_streams_drain(be->impl); /* queued launches call into it */
    if (m->copy)
        hkc_host_module_unload(be, m->copy);
    pthread_mutex_destroy(&m->copy_lock);
    dlclose(m->dl);
    free(m->kernels);
    free(m);
}

int hkc_host_module_kernels(hkc_backend *be, void *bmod, hkc_kernel_meta **metas, int *count)
{
    (void)be;
    host_module *m = bmod;
    hkc_kernel_meta *out = calloc(m->count ? m->count : 1, sizeof *out);
    if (!out)
        return HK_ENOMEM;
    for (uint32_t i = 0; i < m->count; i++) {
        const hk_host_kernel_desc *d = &m->kernels[i].d;
        snprintf(out[i].name, sizeof out[i].name, "%s", d->name);
        out[i].nparams = d->nparams <= 64 ? (int)d->nparams : -1;
        for (uint32_t p = 0; p < d->nparams && p < 64; p++) {
            out[i].param_size[p] = d->param_size[p];
            out[i].param_align[p] = d->param_align[p];
        }
        out[i].uses_sync = (int)d->uses_sync;
        /* How it runs, and why not split at its barriers (k:info) */
        int loops = m->modes && m->modes[i].run_loops && d->run_block == m->modes[i].run_loops;
        snprintf(out[i].exec_mode, sizeof out[i].exec_mode, "%s",
                 !d->uses_sync ? "loop" : loops ? "loops" : "fibers");
        if (d->uses_sync && !loops)
            snprintf(out[i].exec_why, sizeof out[i].exec_why, "%s",
                     !m->modes                 ? "the module was built before loop mode"
                     : m->modes[i].run_loops ? "HIPKIT_HOST_MODE=fibers"
                                             : m->modes[i].why);
    }
    *metas = out;
    *count = (int)m->count;
    return 0;
}

int hkc_host_module_global(hkc_backend *be, void *bmod, const char *name, void **kptr,
                           void **hptr, size_t *bytes, hkc_strbuf *err)
{
    (void)be;
    host_module *m = bmod;
    for (const hk_host_global_desc *g = m->globals; g && g->name; g++)
        if (!strcmp(g->name, name)) {
            *kptr = *hptr = g->addr;
            *bytes = g->bytes;
            return 0;
        }
    hkc_strbuf_printf(err, "no module variable '%s'", name);
    return HK_ENOTFOUND;
}

int hkc_host_function_get(hkc_backend *be, void *bmod, const char *name, void **bfn,
                             hk_kernel_info *info, hkc_strbuf *err)
{
    (void)be;
    host_module *m = bmod;
    for (uint32_t i = 0; i < m->count; i++) {
        if (strcmp(m->kernels[i].d.name, name))
            continue;
        *bfn = (void *)&m->kernels[i];
        uint32_t bound = m->max_threads ? m->max_threads[i] : 0;
        info->max_threads_per_block = bound && bound < 1024 ? bound : 1024;
        return 0;
    }
    hkc_strbuf_printf(err, "no kernel '%s' in the module", name);
    return HK_ENOTFOUND;
}
