/* __half and __half2 for hipkit's CPU backend (defined in hipkit_host_device.h). */
#ifndef HIPKIT_HIP_FP16_H
#define HIPKIT_HIP_FP16_H

#include "hipkit_host_device.h"

#endif
