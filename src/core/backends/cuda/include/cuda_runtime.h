/* CUDA's <cuda_runtime.h> under NVRTC, which has the device runtime built
 * in but cannot parse the toolkit's header (it is for the host compiler):
 * nothing more is needed. nvcc (`hipkit compile`) gets the toolkit's. */
#ifndef __HK_CUDA_RUNTIME_H
#define __HK_CUDA_RUNTIME_H
#ifndef __CUDACC_RTC__
#include_next <cuda_runtime.h>
#endif
#endif
