#!/usr/bin/env python3
"""How far quantized search agrees with float32 search: recall@k of int8,
uint8, binary and ubinary retrieval against float32's own top k, on the set
that make_queries.py writes (375 passages of data/sample and data/long, 100
queries each derived from one passage).

    .venv-bench/bin/python bench/quantization/recall.py                  # sentence-transformers
    .venv/bin/python bench/quantization/recall.py --engine tessera       # tessera's Python package
    ... --output bench/quantization/RESULTS.md                           # also write the table there

Embedding: --engine st is SentenceTransformer(model, device="cpu").encode;
--engine tessera is tessera.Embedder(model).encode. Both give the model's
float32 rows (unit rows for all-MiniLM-L6-v2, which ends in Normalize).

Quantization is the engine's own quantize_embeddings (sentence-transformers'
sentence_transformers.quantize_embeddings, or tessera.quantize_embeddings,
which follows its signature), applied to documents and queries alike:
  int8, uint8      calibration_embeddings = the document embeddings (the
                   ranges are the documents' per-dimension min and max, as
                   sentence-transformers recommends: a calibration set, not
                   the query batch); queries are quantized with the same
                   ranges and may fall outside them (clamped)
  binary, ubinary  packbits(x > 0) (binary: minus 128 as int8)

Search, exhaustive over all documents:
  float32          dot product of the rows, made unit rows (cosine): the truth
  int8, uint8      dot product of the integer values (int32 accumulation), as
                   a vector database's integer inner-product index does
                   (usearch i8 "ip", faiss IndexFlatIP fed uint8)
  binary, ubinary  Hamming distance of the packed bits (smaller is nearer)
Ties are broken by document order (a stable sort). recall@k = |quantized top
k & float32 top k| / k, averaged over the queries.

Rescored (as sentence-transformers' semantic_search_usearch / _faiss do with
rescore=True): the quantized search returns k * m candidates (m = 2, its
default rescore_multiplier, and 4), each rescored with the float32 query:
for int8 / uint8 against the candidate dequantized with the same ranges
(value (+ 128 for int8)) * steps + min, steps = (max - min) / 255); for
binary / ubinary against the candidate's unpacked 0/1 bits; the top k of
those scores is compared with float32's top k.

Also printed: how often the float32 top k holds the passage the query was
made from (a sanity check of the set, not of quantization).
"""

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PRECISIONS = ["int8", "uint8", "binary", "ubinary"]
MULTIPLIERS = [2, 4]
POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.int32)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


# ----------------------------------------------------------------------------- engines


def st_engine(model_dir, threads):
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer, quantize_embeddings

    torch.set_num_threads(threads)
    model = SentenceTransformer(model_dir, device="cpu")

    def encode(texts):
        return model.encode(texts, batch_size=32, convert_to_numpy=True)

    versions = (f"sentence-transformers {sentence_transformers.__version__}, "
                f"torch {torch.__version__}")
    return encode, quantize_embeddings, versions


def tessera_engine(model_dir, threads):
    try:
        import tessera
    except ImportError as e:
        sys.exit(f"recall.py: --engine tessera: cannot import tessera ({e}); run it with the "
                 "project venv's python (.venv/bin/python) after scripts/install-python.sh")
    quantize = getattr(tessera, "quantize_embeddings", None)
    if quantize is None:
        sys.exit("recall.py: --engine tessera: this tessera has no quantize_embeddings yet "
                 f"(tessera {getattr(tessera, '__version__', '?')} from "
                 f"{os.path.dirname(tessera.__file__)}); it is issue 32's work in progress. "
                 "Use --engine st meanwhile.")
    model = tessera.Embedder(model_dir, runtime=tessera.configure(threads=threads))

    def encode(texts):
        return np.asarray(model.encode(texts), np.float32)

    return encode, quantize, f"tessera {tessera.__version__}"


# ----------------------------------------------------------------------------- search


def top(scores, k, largest=True):
    """Indices of the k best per row; ties in document order."""
    order = np.argsort(-scores if largest else scores, axis=1, kind="stable")
    return order[:, :k]


def hamming(q, d):
    x = q.view(np.uint8)[:, None, :] ^ d.view(np.uint8)[None, :, :]
    return POPCOUNT[x].sum(axis=2)


def recall(found, truth):
    k = truth.shape[1]
    return float(np.mean([len(set(f[:k]) & set(t)) / k for f, t in zip(found, truth)]))


def dequantize(values, precision, ranges):
    ranges = ranges.astype(np.float32)
    steps = (ranges[1] - ranges[0]) / np.float32(255)
    steps = np.where(steps == 0, np.float32(1), steps)
    v = values.astype(np.float64) + (128 if precision == "int8" else 0)
    return v * steps + ranges[0]


