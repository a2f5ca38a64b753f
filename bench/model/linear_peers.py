#!/usr/bin/env python3
"""The encoder's four Linear products (all-MiniLM-L6-v2 shapes, 8,192 tokens,
2 threads) in tessera's linear() against torch's F.linear, which runs the
same products through newer libraries (torch's MKL for f32, its oneDNN 3.x
for bf16), side by side in one run: the question of issue 33 item 1, "is
a newer GEMM library worth it on this CPU kind".

  .venv-bench/bin/python bench/model/linear_peers.py --build build/release

tessera's figures come from bench/model/linear_bench (Google Benchmark, the
encoder's epilogues: bias, GELU on ffn_in, residual add on attn_out and
ffn_out); torch's from F.linear with the same bias, GELU and residual add.
Rounds alternate the two so load from other processes falls on both; the
table gives medians over rounds, GFLOP/s (2 * M * N * K per product).
Runs in .venv-bench (torch), never in the tests.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

TOKENS = 8192
SHAPES = {"qkv": (1152, 384), "attn_out": (384, 384), "ffn_in": (1536, 384),
          "ffn_out": (384, 1536)}


def cpu_name():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def torch_libraries():
    """The GEMM libraries torch was built with, from its build summary."""
    found = []
    for line in torch.__config__.show().splitlines():
        if "Math Kernel Library Version" in line:
            found.append("MKL " + line.split("Version")[1].split("-")[0].strip())
        elif "MKL-DNN v" in line:
            found.append("oneDNN " + line.split("MKL-DNN v")[1].split()[0])
    return ", ".join(found) or "unknown libraries"


def tessera_round(build, min_time):
    out = subprocess.run(
        [os.path.join(build, "bench/model/linear_bench"), "--benchmark_filter=^(f32|bf16)/",
         f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
        capture_output=True, text=True, check=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        dtype, name = b["name"].split("/")[:2]
        rows[(dtype, name)] = b["items_per_second"] * 1e-9
    return rows


def torch_round(min_time):
    rows = {}
    for dtype_name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        for name, (n, k) in SHAPES.items():
            x = torch.full((TOKENS, k), 0.5, dtype=dtype)
            w = torch.full((n, k), 0.01, dtype=dtype)
            bias = torch.full((n,), 0.01, dtype=dtype)
            residual = torch.zeros((TOKENS, n), dtype=dtype)

            def product():
                y = F.linear(x, w, bias)
                if name == "ffn_in":
                    return F.gelu(y)
                if name in ("attn_out", "ffn_out"):
                    return y.add_(residual)
                return y

            product()
            calls, start = 0, time.perf_counter()
            while True:
                product()
                calls += 1
                elapsed = time.perf_counter() - start
                if elapsed >= min_time:
                    break
            rows[(dtype_name, name)] = 2.0 * TOKENS * n * k * calls / elapsed * 1e-9
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build/release")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.5, help="seconds per product per round")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", help="write the medians here")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    runs = {"tessera": [], "torch": []}
    for r in range(args.rounds):
        order = ["tessera", "torch"] if r % 2 == 0 else ["torch", "tessera"]
        for who in order:
            runs[who].append(tessera_round(args.build, args.min_time) if who == "tessera"
                             else torch_round(args.min_time))
    load = os.getloadavg()[0]
    print(f"CPU: {cpu_name()}; {args.threads} threads; torch {torch.__version__} with "
          f"{torch_libraries()}; load average {load:.1f} at the end; medians of "
          f"{args.rounds} rounds, GFLOP/s\n")
    print("| product | dtype | tessera linear() | torch F.linear | tessera / torch |")
    print("|---|---|---:|---:|---:|")
    table = []
    for dtype in ("f32", "bf16"):
        for name in SHAPES:
            t = statistics.median(r[(dtype, name)] for r in runs["tessera"])
            o = statistics.median(r[(dtype, name)] for r in runs["torch"])
            table.append({"product": name, "dtype": dtype, "tessera": t, "torch": o})
            print(f"| {name} | {dtype} | {t:.1f} | {o:.1f} | {t / o:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_name(), "threads": args.threads, "rows": table}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
