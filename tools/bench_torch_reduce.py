#!/usr/bin/env python3
"""PyTorch on the ops scripts-lua/bench/reduce.lua measures, same sizes and
byte counts: a device copy, row sum, max, argmax, softmax, log_softmax,
rmsnorm and layernorm of a rows x cols f32 matrix (random data), GB/s by
CUDA events, median of 20 after 3 warm-up runs.
Usage: bench_torch_reduce.py [rows] [cols] [n]"""
import sys

import torch

from torch_timing import bench

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
cols = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
n = rows * cols
torch.manual_seed(1)
x = torch.rand((rows, cols), device='cuda', dtype=torch.float32) * 8 - 4
y = torch.empty_like(x)
w = torch.rand((cols,), device='cuda') + 0.5
b = torch.rand((cols,), device='cuda') * 2 - 1
per_row = torch.empty((rows,), device='cuda')
idx = torch.empty((rows,), device='cuda', dtype=torch.int64)


def rmsnorm():
    torch.mul(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5), w, out=y)


rms = getattr(torch.nn.functional, 'rms_norm', None)
cases = [
    ('copy', lambda: y.copy_(x), 8 * n),
    ('sum', lambda: torch.sum(x, -1, out=per_row), 4 * n + 4 * rows),
    ('max', lambda: torch.amax(x, -1, out=per_row), 4 * n + 4 * rows),
    ('argmax', lambda: torch.argmax(x, -1, out=idx), 4 * n + 8 * rows),
    ('softmax', lambda: torch.softmax(x, -1, out=y), 8 * n),
    ('log_softmax', lambda: torch.log_softmax(x, -1, out=y), 8 * n),
    ('rmsnorm', (lambda: y.copy_(rms(x, (cols,), w, 1e-5))) if rms else rmsnorm, 8 * n + 4 * cols),
    ('layernorm', lambda: y.copy_(torch.nn.functional.layer_norm(x, (cols,), w, b, 1e-5)),
     8 * n + 8 * cols),
]
print(f"torch {torch.__version__} on {rows} x {cols} f32 ({torch.cuda.get_device_name()})")
copy = None
for name, fn, nbytes in cases:
    ms, gbps = bench(fn, nbytes)
    copy = copy or gbps
    print(f"  {name:<12} {ms:8.3f} ms {gbps:8.0f} GB/s  {gbps / copy:.2f}x copy")

n1 = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 28
del x, y
torch.cuda.empty_cache()
a = torch.rand((n1,), device='cuda') * 2 - 1
c = torch.empty_like(a)
s1 = torch.empty((), device='cuda')
print(f"torch on {n1} f32")
copy = None
for name, fn, nbytes in [('copy', lambda: c.copy_(a), 8 * n1),
                         ('sum', lambda: torch.sum(a, 0, out=s1), 4 * n1),
                         ('cumsum', lambda: torch.cumsum(a, 0, out=c), 8 * n1)]:
    ms, gbps = bench(fn, nbytes)
    copy = copy or gbps
    print(f"  {name:<12} {ms:8.3f} ms {gbps:8.0f} GB/s  {gbps / copy:.2f}x copy")
