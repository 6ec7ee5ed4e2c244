/* A test-only stand-in for the CPU backend's runtime: blocks on a few
 * std::threads, fibers on ucontext, a warp exchange and a block barrier. It
 * exists to check hip_runtime.h end to end while the real host_exec.c is
 * written; it is not fast and not meant to be. */
#ifndef HK_TEST_RUNTIME_H
#define HK_TEST_RUNTIME_H

#include <string>

#include "hip/hipkit_host_abi.h"

struct test_dim {
    uint32_t x, y, z;
};

/* Runs every block of the grid on `os_threads` threads. Returns "" or the
 * message a failing block gave rt->fail. Device printf output is appended
 * to *printed when it is not NULL. */
std::string test_launch(const hk_host_kernel_desc *k, test_dim grid, test_dim block,
                        const void *kernarg, size_t dynamic_shared, int os_threads,
                        std::string *printed);

#endif
