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
 *   storage, which is what `__shared__` (thread_local) relies on;
 * - the current GPU thread's coordinates are kept by value in that object
 *   rather than behind a pointer, so in loop mode the compiler sees the stores
 *   the loop makes and forwards them into the inlined kernel body. Fibers copy
 *   their own coordinates in when they start and again after every runtime
 *   call that can switch fibers (another fiber of the block overwrote them
 *   while this one was suspended). */
#ifndef HIPKIT_HOST_DEVICE_H
#define HIPKIT_HOST_DEVICE_H

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

#define __global__ __attribute__((visibility("hidden")))
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
/* __restrict__ is already a GNU C++ keyword. */

/* ------------------------------------------------------------------------ */
/* Vector types: hk_host_vec<T, N>, spelled float4 etc. Alignment follows the
 * HIP/clang vector types for N = 1, 2, 4 (N elements, so float2 8, float4 16,
 * double2 16, double4 32) and the element's for N = 3 (float3 is 12 bytes). */

template <typename T, unsigned N>
struct hk_host_vec;

#define HK_HOST_VEC_ALIGN_(T, N) ((N) == 3 ? alignof(T) : (N) * sizeof(T))

template <typename T>
struct alignas(HK_HOST_VEC_ALIGN_(T, 1)) hk_host_vec<T, 1> {
    typedef T value_type;
    T x;
    hk_host_vec() = default;
    template <typename A, typename = std::enable_if_t<std::is_arithmetic<A>::value>>
    constexpr hk_host_vec(A a) : x(static_cast<T>(a)) {}
};

template <typename T>
struct alignas(HK_HOST_VEC_ALIGN_(T, 2)) hk_host_vec<T, 2> {
    typedef T value_type;
    T x, y;
    hk_host_vec() = default;
    template <typename A, typename = std::enable_if_t<std::is_arithmetic<A>::value>>
    explicit constexpr hk_host_vec(A a) : x(static_cast<T>(a)), y(static_cast<T>(a)) {}
    template <typename A, typename B>
    constexpr hk_host_vec(A a, B b) : x(static_cast<T>(a)), y(static_cast<T>(b)) {}
};

template <typename T>
struct alignas(HK_HOST_VEC_ALIGN_(T, 3)) hk_host_vec<T, 3> {
    typedef T value_type;
    T x, y, z;
    hk_host_vec() = default;
    template <typename A, typename = std::enable_if_t<std::is_arithmetic<A>::value>>
    explicit constexpr hk_host_vec(A a)
        : x(static_cast<T>(a)), y(static_cast<T>(a)), z(static_cast<T>(a)) {}
    template <typename A, typename B, typename C>
    constexpr hk_host_vec(A a, B b, C c)
        : x(static_cast<T>(a)), y(static_cast<T>(b)), z(static_cast<T>(c)) {}
};

template <typename T>
struct alignas(HK_HOST_VEC_ALIGN_(T, 4)) hk_host_vec<T, 4> {
    typedef T value_type;
    T x, y, z, w;
    hk_host_vec() = default;
    template <typename A, typename = std::enable_if_t<std::is_arithmetic<A>::value>>
    explicit constexpr hk_host_vec(A a)
        : x(static_cast<T>(a)), y(static_cast<T>(a)), z(static_cast<T>(a)),
          w(static_cast<T>(a)) {}
    template <typename A, typename B, typename C, typename D>
    constexpr hk_host_vec(A a, B b, C c, D d)
        : x(static_cast<T>(a)), y(static_cast<T>(b)), z(static_cast<T>(c)),
          w(static_cast<T>(d)) {}
};

template <typename T, unsigned N>
using HIP_vector_type = hk_host_vec<T, N>;

template <typename T, unsigned N, typename F>
constexpr hk_host_vec<T, N> hk_host_vec_map(hk_host_vec<T, N> a, const hk_host_vec<T, N> &b,
                                            F f)
{
    a.x = static_cast<T>(f(a.x, b.x));
    if constexpr (N > 1)
        a.y = static_cast<T>(f(a.y, b.y));
    if constexpr (N > 2)
        a.z = static_cast<T>(f(a.z, b.z));
    if constexpr (N > 3)
        a.w = static_cast<T>(f(a.w, b.w));
    return a;
}

template <typename S>
using hk_host_if_scalar = std::enable_if_t<std::is_arithmetic<S>::value, int>;

#define HK_HOST_VEC_BINOP_(op, cond)                                                 \
    template <typename T, unsigned N, std::enable_if_t<cond, int> = 0>               \
    constexpr hk_host_vec<T, N> operator op(const hk_host_vec<T, N> &a,              \
                                            const hk_host_vec<T, N> &b)              \
    {                                                                                \
        return hk_host_vec_map(a, b, [](T u, T v) { return u op v; });               \
    }                                                                                \
    template <typename T, unsigned N, typename S, hk_host_if_scalar<S> = 0,          \
              std::enable_if_t<cond, int> = 0>                                       \
    constexpr hk_host_vec<T, N> operator op(const hk_host_vec<T, N> &a, S s)         \
    {                                                                                \
        return a op hk_host_vec<T, N>(static_cast<T>(s));                            \
    }                                                                                \
    template <typename T, unsigned N, typename S, hk_host_if_scalar<S> = 0,          \
              std::enable_if_t<cond, int> = 0>                                       \
    constexpr hk_host_vec<T, N> operator op(S s, const hk_host_vec<T, N> &a)         \
    {                                                                                \
        return hk_host_vec<T, N>(static_cast<T>(s)) op a;                            \
    }                                                                                \
    template <typename T, unsigned N, typename S, std::enable_if_t<cond, int> = 0>   \
    constexpr hk_host_vec<T, N> &operator op##=(hk_host_vec<T, N> &a, const S &s)    \
    {                                                                                \
        return a = a op s;                                                           \
    }

HK_HOST_VEC_BINOP_(+, true)
HK_HOST_VEC_BINOP_(-, true)
HK_HOST_VEC_BINOP_(*, true)
HK_HOST_VEC_BINOP_(/, true)
HK_HOST_VEC_BINOP_(%, std::is_integral<T>::value)
HK_HOST_VEC_BINOP_(&, std::is_integral<T>::value)
HK_HOST_VEC_BINOP_(|, std::is_integral<T>::value)
HK_HOST_VEC_BINOP_(^, std::is_integral<T>::value)
HK_HOST_VEC_BINOP_(<<, std::is_integral<T>::value)
HK_HOST_VEC_BINOP_(>>, std::is_integral<T>::value)
#undef HK_HOST_VEC_BINOP_

