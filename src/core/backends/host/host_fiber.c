/* Fiber switching. On x86-64 a switch saves the six callee-saved registers
 * and the stack pointer, and nothing else: the switch is an ordinary call, so
 * the compiler has already saved every caller-saved register. Other
 * architectures use ucontext, which is correct but slower (it also saves the
 * signal mask with a system call). */
#include "host_fiber.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define HAVE_VALGRIND 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define HAVE_ASAN 1
#endif

void hkc_fiber_prepare_jump(hkc_fiber *to)
{
#ifdef HAVE_ASAN
    __sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#else
    (void)to;
#endif
}

void hkc_fiber_landed(void)
{
#ifdef HAVE_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
    /* The jump skipped the scheduler's frames below us on this stack, and
     * the sanitizer only cleaned the stack the jump left: clean ours. */
    char *here = __builtin_frame_address(0);
    __asan_unpoison_memory_region(here - 64 * 1024, 64 * 1024);
#endif
}

void hkc_fiber_stack_register(hkc_fiber *f)
{
#ifdef HAVE_VALGRIND
    f->vg_id = VALGRIND_STACK_REGISTER(f->stack_lo, (char *)f->stack_lo + f->stack_size);
#else
    (void)f;
#endif
}

void hkc_fiber_stack_unregister(hkc_fiber *f)
{
#ifdef HAVE_ASAN
    /* The stack is about to be unmapped, and ASan keeps the shadow of
     * munmapped memory: frames left poisoned here would make a later
     * mapping at the same address (a buffer) read as a stack underflow. */
    if (f->stack_lo)
        __asan_unpoison_memory_region(f->stack_lo, f->stack_size);
#endif
#ifdef HAVE_VALGRIND
    VALGRIND_STACK_DEREGISTER(f->vg_id);
#else
    (void)f;
#endif
}

#if defined(__x86_64__) && !defined(HK_FIBER_UCONTEXT)

void hkc_fiber_switch_asm(void **save_sp, void *load_sp);
void hkc_fiber_start_asm(void **save_sp, void *top, void (*entry)(void *), void *arg);
void hkc_fiber_trampoline(void);

/* Both entry points save the callee-saved registers on the current stack,
 * store rsp through rdi and take rsi as the new stack. */
#define HKC_FIBER_SAVE_AND_SWITCH_SP \
        "  pushq %rbp\n" \
        "  pushq %rbx\n" \
        "  pushq %r12\n" \
        "  pushq %r13\n" \
        "  pushq %r14\n" \
        "  pushq %r15\n" \
        "  movq %rsp, (%rdi)\n" \
        "  movq %rsi, %rsp\n"

__asm__(".text\n"
        ".globl hkc_fiber_switch_asm\n"
        ".hidden hkc_fiber_switch_asm\n"
        ".type hkc_fiber_switch_asm,@function\n"
        "hkc_fiber_switch_asm:\n"
        HKC_FIBER_SAVE_AND_SWITCH_SP
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size hkc_fiber_switch_asm, .-hkc_fiber_switch_asm\n"
        /* Saves as the switch does, then calls entry(arg) on a fresh stack
         * whose 16-byte aligned top is in rsi: the call's return address
         * leaves rsp as the ABI wants at a function's entry. */
        ".globl hkc_fiber_start_asm\n"
        ".hidden hkc_fiber_start_asm\n"
        ".type hkc_fiber_start_asm,@function\n"
        "hkc_fiber_start_asm:\n"
        HKC_FIBER_SAVE_AND_SWITCH_SP
        "  movq %rcx, %rdi\n"
        "  xorl %ebp, %ebp\n"
        "  callq *%rdx\n"
        "  ud2\n"
        ".size hkc_fiber_start_asm, .-hkc_fiber_start_asm\n"
        /* A new fiber 'returns' here with entry in r12 and arg in r13. */
        ".globl hkc_fiber_trampoline\n"
        ".hidden hkc_fiber_trampoline\n"
        ".type hkc_fiber_trampoline,@function\n"
        "hkc_fiber_trampoline:\n"
        "  movq %r13, %rdi\n"
        "  callq *%r12\n"
        "  ud2\n"
        ".size hkc_fiber_trampoline, .-hkc_fiber_trampoline\n");

#ifdef HAVE_ASAN
/* A fiber's first instructions run outside hkc_fiber_switch, so the switch
 * that started it is finished here; that also tells us the bounds of the
 * stack we came from, which the scheduler's own fiber lacks. */
typedef struct asan_start {
    void (*entry)(void *);
    void *arg;
} asan_start;
static _Thread_local hkc_fiber *switching_from;

static void asan_entry(void *p)
{
    asan_start *s = p;
    const void *bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(NULL, &bottom, &size);
    if (switching_from && !switching_from->stack_lo) {
        switching_from->stack_lo = (void *)bottom;
        switching_from->stack_size = size;
    }
    s->entry(s->arg);
}
#endif

