"""Profiler overhead on the S1 shape: `tessera bench attention` with the
profiler on (the default) and off (--no-profiler), interleaved so machine
noise hits both alike. Prints each round's medians and the median ratio.

Usage: profiler_overhead.py TESSERA [--rounds 7] [--backend cpu.gemm]
       [--shape B=8,S=512,H=12,D=64,dtype=f32]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("tessera")
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--backend", default="cpu.gemm")
ap.add_argument("--shape", default="B=8,S=512,H=12,D=64,dtype=f32")
ap.add_argument("--min-seconds", default="2")
args = ap.parse_args()


def median_ms(extra):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([args.tessera] + extra + [
            "bench", "attention", "--shapes", args.shape, "--backends", args.backend,
            "--warmup", "2", "--iters", "10", "--min-seconds", args.min_seconds,
            "--json", f.name], check=True, capture_output=True,
            env=dict(os.environ, TESSERA_TUNING="none"))
        row = json.load(open(f.name))[0]
        assert row["status"] == "ok", row
        return row["median_ms"], row["iters"]


ratios = []
for r in range(args.rounds):
    on, n_on = median_ms([])
    off, n_off = median_ms(["--no-profiler"])
    ratios.append(on / off)
    print(f"round {r + 1}: profiler on {on:.3f} ms ({n_on} runs), off {off:.3f} ms "
          f"({n_off} runs), on/off {on / off:.4f}")
print(f"median on/off over {args.rounds} rounds: {statistics.median(ratios):.4f} "
      f"(overhead {100 * (statistics.median(ratios) - 1):+.2f}%)")
