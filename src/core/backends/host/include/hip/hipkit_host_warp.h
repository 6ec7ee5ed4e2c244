/* Barriers, block reductions, warp votes and shuffles as the fibers run
 * them (loop mode's versions: hipkit_host_loops.h). Included by
 * hipkit_host_device.h. */
#ifndef __HK_HOST_WARP_H
#define __HK_HOST_WARP_H

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
static inline auto __hk_shfl_as(_Hk_T __v, int __src, const char *__what)
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
/* kept for the 16-bit float types, which hipkit_host_f16.h declares later */

#endif
