/* HIP device language for hipkit's CPU backend.
 *
 * A kernel source compiled by the CPU backend includes this header (the
 * backend also puts it first in the translation unit, as hiprtc does). It maps
 * HIP's device language onto C++17: blocks run on OS threads of the runtime's
 * pool, a block's threads either as a plain loop (kernels that never reach a
 * barrier or a warp operation) or as fibers. The implementation lives in
 * hipkit_host_device.h; the contract with the runtime in hipkit_host_abi.h. */
#ifndef __HK_HIP_RUNTIME_H
#define __HK_HIP_RUNTIME_H

#include "hipkit_host_device.h"

#endif
