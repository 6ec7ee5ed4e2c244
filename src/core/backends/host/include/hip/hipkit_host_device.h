/* HIP's device language on the CPU: the implementation behind hip_runtime.h.
 *
 * A module is ONE translation unit: the user's (rewritten) source followed by
 * a kernel table the backend generates (HK_HOST_KERNEL... at the end of this
 * file). Everything here is therefore static to the module, and per-OS-thread
 * state lives in one `static thread_local` object:
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

/* ------------------------------------------------------------------------ */
/* Vector types: __hk_vec<T, N>, spelled float4 etc. Alignment follows the
 * HIP/clang vector types for N = 1, 2, 4 (N elements, so float2 8, float4 16,
 * double2 16, double4 32) and the element's for N = 3 (float3 is 12 bytes). */

template <typename _Hk_T, unsigned _Hk_N>
struct __hk_vec;

#define __HK_VEC_ALIGN_(_Hk_T, _Hk_N) ((_Hk_N) == 3 ? alignof(_Hk_T) : (_Hk_N) * sizeof(_Hk_T))

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 1)) __hk_vec<_Hk_T, 1> {
    typedef _Hk_T value_type;
    _Hk_T x;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    constexpr __hk_vec(_Hk_A __a) : x(static_cast<_Hk_T>(__a)) {}
};

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 2)) __hk_vec<_Hk_T, 2> {
    typedef _Hk_T value_type;
    _Hk_T x, y;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    explicit constexpr __hk_vec(_Hk_A __a) : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__a)) {}
    template <typename _Hk_A, typename _Hk_B>
    constexpr __hk_vec(_Hk_A __a, _Hk_B __b) : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__b)) {}
};

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 3)) __hk_vec<_Hk_T, 3> {
    typedef _Hk_T value_type;
    _Hk_T x, y, z;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    explicit constexpr __hk_vec(_Hk_A __a)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__a)), z(static_cast<_Hk_T>(__a)) {}
    template <typename _Hk_A, typename _Hk_B, typename _Hk_C>
    constexpr __hk_vec(_Hk_A __a, _Hk_B __b, _Hk_C __c)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__b)), z(static_cast<_Hk_T>(__c)) {}
};

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 4)) __hk_vec<_Hk_T, 4> {
    typedef _Hk_T value_type;
    _Hk_T x, y, z, w;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    explicit constexpr __hk_vec(_Hk_A __a)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__a)), z(static_cast<_Hk_T>(__a)),
          w(static_cast<_Hk_T>(__a)) {}
    template <typename _Hk_A, typename _Hk_B, typename _Hk_C, typename _Hk_D>
    constexpr __hk_vec(_Hk_A __a, _Hk_B __b, _Hk_C __c, _Hk_D __d)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__b)), z(static_cast<_Hk_T>(__c)),
          w(static_cast<_Hk_T>(__d)) {}
};

template <typename _Hk_T, unsigned _Hk_N>
using HIP_vector_type = __hk_vec<_Hk_T, _Hk_N>;

template <typename _Hk_T, unsigned _Hk_N, typename _Hk_F>
constexpr __hk_vec<_Hk_T, _Hk_N> __hk_vec_map(__hk_vec<_Hk_T, _Hk_N> __a, const __hk_vec<_Hk_T, _Hk_N> &__b,
                                            _Hk_F __f)
{
    __a.x = static_cast<_Hk_T>(__f(__a.x, __b.x));
    if constexpr (_Hk_N > 1)
        __a.y = static_cast<_Hk_T>(__f(__a.y, __b.y));
    if constexpr (_Hk_N > 2)
        __a.z = static_cast<_Hk_T>(__f(__a.z, __b.z));
    if constexpr (_Hk_N > 3)
        __a.w = static_cast<_Hk_T>(__f(__a.w, __b.w));
    return __a;
}

template <typename _Hk_S>
using __hk_if_scalar = std::enable_if_t<std::is_arithmetic<_Hk_S>::value, int>;

#define __HK_VEC_BINOP_(op, cond)                                                 \
    template <typename _Hk_T, unsigned _Hk_N, std::enable_if_t<cond, int> = 0>               \
    constexpr __hk_vec<_Hk_T, _Hk_N> operator op(const __hk_vec<_Hk_T, _Hk_N> &__a,              \
                                            const __hk_vec<_Hk_T, _Hk_N> &__b)              \
    {                                                                                \
        return __hk_vec_map(__a, __b, [](_Hk_T __u, _Hk_T __v) { return __u op __v; });               \
    }                                                                                \
    template <typename _Hk_T, unsigned _Hk_N, typename _Hk_S, __hk_if_scalar<_Hk_S> = 0,          \
              std::enable_if_t<cond, int> = 0>                                       \
    constexpr __hk_vec<_Hk_T, _Hk_N> operator op(const __hk_vec<_Hk_T, _Hk_N> &__a, _Hk_S __s)         \
    {                                                                                \
        return __a op __hk_vec<_Hk_T, _Hk_N>(static_cast<_Hk_T>(__s));                            \
    }                                                                                \
    template <typename _Hk_T, unsigned _Hk_N, typename _Hk_S, __hk_if_scalar<_Hk_S> = 0,          \
              std::enable_if_t<cond, int> = 0>                                       \
    constexpr __hk_vec<_Hk_T, _Hk_N> operator op(_Hk_S __s, const __hk_vec<_Hk_T, _Hk_N> &__a)         \
    {                                                                                \
        return __hk_vec<_Hk_T, _Hk_N>(static_cast<_Hk_T>(__s)) op __a;                            \
    }                                                                                \
    template <typename _Hk_T, unsigned _Hk_N, typename _Hk_S, std::enable_if_t<cond, int> = 0>   \
    constexpr __hk_vec<_Hk_T, _Hk_N> &operator op##=(__hk_vec<_Hk_T, _Hk_N> &__a, const _Hk_S &__s)    \
    {                                                                                \
        return __a = __a op __s;                                                           \
    }

