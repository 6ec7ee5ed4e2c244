/* The executor. Each OS thread that runs blocks keeps its own state: the
 * block's dynamic and static shared memory, the fiber stacks, and the
 * recovery point for faults. A block runs entirely on one OS thread, which is
 * what makes per-OS-thread storage behave as __shared__ memory.
 *
 * Fiber scheduling (kernels that use barriers or warp operations): warps are
 * run one after another; inside a warp, each lane runs until it reaches a
 * warp operation, a block barrier or its end. When every live lane of the
 * warp waits at a warp operation, the scheduler completes it (all values are
 * in, so a shuffle needs one rendezvous, not two) and the lanes go on. When
 * every live thread of the block waits at the block barrier, it opens. */
#include "env_values.h"
#include "host_exec.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host_backend.h"
#include "host_fault.h"
#include "host_fiber.h"

/* F_NEW: not started, holds no stack yet. */
enum { F_NEW, F_RUNNABLE, F_AT_BLOCK, F_AT_WARP, F_DONE };
enum { OP_SHFL, OP_BALLOT, OP_SYNCWARP, OP_ACTIVEMASK };

typedef struct fthread {
    hkc_fiber fiber;
    hk_host_thread t;
    uint32_t stack; /* index of the pool's stack it runs on, once started */
    int state;
    int op;
    int src;
    uint64_t value, result;
} fthread;

typedef struct worker {
    hkc_fault_point fault;
    hk_host_block block;
    void *dyn_shared;
    /* static __shared__ variables: carved downwards from st_end, where a
     * PROT_NONE span of ST_GUARD bytes begins (see hk_host_shared_vars) */
    hk_host_shared_vars st;
    char *st_region, *st_end, *st_top;
    uint64_t st_bytes;
    struct {
        unsigned char *lo; /* checked mode: the canary after a variable */
        size_t n;
    } st_gap[HK_HOST_MAX_STATIC_VARS];
    /* fibers */
    hkc_fiber sched;
    fthread *threads;
    uint32_t cap;
    /* The stack pool: cap stacks, handed to a thread when it starts and
     * taken back when it ends, last in first out, so threads that end
     * before the next one starts all run on the same few (cache-hot)
     * stacks. free_stack[0..nfree) are the free ones. */
    hkc_fiber *pool;
    uint32_t *free_stack, nfree;
    void *stacks;
    size_t stacks_bytes, stack_size;
    uint32_t current;
    uint32_t warp_end; /* lanes [current, warp_end) are the ones being run */
    uint32_t at_warp;  /* lanes of the warp being run stopped at a warp operation */
    uint32_t at_block; /* threads of the block stopped at the block barrier */
    int fibers_active;
    hk_host_thread_fn fn;
    void *closure;
    int interrupted; /* the block stopped at a safe point for hk_interrupt() */
    /* loop mode: the per-thread values of the block, and where the module
     * keeps the running thread's index (hk_host_runtime.loop_begin; set
     * while a block runs in loop mode, its value not kept up to date: see
     * find_loop_thread) */
    void *loop_mem;
    size_t loop_cap;
    const volatile uint32_t *loop_tid;
    int rerun; /* running a faulted loop-mode block again on fibers (find_loop_thread) */
    char fail_msg[768];
} worker;

/* initial-exec: a plain load from the thread pointer instead of a call to
 * __tls_get_addr, on every barrier. libhipkit is linked, not dlopen'ed, and
 * if it ever is, one pointer fits the loader's static TLS reserve. */
static _Thread_local worker *self __attribute__((tls_model("initial-exec")));

/* Past the dynamic and the static shared memory: wide enough that an index far beyond the
 * end (4096 floats, 64 Ki floats) still lands in it, not in a mapping of the
 * process. In checked mode the span below the end also holds a canary gap
 * and alignment slack per variable, hence twice the limit. */
#define ST_GUARD ((size_t)256 * 1024)
#define ST_SPAN ((size_t)2 * HK_HOST_MAX_STATIC_SHARED)
#define ST_CANARY_GAP 64
#define ST_CANARY 0xfd

