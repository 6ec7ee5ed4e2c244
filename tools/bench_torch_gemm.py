#!/usr/bin/env python3
"""PyTorch (cuBLAS) on the cases scripts-lua/bench/gemm.lua measures: C =
A B, row-major, f32 (TF32 off), f16 and bf16 (C of the input's dtype), sizes
512^3, 1024^3, 4096^3 and 4096 x 4096 x 64; TFLOP/s (2 M N K flops) by
CUDA events, median of 20 after 3 warm-up runs.
Usage: bench_torch_gemm.py [dtype]; "f32routes": f32 on the cases of
scripts-lua/bench/gemm_f32_routes.lua (transposes and deep shapes too)."""
import sys

import torch

from torch_timing import bench

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
only = sys.argv[1] if len(sys.argv) > 1 else None
sizes = [(512, 512, 512), (1024, 1024, 1024), (4096, 4096, 4096), (4096, 4096, 64)]
if only == 'f32routes':
    print(f"torch {torch.__version__} gemm f32 routes on {torch.cuda.get_device_name()} (TF32 off)")
    for m, n, k, ta, tb in [(512, 512, 512, 0, 0), (1024, 1024, 1024, 0, 0), (2048, 2048, 2048, 0, 0),
                            (4096, 4096, 4096, 0, 0), (4096, 4096, 64, 0, 0), (4096, 4096, 4096, 1, 0),
                            (4096, 4096, 4096, 0, 1), (1024, 1024, 4096, 0, 0), (256, 256, 8192, 0, 0)]:
        torch.manual_seed(1)
        a = torch.rand((k, m) if ta else (m, k), device='cuda') * 2 - 1
        b = torch.rand((n, k) if tb else (k, n), device='cuda') * 2 - 1
        a, b = (a.t() if ta else a), (b.t() if tb else b)
        c = torch.empty((m, n), device='cuda')
        ms, _ = bench(lambda: torch.matmul(a, b, out=c), 0)
        print(f"  {m:5d} x {n:5d} x {k:5d} {'ta' if ta else '':<5} {'tb' if tb else '':<5} {ms:9.4f} ms "
              f"{2.0 * m * n * k / (ms * 1e-3) / 1e12:9.2f} TFLOP/s")
    sys.exit(0)
types = {'f32': torch.float32, 'f16': torch.float16, 'bf16': torch.bfloat16}
print(f"torch {torch.__version__} gemm on {torch.cuda.get_device_name()} (TF32 off)")
for name, dt in types.items():
    if only and only != name:
        continue
    for m, n, k in sizes:
        torch.manual_seed(1)
        a = (torch.rand((m, k), device='cuda') * 2 - 1).to(dt)
        b = (torch.rand((k, n), device='cuda') * 2 - 1).to(dt)
        c = torch.empty((m, n), device='cuda', dtype=dt)
        ms, _ = bench(lambda: torch.matmul(a, b, out=c), 0)
        print(f"  {name:<5} {m:5d} x {n:5d} x {k:5d} {ms:9.3f} ms {2.0 * m * n * k / (ms * 1e-3) / 1e12:9.2f} TFLOP/s")
