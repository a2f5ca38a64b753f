"""`tessera serve` driven by the official client libraries, and TEI's other
routes on the real model.

Usage: client_libraries_test.py TESSERA_BINARY SOURCE_DIR
The server runs the default model (models/all-MiniLM-L6-v2) with --api-key,
so the clients' bearer tokens are checked too. A few texts only: CI time is
tight (under TESSERA_TEST_SANITIZED=1 fewer still, one per route).
- openai: OpenAI(base_url=<url>/v1).embeddings.create with float and base64
  encodings: the rows /embed gives;
- huggingface_hub: InferenceClient(<url>).feature_extraction (POST /) gives
  /embed's rows, .sentence_similarity (POST / with a similarity body) the
  cosines of /embed's rows;
- /similarity: those cosines; /embed_all: one state per token (/tokenize's
  count, [CLS] and [SEP] included) whose mean, L2-normalized, is /embed's
  row; /decode: what the `tokenizers` package decodes from /tokenize's ids;
- /predict, /rerank, /embed_sparse: TEI's 424 for an embedding model.
"""
import json
import os
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from serve_cli_test import Server  # noqa: E402  (the same server harness)

API_KEY = "client-test-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
# Same engine, other batch composition (as serve_cli_test's MAX_DIFF_CLI).
MAX_DIFF = 1e-5
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Don't panic: it's only a test, isn't it?",
    "Café au lait, naïve résumé — 東京 and 北京.",
    "xqzvbrt unbelievably flibbertigibbet!",
]
SANITIZED = bool(os.environ.get("TESSERA_TEST_SANITIZED"))


def post(server, path, body):
    status, raw = server.request("POST", path, body, AUTH)
    assert status == 200, f"POST {path}: {status} {raw[:300]!r}"
    return json.loads(raw)


def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def assert_rows(got, want, what):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, /embed's {want.shape}"
    diff = float(np.max(np.abs(got - want)))
    assert diff <= MAX_DIFF, f"{what}: differs from /embed by {diff}"
    print(f"{what}: {got.shape[0]} rows, max |diff| vs /embed {diff:.2e}")


def check_openai(server, texts, rows):
    from openai import OpenAI
    client = OpenAI(base_url=server.url + "/v1", api_key=API_KEY, max_retries=0)
    for fmt in ("float", "base64"):
        r = client.embeddings.create(model="all-MiniLM-L6-v2", input=texts, encoding_format=fmt)
        got = [d.embedding for d in sorted(r.data, key=lambda d: d.index)]
        if fmt == "base64" and isinstance(got[0], str):  # older clients leave it encoded
            got = [np.frombuffer(__import__("base64").b64decode(g), dtype="<f4") for g in got]
        assert_rows(got, rows, f"openai embeddings.create({fmt})")
        assert r.usage.prompt_tokens > len(texts), r.usage
    try:
        OpenAI(base_url=server.url + "/v1", api_key="wrong", max_retries=0).embeddings.create(
            model="m", input="a")
        raise AssertionError("a wrong API key was accepted")
    except Exception as e:  # openai.AuthenticationError
        assert getattr(e, "status_code", None) == 401, repr(e)


def check_huggingface_hub(server, texts, rows):
    # Given a URL the client talks to it only; its offline mode would block
    # that URL too.
    os.environ.pop("HF_HUB_OFFLINE", None)
    from huggingface_hub import InferenceClient
    client = InferenceClient(base_url=server.url, api_key=API_KEY)
    got = np.asarray([client.feature_extraction(t) for t in texts], dtype=np.float64)
    assert_rows(got.reshape(len(texts), -1), rows, "huggingface_hub feature_extraction")
    if len(texts) < 2:
        return
    sims = client.sentence_similarity(texts[0], other_sentences=texts[1:])
    want = [cosine(rows[0], r) for r in rows[1:]]
    assert np.allclose(sims, want, atol=1e-5), f"sentence_similarity {sims} vs {want}"
    print(f"huggingface_hub sentence_similarity: {np.round(sims, 4).tolist()}")


def check_tei_routes(server, texts, rows, tokenizer):
    assert_rows(post(server, "/", {"inputs": texts}), rows, "POST /")
    if len(texts) >= 2:
        sims = post(server, "/similarity",
                    {"inputs": {"source_sentence": texts[0], "sentences": texts[1:]}})
        want = [cosine(rows[0], r) for r in rows[1:]]
        assert np.allclose(sims, want, atol=1e-5), f"/similarity {sims} vs {want}"

    states = post(server, "/embed_all", {"inputs": texts})
    tokens = post(server, "/tokenize", {"inputs": texts})
    assert len(states) == len(texts)
    worst = 0.0
    for i, text in enumerate(texts):
        s = np.asarray(states[i], dtype=np.float64)
        assert s.shape == (len(tokens[i]), rows.shape[1]), \
            f"/embed_all[{i}]: shape {s.shape}, {len(tokens[i])} tokens"
        mean = s.mean(axis=0)  # every token is attended: the mask is all ones
        mean /= np.linalg.norm(mean)
        worst = max(worst, float(np.max(np.abs(mean - rows[i]))))
    assert worst <= MAX_DIFF, f"/embed_all mean-pooled and normalized differs by {worst}"
    print(f"/embed_all: token states pool to /embed's rows (max |diff| {worst:.2e})")

    ids = [[t["id"] for t in row] for row in tokens]
    for skip in (True, False):
        got = post(server, "/decode", {"ids": ids, "skip_special_tokens": skip})
        want = [tokenizer.decode(i, skip_special_tokens=skip) for i in ids]
        assert got == want, f"/decode skip={skip}: {got} vs tokenizers {want}"
    status, raw = server.request("POST", "/decode", {"ids": [[101], [101, 10 ** 9]]}, AUTH)
    err = json.loads(raw)
    assert status == 422 and err["error_type"] == "Tokenizer" and "ids[1][1]" in err["error"], raw
    print(f"/decode: {len(ids)} lists equal to tokenizers' decode")

    for path in ("/predict", "/rerank", "/embed_sparse"):
        status, raw = server.request("POST", path, {"inputs": "a", "query": "q", "texts": ["a"]},
                                     AUTH)
        assert status == 424 and json.loads(raw)["error_type"] == "Backend", (path, status, raw)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(
        os.path.join(source, "models", "all-MiniLM-L6-v2", "tokenizer.json"))
    texts = TEXTS[:2] if SANITIZED else TEXTS
    server = Server(binary, ["--api-key", API_KEY])
    try:
        rows = np.asarray(post(server, "/embed", {"inputs": texts}), dtype=np.float64)
        check_openai(server, texts, rows)
        check_huggingface_hub(server, texts, rows)
        check_tei_routes(server, texts, rows, tokenizer)
    finally:
        code, err = server.stop()
    assert code == 0, f"tessera serve exited {code}: {err[-2000:]}"
    print("client libraries: OK")


if __name__ == "__main__":
    main()