def quantized_search(precision, q_float, d_float, quantize, k):
    """(top k, top k*m for each m, bytes per vector) of the quantized search."""
    if precision.endswith("int8"):
        dq = np.asarray(quantize(d_float, precision, calibration_embeddings=d_float))
        qq = np.asarray(quantize(q_float, precision, calibration_embeddings=d_float))
        scores = qq.astype(np.int32) @ dq.astype(np.int32).T
        largest = True
    else:
        dq = np.asarray(quantize(d_float, precision))
        qq = np.asarray(quantize(q_float, precision))
        scores = hamming(qq, dq)
        largest = False
    assert dq.dtype == (np.int8 if precision in ("int8", "binary") else np.uint8), dq.dtype
    plain = top(scores, k, largest)
    ranges = np.vstack((d_float.min(axis=0), d_float.max(axis=0)))
    rescored = []
    for m in MULTIPLIERS:
        cand = top(scores, k * m, largest)
        rows = []
        for i, c in enumerate(cand):
            if precision.endswith("int8"):
                docs = dequantize(dq[c], precision, ranges)
            else:  # binary holds ubinary - 128: undo it before unpacking
                bits = dq[c].view(np.uint8) ^ np.uint8(0x80 if precision == "binary" else 0)
                docs = np.unpackbits(bits, axis=1)[:, :d_float.shape[1]]
            s = docs.astype(np.float64) @ q_float[i].astype(np.float64)
            rows.append(c[np.argsort(-s, kind="stable")[:k]])
        rescored.append(np.array(rows))
    return plain, rescored, dq.shape[1] * dq.itemsize


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=["st", "tessera"], default="st")
    ap.add_argument("--model", default=os.path.join("models", "all-MiniLM-L6-v2"),
                    help="model folder (relative to the repository root or absolute)")
    ap.add_argument("--documents", default=os.path.join(HERE, "documents.jsonl"))
    ap.add_argument("--queries", default=os.path.join(HERE, "queries.jsonl"))
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--output", help="also write the markdown to this file")
    args = ap.parse_args()
    model_dir = args.model if os.path.isabs(args.model) else os.path.join(ROOT, args.model)

    docs = read_jsonl(args.documents)
    queries = read_jsonl(args.queries)
    make = st_engine if args.engine == "st" else tessera_engine
    encode, quantize, versions = make(os.path.realpath(model_dir), args.threads)
    t0 = time.perf_counter()
    d_float = np.asarray(encode([d["text"] for d in docs]), np.float32)
    q_float = np.asarray(encode([q["text"] for q in queries]), np.float32)
    embed_s = time.perf_counter() - t0

    def unit(x):
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    k = args.k
    truth = top(unit(q_float) @ unit(d_float).T, k)
    ids = {d["id"]: i for i, d in enumerate(docs)}
    source_hit = np.mean([ids[q["doc_id"]] in t for q, t in zip(queries, truth)])
    source_top1 = np.mean([ids[q["doc_id"]] == t[0] for q, t in zip(queries, truth)])

    rel = os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
    command = " ".join([os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(ROOT)
                        else sys.executable, rel] + [shlex.quote(a) for a in sys.argv[1:]])
    dim = d_float.shape[1]
    lines = [
        f"## recall@{k} of quantized search against float32 search",
        "",
        f"- command: `{command}`",
        f"- engine: {args.engine} ({versions}), numpy {np.__version__}, "
        f"python {platform.python_version()}",
        f"- model: {os.path.relpath(model_dir, ROOT)} (dim {dim})",
        f"- CPU: {cpu_model()} ({args.threads} threads); embedding "
        f"{len(docs) + len(queries)} texts took {embed_s:.1f} s",
        f"- set: {len(docs)} documents, {len(queries)} queries "
        f"(bench/quantization/make_queries.py); float32 top {k} holds the query's source "
        f"passage for {source_hit:.0%} of the queries (top 1: {source_top1:.0%})",
        "- int8 / uint8: ranges from the document embeddings (calibration_embeddings), "
        "integer dot product; binary / ubinary: Hamming distance; rescored: float32 query "
        "against the k x m candidates (dequantized, or the 0/1 bits), as "
        "sentence-transformers' semantic_search_* with rescore=True",
        "",
        f"| precision | bytes / vector | recall@{k} | "
        + " | ".join(f"rescored, {k * m} candidates" for m in MULTIPLIERS) + " |",
        "| --- | ---: | ---: | " + " | ".join("---:" for _ in MULTIPLIERS) + " |",
        f"| float32 | {4 * dim} | 1.000 | " + " | ".join("1.000" for _ in MULTIPLIERS) + " |",
    ]
    for p in PRECISIONS:
        plain, rescored, nbytes = quantized_search(p, q_float, d_float, quantize, k)
        lines.append(f"| {p} | {nbytes} | {recall(plain, truth):.3f} | "
                     + " | ".join(f"{recall(r, truth):.3f}" for r in rescored) + " |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
