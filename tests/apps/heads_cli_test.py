"""`tessera rerank` and `tessera embed --sparse` on the tiny models against HF
transformers' outputs (data/models/tiny-*/expected.json), and the errors
that name the model's kind.

usage: heads_cli_test.py TESSERA_BINARY REPO_ROOT
"""

import json
import math
import pathlib
import subprocess
import sys
import tempfile

TOL = 1e-4


def run(binary, *args, stdin=None, want=0):
    r = subprocess.run([binary, *args], input=stdin, capture_output=True, text=True)
    assert r.returncode == want, f"{args}: exit {r.returncode}: {r.stderr}"
    return r


def main():
    binary, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    models = repo / "data" / "models"
    exp = json.loads((models / "tiny-bert-rerank" / "expected.json").read_text())
    query = exp["pairs"][0]["query"]
    pairs = [p for p in exp["pairs"] if p["query"] == query]
    texts = "\n".join(p["text"] for p in pairs) + "\n"
    rerank = [str(models / "tiny-bert-rerank")]
    out = run(binary, "rerank", "--model", *rerank, "--query", query, "--raw-scores", "-",
              stdin=texts).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert sorted(r["index"] for r in rows) == list(range(len(pairs)))
    for r in rows:
        assert abs(r["score"] - pairs[r["index"]]["scores"][0]) <= TOL, r
    jsonl = "".join(json.dumps({"text": p["text"]}) + "\n" for p in pairs)
    top = [json.loads(line) for line in run(binary, "rerank", "--model", *rerank, "-q", query,
                                            "--top-k", "1", "--return-text", "-",
                                            stdin=jsonl).stdout.splitlines()]
    assert len(top) == 1 and top[0]["index"] == rows[0]["index"]
    assert top[0]["text"] == pairs[top[0]["index"]]["text"]
    logit = pairs[top[0]["index"]]["scores"][0]
    assert abs(top[0]["score"] - 1 / (1 + math.exp(-logit))) <= TOL

    err = run(binary, "rerank", "--model", str(models / "tiny-bert"), "-q", "q", "-", stdin="a\n",
              want=2).stderr
    assert "needs a reranker" in err and "embedding model" in err, err
    err = run(binary, "embed", "--model", *rerank, "-", stdin="a", want=2).stderr
    assert "reranker" in err and "tessera rerank" in err, err

    sparse = json.loads((models / "tiny-splade" / "expected.json").read_text())["sparse"]
    docs = "".join(json.dumps({"id": i, "text": s["text"]}) + "\n" for i, s in enumerate(sparse))
    splade = str(models / "tiny-splade")
    out = run(binary, "embed", "--sparse", "--model", splade, "--stdin-format", "jsonl", "-",
              stdin=docs).stdout
    got = [json.loads(line) for line in out.splitlines()]
    assert [g["id"] for g in got] == list(range(len(sparse)))
    for g, s in zip(got, sparse):
        assert g["indices"] == s["indices"], (g["id"], g["indices"][:8], s["indices"][:8])
        assert max(abs(a - b) for a, b in zip(g["values"], s["values"])) <= TOL
    with tempfile.TemporaryDirectory() as tmp:
        err = run(binary, "embed", "--sparse", "--model", splade, "-", "-o", f"{tmp}/x.npy",
                  stdin="a", want=2).stderr
        assert ".npy" in err and "sparse" in err, err
        assert not pathlib.Path(f"{tmp}/x.npy").exists()
    err = run(binary, "embed", "--sparse", "--model", str(models / "tiny-bert"), "-", stdin="a",
              want=2).stderr
    assert "SPLADE" in err and "embedding model" in err, err
    help_text = run(binary, "rerank", "--help").stdout
    assert "--top-k" in help_text and "--raw-scores" in help_text
    print("ok")


if __name__ == "__main__":
    main()
