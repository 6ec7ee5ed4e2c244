/* hipkit's <stdlib.h> for NVRTC and hiprtc 5 (see <stdint.h>): what device
 * code has of it. Both compilers declare malloc, free and the integer abs
 * functions; NVRTC has no abort, which traps here as HIP's does. */
#if !defined(__CUDACC_RTC__) && !defined(__HIPCC_RTC__)
#include_next <stdlib.h>
#else
#ifndef __HK_RTC_STDLIB_H
#define __HK_RTC_STDLIB_H
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
/* hip/hip_runtime.h defines the same abort under the same guard. */
#if defined(__CUDACC_RTC__) && !defined(__HK_RTC_ABORT)
#define __HK_RTC_ABORT 1
static __device__ __forceinline__ void abort(void) { __trap(); }
#endif
#endif
#endif
