/* CUDA's <cuda.h> (the driver API) in a kernel source, on hipkit's CPU and
 * AMD backends: device code gets the device language, as hipify maps the
 * header to hip_runtime.h. CUDA_VERSION stays undefined, so a source's
 * `#if CUDA_VERSION >= ...` blocks, which assume NVIDIA's toolkit, are left
 * out (as HIP leaves __CUDA_ARCH__ undefined). */
#ifndef __HK_CUDA_H
#define __HK_CUDA_H
#include "hip/hip_runtime.h"
#endif