__HK_VEC_BINOP_(+, true)
__HK_VEC_BINOP_(-, true)
__HK_VEC_BINOP_(*, true)
__HK_VEC_BINOP_(/, true)
__HK_VEC_BINOP_(%, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(&, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(|, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(^, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(<<, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(>>, std::is_integral<_Hk_T>::value)
#undef __HK_VEC_BINOP_

template <typename _Hk_T, unsigned _Hk_N>
constexpr __hk_vec<_Hk_T, _Hk_N> operator-(const __hk_vec<_Hk_T, _Hk_N> &__a)
{
    return __hk_vec_map(__a, __a, [](_Hk_T __u, _Hk_T) { return -__u; });
}
template <typename _Hk_T, unsigned _Hk_N>
constexpr __hk_vec<_Hk_T, _Hk_N> operator+(const __hk_vec<_Hk_T, _Hk_N> &__a)
{
    return __a;
}
template <typename _Hk_T, unsigned _Hk_N, std::enable_if_t<std::is_integral<_Hk_T>::value, int> = 0>
constexpr __hk_vec<_Hk_T, _Hk_N> operator~(const __hk_vec<_Hk_T, _Hk_N> &__a)
{
    return __hk_vec_map(__a, __a, [](_Hk_T __u, _Hk_T) { return ~__u; });
}
template <typename _Hk_T, unsigned _Hk_N>
constexpr bool operator==(const __hk_vec<_Hk_T, _Hk_N> &__a, const __hk_vec<_Hk_T, _Hk_N> &__b)
{
    bool __eq = __a.x == __b.x;
    if constexpr (_Hk_N > 1)
        __eq = __eq && __a.y == __b.y;
    if constexpr (_Hk_N > 2)
        __eq = __eq && __a.z == __b.z;
    if constexpr (_Hk_N > 3)
        __eq = __eq && __a.w == __b.w;
    return __eq;
}
template <typename _Hk_T, unsigned _Hk_N>
constexpr bool operator!=(const __hk_vec<_Hk_T, _Hk_N> &__a, const __hk_vec<_Hk_T, _Hk_N> &__b)
{
    return !(__a == __b);
}

#define __HK_VEC_TYPES_(name, _Hk_T)                                                   \
    typedef __hk_vec<_Hk_T, 1> name##1;                                                \
    typedef __hk_vec<_Hk_T, 2> name##2;                                                \
    typedef __hk_vec<_Hk_T, 3> name##3;                                                \
    typedef __hk_vec<_Hk_T, 4> name##4;                                                \
    static inline constexpr name##1 make_##name##1(_Hk_T x) { return name##1(x); }        \
    static inline constexpr name##2 make_##name##2(_Hk_T x, _Hk_T y) { return name##2(x, y); } \
    static inline constexpr name##3 make_##name##3(_Hk_T x, _Hk_T y, _Hk_T z)                     \
    {                                                                                 \
        return name##3(x, y, z);                                                      \
    }                                                                                 \
    static inline constexpr name##4 make_##name##4(_Hk_T x, _Hk_T y, _Hk_T z, _Hk_T w)                \
    {                                                                                 \
        return name##4(x, y, z, w);                                                   \
    }

__HK_VEC_TYPES_(char, char)
__HK_VEC_TYPES_(uchar, unsigned char)
__HK_VEC_TYPES_(short, short)
__HK_VEC_TYPES_(ushort, unsigned short)
__HK_VEC_TYPES_(int, int)
__HK_VEC_TYPES_(uint, unsigned int)
__HK_VEC_TYPES_(long, long)
__HK_VEC_TYPES_(ulong, unsigned long)
__HK_VEC_TYPES_(longlong, long long)
__HK_VEC_TYPES_(ulonglong, unsigned long long)
__HK_VEC_TYPES_(float, float)
__HK_VEC_TYPES_(double, double)
#undef __HK_VEC_TYPES_

struct dim3 {
    uint32_t x, y, z;
    constexpr dim3(uint32_t __x_ = 1, uint32_t __y_ = 1, uint32_t __z_ = 1) : x(__x_), y(__y_), z(__z_) {}
    constexpr dim3(const uint3 &__v) : x(__v.x), y(__v.y), z(__v.z) {}
    constexpr operator uint3() const { return uint3(x, y, z); }
};

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

/* ------------------------------------------------------------------------ */
/* Barriers and warp operations: only on fibers (uses_sync == 1). */

static inline __hk_state &__hk_fibers(const char *__what)
{
    __hk_state &__s = __hk_tls;
    if (__builtin_expect(__s.__loop || !__s.__rt, 0))
        __hk_loop_fail(__what);
    return __s;
}

/* Calls f(rt), which may switch fibers, and puts this GPU thread's
 * coordinates back afterwards. */
template <typename _Hk_F>
static inline auto __hk_switching(const char *__what, _Hk_F __f)
{
    __hk_state &__s = __hk_fibers(__what);
    const uint3 __tid = __s.__tid;
    const hk_host_runtime *__rt = __s.__rt;
    auto __restore = [&] { __hk_tls.__tid = __tid; };
    if constexpr (std::is_void<decltype(__f(__rt))>::value) {
        __f(__rt);
        __restore();
    } else {
        auto __v = __f(__rt);
        __restore();
        return __v;
    }
}

static inline void __syncthreads(void)
{
    __hk_switching("__syncthreads", [](const hk_host_runtime *__rt) { __rt->syncthreads(); });
}

/* Block-wide reductions over a counter that is per block (thread_local):
 * the leading barrier keeps the previous call's reset ahead of this call's
 * increments. */
static thread_local int __hk_sync_count;
static inline int __syncthreads_count(int __pred)
{
    __syncthreads();
    if (__pred)
        __hk_sync_count++;
    __syncthreads();
    int __n = __hk_sync_count;
    __syncthreads();
    if (__hk_linear_tid() == 0)
        __hk_sync_count = 0;
    return __n;
}
static inline int __syncthreads_and(int __pred)
{
    return __syncthreads_count(!__pred) == 0;
}
static inline int __syncthreads_or(int __pred) { return __syncthreads_count(__pred) != 0; }

static inline void __syncwarp(unsigned long long __mask = ~0ull)
{
    (void)__mask;
    __hk_switching("__syncwarp", [](const hk_host_runtime *__rt) { __rt->syncwarp(); });
}

static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static inline unsigned long long __activemask(void)
{
    return __hk_switching("__activemask",
                             [](const hk_host_runtime *__rt) { return __rt->activemask(); });
}

static inline unsigned long long __ballot(int __pred)
{
    return __hk_switching("__ballot",
                             [__pred](const hk_host_runtime *__rt) { return __rt->ballot(__pred); });
}
static inline int __any(int __pred) { return __ballot(__pred) != 0; }
/* One exchange instead of two: no live lane passed a zero predicate. */
static inline int __all(int __pred) { return __ballot(!__pred) == 0; }
static inline unsigned long long __ballot_sync(unsigned long long __mask, int __pred)
{
    return __ballot(__pred) & __mask;
}
static inline int __any_sync(unsigned long long __mask, int __pred)
{
    return (__ballot(__pred) & __mask) != 0;
}
static inline int __all_sync(unsigned long long __mask, int __pred)
{
    return (__ballot(!__pred) & __mask) == 0;
}

static inline uint64_t __hk_shfl_bits(uint64_t __v, int __src, const char *__what)
{
    return __hk_switching(__what,
                             [__v, __src](const hk_host_runtime *__rt) { return __rt->shfl(__v, __src); });
}

template <typename _Hk_T>
static inline _Hk_T __hk_shfl_as(_Hk_T __v, int __src, const char *__what)
{
    static_assert(sizeof(_Hk_T) <= 8, "shuffle of more than 64 bits");
    uint64_t __b = 0;
    memcpy(&__b, &__v, sizeof __v);
    __b = __hk_shfl_bits(__b, __src & (HK_HOST_WARP_SIZE - 1), __what);
    _Hk_T __r;
    memcpy(&__r, &__b, sizeof __r);
    return __r;
}

/* Source lanes as HIP computes them on AMD; a lane whose source falls outside
 * its width-group names itself and gets its own value back. */
static inline int __hk_shfl_src(int __src, int __width)
{
    int __self = (int)__lane_id();
    return (__src & (__width - 1)) + (__self & ~(__width - 1));
}
static inline int __hk_shfl_up_src(unsigned int __delta, int __width)
{
    int __self = (int)__lane_id();
    int index = __self - (int)__delta;
    return index < (__self & ~(__width - 1)) ? __self : index;
}
static inline int __hk_shfl_down_src(unsigned int __delta, int __width)
{
    int __self = (int)__lane_id();
    int index = __self + (int)__delta;
    return (int)((__self & (__width - 1)) + __delta) >= __width ? __self : index;
}
static inline int __hk_shfl_xor_src(int __mask, int __width)
{
    int __self = (int)__lane_id();
    int index = __self ^ __mask;
    return index >= ((__self + __width) & ~(__width - 1)) ? __self : index;
}

#define __HK_SHFL_(_Hk_T)                                                                  \
    static inline _Hk_T __shfl(_Hk_T __var, int __src, int __width = warpSize)                          \
    {                                                                                     \
        return __hk_shfl_as(__var, __hk_shfl_src(__src, __width), "__shfl");              \
    }                                                                                     \
    static inline _Hk_T __shfl_up(_Hk_T __var, unsigned int __delta, int __width = warpSize)            \
    {                                                                                     \
        return __hk_shfl_as(__var, __hk_shfl_up_src(__delta, __width), "__shfl_up");      \
    }                                                                                     \
    static inline _Hk_T __shfl_down(_Hk_T __var, unsigned int __delta, int __width = warpSize)          \
    {                                                                                     \
        return __hk_shfl_as(__var, __hk_shfl_down_src(__delta, __width), "__shfl_down");  \
    }                                                                                     \
    static inline _Hk_T __shfl_xor(_Hk_T __var, int __mask, int __width = warpSize)                     \
    {                                                                                     \
        return __hk_shfl_as(__var, __hk_shfl_xor_src(__mask, __width), "__shfl_xor");     \
    }                                                                                     \
    static inline _Hk_T __shfl_sync(unsigned long long, _Hk_T __var, int __src, int __width = warpSize)  \
    {                                                                                     \
        return __shfl(__var, __src, __width);                                                   \
    }                                                                                     \
    static inline _Hk_T __shfl_up_sync(unsigned long long, _Hk_T __var, unsigned int __delta,         \
                                   int __width = warpSize)                                  \
    {                                                                                     \
        return __shfl_up(__var, __delta, __width);                                              \
    }                                                                                     \
    static inline _Hk_T __shfl_down_sync(unsigned long long, _Hk_T __var, unsigned int __delta,       \
                                     int __width = warpSize)                                \
    {                                                                                     \
        return __shfl_down(__var, __delta, __width);                                            \
    }                                                                                     \
    static inline _Hk_T __shfl_xor_sync(unsigned long long, _Hk_T __var, int __mask,                  \
                                    int __width = warpSize)                                 \
    {                                                                                     \
        return __shfl_xor(__var, __mask, __width);                                              \
    }

__HK_SHFL_(int)
__HK_SHFL_(unsigned int)
__HK_SHFL_(long)
__HK_SHFL_(unsigned long)
__HK_SHFL_(long long)
__HK_SHFL_(unsigned long long)
__HK_SHFL_(float)
__HK_SHFL_(double)
#undef __HK_SHFL_

/* ------------------------------------------------------------------------ */
/* Atomics: real ones, since blocks run on several OS threads at once. */

#define __HK_MO_ __ATOMIC_SEQ_CST

/* Shared memory is the block's, and a block runs on one OS thread from its
 * start to its end (fibers switch only at barriers and warp operations), so
 * an atomic on it needs no lock: a plain read-modify-write is atomic for
 * every GPU thread that can see the variable. The check is a few loads next
 * to a locked instruction (a shared-memory histogram runs about twice as
 * fast). */
static inline bool __hk_block_private(const void *__p)
{
    const __hk_state &__s = __hk_tls;
    uintptr_t __a = (uintptr_t)__p;
    if (__a - __s.__sh_lo < __s.__sh_hi - __s.__sh_lo)
        return true;
    const hk_host_block *__b = __s.__blk;
    return __b && __a - (uintptr_t)__b->dynamic_shared < __b->dynamic_shared_bytes;
}

template <typename _Hk_T, typename _Hk_F>
static inline _Hk_T __hk_atomic_update(_Hk_T *__p, _Hk_F __f)
{
    if (__hk_block_private(__p)) {
        _Hk_T __o = *__p;
        *__p = __f(__o);
        return __o;
    }
    _Hk_T __old;
    __atomic_load(__p, &__old, __ATOMIC_RELAXED);
    _Hk_T __nv;
    do {
        __nv = __f(__old);
    } while (!__atomic_compare_exchange(__p, &__old, &__nv, true, __HK_MO_, __ATOMIC_RELAXED));
    return __old;
}

/* A fetch-and-op: plain on the block's shared memory (__hk_block_private). */
#define __HK_FETCH_(__p, __v, __op, __builtin)                                             \
    do {                                                                                 \
        if (__hk_block_private(__p)) {                                                   \
            auto __o = *(__p);                                                           \
            *(__p) = __o __op(__v);                                                      \
            return __o;                                                                  \
        }                                                                                \
        return __builtin(__p, __v, __HK_MO_);                                            \
    } while (0)

#define __HK_ATOMIC_INT_(_Hk_T)                                                           \
    static inline _Hk_T atomicAdd(_Hk_T *__p, _Hk_T __v) { __HK_FETCH_(__p, __v, +, __atomic_fetch_add); } \
    static inline _Hk_T atomicSub(_Hk_T *__p, _Hk_T __v) { __HK_FETCH_(__p, __v, -, __atomic_fetch_sub); } \
    static inline _Hk_T atomicAnd(_Hk_T *__p, _Hk_T __v) { __HK_FETCH_(__p, __v, &, __atomic_fetch_and); } \
    static inline _Hk_T atomicOr(_Hk_T *__p, _Hk_T __v) { __HK_FETCH_(__p, __v, |, __atomic_fetch_or); }   \
    static inline _Hk_T atomicXor(_Hk_T *__p, _Hk_T __v) { __HK_FETCH_(__p, __v, ^, __atomic_fetch_xor); } \
    static inline _Hk_T atomicExch(_Hk_T *__p, _Hk_T __v) { return __atomic_exchange_n(__p, __v, __HK_MO_); } \
    static inline _Hk_T atomicCAS(_Hk_T *__p, _Hk_T __cmp, _Hk_T __v)                                          \
    {                                                                                    \
        __atomic_compare_exchange_n(__p, &__cmp, __v, false, __HK_MO_, __HK_MO_);        \
        return __cmp;                                                                      \
    }                                                                                    \
    static inline _Hk_T atomicMin(_Hk_T *__p, _Hk_T __v)                                                 \
    {                                                                                    \
        return __hk_atomic_update(__p, [__v](_Hk_T __o) { return __v < __o ? __v : __o; });             \
    }                                                                                    \
    static inline _Hk_T atomicMax(_Hk_T *__p, _Hk_T __v)                                                 \
    {                                                                                    \
        return __hk_atomic_update(__p, [__v](_Hk_T __o) { return __v > __o ? __v : __o; });             \
    }

__HK_ATOMIC_INT_(int)
__HK_ATOMIC_INT_(unsigned int)
__HK_ATOMIC_INT_(unsigned long)
__HK_ATOMIC_INT_(long long)
__HK_ATOMIC_INT_(unsigned long long)
#undef __HK_ATOMIC_INT_

#define __HK_ATOMIC_FP_(_Hk_T)                                                            \
    static inline _Hk_T atomicAdd(_Hk_T *__p, _Hk_T __v)                                                 \
    {                                                                                    \
        return __hk_atomic_update(__p, [__v](_Hk_T __o) { return __o + __v; });                     \
    }                                                                                    \
    static inline _Hk_T atomicSub(_Hk_T *__p, _Hk_T __v)                                                 \
    {                                                                                    \
        return __hk_atomic_update(__p, [__v](_Hk_T __o) { return __o - __v; });                     \
    }                                                                                    \
    static inline _Hk_T atomicExch(_Hk_T *__p, _Hk_T __v)                                                \
    {                                                                                    \
        _Hk_T __old;                                                                           \
        __atomic_exchange(__p, &__v, &__old, __HK_MO_);                                     \
        return __old;                                                                      \
    }                                                                                    \
    static inline _Hk_T atomicCAS(_Hk_T *__p, _Hk_T __cmp, _Hk_T __v)                                          \
    {                                                                                    \
        __atomic_compare_exchange(__p, &__cmp, &__v, false, __HK_MO_, __HK_MO_);         \
        return __cmp;                                                                      \
    }                                                                                    \
    static inline _Hk_T atomicMin(_Hk_T *__p, _Hk_T __v)                                                 \
    {                                                                                    \
        return __hk_atomic_update(__p, [__v](_Hk_T __o) { return __v < __o ? __v : __o; });             \
    }                                                                                    \
    static inline _Hk_T atomicMax(_Hk_T *__p, _Hk_T __v)                                                 \
    {                                                                                    \
        return __hk_atomic_update(__p, [__v](_Hk_T __o) { return __v > __o ? __v : __o; });             \
    }

__HK_ATOMIC_FP_(float)
__HK_ATOMIC_FP_(double)
#undef __HK_ATOMIC_FP_

/* CUDA's wraparound increment and decrement. */
static inline unsigned int atomicInc(unsigned int *__p, unsigned int __limit)
{
    return __hk_atomic_update(__p, [__limit](unsigned int __o) { return __o >= __limit ? 0u : __o + 1; });
}
static inline unsigned int atomicDec(unsigned int *__p, unsigned int __limit)
{
    return __hk_atomic_update(
        __p, [__limit](unsigned int __o) { return (__o == 0 || __o > __limit) ? __limit : __o - 1; });
}

/* Scopes mean nothing here: every atomic is system-wide. */
#define __HK_ATOMIC_SCOPED_(op)                                                      \
    template <typename _Hk_P, typename... _Hk_V>                                                \
    static inline auto op##_system(_Hk_P __p, _Hk_V... __v) -> decltype(op(__p, __v...))               \
    {                                                                                   \
        return op(__p, __v...);                                                             \
    }                                                                                   \
    template <typename _Hk_P, typename... _Hk_V>                                                \
    static inline auto op##_block(_Hk_P __p, _Hk_V... __v) -> decltype(op(__p, __v...))                \
    {                                                                                   \
        return op(__p, __v...);                                                             \
    }
__HK_ATOMIC_SCOPED_(atomicAdd)
__HK_ATOMIC_SCOPED_(atomicSub)
__HK_ATOMIC_SCOPED_(atomicExch)
__HK_ATOMIC_SCOPED_(atomicMin)
__HK_ATOMIC_SCOPED_(atomicMax)
__HK_ATOMIC_SCOPED_(atomicCAS)
__HK_ATOMIC_SCOPED_(atomicAnd)
__HK_ATOMIC_SCOPED_(atomicOr)
__HK_ATOMIC_SCOPED_(atomicXor)
__HK_ATOMIC_SCOPED_(atomicInc)
__HK_ATOMIC_SCOPED_(atomicDec)
#undef __HK_ATOMIC_SCOPED_

/* ------------------------------------------------------------------------ */
/* Integer intrinsics */

static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
static inline int __clzll(long long x)
{
    return x ? __builtin_clzll((unsigned long long)x) : 64;
}
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffs(unsigned int x) { return __builtin_ffs((int)x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
static inline unsigned int __brev(unsigned int x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x)
{
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
static inline int __mul24(int __a, int __b)
{
    /* Low 32 bits of the product of the sign-extended low 24 bits. */
    long long x = (long long)(int32_t)((uint32_t)__a << 8) >> 8;
    long long y = (long long)(int32_t)((uint32_t)__b << 8) >> 8;
    return (int)(uint32_t)(uint64_t)(x * y);
}
static inline unsigned int __umul24(unsigned int __a, unsigned int __b)
{
    return (__a & 0xffffffu) * (__b & 0xffffffu);
}
static inline int __mulhi(int __a, int __b) { return (int)(((long long)__a * __b) >> 32); }
static inline unsigned int __umulhi(unsigned int __a, unsigned int __b)
{
    return (unsigned int)(((unsigned long long)__a * __b) >> 32);
}
__extension__ typedef __int128 __hk_i128;
__extension__ typedef unsigned __int128 __hk_u128;
static inline long long __mul64hi(long long __a, long long __b)
{
    return (long long)(((__hk_i128)__a * __b) >> 64);
}
static inline unsigned long long __umul64hi(unsigned long long __a, unsigned long long __b)
{
    return (unsigned long long)(((__hk_u128)__a * __b) >> 64);
}
static inline unsigned int __sad(int __a, int __b, unsigned int __c)
{
    return __c + (unsigned int)(__a > __b ? (long long)__a - __b : (long long)__b - __a);
}
static inline unsigned int __usad(unsigned int __a, unsigned int __b, unsigned int __c)
{
    return __c + (__a > __b ? __a - __b : __b - __a);
}
static inline int __hadd(int __a, int __b) { return (int)(((long long)__a + __b) >> 1); }
static inline int __rhadd(int __a, int __b) { return (int)(((long long)__a + __b + 1) >> 1); }

/* ------------------------------------------------------------------------ */
/* Math */

#define __HK_MINMAX_(_Hk_T)                                                     \
    static inline constexpr _Hk_T min(_Hk_T __a, _Hk_T __b) { return __b < __a ? __b : __a; }        \
    static inline constexpr _Hk_T max(_Hk_T __a, _Hk_T __b) { return __a < __b ? __b : __a; }
__HK_MINMAX_(int)
__HK_MINMAX_(unsigned int)
__HK_MINMAX_(long)
__HK_MINMAX_(unsigned long)
__HK_MINMAX_(long long)
__HK_MINMAX_(unsigned long long)
#undef __HK_MINMAX_
static inline float min(float __a, float __b) { return fminf(__a, __b); }
static inline float max(float __a, float __b) { return fmaxf(__a, __b); }
static inline double min(double __a, double __b) { return fmin(__a, __b); }
static inline double max(double __a, double __b) { return fmax(__a, __b); }

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
/* glibc declares these names (extern "C", not exported by libm): define
 * them to match that declaration. */
#define __HK_LIBM_FAST_(name, call)                                          \
    extern "C" inline float name(float x) noexcept { return call(x); }
__HK_LIBM_FAST_(__expf, expf)
__HK_LIBM_FAST_(__exp10f, exp10f)
__HK_LIBM_FAST_(__logf, logf)
__HK_LIBM_FAST_(__log2f, log2f)
__HK_LIBM_FAST_(__log10f, log10f)
__HK_LIBM_FAST_(__sinf, sinf)
__HK_LIBM_FAST_(__cosf, cosf)
__HK_LIBM_FAST_(__tanf, tanf)
#undef __HK_LIBM_FAST_
extern "C" inline void __sincosf(float x, float *__s, float *__c) noexcept
{
    *__s = sinf(x);
    *__c = cosf(x);
}
extern "C" inline float __powf(float x, float y) noexcept { return powf(x, y); }
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fmaf_rn(float __a, float __b, float __c) { return fmaf(__a, __b, __c); }
static inline float __fadd_rn(float __a, float __b) { return __a + __b; }
static inline float __fsub_rn(float __a, float __b) { return __a - __b; }
static inline float __fmul_rn(float __a, float __b) { return __a * __b; }
static inline float __fdiv_rn(float __a, float __b) { return __a / __b; }
static inline double __dadd_rn(double __a, double __b) { return __a + __b; }
static inline double __dsub_rn(double __a, double __b) { return __a - __b; }
static inline double __dmul_rn(double __a, double __b) { return __a * __b; }
static inline double __ddiv_rn(double __a, double __b) { return __a / __b; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline double __fma_rn(double __a, double __b, double __c) { return fma(__a, __b, __c); }
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

template <typename _Hk_To, typename _Hk_From>
static inline _Hk_To __hk_bit_cast(_Hk_From __v)
{
    static_assert(sizeof(_Hk_To) == sizeof(_Hk_From), "bit cast between sizes");
    _Hk_To __r;
    memcpy(&__r, &__v, sizeof __r);
    return __r;
}
static inline float __int_as_float(int x) { return __hk_bit_cast<float>(x); }
static inline int __float_as_int(float x) { return __hk_bit_cast<int>(x); }
static inline float __uint_as_float(unsigned int x) { return __hk_bit_cast<float>(x); }
static inline unsigned int __float_as_uint(float x) { return __hk_bit_cast<unsigned int>(x); }
static inline double __longlong_as_double(long long x) { return __hk_bit_cast<double>(x); }
static inline long long __double_as_longlong(double x) { return __hk_bit_cast<long long>(x); }
static inline int __double2hiint(double x)
{
    return (int)(__hk_bit_cast<unsigned long long>(x) >> 32);
}
static inline int __double2loint(double x) { return (int)__hk_bit_cast<unsigned long long>(x); }
static inline double __hiloint2double(int __hi, int __lo)
{
    return __hk_bit_cast<double>(((unsigned long long)(unsigned int)__hi << 32) |
                                    (unsigned int)__lo);
}

/* Conversions with a rounding mode; out-of-range values are undefined, as on
 * the GPU. */
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned int __float2uint_rn(float x) { return (unsigned int)nearbyintf(x); }
static inline unsigned int __float2uint_rz(float x) { return (unsigned int)x; }
static inline unsigned int __float2uint_rd(float x) { return (unsigned int)floorf(x); }
static inline unsigned int __float2uint_ru(float x) { return (unsigned int)ceilf(x); }
static inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
static inline long long __float2ll_rz(float x) { return (long long)x; }
static inline unsigned long long __float2ull_rn(float x)
{
    return (unsigned long long)nearbyintf(x);
}
static inline unsigned long long __float2ull_rz(float x) { return (unsigned long long)x; }
static inline int __double2int_rn(double x) { return (int)nearbyint(x); }
static inline int __double2int_rz(double x) { return (int)x; }
static inline int __double2int_rd(double x) { return (int)floor(x); }
static inline int __double2int_ru(double x) { return (int)ceil(x); }
static inline unsigned int __double2uint_rn(double x) { return (unsigned int)nearbyint(x); }
static inline unsigned int __double2uint_rz(double x) { return (unsigned int)x; }
static inline long long __double2ll_rn(double x) { return (long long)nearbyint(x); }
static inline long long __double2ll_rz(double x) { return (long long)x; }
static inline float __double2float_rn(double x) { return (float)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned int x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline float __ull2float_rn(unsigned long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned int x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }

template <typename _Hk_T>
static inline _Hk_T __ldg(const _Hk_T *__p)
{
    return *__p;
}

static inline long long clock64(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return (long long)__builtin_ia32_rdtsc();
#else
    struct timespec __ts;
    clock_gettime(CLOCK_MONOTONIC, &__ts);
    return (long long)__ts.tv_sec * 1000000000LL + __ts.tv_nsec;
#endif
}
static inline long long wall_clock64(void) { return clock64(); }
static inline long long __clock64(void) { return clock64(); }

/* ------------------------------------------------------------------------ */
/* Binary16 and bfloat16: storage only, arithmetic through float, conversions
 * rounded to nearest even (NaN stays NaN, quiet; overflow gives infinity;
 * subnormals are kept). */

static inline uint64_t __hk_rne_shr(uint64_t __m, int __s)
{
    if (__s <= 0)
        return __m << -__s;
    if (__s > 64)
        return 0;
    uint64_t __r = __s == 64 ? 0 : __m >> __s;
    uint64_t __rem = __s == 64 ? __m : __m & ((1ull << __s) - 1);
    uint64_t half = 1ull << (__s - 1);
    if (__rem > half || (__rem == half && (__r & 1)))
        __r++;
    return __r;
}

/* Rounds m * 2^e (m != 0) to a binary format with `mb` stored mantissa bits
 * and exponents emin..emax; returns the bits without the sign. */
static inline uint32_t __hk_round_to(uint64_t __m, int __e, int __mb, int __emin, int __emax)
{
    int __p = 63 - __builtin_clzll(__m);
    int _Hk_E = __p + __e;
    if (_Hk_E < __emin) /* subnormal, in units of 2^(emin - mb); may round up to the smallest normal */
        return (uint32_t)__hk_rne_shr(__m, (__emin - __mb) - __e);
    uint64_t __q = __hk_rne_shr(__m, __p - __mb);
    if (__q >> (__mb + 1)) {
        __q >>= 1;
        _Hk_E++;
    }
    if (_Hk_E > __emax)
        return (uint32_t)(2 * __emax + 1) << __mb;
    return ((uint32_t)(_Hk_E + __emax) << __mb) | (uint32_t)(__q & ((1ull << __mb) - 1));
}

static inline unsigned short __hk_f2h(float __f)
{
    uint32_t __u = __hk_bit_cast<uint32_t>(__f);
    unsigned short __sign = (unsigned short)((__u >> 16) & 0x8000u);
    uint32_t __ex = (__u >> 23) & 0xffu, __mant = __u & 0x7fffffu;
    if (__ex == 0xff)
        return (unsigned short)(__sign | 0x7c00u | (__mant ? 0x200u | (__mant >> 13) : 0u));
    if (__ex == 0 && __mant == 0)
        return __sign;
    uint64_t __m = __ex ? (__mant | 0x800000u) : __mant;
    int __e = __ex ? (int)__ex - 150 : -149;
    return (unsigned short)(__sign | __hk_round_to(__m, __e, 10, -14, 15));
}

static inline unsigned short __hk_d2h(double __d)
{
    uint64_t __u = __hk_bit_cast<uint64_t>(__d);
    unsigned short __sign = (unsigned short)((__u >> 48) & 0x8000u);
    uint32_t __ex = (uint32_t)(__u >> 52) & 0x7ffu;
    uint64_t __mant = __u & 0xfffffffffffffull;
    if (__ex == 0x7ff)
        return (unsigned short)(__sign | 0x7c00u | (__mant ? 0x200u | (uint32_t)(__mant >> 42) : 0u));
    if (__ex == 0 && __mant == 0)
        return __sign;
    uint64_t __m = __ex ? (__mant | (1ull << 52)) : __mant;
    int __e = __ex ? (int)__ex - 1075 : -1074;
    return (unsigned short)(__sign | __hk_round_to(__m, __e, 10, -14, 15));
}

static inline float __hk_h2f(unsigned short __h)
{
    uint32_t __sign = (uint32_t)(__h & 0x8000u) << 16;
    uint32_t __ex = (__h >> 10) & 0x1fu, __mant = __h & 0x3ffu;
    uint32_t __u;
    if (__ex == 0x1f) {
        __u = __sign | 0x7f800000u | (__mant << 13);
    } else if (__ex == 0) {
        if (__mant == 0) {
            __u = __sign;
        } else { /* subnormal: normalise */
            int __e = 113;
            while (!(__mant & 0x400u)) {
                __mant <<= 1;
                __e--;
            }
            __u = __sign | ((uint32_t)__e << 23) | ((__mant & 0x3ffu) << 13);
        }
    } else {
        __u = __sign | ((__ex + 112) << 23) | (__mant << 13);
    }
    return __hk_bit_cast<float>(__u);
}

static inline unsigned short __hk_f2bf(float __f)
{
    uint32_t __u = __hk_bit_cast<uint32_t>(__f);
    if ((__u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign and payload top, make quiet */
        return (unsigned short)((__u >> 16) | 0x40u);
    return (unsigned short)((__u + 0x7fffu + ((__u >> 16) & 1u)) >> 16);
}

static inline unsigned short __hk_d2bf(double __d)
{
    uint64_t __u = __hk_bit_cast<uint64_t>(__d);
    unsigned short __sign = (unsigned short)((__u >> 48) & 0x8000u);
    uint32_t __ex = (uint32_t)(__u >> 52) & 0x7ffu;
    uint64_t __mant = __u & 0xfffffffffffffull;
    if (__ex == 0x7ff)
        return (unsigned short)(__sign | 0x7f80u | (__mant ? 0x40u | (uint32_t)(__mant >> 45) : 0u));
    if (__ex == 0 && __mant == 0)
        return __sign;
    uint64_t __m = __ex ? (__mant | (1ull << 52)) : __mant;
    int __e = __ex ? (int)__ex - 1075 : -1074;
    return (unsigned short)(__sign | __hk_round_to(__m, __e, 7, -126, 127));
}

static inline float __hk_bf2f(unsigned short __b)
{
    return __hk_bit_cast<float>((uint32_t)__b << 16);
}

struct __half_raw {
    unsigned short x;
};
struct __half2_raw {
    unsigned short x, y;
};

/* HIP's conversion rules: a __half is made from, and converts to, every
 * arithmetic type through templates, so each conversion is an exact match
 * to its own type (maxg(__half, double) picks the double overload of float
 * and double ones, maxg(__half, int) the int one, as with HIP). */
struct __half {
    unsigned short __x;
    __half() = default;
    constexpr __half(const __half_raw &__r) : __x(__r.x) {}
    template <typename _Hk_F, std::enable_if_t<std::is_floating_point<_Hk_F>::value, int> = 0>
    __half(_Hk_F __f) : __x(sizeof(_Hk_F) == sizeof(float) ? __hk_f2h((float)__f) : __hk_d2h((double)__f))
    {
    }
    template <typename _Hk_I, std::enable_if_t<std::is_integral<_Hk_I>::value, int> = 0>
    __half(_Hk_I __i) : __x(__hk_d2h((double)__i))
    {
    }
    template <typename _Hk_T, std::enable_if_t<std::is_arithmetic<_Hk_T>::value, int> = 0>
    operator _Hk_T() const
    {
        return (_Hk_T)__hk_h2f(__x);
    }
    constexpr operator __half_raw() const { return __half_raw{__x}; }
    __half &operator=(const __half_raw &__r)
    {
        __x = __r.x;
        return *this;
    }
};
typedef __half half;

struct __hip_bfloat16 {
    unsigned short data;
    __hip_bfloat16() = default;
    __hip_bfloat16(float __f) : data(__hk_f2bf(__f)) {}
    __hip_bfloat16(double __d) : data(__hk_d2bf(__d)) {}
    template <typename _Hk_I, std::enable_if_t<std::is_integral<_Hk_I>::value, int> = 0>
    __hip_bfloat16(_Hk_I __i) : data(__hk_d2bf((double)__i))
    {
    }
    operator float() const { return __hk_bf2f(data); }
};
typedef __hip_bfloat16 hip_bfloat16;

/* Operators of the 16-bit types: both 16-bit gives the 16-bit type (computed
 * in float and rounded, which for + - * / is the correctly rounded result);
 * mixed with a C arithmetic type, the arithmetic happens in float (or wider)
 * and the result is that type, where HIP would call the mix ambiguous. */
#define __HK_F16_OPS_(_Hk_H)                                                            \
    static inline _Hk_H operator+(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) + float(__b)); }             \
    static inline _Hk_H operator-(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) - float(__b)); }             \
    static inline _Hk_H operator*(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) * float(__b)); }             \
    static inline _Hk_H operator/(_Hk_H __a, _Hk_H __b) { return _Hk_H(float(__a) / float(__b)); }             \
    static inline _Hk_H operator-(_Hk_H __a)                                                     \
    {                                                                                  \
        _Hk_H __r = __a;                                                                       \
        __hk_f16_bits(__r) ^= 0x8000u;                                                \
        return __r;                                                                      \
    }                                                                                  \
    static inline _Hk_H operator+(_Hk_H __a) { return __a; }                                       \
    static inline _Hk_H &operator+=(_Hk_H &__a, _Hk_H __b) { return __a = __a + __b; }                       \
    static inline _Hk_H &operator-=(_Hk_H &__a, _Hk_H __b) { return __a = __a - __b; }                       \
    static inline _Hk_H &operator*=(_Hk_H &__a, _Hk_H __b) { return __a = __a * __b; }                       \
    static inline _Hk_H &operator/=(_Hk_H &__a, _Hk_H __b) { return __a = __a / __b; }                       \
    static inline _Hk_H &operator++(_Hk_H &__a) { return __a = __a + _Hk_H(1.0f); }                      \
    static inline _Hk_H &operator--(_Hk_H &__a) { return __a = __a - _Hk_H(1.0f); }                      \
    static inline _Hk_H operator++(_Hk_H &__a, int)                                              \
    {                                                                                  \
        _Hk_H __r = __a;                                                                       \
        ++__a;                                                                           \
        return __r;                                                                      \
    }                                                                                  \
    static inline _Hk_H operator--(_Hk_H &__a, int)                                              \
    {                                                                                  \
        _Hk_H __r = __a;                                                                       \
        --__a;                                                                           \
        return __r;                                                                      \
    }                                                                                  \
    static inline bool operator==(_Hk_H __a, _Hk_H __b) { return float(__a) == float(__b); }           \
    static inline bool operator!=(_Hk_H __a, _Hk_H __b) { return float(__a) != float(__b); }           \
    static inline bool operator<(_Hk_H __a, _Hk_H __b) { return float(__a) < float(__b); }             \
    static inline bool operator<=(_Hk_H __a, _Hk_H __b) { return float(__a) <= float(__b); }           \
    static inline bool operator>(_Hk_H __a, _Hk_H __b) { return float(__a) > float(__b); }             \
    static inline bool operator>=(_Hk_H __a, _Hk_H __b) { return float(__a) >= float(__b); }           \
    __HK_F16_MIXED_(_Hk_H, +) __HK_F16_MIXED_(_Hk_H, -) __HK_F16_MIXED_(_Hk_H, *)         \
    __HK_F16_MIXED_(_Hk_H, /) __HK_F16_MIXED_(_Hk_H, ==) __HK_F16_MIXED_(_Hk_H, !=)       \
    __HK_F16_MIXED_(_Hk_H, <) __HK_F16_MIXED_(_Hk_H, <=) __HK_F16_MIXED_(_Hk_H, >)        \
    __HK_F16_MIXED_(_Hk_H, >=)

#define __HK_F16_MIXED_(_Hk_H, op)                                                      \
    template <typename _Hk_S, __hk_if_scalar<_Hk_S> = 0>                                    \
    static inline auto operator op(_Hk_H __a, _Hk_S __b)->decltype(float(__a) op __b)                  \
    {                                                                                  \
        return float(__a) op __b;                                                          \
    }                                                                                  \
    template <typename _Hk_S, __hk_if_scalar<_Hk_S> = 0>                                    \
    static inline auto operator op(_Hk_S __a, _Hk_H __b)->decltype(__a op float(__b))                  \
    {                                                                                  \
        return __a op float(__b);                                                          \
    }

static inline unsigned short &__hk_f16_bits(__half &__h) { return __h.__x; }
static inline unsigned short &__hk_f16_bits(__hip_bfloat16 &__h) { return __h.data; }
__HK_F16_OPS_(__half)
__HK_F16_OPS_(__hip_bfloat16)
#undef __HK_F16_OPS_
#undef __HK_F16_MIXED_

struct alignas(4) __half2 {
    __half x, y;
    __half2() = default;
    constexpr __half2(const __half2_raw &__r) : x(__half_raw{__r.x}), y(__half_raw{__r.y}) {}
    __half2(__half __a, __half __b) : x(__a), y(__b) {}
    constexpr operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};
typedef __half2 half2;

struct alignas(4) __hip_bfloat162 {
    __hip_bfloat16 x, y;
    __hip_bfloat162() = default;
    __hip_bfloat162(__hip_bfloat16 __a, __hip_bfloat16 __b) : x(__a), y(__b) {}
};

static inline __half __float2half(float __f) { return __half(__f); }
static inline __half __float2half_rn(float __f) { return __half(__f); }
static inline __half __double2half(double __d) { return __half(__d); }
static inline float __half2float(__half __h) { return __hk_h2f(__h.__x); }
static inline __half __int2half_rn(int __i) { return __half(__i); }
static inline int __half2int_rn(__half __h) { return (int)nearbyintf(__half2float(__h)); }
static inline unsigned short __half_as_ushort(__half __h) { return __h.__x; }
static inline short __half_as_short(__half __h) { return (short)__h.__x; }
static inline __half __ushort_as_half(unsigned short x) { return __half(__half_raw{x}); }
static inline __half __short_as_half(short x)
{
    return __half(__half_raw{(unsigned short)x});
}

static inline __hip_bfloat16 __float2bfloat16(float __f) { return __hip_bfloat16(__f); }
static inline __hip_bfloat16 __float2bfloat16_rn(float __f) { return __hip_bfloat16(__f); }
static inline __hip_bfloat16 __double2bfloat16(double __d) { return __hip_bfloat16(__d); }
static inline float __bfloat162float(__hip_bfloat16 __b) { return __hk_bf2f(__b.data); }
static inline unsigned short __bfloat16_as_ushort(__hip_bfloat16 __b) { return __b.data; }
static inline __hip_bfloat16 __ushort_as_bfloat16(unsigned short x)
{
    __hip_bfloat16 __b;
    __b.data = x;
    return __b;
}

#define __HK_F16_FUNCS_(_Hk_H)                                                          \
    static inline _Hk_H __hadd(_Hk_H __a, _Hk_H __b) { return __a + __b; }                                 \
    static inline _Hk_H __hsub(_Hk_H __a, _Hk_H __b) { return __a - __b; }                                 \
    static inline _Hk_H __hmul(_Hk_H __a, _Hk_H __b) { return __a * __b; }                                 \
    static inline _Hk_H __hdiv(_Hk_H __a, _Hk_H __b) { return __a / __b; }                                 \
    static inline _Hk_H __hneg(_Hk_H __a) { return -__a; }                                         \
    static inline _Hk_H __habs(_Hk_H __a)                                                        \
    {                                                                                  \
        __hk_f16_bits(__a) &= 0x7fffu;                                                \
        return __a;                                                                      \
    }                                                                                  \
    /* Product exact in double; one more rounding to double is harmless at 11 bits. */ \
    static inline _Hk_H __hfma(_Hk_H __a, _Hk_H __b, _Hk_H __c)                                              \
    {                                                                                  \
        return _Hk_H((double)float(__a) * (double)float(__b) + (double)float(__c));             \
    }                                                                                  \
    static inline bool __heq(_Hk_H __a, _Hk_H __b) { return __a == __b; }                              \
    static inline bool __hne(_Hk_H __a, _Hk_H __b) { return __a != __b; }                              \
    static inline bool __hlt(_Hk_H __a, _Hk_H __b) { return __a < __b; }                               \
    static inline bool __hle(_Hk_H __a, _Hk_H __b) { return __a <= __b; }                              \
    static inline bool __hgt(_Hk_H __a, _Hk_H __b) { return __a > __b; }                               \
    static inline bool __hge(_Hk_H __a, _Hk_H __b) { return __a >= __b; }                              \
    static inline _Hk_H __hmax(_Hk_H __a, _Hk_H __b) { return _Hk_H(fmaxf(float(__a), float(__b))); }          \
    static inline _Hk_H __hmin(_Hk_H __a, _Hk_H __b) { return _Hk_H(fminf(float(__a), float(__b))); }          \
    static inline bool __hisnan(_Hk_H __a) { return std::isnan(float(__a)); }                  \
    static inline int __hisinf(_Hk_H __a)                                                    \
    {                                                                                  \
        float __f = float(__a);                                                            \
        return std::isinf(__f) ? (__f < 0 ? -1 : 1) : 0;                                   \
    }
__HK_F16_FUNCS_(__half)
__HK_F16_FUNCS_(__hip_bfloat16)
#undef __HK_F16_FUNCS_

static inline __half2 __halves2half2(__half __a, __half __b) { return __half2(__a, __b); }
static inline __half2 __half2half2(__half __a) { return __half2(__a, __a); }
static inline __half2 __floats2half2_rn(float __a, float __b) { return __half2(__half(__a), __half(__b)); }
static inline __half2 __float2half2_rn(float __a) { return __half2(__half(__a), __half(__a)); }
static inline __half2 __float22half2_rn(float2 __f) { return __floats2half2_rn(__f.x, __f.y); }
static inline float2 __half22float2(__half2 __h) { return float2(float(__h.x), float(__h.y)); }
static inline float __low2float(__half2 __h) { return float(__h.x); }
static inline float __high2float(__half2 __h) { return float(__h.y); }
static inline __half __low2half(__half2 __h) { return __h.x; }
static inline __half __high2half(__half2 __h) { return __h.y; }
static inline __half2 __lows2half2(__half2 __a, __half2 __b) { return __half2(__a.x, __b.x); }
static inline __half2 __highs2half2(__half2 __a, __half2 __b) { return __half2(__a.y, __b.y); }
static inline __half2 __hadd2(__half2 __a, __half2 __b) { return __half2(__a.x + __b.x, __a.y + __b.y); }
static inline __half2 __hsub2(__half2 __a, __half2 __b) { return __half2(__a.x - __b.x, __a.y - __b.y); }
static inline __half2 __hmul2(__half2 __a, __half2 __b) { return __half2(__a.x * __b.x, __a.y * __b.y); }
static inline __half2 __h2div(__half2 __a, __half2 __b) { return __half2(__a.x / __b.x, __a.y / __b.y); }
static inline __half2 __hneg2(__half2 __a) { return __half2(-__a.x, -__a.y); }
static inline __half2 __habs2(__half2 __a) { return __half2(__habs(__a.x), __habs(__a.y)); }
static inline __half2 __hfma2(__half2 __a, __half2 __b, __half2 __c)
{
    return __half2(__hfma(__a.x, __b.x, __c.x), __hfma(__a.y, __b.y, __c.y));
}
static inline __half2 operator+(__half2 __a, __half2 __b) { return __hadd2(__a, __b); }
static inline __half2 operator-(__half2 __a, __half2 __b) { return __hsub2(__a, __b); }
static inline __half2 operator*(__half2 __a, __half2 __b) { return __hmul2(__a, __b); }
static inline __half2 operator/(__half2 __a, __half2 __b) { return __h2div(__a, __b); }
static inline __half2 operator-(__half2 __a) { return __hneg2(__a); }
static inline __half2 &operator+=(__half2 &__a, __half2 __b) { return __a = __a + __b; }
static inline __half2 &operator-=(__half2 &__a, __half2 __b) { return __a = __a - __b; }
static inline __half2 &operator*=(__half2 &__a, __half2 __b) { return __a = __a * __b; }
static inline __half2 &operator/=(__half2 &__a, __half2 __b) { return __a = __a / __b; }

static inline __hip_bfloat162 __floats2bfloat162_rn(float __a, float __b)
{
    return __hip_bfloat162(__hip_bfloat16(__a), __hip_bfloat16(__b));
}
static inline __hip_bfloat162 __float2bfloat162_rn(float __a)
{
    return __hip_bfloat162(__hip_bfloat16(__a), __hip_bfloat16(__a));
}
static inline float __low2float(__hip_bfloat162 __h) { return float(__h.x); }
static inline float __high2float(__hip_bfloat162 __h) { return float(__h.y); }

#include "hipkit_host_half.h"
#include "hipkit_host_math.h"
#include "hipkit_host_intrinsics.h"
#include "hipkit_host_simd.h"

/* ------------------------------------------------------------------------ */
/* The kernel table the backend appends to every module:
 *
 *   HK_HOST_KERNEL(axpy, 0)
 *   HK_HOST_KERNEL_TABLE_BEGIN
 *   HK_HOST_KERNEL_ENTRY(axpy)
 *   HK_HOST_KERNEL_TABLE_END(1)
 *
 * A kernel whose name is no identifier (`ns::kern`, `reduce<float, 4>`) is
 * given one (`__hk_expr_0`) and its name as a string:
 *
 *   HK_HOST_KERNEL_AS(__hk_expr_0, 1, reduce<float, 4>)
 *   HK_HOST_KERNEL_ENTRY_AS(__hk_expr_0, "reduce<float, 4>")
 */

/* After the loop: a store the compiler sees makes the loop's own stores to the
 * thread coordinates dead, so it keeps them in registers (and forwards them
 * into the inlined body) instead of tracking their last values. */
static inline void __hk_loop_done(__hk_state &__s) { __s.__tid = uint3(0, 0, 0); }

template <typename _Hk_Fn, _Hk_Fn _Hk_K, int _Hk_Sync>
struct __hk_kernel_impl;

template <typename... _Hk_A, void (*_Hk_K)(_Hk_A...), int _Hk_Sync>
struct __hk_kernel_impl<void (*)(_Hk_A...), _Hk_K, _Hk_Sync> {
    static constexpr uint32_t nparams = sizeof...(_Hk_A);
    /* One spare element so that a kernel without parameters has arrays too. */
    static constexpr uint32_t __sizes[sizeof...(_Hk_A) + 1] = {(uint32_t)sizeof(_Hk_A)..., 0};
    static constexpr uint32_t __aligns[sizeof...(_Hk_A) + 1] = {(uint32_t)alignof(_Hk_A)..., 0};
    static constexpr uint32_t uses_sync = _Hk_Sync ? 1 : 0;

    /* Offset of parameter i in a C struct of the parameters. */
    static constexpr size_t __offset(size_t __i)
    {
        size_t __off = 0;
        for (size_t __j = 0;; __j++) {
            __off = (__off + __aligns[__j] - 1) / __aligns[__j] * __aligns[__j];
            if (__j == __i)
                return __off;
            __off += __sizes[__j];
        }
    }

    template <typename _Hk_T>
    static _Hk_T __load(const unsigned char *__p)
    {
        static_assert(std::is_trivially_copyable<_Hk_T>::value,
                      "kernel parameters must be trivially copyable");
        _Hk_T __v;
        memcpy(static_cast<void *>(&__v), __p, sizeof(_Hk_T));
        return __v;
    }

    /* The plain-loop mode: flatten lets the kernel body (and its helpers)
     * be inlined into the loop over the block's threads. */
    __attribute__((flatten)) static void __loop(const hk_host_block *__b, _Hk_A... __a)
    {
        __hk_state &__s = __hk_tls;
        const uint32_t __dx = __b->dim.x, __dy = __b->dim.y, __dz = __b->dim.z;
        /* Only tid.x changes in the inner loop; linear and lane are derived
         * when asked for, so the loop stores nothing else. */
        for (uint32_t z = 0; z < __dz; z++) {
            __s.__tid.z = z;
            for (uint32_t y = 0; y < __dy; y++) {
                __s.__tid.y = y;
                for (uint32_t x = 0; x < __dx; x++) {
                    __s.__tid.x = x;
                    _Hk_K(__a...);
                }
            }
        }
        __hk_loop_done(__s);
    }

    struct __closure {
        std::tuple<_Hk_A...> __args;
    };

    static void __fiber(void *__c, const hk_host_thread *__t)
    {
        __hk_state &__s = __hk_tls;
        __s.__tid = uint3(__t->idx.x, __t->idx.y, __t->idx.z);
        std::apply(_Hk_K, static_cast<__closure *>(__c)->__args);
    }

    template <size_t... _Hk_I>
    static void __run(const hk_host_runtime *__rt, const hk_host_block *__b, const unsigned char *__ka,
                    std::index_sequence<_Hk_I...>)
    {
        (void)__ka;
        if constexpr (_Hk_Sync) {
            __closure __c{std::tuple<_Hk_A...>(__load<_Hk_A>(__ka + __offset(_Hk_I))...)};
            __rt->run_fibers(__b, &__fiber, &__c);
        } else {
            (void)__rt;
            __loop(__b, __load<_Hk_A>(__ka + __offset(_Hk_I))...);
        }
    }

    static void run_block(const hk_host_runtime *__rt, const hk_host_block *__b, const void *__kernarg)
    {
        __hk_state &__s = __hk_tls;
        __s.__rt = __rt;
        __s.__blk = __b;
        __s.__bid = uint3(__b->idx.x, __b->idx.y, __b->idx.z);
        __s.__bdim = uint3(__b->dim.x, __b->dim.y, __b->dim.z);
        __s.__gdim = uint3(__b->grid.x, __b->grid.y, __b->grid.z);
        __s.__loop = !_Hk_Sync;
        __run(__rt, __b, static_cast<const unsigned char *>(__kernarg),
            std::index_sequence_for<_Hk_A...>{});
    }
};

/* ------------------------------------------------------------------------ */
/* Loop mode: a kernel with barriers split at them (host_loops.c writes
 * __hk_loops_NAME after the kernel, with the same parameters). Each region
 * between two barriers runs as a loop over the block's threads; values that
 * live across a barrier are in per-thread arrays carved from the block's
 * loop storage (__hk_loop_mem); __hk_ret marks the threads that returned. */

struct __hk_loop_mem {
    char *__p;
    uint32_t __n;
    template <typename _Hk_T>
    _Hk_T *__take(void)
    {
        _Hk_T *__r = reinterpret_cast<_Hk_T *>(__p);
        __p += (sizeof(_Hk_T) * __n + 63) & ~(size_t)63;
        return __r;
    }
};
static inline size_t __hk_loop_span(size_t __size, uint32_t __n) { return (__size * __n + 63) & ~(size_t)63; }

/* Shuffles in loop mode: an exchange loop stored every lane's value in
 * __w (__hk_lw_bits), then each thread reads its source lane's, with the
 * source lanes computed as on fibers; a source past the block's last thread
 * or one that returned gives the thread its own value, as on fibers. */
template <typename _Hk_T>
static inline uint64_t __hk_lw_bits(_Hk_T __v)
{
    static_assert(sizeof(_Hk_T) <= 8, "shuffle of more than 64 bits");
    uint64_t __b = 0;
    memcpy(&__b, &__v, sizeof __v);
    return __b;
}
template <typename _Hk_T>
static inline _Hk_T __hk_lw_get(const uint64_t *__w, uint32_t __t, uint32_t __n, const unsigned char *__ret,
                                int __lane)
{
    uint32_t __s = (__t & ~(uint32_t)(HK_HOST_WARP_SIZE - 1)) + (uint32_t)(__lane & (HK_HOST_WARP_SIZE - 1));
    if (__s >= __n || (__ret && __ret[__s]))
        __s = __t;
    _Hk_T __r;
    memcpy(&__r, &__w[__s], sizeof __r);
    return __r;
}
template <typename _Hk_T>
static inline _Hk_T __hk_lw(const uint64_t *__w, uint32_t __t, uint32_t __n, const unsigned char *__ret,
                            int __src, int __width = warpSize)
{
    return __hk_lw_get<_Hk_T>(__w, __t, __n, __ret, __hk_shfl_src(__src, __width));
}
template <typename _Hk_T>
static inline _Hk_T __hk_lw_up(const uint64_t *__w, uint32_t __t, uint32_t __n, const unsigned char *__ret,
                               unsigned int __delta, int __width = warpSize)
{
    return __hk_lw_get<_Hk_T>(__w, __t, __n, __ret, __hk_shfl_up_src(__delta, __width));
}
template <typename _Hk_T>
static inline _Hk_T __hk_lw_down(const uint64_t *__w, uint32_t __t, uint32_t __n, const unsigned char *__ret,
                                 unsigned int __delta, int __width = warpSize)
{
    return __hk_lw_get<_Hk_T>(__w, __t, __n, __ret, __hk_shfl_down_src(__delta, __width));
}
template <typename _Hk_T>
static inline _Hk_T __hk_lw_xor(const uint64_t *__w, uint32_t __t, uint32_t __n, const unsigned char *__ret,
                                int __mask, int __width = warpSize)
{
    return __hk_lw_get<_Hk_T>(__w, __t, __n, __ret, __hk_shfl_xor_src(__mask, __width));
}

/* Votes in loop mode: an exchange loop over the live threads set each
 * one's predicate bit in its warp's word of __wb (__hk_lv_put; for __all
 * the bit of a zero predicate), then each thread reads its warp's word,
 * under the mask of a _sync form, as release_warp (host_exec.c) computes
 * it on fibers: lanes past the block's last thread and lanes that returned
 * have no bit. __activemask's exchange sets every live lane's bit. */
static inline bool __hk_lv_pred(int __p) { return __p != 0; }
static inline void __hk_lv_put(uint64_t *__wb, uint32_t __t, bool __p)
{
    __wb[__t / HK_HOST_WARP_SIZE] |= (uint64_t)__p << (__t % HK_HOST_WARP_SIZE);
}
static inline unsigned long long __hk_lv_ballot(const uint64_t *__wb, uint32_t __t, unsigned long long __m)
{
    return __wb[__t / HK_HOST_WARP_SIZE] & __m;
}
static inline unsigned long long __hk_lv_activemask(const uint64_t *__wb, uint32_t __t, unsigned long long __m)
{
    return __hk_lv_ballot(__wb, __t, __m);
}
static inline int __hk_lv_any(const uint64_t *__wb, uint32_t __t, unsigned long long __m)
{
    return __hk_lv_ballot(__wb, __t, __m) != 0;
}
static inline int __hk_lv_all(const uint64_t *__wb, uint32_t __t, unsigned long long __m)
{
    return __hk_lv_ballot(__wb, __t, __m) == 0; /* no live lane's predicate was zero */
}

/* The variables every region loop uses: the coordinates, the block's shape. */
#define __HK_LOOPS_BEGIN(__bytes_expr)                                                  \
    __hk_state &__hk_s = __hk_tls;                                                       \
    const uint32_t __hk_dx = __hk_s.__bdim.x, __hk_dy = __hk_s.__bdim.y,                 \
                   __hk_dz = __hk_s.__bdim.z, __hk_n = __hk_dx * __hk_dy * __hk_dz;      \
    __hk_loop_mem __hk_m = {(char *)__hk_s.__rt->loop_begin((__bytes_expr),             \
                            (const volatile uint32_t *)&__hk_s.__tid), __hk_n};         \
    (void)__hk_m

/* One region: every thread of the block, x fastest; threads that returned
 * are skipped. threadIdx is stored for the region's code to read, and the
 * store after the loop (as in the plain loop) makes the ones inside it dead
 * where nothing in between can read them: the compiler keeps the index in a
 * register and may vectorise the region. A call that may read it (a failing
 * assert, printf) keeps its store, so such messages name their thread; a
 * fault (a signal) is found again on fibers to name it (host_exec.c,
 * find_loop_thread). */
#define __HK_REGION_BEGIN                                                               \
    __hk_s.__rt->loop_poll();                                                            \
    for (uint32_t __hk_z = 0, __hk_t = 0; __hk_z < __hk_dz; __hk_z++) {                   \
        __hk_s.__tid.z = __hk_z;                                                         \
        for (uint32_t __hk_y = 0; __hk_y < __hk_dy; __hk_y++) {                          \
            __hk_s.__tid.y = __hk_y;                                                     \
            for (uint32_t __hk_x = 0; __hk_x < __hk_dx; __hk_x++, __hk_t++) {            \
                __hk_s.__tid.x = __hk_x;                                                 \
                if (__hk_ret && __hk_ret[__hk_t])                                        \
                    continue;
#define __HK_REGION_END(__label)                                                        \
    __label : __attribute__((unused));                                                   \
    }                                                                                    \
    }                                                                                    \
    }                                                                                    \
    __hk_loop_done(__hk_s);

template <typename _Hk_Fn, _Hk_Fn _Hk_K, _Hk_Fn _Hk_L>
struct __hk_loops_impl;

template <typename... _Hk_A, void (*_Hk_K)(_Hk_A...), void (*_Hk_L)(_Hk_A...)>
struct __hk_loops_impl<void (*)(_Hk_A...), _Hk_K, _Hk_L> {
    typedef __hk_kernel_impl<void (*)(_Hk_A...), _Hk_K, 1> __base;

    template <size_t... _Hk_I>
    __attribute__((flatten)) static void __run(const unsigned char *__ka, std::index_sequence<_Hk_I...>)
    {
        (void)__ka;
        _Hk_L(__base::template __load<_Hk_A>(__ka + __base::__offset(_Hk_I))...);
    }

    static void run_block(const hk_host_runtime *__rt, const hk_host_block *__b, const void *__kernarg)
    {
        /* A runtime older than loop mode: the fibers. */
        if (__rt->size < offsetof(hk_host_runtime, loop_poll) + sizeof(void *) || !__rt->loop_poll) {
            __base::run_block(__rt, __b, __kernarg);
            return;
        }
        __hk_state &__s = __hk_tls;
        __s.__rt = __rt;
        __s.__blk = __b;
        __s.__bid = uint3(__b->idx.x, __b->idx.y, __b->idx.z);
        __s.__bdim = uint3(__b->dim.x, __b->dim.y, __b->dim.z);
        __s.__gdim = uint3(__b->grid.x, __b->grid.y, __b->grid.z);
        __s.__loop = 1; /* a barrier the split missed fails the launch */
        __run(static_cast<const unsigned char *>(__kernarg), std::index_sequence_for<_Hk_A...>{});
        __hk_loop_done(__s);
    }
};

#define HK_HOST_LOOPS(name)                                                              \
    typedef __hk_loops_impl<decltype(&name), &name, &__hk_loops_##name> __hk_loops_run_##name;
#define HK_HOST_MODES_BEGIN                                                              \
    extern "C" __attribute__((visibility("default")))                                    \
    const hk_host_kernel_mode hk_host_kernel_modes[] = {
#define HK_HOST_MODE_LOOPS(name) {&__hk_loops_run_##name::run_block, ""},
#define HK_HOST_MODE_FIBERS(why) {nullptr, why},
#define HK_HOST_MODES_END {nullptr, nullptr}};

extern "C" {
__attribute__((visibility("default"))) extern const uint32_t hk_host_module_abi;
__attribute__((visibility("default"))) extern const uint32_t hk_host_kernel_count;
__attribute__((visibility("default"))) extern const hk_host_kernel_desc hk_host_kernels[];
__attribute__((visibility("default"))) extern const hk_host_global_desc hk_host_globals[];
__attribute__((visibility("default"))) extern const hk_host_kernel_mode hk_host_kernel_modes[];
}

#define HK_HOST_KERNEL(name, sync)                                                       \
    typedef __hk_kernel_impl<decltype(&name), &name, (sync)> __hk_kernel_##name;

/* Module variables by name, address and size (hk_module_global). */
#define HK_HOST_GLOBALS_BEGIN                                                            \
    extern "C" __attribute__((visibility("default")))                                    \
    const hk_host_global_desc hk_host_globals[] = {
#define HK_HOST_GLOBAL(str, ...) {str, (void *)&(__VA_ARGS__), sizeof(__VA_ARGS__)},
#define HK_HOST_GLOBALS_END {nullptr, nullptr, 0}};

/* The name is the rest of the arguments: a template-id's commas split it. */
#define HK_HOST_KERNEL_AS(id, sync, ...)                                                 \
    typedef __hk_kernel_impl<decltype(&__VA_ARGS__), &__VA_ARGS__, (sync)> __hk_kernel_##id;

#define HK_HOST_KERNEL_TABLE_BEGIN extern "C" const hk_host_kernel_desc hk_host_kernels[] = {

#define HK_HOST_KERNEL_ENTRY(name) HK_HOST_KERNEL_ENTRY_AS(name, #name)

#define HK_HOST_KERNEL_ENTRY_AS(id, str)                                                 \
    {str,                                                                                \
     &__hk_kernel_##id::run_block,                                                       \
     __hk_kernel_##id::nparams,                                                          \
     __hk_kernel_##id::__sizes,                                                          \
     __hk_kernel_##id::__aligns,                                                         \
     __hk_kernel_##id::uses_sync},

#define HK_HOST_KERNEL_TABLE_END(__n)                                                      \
    {nullptr, nullptr, 0, nullptr, nullptr, 0}                                           \
    }                                                                                    \
    ;                                                                                    \
    static_assert(sizeof(hk_host_kernels) / sizeof(hk_host_kernels[0]) == (__n) + 1,       \
                  "kernel table length");                                                \
    extern "C" const uint32_t hk_host_kernel_count = (__n);                                \
    extern "C" const uint32_t hk_host_module_abi = HK_HOST_ABI_VERSION;

#endif