template <typename T, unsigned N>
constexpr hk_host_vec<T, N> operator-(const hk_host_vec<T, N> &a)
{
    return hk_host_vec_map(a, a, [](T u, T) { return -u; });
}
template <typename T, unsigned N>
constexpr hk_host_vec<T, N> operator+(const hk_host_vec<T, N> &a)
{
    return a;
}
template <typename T, unsigned N, std::enable_if_t<std::is_integral<T>::value, int> = 0>
constexpr hk_host_vec<T, N> operator~(const hk_host_vec<T, N> &a)
{
    return hk_host_vec_map(a, a, [](T u, T) { return ~u; });
}
template <typename T, unsigned N>
constexpr bool operator==(const hk_host_vec<T, N> &a, const hk_host_vec<T, N> &b)
{
    bool eq = a.x == b.x;
    if constexpr (N > 1)
        eq = eq && a.y == b.y;
    if constexpr (N > 2)
        eq = eq && a.z == b.z;
    if constexpr (N > 3)
        eq = eq && a.w == b.w;
    return eq;
}
template <typename T, unsigned N>
constexpr bool operator!=(const hk_host_vec<T, N> &a, const hk_host_vec<T, N> &b)
{
    return !(a == b);
}

#define HK_HOST_VEC_TYPES_(name, T)                                                   \
    typedef hk_host_vec<T, 1> name##1;                                                \
    typedef hk_host_vec<T, 2> name##2;                                                \
    typedef hk_host_vec<T, 3> name##3;                                                \
    typedef hk_host_vec<T, 4> name##4;                                                \
    static inline constexpr name##1 make_##name##1(T x) { return name##1(x); }        \
    static inline constexpr name##2 make_##name##2(T x, T y) { return name##2(x, y); } \
    static inline constexpr name##3 make_##name##3(T x, T y, T z)                     \
    {                                                                                 \
        return name##3(x, y, z);                                                      \
    }                                                                                 \
    static inline constexpr name##4 make_##name##4(T x, T y, T z, T w)                \
    {                                                                                 \
        return name##4(x, y, z, w);                                                   \
    }

HK_HOST_VEC_TYPES_(char, char)
HK_HOST_VEC_TYPES_(uchar, unsigned char)
HK_HOST_VEC_TYPES_(short, short)
HK_HOST_VEC_TYPES_(ushort, unsigned short)
HK_HOST_VEC_TYPES_(int, int)
HK_HOST_VEC_TYPES_(uint, unsigned int)
HK_HOST_VEC_TYPES_(long, long)
HK_HOST_VEC_TYPES_(ulong, unsigned long)
HK_HOST_VEC_TYPES_(longlong, long long)
HK_HOST_VEC_TYPES_(ulonglong, unsigned long long)
HK_HOST_VEC_TYPES_(float, float)
HK_HOST_VEC_TYPES_(double, double)
#undef HK_HOST_VEC_TYPES_