static int map_static_shared(worker *w)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *r = mmap(NULL, pg + ST_SPAN + ST_GUARD, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return -1;
    if (mprotect(r + pg, ST_SPAN, PROT_READ | PROT_WRITE) != 0) {
        munmap(r, pg + ST_SPAN + ST_GUARD);
        return -1;
    }
    w->st_region = r;
    w->st_end = r + pg + ST_SPAN;
    return 0;
}

static worker *worker_get(void)
{
    if (self)
        return self;
    worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    /* The dynamic shared block ends at a guard span, and each launch's block
     * is placed so that it ends there too: an access past the bytes the
     * launch asked for (any access, when it asked for none) faults and is
     * reported as a fault of the kernel, instead of reading or corrupting
     * memory of the process. */
    size_t span = HK_HOST_MAX_DYNAMIC_SHARED + ST_GUARD;
    char *region = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || mprotect(region + HK_HOST_MAX_DYNAMIC_SHARED, ST_GUARD, PROT_NONE) != 0) {
        if (region != MAP_FAILED)
            munmap(region, span);
        free(w);
        return NULL;
    }
    w->dyn_shared = region;
    if (map_static_shared(w) != 0) {
        munmap(region, span);
        free(w);
        return NULL;
    }
    w->block.static_shared = &w->st;
    /* at least 16: room for the start frame and the cache-line shift below */
    size_t kib = (size_t)hkc_env_long("HIPKIT_HOST_STACK", 16, 1L << 20, 128);
    long page = sysconf(_SC_PAGESIZE);
    w->stack_size = (kib * 1024 + (size_t)page - 1) / (size_t)page * (size_t)page;
    self = w;
    return w;
}

static void release_fibers(worker *w)
{
    for (uint32_t i = 0; i < w->cap; i++) {
        hkc_fiber_stack_unregister(&w->pool[i]);
        hkc_fiber_release(&w->threads[i].fiber);
    }
    hkc_fiber_release(&w->sched);
    if (w->stacks)
        munmap(w->stacks, w->stacks_bytes);
    free(w->threads);
    free(w->pool);
    free(w->free_stack);
    w->threads = NULL;
    w->pool = NULL;
    w->free_stack = NULL;
    w->stacks = NULL;
    w->cap = 0;
    w->nfree = 0;
}

void hkc_host_exec_thread_release(void)
{
    worker *w = self;
    if (!w)
        return;
    release_fibers(w);
    free(w->loop_mem);
    munmap(w->dyn_shared, HK_HOST_MAX_DYNAMIC_SHARED + ST_GUARD);
    munmap(w->st_region, (size_t)sysconf(_SC_PAGESIZE) + ST_SPAN + ST_GUARD);
    free(w);
    self = NULL;
    hkc_fault_thread_release();
}

/* Stacks for n fibers, each with a guard page below it so an overflow faults
 * (and is reported) instead of running into the next fiber's stack. */
static int ensure_fibers(worker *w, uint32_t n)
{
    if (n <= w->cap)
        return 0;
    release_fibers(w);
    long page = sysconf(_SC_PAGESIZE);
    size_t slot = w->stack_size + (size_t)page;
    size_t bytes = slot * n;
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    fthread *ts = calloc(n, sizeof *ts);
    hkc_fiber *pool = calloc(n, sizeof *pool);
    uint32_t *free_stack = calloc(n, sizeof *free_stack);
    if (mem == MAP_FAILED || !ts || !pool || !free_stack) {
        if (mem != MAP_FAILED)
            munmap(mem, bytes);
        free(ts);
        free(pool);
        free(free_stack);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        char *base = (char *)mem + slot * i;
        mprotect(base, (size_t)page, PROT_NONE);
        pool[i].stack_lo = base + page;
        /* Stack tops a whole number of pages apart would all fall in one L1
         * cache set and evict each other at every switch: shift each top
         * by a different cache line. */
        pool[i].stack_size = w->stack_size - (i % 64) * 64;
        hkc_fiber_stack_register(&pool[i]);
    }
    w->stacks = mem;
    w->stacks_bytes = bytes;
    w->threads = ts;
    w->pool = pool;
    w->free_stack = free_stack;
    w->cap = n;
    w->nfree = 0; /* filled at the block's start */
    return 0;
}

/* ------------------------------------------------------ runtime services */

