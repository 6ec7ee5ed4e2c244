/* Helpers shared by the C tests: a context on the host backend, random data,
 * poisoned outputs, and compile-and-get-kernel in one call. */
#ifndef HK_TESTUTIL_H
#define HK_TESTUTIL_H

#include <hipkit/hipkit.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

/* xorshift64*: fast, seedable, the same sequence everywhere. */
static uint64_t tu_state = 88172645463325252ull;
static inline uint64_t tu_next(void)
{
    tu_state ^= tu_state >> 12;
    tu_state ^= tu_state << 25;
    tu_state ^= tu_state >> 27;
    return tu_state * 2685821657736338717ull;
}
/* Seeds from HK_TEST_SEED or the clock, and says which so a failure can be
 * replayed. */
static inline void tu_seed(void)
{
    const char *env = getenv("HK_TEST_SEED");
    uint64_t s = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    tu_state = s ? s : 1;
    tap_diag("seed %llu (set HK_TEST_SEED to replay)", (unsigned long long)s);
}
static inline float tu_uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)((tu_next() >> 40) * (1.0 / 16777216.0));
}

/* Does a C++ compiler exist for the host backend? (Other backends bring
 * their own compiler.) */
static inline int tu_have_cxx(void)
{
    const char *b = getenv("HIPKIT_TEST_BACKEND");
    if (b && *b && strcmp(b, "host"))
        return 1;
    const char *cxx = getenv("HIPKIT_CXX");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", cxx && *cxx ? cxx : "c++");
    return system(cmd) == 0;
}

/* The backend under test: host, unless HIPKIT_TEST_BACKEND names another
 * (tests/gpu/run.sh runs the same tests on a GPU that way). */
static inline const char *tu_backend(void)
{
    const char *b = getenv("HIPKIT_TEST_BACKEND");
    return b && *b ? b : "host";
}

static inline int tu_on_host(void) { return strcmp(tu_backend(), "host") == 0; }

/* Is there a C++ compiler for the host backend, whatever is under test? */
static inline int tu_have_host_cxx(void)
{
    const char *cxx = getenv("HIPKIT_CXX");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", cxx && *cxx ? cxx : "c++");
    return system(cmd) == 0;
}

static inline hk_context *tu_context(void)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = tu_backend();
    hk_context *ctx = NULL;
    if (hk_context_create(&o, &ctx) != 0) {
        printf("Bail out! cannot create a host context: %s\n", hk_errmsg(NULL));
        exit(1);
    }
    return ctx;
}

static inline hk_kernel *tu_kernel(hk_context *ctx, hk_module **m, const char *src, const char *name)
{
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = name;
    hk_kernel *k = NULL;
    int r = hk_module_compile(ctx, src, &o, m);
    if (r == 0)
        r = hk_module_kernel(*m, name, &k);
    if (r != 0)
        tap_diag("compiling %s: %s: %s", name, hk_strerror(r), hk_errmsg(ctx));
    return k;
}

static inline hk_launch_config tu_cfg(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                                      uint32_t bz, size_t shared)
{
    hk_launch_config c = {{gx, gy, gz}, {bx, by, bz}, shared, 0, 0};
    return c;
}

#endif
