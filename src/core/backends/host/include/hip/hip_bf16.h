/* __hip_bfloat16 for hipkit's CPU backend (defined in hipkit_host_device.h). */
#ifndef HIPKIT_HIP_BF16_H
#define HIPKIT_HIP_BF16_H

#include "hipkit_host_device.h"

#endif