static void rt_fail(const char *msg) __attribute__((noreturn));
static void rt_fail(const char *msg)
{
    worker *w = self;
    snprintf(w->fail_msg, sizeof w->fail_msg, "%s", msg ? msg : "kernel failed");
    w->fault.armed = 0;
    w->fault.signo = -1;
    if (w->fault.landing)
        hkc_fiber_prepare_jump(w->fault.landing);
    siglongjmp(w->fault.jmp, 1);
}

static void fiber_main(void *arg);

/* A thread that starts takes the most recently freed stack. */
static inline void take_stack(worker *w, fthread *t)
{
    t->stack = w->free_stack[--w->nfree];
    t->fiber.stack_lo = w->pool[t->stack].stack_lo;
    t->fiber.stack_size = w->pool[t->stack].stack_size;
    t->state = F_RUNNABLE;
}

/* A lane that stops (barrier, warp operation, end) hands over directly to
 * the next lane of its warp that can run, and only the last one goes back
 * to the scheduler: one switch per lane and barrier instead of two. A lane
 * that has not started yet is started there, on a stack from the pool. */
static void hand_over(worker *w, fthread *from, int from_done)
{
    for (uint32_t j = w->current + 1; j < w->warp_end; j++) {
        fthread *t = &w->threads[j];
        if (t->state == F_RUNNABLE) {
            w->current = j;
            if (from_done)
                hkc_fiber_exit(&from->fiber, &t->fiber);
            else
                hkc_fiber_switch(&from->fiber, &t->fiber);
            return;
        }
        if (t->state == F_NEW) {
            w->current = j;
            /* Taken before the finished lane's stack is given back: the
             * start must not write over the stack it is running on. */
            take_stack(w, t);
            if (from_done)
                w->free_stack[w->nfree++] = from->stack;
            hkc_fiber_start(&from->fiber, from_done, &t->fiber, fiber_main, t);
            return;
        }
    }
    if (from_done) {
        w->free_stack[w->nfree++] = from->stack;
        hkc_fiber_exit(&from->fiber, &w->sched);
    } else {
        hkc_fiber_switch(&from->fiber, &w->sched);
    }
}

static void fiber_main(void *arg)
{
    fthread *ft = arg;
    worker *w = self;
    w->fn(w->closure, &ft->t);
    ft->state = F_DONE;
    hand_over(w, ft, 1);
    abort(); /* a finished fiber is never resumed */
}

static inline fthread *current_fiber(worker *w, const char *what)
{
    if (!w || !w->fibers_active) {
        char msg[256];
        snprintf(msg, sizeof msg, "kernel %s reached %s while its threads ran as a plain loop",
                 w ? w->block.kernel : "?", what);
        rt_fail(msg);
    }
    return &w->threads[w->current];
}

/* A barrier or warp operation is a safe point: the lane's state is its own,
 * so the block can end there without harm to the buffers. */
static void yield_as(worker *w, fthread *ft, int state)
{
    if (atomic_load_explicit(&hkc_host_interrupt, memory_order_relaxed)) {
        w->interrupted = 1;
        rt_fail("interrupted");
    }
    ft->state = state;
    if (state == F_AT_WARP)
        w->at_warp++;
    else
        w->at_block++;
    hand_over(w, ft, 0);
}

static void rt_syncthreads(void)
{
    worker *w = self;
    yield_as(w, current_fiber(w, "__syncthreads"), F_AT_BLOCK);
}

static uint64_t warp_op(int op, uint64_t value, int src, const char *what)
{
    worker *w = self;
    fthread *ft = current_fiber(w, what);
    ft->op = op;
    ft->value = value;
    ft->src = src;
    yield_as(w, ft, F_AT_WARP);
    return ft->result;
}

static void rt_syncwarp(void) { warp_op(OP_SYNCWARP, 0, 0, "__syncwarp"); }
static uint64_t rt_shfl(uint64_t v, int src) { return warp_op(OP_SHFL, v, src, "a warp shuffle"); }
static uint64_t rt_ballot(int pred) { return warp_op(OP_BALLOT, pred != 0, 0, "__ballot"); }
static uint64_t rt_activemask(void) { return warp_op(OP_ACTIVEMASK, 0, 0, "__activemask"); }

static void rt_print(const char *text, size_t n)
{
    if (!self->rerun) /* printed once already, by the run that faulted */
        fwrite(text, 1, n, stdout);
}

