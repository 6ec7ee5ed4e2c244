/* Fibers: one stack per GPU thread of a block, switched by hand so a barrier
 * costs a few nanoseconds instead of an OS context switch. */
#ifndef HKC_HOST_FIBER_H
#define HKC_HOST_FIBER_H

#include <stddef.h>

typedef struct hkc_fiber {
    void *sp;          /* saved stack pointer while suspended */
    void *stack_lo;    /* usable stack [stack_lo, stack_lo + stack_size) */
    size_t stack_size;
    unsigned vg_id;    /* valgrind stack id */
} hkc_fiber;

/* Prepares f to run entry(arg) on its stack at the next switch to it. entry
 * must never return: it ends by switching away for good. */
void hkc_fiber_prepare(hkc_fiber *f, void (*entry)(void *), void *arg);
/* Saves the current context into from and starts entry(arg) at the top of
 * to's stack: prepare and switch in one, with no frame written beforehand
 * (the cheap way to start a fiber). from_done: from has finished and is
 * never resumed (its stack may be handed to another fiber once this one has
 * started). entry must never return. */
void hkc_fiber_start(hkc_fiber *from, int from_done, hkc_fiber *to, void (*entry)(void *), void *arg);
/* Saves the current context into from and resumes to. */
void hkc_fiber_switch(hkc_fiber *from, hkc_fiber *to);
/* The last switch away from a fiber that has finished (lets AddressSanitizer
 * drop the fiber's fake stack). */
void hkc_fiber_exit(hkc_fiber *from, hkc_fiber *to);
/* Leaving a fiber by a jump (a fault or a failed assert) instead of a switch:
 * call prepare_jump(to) just before the jump and landed() just after it, so
 * AddressSanitizer knows which stack is live. No-ops without ASan. */
void hkc_fiber_prepare_jump(hkc_fiber *to);
void hkc_fiber_landed(void);
/* Frees what prepare/switch allocated for f (the ucontext fallback keeps its
 * state on the heap); the stack itself belongs to the caller. */
void hkc_fiber_release(hkc_fiber *f);
/* Registers/unregisters a stack with valgrind (no-op elsewhere). */
void hkc_fiber_stack_register(hkc_fiber *f);
void hkc_fiber_stack_unregister(hkc_fiber *f);

#endif
