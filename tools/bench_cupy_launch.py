#!/usr/bin/env python3
"""CuPy RawKernel launching the same 5-argument empty kernel that
scripts-lua/bench/launch.lua and bench-cuda launch: the peer figure for
docs/RESULTS.md. Run on the GPU machine (CuPy is installed there)."""
import time

import cupy as cp

SRC = r'''
extern "C" __global__ void k5(float *a, const float *b, float s, int n, unsigned flags) {
    (void)a; (void)b; (void)s; (void)n; (void)flags;
}
'''


def main():
    k = cp.RawKernel(SRC, 'k5')
    a = cp.zeros(16, dtype=cp.float32)
    b = cp.zeros(16, dtype=cp.float32)
    args = (a, b, cp.float32(1.5), cp.int32(16), cp.uint32(3))
    for _ in range(1000):
        k((1,), (1,), args)
    cp.cuda.Device().synchronize()
    n, rounds = 50000, 7
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            k((1,), (1,), args)
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - t0) / n * 1e6)
    times.sort()
    print(f"cupy RawKernel: {times[rounds // 2]:.3f} us per launch (5 arguments, {n} launches x {rounds} rounds), "
          f"cupy {cp.__version__}")
    # The CPU's side alone, as scripts-lua/bench/launch.lua measures it:
    # batches the GPU queue holds, the clock stopped before each drain.
    batch, per = 256, []
    for _ in range(400):
        t0 = time.perf_counter()
        for _ in range(batch):
            k((1,), (1,), args)
        per.append((time.perf_counter() - t0) / batch * 1e6)
        cp.cuda.Device().synchronize()
    per.sort()
    print(f"cupy RawKernel (host side): {per[len(per) // 2]:.3f} us per launch, median of {len(per)} batches of {batch}")


main()