/* Completes a warp operation every live lane of warp [lo, hi) waits at. */
static void release_warp(worker *w, uint32_t lo, uint32_t hi)
{
    uint64_t live = 0, ballot = 0;
    for (uint32_t i = lo; i < hi; i++) {
        fthread *t = &w->threads[i];
        if (t->state == F_DONE)
            continue;
        live |= 1ull << (i - lo);
        if (t->op == OP_BALLOT && t->value)
            ballot |= 1ull << (i - lo);
    }
    for (uint32_t i = lo; i < hi; i++) {
        fthread *t = &w->threads[i];
        if (t->state != F_AT_WARP)
            continue;
        switch (t->op) {
        case OP_SHFL: {
            int s = t->src;
            int ok = s >= 0 && (uint32_t)s < hi - lo && (live >> s & 1) &&
                     w->threads[lo + (uint32_t)s].op == OP_SHFL;
            t->result = ok ? w->threads[lo + (uint32_t)s].value : t->value;
            break;
        }
        case OP_BALLOT:
            t->result = ballot;
            break;
        default:
            t->result = live;
        }
        t->state = F_RUNNABLE;
    }
}

static void rt_run_fibers(const hk_host_block *b, hk_host_thread_fn fn, void *closure)
{
    worker *w = self;
    uint32_t n = b->nthreads;
    if (ensure_fibers(w, n) != 0)
        rt_fail("out of memory for fiber stacks");
    w->fn = fn;
    w->closure = closure;
    uint32_t i = 0;
    for (uint32_t z = 0; z < b->dim.z; z++)
        for (uint32_t y = 0; y < b->dim.y; y++)
            for (uint32_t x = 0; x < b->dim.x; x++, i++) {
                fthread *t = &w->threads[i];
                t->t.idx = (hk_host_uint3){x, y, z};
                t->t.linear = i;
                t->t.lane = i % HK_HOST_WARP_SIZE;
                t->state = F_NEW;
            }
    /* Every stack is free at a block's start (a block that failed left
     * its threads' stacks taken). */
    if (w->nfree != w->cap) {
        for (uint32_t k = 0; k < w->cap; k++)
            w->free_stack[k] = w->cap - 1 - k; /* stack 0 is taken first */
        w->nfree = w->cap;
    }
    w->at_warp = w->at_block = 0;
    w->fibers_active = 1;
    w->fault.landing = &w->sched;
    for (;;) {
        for (uint32_t lo = 0; lo < n; lo += HK_HOST_WARP_SIZE) {
            uint32_t hi = lo + HK_HOST_WARP_SIZE < n ? lo + HK_HOST_WARP_SIZE : n;
            for (;;) {
                uint32_t block_before = w->at_block;
                /* Run the warp's runnable lanes, as one chain (hand_over). */
                for (uint32_t j = lo; j < hi; j++) {
                    fthread *t = &w->threads[j];
                    if (t->state == F_RUNNABLE || t->state == F_NEW) {
                        w->current = j;
                        w->warp_end = hi;
                        if (t->state == F_RUNNABLE) {
                            hkc_fiber_switch(&w->sched, &t->fiber);
                        } else {
                            take_stack(w, t);
                            hkc_fiber_start(&w->sched, 0, &t->fiber, fiber_main, t);
                        }
                        break;
                    }
                }
                /* Counted as the lanes stopped (yield_as), instead of a
                 * scan of the warp after every pass. */
                uint32_t at_warp = w->at_warp, at_block = w->at_block - block_before;
                w->at_warp = 0;
                if (!at_warp)
                    break;
                if (at_block) {
                    char msg[256];
                    snprintf(msg, sizeof msg,
                             "kernel %s: in warp %u of block (%u, %u, %u), some lanes wait at "
                             "__syncthreads while others wait at a warp operation (divergent barrier)",
                             b->kernel, lo / HK_HOST_WARP_SIZE, b->idx.x, b->idx.y, b->idx.z);
                    w->fibers_active = 0;
                    w->fault.landing = NULL; /* already on the scheduler's stack */
                    rt_fail(msg);
                }
                release_warp(w, lo, hi);
            }
        }
        /* Every live thread waits at the block barrier (or all are done). */
        if (!w->at_block)
            break;
        for (uint32_t j = 0; j < n; j++)
            if (w->threads[j].state == F_AT_BLOCK)
                w->threads[j].state = F_RUNNABLE;
        w->at_block = 0;
    }
    w->fault.landing = NULL;
    w->fibers_active = 0;
}

