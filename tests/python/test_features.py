"""Embedder.encode's sentence-transformers options (issue 32): prompt_name /
prompt, truncate_dim, precision, encode_query / encode_document, against
what sentence-transformers 6.3 computes (data/features/expected.json;
tools/make_feature_oracle.py): rows within cosine 0.9999 and the same norms;
quantized rows at most one bucket (int8 / uint8) or one sign bit of a
near-zero value (binary) away, since our floats are not torch's to the bit."""

import json
import warnings

import numpy as np
import pytest

import tessera
from conftest import REPO, cosine_rows


@pytest.fixture(scope="module")
def oracle():
    with open(REPO / "data" / "features" / "expected.json", encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def texts(oracle):
    return [t["text"] for t in oracle["texts"]]


@pytest.fixture(scope="module")
def minilm():
    return tessera.Embedder(REPO / "models" / "all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def qwen():
    return tessera.Embedder(REPO / "data" / "models" / "tiny-qwen3")


def assert_rows(got, case, what):
    want = np.array(case["rows"], np.float32)
    assert got.dtype == np.float32 and list(got.shape) == case["shape"], what
    assert cosine_rows(got, want).min() >= 0.9999, what
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), np.linalg.norm(want, axis=1),
                               atol=1e-4, err_msg=what)


def test_prompts_are_sentence_transformers(oracle, minilm, qwen):
    # Every model has "query" and "document" ("" unless it defines them).
    assert minilm.prompts == oracle["minilm"]["prompts"] == {"query": "", "document": ""}
    assert minilm.default_prompt_name is None
    assert qwen.prompts == oracle["tiny_qwen3"]["prompts"]
    assert qwen.default_prompt_name == oracle["tiny_qwen3"]["default_prompt_name"]


def test_truncate_dim_rows(oracle, texts, minilm):
    for case in oracle["minilm"]["truncate_dim"]:
        got = minilm.encode(texts, truncate_dim=case["dim"],
                            normalize_embeddings=case["normalize_embeddings"])
        what = f"truncate_dim={case['dim']}, normalize_embeddings={case['normalize_embeddings']}"
        if case["normalize_embeddings"]:
            assert_rows(got, case, what)
        else:
            # sentence-transformers cuts the model's unit rows (norms 0.55-0.69);
            # tessera re-normalizes them when the model normalizes (docs/PYTHON.md).
            want = np.array(case["rows"], np.float32)
            assert got.shape == want.shape
            assert cosine_rows(got, want).min() >= 0.9999, what
            assert np.linalg.norm(want, axis=1).max() < 0.7
            np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_prompt_rows(oracle, texts, minilm):
    case = oracle["minilm"]["prompt"]
    got = minilm.encode(texts, prompt=case["prompt"])
    assert_rows(got, case, "prompt")  # the long text: the prompt's tokens count toward 256
    # The prompt is the text's prefix, as the model sees it.
    np.testing.assert_allclose(got, minilm.encode([case["prompt"] + t for t in texts]),
                               atol=1e-6)
    # MiniLM's prompts are "": encode_query and encode_document are encode.
    assert oracle["minilm"]["encode_query_equals_encode"]
    plain = minilm.encode(texts)
    np.testing.assert_array_equal(minilm.encode_query(texts), plain)
    np.testing.assert_array_equal(minilm.encode_document(texts), plain)


def test_encode_query_and_document_of_qwen3(oracle, texts, qwen):
    q = oracle["tiny_qwen3"]
    assert q["encode_query"]["prompt_name"] == "query"
    assert_rows(qwen.encode_query(texts), q["encode_query"], "encode_query")
    assert_rows(qwen.encode_document(texts), q["encode_document"], "encode_document")
    assert_rows(qwen.encode(texts, prompt_name="query", truncate_dim=8, normalize_embeddings=True),
                q["query_truncate_dim_8"], "query, truncate_dim=8")
    np.testing.assert_array_equal(qwen.encode_query(texts),
                                  qwen.encode(texts, prompt=qwen.prompts["query"]))
    # prompt / prompt_name given to encode_query win over its "query".
    np.testing.assert_array_equal(qwen.encode_query(texts, prompt=""), qwen.encode(texts))


def test_encode_precision_end_to_end(oracle, texts, minilm):
    e = np.array(oracle["minilm"]["float32"]["rows"], np.float32)
    floats = minilm.encode(texts)
    for case in oracle["quantization"]["cases"]:
        if not case["name"].startswith("encode_"):
            continue
        precision = case["name"][len("encode_"):]
        got = minilm.encode(texts, precision=precision)
        want = np.array(case["values"], dtype=case["dtype"])
        assert got.dtype == want.dtype and got.shape == want.shape, precision
        # The same rows as quantizing encode()'s float32 rows (one implementation).
        np.testing.assert_array_equal(got, tessera.quantize_embeddings(floats, precision))
        if precision in ("int8", "uint8"):
            diff = np.abs(got.astype(int) - want.astype(int))
            assert diff.max() <= 1, precision  # a value on a bucket boundary
            assert (diff != 0).mean() < 0.01, precision
        else:
            bits = np.unpackbits(got.view(np.uint8) ^ want.view(np.uint8), axis=1)[:, :384]
            assert np.all(np.abs(e[bits == 1]) < 1e-3), precision  # only signs of ~0 values
    single = minilm.encode(texts[0], precision="ubinary")
    assert single.dtype == np.uint8 and single.shape == (48,)
    assert minilm.encode(texts[:3], precision="int8", truncate_dim=100).shape == (3, 100)
    assert minilm.encode(texts[:3], precision="binary", truncate_dim=100).shape == (3, 13)
    assert minilm.encode([], precision="binary").shape == (0, 48)
    ranges = np.array(oracle["quantization"]["calibration"]["ranges"]["rows"], np.float32)
    one = minilm.encode(texts[0], precision="int8", ranges=ranges)
    np.testing.assert_array_equal(one, tessera.quantize_embeddings(floats[:1], "int8",
                                                                   ranges=ranges)[0])
    with pytest.raises(ValueError, match=r"precision='int8': the ranges cannot come from a "
                                         r"single embedding .* pass ranges="):
        minilm.encode(texts[0], precision="int8")
    with pytest.raises(ValueError, match=r"precision='uint8'.*single"):
        minilm.encode(texts[:1], precision="uint8")
    with pytest.raises(ValueError, match=r'precision = "float16" is not a precision'):
        minilm.encode(texts, precision="float16")


