/* hipkit's <stddef.h> for NVRTC and hiprtc 5 (see <stdint.h>). */
#if !defined(__CUDACC_RTC__) && !defined(__HIPCC_RTC__)
#include_next <stddef.h> /* unguarded: a second include (__need_ macros) is the system header's to answer */
#else
#ifndef __HK_RTC_STDDEF_H
#define __HK_RTC_STDDEF_H
/* The compilers know size_t (sizeof's type) but not ptrdiff_t. */
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;
typedef struct {
    alignas(16) unsigned char __hk_bytes[16]; /* as x86-64 aligns it */
} max_align_t;
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#ifdef __HIPCC_RTC__
#define offsetof(__hk_t, __hk_m) __builtin_offsetof(__hk_t, __hk_m)
#else /* NVRTC has no __builtin_offsetof: the classic form, not a constant */
#define offsetof(__hk_t, __hk_m) \
    ((size_t)&reinterpret_cast<const volatile char &>((((__hk_t *)0)->__hk_m)))
#endif
#endif
#endif
#endif