struct dim3 {
    uint32_t x, y, z;
    constexpr dim3(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(const uint3 &v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3(x, y, z); }
};

/* ------------------------------------------------------------------------ */
/* Per-OS-thread state of the module */

struct hk_host_state {
    uint3 tid; /* threadIdx of the running GPU thread */
    uint3 bid, bdim, gdim;
    const hk_host_runtime *rt;
    const hk_host_block *blk;
    int loop; /* the block runs as a plain loop: no barriers, no warp ops */
};

static thread_local hk_host_state hk_host_tls;

#define threadIdx (static_cast<const uint3 &>(hk_host_tls.tid))
#define blockIdx (static_cast<const uint3 &>(hk_host_tls.bid))
#define blockDim (static_cast<const uint3 &>(hk_host_tls.bdim))
#define gridDim (static_cast<const uint3 &>(hk_host_tls.gdim))
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
static inline unsigned int hk_host_linear_tid(void)
{
    const hk_host_state &s = hk_host_tls;
    return s.tid.x + s.bdim.x * (s.tid.y + s.bdim.y * s.tid.z);
}
static inline unsigned int __lane_id(void)
{
    return hk_host_linear_tid() & (HK_HOST_WARP_SIZE - 1);
}

static inline void *hk_host_dynamic_shared(void) { return hk_host_tls.blk->dynamic_shared; }

/* What `extern __shared__ E name[];` at namespace scope becomes: an empty
 * object that indexes and converts like the array (E may itself be an array
 * type, for `E name[][4]`). */
template <typename E> struct hk_host_shared_array {
    operator E *() const { return (E *)hk_host_dynamic_shared(); }
    E &operator[](ptrdiff_t i) const { return ((E *)hk_host_dynamic_shared())[i]; }
    E &operator*() const { return *(E *)hk_host_dynamic_shared(); }
    explicit operator uintptr_t() const { return (uintptr_t)hk_host_dynamic_shared(); }
};

#define HIP_DYNAMIC_SHARED(type, var) type *var = (type *)hk_host_dynamic_shared()
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

/* ------------------------------------------------------------------------ */
/* Failing the launch, printf, assert, abort */

static inline int hk_host_where(char *buf, size_t n)
{
    const hk_host_state &s = hk_host_tls;
    return snprintf(buf, n, " in block (%u, %u, %u), thread (%u, %u, %u)", s.bid.x, s.bid.y,
                    s.bid.z, s.tid.x, s.tid.y, s.tid.z);
}

static void hk_host_failf(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void hk_host_failf(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof msg)
        hk_host_where(msg + n, sizeof msg - (size_t)n);
    const hk_host_runtime *rt = hk_host_tls.rt;
    if (rt)
        rt->fail(msg);
    /* Not inside a launch (a static initialiser?): nothing to report to. */
    fprintf(stderr, "hipkit: %s\n", msg);
    __builtin_trap();
}

static void hk_host_loop_fail(const char *what) __attribute__((noreturn, cold));
static void hk_host_loop_fail(const char *what)
{
    const hk_host_state &s = hk_host_tls;
    if (!s.rt)
        hk_host_failf("%s called outside a kernel launch", what);
    hk_host_failf("kernel %s reached %s in loop mode; the source scanner saw no barrier or "
                  "warp operation in it (hidden behind a macro or a header it was not "
                  "given?)",
                  s.blk && s.blk->kernel ? s.blk->kernel : "?", what);
}

static inline void __trap(void) __attribute__((noreturn));
static inline void __trap(void) { hk_host_failf("__trap() called"); }

static inline void __builtin_amdgcn_s_sleep(int) {}

/* glibc's assert() (whenever <assert.h> is included) reports through this;
 * the module is linked with -Bsymbolic, and it is hidden, so it binds here. */
extern "C" __attribute__((visibility("hidden"))) void
__assert_fail(const char *expr, const char *file, unsigned int line,
              const char *function) noexcept
{
    hk_host_failf("assertion failed: %s at %s:%u in %s", expr, file, line, function);
}

/* abort() and std::abort() in device code end the launch, not the process
 * (hidden by -fvisibility=hidden, bound here by -Bsymbolic). */
extern "C" void abort(void) noexcept
{
    hk_host_failf("abort() called");
}
/* stdlib.h declared abort with default visibility, which a later attribute
 * cannot change; the assembler can. */
__asm__(".hidden abort");

static inline int hk_host_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int hk_host_printf(const char *fmt, ...)
{
    char local[512];
    char *p = local;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(local, sizeof local, fmt, ap);
    va_end(ap);
    if (n < 0)
        return n;
    if ((size_t)n >= sizeof local) {
        p = (char *)malloc((size_t)n + 1);
        if (!p)
            return -1;
        va_start(ap, fmt);
        vsnprintf(p, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    /* One print per printf keeps concurrent lines whole. */
    const hk_host_runtime *rt = hk_host_tls.rt;
    if (rt)
        rt->print(p, (size_t)n);
    else
        fwrite(p, 1, (size_t)n, stdout);
    if (p != local)
        free(p);
    return n;
}
namespace std {
using ::hk_host_printf;
}
/* Function-like, so __attribute__((format(printf, ...))) in later headers is
 * left alone. */
#define printf(...) hk_host_printf(__VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Barriers and warp operations: only on fibers (uses_sync == 1). */

static inline hk_host_state &hk_host_fibers(const char *what)
{
    hk_host_state &s = hk_host_tls;
    if (__builtin_expect(s.loop || !s.rt, 0))
        hk_host_loop_fail(what);
    return s;
}

/* Calls f(rt), which may switch fibers, and puts this GPU thread's
 * coordinates back afterwards. */
template <typename F>
static inline auto hk_host_switching(const char *what, F f)
{
    hk_host_state &s = hk_host_fibers(what);
    const uint3 tid = s.tid;
    const hk_host_runtime *rt = s.rt;
    auto restore = [&] { hk_host_tls.tid = tid; };
    if constexpr (std::is_void<decltype(f(rt))>::value) {
        f(rt);
        restore();
    } else {
        auto v = f(rt);
        restore();
        return v;
    }
}

static inline void __syncthreads(void)
{
    hk_host_switching("__syncthreads", [](const hk_host_runtime *rt) { rt->syncthreads(); });
}

/* Block-wide reductions over a counter that is per block (thread_local):
 * the leading barrier keeps the previous call's reset ahead of this call's
 * increments. */
static thread_local int hk_host_sync_count;
static inline int __syncthreads_count(int pred)
{
    __syncthreads();
    if (pred)
        hk_host_sync_count++;
    __syncthreads();
    int n = hk_host_sync_count;
    __syncthreads();
    if (hk_host_linear_tid() == 0)
        hk_host_sync_count = 0;
    return n;
}
static inline int __syncthreads_and(int pred)
{
    return __syncthreads_count(!pred) == 0;
}
static inline int __syncthreads_or(int pred) { return __syncthreads_count(pred) != 0; }

static inline void __syncwarp(unsigned long long mask = ~0ull)
{
    (void)mask;
    hk_host_switching("__syncwarp", [](const hk_host_runtime *rt) { rt->syncwarp(); });
}

static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static inline unsigned long long __activemask(void)
{
    return hk_host_switching("__activemask",
                             [](const hk_host_runtime *rt) { return rt->activemask(); });
}

static inline unsigned long long __ballot(int pred)
{
    return hk_host_switching("__ballot",
                             [pred](const hk_host_runtime *rt) { return rt->ballot(pred); });
}
static inline int __any(int pred) { return __ballot(pred) != 0; }
/* One exchange instead of two: no live lane passed a zero predicate. */
static inline int __all(int pred) { return __ballot(!pred) == 0; }
static inline unsigned long long __ballot_sync(unsigned long long mask, int pred)
{
    return __ballot(pred) & mask;
}
static inline int __any_sync(unsigned long long mask, int pred)
{
    return (__ballot(pred) & mask) != 0;
}
static inline int __all_sync(unsigned long long mask, int pred)
{
    return (__ballot(!pred) & mask) == 0;
}

static inline uint64_t hk_host_shfl_bits(uint64_t v, int src, const char *what)
{
    return hk_host_switching(what,
                             [v, src](const hk_host_runtime *rt) { return rt->shfl(v, src); });
}

template <typename T>
static inline T hk_host_shfl_as(T v, int src, const char *what)
{
    static_assert(sizeof(T) <= 8, "shuffle of more than 64 bits");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    b = hk_host_shfl_bits(b, src & (HK_HOST_WARP_SIZE - 1), what);
    T r;
    memcpy(&r, &b, sizeof r);
    return r;
}

/* Source lanes as HIP computes them on AMD; a lane whose source falls outside
 * its width-group names itself and gets its own value back. */
static inline int hk_host_shfl_src(int src, int width)
{
    int self = (int)__lane_id();
    return (src & (width - 1)) + (self & ~(width - 1));
}
static inline int hk_host_shfl_up_src(unsigned int delta, int width)
{
    int self = (int)__lane_id();
    int index = self - (int)delta;
    return index < (self & ~(width - 1)) ? self : index;
}
static inline int hk_host_shfl_down_src(unsigned int delta, int width)
{
    int self = (int)__lane_id();
    int index = self + (int)delta;
    return (int)((self & (width - 1)) + delta) >= width ? self : index;
}
static inline int hk_host_shfl_xor_src(int mask, int width)
{
    int self = (int)__lane_id();
    int index = self ^ mask;
    return index >= ((self + width) & ~(width - 1)) ? self : index;
}

#define HK_HOST_SHFL_(T)                                                                  \
    static inline T __shfl(T var, int src, int width = warpSize)                          \
    {                                                                                     \
        return hk_host_shfl_as(var, hk_host_shfl_src(src, width), "__shfl");              \
    }                                                                                     \
    static inline T __shfl_up(T var, unsigned int delta, int width = warpSize)            \
    {                                                                                     \
        return hk_host_shfl_as(var, hk_host_shfl_up_src(delta, width), "__shfl_up");      \
    }                                                                                     \
    static inline T __shfl_down(T var, unsigned int delta, int width = warpSize)          \
    {                                                                                     \
        return hk_host_shfl_as(var, hk_host_shfl_down_src(delta, width), "__shfl_down");  \
    }                                                                                     \
    static inline T __shfl_xor(T var, int mask, int width = warpSize)                     \
    {                                                                                     \
        return hk_host_shfl_as(var, hk_host_shfl_xor_src(mask, width), "__shfl_xor");     \
    }                                                                                     \
    static inline T __shfl_sync(unsigned long long, T var, int src, int width = warpSize)  \
    {                                                                                     \
        return __shfl(var, src, width);                                                   \
    }                                                                                     \
    static inline T __shfl_up_sync(unsigned long long, T var, unsigned int delta,         \
                                   int width = warpSize)                                  \
    {                                                                                     \
        return __shfl_up(var, delta, width);                                              \
    }                                                                                     \
    static inline T __shfl_down_sync(unsigned long long, T var, unsigned int delta,       \
                                     int width = warpSize)                                \
    {                                                                                     \
        return __shfl_down(var, delta, width);                                            \
    }                                                                                     \
    static inline T __shfl_xor_sync(unsigned long long, T var, int mask,                  \
                                    int width = warpSize)                                 \
    {                                                                                     \
        return __shfl_xor(var, mask, width);                                              \
    }

HK_HOST_SHFL_(int)
HK_HOST_SHFL_(unsigned int)
HK_HOST_SHFL_(long)
HK_HOST_SHFL_(unsigned long)
HK_HOST_SHFL_(long long)
HK_HOST_SHFL_(unsigned long long)
HK_HOST_SHFL_(float)
HK_HOST_SHFL_(double)
#undef HK_HOST_SHFL_

/* ------------------------------------------------------------------------ */
/* Atomics: real ones, since blocks run on several OS threads at once. */

#define HK_HOST_MO_ __ATOMIC_SEQ_CST

template <typename T, typename F>
static inline T hk_host_atomic_update(T *p, F f)
{
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T nv;
    do {
        nv = f(old);
    } while (!__atomic_compare_exchange(p, &old, &nv, true, HK_HOST_MO_, __ATOMIC_RELAXED));
    return old;
}

#define HK_HOST_ATOMIC_INT_(T)                                                           \
    static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, HK_HOST_MO_); } \
    static inline T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, HK_HOST_MO_); } \
    static inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, HK_HOST_MO_); } \
    static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, HK_HOST_MO_); }   \
    static inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, HK_HOST_MO_); } \
    static inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, HK_HOST_MO_); } \
    static inline T atomicCAS(T *p, T cmp, T v)                                          \
    {                                                                                    \
        __atomic_compare_exchange_n(p, &cmp, v, false, HK_HOST_MO_, HK_HOST_MO_);        \
        return cmp;                                                                      \
    }                                                                                    \
    static inline T atomicMin(T *p, T v)                                                 \
    {                                                                                    \
        return hk_host_atomic_update(p, [v](T o) { return v < o ? v : o; });             \
    }                                                                                    \
    static inline T atomicMax(T *p, T v)                                                 \
    {                                                                                    \
        return hk_host_atomic_update(p, [v](T o) { return v > o ? v : o; });             \
    }

