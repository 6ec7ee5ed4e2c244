#!/usr/bin/env python3
"""PyTorch on the ops scripts-lua/bench/ops.lua measures: add, gelu (tanh
form, as hipkit's gelu) and cast f32->bf16 on 2^28 elements, GB/s by CUDA
events, median of 20 after 3 warm-up runs."""
import sys

import torch

from torch_timing import bench

n = 1 << (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
a = torch.full((n,), 1.5, device='cuda', dtype=torch.float32)
b = torch.full((n,), 2.25, device='cuda', dtype=torch.float32)
c = torch.empty_like(a)
h = torch.empty((n,), device='cuda', dtype=torch.bfloat16)


add = bench(lambda: torch.add(a, b, out=c), 12 * n)[1]
gelu = bench(lambda: torch.ops.aten.gelu.out(a, approximate='tanh', out=c), 8 * n)[1]
cast = bench(lambda: h.copy_(a), 6 * n)[1]
print(f"torch {torch.__version__}: add {add:.0f} GB/s, gelu {gelu:.0f} GB/s, "
      f"cast f32->bf16 {cast:.0f} GB/s on 2^{n.bit_length() - 1} elements")
