#!/usr/bin/env python3
"""PyTorch on the ops scripts-lua/bench/sort.lua measures, same sizes, data
ranges and byte counts: a device copy; torch.argsort(dim=-1) of each row of
a rows x cols f32 matrix (the default, and stable=True; ascending and
descending; i64 indices); torch.topk(k=16) per row; torch.sort of 2^24 and
2^28 u32 (int32 where this torch cannot sort uint32 on the GPU) and f32
keys (values and i64 indices). CUDA events, median of 20 after 3 warm-up
runs (tools/torch_timing.py).
Usage: bench_torch_sort.py [rows cols [log2 sizes...]]"""
import sys

import torch

from torch_timing import bench

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
cols = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
sizes = [int(a) for a in sys.argv[3:]] or [24, 28]
n = rows * cols
k = 16
torch.manual_seed(1)


def line(name, ms, gbps, copy):
    print(f"  {name:<28} {ms:9.3f} ms {gbps:8.0f} GB/s  {gbps / copy:.2f}x copy")


print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
x = torch.rand((rows, cols), device='cuda') * 8 - 4
y = torch.empty_like(x)
idx = torch.empty((rows, cols), device='cuda', dtype=torch.int64)
print(f"rows {rows} x {cols} f32")
cms, copy = bench(lambda: y.copy_(x), 8 * n)
line('copy', cms, copy, copy)
line('argsort -> i64', *bench(lambda: torch.argsort(x, dim=-1), 12 * n), copy)
line('argsort descending -> i64', *bench(lambda: torch.argsort(x, dim=-1, descending=True), 12 * n), copy)
line('argsort stable -> i64', *bench(lambda: torch.argsort(x, dim=-1, stable=True), 12 * n), copy)
line(f'topk k={k} -> f32, i64', *bench(lambda: torch.topk(x, k, dim=-1), 4 * n + 12 * rows * k), copy)
del x, y, idx
torch.cuda.empty_cache()

for lg in sizes:
    m = 1 << lg
    for name in ('u32', 'f32'):
        if name == 'u32':
            src = torch.randint(0, 2 ** 32, (m,), device='cuda', dtype=torch.int64).to(torch.uint32)
            try:
                torch.sort(src[:16])
            except RuntimeError:
                name = 'u32 as i32 (no uint32 sort)'
                src = src.view(torch.int32)
        else:
            src = torch.rand((m,), device='cuda') * 2e6 - 1e6
        vals, ind = torch.empty_like(src), torch.empty((m,), device='cuda', dtype=torch.int64)
        print(f"2^{lg} {name} keys")
        cms, cgb = bench(lambda: vals.copy_(src), 8 * m)
        line('copy', cms, cgb, cgb)
        ms, _ = bench(lambda: torch.sort(src, out=(vals, ind)), 1)
        print(f"  {'sort keys + indices':<28} {ms:9.3f} ms {16 * m / ms / 1e6:8.0f} GB/s  "
              f"{16 * m / ms / 1e6 / cgb:.2f}x copy  ({m / ms / 1e6:.2f} Gkeys/s)")
        del src, vals, ind
        torch.cuda.empty_cache()
