/* Running a grid on the CPU: blocks, their threads (a loop or fibers), the
 * services a kernel module calls, and fault recovery per block. */
#ifndef HKC_HOST_EXEC_H
#define HKC_HOST_EXEC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hip/hipkit_host_abi.h"

typedef struct hkc_host_launch {
    const hk_host_kernel_desc *desc;
    const void *kernarg;
    hk_host_uint3 grid, block;
    uint64_t shared_bytes;
    uint64_t nblocks;
    uint64_t chunk;         /* blocks taken at a time */
    _Alignas(64) _Atomic uint64_t next; /* next block to take, on a line of its own */
    _Alignas(64) atomic_int failed;
    _Atomic uint64_t ran;   /* blocks run to their end, for an interrupt's message */
    atomic_int interrupted; /* stopped by hk_interrupt() */
    pthread_mutex_t msg_lock;
    char msg[1024];         /* the first failure */
    /* The kernel with its threads on fibers, to find a loop-mode fault's
     * thread again (find_loop_thread): desc itself, the copy of a module
     * built without one (host_module.c), or NULL when there is none. */
    const hk_host_kernel_desc *(*fibers_copy)(const hk_host_kernel_desc *desc);
    /* Lets the fault message say which buffer an address belongs to. */
    void (*describe_addr)(void *ctx, void *addr, int signo, char *out, size_t cap);
    void *describe_ctx;
} hkc_host_launch;

/* Set by hk_interrupt() (host_launch.c), read at each block's start and at
 * barriers and warp operations: the launch's safe points. */
extern atomic_int hkc_host_interrupt;

/* Takes blocks of L until none are left or one fails; called by every thread
 * of the pool at once. */
void hkc_host_exec_blocks(void *L);
/* Frees the calling thread's executor state (stacks, shared memory). */
void hkc_host_exec_thread_release(void);

#endif