HK_HOST_ATOMIC_INT_(int)
HK_HOST_ATOMIC_INT_(unsigned int)
HK_HOST_ATOMIC_INT_(unsigned long)
HK_HOST_ATOMIC_INT_(long long)
HK_HOST_ATOMIC_INT_(unsigned long long)
#undef HK_HOST_ATOMIC_INT_

#define HK_HOST_ATOMIC_FP_(T)                                                            \
    static inline T atomicAdd(T *p, T v)                                                 \
    {                                                                                    \
        return hk_host_atomic_update(p, [v](T o) { return o + v; });                     \
    }                                                                                    \
    static inline T atomicSub(T *p, T v)                                                 \
    {                                                                                    \
        return hk_host_atomic_update(p, [v](T o) { return o - v; });                     \
    }                                                                                    \
    static inline T atomicExch(T *p, T v)                                                \
    {                                                                                    \
        T old;                                                                           \
        __atomic_exchange(p, &v, &old, HK_HOST_MO_);                                     \
        return old;                                                                      \
    }                                                                                    \
    static inline T atomicCAS(T *p, T cmp, T v)                                          \
    {                                                                                    \
        __atomic_compare_exchange(p, &cmp, &v, false, HK_HOST_MO_, HK_HOST_MO_);         \
        return cmp;                                                                      \
    }                                                                                    \
    static inline T atomicMin(T *p, T v)                                                 \
    {                                                                                    \
        return hk_host_atomic_update(p, [v](T o) { return v < o ? v : o; });             \
    }                                                                                    \
    static inline T atomicMax(T *p, T v)                                                 \
    {                                                                                    \
        return hk_host_atomic_update(p, [v](T o) { return v > o ? v : o; });             \
    }

HK_HOST_ATOMIC_FP_(float)
HK_HOST_ATOMIC_FP_(double)
#undef HK_HOST_ATOMIC_FP_

/* CUDA's wraparound increment and decrement. */
static inline unsigned int atomicInc(unsigned int *p, unsigned int limit)
{
    return hk_host_atomic_update(p, [limit](unsigned int o) { return o >= limit ? 0u : o + 1; });
}
static inline unsigned int atomicDec(unsigned int *p, unsigned int limit)
{
    return hk_host_atomic_update(
        p, [limit](unsigned int o) { return (o == 0 || o > limit) ? limit : o - 1; });
}

/* Scopes mean nothing here: every atomic is system-wide. */
#define HK_HOST_ATOMIC_SCOPED_(op)                                                      \
    template <typename P, typename... V>                                                \
    static inline auto op##_system(P p, V... v) -> decltype(op(p, v...))               \
    {                                                                                   \
        return op(p, v...);                                                             \
    }                                                                                   \
    template <typename P, typename... V>                                                \
    static inline auto op##_block(P p, V... v) -> decltype(op(p, v...))                \
    {                                                                                   \
        return op(p, v...);                                                             \
    }
