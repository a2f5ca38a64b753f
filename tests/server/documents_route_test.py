"""POST /embed_documents against `tessera embed`: one model path.

Usage: documents_route_test.py TESSERA_BINARY SOURCE_DIR ROWS_DIR
Long documents of data/long (tools/make_long_documents.py), one of each
risky kind, go through `tessera embed` (JSONL chunk rows: ROWS_DIR/rows.jsonl,
written by the ctest fixture cli.embed_long_documents; then --doc-embedding
here) and through the server's documents route. The chunks (ids, chunk numbers, offsets) must be
identical and the vectors equal up to float rounding of a different batch
composition (the largest difference is printed; 0 when measured). Then the
document vectors (--doc-embedding, doc_embedding) of two of them. Also: the route's errors
name the document at fault.
"""
import json
import pathlib
import subprocess
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from serve_cli_test import Server  # noqa: E402  (the same server harness)

# tools/make_long_documents.py's risky kinds (i % 5), all with prose: code
# (doc06), five non-Latin scripts with combining marks (doc08), CJK with no
# spaces (doc14); the ones the sanitizer suite's fixture embeds.
RISKY = ("doc06.txt", "doc08.txt", "doc14.txt")
MAX_DIFF = 1e-5  # same engine, other batch composition (as serve_cli_test)


def cli_rows(binary, paths, *flags):
    out = subprocess.run([binary, "embed", *paths, *flags], capture_output=True, text=True,
                         check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def compare(cli, served, what):
    assert len(cli) == len(served), f"{what}: {len(cli)} CLI rows, {len(served)} served"
    worst = 0.0
    for i, (a, b) in enumerate(zip(cli, served)):
        keys = set(a) - {"embedding"}
        assert keys == set(b) - {"embedding"}, f"{what} row {i}: fields {sorted(a)} vs {sorted(b)}"
        for k in keys:
            assert a[k] == b[k], f"{what} row {i}: {k} {a[k]!r} (CLI) vs {b[k]!r} (served)"
        diff = np.max(np.abs(np.array(a["embedding"]) - np.array(b["embedding"])))
        worst = max(worst, float(diff))
    assert worst <= MAX_DIFF, f"{what}: vectors differ by up to {worst:.3g} > {MAX_DIFF}"
    print(f"{what}: {len(cli)} rows identical in chunks and offsets; "
          f"max |vector difference| {worst:.3g}")


def main():
    binary, rows_dir = sys.argv[1], pathlib.Path(sys.argv[3])
    with open(rows_dir / "rows.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    # The route and `tessera embed` share one model path (src/pipeline), so
    # one document of each risky kind proves they agree; the CLI's rows for
    # all 20 are judged against sentence-transformers by cli.chunk_reference.
    paths = sorted({r["id"] for r in rows if pathlib.Path(r["id"]).name in RISKY})
    assert len(paths) == len(RISKY), f"{RISKY} not all in {rows_dir / 'rows.jsonl'}"
    cli_chunks = [r for r in rows if r["id"] in paths]
    documents = [{"id": p, "text": pathlib.Path(p).read_text(encoding="utf-8")} for p in paths]

    server = Server(binary, ["--payload-limit", "4M"])
    try:
        status, body = server.request("POST", "/embed_documents", {"documents": documents})
        assert status == 200, (status, body[:300])
        compare(cli_chunks, json.loads(body), "chunks")

        # Document vectors (the mean is checked, not the windows again): two
        # documents of several windows each, the two shortest (code, CJK;
        # 29K of text instead of 53K: each is embedded twice more here).
        pair = [i for i, p in enumerate(paths) if pathlib.Path(p).name != "doc08.txt"]
        status, body = server.request("POST", "/embed_documents",
                                      {"documents": [documents[i] for i in pair],
                                       "doc_embedding": True})
        assert status == 200, (status, body[:300])
        doc_rows = json.loads(body)
        assert len(doc_rows) == 2 and min(r["chunks"] for r in doc_rows) > 1, doc_rows
        compare(cli_rows(binary, [paths[i] for i in pair], "--doc-embedding"), doc_rows,
                "documents")

        # Plain strings get their index as id; errors name the document.
        status, body = server.request("POST", "/embed_documents", {"documents": ["a b", " "]})
        assert status == 422 and b"documents[1]" in body, (status, body)
        status, body = server.request("POST", "/embed_documents", {"texts": ["a"]})
        assert status == 422 and b"documents" in body, (status, body)
        status, body = server.request("POST", "/embed_documents", {"documents": ["one two"]})
        assert status == 200, (status, body)
        rows = json.loads(body)
        assert rows[0]["id"] == 0 and rows[0]["offsets"] == [0, 7], rows[0]
    finally:
        code, err = server.stop()
    assert code == 0, err


if __name__ == "__main__":
    main()
