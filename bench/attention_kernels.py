#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""LibTorch's attention kernels on the shapes the trainer's models give them: forward + backward of
scaled_dot_product_attention for each kernel this machine has, ms per call (bench/RESULTS.md, "The
attention kernel"). The shapes are [N, heads, L, d]: the tiny configs' spatial attention (64
tokens), their temporal attention (8 frames), and a long joint sequence.

Usage: .venv/bin/python bench/attention_kernels.py [--repeat 10]
"""
import argparse
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

ap = argparse.ArgumentParser()
ap.add_argument("--repeat", type=int, default=10)
args = ap.parse_args()
cuda = torch.cuda.is_available()
dev, dtype = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
kernels = [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]
if cuda:
    kernels += [SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]
print(f"# {dev} {dtype} torch {torch.__version__}, {torch.get_num_threads()} threads")
torch.manual_seed(0)
for name, shape in [("spatial, 64 tokens", (64, 4, 64, 16)), ("temporal, 8 frames", (512, 4, 8, 16)),
                    ("joint, 512 tokens", (8, 4, 512, 16))]:
    q, k, v = [torch.randn(*shape, device=dev, dtype=dtype, requires_grad=True) for _ in range(3)]
    row = []
    for kernel in kernels:
        with sdpa_kernel(kernel):
            def call():
                torch.nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()
            for _ in range(3):
                call()
            if cuda:
                torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(args.repeat):
                call()
            if cuda:
                torch.cuda.synchronize()
            row.append(f"{kernel.name.lower()} {(time.perf_counter() - t) / args.repeat * 1e3:.2f} ms")
    print(f"{name:20} {list(shape)}: " + ", ".join(row))
