"""Bad calls raise Python exceptions that carry tessera's message: ValueError
for the caller's mistakes, RuntimeError when no backend can serve. The
messages use the Python API's names (keywords, torch's [..., L, E], the
caller's indices), not the CLI's flags or the C++ contract's fields."""

import re

import numpy as np
import pytest

import tessera
from conftest import REPO


def f32(*shape):
    return np.ones(shape, np.float32)


def test_float64_is_refused_by_name():
    q = np.ones((1, 2, 4, 8))
    with pytest.raises(ValueError, match=r"query: dtype float64 is not supported"):
        tessera.scaled_dot_product_attention(q, q, q)


def test_dropout_is_refused():
    q = f32(1, 2, 4, 8)
    with pytest.raises(ValueError, match=r"dropout_p = 0.1"):
        tessera.scaled_dot_product_attention(q, q, q, dropout_p=0.1)


@pytest.mark.parametrize("q,k,v,kw,match", [
    ((1, 2, 4, 8), (1, 2, 4, 9), (1, 2, 4, 8), {}, r"key's last dimension \(9\)"),
    ((1, 2, 4, 8), (1, 2, 5, 8), (1, 2, 4, 8), {}, r"value's sequence length \(4\)"),
    ((1, 6, 4, 8), (1, 4, 4, 8), (1, 4, 4, 8), {"enable_gqa": True}, r"query has 6 heads"),
    ((1, 4, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8), {}, r"enable_gqa=True"),
    ((2, 2, 4, 8), (3, 2, 4, 8), (3, 2, 4, 8), {}, r"do not broadcast"),
    ((8,), (8,), (8,), {}, r"at least 2 dimensions"),
])
def test_shape_mistakes_name_the_dimension(q, k, v, kw, match):
    with pytest.raises(ValueError, match=match):
        tessera.scaled_dot_product_attention(f32(*q), f32(*k), f32(*v), **kw)


def test_mixed_dtypes_and_masks():
    q = f32(1, 2, 4, 8)
    with pytest.raises(ValueError, match=r"share a dtype: query float32, key float16"):
        tessera.scaled_dot_product_attention(q, q.astype(np.float16), q)
    with pytest.raises(ValueError, match=r"attn_mask and is_causal"):
        tessera.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((4, 4), bool),
                                             is_causal=True)
    with pytest.raises(ValueError, match=r"attn_mask: shape \(3, 4\)"):
        tessera.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((3, 4), bool))
    with pytest.raises(ValueError, match=r"causal: 'sideways'"):
        tessera.scaled_dot_product_attention(q, q, q, causal="sideways")
    with pytest.raises(ValueError, match=r"attn_mask: dtype int64 is neither bool"):
        tessera.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((4, 4), np.int64))
    with pytest.raises(ValueError, match=r"scale: 'x' is not a number"):
        tessera.scaled_dot_product_attention(q, q, q, scale="x")
    with pytest.raises(ValueError, match=r"scale = nan must be finite"):
        tessera.scaled_dot_product_attention(q, q, q, scale=float("nan"))
    with pytest.raises(ValueError, match=r"window: \(1,\) is not a pair"):
        tessera.scaled_dot_product_attention(q, q, q, window=(1,))
    with pytest.raises(ValueError, match=r"^query.shape\[-1\] \(E\) = 0 must be >= 1$"):
        tessera.scaled_dot_product_attention(f32(1, 2, 4, 0), f32(1, 2, 4, 0), q)
    with pytest.raises(TypeError, match=r"numpy array or a torch tensor"):
        tessera.scaled_dot_product_attention([[1.0]], q, q)


def test_unknown_backend_lists_the_known_ones():
    q = f32(1, 2, 4, 8)
    with pytest.raises(ValueError, match=r"unknown backend 'cpu.flsh'.*cpu\.flash"):
        tessera.scaled_dot_product_attention(q, q, q, backend="cpu.flsh")
    with pytest.raises(ValueError, match=r"policy"):
        tessera.runtime().set_policy("sometimes:reference")


