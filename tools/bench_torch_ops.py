#!/usr/bin/env python3
"""PyTorch on the ops scripts-lua/bench/ops.lua measures: add, gelu (tanh
form, as hipkit's gelu) and cast f32->bf16 on 2^28 elements of random data,
GB/s by CUDA events, median of 20 after 3 warm-up runs, next to a copy."""
import sys

import torch

from torch_timing import bench

n = 1 << (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
torch.manual_seed(1)
a = torch.rand((n,), device='cuda', dtype=torch.float32) * 8 - 4
b = torch.rand((n,), device='cuda', dtype=torch.float32) * 8 - 4
c = torch.empty_like(a)
h = torch.empty((n,), device='cuda', dtype=torch.bfloat16)


copy = bench(lambda: c.copy_(a), 8 * n)[1]
add = bench(lambda: torch.add(a, b, out=c), 12 * n)[1]
gelu = bench(lambda: torch.ops.aten.gelu.out(a, approximate='tanh', out=c), 8 * n)[1]
cast = bench(lambda: h.copy_(a), 6 * n)[1]
print(f"torch {torch.__version__}: copy {copy:.0f} GB/s, add {add:.0f} GB/s ({add / copy:.3f}x copy), "
      f"gelu {gelu:.0f} GB/s ({gelu / copy:.3f}x), cast f32->bf16 {cast:.0f} GB/s ({cast / copy:.3f}x) "
      f"on 2^{n.bit_length() - 1} random elements")
