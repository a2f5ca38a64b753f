#!/usr/bin/env python3
"""Builds tiny sentence-transformers folders whose modules go past
Transformer + Pooling (issue 48), with sentence-transformers' own classes and
save(), and their expected outputs from its own encode():

    data/models/tiny-bert-dense   tiny-bert's Transformer, mean Pooling, then
        Dense 32 -> 24 (Tanh, bias), Dense 24 -> 24 (GELU, use_residual: x
        added), Dense 24 -> 16 (Identity, no bias, use_residual: a projected
        residual), Normalize; saved by sentence-transformers 6.3 (module
        types by their 6.x paths, each Dense's model.safetensors).

expected.json: {"generator": versions and seed, "cases": [{"text",
"token_ids", "embedding"}]} with encode()'s rows in float32.

    data/golden/pooling_modes.json   tiny-bert pooled by sentence-transformers'
        "mean_sqrt_len_tokens" and "weightedmean" modes ({"modes": {mode:
        [{"text", "token_ids", "embedding"}]}}, no Normalize).

    data/golden/similarity.json   sentence-transformers' similarity functions
        (cosine, dot, euclidean, manhattan; matrix and pairwise) on fixed
        random rows, for Embedder.similarity / similarity_pairwise.

    data/golden/rerank_no_token_types.json   tiny-bert-rerank's pairs scored
        by sentence-transformers' CrossEncoder with the folder's
        tokenizer_config.json saying model_input_names ["input_ids",
        "attention_mask"]: the tokenizer then passes no token_type_ids and the
        model reads zeros ({"pairs": [{"query", "text", "token_type_ids",
        "score"}]}, raw logits).

Run it in the benchmark venv (torch, sentence-transformers; never in CI):

    .venv-bench/bin/python tools/make_module_models.py
"""
import json
import pathlib
import shutil
import sys

import numpy as np
import torch
import transformers
import sentence_transformers
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Dense, Normalize, Pooling, Transformer

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEED = 20261207
TEXTS = ["Hello", "The quick brown fox jumps over the lazy dog.",
         "Dense layers after pooling, as LaBSE and EmbeddingGemma have them.",
         "naïve café, 東京 and numbers 12,345", ""]


def build_dense(out):
    torch.manual_seed(SEED)
    transformer = Transformer(str(ROOT / "data" / "models" / "tiny-bert"))
    pooling = Pooling(transformer.get_embedding_dimension(), "mean")
    modules = [transformer, pooling,
               Dense(32, 24, activation_function=torch.nn.Tanh()),
               Dense(24, 24, activation_function=torch.nn.GELU(), use_residual=True),
               Dense(24, 16, bias=False, activation_function=torch.nn.Identity(),
                     use_residual=True),
               Normalize()]
    for m in modules[2:5]:  # far from identity, so a wrong weight or order shows
        with torch.no_grad():
            for p in m.parameters():
                p.normal_(0.0, 0.5)
    model = SentenceTransformer(modules=modules, device="cpu").eval()
    if out.exists():
        shutil.rmtree(out)
    model.save(str(out))
    (out / "README.md").unlink()  # a generated model card: nothing tessera reads
    again = SentenceTransformer(str(out), device="cpu")  # what a user loads
    cases = []
    for text in TEXTS:
        ids = again.tokenize([text])["input_ids"][0].tolist()
        row = again.encode([text], convert_to_numpy=True)[0]
        cases.append({"text": text, "token_ids": ids,
                      "embedding": [float(f"{x:.7g}") for x in row.tolist()]})
    expected = {"generator": {"sentence_transformers": sentence_transformers.__version__,
                              "transformers": transformers.__version__,
                              "torch": torch.__version__, "seed": SEED},
                "cases": cases}
    with open(out / "expected.json", "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{out}: {len(cases)} cases, dim {len(cases[0]['embedding'])}")


def build_rerank_without_token_types(out):
    import tempfile
    from sentence_transformers import CrossEncoder
    source = ROOT / "data" / "models" / "tiny-bert-rerank"
    pairs = json.load(open(source / "expected.json"))["pairs"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp) / "model"
        shutil.copytree(source, folder)
        config = json.load(open(folder / "tokenizer_config.json"))
        config["model_input_names"] = ["input_ids", "attention_mask"]
        json.dump(config, open(folder / "tokenizer_config.json", "w"), indent=2)
        model = CrossEncoder(str(folder), device="cpu", activation_fn=torch.nn.Identity())
        features = model.tokenizer([p["query"] for p in pairs], [p["text"] for p in pairs],
                                   padding=True, return_tensors="pt")
        assert "token_type_ids" not in features, list(features)
        scores = model.predict([[p["query"], p["text"]] for p in pairs])
    rows = [{"query": p["query"], "text": p["text"], "score": float(f"{s:.7g}")}
            for p, s in zip(pairs, scores.tolist())]
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"generator": {"sentence_transformers": sentence_transformers.__version__,
                                 "transformers": transformers.__version__},
                   "model": "data/models/tiny-bert-rerank with model_input_names "
                            "[input_ids, attention_mask]", "pairs": rows},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{out}: {len(rows)} pairs")


def build_pooling_modes(out):
    modes = {}
    for mode in ("mean_sqrt_len_tokens", "weightedmean"):
        transformer = Transformer(str(ROOT / "data" / "models" / "tiny-bert"))
        model = SentenceTransformer(
            modules=[transformer, Pooling(transformer.get_embedding_dimension(), mode)],
            device="cpu").eval()
        rows = []
        for text in TEXTS:
            ids = model.tokenize([text])["input_ids"][0].tolist()
            row = model.encode([text], convert_to_numpy=True)[0]
            rows.append({"text": text, "token_ids": ids,
                         "embedding": [float(f"{x:.7g}") for x in row.tolist()]})
        modes[mode] = rows
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"generator": {"sentence_transformers": sentence_transformers.__version__},
                   "model": "data/models/tiny-bert with its Pooling module's mode replaced",
                   "modes": modes}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{out}: {', '.join(modes)}")


def build_similarity(out):
    from sentence_transformers.util import similarity as su
    rng = np.random.default_rng(SEED)
    a = rng.normal(size=(3, 8)).astype(np.float32)
    b = rng.normal(size=(4, 8)).astype(np.float32)
    matrix = {"cosine": su.cos_sim, "dot": su.dot_score, "euclidean": su.euclidean_sim,
              "manhattan": su.manhattan_sim}
    pairwise = {"cosine": su.pairwise_cos_sim, "dot": su.pairwise_dot_score,
                "euclidean": su.pairwise_euclidean_sim, "manhattan": su.pairwise_manhattan_sim}
    r = lambda x: [float(f"{v:.7g}") for v in np.asarray(x, np.float64).ravel()]  # noqa: E731
    doc = {"generator": {"sentence_transformers": sentence_transformers.__version__},
           "a": [r(row) for row in a], "b": [r(row) for row in b],
           "matrix": {k: [r(row) for row in f(a, b).numpy()] for k, f in matrix.items()},
           "pairwise": {k: r(f(a, b[:3]).numpy()) for k, f in pairwise.items()}}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{out}: {', '.join(matrix)}")


def main():
    build_dense(ROOT / "data" / "models" / "tiny-bert-dense")
    build_similarity(ROOT / "data" / "golden" / "similarity.json")
    build_pooling_modes(ROOT / "data" / "golden" / "pooling_modes.json")
    build_rerank_without_token_types(ROOT / "data" / "golden" / "rerank_no_token_types.json")


if __name__ == "__main__":
    sys.exit(main())
