/* CUDA's <cuda_runtime.h> on hipkit's AMD backend (hiprtc 5 and `hipkit compile`): a .cu kernel source runs
 * unchanged, its CUDA names mapping onto hipkit's HIP ones as hipify maps
 * them (the device language is the same; __CUDA_ARCH__ stays undefined, as
 * HIP leaves it). */
#ifndef __HK_CUDA_RUNTIME_H
#define __HK_CUDA_RUNTIME_H
#include <hip/hip_runtime.h>
#endif
