"""`tessera embed` with attention served only by xla, against cpu.flash.

Usage: embed_xla_test.py TESSERA_BINARY SOURCE_DIR
Embeds data/sample twice (--attention=only:xla, then only:cpu.flash, or the
reference in a build without cpu.flash) and requires every row's cosine to be
>= 0.9999, the same rows, and xla.execute spans in the xla run's profile (so
the embeddings really came from the plugin). Fails when no plugin is found.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MIN_COSINE = 0.9999


def embed(tessera, source, policy, out):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TESSERA_MODEL", "TESSERA_ATTENTION", "TESSERA_WEIGHTS")}
    proc = subprocess.run([tessera, "--profile", "--attention=" + policy, "embed", "-o", out,
                           os.path.join(source, "data", "sample")],
                          capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        sys.exit(f"embed with {policy} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout + proc.stderr


def main():
    tessera, source = sys.argv[1], sys.argv[2]
    listed = subprocess.run([tessera, "backends", "--json"], capture_output=True, text=True)
    backends = {b["name"]: b for b in json.loads(listed.stdout)}
    xla = backends.get("xla")
    if xla is None or not xla["available"]:
        sys.exit("xla is not available (run scripts/install-deps.sh for the CPU plugin): "
                 + (xla["unavailable_reason"] if xla else "not in this build"))
    baseline = "cpu.flash" if "cpu.flash" in backends else "reference"
    with tempfile.TemporaryDirectory() as tmp:
        got_path, want_path = os.path.join(tmp, "xla.npy"), os.path.join(tmp, "base.npy")
        profile = embed(tessera, source, "only:xla", got_path)
        if "xla.execute" not in profile:
            sys.exit("the xla run recorded no xla.execute span:\n" + profile[-4000:])
        embed(tessera, source, "only:" + baseline, want_path)
        got, want = np.load(got_path), np.load(want_path)
    if got.shape != want.shape or got.shape[0] == 0:
        sys.exit(f"shapes differ or empty: xla {got.shape}, {baseline} {want.shape}")
    cos = (got * want).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    worst = int(np.argmin(cos))
    print(f"xla vs {baseline}: {got.shape[0]} rows, min cosine {cos[worst]:.8f} (row {worst}), "
          f"mean {cos.mean():.8f}")
    if not cos[worst] >= MIN_COSINE:
        sys.exit(f"row {worst}: cosine {cos[worst]:.8f} < {MIN_COSINE}")


if __name__ == "__main__":
    main()