HK_HOST_ATOMIC_SCOPED_(atomicAdd)
HK_HOST_ATOMIC_SCOPED_(atomicSub)
HK_HOST_ATOMIC_SCOPED_(atomicExch)
HK_HOST_ATOMIC_SCOPED_(atomicMin)
HK_HOST_ATOMIC_SCOPED_(atomicMax)
HK_HOST_ATOMIC_SCOPED_(atomicCAS)
HK_HOST_ATOMIC_SCOPED_(atomicAnd)
HK_HOST_ATOMIC_SCOPED_(atomicOr)
HK_HOST_ATOMIC_SCOPED_(atomicXor)
HK_HOST_ATOMIC_SCOPED_(atomicInc)
HK_HOST_ATOMIC_SCOPED_(atomicDec)
#undef HK_HOST_ATOMIC_SCOPED_

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
static inline int __mul24(int a, int b)
{
    /* Low 32 bits of the product of the sign-extended low 24 bits. */
    long long x = (long long)(int32_t)((uint32_t)a << 8) >> 8;
    long long y = (long long)(int32_t)((uint32_t)b << 8) >> 8;
    return (int)(uint32_t)(uint64_t)(x * y);
}
static inline unsigned int __umul24(unsigned int a, unsigned int b)
{
    return (a & 0xffffffu) * (b & 0xffffffu);
}
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b)
{
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
__extension__ typedef __int128 hk_host_i128;
__extension__ typedef unsigned __int128 hk_host_u128;
static inline long long __mul64hi(long long a, long long b)
{
    return (long long)(((hk_host_i128)a * b) >> 64);
}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((hk_host_u128)a * b) >> 64);
}
static inline unsigned int __sad(int a, int b, unsigned int c)
{
    return c + (unsigned int)(a > b ? (long long)a - b : (long long)b - a);
}
static inline unsigned int __usad(unsigned int a, unsigned int b, unsigned int c)
{
    return c + (a > b ? a - b : b - a);
}
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }

/* ------------------------------------------------------------------------ */
/* Math */

#define HK_HOST_MINMAX_(T)                                                     \
    static inline constexpr T min(T a, T b) { return b < a ? b : a; }        \
    static inline constexpr T max(T a, T b) { return a < b ? b : a; }
HK_HOST_MINMAX_(int)
HK_HOST_MINMAX_(unsigned int)
HK_HOST_MINMAX_(long)
HK_HOST_MINMAX_(unsigned long)
HK_HOST_MINMAX_(long long)
HK_HOST_MINMAX_(unsigned long long)
#undef HK_HOST_MINMAX_
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
/* glibc declares these names (extern "C", not exported by libm): define
 * them to match that declaration. */
#define HK_HOST_LIBM_FAST_(name, call)                                          \
    extern "C" inline float name(float x) noexcept { return call(x); }
HK_HOST_LIBM_FAST_(__expf, expf)
HK_HOST_LIBM_FAST_(__exp10f, exp10f)
HK_HOST_LIBM_FAST_(__logf, logf)
HK_HOST_LIBM_FAST_(__log2f, log2f)
HK_HOST_LIBM_FAST_(__log10f, log10f)
HK_HOST_LIBM_FAST_(__sinf, sinf)
HK_HOST_LIBM_FAST_(__cosf, cosf)
HK_HOST_LIBM_FAST_(__tanf, tanf)
#undef HK_HOST_LIBM_FAST_
extern "C" inline void __sincosf(float x, float *s, float *c) noexcept
{
    *s = sinf(x);
    *c = cosf(x);
}
extern "C" inline float __powf(float x, float y) noexcept { return powf(x, y); }
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

template <typename To, typename From>
static inline To hk_host_bit_cast(From v)
{
    static_assert(sizeof(To) == sizeof(From), "bit cast between sizes");
    To r;
    memcpy(&r, &v, sizeof r);
    return r;
}
static inline float __int_as_float(int x) { return hk_host_bit_cast<float>(x); }
static inline int __float_as_int(float x) { return hk_host_bit_cast<int>(x); }
static inline float __uint_as_float(unsigned int x) { return hk_host_bit_cast<float>(x); }
static inline unsigned int __float_as_uint(float x) { return hk_host_bit_cast<unsigned int>(x); }
static inline double __longlong_as_double(long long x) { return hk_host_bit_cast<double>(x); }
static inline long long __double_as_longlong(double x) { return hk_host_bit_cast<long long>(x); }
static inline int __double2hiint(double x)
{
    return (int)(hk_host_bit_cast<unsigned long long>(x) >> 32);
}
static inline int __double2loint(double x) { return (int)hk_host_bit_cast<unsigned long long>(x); }
static inline double __hiloint2double(int hi, int lo)
{
    return hk_host_bit_cast<double>(((unsigned long long)(unsigned int)hi << 32) |
                                    (unsigned int)lo);
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

template <typename T>
static inline T __ldg(const T *p)
{
    return *p;
}

static inline long long clock64(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return (long long)__builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
#endif
}
static inline long long wall_clock64(void) { return clock64(); }
static inline long long __clock64(void) { return clock64(); }

/* ------------------------------------------------------------------------ */
/* Binary16 and bfloat16: storage only, arithmetic through float, conversions
 * rounded to nearest even (NaN stays NaN, quiet; overflow gives infinity;
 * subnormals are kept). */

static inline uint64_t hk_host_rne_shr(uint64_t m, int s)
{
    if (s <= 0)
        return m << -s;
    if (s > 64)
        return 0;
    uint64_t r = s == 64 ? 0 : m >> s;
    uint64_t rem = s == 64 ? m : m & ((1ull << s) - 1);
    uint64_t half = 1ull << (s - 1);
    if (rem > half || (rem == half && (r & 1)))
        r++;
    return r;
}

/* Rounds m * 2^e (m != 0) to a binary format with `mb` stored mantissa bits
 * and exponents emin..emax; returns the bits without the sign. */
static inline uint32_t hk_host_round_to(uint64_t m, int e, int mb, int emin, int emax)
{
    int p = 63 - __builtin_clzll(m);
    int E = p + e;
    if (E < emin) /* subnormal, in units of 2^(emin - mb); may round up to the smallest normal */
        return (uint32_t)hk_host_rne_shr(m, (emin - mb) - e);
    uint64_t q = hk_host_rne_shr(m, p - mb);
    if (q >> (mb + 1)) {
        q >>= 1;
        E++;
    }
    if (E > emax)
        return (uint32_t)(2 * emax + 1) << mb;
    return ((uint32_t)(E + emax) << mb) | (uint32_t)(q & ((1ull << mb) - 1));
}

static inline unsigned short hk_host_f2h(float f)
{
    uint32_t u = hk_host_bit_cast<uint32_t>(f);
    unsigned short sign = (unsigned short)((u >> 16) & 0x8000u);
    uint32_t ex = (u >> 23) & 0xffu, mant = u & 0x7fffffu;
    if (ex == 0xff)
        return (unsigned short)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
    if (ex == 0 && mant == 0)
        return sign;
    uint64_t m = ex ? (mant | 0x800000u) : mant;
    int e = ex ? (int)ex - 150 : -149;
    return (unsigned short)(sign | hk_host_round_to(m, e, 10, -14, 15));
}

static inline unsigned short hk_host_d2h(double d)
{
    uint64_t u = hk_host_bit_cast<uint64_t>(d);
    unsigned short sign = (unsigned short)((u >> 48) & 0x8000u);
    uint32_t ex = (uint32_t)(u >> 52) & 0x7ffu;
    uint64_t mant = u & 0xfffffffffffffull;
    if (ex == 0x7ff)
        return (unsigned short)(sign | 0x7c00u | (mant ? 0x200u | (uint32_t)(mant >> 42) : 0u));
    if (ex == 0 && mant == 0)
        return sign;
    uint64_t m = ex ? (mant | (1ull << 52)) : mant;
    int e = ex ? (int)ex - 1075 : -1074;
    return (unsigned short)(sign | hk_host_round_to(m, e, 10, -14, 15));
}

static inline float hk_host_h2f(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t ex = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    uint32_t u;
    if (ex == 0x1f) {
        u = sign | 0x7f800000u | (mant << 13);
    } else if (ex == 0) {
        if (mant == 0) {
            u = sign;
        } else { /* subnormal: normalise */
            int e = 113;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                e--;
            }
            u = sign | ((uint32_t)e << 23) | ((mant & 0x3ffu) << 13);
        }
    } else {
        u = sign | ((ex + 112) << 23) | (mant << 13);
    }
    return hk_host_bit_cast<float>(u);
}

