#!/usr/bin/env python3
"""PyTorch on the ops scripts-lua/bench/indexing.lua measures, same shapes
and byte counts: a device copy of an 8192 x 8192 f32 matrix, index_select
of 65536 random rows of 256 f32, gather along the last dim of 8192 x 8192
f32 by random int64 ids, index_add_ of 65536 rows of 256 into 4096 x 256;
GB/s by CUDA events, median of 20 after 3 warm-up runs.
Usage: bench_torch_indexing.py [scale] (divides every row count)"""
import sys

import torch

from torch_timing import bench

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 1
rows, cols, g, into = 65536 // scale, 256, 8192 // scale, 4096 // scale
torch.manual_seed(1)
dev = 'cuda'
sel_src = torch.rand((rows, cols), device=dev) * 2 - 1
sel_out = torch.empty_like(sel_src)
sel_ids = torch.randint(0, rows, (rows,), device=dev, dtype=torch.int64)
gat_src = torch.rand((g, g), device=dev) * 2 - 1
gat_out = torch.empty_like(gat_src)
gat_ids = torch.randint(0, g, (g, g), device=dev, dtype=torch.int64)
add_dst = torch.zeros((into, cols), device=dev)
add_ids = torch.randint(0, into, (rows,), device=dev, dtype=torch.int64)

cases = [
    ('copy', lambda: gat_out.copy_(gat_src), 8 * g * g),
    ('index_select', lambda: torch.index_select(sel_src, 0, sel_ids, out=sel_out),
     8 * rows * cols + 8 * rows),
    ('gather', lambda: torch.gather(gat_src, 1, gat_ids, out=gat_out), 16 * g * g),
    ('index_add', lambda: add_dst.index_add_(0, add_ids, sel_src),
     4 * rows * cols + 8 * rows + 8 * into * cols),
]
print(f"torch {torch.__version__}, f32 data, int64 ids ({torch.cuda.get_device_name()})")
copy = None
for name, fn, nbytes in cases:
    ms, gbps = bench(fn, nbytes)
    copy = copy or gbps
    print(f"  {name:<14} {ms:8.3f} ms {gbps:8.0f} GB/s  {gbps / copy:.2f}x copy")
