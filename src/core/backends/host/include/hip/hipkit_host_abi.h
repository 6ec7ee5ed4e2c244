/* The contract between the CPU backend's runtime (C, in libhipkit) and a kernel
 * module it compiled (C++, a shared object built against hip_runtime.h here).
 * It is C so both sides include it; it lives beside hip_runtime.h because the
 * module's compiler sees only this include folder.
 *
 * The runtime never resolves symbols of its own from the module's side: it
 * hands every service over as a function table at each block, so a module
 * works whatever namespace it was dlopen'ed into.
 *
 * A module exports, with C linkage:
 *   const uint32_t hk_host_module_abi;           = HK_HOST_ABI_VERSION
 *   const uint32_t hk_host_kernel_count;
 *   const hk_host_kernel_desc hk_host_kernels[]; one per __global__ function
 * and optionally hk_host_kernel_modes[], hk_host_globals[],
 * hk_host_kernel_max_threads[] (each kernel's __launch_bounds__, 0 for
 * none, in the table's order), and, where a
 * kernel split at its barriers has no fibers copy (its table entry is its
 * loop version), const char hk_host_fibers_unit[] and hk_host_fibers_flags[]:
 * the translation unit and flags that build the copies (host_module.c).
 */
#ifndef __HK_HOST_ABI_H
#define __HK_HOST_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HK_HOST_ABI_VERSION 2u
/* warpSize on the CPU backend: 64, as on AMD CDNA, the first target. */
#define HK_HOST_WARP_SIZE 64
/* Largest dynamic shared memory per block (as the LDS of a CDNA CU). */
#define HK_HOST_MAX_DYNAMIC_SHARED (64u * 1024u)
/* Largest static `__shared__` memory per block, and most variables. */
#define HK_HOST_MAX_STATIC_SHARED (64u * 1024u)
#define HK_HOST_MAX_STATIC_VARS 64u

typedef struct hk_host_uint3 {
    uint32_t x, y, z;
} hk_host_uint3;

/* One GPU thread. */
typedef struct hk_host_thread {
    hk_host_uint3 idx; /* threadIdx */
    uint32_t linear;   /* x + y*dim.x + z*dim.x*dim.y */
    uint32_t lane;     /* linear % HK_HOST_WARP_SIZE */
} hk_host_thread;

/* One block, as the module sees it while running it. */
typedef struct hk_host_block {
    hk_host_uint3 idx;    /* blockIdx */
    hk_host_uint3 dim;    /* blockDim */
    hk_host_uint3 grid;   /* gridDim */
    uint32_t nthreads;    /* dim.x*dim.y*dim.z */
    void *dynamic_shared; /* 16-byte aligned: the bytes asked for, rounded up to 16, then a guard page */
    uint64_t dynamic_shared_bytes; /* what the launch asked for */
    const char *kernel;   /* name, for messages */
    struct hk_host_shared_vars *static_shared; /* the block's static __shared__ variables */
} hk_host_block;

/* The block's static `__shared__` variables. host_source.c rewrites each
 * declaration in a function body into a reference to storage the runtime
 * carves, per block, downwards from a guard page: the first variable a block
 * reaches ends at the guard, the next one ends where that one begins, so an
 * access past the last byte of the block's shared memory faults. `key` is
 * the address of a constant that holds the variable's name, one per
 * declaration (and template instantiation); the module looks it up here and
 * calls rt->static_shared the first time a block reaches it. */
typedef struct hk_host_shared_vars { /* names a user's -D cannot reach */
    uint32_t hk_n;
    struct {
        const void *hk_key;
        void *hk_p;
    } hk_var[HK_HOST_MAX_STATIC_VARS];
} hk_host_shared_vars;

typedef void (*hk_host_thread_fn)(void *__closure, const hk_host_thread *__t);

