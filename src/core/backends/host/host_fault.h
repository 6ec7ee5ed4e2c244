/* Recovery from faults inside kernels on the CPU backend (docs/host-backend.md
 * says why signals and not a child process). */
#ifndef HKC_HOST_FAULT_H
#define HKC_HOST_FAULT_H

#include <setjmp.h>

/* Per OS thread: where a fault inside a kernel jumps to. */
typedef struct hkc_fault_point {
    sigjmp_buf jmp;
    volatile int armed; /* a kernel is running on this thread */
    volatile int signo;
    void *volatile addr;
    /* Set while fibers run: the stack the jump lands on (for ASan). */
    struct hkc_fiber *volatile landing;
} hkc_fault_point;

/* Installs the handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL once per
 * process; faults outside a kernel go to whatever handler was there before. */
void hkc_fault_install(void);
/* Puts hipkit's handlers back in front after a library replaced them:
 * libclang (loop mode) enables LLVM's crash recovery when it creates an
 * index, whose handlers, on a fault outside LLVM, restore the previous
 * handler and raise the signal again, so that it arrives with the raiser's
 * pid where the faulting address should be. The handlers from before
 * hipkit stay the fallback. */
void hkc_fault_reclaim(void);
/* Makes p the calling thread's recovery point (NULL: none) and gives the
 * thread an alternate signal stack if it has none, so a fiber's stack
 * overflow can be reported too. */
void hkc_fault_set_point(hkc_fault_point *p);
/* After a recovered fault: the signal is still blocked, since the handler
 * was left by a jump; unblock it. */
void hkc_fault_recovered(void);
/* Frees the calling thread's alternate stack, if hipkit made it. */
void hkc_fault_thread_release(void);
/* Runs fn(arg) on the calling thread with a recovery point armed, for host
 * code that touches memory a fault may hit outside any kernel (a file
 * mapping whose file another process truncated: SIGBUS). 0, or the signal
 * that stopped fn, with the faulting address in *addr. fn must hold no lock
 * and allocate nothing: it is left by a jump. */
int hkc_fault_run(void (*fn)(void *), void *arg, void **addr);
/* "invalid memory access (SIGSEGV)" and so on. */
const char *hkc_fault_describe(int signo);

#endif
