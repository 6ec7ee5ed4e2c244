"""Timing shared by the PyTorch peer benchmarks (tools/bench_torch_*.py):
CUDA events around one call, median of 20 after 3 warm-up runs."""
import torch


def bench(fn, nbytes):
    """(median milliseconds, GB/s) of fn moving nbytes."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    times.sort()
    return times[10], nbytes / (times[10] * 1e-3) / 1e9
