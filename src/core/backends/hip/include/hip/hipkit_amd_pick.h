/* Functions hipkit adds to HIP that some ROCm may already have (ROCm 5.7's
 * hiprtc has __hmax, ROCm 5.2 has not): each is a template that matches
 * exactly one type, so that a ROCm's own non-template function is the
 * better match and wins, with no clash and no ambiguity. */
#ifndef __HK_AMD_PICK_H
#define __HK_AMD_PICK_H
template <typename _T, typename _W, typename _R = _T> struct __hk_if_same {};
template <typename _T, typename _R> struct __hk_if_same<_T, _T, _R> { typedef _R type; };
/* _T where it must not be deduced: the other arguments convert, as they
 * do for CUDA's plain functions (atomicCAS(p16, 0, 1)). */
template <typename _T> struct __hk_id { typedef _T type; };
#endif
