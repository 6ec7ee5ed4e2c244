#!/usr/bin/env python3
"""PyTorch (cuDNN, TF32 off) on the cases scripts-lua/bench/conv.lua
measures: conv2d N32 C64 56x56 K64 3x3 pad 1 (f32, f16, bf16; NCHW and
channels-last), conv1d N16 C256 L4096 K256 k5 pad 2 (f32, f16), and f32
max/avg pool 2x2, im2col 3x3 pad 1 of N8 (F.unfold) and nearest x2
upsampling of N32 C64 56x56, each next to a copy of as many bytes.
TFLOP/s (2 flops per multiply-add) or GB/s (bytes read + written), CUDA
events, median of 20 after 3 warm-up runs.
Usage: bench_torch_conv.py"""
import torch
import torch.nn.functional as F

from torch_timing import bench

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True
print(f"torch {torch.__version__} conv on {torch.cuda.get_device_name()} (cuDNN {torch.backends.cudnn.version()}, "
      "TF32 off)")
types = {'f32': torch.float32, 'f16': torch.float16, 'bf16': torch.bfloat16}


def rand(shape, dt):
    return (torch.rand(shape, device='cuda') * 2 - 1).to(dt)


def tflops(ms, flops):
    return f"{flops / (ms * 1e-3) / 1e12:8.2f} TFLOP/s"


for name, dt in types.items():
    torch.manual_seed(1)
    x, w = rand((32, 64, 56, 56), dt), rand((64, 64, 3, 3), dt)
    flops = 2.0 * 32 * 64 * 56 * 56 * 64 * 9
    ms, _ = bench(lambda: F.conv2d(x, w, padding=1), 0)
    print(f"  conv2d {name:<4} N32 C64 56x56 K64 3x3 p1 nchw   {ms:9.3f} ms {tflops(ms, flops)}")
    xl, wl = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
    ms, _ = bench(lambda: F.conv2d(xl, wl, padding=1), 0)
    print(f"  conv2d {name:<4} N32 C64 56x56 K64 3x3 p1 nhwc   {ms:9.3f} ms {tflops(ms, flops)}")
for name in ('f32', 'f16'):
    x, w = rand((16, 256, 4096), types[name]), rand((256, 256, 5), types[name])
    ms, _ = bench(lambda: F.conv1d(x, w, padding=2), 0)
    print(f"  conv1d {name:<4} N16 C256 L4096 K256 k5 p2      {ms:9.3f} ms {tflops(ms, 2.0 * 16 * 256 * 4096 * 256 * 5)}")


def memop(label, fn, nin, nout):
    _, rate = bench(fn, 4.0 * (nin + nout))
    half = (nin + nout) // 2
    a, b = torch.empty(half, device='cuda'), torch.empty(half, device='cuda')
    _, crate = bench(lambda: b.copy_(a), 8.0 * half)
    print(f"  {label:<34} {rate:8.1f} GB/s   copy of the same bytes {crate:8.1f} GB/s")


x = torch.rand((32, 64, 56, 56), device='cuda')
P = x.numel()
memop("max_pool2d 2x2 f32", lambda: F.max_pool2d(x, 2), P, P // 4)
memop("avg_pool2d 2x2 f32", lambda: F.avg_pool2d(x, 2), P, P // 4)
memop("upsample_nearest2d x2 f32", lambda: F.interpolate(x, scale_factor=2, mode='nearest'), P, 4 * P)
x8 = x[:8].contiguous()
memop("im2col 3x3 p1 f32 (N8)", lambda: F.unfold(x8, 3, padding=1), x8.numel(), 9 * x8.numel())
