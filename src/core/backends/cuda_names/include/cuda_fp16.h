/* CUDA's <cuda_fp16.h> on hipkit's CPU and AMD backends: HIP's __half and __half2,
 * which carry CUDA's names and intrinsics. */
#ifndef __HK_CUDA_FP16_H
#define __HK_CUDA_FP16_H
#include "hip/hip_fp16.h"
#endif