static inline unsigned short hk_host_f2bf(float f)
{
    uint32_t u = hk_host_bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign and payload top, make quiet */
        return (unsigned short)((u >> 16) | 0x40u);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline unsigned short hk_host_d2bf(double d)
{
    uint64_t u = hk_host_bit_cast<uint64_t>(d);
    unsigned short sign = (unsigned short)((u >> 48) & 0x8000u);
    uint32_t ex = (uint32_t)(u >> 52) & 0x7ffu;
    uint64_t mant = u & 0xfffffffffffffull;
    if (ex == 0x7ff)
        return (unsigned short)(sign | 0x7f80u | (mant ? 0x40u | (uint32_t)(mant >> 45) : 0u));
    if (ex == 0 && mant == 0)
        return sign;
    uint64_t m = ex ? (mant | (1ull << 52)) : mant;
    int e = ex ? (int)ex - 1075 : -1074;
    return (unsigned short)(sign | hk_host_round_to(m, e, 7, -126, 127));
}

static inline float hk_host_bf2f(unsigned short b)
{
    return hk_host_bit_cast<float>((uint32_t)b << 16);
}

struct __half_raw {
    unsigned short x;
};
struct __half2_raw {
    unsigned short x, y;
};

struct __half {
    unsigned short __x;
    __half() = default;
    constexpr __half(const __half_raw &r) : __x(r.x) {}
    __half(float f) : __x(hk_host_f2h(f)) {}
    __half(double d) : __x(hk_host_d2h(d)) {}
    template <typename I, std::enable_if_t<std::is_integral<I>::value, int> = 0>
    __half(I i) : __x(hk_host_d2h((double)i))
    {
    }
    operator float() const { return hk_host_h2f(__x); }
    constexpr operator __half_raw() const { return __half_raw{__x}; }
    __half &operator=(const __half_raw &r)
    {
        __x = r.x;
        return *this;
    }
};
typedef __half half;

struct __hip_bfloat16 {
    unsigned short data;
    __hip_bfloat16() = default;
    __hip_bfloat16(float f) : data(hk_host_f2bf(f)) {}
    __hip_bfloat16(double d) : data(hk_host_d2bf(d)) {}
    template <typename I, std::enable_if_t<std::is_integral<I>::value, int> = 0>
    __hip_bfloat16(I i) : data(hk_host_d2bf((double)i))
    {
    }
    operator float() const { return hk_host_bf2f(data); }
};
typedef __hip_bfloat16 hip_bfloat16;

/* Operators of the 16-bit types: both 16-bit gives the 16-bit type (computed
 * in float and rounded, which for + - * / is the correctly rounded result);
 * mixed with a C arithmetic type, the arithmetic happens in float (or wider)
 * and the result is that type, where HIP would call the mix ambiguous. */
#define HK_HOST_F16_OPS_(H)                                                            \
    static inline H operator+(H a, H b) { return H(float(a) + float(b)); }             \
    static inline H operator-(H a, H b) { return H(float(a) - float(b)); }             \
    static inline H operator*(H a, H b) { return H(float(a) * float(b)); }             \
    static inline H operator/(H a, H b) { return H(float(a) / float(b)); }             \
    static inline H operator-(H a)                                                     \
    {                                                                                  \
        H r = a;                                                                       \
        hk_host_f16_bits(r) ^= 0x8000u;                                                \
        return r;                                                                      \
    }                                                                                  \
    static inline H operator+(H a) { return a; }                                       \
    static inline H &operator+=(H &a, H b) { return a = a + b; }                       \
    static inline H &operator-=(H &a, H b) { return a = a - b; }                       \
    static inline H &operator*=(H &a, H b) { return a = a * b; }                       \
    static inline H &operator/=(H &a, H b) { return a = a / b; }                       \
    static inline H &operator++(H &a) { return a = a + H(1.0f); }                      \
    static inline H &operator--(H &a) { return a = a - H(1.0f); }                      \
    static inline H operator++(H &a, int)                                              \
    {                                                                                  \
        H r = a;                                                                       \
        ++a;                                                                           \
        return r;                                                                      \
    }                                                                                  \
    static inline H operator--(H &a, int)                                              \
    {                                                                                  \
        H r = a;                                                                       \
        --a;                                                                           \
        return r;                                                                      \
    }                                                                                  \
    static inline bool operator==(H a, H b) { return float(a) == float(b); }           \
    static inline bool operator!=(H a, H b) { return float(a) != float(b); }           \
    static inline bool operator<(H a, H b) { return float(a) < float(b); }             \
    static inline bool operator<=(H a, H b) { return float(a) <= float(b); }           \
    static inline bool operator>(H a, H b) { return float(a) > float(b); }             \
    static inline bool operator>=(H a, H b) { return float(a) >= float(b); }           \
    HK_HOST_F16_MIXED_(H, +) HK_HOST_F16_MIXED_(H, -) HK_HOST_F16_MIXED_(H, *)         \
    HK_HOST_F16_MIXED_(H, /) HK_HOST_F16_MIXED_(H, ==) HK_HOST_F16_MIXED_(H, !=)       \
    HK_HOST_F16_MIXED_(H, <) HK_HOST_F16_MIXED_(H, <=) HK_HOST_F16_MIXED_(H, >)        \
    HK_HOST_F16_MIXED_(H, >=)

#define HK_HOST_F16_MIXED_(H, op)                                                      \
    template <typename S, hk_host_if_scalar<S> = 0>                                    \
    static inline auto operator op(H a, S b)->decltype(float(a) op b)                  \
    {                                                                                  \
        return float(a) op b;                                                          \
    }                                                                                  \
    template <typename S, hk_host_if_scalar<S> = 0>                                    \
    static inline auto operator op(S a, H b)->decltype(a op float(b))                  \
    {                                                                                  \
        return a op float(b);                                                          \
    }

static inline unsigned short &hk_host_f16_bits(__half &h) { return h.__x; }
static inline unsigned short &hk_host_f16_bits(__hip_bfloat16 &h) { return h.data; }
HK_HOST_F16_OPS_(__half)
HK_HOST_F16_OPS_(__hip_bfloat16)
#undef HK_HOST_F16_OPS_
#undef HK_HOST_F16_MIXED_

struct alignas(4) __half2 {
    __half x, y;
    __half2() = default;
    constexpr __half2(const __half2_raw &r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
    __half2(__half a, __half b) : x(a), y(b) {}
    constexpr operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};
typedef __half2 half2;

struct alignas(4) __hip_bfloat162 {
    __hip_bfloat16 x, y;
    __hip_bfloat162() = default;
    __hip_bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) : x(a), y(b) {}
};

static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return hk_host_h2f(h.__x); }
static inline __half __int2half_rn(int i) { return __half(i); }
static inline int __half2int_rz(__half h) { return (int)__half2float(h); }
static inline int __half2int_rn(__half h) { return (int)nearbyintf(__half2float(h)); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short x) { return __half(__half_raw{x}); }
static inline __half __short_as_half(short x)
{
    return __half(__half_raw{(unsigned short)x});
}