def test_a_backend_that_cannot_run_the_call_says_why():
    # reference supports every feature; cuda.flash is absent on a CPU machine
    # and a CPU array is not on its device either way.
    q = f32(1, 2, 4, 8)
    with pytest.raises(RuntimeError, match=r"cuda\.flash"):
        tessera.scaled_dot_product_attention(q, q, q, backend="cuda.flash")


def test_memory_budget_refusal_is_a_runtime_error_and_nothing_leaks():
    rt = tessera.Runtime(memory_budget_bytes=1024, attention="only:cpu.flash")
    q = f32(1, 8, 512, 64)
    with pytest.raises(RuntimeError, match=r"budget|ResourceExhausted|workspace"):
        tessera.scaled_dot_product_attention(q, q, q, runtime=rt)
    assert rt.memory()["live_bytes"] == 0


def test_bad_model_dir_names_the_path(tmp_path):
    with pytest.raises((ValueError, RuntimeError), match=str(tmp_path / "nowhere")):
        tessera.Embedder(tmp_path / "nowhere")


def test_sdpa_messages_use_torch_names_not_the_contracts():
    # The contract's q.shape[3] (D), Sq, Sk, Dv are query.shape[-1] (E), L, S,
    # Ev here (issue 34 item 4).
    q = f32(1, 2, 4, 8)
    with pytest.raises(ValueError, match=r"^window \(-2, 0\) must use sizes >= 0"):
        tessera.scaled_dot_product_attention(q, q, q, window=(-2, 0))
    big = f32(1, 2, 4, 300)
    with pytest.raises(RuntimeError) as e:
        tessera.scaled_dot_product_attention(big, big, big, backend="cpu.flash")
    assert "L=4,S=4,Hq=2,Hkv=2,E=300" in str(e.value)
    assert "head dim E = 300" in str(e.value) and "Ev = 300" in str(e.value)
    assert not re.search(r"\b(D|Dv|Sq|Sk)\b|\b[qkv]\.shape", str(e.value)), str(e.value)
    verdicts = tessera.explain(big, big, big)["backends"]
    flash = next(v for v in verdicts if v["name"] == "cpu.flash")
    assert any("E = 300" in r for r in flash["reasons"]), flash


def test_load_errors_name_the_keywords_not_the_cli_flags(tmp_path):
    tiny = REPO / "data" / "models" / "tiny-bert"
    for kwargs, message in (
            ({"weights": "bf17"}, r"^weights: 'bf17' is not a weight precision"),
            ({"max_tokens": 100000}, r"^max_tokens = 100000 exceeds"),
            ({"max_tokens": 64, "stride": 100}, r"^stride = 100: must be in \[0, 62\) \(a window "
                                                r"of 64 tokens"),
            ({"max_tokens": 64, "batch_tokens": 10}, r"^batch_tokens = 10 is below the window of "
                                                     r"64 tokens")):
        with pytest.raises(ValueError, match=message) as e:
            tessera.Embedder(tiny, **kwargs)
        assert "--" not in str(e.value), str(e.value)
    with pytest.raises(ValueError, match=r"^weights: 'x'"):
        tessera.CrossEncoder(REPO / "data" / "models" / "tiny-bert-rerank", weights="x")
    with pytest.raises((ValueError, RuntimeError)) as e:
        tessera.Embedder(tmp_path / "nowhere")
    assert "--model" not in str(e.value), str(e.value)
    assert str(e.value).startswith(f'model_dir "{tmp_path / "nowhere"}"'), str(e.value)


