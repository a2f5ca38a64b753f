"""`tessera serve` driven by the official client libraries, and TEI's other
routes on the real model.

Usage: client_libraries_test.py TESSERA_BINARY SOURCE_DIR
The server runs the default model (models/all-MiniLM-L6-v2) with --api-key,
so the clients' bearer tokens are checked too. A few texts only: CI time is
tight (under TESSERA_TEST_SANITIZED=1 fewer still, one per route).
- openai: OpenAI(base_url=<url>/v1).embeddings.create with float and base64
  encodings, `dimensions` and token-id inputs (/tokenize's ids without
  specials): the rows /embed gives; BadRequestError (400) for a bad value,
  NotFoundError (404 model_not_found) for another model; models.list() and
  models.retrieve() name the served model;
- huggingface_hub: InferenceClient(<url>).feature_extraction (POST /) gives
  /embed's rows, with truncation_direction and dimensions too, and with
  prompt_name="query" on tiny-qwen3 sentence-transformers' encode_query rows;
  .sentence_similarity (POST / with a similarity body) the cosines of
  /embed's rows;
- POST /v2/embed (Cohere's shape; the cohere package is not a dependency):
  float and base64 are /embed's rows, binary / ubinary numpy.packbits of
  their signs, int8 / uint8 (a second server with --quantization-ranges)
  sentence-transformers' quantize_embeddings formula;
- /tokenize's start / stop are UTF-8 byte offsets (TEI's), the `tokenizers`
  package's character offsets converted;
- /similarity: those cosines; /embed_all: one state per token (/tokenize's
  count, [CLS] and [SEP] included) whose mean, L2-normalized, is /embed's
  row; /decode: what the `tokenizers` package decodes from /tokenize's ids;
- /predict, /rerank, /embed_sparse: TEI's 424 for an embedding model.
"""
import base64
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from serve_cli_test import Server  # noqa: E402  (the same server harness)

API_KEY = "client-test-key"
MODEL = "all-MiniLM-L6-v2"  # the served model's name: its folder's
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
        r = client.embeddings.create(model=MODEL, input=texts, encoding_format=fmt)
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

    import openai
    # dimensions: the first N values, re-normalised (TEI's /embed does the same).
    short = np.asarray(post(server, "/embed", {"inputs": texts, "dimensions": 64}))
    r = client.embeddings.create(model=MODEL, input=texts, dimensions=64)
    assert_rows([d.embedding for d in r.data], short, "openai embeddings.create(dimensions=64)")
    # Token ids (without specials, as /tokenize gives them with add_special_tokens false)
    # embed as their text does.
    tokens = post(server, "/tokenize", {"inputs": texts, "add_special_tokens": False})
    ids = [[t["id"] for t in row] for row in tokens]
    r = client.embeddings.create(model=MODEL, input=ids, encoding_format="float")
    assert_rows([d.embedding for d in r.data], rows, "openai embeddings.create(token ids)")
    for bad, param in (({"dimensions": 0}, "dimensions"), ({"dimensions": 385}, "dimensions"),
                       ({"input": [[0, 10 ** 6]]}, "input[0][1]")):
        try:
            client.embeddings.create(**{"model": MODEL, "input": "a", **bad})
            raise AssertionError(f"{bad} was accepted")
        except openai.BadRequestError as e:
            assert e.status_code == 400 and e.param == param, (bad, e.param, e.body)
    try:
        client.embeddings.create(model="text-embedding-3-small", input="a")
        raise AssertionError("another model name was accepted")
    except openai.NotFoundError as e:
        assert e.code == "model_not_found" and e.param == "model", e.body
    assert [m.id for m in client.models.list()] == [MODEL]
    assert client.models.retrieve(MODEL).id == MODEL
    print("openai: dimensions, token ids, 400 / 404 errors, models.list / retrieve")


def check_huggingface_hub(server, texts, rows):
    # Given a URL the client talks to it only; its offline mode would block
    # that URL too.
    os.environ.pop("HF_HUB_OFFLINE", None)
    from huggingface_hub import InferenceClient
    client = InferenceClient(base_url=server.url, api_key=API_KEY)
    got = np.asarray([client.feature_extraction(t) for t in texts], dtype=np.float64)
    assert_rows(got.reshape(len(texts), -1), rows, "huggingface_hub feature_extraction")
    # TEI's options as the client sends them (truncation_direction in lower case).
    long_text = " ".join(texts * 40)
    want = np.asarray(post(server, "/embed", {"inputs": [long_text], "truncate": True,
                                              "truncation_direction": "Left"}))
    got = client.feature_extraction(long_text, truncate=True, truncation_direction="left")
    assert_rows(np.asarray(got).reshape(1, -1), want, "feature_extraction(truncation_direction)")
    head = np.asarray(post(server, "/embed", {"inputs": [long_text], "truncate": True}))
    assert float(np.max(np.abs(head - want))) > 1e-3, "Left and Right cut the same tokens"
    want = np.asarray(post(server, "/embed", {"inputs": texts[:1], "dimensions": 32}))
    got = client.feature_extraction(texts[0], dimensions=32)
    assert_rows(np.asarray(got).reshape(1, -1), want, "feature_extraction(dimensions=32)")
    if len(texts) < 2:
        return
    sims = client.sentence_similarity(texts[0], other_sentences=texts[1:])
    want = [cosine(rows[0], r) for r in rows[1:]]
    assert np.allclose(sims, want, atol=1e-5), f"sentence_similarity {sims} vs {want}"
    print(f"huggingface_hub sentence_similarity: {np.round(sims, 4).tolist()}")


