/* Loop mode's block runner (host_loops*.c writes the loop versions).
 * Included by hipkit_host_device.h after hipkit_host_runners.h. */
#ifndef __HK_HOST_LOOPS_H
#define __HK_HOST_LOOPS_H

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
        __hk_state &__s = __hk_enter_block(__rt, __b, 1);
        __run(static_cast<const unsigned char *>(__kernarg), std::index_sequence_for<_Hk_A...>{});
        __hk_loop_done(__s);
    }
};

/* A kernel split at its barriers whose fibers copy the module does not
 * carry (host_loops.c: the kernel is `inline` and nothing else calls it,
 * so the compiler emits no code for it): its table entry runs the loop
 * version itself. The copy, when a fault must be found again on fibers or
 * HIPKIT_HOST_MODE=fibers loads the module, is a second module built from
 * hk_host_fibers_unit (host_module.c); a runtime without loop mode has
 * nothing to run it with. */
template <typename _Hk_Fn, _Hk_Fn _Hk_L>
struct __hk_split_impl;

template <typename... _Hk_A, void (*_Hk_L)(_Hk_A...)>
struct __hk_split_impl<void (*)(_Hk_A...), _Hk_L> {
    typedef __hk_kernel_impl<void (*)(_Hk_A...), _Hk_L, 1> __base;
    static constexpr uint32_t nparams = __base::nparams;
    static constexpr const uint32_t *__sizes = __base::__sizes;
    static constexpr const uint32_t *__aligns = __base::__aligns;
    static constexpr uint32_t uses_sync = 1;

    template <size_t... _Hk_I>
    __attribute__((flatten)) static void __run(const unsigned char *__ka, std::index_sequence<_Hk_I...>)
    {
        (void)__ka;
        _Hk_L(__base::template __load<_Hk_A>(__ka + __base::__offset(_Hk_I))...);
    }

    static void run_block(const hk_host_runtime *__rt, const hk_host_block *__b, const void *__kernarg)
    {
        if (__rt->size < offsetof(hk_host_runtime, loop_poll) + sizeof(void *) || !__rt->loop_poll)
            __rt->fail("this kernel was built as loops only (its fibers copy is a module of its own), "
                       "and this runtime has no loop mode");
        __hk_state &__s = __hk_enter_block(__rt, __b, 1);
        __run(static_cast<const unsigned char *>(__kernarg), std::index_sequence_for<_Hk_A...>{});
        __hk_loop_done(__s);
    }
};

#define HK_HOST_KERNEL_SPLIT(name)                                                       \
    typedef __hk_split_impl<decltype(&name), &__hk_loops_##name> __hk_kernel_##name;

/* The module as it is without loop versions, the split kernels' fibers
 * copies included, and the user's flags (each ends with a 0, the list with
 * an empty one): what host_module.c compiles when it needs those copies. */
#define HK_HOST_FIBERS_UNIT(text, flags)                                                 \
    extern "C" __attribute__((visibility("default"))) const char hk_host_fibers_unit[] = text; \
    extern "C" __attribute__((visibility("default"))) const char hk_host_fibers_flags[] = flags;

#define HK_HOST_LOOPS(name)                                                              \
    typedef __hk_loops_impl<decltype(&name), &name, &__hk_loops_##name> __hk_loops_run_##name;
#define HK_HOST_MODES_BEGIN                                                              \
    extern "C" __attribute__((visibility("default")))                                    \
    const hk_host_kernel_mode hk_host_kernel_modes[] = {
#define HK_HOST_MODE_LOOPS(name) {&__hk_loops_run_##name::run_block, ""},
#define HK_HOST_MODE_SPLIT(name) {&__hk_kernel_##name::run_block, ""},
#define HK_HOST_MODE_FIBERS(why) {nullptr, why},
#define HK_HOST_MODES_END {nullptr, nullptr}};

#endif
