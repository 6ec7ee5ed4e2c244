/* cuda-stream-floor: what one raw cuLaunchKernel of an empty 5-argument
 * kernel costs the calling thread, per stream kind (legacy NULL, per-thread,
 * a non-blocking and a blocking created stream): host side over batches of
 * 256 (the clock stopped before each drain) and wall time over 100000.
 * The floor under every launch figure in docs/RESULTS.md. */
#include <cuda.h>
#include <stdio.h>

#include "bench_util.h"

static const char *ptx = ".version 7.0\n.target sm_80\n.address_size 64\n"
                         ".visible .entry k5(.param .u64 a, .param .u64 b, .param .f32 s,"
                         " .param .u32 n, .param .u32 f) { ret; }\n";

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, ptx) || cuModuleGetFunction(&fn, mod, "k5")) {
        fprintf(stderr, "cuda-stream-floor: no usable CUDA device\n");
        return 1;
    }
    CUdeviceptr a, b;
    cuMemAlloc(&a, 64);
    cuMemAlloc(&b, 64);
    float s = 1.5f;
    unsigned n = 16, flags = 3;
    void *params[] = {&a, &b, &s, &n, &flags};
    CUstream nonblocking, blocking;
    cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&blocking, 0);
    CUstream streams[] = {NULL, CU_STREAM_PER_THREAD, nonblocking, blocking};
    const char *names[] = {"legacy NULL", "per-thread", "non-blocking", "blocking created"};
    enum { BATCH = 256, ROUNDS = 300, WALL = 100000 };
    for (int rep = 0; rep < 3; rep++)
        for (int si = 0; si < 4; si++) {
            CUstream st = streams[si];
            for (int i = 0; i < 2000; i++)
                cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, params, NULL);
            cuCtxSynchronize();
            double per[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                double t0 = now_us();
                for (int i = 0; i < BATCH; i++)
                    cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, params, NULL);
                per[r] = (now_us() - t0) / BATCH;
                cuCtxSynchronize();
            }
            double t0 = now_us();
            for (int i = 0; i < WALL; i++)
                cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, params, NULL);
            cuCtxSynchronize();
            printf("%-17s host side %.3f us, wall %.3f us\n", names[si], median(per, ROUNDS),
                   (now_us() - t0) / WALL);
        }
    return 0;
}
