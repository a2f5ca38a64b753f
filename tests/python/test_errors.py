"""Bad calls raise Python exceptions that carry tessera's message: ValueError
for the caller's mistakes, RuntimeError when no backend can serve."""

import numpy as np
import pytest

import tessera


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
    with pytest.raises(ValueError, match=r"D\) = 0 must be >= 1"):
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
