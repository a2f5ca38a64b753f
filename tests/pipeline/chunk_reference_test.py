"""The vector of every chunk `tessera embed` writes is the vector of its own text.

Usage: chunk_reference_test.py TESSERA_BINARY SOURCE_DIR ROWS_DIR [REFERENCE]
REFERENCE (default data/golden/long_chunks.json, all-MiniLM-L6-v2) may name
another model's reference, e.g. data/golden/mpnet/long_chunks.json
(all-mpnet-base-v2 at --max-tokens 256, the chunks MiniLM makes; its vectors
are float16, as its header's vector_dtype says).
ROWS_DIR holds what `tessera embed` (default options) wrote for the long
documents of data/long (tools/make_long_documents.py: prose, code, lists,
non-Latin scripts): rows.jsonl and summary.json, made by the ctest fixture
cli.embed_long_documents (tests/pipeline/CMakeLists.txt; all 20 documents, or
one of each risky kind under sanitizers). Compares every chunk with
data/golden/long_chunks.json, what
sentence-transformers gives for the text its offsets name
(tools/make_chunk_reference.py; torch is never installed by CI, so the
reference is committed). The chunks (offsets, sha256 of the text) must be the
reference's; each vector must be within cosine MIN_COSINE of the reference's.
Prints the worst cosine (document, chunk, offsets) and the count.
"""
import base64
import hashlib
import json
import os
import pathlib
import sys

import numpy as np

MIN_COSINE = 0.9999
REGENERATE = ("if the chunking, data/long or the model changed on purpose, regenerate the "
              "reference: bash bench/embed/setup-venv.sh && .venv-bench/bin/python "
              "tools/make_chunk_reference.py --tessera {binary}")


def fixture_rows(rows_dir):
    """The chunk rows and summary the fixture's `tessera embed` wrote."""
    rows_dir = pathlib.Path(rows_dir)
    with open(rows_dir / "rows.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    with open(rows_dir / "summary.json", encoding="utf-8") as f:
        return rows, json.load(f)


def decode(vector, dtype):
    return np.frombuffer(base64.b64decode(vector), dtype=dtype).astype(np.float64)


def main():
    binary, source, rows_dir = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    reference_path = (pathlib.Path(sys.argv[4]) if len(sys.argv) > 4
                      else source / "data" / "golden" / "long_chunks.json")
    with open(reference_path, encoding="utf-8") as f:
        reference = json.load(f)
    dtype = reference["header"].get("vector_dtype", "<f4")
    by_name = {d["name"]: d["chunks"] for d in reference["documents"]}
    paths = sorted(str(p) for p in (source / "data" / "long").glob("doc*.txt"))
    assert len(paths) == 20 and sorted(by_name) == [pathlib.Path(p).name for p in paths], (
        f"data/long has {[pathlib.Path(p).name for p in paths]}, the reference "
        f"{sorted(by_name)}; {REGENERATE.format(binary=binary)}")
    rows, summary = fixture_rows(rows_dir)
    by_doc = {}
    for r in rows:
        by_doc.setdefault(r["id"], []).append(r)
    if os.environ.get("TESSERA_TEST_SANITIZED"):
        paths = [p for p in paths if p in by_doc]  # the fixture's subset
    elif os.environ.get("TESSERA_TEST_DOCUMENTS"):
        # The fixture embedded these documents only (tests/pipeline/CMakeLists.txt).
        chosen = set(os.environ["TESSERA_TEST_DOCUMENTS"].split(","))
        paths = [p for p in paths if pathlib.Path(p).name in chosen]
        assert len(paths) == len(chosen), (sorted(chosen), paths)
    assert paths and sorted(by_doc) == paths, f"rows for {sorted(by_doc)}, expected {paths}"
    cosines = []  # (cosine, where)
    for path in paths:
        name = pathlib.Path(path).name
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        got, want = by_doc[path], by_name[name]
        got_spans = [tuple(r["offsets"]) for r in got]
        want_spans = [tuple(c["offsets"]) for c in want]
        if got_spans != want_spans:
            i = next((i for i, (a, b) in enumerate(zip(got_spans, want_spans)) if a != b),
                     min(len(got_spans), len(want_spans)))
            raise AssertionError(
                f"{name}: the chunks changed: {len(got_spans)} chunks, reference "
                f"{len(want_spans)}; chunk {i}: {got_spans[i:i + 1]} vs reference "
                f"{want_spans[i:i + 1]}; {REGENERATE.format(binary=binary)}")
        for i, (r, c) in enumerate(zip(got, want)):
            assert r["chunk"] == i, (name, i, r["chunk"])
            b, e = r["offsets"]
            digest = hashlib.sha256(text[b:e].encode("utf-8")).hexdigest()
            assert digest == c["sha256"], (
                f"{name} chunk {i} [{b}, {e}): its text is not the reference's "
                f"(data/long changed?); {REGENERATE.format(binary=binary)}")
            v, ref = np.asarray(r["embedding"], dtype=np.float64), decode(c["vector"], dtype)
            assert v.shape == ref.shape, (name, i, v.shape, ref.shape)
            cosine = float(v @ ref / (np.linalg.norm(v) * np.linalg.norm(ref)))
            cosines.append((cosine, f"{name} chunk {i} offsets [{b}, {e})"))
    # The tokens embedded ([CLS] and [SEP] included) are as many as
    # sentence-transformers' tokenizer makes of the chunks' texts.
    st_tokens = sum(c["tokens"] for p in paths for c in by_name[pathlib.Path(p).name])
    worst = min(cosines)
    print(f"{len(cosines)} chunks of {len(paths)} documents, {summary['tokens']} tokens "
          f"(sentence-transformers: {st_tokens}); tessera embed {summary['seconds']:.1f} s; "
          f"worst cosine to sentence-transformers {worst[0]:.9f} (1 - {1 - worst[0]:.2e}; "
          f"{worst[1]}); bound {MIN_COSINE}; {reference['header']['model']}")
    below = sorted(c for c in cosines if c[0] < MIN_COSINE)
    assert not below, (f"{len(below)} chunks below cosine {MIN_COSINE}: " +
                       "; ".join(f"{c:.6f} {where}" for c, where in below[:10]))
    assert summary["tokens"] == st_tokens, (
        f"tessera embedded {summary['tokens']} tokens, sentence-transformers tokenizes the "
        f"chunks' texts into {st_tokens}")

if __name__ == "__main__":
    main()