def test_text_errors_name_the_callers_argument_and_index(embedder):
    long = "word " * 600
    # encode() sends batches of batch_size to the core: the index is the caller's.
    with pytest.raises(ValueError, match=r"^sentences\[3\] has 602 tokens .*truncate=True cuts "
                                         r"it$"):
        embedder.encode(["a", "b", "c", long], batch_size=2, truncate=False)
    with pytest.raises(ValueError, match=r"^sentences has 602 tokens"):
        embedder.encode(long, truncate=False)
    # A lone surrogate has no UTF-8: named, not nanobind's "incompatible
    # function arguments" (issue 34 item 4).
    with pytest.raises(ValueError, match=r"^sentences\[2\]: not valid text: '\\ud800' at index 4 "
                                         r"is a lone surrogate"):
        embedder.encode(["ok", "fine", "bad \ud800 x"], batch_size=2)
    with pytest.raises(ValueError, match=r"^sentences\[1\]: not valid text"):
        embedder.encode(["ok", "\udfff"], output="sparse")
    with pytest.raises(ValueError, match=r"^documents\[0\]: not valid text"):
        embedder.embed_documents(["bad \ud800 x"])
    with pytest.raises(TypeError, match=r"got bytes: decode it first"):
        embedder.encode(b"bytes are not text")


def test_cross_encoder_errors_name_the_pair_and_the_document():
    model = tessera.CrossEncoder(REPO / "data" / "models" / "tiny-bert-rerank")
    with pytest.raises(TypeError, match=r"^sentences: expected pairs .* got bytes"):
        model.predict(b"q")  # not iterated byte by byte
    with pytest.raises(ValueError, match=r"^sentences\[1\]\[1\]: not valid text"):
        model.predict([["q", "a"], ["q", "b\ud800"]], batch_size=1)
    with pytest.raises(ValueError, match=r"^sentences\[1\] has \d+ tokens .*truncate=True"):
        model.predict([["q", "a"], ["q", "word " * 600]], batch_size=1, truncate=False)
    with pytest.raises(ValueError, match=r"^documents\[1\]: not valid text"):
        model.rank("q", ["a", "b\ud800"])
    with pytest.raises(ValueError, match=r"^query: not valid text"):
        model.rank("q\ud800", ["a", "b"])


def test_cross_encoder_refuses_a_dict_or_a_set_instead_of_scoring_its_keys():
    """Hostile input III, class 3: predict(dict) and rank(q, dict) scored the
    dict's keys (list() of a dict), a silent wrong answer; Embedder.encode
    already refused them."""
    model = tessera.CrossEncoder(REPO / "data" / "models" / "tiny-bert-rerank")
    with pytest.raises(TypeError, match=r"^sentences: expected .* got dict"):
        model.predict({"q": "a", "r": "b"})
    with pytest.raises(TypeError, match=r"^sentences: expected .* got set"):
        model.predict({("q", "a")})
    with pytest.raises(TypeError, match=r"^documents: expected .* got dict"):
        model.rank("q", {"doc one": 1, "doc two": 2})
    with pytest.raises(TypeError, match=r"^query: expected a str, got int"):
        model.rank(7, ["a", "b"])
    # Lists and tuples still work.
    assert len(model.rank("q", ("a", "b"))) == 2


_INHERITED = {}


def _encode_in_forked_child(texts):
    return _INHERITED["embedder"].encode(texts)


def test_an_embedder_used_before_fork_works_in_the_child():
    """Hostile input III, class 4: an Embedder used before os.fork() hung in
    the child (multiprocessing's default start method on Linux before Python
    3.14): its thread pool's workers do not exist there. The child now runs
    on its calling thread and says so once; its rows equal the parent's."""
    import multiprocessing

    embedder = tessera.Embedder(runtime=tessera.Runtime(threads=2))
    texts = ["a forked child embeds this", "and this, with the parent's model"]
    want = embedder.encode(texts)  # the pool's workers have run
    _INHERITED["embedder"] = embedder
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            got = pool.apply_async(_encode_in_forked_child, (texts,)).get(timeout=120)
    finally:
        _INHERITED.clear()
    np.testing.assert_allclose(got, want, atol=1e-6)