static inline __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }
static inline __hip_bfloat16 __float2bfloat16_rn(float f) { return __hip_bfloat16(f); }
static inline __hip_bfloat16 __double2bfloat16(double d) { return __hip_bfloat16(d); }
static inline float __bfloat162float(__hip_bfloat16 b) { return hk_host_bf2f(b.data); }
static inline unsigned short __bfloat16_as_ushort(__hip_bfloat16 b) { return b.data; }
static inline __hip_bfloat16 __ushort_as_bfloat16(unsigned short x)
{
    __hip_bfloat16 b;
    b.data = x;
    return b;
}

#define HK_HOST_F16_FUNCS_(H)                                                          \
    static inline H __hadd(H a, H b) { return a + b; }                                 \
    static inline H __hsub(H a, H b) { return a - b; }                                 \
    static inline H __hmul(H a, H b) { return a * b; }                                 \
    static inline H __hdiv(H a, H b) { return a / b; }                                 \
    static inline H __hneg(H a) { return -a; }                                         \
    static inline H __habs(H a)                                                        \
    {                                                                                  \
        hk_host_f16_bits(a) &= 0x7fffu;                                                \
        return a;                                                                      \
    }                                                                                  \
    /* Product exact in double; one more rounding to double is harmless at 11 bits. */ \
    static inline H __hfma(H a, H b, H c)                                              \
    {                                                                                  \
        return H((double)float(a) * (double)float(b) + (double)float(c));             \
    }                                                                                  \
    static inline bool __heq(H a, H b) { return a == b; }                              \
    static inline bool __hne(H a, H b) { return a != b; }                              \
    static inline bool __hlt(H a, H b) { return a < b; }                               \
    static inline bool __hle(H a, H b) { return a <= b; }                              \
    static inline bool __hgt(H a, H b) { return a > b; }                               \
    static inline bool __hge(H a, H b) { return a >= b; }                              \
    static inline H __hmax(H a, H b) { return H(fmaxf(float(a), float(b))); }          \
    static inline H __hmin(H a, H b) { return H(fminf(float(a), float(b))); }          \
    static inline bool __hisnan(H a) { return std::isnan(float(a)); }                  \
    static inline int __hisinf(H a)                                                    \
    {                                                                                  \
        float f = float(a);                                                            \
        return std::isinf(f) ? (f < 0 ? -1 : 1) : 0;                                   \
    }
HK_HOST_F16_FUNCS_(__half)
HK_HOST_F16_FUNCS_(__hip_bfloat16)
#undef HK_HOST_F16_FUNCS_

static inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static inline __half2 __half2half2(__half a) { return __half2(a, a); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static inline __half2 __float2half2_rn(float a) { return __half2(__half(a), __half(a)); }
static inline __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
static inline float2 __half22float2(__half2 h) { return float2(float(h.x), float(h.y)); }
static inline float __low2float(__half2 h) { return float(h.x); }
static inline float __high2float(__half2 h) { return float(h.y); }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static inline __half2 __hadd2(__half2 a, __half2 b) { return __half2(a.x + b.x, a.y + b.y); }
static inline __half2 __hsub2(__half2 a, __half2 b) { return __half2(a.x - b.x, a.y - b.y); }
static inline __half2 __hmul2(__half2 a, __half2 b) { return __half2(a.x * b.x, a.y * b.y); }
static inline __half2 __h2div(__half2 a, __half2 b) { return __half2(a.x / b.x, a.y / b.y); }
static inline __half2 __hneg2(__half2 a) { return __half2(-a.x, -a.y); }
static inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
static inline __half2 __hfma2(__half2 a, __half2 b, __half2 c)
{
    return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
static inline __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
static inline __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
static inline __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
static inline __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }
static inline __half2 operator-(__half2 a) { return __hneg2(a); }
static inline __half2 &operator+=(__half2 &a, __half2 b) { return a = a + b; }
static inline __half2 &operator-=(__half2 &a, __half2 b) { return a = a - b; }
static inline __half2 &operator*=(__half2 &a, __half2 b) { return a = a * b; }
static inline __half2 &operator/=(__half2 &a, __half2 b) { return a = a / b; }

static inline __hip_bfloat162 __floats2bfloat162_rn(float a, float b)
{
    return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(b));
}
static inline __hip_bfloat162 __float2bfloat162_rn(float a)
{
    return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(a));
}
static inline float __low2float(__hip_bfloat162 h) { return float(h.x); }
static inline float __high2float(__hip_bfloat162 h) { return float(h.y); }

