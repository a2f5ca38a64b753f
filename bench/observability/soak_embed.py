"""Soak: one `tessera embed` process embeds the sample corpus PASSES times
(the corpus given PASSES times as inputs) while this script samples its RSS
from /proc. Memory must be flat after warm-up: the RSS at the end (median of
the last 10% of samples) within 1% of the RSS after warm-up (median of the
samples between 10% and 20% of the run).

Usage: soak_embed.py TESSERA [--corpus data/sample] [--passes 200] [--every 0.2]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("tessera")
ap.add_argument("--corpus", default="data/sample")
ap.add_argument("--passes", type=int, default=200)
ap.add_argument("--every", type=float, default=0.2, help="seconds between RSS samples")
ap.add_argument("--extra", default="", help="more tessera global flags, space-separated")
args = ap.parse_args()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


with tempfile.TemporaryDirectory() as tmp:
    cmd = [args.tessera] + args.extra.split() + [
        "embed", "-o", os.path.join(tmp, "out.npy")] + [args.corpus] * args.passes
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TESSERA_TUNING="none"))
    samples = []  # (seconds, KiB)
    while proc.poll() is None:
        try:
            kib = rss_kib(proc.pid)
        except (FileNotFoundError, ProcessLookupError):
            break
        if kib:
            samples.append((time.monotonic() - start, kib))
        time.sleep(args.every)
    err = proc.stderr.read()
    if proc.returncode != 0:
        raise SystemExit(f"embed failed ({proc.returncode}):\n{err}")
    total = time.monotonic() - start
    n = len(samples)
    warm = statistics.median(k for _, k in samples[n // 10:max(n // 5, n // 10 + 1)])
    end = statistics.median(k for _, k in samples[-max(n // 10, 1):])
    peak_after = max(k for _, k in samples[n // 10:])
    print(err.strip().splitlines()[-1] if err.strip() else "")
    print(f"{args.passes} passes of {args.corpus} in {total:.1f} s, {n} RSS samples")
    print(f"RSS after warm-up {warm / 1024:.1f} MiB, at the end {end / 1024:.1f} MiB, "
          f"peak after warm-up {peak_after / 1024:.1f} MiB")
    growth = 100.0 * (end - warm) / warm
    print(f"growth after warm-up: {growth:+.2f}% ({'flat' if abs(growth) < 1 else 'NOT flat'})")
