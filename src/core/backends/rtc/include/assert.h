/* hipkit's <assert.h> for hiprtc 5 (NVRTC has assert built in): assert on
 * the runtime header's device __assert_fail, which prints the expression and
 * traps. No include guard: as in C, NDEBUG is read at each inclusion. */
#if !defined(__CUDACC_RTC__) && !defined(__HIPCC_RTC__)
#include_next <assert.h>
#else
#undef assert
#ifdef NDEBUG
#define assert(__e) ((void)0)
#else
#define assert(__e) ((__e) ? (void)0 : __assert_fail(#__e, __FILE__, __LINE__, __func__))
#endif
#endif
