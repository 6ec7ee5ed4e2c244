/* HIP's device language on the CPU: the implementation behind hip_runtime.h.
 *
 * A module is ONE translation unit: the user's (rewritten) source followed by
 * a kernel table the backend generates (HK_HOST_KERNEL..., in
 * hipkit_host_runners.h). Everything here is therefore static to the module,
 * and per-OS-thread state lives in one `static thread_local` object:
 *
 * - blocks run on the runtime's OS threads, one block after another on each;
 * - the threads of a block run on the block's OS thread, either as a plain
 *   loop (uses_sync == 0: the kernel is inlined into the loop) or as fibers
 *   (uses_sync == 1: rt->run_fibers), so per-OS-thread storage is per-block
 *   storage: a static `__shared__` variable in a function body is rewritten
 *   (host_source.c) into the block's storage behind hk_host_static_shared,
 *   and any other `__shared__` (namespace scope, several declarators) stays
 *   thread_local, which is per block for the same reason;
 * - the current GPU thread's coordinates are kept by value in that object
 *   rather than behind a pointer, so in loop mode the compiler sees the stores
 *   the loop makes and forwards them into the inlined kernel body. Fibers copy
 *   their own coordinates in when they start and again after every runtime
 *   call that can switch fibers (another fiber of the block overwrote them
 *   while this one was suspended). */
#ifndef __HK_HOST_DEVICE_H
#define __HK_HOST_DEVICE_H

#ifndef __cplusplus
#error "hip/hip_runtime.h of hipkit's CPU backend needs C++"
#endif

/* libstdc++'s <cmath> (which <math.h> includes) declares C++17's special
 * functions (std::legendre, std::cyl_bessel_j, ...) as inline functions
 * that call templates, and GCC instantiates those templates at the end of
 * every unit that includes it, used or not: half the cost of compiling an
 * empty module with the precompiled header. They are host library
 * functions, not HIP device ones; a module whose source names one gets
 * them from <bits/specfun.h>, which the backend includes after this header
 * then (host_source.c). */
#if __has_include(<bits/c++config.h>)
#include <bits/c++config.h>
#undef _GLIBCXX_USE_STD_SPEC_FUNCS
#endif

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory> /* before __noinline__ is defined: libstdc++ spells that attribute */
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hipkit_host_abi.h"

#define __HIPKIT_HOST__ 1

/* ------------------------------------------------------------------------ */
/* Qualifiers */

/* Kernel discovery preprocesses the source with __HIPKIT_DISCOVER__ and
 * looks for __global__ (kernels) and __device__, __constant__, __managed__
 * (module variables) in the result: leave the words as they are then. */
#ifndef __HIPKIT_DISCOVER__
#define __global__ __attribute__((visibility("hidden")))
/* early start's wait (hipkit.h): the CPU runs launches one after another */
#define hk_grid_wait() ((void)0)
#define __device__
#define __constant__
#define __managed__
#endif
#define __host__
#define __shared__ thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(__n) __attribute__((aligned(__n)))
/* __restrict__ is already a GNU C++ keyword. */

#include "hipkit_host_vector.h"

/* ------------------------------------------------------------------------ */
/* Per-OS-thread state of the module */

struct __hk_state {
    uint3 __tid; /* threadIdx of the running GPU thread */
    uint3 __bid, __bdim, __gdim;
    const hk_host_runtime *__rt;
    const hk_host_block *__blk;
    int __loop; /* the block runs as a plain loop: no barriers, no warp ops */
    /* the span of the static __shared__ storage this OS thread was handed
     * (hk_host_static_shared): its worker's own, for every block it runs */
    uintptr_t __sh_lo, __sh_hi;
};

static thread_local __hk_state __hk_tls;

#define threadIdx (static_cast<const uint3 &>(__hk_tls.__tid))
#define blockIdx (static_cast<const uint3 &>(__hk_tls.__bid))
#define blockDim (static_cast<const uint3 &>(__hk_tls.__bdim))
#define gridDim (static_cast<const uint3 &>(__hk_tls.__gdim))
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

static constexpr int warpSize = HK_HOST_WARP_SIZE;

/* Linear index of the running thread in its block; derived, not stored, so
 * the plain loop has one store per thread (threadIdx.x). */
static inline unsigned int __hk_linear_tid(void)
{
    const __hk_state &__s = __hk_tls;
    return __s.__tid.x + __s.__bdim.x * (__s.__tid.y + __s.__bdim.y * __s.__tid.z);
}
static inline unsigned int __lane_id(void)
{
    return __hk_linear_tid() & (HK_HOST_WARP_SIZE - 1);
}

static inline void *hk_host_dynamic_shared(void) { return __hk_tls.__blk->dynamic_shared; }

/* What `extern __shared__ E name[];` at namespace scope becomes: an empty
 * object that indexes and converts like the array (E may itself be an array
 * type, for `E name[][4]`). */
template <typename _Hk_E> struct hk_host_shared_array {
    operator _Hk_E *() const { return (_Hk_E *)hk_host_dynamic_shared(); }
    _Hk_E &operator[](ptrdiff_t __i) const { return ((_Hk_E *)hk_host_dynamic_shared())[__i]; }
    _Hk_E &operator*() const { return *(_Hk_E *)hk_host_dynamic_shared(); }
    explicit operator uintptr_t() const { return (uintptr_t)hk_host_dynamic_shared(); }
};

/* What `__shared__ T name[N];` in a function body becomes (host_source.c):
 * the block's storage for the declaration whose name constant is __key. */