def test_calibration_ranges_from_our_rows(oracle, minilm):
    # The oracle's R is the per-dimension min and max of 40 calibration texts.
    cal = oracle["quantization"]["calibration"]
    got = tessera.quantization_ranges(minilm.encode(cal["texts"]))
    np.testing.assert_allclose(got, np.array(cal["ranges"]["rows"], np.float32), atol=1e-4)


def test_truncate_dim_is_slice_and_renormalize(texts, minilm):
    full = minilm.encode(texts)
    cut = full[:, :64] / np.linalg.norm(full[:, :64], axis=1, keepdims=True)
    np.testing.assert_allclose(minilm.encode(texts, truncate_dim=64), cut, atol=1e-6)
    # More than the model's dimensions keeps them all (sentence-transformers' slice).
    np.testing.assert_array_equal(minilm.encode(texts, truncate_dim=1000), full)
    with minilm.truncate_embeddings(64):
        assert minilm.get_sentence_embedding_dimension() == 64
        np.testing.assert_allclose(minilm.encode(texts), cut, atol=1e-6)
    assert minilm.get_sentence_embedding_dimension() == 384 and minilm.truncate_dim is None
    with pytest.raises(ValueError, match=r"truncate_dim: 0 must be at least 1"):
        minilm.encode(texts, truncate_dim=0)
    with pytest.raises(TypeError, match=r"truncate_dim: expected an int or None, got str"):
        minilm.encode(texts, truncate_dim="64")


def test_constructor_options(texts):
    model = REPO / "models" / "all-MiniLM-L6-v2"
    e = tessera.Embedder(model, truncate_dim=32, prompts={"query": "query: ", "short": "s: "},
                         default_prompt_name="short")
    assert e.prompts == {"query": "query: ", "document": "", "short": "s: "}
    assert e.get_sentence_embedding_dimension() == 32
    with_default = e.encode(texts[:4])
    assert with_default.shape == (4, 32)
    np.testing.assert_array_equal(with_default, e.encode(texts[:4], prompt="s: "))
    np.testing.assert_array_equal(e.encode_query(texts[:4]), e.encode(texts[:4], prompt="query: "))
    # encode_document's "document" is "": no prompt, not the default.
    np.testing.assert_array_equal(e.encode_document(texts[:4]), e.encode(texts[:4], prompt=""))
    with pytest.raises(ValueError, match=r"default_prompt_name: 'nope' is not one of the "
                                         r"prompts \['query', 'document'\]"):
        tessera.Embedder(model, default_prompt_name="nope")


def test_prompt_rules_and_errors(texts, minilm, qwen):
    with pytest.warns(UserWarning, match=r"prompt_name 'query' is ignored in favour of prompt"):
        both = qwen.encode(texts[:3], prompt_name="query", prompt="x: ")
    np.testing.assert_array_equal(both, qwen.encode(texts[:3], prompt="x: "))
    with pytest.raises(ValueError, match=r"prompt_name: 'passage' is not one of the model's "
                                         r"prompts \['query', 'document'\]"):
        minilm.encode(texts, prompt_name="passage")
    with pytest.raises(TypeError, match=r"prompt_name: expected a str, got int .*batch_size="):
        minilm.encode(texts, 16)  # encode's old second parameter
    with pytest.raises(TypeError, match=r"prompt: expected a str, got bytes"):
        minilm.encode(texts, prompt=b"q: ")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        minilm.encode(texts[:2], prompt_name="query")  # "" : no warning, no prompt


def test_embed_documents_with_prompt_and_truncate_dim(texts, minilm, qwen):
    short = texts[:8]  # one chunk each
    rows = qwen.embed_documents(short, prompt_name="query", truncate_dim=8)
    assert [r["chunk"] for r in rows] == [0] * 8
    got = np.stack([r["embedding"] for r in rows])
    assert got.shape == (8, 8)
    # The prompt is tokenized alone before each chunk: the rows of encode_query.
    assert cosine_rows(got, qwen.encode_query(short, truncate_dim=8)).min() >= 0.9999
    plain = minilm.embed_documents(short)
    cut = minilm.embed_documents(short, truncate_dim=16)
    want = np.stack([r["embedding"][:16] for r in plain])
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    np.testing.assert_allclose(np.stack([r["embedding"] for r in cut]), want, atol=1e-6)
    docs = minilm.embed_documents(short[:2], doc_embedding=True, truncate_dim=16)
    assert docs[0]["embedding"].shape == (16,)
    with pytest.raises(ValueError, match=r"prompt_name: 'passage'"):
        minilm.embed_documents(short, prompt_name="passage")