/* The first time the block reaches a static __shared__ declaration. In
 * checked mode a canary gap lies between each variable and the one above
 * it (and fills the alignment slack), verified when the block ends: a write
 * that runs from one variable into the next is caught there. */
static void *rt_static_shared(const char *key, uint64_t size, uint64_t align)
{
    worker *w = self;
    hk_host_shared_vars *s = &w->st;
    char msg[256];
    if (align < 16)
        align = 16;
    if (align > 256 || (align & (align - 1))) {
        snprintf(msg, sizeof msg, "kernel %s: __shared__ variable %s asks for alignment %llu "
                 "(at most 256 on the CPU backend)", w->block.kernel, key, (unsigned long long)align);
        rt_fail(msg);
    }
    if (s->hk_n == HK_HOST_MAX_STATIC_VARS || size > HK_HOST_MAX_STATIC_SHARED - w->st_bytes) {
        snprintf(msg, sizeof msg, "kernel %s: its static __shared__ variables (at %s) need more "
                 "than %u bytes or %u variables per block", w->block.kernel, key,
                 HK_HOST_MAX_STATIC_SHARED, HK_HOST_MAX_STATIC_VARS);
        rt_fail(msg);
    }
    int checked = hkc_host_checked();
    uintptr_t top = (uintptr_t)w->st_top;
    uintptr_t p = (top - (checked && s->hk_n ? ST_CANARY_GAP : 0) - size) & ~(uintptr_t)(align - 1);
    if (checked) {
        w->st_gap[s->hk_n].lo = (unsigned char *)p + size;
        w->st_gap[s->hk_n].n = top - (p + size);
        memset(w->st_gap[s->hk_n].lo, ST_CANARY, w->st_gap[s->hk_n].n);
    }
    s->hk_var[s->hk_n].hk_key = key;
    s->hk_var[s->hk_n].hk_p = (void *)p;
    s->hk_n++;
    w->st_bytes += size;
    w->st_top = (char *)p;
    return (void *)p;
}

/* Checked mode, at the end of a block: 0, or -1 with w->fail_msg naming
 * the variable whose canary gap was written. */
static int check_static_canaries(worker *w)
{
    for (uint32_t i = 0; i < w->st.hk_n; i++)
        for (size_t k = 0; k < w->st_gap[i].n; k++)
            if (w->st_gap[i].lo[k] != ST_CANARY) {
                hk_host_block *b = &w->block;
                snprintf(w->fail_msg, sizeof w->fail_msg,
                         "block (%u, %u, %u) wrote %zu bytes past the end of __shared__ variable %s "
                         "(checked mode)", b->idx.x, b->idx.y, b->idx.z, k, (const char *)w->st.hk_var[i].hk_key);
                return -1;
            }
    return 0;
}

static void *rt_loop_begin(uint64_t bytes, const volatile uint32_t *tid)
{
    worker *w = self;
    w->loop_tid = tid;
    if (bytes > w->loop_cap) {
        free(w->loop_mem);
        w->loop_cap = 0;
        w->loop_mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!w->loop_mem)
            rt_fail("out of memory for the values that live across barriers");
        w->loop_cap = bytes;
    }
    return w->loop_mem;
}

static void rt_loop_poll(void)
{
    if (atomic_load_explicit(&hkc_host_interrupt, memory_order_relaxed)) {
        self->interrupted = 1;
        rt_fail("interrupted");
    }
}

static const hk_host_runtime runtime_table = {
    .size = sizeof(hk_host_runtime),
    .version = HK_HOST_ABI_VERSION,
    .run_fibers = rt_run_fibers,
    .syncthreads = rt_syncthreads,
    .syncwarp = rt_syncwarp,
    .shfl = rt_shfl,
    .ballot = rt_ballot,
    .activemask = rt_activemask,
    .fail = rt_fail,
    .print = rt_print,
    .static_shared = rt_static_shared,
    .loop_begin = rt_loop_begin,
    .loop_poll = rt_loop_poll,
};