/* ------------------------------------------------------------------------ */
/* The kernel table the backend appends to every module:
 *
 *   HK_HOST_KERNEL(axpy, 0)
 *   HK_HOST_KERNEL_TABLE_BEGIN
 *   HK_HOST_KERNEL_ENTRY(axpy)
 *   HK_HOST_KERNEL_TABLE_END(1)
 */

/* After the loop: a store the compiler sees makes the loop's own stores to the
 * thread coordinates dead, so it keeps them in registers (and forwards them
 * into the inlined body) instead of tracking their last values. */
static inline void hk_host_loop_done(hk_host_state &s) { s.tid = uint3(0, 0, 0); }

template <typename Fn, Fn K, int Sync>
struct hk_host_kernel_impl;

template <typename... A, void (*K)(A...), int Sync>
struct hk_host_kernel_impl<void (*)(A...), K, Sync> {
    static constexpr uint32_t nparams = sizeof...(A);
    /* One spare element so that a kernel without parameters has arrays too. */
    static constexpr uint32_t sizes[sizeof...(A) + 1] = {(uint32_t)sizeof(A)..., 0};
    static constexpr uint32_t aligns[sizeof...(A) + 1] = {(uint32_t)alignof(A)..., 0};
    static constexpr uint32_t uses_sync = Sync ? 1 : 0;

    /* Offset of parameter i in a C struct of the parameters. */
    static constexpr size_t offset(size_t i)
    {
        size_t off = 0;
        for (size_t j = 0;; j++) {
            off = (off + aligns[j] - 1) / aligns[j] * aligns[j];
            if (j == i)
                return off;
            off += sizes[j];
        }
    }

    template <typename T>
    static T load(const unsigned char *p)
    {
        static_assert(std::is_trivially_copyable<T>::value,
                      "kernel parameters must be trivially copyable");
        T v;
        memcpy(static_cast<void *>(&v), p, sizeof(T));
        return v;
    }

    /* The plain-loop mode: flatten lets the kernel body (and its helpers)
     * be inlined into the loop over the block's threads. */
    __attribute__((flatten)) static void loop(const hk_host_block *b, A... a)
    {
        hk_host_state &s = hk_host_tls;
        const uint32_t dx = b->dim.x, dy = b->dim.y, dz = b->dim.z;
        /* Only tid.x changes in the inner loop; linear and lane are derived
         * when asked for, so the loop stores nothing else. */
        for (uint32_t z = 0; z < dz; z++) {
            s.tid.z = z;
            for (uint32_t y = 0; y < dy; y++) {
                s.tid.y = y;
                for (uint32_t x = 0; x < dx; x++) {
                    s.tid.x = x;
                    K(a...);
                }
            }
        }
        hk_host_loop_done(s);
    }

    struct closure {
        std::tuple<A...> args;
    };

    static void fiber(void *c, const hk_host_thread *t)
    {
        hk_host_state &s = hk_host_tls;
        s.tid = uint3(t->idx.x, t->idx.y, t->idx.z);
        std::apply(K, static_cast<closure *>(c)->args);
    }

    template <size_t... I>
    static void run(const hk_host_runtime *rt, const hk_host_block *b, const unsigned char *ka,
                    std::index_sequence<I...>)
    {
        (void)ka;
        if constexpr (Sync) {
            closure c{std::tuple<A...>(load<A>(ka + offset(I))...)};
            rt->run_fibers(b, &fiber, &c);
        } else {
            (void)rt;
            loop(b, load<A>(ka + offset(I))...);
        }
    }

    static void run_block(const hk_host_runtime *rt, const hk_host_block *b, const void *kernarg)
    {
        hk_host_state &s = hk_host_tls;
        s.rt = rt;
        s.blk = b;
        s.bid = uint3(b->idx.x, b->idx.y, b->idx.z);
        s.bdim = uint3(b->dim.x, b->dim.y, b->dim.z);
        s.gdim = uint3(b->grid.x, b->grid.y, b->grid.z);
        s.loop = !Sync;
        run(rt, b, static_cast<const unsigned char *>(kernarg),
            std::index_sequence_for<A...>{});
    }
};

extern "C" {
__attribute__((visibility("default"))) extern const uint32_t hk_host_module_abi;
__attribute__((visibility("default"))) extern const uint32_t hk_host_kernel_count;
__attribute__((visibility("default"))) extern const hk_host_kernel_desc hk_host_kernels[];
}

#define HK_HOST_KERNEL(name, sync)                                                       \
    typedef hk_host_kernel_impl<decltype(&name), &name, (sync)> hk_host_kernel_##name;

#define HK_HOST_KERNEL_TABLE_BEGIN extern "C" const hk_host_kernel_desc hk_host_kernels[] = {

#define HK_HOST_KERNEL_ENTRY(name)                                                       \
    {#name,                                                                              \
     &hk_host_kernel_##name::run_block,                                                  \
     hk_host_kernel_##name::nparams,                                                     \
     hk_host_kernel_##name::sizes,                                                       \
     hk_host_kernel_##name::aligns,                                                      \
     hk_host_kernel_##name::uses_sync},

#define HK_HOST_KERNEL_TABLE_END(n)                                                      \
    {nullptr, nullptr, 0, nullptr, nullptr, 0}                                           \
    }                                                                                    \
    ;                                                                                    \
    static_assert(sizeof(hk_host_kernels) / sizeof(hk_host_kernels[0]) == (n) + 1,       \
                  "kernel table length");                                                \
    extern "C" const uint32_t hk_host_kernel_count = (n);                                \
    extern "C" const uint32_t hk_host_module_abi = HK_HOST_ABI_VERSION;

#endif
