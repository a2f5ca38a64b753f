#!/usr/bin/env python3
"""Old vs new attention binaries, alternated in one run: medians and paired ratios.

The machines are shared: a host's memory bandwidth and free cores move from
minute to minute, so two tables measured ten minutes apart disagree by more than
most kernel changes. This script runs `tessera bench attention` with binary A,
then B, then A again, ... for --rounds rounds, and reports per shape and
backend each binary's median of medians and the median of the paired ratios
B/A (each ratio taken within one round, a few seconds apart). Below 1: B is
faster. The figures in docs/DECISIONS.md quoted as "alternated" come from runs
like this.

  cp build/release/tessera /tmp/tessera.old   # before the change
  ... rebuild ...
  python3 bench/ab_attention.py /tmp/tessera.old build/release/tessera \\
      --shapes "B=32,S=256,H=12,D=32,dtype=f32" --rounds 8 --boost
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_once(binary, args, json_path):
    cmd = [binary, "--threads", str(args.threads), "bench", "attention", "--shapes", args.shapes,
           "--backends", args.backends, "--iters", str(args.iters), "--warmup",
           str(args.warmup), "--json", json_path]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"ab_attention: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    with open(json_path) as f:
        return {(r["shape"], r["backend"]): r["median_ms"] for r in json.load(f)
                if r.get("status") == "ok"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="the old tessera binary (copy it before rebuilding)")
    ap.add_argument("b", help="the new tessera binary")
    ap.add_argument("--shapes", required=True, help="as `tessera bench attention --shapes`")
    ap.add_argument("--backends", default="cpu.flash")
    ap.add_argument("--rounds", type=int, default=6, help="A-then-B rounds (default 6)")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--boost", action="store_true",
                    help="own scheduler autogroup at nice -20 (root), as bench/attention_table.py")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("ab_attention: --rounds must be >= 1")
    for name in (args.a, args.b):
        if not os.access(name, os.X_OK):
            sys.exit(f"ab_attention: {name} is not an executable file")
    if args.boost:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from attention_table import boost  # noqa: E402 (shared with the attention table)
        boost()

    times = {}  # (shape, backend) -> {"a": [...], "b": [...]}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            for side, binary in (("a", args.a), ("b", args.b)):
                for key, ms in run_once(binary, args, os.path.join(tmp, "rows.json")).items():
                    times.setdefault(key, {"a": [], "b": []})[side].append(ms)
            print(f"ab_attention: round {i + 1}/{args.rounds} done", file=sys.stderr)

    print(f"A = {args.a}\nB = {args.b}\n{args.rounds} rounds, {args.threads} threads\n")
    print("| shape | backend | A median ms | B median ms | B/A paired (median) | B/A range |")
    print("|---|---|---:|---:|---:|---|")
    for (shape, backend), t in sorted(times.items()):
        pairs = [b / a for a, b in zip(t["a"], t["b"]) if a > 0]
        if not pairs:
            continue
        print(f"| {shape} | {backend} | {statistics.median(t['a']):.3f} | "
              f"{statistics.median(t['b']):.3f} | {statistics.median(pairs):.3f} | "
              f"{min(pairs):.2f}-{max(pairs):.2f} |")


if __name__ == "__main__":
    main()