/* The same without loop mode: a module given it runs its split kernels on
 * fibers (hk_host_runtime.loop_poll NULL), as a runtime older than loop
 * mode. find_loop_thread's second run. */
static hk_host_runtime fiber_table;
static pthread_once_t fiber_table_once = PTHREAD_ONCE_INIT;

static void fiber_table_init(void)
{
    fiber_table = runtime_table;
    fiber_table.loop_begin = NULL;
    fiber_table.loop_poll = NULL;
}

/* ---------------------------------------------------------------- blocks */

static void record_failure(hkc_host_launch *L, worker *w, uint64_t linear)
{
    hk_host_block *b = &w->block;
    char where[128];
    snprintf(where, sizeof where, "block (%u, %u, %u)", b->idx.x, b->idx.y, b->idx.z);
    if (w->fibers_active && w->current < b->nthreads) {
        hk_host_uint3 t = w->threads[w->current].t.idx;
        size_t len = strlen(where);
        snprintf(where + len, sizeof where - len, ", thread (%u, %u, %u)", t.x, t.y, t.z);
    } /* loop mode: find_loop_thread put the thread on a fiber, or it is not known */
    w->loop_tid = NULL;
    w->fibers_active = 0;
    (void)linear;
    if (w->interrupted) {
        w->interrupted = 0;
        atomic_store(&L->interrupted, 1);
        return;
    }
    pthread_mutex_lock(&L->msg_lock);
    if (!L->msg[0]) {
        if (w->fault.signo > 0) {
            char addr[768] = ""; /* a mapped file's path may be long */
            char *guard = (char *)w->dyn_shared + HK_HOST_MAX_DYNAMIC_SHARED;
            char *a = w->fault.addr;
            if (a >= guard && a < guard + ST_GUARD)
                snprintf(addr, sizeof addr, "(past the %llu bytes of dynamic shared memory the "
                         "launch asked for)", (unsigned long long)L->shared_bytes);
            else if (a >= w->st_end && a < w->st_end + ST_GUARD)
                snprintf(addr, sizeof addr, "(%zu bytes past the end of the block's %llu bytes of "
                         "static __shared__ memory)", (size_t)(a - w->st_end),
                         (unsigned long long)(w->st_end - w->st_top));
            else if (a >= w->st_region && a < w->st_region + sysconf(_SC_PAGESIZE))
                snprintf(addr, sizeof addr, "(before the block's static __shared__ memory)");
            else if (L->describe_addr && w->fault.signo != SIGFPE && w->fault.signo != SIGILL)
                /* (those two report the instruction's address, not memory's) */
                L->describe_addr(L->describe_ctx, w->fault.addr, w->fault.signo, addr, sizeof addr);
            snprintf(L->msg, sizeof L->msg, "kernel %s faulted: %s at address %p%s%s in %s",
                     L->desc->name, hkc_fault_describe(w->fault.signo), w->fault.addr,
                     addr[0] ? " " : "", addr, where);
        } else {
            /* the module's message says where: it knows the thread */
            snprintf(L->msg, sizeof L->msg, "kernel %s failed: %s", L->desc->name, w->fail_msg);
        }
    }
    pthread_mutex_unlock(&L->msg_lock);
    atomic_store(&L->failed, 1);
}

/* Runs w->block; a fault or rt->fail inside it jumps back here. Kept apart
 * so no local of the block loop lives across the jump. */
static __attribute__((noinline)) int run_protected(hkc_host_launch *L, worker *w,
                                                   const hk_host_runtime *rt,
                                                   const hk_host_kernel_desc *desc)
{
    w->fault.signo = 0;
    w->st.hk_n = 0;
    w->st_top = w->st_end;
    w->st_bytes = 0;
    w->loop_tid = NULL;
    if (sigsetjmp(w->fault.jmp, 0) == 0) {
        w->fault.armed = 1;
        desc->run_block(rt, &w->block, L->kernarg);
        w->fault.armed = 0;
        if (w->st.hk_n && hkc_host_checked() && check_static_canaries(w) != 0) {
            w->fault.signo = -1;
            return -1;
        }
        return 0;
    }
    /* Back from a jump: trust the thread's own state, not registers. */
    if (self->fault.landing) {
        hkc_fiber_landed();
        self->fault.landing = NULL;
    }
    if (self->fault.signo > 0)
        hkc_fault_recovered();
    return -1;
}

