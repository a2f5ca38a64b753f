"""tessera.ray against the plain CLI on the generated corpus (bench/ray/corpus.py),
in local mode on this machine: tokens/s of

  cli-1t   `tessera --threads 1 embed corpus.jsonl -o out.jsonl`
  ray-1w   tessera.ray.embed_corpus with 1 worker of 1 CPU
  ray-2w   tessera.ray.embed_corpus with 2 workers of 1 CPU each
  cli-2t   `tessera --threads 2 embed ...` (one process, two threads)

(--runs picks some of them.)
Each is run --repeats times, interleaved (so a burst of load from elsewhere
hits them alike); the median is reported. The CLI figures are its process's
wall time (start, model load, embedding, writing); the Ray figures are the
job's (embed_corpus: planning, actors starting and loading the model,
embedding, the driver writing), with the Ray session already up; the time
`ray.init` takes, and a 20-document job's time (the fixed cost of a job:
starting the actors, loading the model), are reported apart. Tokens are the
CLI's count for the corpus.

    PYTHONPATH=build/release/python .venv/bin/python bench/ray/bench.py \
        --cli build/release/tessera [--documents 2000] [--repeats 3] [--json out.json]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def run_cli(cli, src, out, threads):
    start = time.monotonic()
    run = subprocess.run([cli, "--threads", str(threads), "embed", src, "-o", out],
                         capture_output=True, text=True, check=True)
    seconds = time.monotonic() - start
    tokens = int(re.search(r"(\d+) tokens in", run.stderr).group(1))
    return seconds, tokens


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="build/release/tessera")
    ap.add_argument("--documents", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--runs", default="cli-1t,ray-1w,ray-2w,cli-2t",
                    help="which of cli-1t, ray-1w, ray-2w, cli-2t (default: all)")
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args()

    import ray

    import tessera
    import tessera.ray as tray

    work = tempfile.mkdtemp(prefix="tessera-ray-bench-")
    src = corpus.write_jsonl(os.path.join(work, "corpus.jsonl"), args.documents)
    here = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH")) if p)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no report to Ray's servers
    start = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    init_seconds = time.monotonic() - start
    # The session's first job also starts Ray Data's own actors (~4 s here):
    # a 20-document job first, timed apart, as the fixed cost of one job.
    small = corpus.write_jsonl(os.path.join(work, "small.jsonl"), 20)
    first_job = tray.embed_corpus([small], os.path.join(work, "small-out.jsonl"), workers=1,
                                  batch_size=10, progress=False)["seconds"]
    small_job = tray.embed_corpus([small], os.path.join(work, "small-out.jsonl"), workers=1,
                                  batch_size=10, progress=False)["seconds"]

    runs = args.runs.split(",")
    seconds = {k: [] for k in runs}
    tokens = run_cli(args.cli, small, os.path.join(work, "cli.jsonl"), 1)[1]  # (warm the cache)
    for rep in range(args.repeats):
        for run in runs:
            if run.startswith("cli-"):
                s, tokens = run_cli(args.cli, src, os.path.join(work, "cli.jsonl"),
                                    int(run[4:-1]))
            else:
                s = tray.embed_corpus([src], os.path.join(work, f"{run}.jsonl"),
                                      workers=int(run[4:-1]), batch_size=args.batch_size,
                                      progress=False)["seconds"]
            seconds[run].append(s)
        print(f"repeat {rep + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in seconds.items()),
              file=sys.stderr, flush=True)
    ray.shutdown()

    med = {k: statistics.median(v) for k, v in seconds.items()}
    print(f"corpus: {args.documents} documents, {tokens} tokens; median of {args.repeats}; "
          f"ray.init {init_seconds:.1f} s, the session's first 20-document job "
          f"{first_job:.1f} s, the next {small_job:.1f} s")
    print("| run | seconds (median) | tokens/s | runs |")
    print("|---|---|---|---|")
    for k, v in seconds.items():
        print(f"| {k} | {med[k]:.2f} | {tokens / med[k]:.0f} | "
              f"{', '.join(f'{x:.2f}' for x in v)} |")
    if "ray-1w" in med and "cli-1t" in med:
        print(f"ray 1 worker vs CLI 1 thread: {100 * (med['ray-1w'] / med['cli-1t'] - 1):+.1f}% "
              "time")
    if "ray-1w" in med and "ray-2w" in med:
        print(f"ray 2 workers vs 1: {med['ray-1w'] / med['ray-2w']:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"documents": args.documents, "tokens": tokens, "seconds": seconds,
                       "median": med, "ray_init_seconds": init_seconds,
                       "first_small_job_seconds": first_job, "small_job_seconds": small_job},
                      f, indent=1)


if __name__ == "__main__":
    main()
