/* __hip_bfloat16 for hipkit's CPU backend (defined in hipkit_host_device.h). */
#ifndef __HK_HIP_BF16_H
#define __HK_HIP_BF16_H

#include "hipkit_host_device.h"

#endif
