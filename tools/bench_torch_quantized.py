#!/usr/bin/env python3
"""PyTorch next to scripts-lua/bench/quantized.lua: a device copy of 256 MiB,
the f16 matrix-vector product of the same shape (rows x cols weights,
default 14336 x 4096), GB/s of the bytes each must move, and the f16 matmul
of 512 activation rows by the (dequantized) weights in TFLOP/s, by CUDA events,
median of 20 after 3 warm-up runs. Like the hipkit bench, each call reads
the next of enough weight copies to exceed 4x a 50 MB L2.
Usage: bench_torch_quantized.py [rows] [cols]"""
import math
import sys

import torch

from torch_timing import bench

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 14336
cols = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
torch.manual_seed(1)
big = 256 << 20
src = torch.rand(big // 4, device='cuda')
dst = torch.empty_like(src)
print(f"torch {torch.__version__}: matvec {rows} x {cols} ({torch.cuda.get_device_name()})")
ms, copy = bench(lambda: dst.copy_(src), 2 * big)
print(f"  {'copy 256 MiB':<22} {ms:8.3f} ms {copy:8.0f} GB/s")
nbytes = 2 * rows * cols
copies = max(2, math.ceil(200e6 / nbytes))
ws = [torch.rand((rows, cols), device='cuda', dtype=torch.float16) - 0.5 for _ in range(copies)]
x = torch.rand((cols,), device='cuda', dtype=torch.float16)
y = torch.empty((rows,), device='cuda', dtype=torch.float16)
state = [0]


def step():
    state[0] = (state[0] + 1) % copies
    torch.mv(ws[state[0]], x, out=y)


ms, gbps = bench(step, nbytes + 2 * (rows + cols))
print(f"  {'matvec f16':<22} {ms:8.3f} ms {gbps:8.0f} GB/s  {gbps / copy:.2f}x copy "
      f"({nbytes / 1e6:.1f} MB, {copies} copies)")

xb = torch.rand((512, cols), device='cuda', dtype=torch.float16) - 0.5
yb = torch.empty((512, rows), device='cuda', dtype=torch.float16)
ms, _ = bench(lambda: torch.matmul(xb, ws[0].t(), out=yb), 0)
print(f"  {'matmul f16 x512':<22} {ms:8.3f} ms {2 * 512 * rows * cols / (ms * 1e-3) / 1e12:8.2f} TFLOP/s")

for m in (1, 8, 32, 64):
    xs = torch.rand((m, cols), device='cuda', dtype=torch.float16) - 0.5
    ys = torch.empty((m, rows), device='cuda', dtype=torch.float16)
    ms, _ = bench(lambda: torch.matmul(xs, ws[0].t(), out=ys), 0)
    print(f"  {'matmul f16 x' + str(m):<22} {ms:8.3f} ms {2 * m * rows * cols / (ms * 1e-3) / 1e12:8.2f} TFLOP/s")
