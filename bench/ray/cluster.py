"""tessera.ray on Ray's multi-node test cluster (ray.cluster_utils.Cluster):
a head that runs no work (num_cpus=0) and worker nodes of one CPU each, each
its own raylet and object store, on this machine. Measures, on the generated
corpus (bench/ray/corpus.py):

  1 node      the job with 1 worker node (1 actor)
  2 nodes     the job with 2 worker nodes (2 actors)
  node lost   2 worker nodes, one killed (raylet, store, actor) once a third
              of the shards are committed; the job finishes on the other
  fixed cost  a 2-document job on the warm 2-node cluster (actors starting,
              the model loading, committing and joining the output)

Every output is checked against `tessera embed`'s rows (ids, chunks, offsets,
order; cosine >= 0.9999): a figure for a wrong output is not printed. Tokens
are the CLI's count for the corpus; tokens/s per worker divides by the job's
embedding time (embed_corpus' embedding_seconds: from the first shard's start
to the output written) and the workers.

    PYTHONPATH=build/release/python .venv/bin/python bench/ray/cluster.py \
        --cli build/release/tessera [--documents 2000] [--repeats 2] [--json out.json]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def read_rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def check(got, want, what):
    keys = [(r["id"], r["chunk"], r["offsets"]) for r in got]
    if keys != [(r["id"], r["chunk"], r["offsets"]) for r in want]:
        raise SystemExit(f"{what}: rows differ from the CLI's (ids, chunks, offsets or order)")
    a = np.array([r["embedding"] for r in got], np.float64)
    b = np.array([r["embedding"] for r in want], np.float64)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    if cos.min() < 0.9999:
        raise SystemExit(f"{what}: cosine {cos.min()} < 0.9999 against the CLI")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="build/release/tessera")
    ap.add_argument("--documents", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    import tessera
    here = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH"))
                                               if p)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    import ray
    from ray.cluster_utils import Cluster

    import tessera.ray as tray

    work = tempfile.mkdtemp(prefix="tessera-ray-cluster-")
    src = corpus.write_jsonl(os.path.join(work, "corpus.jsonl"), args.documents)
    began = time.monotonic()
    run = subprocess.run([args.cli, "--threads", "1", "embed", src, "-o",
                          os.path.join(work, "cli.jsonl")], capture_output=True, text=True,
                         check=True)
    cli_seconds = time.monotonic() - began
    tokens = int(re.search(r"(\d+) tokens in", run.stderr).group(1))
    want = read_rows(os.path.join(work, "cli.jsonl"))
    figures = {"documents": args.documents, "rows": len(want), "tokens": tokens,
               "cli_1_thread_seconds": cli_seconds, "runs": {}}

    began = time.monotonic()
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 0, "include_dashboard": False})
    ray._common.utils.reset_ray_address()
    nodes = [cluster.add_node(num_cpus=1)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
    figures["cluster_start_seconds"] = time.monotonic() - began
    count = 0

    def job(workers, inputs=(src,), lose=None):
        nonlocal count
        count += 1
        out = os.path.join(work, f"ray-{count}.jsonl")
        result = {}

        def target():
            result["report"] = tray.embed_corpus(list(inputs), out, workers=workers,
                                                 batch_size=args.batch_size, progress=False)

        t = threading.Thread(target=target)
        t.start()
        if lose is not None:
            total = -(-args.documents // args.batch_size)
            while t.is_alive() and sum(n.endswith(".json") and n.startswith("part-") for n in (
                    os.listdir(out + ".parts") if os.path.isdir(out + ".parts") else [])) < \
                    total // 3:
                time.sleep(0.05)
            cluster.remove_node(lose, allow_graceful=False)
        t.join()
        report = result["report"]
        return report, out

    def measure(name, workers, lose_node=False):
        runs = []
        for _ in range(args.repeats):
            victim = nodes[0] if lose_node else None
            report, out = job(workers, lose=victim)
            check(read_rows(out), want, name)
            runs.append(report)
            if lose_node:  # a fresh node for the next run
                nodes[0] = cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes()
        seconds = statistics.median(r["seconds"] for r in runs)
        embedding = statistics.median(r["embedding_seconds"] for r in runs)
        figures["runs"][name] = {
            "workers": workers, "seconds": seconds, "embedding_seconds": embedding,
            "startup_seconds": statistics.median(r["startup_seconds"] for r in runs),
            "tokens_per_second_per_worker": tokens / embedding / workers,
            "reruns": [r["reruns"] for r in runs], "nodes": [len(r["nodes"]) for r in runs],
            "all": [r["seconds"] for r in runs]}
        print(f"{name}: {seconds:.1f} s ({embedding:.1f} s embedding), "
              f"{tokens / embedding / workers:.0f} tokens/s per worker", flush=True)

    measure("1 node", 1)
    nodes.append(cluster.add_node(num_cpus=1))
    cluster.wait_for_nodes()
    measure("2 nodes", 2)
    measure("node lost", 2, lose_node=True)
    tiny = os.path.join(work, "tiny.jsonl")
    with open(src, encoding="utf-8") as f, open(tiny, "w", encoding="utf-8") as t:
        t.write(next(f) + next(f))
    fixed = [job(2, inputs=(tiny,))[0]["seconds"] for _ in range(args.repeats)]
    figures["fixed_job_seconds"] = statistics.median(fixed)
    print(f"fixed cost of a job: {figures['fixed_job_seconds']:.1f} s (2 documents); "
          f"cluster start {figures['cluster_start_seconds']:.1f} s; CLI --threads 1 "
          f"{cli_seconds:.1f} s for {tokens} tokens", flush=True)
    ray.shutdown()
    cluster.shutdown()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
