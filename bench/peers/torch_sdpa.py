#!/usr/bin/env python3
"""PyTorch's CPU scaled_dot_product_attention on tessera's benchmark shapes.

The peer of `tessera bench attention`: same shape syntax, same FLOP count
(4 * visible (query, key) pairs * Hq * D, so causal counts about half), same
JSON row fields (backend, shape, median_ms, gflops), so bench/attention_table.py
can put the two side by side. Runs in .venv-bench (torch from PyPI), never in
the tests.

  .venv-bench/bin/python bench/peers/torch_sdpa.py \
      --shapes "B=8,S=512,H=12,D=64,dtype=f32" --threads 2 --json out.json
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def parse_shape(text):
    """'B=1,Sq=1,Sk=8192,Hq=32,Hkv=8,D=128,dtype=bf16,mask=none' -> dict."""
    s = {"B": 1, "Sq": 1, "Sk": 1, "Hq": 1, "Hkv": 1, "D": 64, "Dv": None,
         "dtype": "f32", "mask": "none"}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        if key == "S":
            s["Sq"] = s["Sk"] = int(value)
        elif key == "H":
            s["Hq"] = s["Hkv"] = int(value)
        elif key in ("B", "Sq", "Sk", "Hq", "Hkv", "D", "Dv"):
            s[key] = int(value)
        elif key in ("dtype", "mask"):
            s[key] = value
        else:
            raise SystemExit(f"torch_sdpa: shape item '{item}' in '{text}' is not supported here")
    if s["Dv"] is None:
        s["Dv"] = s["D"]
    if s["mask"] not in ("none", "causal"):
        raise SystemExit(f"torch_sdpa: mask={s['mask']} is not supported here")
    if s["mask"] == "causal" and s["Sq"] != s["Sk"]:
        # torch's is_causal is top-left aligned; tessera's is bottom-right.
        raise SystemExit("torch_sdpa: causal with Sq != Sk would not be the same problem")
    return s


def visible_pairs(s):
    if s["mask"] == "causal":
        return s["Sq"] * (s["Sq"] + 1) // 2
    return s["Sq"] * s["Sk"]


def bench_shape(text, warmup, iters, min_seconds):
    s = parse_shape(text)
    dtype = DTYPES[s["dtype"]]
    gen = torch.Generator().manual_seed(0)
    # torch's layout is [B, H, S, D].
    q = torch.randn(s["B"], s["Hq"], s["Sq"], s["D"], generator=gen).to(dtype)
    k = torch.randn(s["B"], s["Hkv"], s["Sk"], s["D"], generator=gen).to(dtype)
    v = torch.randn(s["B"], s["Hkv"], s["Sk"], s["Dv"], generator=gen).to(dtype)
    kwargs = {"is_causal": s["mask"] == "causal"}
    if s["Hq"] != s["Hkv"]:
        kwargs["enable_gqa"] = True

    def run():
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v, **kwargs)

    for _ in range(warmup):
        run()
    times = []
    total = 0.0
    while len(times) < iters or (total < min_seconds and len(times) < 1000):
        t0 = time.perf_counter()
        run()
        dt = time.perf_counter() - t0
        times.append(dt * 1e3)
        total += dt
    median_ms = statistics.median(times)
    flops = 2.0 * visible_pairs(s) * s["B"] * s["Hq"] * (s["D"] + s["Dv"])
    # The ideal traffic, as tessera counts it: q, k, v read once, out written once.
    elems = s["B"] * (s["Sq"] * s["Hq"] * (s["D"] + s["Dv"]) + s["Sk"] * s["Hkv"] * (s["D"] + s["Dv"]))
    nbytes = elems * torch.tensor([], dtype=dtype).element_size()
    return {"backend": "torch.sdpa", "shape": text, "status": "ok", "median_ms": median_ms,
            "min_ms": min(times), "gflops": flops / (median_ms * 1e6),
            "gbps": nbytes / (median_ms * 1e6), "iters": len(times),
            "threads": torch.get_num_threads()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", required=True, help="shapes joined by ';'")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--min-seconds", type=float, default=0.2)
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"cpu capability {torch.backends.cpu.get_cpu_capability()}", file=sys.stderr)
    rows = []
    for text in filter(None, args.shapes.split(";")):
        row = bench_shape(text, args.warmup, args.iters, args.min_seconds)
        print(f"{row['backend']:<14} {row['median_ms']:10.3f} {row['gflops']:9.1f}  {text}",
              flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
