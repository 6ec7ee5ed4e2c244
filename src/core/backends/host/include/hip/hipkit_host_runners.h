/* How a block runs: the kernel table the backend appends to every module,
 * a kernel's block as a plain loop or on fibers, and the tables the
 * runtime reads. Included by hipkit_host_device.h. */
#ifndef __HK_HOST_RUNNERS_H
#define __HK_HOST_RUNNERS_H

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
static inline void __hk_loop_done(__hk_state &__s) { __s.__tid = make_uint3(0, 0, 0); }

/* A block's start, in every mode: its coordinates and the runtime where
 * the kernel's code reads them. __loop: the threads run as loops, so a
 * barrier or warp operation reached (one the split missed, or any in a
 * kernel without them) fails the launch. */
static inline __hk_state &__hk_enter_block(const hk_host_runtime *__rt, const hk_host_block *__b, int __loop)
{
    __hk_state &__s = __hk_tls;
    __s.__rt = __rt;
    __s.__blk = __b;
    __s.__bid = make_uint3(__b->idx.x, __b->idx.y, __b->idx.z);
    __s.__bdim = make_uint3(__b->dim.x, __b->dim.y, __b->dim.z);
    __s.__gdim = make_uint3(__b->grid.x, __b->grid.y, __b->grid.z);
    __s.__loop = __loop;
    return __s;
}

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

    /* A fiber loads its parameters from the launch's argument bytes, which
     * outlive the block's run: no tuple of them to build (std::tuple and
     * std::apply cost every module's compile more than its kernels did). */
    template <size_t... _Hk_I>
    static void __call(const unsigned char *__ka, std::index_sequence<_Hk_I...>)
    {
        (void)__ka;
        _Hk_K(__load<_Hk_A>(__ka + __offset(_Hk_I))...);
    }

    static void __fiber(void *__c, const hk_host_thread *__t)
    {
        __hk_state &__s = __hk_tls;
        __s.__tid = make_uint3(__t->idx.x, __t->idx.y, __t->idx.z);
        __call(static_cast<const unsigned char *>(__c), std::index_sequence_for<_Hk_A...>{});
    }

    template <size_t... _Hk_I>
    static void __run(const hk_host_runtime *__rt, const hk_host_block *__b, const unsigned char *__ka,
                    std::index_sequence<_Hk_I...>)
    {
        (void)__ka;
        if constexpr (_Hk_Sync) {
            __rt->run_fibers(__b, &__fiber, const_cast<unsigned char *>(__ka));
        } else {
            (void)__rt;
            __loop(__b, __load<_Hk_A>(__ka + __offset(_Hk_I))...);
        }
    }

    static void run_block(const hk_host_runtime *__rt, const hk_host_block *__b, const void *__kernarg)
    {
        __hk_enter_block(__rt, __b, !_Hk_Sync);
        __run(__rt, __b, static_cast<const unsigned char *>(__kernarg),
            std::index_sequence_for<_Hk_A...>{});
    }
};


extern "C" {
__attribute__((visibility("default"))) extern const uint32_t hk_host_module_abi;
__attribute__((visibility("default"))) extern const uint32_t hk_host_kernel_count;
__attribute__((visibility("default"))) extern const hk_host_kernel_desc hk_host_kernels[];
__attribute__((visibility("default"))) extern const hk_host_global_desc hk_host_globals[];
__attribute__((visibility("default"))) extern const hk_host_kernel_mode hk_host_kernel_modes[];
__attribute__((visibility("default"))) extern const uint32_t hk_host_kernel_max_threads[];
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

/* Each kernel's __launch_bounds__ maximum, in the table's order (0: none). */
#define HK_HOST_KERNEL_BOUNDS_BEGIN extern "C" const uint32_t hk_host_kernel_max_threads[] = {
#define HK_HOST_KERNEL_BOUNDS_END 0u};

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
