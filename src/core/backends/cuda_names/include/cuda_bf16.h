/* CUDA's <cuda_bf16.h> on hipkit's CPU and AMD backends: __nv_bfloat16 is HIP's
 * __hip_bfloat16 (the conversions have the same names in both). */
#ifndef __HK_CUDA_BF16_H
#define __HK_CUDA_BF16_H
#include "hip/hip_bf16.h"
typedef __hip_bfloat16 __nv_bfloat16;
typedef __hip_bfloat162 __nv_bfloat162;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
#endif
