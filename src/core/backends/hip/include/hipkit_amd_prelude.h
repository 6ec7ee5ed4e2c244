/* The header every AMD compile of hipkit starts with (-include, in hiprtc
 * and hipcc alike). A CUDA source sees CUDA's device functions without
 * including anything, and a HIP source compiled by hipcc sees
 * hip_runtime.h's; this gives both, on every ROCm: hip_runtime.h (hipkit's
 * additions where ROCm is older than 6), CUDA's SIMD-in-a-word and
 * dp4a intrinsics (shared with the CPU backend), __trap and the 16-bit
 * atomicCAS. */
#ifndef __HK_AMD_PRELUDE_H
#define __HK_AMD_PRELUDE_H
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#if __has_include(<assert.h>)
#include <assert.h> /* CUDA sources call assert without including it */
#endif
#include "hip/hipkit_simd.h"

/* CUDA's __trap(): end the kernel with an error. A template with nothing
 * to deduce, so that a ROCm's or a source's own __trap() (a plain
 * function) is the better match and wins, with no clash. */
template <typename _T = void>
static __device__ inline void __trap(void) { __builtin_trap(); }

/* CUDA's 16-bit compare-and-swap (sm_70 and later), which CUDA sources use
 * to update a half in place: a 32-bit compare-and-swap on the word that
 * holds it, retried while the other half of the word changes. */
static __device__ inline unsigned short __hk_atomic_cas16(unsigned short *__p, unsigned short __cmp,
                                                          unsigned short __v)
{
    unsigned int *__w = (unsigned int *)((unsigned long long)__p & ~3ull);
    const unsigned int __sh = ((unsigned long long)__p & 2u) * 8u;
    unsigned int __old = *(volatile unsigned int *)__w;
    for (;;) {
        const unsigned short __cur = (unsigned short)(__old >> __sh);
        if (__cur != __cmp)
            return __cur;
        const unsigned int __want = (__old & ~(0xffffu << __sh)) | ((unsigned int)__v << __sh);
        const unsigned int __seen = atomicCAS(__w, __old, __want);
        if (__seen == __old)
            return __cmp;
        __old = __seen;
    }
}

/* The CUDA atomics below match one type only (hip/hipkit_amd_pick.h). */
#include <hip/hipkit_amd_pick.h>

template <typename _T>
static __device__ inline typename __hk_if_same<_T, unsigned short>::type
atomicCAS(_T *__p, typename __hk_id<_T>::type __cmp, typename __hk_id<_T>::type __v)
{
    return __hk_atomic_cas16(__p, __cmp, __v);
}

/* atomicAdd on a half or a bfloat16 in place (CUDA: sm_70 / sm_80), by
 * the 16-bit compare-and-swap: the sum rounded once from float. */
template <typename _T> struct __hk_half_like {};
template <> struct __hk_half_like<__half> { typedef __half type; };
template <> struct __hk_half_like<__hip_bfloat16> { typedef __hip_bfloat16 type; };
template <typename _T>
static __device__ inline typename __hk_half_like<_T>::type atomicAdd(_T *__p, typename __hk_id<_T>::type __v)
{
    unsigned short *__u = (unsigned short *)__p;
    unsigned short __old = *(volatile unsigned short *)__u;
    for (;;) {
        _T __cur, __next;
        __builtin_memcpy(&__cur, &__old, 2);
        __next = _T((float)__cur + (float)__v);
        unsigned short __want;
        __builtin_memcpy(&__want, &__next, 2);
        const unsigned short __seen = __hk_atomic_cas16(__u, __old, __want);
        if (__seen == __old)
            return __cur;
        __old = __seen;
    }
}

/* Shuffles of a half or a bfloat16 give the same type back, as CUDA's
 * overloads do (HIP's would convert it to float, or be ambiguous): the 16
 * bits travel in an int. The _sync forms call these. */
#define HKC_SHFL16(NAME, ARG)                                                                   \
    template <typename _T>                                                                  \
    static __device__ inline typename __hk_half_like<_T>::type NAME(_T __v, ARG __a, int __w = warpSize) \
    {                                                                                       \
        unsigned short __b;                                                                 \
        __builtin_memcpy(&__b, &__v, 2);                                                    \
        const unsigned short __r = (unsigned short)NAME((int)__b, __a, __w);                \
        _T __out;                                                                           \
        __builtin_memcpy(&__out, &__r, 2);                                                  \
        return __out;                                                                       \
    }
HKC_SHFL16(__shfl, int)
HKC_SHFL16(__shfl_xor, int)
HKC_SHFL16(__shfl_up, unsigned int)
HKC_SHFL16(__shfl_down, unsigned int)
#undef HKC_SHFL16

/* Signed 64-bit min and max (CUDA has them; ROCm 5 only the unsigned
 * ones): a compare-and-swap loop on the 64-bit word. */
template <typename _T>
static __device__ inline _T __hk_atomic_pick64(_T *__p, _T __v, bool __max)
{
    unsigned long long *__w = (unsigned long long *)__p;
    unsigned long long __old = *(volatile unsigned long long *)__w;
    for (;;) {
        const _T __cur = (_T)__old;
        if (__max ? !(__v > __cur) : !(__v < __cur))
            return __cur;
        const unsigned long long __seen = atomicCAS(__w, __old, (unsigned long long)__v);
        if (__seen == __old)
            return __cur;
        __old = __seen;
    }
}
template <typename _T>
static __device__ inline typename __hk_if_same<_T, long long>::type atomicMax(_T *__p, typename __hk_id<_T>::type __v)
{
    return __hk_atomic_pick64(__p, __v, true);
}
template <typename _T>
static __device__ inline typename __hk_if_same<_T, long long>::type atomicMin(_T *__p, typename __hk_id<_T>::type __v)
{
    return __hk_atomic_pick64(__p, __v, false);
}
#endif