/* Loop mode keeps no thread index per iteration (a store per thread keeps
 * the compiler from vectorising a region), so a fault there (a signal; a
 * failure the module reports names its thread itself) is found again by
 * running the block once more on fibers, which know their thread. The
 * launch has failed and its outputs are undefined already; the second run's
 * printf output is dropped. The thread is named when that run faults with
 * the same signal on the same page, with the address it met there (the
 * first access past the end, where a vectorised loop may fault on a wider
 * one); else the report names the block only. */
static void find_loop_thread(hkc_host_launch *L, worker *w)
{
    int signo = w->fault.signo;
    void *addr = w->fault.addr;
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    pthread_once(&fiber_table_once, fiber_table_init);
    /* a module built without the kernel's fibers copy compiles it now (or
     * takes it from the disk cache): the block's other workers stop first */
    atomic_store(&L->failed, 1);
    const hk_host_kernel_desc *copy = L->fibers_copy ? L->fibers_copy(L->desc) : L->desc;
    w->rerun = 1;
    int r = copy ? run_protected(L, w, &fiber_table, copy) : 0;
    w->rerun = 0;
    int same = r != 0 && !w->interrupted && w->fault.signo == signo && w->fibers_active &&
               w->current < w->block.nthreads &&
               (uintptr_t)w->fault.addr / pg == (uintptr_t)addr / pg;
    if (!same) {
        w->fault.signo = signo;
        w->fault.addr = addr;
        w->fibers_active = 0;
        w->interrupted = 0; /* hk_interrupt() stays set: the next block stops */
    }
    w->loop_tid = NULL;
}

void hkc_host_exec_blocks(void *arg)
{
    hkc_host_launch *L = arg;
    worker *w = worker_get();
    if (!w) {
        pthread_mutex_lock(&L->msg_lock);
        if (!L->msg[0])
            snprintf(L->msg, sizeof L->msg, "out of memory for a worker's state");
        pthread_mutex_unlock(&L->msg_lock);
        atomic_store(&L->failed, 1);
        return;
    }
    hkc_fault_set_point(&w->fault);
    hk_host_block *b = &w->block;
    b->dim = L->block;
    b->grid = L->grid;
    b->nthreads = L->block.x * L->block.y * L->block.z;
    /* ends at the guard page, 16-byte aligned (the bytes asked for, rounded up) */
    uint64_t asked = (L->shared_bytes + 15) / 16 * 16;
    b->dynamic_shared = (char *)w->dyn_shared + HK_HOST_MAX_DYNAMIC_SHARED - asked;
    b->dynamic_shared_bytes = L->shared_bytes;
    b->kernel = L->desc->name;
    uint64_t gx = L->grid.x, gxy = (uint64_t)L->grid.x * L->grid.y;
    /* Blocks are taken a chunk at a time: one shared counter bumped per
     * small block costs more than the block itself. */
    uint64_t chunk = L->chunk ? L->chunk : 1;
    int stop = 0;
    uint64_t ran = 0;
    while (!stop && !atomic_load_explicit(&L->failed, memory_order_relaxed) &&
           !atomic_load_explicit(&L->interrupted, memory_order_relaxed)) {
        uint64_t first = atomic_fetch_add_explicit(&L->next, chunk, memory_order_relaxed);
        if (first >= L->nblocks)
            break;
        uint64_t last = first + chunk < L->nblocks ? first + chunk : L->nblocks;
        for (uint64_t i = first; i < last; i++) {
            if (atomic_load_explicit(&hkc_host_interrupt, memory_order_relaxed)) {
                atomic_store(&L->interrupted, 1);
                stop = 1;
                break;
            }
            b->idx.z = (uint32_t)(i / gxy);
            b->idx.y = (uint32_t)(i % gxy / gx);
            b->idx.x = (uint32_t)(i % gx);
            if (run_protected(L, w, &runtime_table, L->desc) != 0) {
                if (w->loop_tid && w->fault.signo > 0 && !w->interrupted)
                    find_loop_thread(L, w);
                record_failure(L, w, i);
                stop = 1;
                break;
            }
            ran++;
        }
    }
    atomic_fetch_add(&L->ran, ran);
    hkc_fault_set_point(NULL);
}
