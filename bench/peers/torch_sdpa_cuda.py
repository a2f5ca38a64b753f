"""PyTorch scaled_dot_product_attention (flash backend) on the GPU, on the
shapes of scripts/gpu-check.sh. Prints JSON rows like `tessera bench
attention --json`: backend, shape, median_ms, tflops (or gbps for decode).

Usage: torch_sdpa_cuda.py OUT.json
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# (name, B, Hq, Hkv, Sq, Sk, D, causal): the GPU shapes, bf16.
SHAPES = [
    ("B=4,S=4096,H=16,D=128,dtype=bf16", 4, 16, 16, 4096, 4096, 128, False),
    ("B=4,S=4096,H=16,D=128,dtype=bf16,mask=causal", 4, 16, 16, 4096, 4096, 128, True),
    ("B=1,S=16384,H=32,D=128,dtype=bf16,mask=causal", 1, 32, 32, 16384, 16384, 128, True),
    ("B=16,Sq=1,Sk=8192,Hq=32,Hkv=8,D=128,dtype=bf16", 16, 32, 8, 1, 8192, 128, False),
]
WARMUP, ITERS = 3, 20


def bench(b, hq, hkv, sq, sk, d, causal):
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.bfloat16)
    backend = SDPBackend.FLASH_ATTENTION if hkv == hq else SDPBackend.EFFICIENT_ATTENTION
    times = []
    with sdpa_kernel([backend, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
        for i in range(WARMUP + ITERS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hkv != hq)
            end.record()
            torch.cuda.synchronize()
            if i >= WARMUP:
                times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    rows = []
    for name, b, hq, hkv, sq, sk, d, causal in SHAPES:
        ms = bench(b, hq, hkv, sq, sk, d, causal)
        pairs = sq * sk / 2 if causal else sq * sk
        flops = 4 * b * hq * pairs * d
        bytes_moved = 2 * (b * hq * sq * d * 2 + b * hkv * sk * d * 2)
        rows.append({"backend": "torch.sdpa", "shape": name, "median_ms": ms,
                     "gflops": flops / (ms * 1e6), "gbps": bytes_moved / (ms * 1e6),
                     "status": "ok"})
        print(f"torch.sdpa {ms:9.3f} ms  {name}", flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
