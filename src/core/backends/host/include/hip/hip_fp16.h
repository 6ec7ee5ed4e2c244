/* __half and __half2 for hipkit's CPU backend (defined in hipkit_host_device.h). */
#ifndef __HK_HIP_FP16_H
#define __HK_HIP_FP16_H

#include "hipkit_host_device.h"

#endif