def check_prompts(binary, source):
    """huggingface_hub's prompt_name on a model with a real "query" prompt
    (data/models/tiny-qwen3): the rows sentence-transformers' encode_query
    gives (data/features/expected.json)."""
    os.environ.pop("HF_HUB_OFFLINE", None)
    from huggingface_hub import InferenceClient
    with open(os.path.join(source, "data", "features", "expected.json")) as f:
        oracle = json.load(f)
    texts = [t["text"] for t in oracle["texts"]][:2 if SANITIZED else 4]
    want = np.asarray(oracle["tiny_qwen3"]["encode_query"]["rows"][:len(texts)])
    qwen = Server(binary, ["--model", os.path.join(source, "data", "models", "tiny-qwen3")])
    try:
        client = InferenceClient(base_url=qwen.url)
        got = np.asarray([client.feature_extraction(t, prompt_name="query", normalize=True)
                          for t in texts]).reshape(len(texts), -1)
        for g, w in zip(got, want):
            assert cosine(g, w) >= 0.9999, f"feature_extraction(prompt_name='query') {cosine(g, w)}"
        plain = np.asarray(client.feature_extraction(texts[0])).reshape(-1)
        assert cosine(plain, got[0]) < 0.9999, "the query prompt changed nothing"
    finally:
        code, err = qwen.stop()
    assert code == 0, f"tessera serve (tiny-qwen3) exited {code}: {err[-2000:]}"
    print("huggingface_hub: prompt_name matches sentence-transformers' encode_query")


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

    # TEI's start / stop are byte offsets into the UTF-8 text (Rust tokenizers'
    # offsets); the Python tokenizers package counts characters.
    for text, row in zip(texts, tokens):
        enc = tokenizer.encode(text)
        spans = [(len(text[:a].encode()), len(text[:b].encode()))
                 for (a, b), special in zip(enc.offsets, enc.special_tokens_mask) if not special]
        got = [(t["start"], t["stop"]) for t in row if not t["special"]]
        assert got == spans, f"/tokenize offsets {got} vs tokenizers' (in bytes) {spans}"
        assert all(t["text"] == text.encode()[t["start"]:t["stop"]].decode()
                   for t in row if not t["special"]), row
    print("/tokenize: UTF-8 byte offsets, as TEI")

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


def st_int8_uint8(emb, ranges):
    """sentence-transformers' quantize_embeddings for int8 / uint8 (6.x,
    sentence_transformers/util/quantization.py), in float32."""
    starts = ranges[0, :]
    steps = (ranges[1, :] - starts) / 255
    steps = np.where(steps == 0, 1, steps)
    q = np.clip(np.floor((emb - starts) / steps), 0, 255)
    return (q - 128).astype(np.int8), q.astype(np.uint8)


def check_cohere(server, binary, texts, rows):
    answer = post(server, "/v2/embed", {
        "model": MODEL, "texts": texts, "input_type": "search_document",
        "embedding_types": ["float", "base64", "binary", "ubinary"]})
    assert answer["response_type"] == "embeddings_by_type" and answer["texts"] == texts, answer
    assert answer["meta"]["billed_units"]["input_tokens"] > len(texts), answer["meta"]
    emb = answer["embeddings"]
    assert_rows(emb["float"], rows, "/v2/embed float")
    b64 = [np.frombuffer(base64.b64decode(s), dtype="<f4") for s in emb["base64"]]
    assert_rows(b64, rows, "/v2/embed base64")
    f32 = np.asarray(emb["float"], dtype=np.float32)
    assert emb["ubinary"] == np.packbits(f32 > 0, axis=-1).tolist(), "ubinary"
    assert emb["binary"] == (np.packbits(f32 > 0, axis=-1).astype(np.int16) - 128).tolist()
    status, raw = server.request("POST", "/v2/embed", {"texts": texts, "embedding_types": ["int8"]},
                                 AUTH)
    assert status == 400 and "--quantization-ranges" in json.loads(raw)["message"], raw

    # int8 / uint8 with calibration ranges of 128 dimensions (output_dimension 128).
    dims = 128
    short = np.asarray(post(server, "/embed", {"inputs": texts, "dimensions": dims}),
                       dtype=np.float32)
    ranges = np.vstack((short.min(0), short.max(0))).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ranges.npy")
        np.save(path, ranges)
        quantized = Server(binary, ["--api-key", API_KEY, "--quantization-ranges", path])
        try:
            got = post(quantized, "/v2/embed", {"texts": texts, "output_dimension": dims,
                                                "embedding_types": ["int8", "uint8", "float"]})
            status, raw = quantized.request("POST", "/v2/embed", {
                "texts": texts, "embedding_types": ["uint8"]}, AUTH)
        finally:
            code, err = quantized.stop()
        assert code == 0, err[-2000:]
    assert status == 400 and json.loads(raw)["field"] == "output_dimension", raw
    floats = np.asarray(got["embeddings"]["float"], dtype=np.float32)
    assert float(np.max(np.abs(floats - short))) <= MAX_DIFF
    # The same float32 rows through sentence-transformers' formula.
    want_int8, want_uint8 = st_int8_uint8(floats, ranges)
    assert got["embeddings"]["int8"] == want_int8.tolist(), "int8 differs from quantize_embeddings"
    assert got["embeddings"]["uint8"] == want_uint8.tolist(), "uint8 differs"
    print(f"/v2/embed: float, base64, binary, ubinary; int8 / uint8 at {dims} dimensions "
          "equal to sentence-transformers' quantize_embeddings")


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
        check_cohere(server, binary, texts, rows)
        check_prompts(binary, source)
    finally:
        code, err = server.stop()
    assert code == 0, f"tessera serve exited {code}: {err[-2000:]}"
    print("client libraries: OK")


if __name__ == "__main__":
    main()
