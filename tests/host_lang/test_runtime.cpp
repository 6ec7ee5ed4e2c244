#include "test_runtime.h"

#include <atomic>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <sys/mman.h>
#include <ucontext.h>
#include <vector>

namespace {

enum { RUN, AT_BARRIER, AT_WARP, DONE };
enum { OP_SHFL, OP_BALLOT, OP_ACTIVE, OP_SYNCWARP };

struct fiber {
    ucontext_t ctx;
    hk_host_thread t;
    int state, op, src;
    uint64_t value, result;
    char *stack;
};

struct sched {
    ucontext_t main;
    std::vector<fiber> f;
    int cur;
    const hk_host_block *b;
    hk_host_thread_fn fn;
    void *closure;
    bool failed;
};

constexpr size_t kStack = 256 * 1024;

thread_local sched *g_sched;
thread_local jmp_buf *g_block_jmp;
thread_local std::string *g_fail_msg;

std::mutex g_print_mutex;
std::string *g_printed;

void fiber_entry(unsigned lo, unsigned hi)
{
    (void)hi;
    sched *s = g_sched;
    fiber &me = s->f[lo];
    s->fn(s->closure, &me.t);
    s->f[lo].state = DONE;
    /* uc_link returns to the scheduler */
}

void yield_as(int state)
{
    sched *s = g_sched;
    fiber &me = s->f[s->cur];
    me.state = state;
    swapcontext(&me.ctx, &s->main);
}

uint64_t warp_op(int op, uint64_t value, int src)
{
    sched *s = g_sched;
    if (!s)
        abort();
    fiber &me = s->f[s->cur];
    me.op = op;
    me.value = value;
    me.src = src;
    yield_as(AT_WARP);
    return g_sched->f[g_sched->cur].result;
}

void rt_syncthreads(void) { yield_as(AT_BARRIER); }
void rt_syncwarp(void) { warp_op(OP_SYNCWARP, 0, 0); }
uint64_t rt_shfl(uint64_t v, int src) { return warp_op(OP_SHFL, v, src); }
uint64_t rt_ballot(int pred) { return warp_op(OP_BALLOT, pred != 0, 0); }
uint64_t rt_activemask(void) { return warp_op(OP_ACTIVE, 0, 0); }

[[noreturn]] void rt_fail(const char *msg)
{
    *g_fail_msg = msg;
    sched *s = g_sched;
    if (s && s->cur >= 0) { /* on a fiber: back to the scheduler, never resumed */
        s->failed = true;
        swapcontext(&s->f[s->cur].ctx, &s->main);
    }
    longjmp(*g_block_jmp, 1);
}

void rt_print(const char *text, size_t n)
{
    std::lock_guard<std::mutex> lock(g_print_mutex);
    if (g_printed)
        g_printed->append(text, n);
}

/* Completes the warp operation of warp w when all its live lanes wait in one. */
bool try_warp(sched *s, size_t w)
{
    size_t lo = w * HK_HOST_WARP_SIZE, hi = std::min(s->f.size(), lo + HK_HOST_WARP_SIZE);
    int op = -1;
    uint64_t live = 0;
    for (size_t i = lo; i < hi; i++) {
        fiber &f = s->f[i];
        if (f.state == DONE)
            continue;
        if (f.state != AT_WARP)
            return false;
        if (op >= 0 && f.op != op)
            return false;
        op = f.op;
        live |= 1ull << (i - lo);
    }
    if (op < 0)
        return false;
    uint64_t ballot = 0;
    for (size_t i = lo; i < hi; i++)
        if (s->f[i].state == AT_WARP && s->f[i].value)
            ballot |= 1ull << (i - lo);
    for (size_t i = lo; i < hi; i++) {
        fiber &f = s->f[i];
        if (f.state != AT_WARP)
            continue;
        switch (op) {
        case OP_SHFL: {
            size_t src = lo + (size_t)f.src;
            bool ok = f.src >= 0 && f.src < HK_HOST_WARP_SIZE && (live >> f.src & 1);
            f.result = ok ? s->f[src].value : f.value;
            break;
        }
        case OP_BALLOT: f.result = ballot; break;
        case OP_ACTIVE: f.result = live; break;
        default: f.result = 0;
        }
    }
    for (size_t i = lo; i < hi; i++)
        if (s->f[i].state == AT_WARP)
            s->f[i].state = RUN;
    return true;
}

/* Each stack has a guard page below it: an overflow faults at once. */
char *alloc_stack()
{
    void *p = mmap(nullptr, kStack + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        abort();
    mprotect(p, 4096, PROT_NONE);
    return static_cast<char *>(p) + 4096;
}

/* Apart from rt_run_fibers: getcontext returns twice, which would make the
 * loop counters there candidates for clobbering. */
void setup_fibers(sched *s, const hk_host_block *b)
{
    s->f.resize(b->nthreads);
    uint32_t lin = 0;
    for (uint32_t z = 0; z < b->dim.z; z++)
        for (uint32_t y = 0; y < b->dim.y; y++)
            for (uint32_t x = 0; x < b->dim.x; x++, lin++) {
                fiber &f = s->f[lin];
                f.t.idx = {x, y, z};
                f.t.linear = lin;
                f.t.lane = lin % HK_HOST_WARP_SIZE;
                f.state = RUN;
                f.stack = alloc_stack();
                getcontext(&f.ctx);
                f.ctx.uc_stack.ss_sp = f.stack;
                f.ctx.uc_stack.ss_size = kStack;
                f.ctx.uc_link = &s->main;
                makecontext(&f.ctx, (void (*)())fiber_entry, 2, lin, 0u);
            }
}

void rt_run_fibers(const hk_host_block *b, hk_host_thread_fn fn, void *closure)
{
    sched s;
    s.b = b;
    s.fn = fn;
    s.closure = closure;
    s.failed = false;
    s.cur = -1;
    setup_fibers(&s, b);
    sched *saved = g_sched;
    g_sched = &s;
    std::string deadlock;
    for (;;) {
        for (size_t i = 0; i < s.f.size() && !s.failed; i++)
            if (s.f[i].state == RUN) {
                s.cur = (int)i;
                swapcontext(&s.main, &s.f[i].ctx);
                s.cur = -1;
            }
        if (s.failed)
            break;
        size_t live = 0, at_bar = 0;
        for (auto &f : s.f) {
            live += f.state != DONE;
            at_bar += f.state == AT_BARRIER;
        }
        if (!live)
            break;
        bool released = false;
        for (size_t w = 0; w * HK_HOST_WARP_SIZE < s.f.size(); w++)
            released |= try_warp(&s, w);
        if (!released && at_bar == live) {
            for (auto &f : s.f)
                if (f.state == AT_BARRIER)
                    f.state = RUN;
            released = true;
        }
        if (!released) {
            deadlock = "test runtime: deadlock (divergent barrier or warp operation)";
            break;
        }
    }
    for (auto &f : s.f)
        munmap(f.stack - 4096, kStack + 4096);
    g_sched = saved;
    if (s.failed)
        longjmp(*g_block_jmp, 1);
    if (!deadlock.empty()) {
        *g_fail_msg = deadlock;
        longjmp(*g_block_jmp, 1);
    }
}

const hk_host_runtime g_rt = {
    sizeof(hk_host_runtime), 1, rt_run_fibers, rt_syncthreads, rt_syncwarp, rt_shfl,
    rt_ballot, rt_activemask, rt_fail, rt_print,
};

} // namespace

std::string test_launch(const hk_host_kernel_desc *k, test_dim grid, test_dim block,
                        const void *kernarg, size_t dynamic_shared, int os_threads,
                        std::string *printed)
{
    uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
    std::atomic<uint64_t> next(0);
    std::atomic<bool> stop(false);
    std::string fail;
    std::mutex fail_mutex;
    g_printed = printed;
    auto worker = [&] {
        void *dyn = aligned_alloc(64, HK_HOST_MAX_DYNAMIC_SHARED);
        memset(dyn, 0xa5, HK_HOST_MAX_DYNAMIC_SHARED);
        std::string msg;
        jmp_buf jb;
        g_block_jmp = &jb;
        g_fail_msg = &msg;
        for (;;) {
            /* volatile: read after a longjmp */
            volatile uint64_t id = next.fetch_add(1);
            if (id >= nblocks || stop)
                break;
            hk_host_block b;
            uint64_t i = id;
            b.idx = {(uint32_t)(i % grid.x), (uint32_t)(i / grid.x % grid.y),
                     (uint32_t)(i / grid.x / grid.y)};
            b.dim = {block.x, block.y, block.z};
            b.grid = {grid.x, grid.y, grid.z};
            b.nthreads = block.x * block.y * block.z;
            b.dynamic_shared = dyn;
            b.dynamic_shared_bytes = dynamic_shared;
            b.kernel = k->name;
            if (setjmp(jb)) {
                std::lock_guard<std::mutex> lock(fail_mutex);
                if (fail.empty())
                    fail = msg;
                stop = true;
                break;
            }
            k->run_block(&g_rt, &b, kernarg);
        }
        free(dyn);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < os_threads; t++)
        threads.emplace_back(worker);
    for (auto &t : threads)
        t.join();
    g_printed = nullptr;
    return fail;
}
