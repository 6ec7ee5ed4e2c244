/* CUDA's <cuda_runtime.h> on hipkit's CPU and AMD backends: a .cu kernel
 * source runs unchanged, its CUDA names mapping onto HIP's as hipify maps
 * them (the device language is the same; __CUDA_ARCH__ stays undefined, as
 * HIP leaves it). */
#ifndef __HK_CUDA_RUNTIME_H
#define __HK_CUDA_RUNTIME_H
#include "hip/hip_runtime.h"
#endif