/* The 16-byte aligned top a fiber starts from. Under ASan a start record
 * (the real entry and its argument) lies above it, and *entry and *arg are
 * replaced by the wrapper that finishes the sanitizer's switch. */
static uintptr_t start_top(hkc_fiber *f, void (**entry)(void *), void **arg)
{
#ifdef HAVE_ASAN
    /* frames left behind by a jump out of this stack must not stay poisoned */
    __asan_unpoison_memory_region(f->stack_lo, f->stack_size);
    asan_start *st = (asan_start *)(((uintptr_t)f->stack_lo + f->stack_size - sizeof(asan_start)) &
                                    ~(uintptr_t)15);
    st->entry = *entry;
    st->arg = *arg;
    *entry = asan_entry;
    *arg = st;
    return (uintptr_t)st & ~(uintptr_t)15;
#else
    (void)entry;
    (void)arg;
    return ((uintptr_t)f->stack_lo + f->stack_size) & ~(uintptr_t)15;
#endif
}

void hkc_fiber_prepare(hkc_fiber *f, void (*entry)(void *), void *arg)
{
    uintptr_t top = start_top(f, &entry, &arg);
    /* Frame popped by the switch: r15 r14 r13 r12 rbx rbp, return address.
     * After the ret, rsp = top - 16: 16-byte aligned before the call in the
     * trampoline, as the ABI wants. */
    void **sp = (void **)(top - 72);
    sp[0] = 0;                           /* r15 */
    sp[1] = 0;                           /* r14 */
    sp[2] = arg;                         /* r13 */
    sp[3] = (void *)(uintptr_t)entry;    /* r12 */
    sp[4] = 0;                           /* rbx */
    sp[5] = 0;                           /* rbp */
    sp[6] = (void *)hkc_fiber_trampoline; /* return address */
    sp[7] = 0;
    f->sp = sp;
}

void hkc_fiber_start(hkc_fiber *from, int from_done, hkc_fiber *to, void (*entry)(void *), void *arg)
{
    uintptr_t top = start_top(to, &entry, &arg);
#ifdef HAVE_ASAN
    void *fake = NULL;
    switching_from = from;
    __sanitizer_start_switch_fiber(from_done ? NULL : &fake, to->stack_lo, to->stack_size);
#else
    (void)from_done;
#endif
    hkc_fiber_start_asm(&from->sp, (void *)top, entry, arg);
#ifdef HAVE_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

void hkc_fiber_release(hkc_fiber *f) { (void)f; }

void hkc_fiber_switch(hkc_fiber *from, hkc_fiber *to)
{
#ifdef HAVE_ASAN
    void *fake;
    switching_from = from;
    __sanitizer_start_switch_fiber(&fake, to->stack_lo, to->stack_size);
#endif
    hkc_fiber_switch_asm(&from->sp, to->sp);
#ifdef HAVE_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

void hkc_fiber_exit(hkc_fiber *from, hkc_fiber *to)
{
#ifdef HAVE_ASAN
    switching_from = from;
    __sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#endif
    hkc_fiber_switch_asm(&from->sp, to->sp);
}

#else /* ucontext */

#include <ucontext.h>

typedef struct uc_state {
    ucontext_t uc;
    void (*entry)(void *);
    void *arg;
} uc_state;

static void uc_entry(unsigned lo, unsigned hi)
{
    uc_state *s = (uc_state *)(((uintptr_t)hi << 32) | lo);
    s->entry(s->arg);
    abort();
}

/* f->sp holds a heap uc_state; the main context's is made on first use. */
static uc_state *state_of(hkc_fiber *f)
{
    if (!f->sp)
        f->sp = calloc(1, sizeof(uc_state));
    return f->sp;
}

void hkc_fiber_prepare(hkc_fiber *f, void (*entry)(void *), void *arg)
{
    uc_state *s = state_of(f);
    getcontext(&s->uc);
    s->uc.uc_stack.ss_sp = f->stack_lo;
    s->uc.uc_stack.ss_size = f->stack_size;
    s->uc.uc_link = NULL;
    s->entry = entry;
    s->arg = arg;
    uintptr_t p = (uintptr_t)s;
    makecontext(&s->uc, (void (*)(void))uc_entry, 2, (unsigned)p, (unsigned)(p >> 32));
}

void hkc_fiber_release(hkc_fiber *f)
{
    free(f->sp);
    f->sp = NULL;
}

void hkc_fiber_exit(hkc_fiber *from, hkc_fiber *to) { hkc_fiber_switch(from, to); }

void hkc_fiber_start(hkc_fiber *from, int from_done, hkc_fiber *to, void (*entry)(void *), void *arg)
{
    (void)from_done;
    hkc_fiber_prepare(to, entry, arg);
    hkc_fiber_switch(from, to);
}

void hkc_fiber_switch(hkc_fiber *from, hkc_fiber *to)
{
    swapcontext(&state_of(from)->uc, &state_of(to)->uc);
}

#endif
