"""`tessera serve` on the tiny cross-encoder, classifier and SPLADE models
(data/models/tiny-*): POST /rerank, /predict, /embed_sparse and POST / against
what HF transformers computed (expected.json: raw logits within 1e-4, TEI's
sigmoid / softmax on top), /info's model_type, TEI's 424 for a model of the
wrong kind on every route, and /tokenize's special-token texts on an
XLM-RoBERTa tokenizer.

usage: heads_routes_test.py TESSERA_BINARY REPO_ROOT
"""

import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_cli_test import Server  # noqa: E402  (the same server harness)

TOL = 1e-4


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def softmax(xs):
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    return [v / sum(e) for v in e]


def post(server, path, body, want=200):
    status, raw = server.request("POST", path, body)
    assert status == want, f"POST {path}: {status} {raw[:300]!r}"
    return json.loads(raw)


def close(a, b, what):
    assert abs(a - b) <= TOL, f"{what}: {a} vs {b}"


def check_reranker(server, exp):
    info = json.loads(server.request("GET", "/info")[1])
    assert info["model_type"] == {"reranker": {"id2label": {"0": "LABEL_0"},
                                               "label2id": {"LABEL_0": 0}}}, info["model_type"]
    query = exp["pairs"][0]["query"]
    pairs = [p for p in exp["pairs"] if p["query"] == query]
    texts = [p["text"] for p in pairs]
    for raw in (True, False):
        ranks = post(server, "/rerank", {"query": query, "texts": texts, "raw_scores": raw,
                                         "return_text": True})
        assert [r["score"] for r in ranks] == sorted((r["score"] for r in ranks), reverse=True)
        assert sorted(r["index"] for r in ranks) == list(range(len(texts)))
        for r in ranks:
            logit = pairs[r["index"]]["scores"][0]
            close(r["score"], logit if raw else sigmoid(logit), f"/rerank raw={raw} {r['index']}")
            assert r["text"] == texts[r["index"]]
    assert "text" not in post(server, "/rerank", {"query": query, "texts": texts})[0]
    # POST / is /rerank for a reranker (TEI's default route).
    assert post(server, "/", {"query": query, "texts": texts[:1]})[0]["index"] == 0
    # /predict serves a reranker too: one [{"score", "label"}] per pair.
    batch = post(server, "/predict", {"inputs": [[p["query"], p["text"]] for p in pairs],
                                      "raw_scores": True})
    for got, p in zip(batch, pairs):
        assert got[0]["label"] == "LABEL_0"
        close(got[0]["score"], p["scores"][0], "/predict on the reranker")
    for path, body in (("/embed", {"inputs": "a"}), ("/embed_all", {"inputs": "a"}),
                       ("/embed_sparse", {"inputs": "a"}),
                       ("/similarity", {"inputs": {"source_sentence": "a", "sentences": ["b"]}})):
        err = post(server, path, body, want=424)
        assert err["error_type"] == "Backend" and "reranker" in err["error"], (path, err)
    status, raw = server.request("POST", "/v1/embeddings", {"input": "a"})
    assert status == 424 and "message" in json.loads(raw)["error"], raw
    err = post(server, "/rerank", {"query": query, "texts": []}, want=400)
    assert err["error_type"] == "Empty"
    err = post(server, "/rerank", {"query": query, "texts": ["w " * 600], "truncate": False},
               want=422)
    assert err["field"] == "texts", err
    post(server, "/rerank", {"query": query, "texts": ["w " * 600], "truncate": True})


def check_classifier(server, exp):
    info = json.loads(server.request("GET", "/info")[1])
    assert info["model_type"]["classifier"]["id2label"] == {
        "0": "negative", "1": "neutral", "2": "positive"}, info
    labels = ["negative", "neutral", "positive"]
    case = exp["cases"][0]
    single = post(server, "/predict", {"inputs": case["text"]})
    probs = softmax(case["scores"])
    assert [p["score"] for p in single] == sorted((p["score"] for p in single), reverse=True)
    for p in single:
        close(p["score"], probs[labels.index(p["label"])], "/predict softmax")
    pairs = exp["pairs"]
    batch = post(server, "/predict", {"inputs": [[p["query"], p["text"]] for p in pairs],
                                      "raw_scores": True})
    assert len(batch) == len(pairs)
    for got, p in zip(batch, pairs):
        for g in got:
            close(g["score"], p["scores"][labels.index(g["label"])], "/predict raw pair")
    pair = post(server, "/predict", {"inputs": [pairs[0]["query"], pairs[0]["text"]],
                                     "raw_scores": True})
    assert isinstance(pair[0], dict) and len(pair) == 3
    assert post(server, "/rerank", {"query": "a", "texts": ["b"]}, want=424)["error_type"] == \
        "Backend"
    err = post(server, "/predict", {"inputs": [["a", "b", "c"]]}, want=422)
    assert err["field"] == "inputs[0]", err
    err = post(server, "/predict", {"inputs": [["a"]] * 40}, want=413)
    assert err["field"] == "inputs", err


def check_splade(server, exp):
    info = json.loads(server.request("GET", "/info")[1])
    assert info["model_type"] == {"embedding": {"pooling": "splade"}}, info["model_type"]
    want = exp["sparse"]
    got = post(server, "/embed_sparse", {"inputs": [s["text"] for s in want]})
    assert len(got) == len(want)
    for g, s in zip(got, want):
        assert [v["index"] for v in g] == s["indices"]
        for v, w in zip(g, s["values"]):
            close(v["value"], w, "/embed_sparse")
    assert post(server, "/", {"inputs": want[0]["text"]})[0][0]["index"] == want[0]["indices"][0]
    for path, body in (("/embed", {"inputs": "a"}), ("/rerank", {"query": "a", "texts": ["b"]}),
                       ("/predict", {"inputs": "a"})):
        assert post(server, path, body, want=424)["error_type"] == "Backend", path


def check_embedding_model(server):
    for path, body in (("/rerank", {"query": "a", "texts": ["b"]}), ("/predict", {"inputs": "a"}),
                       ("/embed_sparse", {"inputs": "a"})):
        err = post(server, path, body, want=424)
        assert "embedding model" in err["error"], (path, err)


def check_special_token_texts(server):
    # TEI's /tokenize names a special token by the tokenizer's text for it:
    # XLM-RoBERTa's are <s> and </s>, not BERT's [CLS] and [SEP].
    tokens = post(server, "/tokenize", {"inputs": "hello world"})[0]
    assert [tokens[0]["text"], tokens[-1]["text"]] == ["<s>", "</s>"], tokens
    assert tokens[0]["special"] and tokens[-1]["special"], tokens
    assert not any(t["special"] for t in tokens[1:-1]), tokens


def main():
    binary, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    models = repo / "data" / "models"
    checks = (("tiny-bert-rerank", check_reranker), ("tiny-bert-classify", check_classifier),
              ("tiny-splade", check_splade), ("tiny-bert", None),
              ("tiny-xlm-roberta", check_special_token_texts))
    for name, check in checks:
        server = Server(binary, ["--model", str(models / name)])
        try:
            if check is None:
                check_embedding_model(server)
            elif check is check_special_token_texts:
                check(server)
            else:
                check(server, json.loads((models / name / "expected.json").read_text()))
        finally:
            code, err = server.stop()
        assert code == 0, f"{name}: serve exited {code}: {err[-2000:]}"
        assert "leak" not in err.lower(), err[-2000:]
        print(f"ok: {name}")


if __name__ == "__main__":
    main()
