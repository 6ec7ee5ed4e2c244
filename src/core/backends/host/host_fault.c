/* Signal handlers that turn a fault inside a kernel into a failed launch.
 * The handler only jumps back to the point the executing thread armed before
 * entering the kernel; everything else is left to the previous handler, so
 * a crash in hipkit or in the user's program still crashes as it should. */
#include "host_fault.h"
#include "host_fiber.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define HAVE_VALGRIND 1
#endif
#endif

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NSIG_FAULT ((int)(sizeof fault_signals / sizeof fault_signals[0]))
static struct sigaction previous[NSIG_FAULT];
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

/* The signal stack, and the unmapped pad on each side of it. */
#define ALTSTACK_BYTES (64 * 1024)
#define ALTSTACK_PAD (4u << 20)

static _Thread_local hkc_fault_point *thread_point;
static _Thread_local void *thread_altstack;
static _Thread_local size_t thread_altstack_size;
static _Thread_local unsigned thread_altstack_vg;

static void handler(int signo, siginfo_t *si, void *uctx)
{
    hkc_fault_point *p = thread_point;
    if (p && p->armed) {
        p->armed = 0;
        p->signo = signo;
        p->addr = si ? si->si_addr : NULL;
        if (p->landing)
            hkc_fiber_prepare_jump(p->landing);
        siglongjmp(p->jmp, 1);
    }
    for (int i = 0; i < NSIG_FAULT; i++) {
        if (fault_signals[i] != signo)
            continue;
        struct sigaction *old = &previous[i];
        if (old->sa_flags & SA_SIGINFO) {
            if (old->sa_sigaction) {
                old->sa_sigaction(signo, si, uctx);
                return;
            }
        } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
            old->sa_handler(signo);
            return;
        }
    }
    /* Default action: re-arm it and return; the faulting instruction runs
     * again and the process ends with the usual signal. */
    signal(signo, SIG_DFL);
}

static void set_handlers(struct sigaction *old)
{
    for (int i = 0; i < NSIG_FAULT; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = handler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(fault_signals[i], &sa, old ? &old[i] : NULL);
    }
}

static void install(void) { set_handlers(previous); }

void hkc_fault_install(void) { pthread_once(&install_once, install); }

void hkc_fault_reclaim(void)
{
    hkc_fault_install();
    set_handlers(NULL); /* previous[] keeps the handlers from before hipkit */
}

void hkc_fault_set_point(hkc_fault_point *p)
{
    thread_point = p;
    if (!p || thread_altstack)
        return;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return; /* the program has its own */
    /* The stack sits between two inaccessible pads of ALTSTACK_PAD bytes
     * (address space only): an overflow in the handler faults, and no other
     * stack can lie within valgrind's 2 MiB "same stack" distance of it.
     * Were one closer (a hole the mmap filled just above a thread's stack),
     * valgrind would read the handler's jump back as the stack growing, and
     * mark what lies between (the thread's TLS) undefined. */
    size_t size = ALTSTACK_BYTES, total = size + 2 * ALTSTACK_PAD;
    char *region = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED)
        return;
    char *mem = region + ALTSTACK_PAD;
    if (mprotect(mem, size, PROT_READ | PROT_WRITE) != 0) {
        munmap(region, total);
        return;
    }
    stack_t ss = {.ss_sp = mem, .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(region, total);
        return;
    }
    thread_altstack = region;
    thread_altstack_size = total;
#ifdef HAVE_VALGRIND
    thread_altstack_vg = VALGRIND_STACK_REGISTER(mem, mem + size);
#endif
}

void hkc_fault_recovered(void)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < NSIG_FAULT; i++)
        sigaddset(&set, fault_signals[i]);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

void hkc_fault_thread_release(void)
{
    thread_point = NULL;
    if (!thread_altstack)
        return;
    stack_t ss = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
#ifdef HAVE_VALGRIND
    VALGRIND_STACK_DEREGISTER(thread_altstack_vg);
#endif
    munmap(thread_altstack, thread_altstack_size);
    thread_altstack = NULL;
}

/* Kept apart, as the kernel path's run_protected, so that no local of the
 * caller lives across the jump. */
static __attribute__((noinline)) int run_armed(hkc_fault_point *p, void (*fn)(void *), void *arg)
{
    p->signo = 0;
    if (sigsetjmp(p->jmp, 0) == 0) {
        p->armed = 1;
        fn(arg);
        p->armed = 0;
        return 0;
    }
    hkc_fault_recovered();
    return p->signo;
}

int hkc_fault_run(void (*fn)(void *), void *arg, void **addr)
{
    hkc_fault_install();
    hkc_fault_point p;
    memset(&p, 0, sizeof p);
    hkc_fault_point *saved = thread_point; /* a host op inside a kernel's thread */
    hkc_fault_set_point(&p);
    int signo = run_armed(&p, fn, arg);
    thread_point = saved;
    if (addr)
        *addr = p.addr;
    return signo;
}

const char *hkc_fault_describe(int signo)
{
    switch (signo) {
    case SIGSEGV:
        return "invalid memory access (SIGSEGV)";
    case SIGBUS:
        return "bus error, e.g. a read past the end of a mapped file (SIGBUS)";
    case SIGFPE:
        return "arithmetic exception, e.g. integer division by zero (SIGFPE)";
    case SIGILL:
        return "illegal instruction (SIGILL)";
    }
    return "signal";
}