static inline void *hk_host_static_shared(const char *__key, size_t __size, size_t __align)
{
    hk_host_shared_vars *__v = __hk_tls.__blk->static_shared;
    for (uint32_t __i = 0; __i < __v->hk_n; __i++)
        if (__v->hk_var[__i].hk_key == __key)
            return __v->hk_var[__i].hk_p;
    char *__p = (char *)__hk_tls.__rt->static_shared(__key, __size, __align);
    __hk_state &__s = __hk_tls;
    if (!__s.__sh_lo || (uintptr_t)__p < __s.__sh_lo)
        __s.__sh_lo = (uintptr_t)__p;
    if ((uintptr_t)(__p + __size) > __s.__sh_hi)
        __s.__sh_hi = (uintptr_t)(__p + __size);
    return __p;
}

#define HIP_DYNAMIC_SHARED(type, __var) type *__var = (type *)hk_host_dynamic_shared()
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

/* ------------------------------------------------------------------------ */
/* Failing the launch, printf, assert, abort */

static inline int __hk_where(char *__buf, size_t __n)
{
    const __hk_state &__s = __hk_tls;
    return snprintf(__buf, __n, " in block (%u, %u, %u), thread (%u, %u, %u)", __s.__bid.x, __s.__bid.y,
                    __s.__bid.z, __s.__tid.x, __s.__tid.y, __s.__tid.z);
}

static void __hk_failf(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void __hk_failf(const char *fmt, ...)
{
    char __msg[1024];
    va_list __ap;
    va_start(__ap, fmt);
    int __n = vsnprintf(__msg, sizeof __msg, fmt, __ap);
    va_end(__ap);
    if (__n >= 0 && (size_t)__n < sizeof __msg)
        __hk_where(__msg + __n, sizeof __msg - (size_t)__n);
    const hk_host_runtime *__rt = __hk_tls.__rt;
    if (__rt)
        __rt->fail(__msg);
    /* Not inside a launch (a static initialiser?): nothing to report to. */
    fprintf(stderr, "hipkit: %s\n", __msg);
    __builtin_trap();
}

static void __hk_loop_fail(const char *__what) __attribute__((noreturn, cold));
static void __hk_loop_fail(const char *__what)
{
    const __hk_state &__s = __hk_tls;
    if (!__s.__rt)
        __hk_failf("%s called outside a kernel launch", __what);
    __hk_failf("kernel %s reached %s in loop mode; the source scanner saw no barrier or "
                  "warp operation in it (hidden behind a macro or a header it was not "
                  "given?)",
                  __s.__blk && __s.__blk->kernel ? __s.__blk->kernel : "?", __what);
}

static inline void __trap(void) __attribute__((noreturn));
static inline void __trap(void) { __hk_failf("__trap() called"); }

static inline void __builtin_amdgcn_s_sleep(int) {}

/* glibc's assert() (whenever <assert.h> is included) reports through this;
 * the module is linked with -Bsymbolic, and it is hidden, so it binds here. */
extern "C" __attribute__((visibility("hidden"))) void
__assert_fail(const char *__expr, const char *__file, unsigned int __line,
              const char *__function) noexcept
{
    __hk_failf("assertion failed: %s at %s:%u in %s", __expr, __file, __line, __function);
}

/* abort() and std::abort() in device code end the launch, not the process
 * (hidden by -fvisibility=hidden, bound here by -Bsymbolic). */
extern "C" void abort(void) noexcept
{
    __hk_failf("abort() called");
}
/* stdlib.h declared abort with default visibility, which a later attribute
 * cannot change; the assembler can. */
__asm__(".hidden abort");

static inline int __hk_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int __hk_printf(const char *fmt, ...)
{
    char __local[512];
    char *__p = __local;
    va_list __ap;
    va_start(__ap, fmt);
    int __n = vsnprintf(__local, sizeof __local, fmt, __ap);
    va_end(__ap);
    if (__n < 0)
        return __n;
    if ((size_t)__n >= sizeof __local) {
        __p = (char *)malloc((size_t)__n + 1);
        if (!__p)
            return -1;
        va_start(__ap, fmt);
        vsnprintf(__p, (size_t)__n + 1, fmt, __ap);
        va_end(__ap);
    }
    /* One print per printf keeps concurrent lines whole. */
    const hk_host_runtime *__rt = __hk_tls.__rt;
    if (__rt)
        __rt->print(__p, (size_t)__n);
    else
        fwrite(__p, 1, (size_t)__n, stdout);
    if (__p != __local)
        free(__p);
    return __n;
}
namespace std {
using ::__hk_printf;
}
/* Function-like, so __attribute__((format(printf, ...))) in later headers is
 * left alone. */
#define printf(...) __hk_printf(__VA_ARGS__)

/* The rest, one concern a header, in the order each needs the ones before.
 *
 * What every compile pays for these headers: GCC instantiates a template
 * that a (non-template) inline function's body uses at the end of the unit,
 * whether that function is used or not, and a precompiled header is written
 * before that point, so each module paid again for every such use here (40
 * ms of CPU, most of an empty module's compile: docs/RESULTS.md). So a
 * function template that such a function calls returns `auto`: a deduced
 * return type makes GCC instantiate it where it is first used, in the header
 * and so in the precompiled one (__hk_simd, __hk_atomic_update,
 * __hk_bit_cast, the __hk_*_dir rounding helpers, ...), and the make_*
 * functions set members instead of calling the vector types' constructor
 * templates. Keep to that in new code. */
#include "hipkit_host_warp.h"
#include "hipkit_host_atomics.h"
#include "hipkit_host_arith.h"
#include "hipkit_host_f16.h"
#include "hipkit_host_half.h"
#include "hipkit_host_math.h"
#include "hipkit_host_intrinsics.h"
#include "hipkit_simd.h"
#include "hipkit_host_runners.h"
#include "hipkit_host_loops.h"

#endif
