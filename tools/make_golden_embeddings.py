#!/usr/bin/env python3
"""Writes data/golden/embeddings.jsonl: the reference embeddings that
tests/model/golden_test.cc compares tessera against.

The reference is sentence-transformers on torch (CPU, float32). torch is large
and CI never installs it, so the outputs are committed; regenerate them only
when the inputs or the model change:

    python3 -m venv .venv-golden
    .venv-golden/bin/pip install sentence-transformers torch
    .venv-golden/bin/python tools/make_golden_embeddings.py

(.venv-bench, made by bench/embed/setup-venv.sh, has both.) Another model, with
its outputs in their own folder (embeddings.jsonl + MANIFEST.json there):

    bash scripts/install-mpnet.sh
    .venv-bench/bin/python tools/make_golden_embeddings.py \
        --model models/all-mpnet-base-v2 --out-dir data/golden/mpnet

Each output row: {"id", "token_ids", "embedding"} in input order. token_ids are
the ids the model saw ([CLS] ... [SEP], or <s> ... </s> for MPNet, truncated
to max_seq_length): the C++
test can feed them to the encoder directly, which separates encoder errors from
tokenizer errors. Embeddings are rounded to 6 decimals (cosine error < 1e-9).
They are what model.encode gives, through every module of the folder's
modules.json: normalized for a model with a Normalize module (all-mpnet-base-v2),
not otherwise.
"""

import argparse
import json
import os
import platform

import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))
    ap.add_argument("--inputs", default=os.path.join(ROOT, "data", "golden", "inputs.jsonl"))
    ap.add_argument("--output", default=os.path.join(ROOT, "data", "golden", "embeddings.jsonl"))
    ap.add_argument("--manifest", default=os.path.join(ROOT, "data", "golden", "MANIFEST.json"))
    ap.add_argument("--out-dir", default=None,
                    help="write DIR/embeddings.jsonl and DIR/MANIFEST.json "
                         "(instead of --output and --manifest)")
    args = ap.parse_args()
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        args.output = os.path.join(args.out_dir, "embeddings.jsonl")
        args.manifest = os.path.join(args.out_dir, "MANIFEST.json")

    with open(args.inputs, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    texts = [r["text"] for r in rows]

    torch.manual_seed(0)
    model = SentenceTransformer(os.path.realpath(args.model), device="cpu")
    model.eval()
    features = model.tokenize(texts)
    ids = features["input_ids"]
    mask = features["attention_mask"]
    with torch.no_grad():
        emb = model.encode(texts, batch_size=8, convert_to_numpy=True,
                           normalize_embeddings=False)

    with open(args.output, "w", encoding="utf-8") as f:
        for i, r in enumerate(rows):
            n = int(mask[i].sum())
            out = {
                "id": r["id"],
                "token_ids": [int(t) for t in ids[i][:n]],
                "embedding": [round(float(x), 6) for x in emb[i]],
            }
            f.write(json.dumps(out, separators=(",", ":")) + "\n")

    manifest = {
        "model": os.path.basename(os.path.normpath(args.model)),
        "max_seq_length": model.max_seq_length,
        "modules": [type(m).__name__ for m in model],
        "dim": int(emb.shape[1]),
        "rows": len(rows),
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "device": "cpu",
        "dtype": "float32",
        "rounding": "6 decimals",
    }
    with open(args.manifest, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"wrote {len(rows)} rows to {args.output}")


if __name__ == "__main__":
    main()
