/* Atomics of hipkit's CPU backend. Included by hipkit_host_device.h. */
#ifndef __HK_HOST_ATOMICS_H
#define __HK_HOST_ATOMICS_H

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
static inline auto __hk_atomic_update(_Hk_T *__p, _Hk_F __f)
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

/* CUDA's 16-bit compare-and-swap (sm_70 and later), which CUDA sources
 * use to update a half in place. */
static inline unsigned short atomicCAS(unsigned short *__p, unsigned short __cmp, unsigned short __v)
{
    __atomic_compare_exchange_n(__p, &__cmp, __v, false, __HK_MO_, __HK_MO_);
    return __cmp;
}

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

#endif
