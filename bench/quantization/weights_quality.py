#!/usr/bin/env python3
"""The quality gate of tessera's lower-precision weights (`--weights bf16 /
int8`, issue 33): worst cosine to sentence-transformers' f32 embeddings on the
golden set, and retrieval agreement with tessera's f32 weights on the
query/document set of make_queries.py.

    PYTHONPATH=build/release/python .venv/bin/python \\
        bench/quantization/weights_quality.py [--weights int8 bf16] [--threads 2]

Golden: data/golden/inputs.jsonl embedded with Embedder(weights=W).encode
(truncated at the model's max_seq_length, as sentence-transformers does),
cosine to data/golden/embeddings.jsonl (sentence-transformers f32); the worst
row is printed with its id.

Retrieval: bench/quantization/documents.jsonl and queries.jsonl embedded with
f32 weights (the truth) and with W; exhaustive cosine search over the
documents; recall@k = |top k with W & top k with f32| / k, averaged over the
queries. Ties break in document order. Less noisy than recall on 100
queries (a change of quantization moves it by about +-0.005): the mean of
1 - cosine of the documents to their f32-weights rows, and recall@k with the
375 documents as the queries (each its own nearest excluded).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def unit(x):
    x = np.asarray(x, np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def top(scores, k):
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", nargs="+", default=["int8"], help="precisions to judge")
    ap.add_argument("--model", default=os.path.join("models", "all-MiniLM-L6-v2"))
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import tessera

    model = args.model if os.path.isabs(args.model) else os.path.join(ROOT, args.model)
    runtime = tessera.configure(threads=args.threads)
    texts = {r["id"]: r["text"] for r in read_jsonl(os.path.join(ROOT, "data/golden/inputs.jsonl"))}
    golden = read_jsonl(os.path.join(ROOT, "data/golden/embeddings.jsonl"))
    docs = [d["text"] for d in read_jsonl(os.path.join(HERE, "documents.jsonl"))]
    queries = [q["text"] for q in read_jsonl(os.path.join(HERE, "queries.jsonl"))]

    def embed(weights):
        e = tessera.Embedder(os.path.realpath(model), weights=weights, runtime=runtime)
        g = unit(e.encode([texts[r["id"]] for r in golden]))
        t0 = time.perf_counter()
        d, q = unit(e.encode(docs)), unit(e.encode(queries))
        return g, d, q, time.perf_counter() - t0

    ref = unit([r["embedding"] for r in golden])
    _, d32, q32, _ = embed("f32")
    truth = top(q32 @ d32.T, args.k)
    print(f"{len(golden)} golden inputs; {len(docs)} documents, {len(queries)} queries; "
          f"tessera {tessera.__version__}, {args.threads} threads")
    for w in ["f32"] + [w for w in args.weights if w != "f32"]:
        try:
            g, d, q, secs = embed(w)
        except Exception as e:  # noqa: BLE001 - a refusal: say it and go on
            print(f"{w}: refused: {e}")
            continue
        cos = (g * ref).sum(1)
        worst = int(np.argmin(cos))
        found = top(q @ d.T, args.k)
        rec = np.mean([len(set(f) & set(t)) / args.k for f, t in zip(found, truth)])
        doc_cos = (d * d32).sum(1)
        self32, self_w = d32 @ d32.T, d @ d.T
        np.fill_diagonal(self32, -np.inf)
        np.fill_diagonal(self_w, -np.inf)
        doc_rec = np.mean([len(set(f) & set(t)) / args.k
                           for f, t in zip(top(self_w, args.k), top(self32, args.k))])
        print(f"{w}: worst cosine to sentence-transformers f32 {cos[worst]:.6f} "
              f"({golden[worst]['id']}); recall@{args.k} vs f32 weights {rec:.4f}; "
              f"worst document cosine to f32 weights {doc_cos.min():.6f}; "
              f"mean document 1 - cosine {max(0.0, np.mean(1 - doc_cos)):.2e}; "
              f"documents as queries recall@{args.k} {doc_rec:.4f}; set embedded in {secs:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
