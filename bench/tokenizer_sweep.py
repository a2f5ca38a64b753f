#!/usr/bin/env python3
"""Tokenizer cost against input length, tessera beside HF `tokenizers`
(issue 51): one repeated character from 1 KB to --max-bytes per tokenizer
family, the median of --repeats runs, and the exponent of a least-squares fit
of log(seconds) on log(bytes) over the sizes of 16 KB and up (smaller ones
are timer noise). An exponent near 1 is linear; the gate is <= 1.2.

Usage (after scripts/build.sh; the project venv has tokenizers):
  .venv/bin/python bench/tokenizer_sweep.py [--max-bytes 1048576] [--repeats 3]
Prints a markdown table for docs/BENCHMARKS.md; exits 1 when a tessera
exponent exceeds the gate.
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import time

from tokenizers import Tokenizer

ROOT = pathlib.Path(__file__).resolve().parents[1]
SWEEP = ROOT / "build" / "release" / "bench" / "model" / "tokenizer_sweep"
GATE = 1.2
# (family, tokenizer folder, repeated character): a run of one character is
# one pre-tokenized word where the pre-tokenizer allows (spaces in byte-level
# BPE, letters elsewhere).
CASES = [
    ("WordPiece (MiniLM)", "models/all-MiniLM-L6-v2", "a"),
    ("byte-level BPE (Qwen3), spaces", "data/tokenizer/bpe_qwen3_embedding", " "),
    ("byte-level BPE (Qwen3), letters", "data/tokenizer/bpe_qwen3_embedding", "a"),
    ("byte-level BPE (ModernBERT), spaces", "data/tokenizer/bpe_modernbert", " "),
    ("byte-level BPE (RoBERTa), letters", "data/tokenizer/bpe", "a"),
    ("char BPE", "data/tokenizer/bpe_char", "a"),
    ("Unigram (XLM-R)", "data/tokenizer/unigram", "a"),
    ("Unigram (sentencepiece)", "data/tokenizer/spm_nfkc", "a"),
]


def exponent(points):
    pts = [(math.log(b), math.log(max(s, 1e-7))) for b, s in points if b >= 16384]
    if len(pts) < 2:
        return float("nan")
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return (sum((x - mx) * (y - my) for x, y in pts) /
            sum((x - mx) ** 2 for x, _ in pts))


def hf_times(folder, unit, max_bytes, repeats):
    tok = Tokenizer.from_file(str(ROOT / folder / "tokenizer.json"))
    out = []
    size = 1024
    while size <= max_bytes:
        text = unit * (size // len(unit.encode()))
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            tok.encode(text, add_special_tokens=False)
            times.append(time.perf_counter() - t0)
        out.append((len(text.encode()), sorted(times)[len(times) // 2]))
        size *= 4
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-bytes", type=int, default=1 << 20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if not SWEEP.exists():
        sys.exit(f"{SWEEP} is missing: run scripts/build.sh")
    rows, worst = [], 0.0
    for family, folder, unit in CASES:
        p = subprocess.run([str(SWEEP), "--max-bytes", str(args.max_bytes), "--repeats",
                            str(args.repeats), unit, str(ROOT / folder)],
                           capture_output=True, text=True, check=True)
        ours = [(r["bytes"], r["seconds"]) for r in map(json.loads, p.stdout.splitlines())]
        theirs = hf_times(folder, unit, args.max_bytes, args.repeats) \
            if (ROOT / folder / "tokenizer.json").exists() else []
        e_ours, e_theirs = exponent(ours), exponent(theirs)
        worst = max(worst, e_ours)
        last_hf = f"{theirs[-1][1]:.3f}" if theirs else "-"
        rows.append(f"| {family} | {repr(unit)} | {ours[-1][0]:,} | {ours[-1][1]:.3f} | {last_hf} "
                    f"| {e_ours:.2f} | {e_theirs:.2f} |")
        print(rows[-1], flush=True)
    print()
    print("| family | char | bytes | tessera s | HF s | tessera exponent | HF exponent |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if worst > GATE:
        print(f"tokenizer_sweep: an exponent of {worst:.2f} is over the gate {GATE}")
        sys.exit(1)


if __name__ == "__main__":
    main()