/* Services of the runtime. Grows only at the end; check `size`. */
typedef struct hk_host_runtime {
    uint32_t size;
    uint32_t version;
    /* Runs fn once for every thread of the block, each on its own fiber, all
     * on the calling OS thread; returns when every thread has returned. */
    void (*run_fibers)(const hk_host_block *__b, hk_host_thread_fn __fn, void *__closure);
    /* Block barrier. Only valid on a fiber started by run_fibers. A thread
     * that has returned counts as arrived. */
    void (*syncthreads)(void);
    /* Barrier of the calling thread's warp (the lanes that have not returned). */
    void (*syncwarp)(void);
    /* Warp exchange: every live lane of the warp calls it; each contributes
     * `value` and receives the value contributed by lane `src` (0..63), or its
     * own value when `src` is out of range or that lane has returned. */
    uint64_t (*shfl)(uint64_t __value, int __src);
    /* Bit i set when lane i is live and passed a nonzero `pred`. */
    uint64_t (*ballot)(int __pred);
    /* Bit i set when lane i of the caller's warp is live. */
    uint64_t (*activemask)(void);
    /* Ends the launch with an error whose text is msg (copied): failed
     * assertions, __trap, a barrier reached in loop mode. Does not return. */
    void (*fail)(const char *__msg) __attribute__((noreturn));
    /* Writes device printf output (one call per printf, kept whole). */
    void (*print)(const char *__text, size_t __n);
    /* The storage of a static __shared__ variable the block reaches for the
     * first time (see hk_host_shared_vars); fails the launch when the
     * block's variables pass HK_HOST_MAX_STATIC_SHARED. */
    void *(*static_shared)(const char *__key, uint64_t __size, uint64_t __align);
    /* Loop mode (a kernel split at its barriers, hk_host_kernel_mode):
     * called once at the block's start; returns 64-byte aligned memory of
     * `bytes` for the values that live across a barrier, the worker's own,
     * valid until the block ends, and records where the module keeps the
     * running thread's index (`tid`, three uint32_t; stored only where the
     * compiler keeps it, so a fault's thread is found by running the block
     * again on fibers). Fails the launch when out of memory. */
    void *(*loop_begin)(uint64_t __bytes, const volatile uint32_t *__tid);
    /* Loop mode, at each barrier (between two regions, each turn of a loop
     * with barriers): ends the block when hk_interrupt() was called, as a
     * barrier does on fibers. */
    void (*loop_poll)(void);
} hk_host_runtime;

/* One kernel of the module. */
typedef struct hk_host_kernel_desc {
    const char *name;
    /* Runs one whole block: unpacks the kernarg buffer (C struct layout of the
     * parameters) and runs every thread, as a plain loop when uses_sync is 0,
     * else through rt->run_fibers. */
    void (*run_block)(const hk_host_runtime *__rt, const hk_host_block *__b,
                      const void *__kernarg);
    uint32_t nparams;
    const uint32_t *param_size;  /* sizeof each parameter type */
    const uint32_t *param_align; /* alignof each parameter type */
    uint32_t uses_sync;
} hk_host_kernel_desc;

/* How each kernel of hk_host_kernels (same order) can run, for modules
 * that export hk_host_kernel_modes[] (optional; the list ends with a null
 * `why`). run_loops is the kernel split at its barriers into loops over
 * the block's threads (host_loops.c), or NULL; why says, when it is NULL
 * and the kernel has barriers, what kept the split from being made ("" for
 * a kernel without barriers, which runs as a plain loop anyway). */
typedef struct hk_host_kernel_mode {
    void (*run_loops)(const hk_host_runtime *__rt, const hk_host_block *__b,
                      const void *__kernarg);
    const char *why;
} hk_host_kernel_mode;

/* A module variable (__device__, __constant__, __managed__ at namespace
 * scope), for hk_module_global: hk_host_globals[] ends with a null name.
 * Modules built before it have no such table (the symbol is optional). */
typedef struct hk_host_global_desc {
    const char *name;
    void *addr;
    size_t bytes;
} hk_host_global_desc;

#ifdef __cplusplus
}
#endif

#endif
