"""The planned hot path of tessera.scaled_dot_product_attention (_planned.py):
a call signature is checked once and its plan reused, so these check that a
reused plan computes on the new call's data, that a different layout or dtype
gets its own plan, that calls which copy are never planned, and that a bad
call sharing most of a planned signature still gets the full path's error."""

import re

import numpy as np
import pytest

import tessera
from sdpa_reference import sdpa_float64
from tessera import _attention, _planned
from test_sdpa import BF16, check, rand


@pytest.fixture(autouse=True)
def fresh_plans():
    _planned.clear()
    yield
    _planned.clear()


def sdpa(q, k, v, **kw):
    return tessera.scaled_dot_product_attention(q, k, v, **kw)


def full_path_calls(monkeypatch):
    """Counts the calls that take the full path (_Call)."""
    made = []
    real = _attention._Call

    def counting(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_attention, "_Call", counting)
    return made


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
def test_a_plan_is_reused_on_new_data(dtype, monkeypatch):
    full = full_path_calls(monkeypatch)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, k, v = (rand(rng, (2, 3, 9, 32), dtype) for _ in range(3))
        out = sdpa(q, k, v, is_causal=True)
        assert out.dtype == dtype
        check(out, sdpa_float64(q, k, v, is_causal=True)[0], dtype)
    assert len(full) == 1  # the first call only
    assert len(_planned._plans) == 1


def test_each_call_gets_a_new_output():
    rng = np.random.default_rng(2)
    q, k, v = (rand(rng, (1, 2, 5, 16)) for _ in range(3))
    first = sdpa(q, k, v)
    kept = first.copy()
    second = sdpa(q * 2, k, v)
    assert second is not first and not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, kept)


def test_other_strides_get_their_own_plan(monkeypatch):
    full = full_path_calls(monkeypatch)
    rng = np.random.default_rng(3)
    shape = (2, 4, 7, 16)
    q, k, v = (rand(rng, shape) for _ in range(3))
    check(sdpa(q, k, v), sdpa_float64(q, k, v)[0], np.float32)
    # The same shape from [B, L, H, E] memory: other strides, so another plan;
    # reusing the first one would read the wrong elements.
    qt, kt, vt = (np.swapaxes(rand(rng, (2, 7, 4, 16)), 1, 2) for _ in range(3))
    assert qt.shape == shape and qt.strides != q.strides
    for _ in range(2):
        check(sdpa(qt, kt, vt), sdpa_float64(qt, kt, vt)[0], np.float32)
    assert len(full) == 2 and len(_planned._plans) == 2


def test_another_dtype_gets_its_own_plan():
    rng = np.random.default_rng(4)
    q, k, v = (rand(rng, (1, 2, 6, 8)) for _ in range(3))
    sdpa(q, k, v)
    q16, k16, v16 = (a.astype(np.float16) for a in (q, k, v))
    out = sdpa(q16, k16, v16)
    assert out.dtype == np.float16
    check(out, sdpa_float64(q16, k16, v16)[0], np.float16)
    assert len(_planned._plans) == 2


def test_a_planned_float_mask_reads_each_calls_mask():
    rng = np.random.default_rng(5)
    q, k, v = (rand(rng, (1, 2, 4, 8)) for _ in range(3))
    for _ in range(3):
        mask = rand(rng, (4, 4))
        check(sdpa(q, k, v, attn_mask=mask), sdpa_float64(q, k, v, attn_mask=mask)[0],
              np.float32)
    assert len(_planned._plans) == 1


def test_top_left_causal_bias_is_kept_with_its_plan():
    rng = np.random.default_rng(6)
    for _ in range(3):  # L < S: a bias the plan makes once
        q, k, v = rand(rng, (2, 2, 5, 24)), rand(rng, (2, 2, 11, 24)), rand(rng, (2, 2, 11, 24))
        out, lse = sdpa(q, k, v, is_causal=True, return_lse=True)
        want, want_lse = sdpa_float64(q, k, v, is_causal=True)
        check(out, want, np.float32)
        np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-5)
    assert len(_planned._plans) == 1


@pytest.mark.parametrize("case", ["bool_mask", "broadcast_batch", "reversed_view"])
def test_calls_that_copy_are_not_planned(case):
    rng = np.random.default_rng(7)
    for _ in range(2):
        q, k, v = (rand(rng, (2, 2, 6, 16)) for _ in range(3))
        kw = {}
        if case == "bool_mask":
            kw["attn_mask"] = rng.random((6, 6)) < 0.7
        elif case == "broadcast_batch":
            k, v = k[:1], v[:1]  # a stride-0 batch: copied
        else:
            q = q[:, :, ::-1]  # a negative stride: copied
        check(sdpa(q, k, v, **kw), sdpa_float64(q, k, v, **kw)[0], np.float32)
    assert not _planned._plans


@pytest.mark.parametrize("bad, message", [
    ({"dropout_p": 0.5}, "dropout_p = 0.5"),
    ({"scale": "x"}, "scale: 'x' is not a number"),
    ({"window": (2, 0), "is_causal": True}, "window and causal together"),
    ({"backend": "no.such"}, "policy: unknown backend 'no.such'"),
])
def test_a_planned_signature_still_rejects_bad_options(bad, message):
    rng = np.random.default_rng(8)
    q, k, v = (rand(rng, (1, 2, 4, 8)) for _ in range(3))
    kw = {"is_causal": True} if "is_causal" in bad else {}
    sdpa(q, k, v, **kw)
    sdpa(q, k, v, **kw)
    assert len(_planned._plans) == 1
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sdpa(q, k, v, **{**kw, **bad})


def test_a_planned_shape_still_rejects_a_bad_array():
    rng = np.random.default_rng(9)
    q, k, v = (rand(rng, (1, 2, 4, 8)) for _ in range(3))
    sdpa(q, k, v)
    with pytest.raises(ValueError, match="query: dtype float64 is not supported"):
        sdpa(q.astype(np.float64), k, v)
    with pytest.raises(ValueError, match=r"key's last dimension \(9\) must equal query's"):
        sdpa(q, rand(rng, (1, 2, 4, 9)), v)
    with pytest.raises(TypeError, match="expected a numpy array or a torch tensor, got list"):
        sdpa(q, k.tolist(), v)


def test_a_plan_run_on_a_refusing_runtime_says_why_in_torchs_names():
    rng = np.random.default_rng(10)
    q = rand(rng, (1, 8, 512, 64))
    sdpa(q, q, q)  # planned with the default runtime
    # A plan holds no runtime: the one given here decides, and refuses.
    rt = tessera.Runtime(memory_budget_bytes=1024, attention="only:cpu.flash")
    with pytest.raises(RuntimeError, match=r"budget|ResourceExhausted|workspace") as e:
        sdpa(q, q, q, runtime=rt)
    assert "L=512,S=512" in str(e.value), str(e.value)
    assert not re.search(r"\b(D|Dv|Sq|Sk)\b", str(e.value)), str(e.value)
    assert rt.memory()["live_bytes"] == 0
    assert len(_planned._plans) == 1


def test_the_plans_stay_bounded():
    rng = np.random.default_rng(11)
    for n in range(1, _planned.MAX_PLANS + 10):
        q = rand(rng, (n % 7 + 1, 2, 8))
        sdpa(q, q, q, scale=1.0 / n)
    assert 0 < len(_planned._plans) <= _planned.MAX_PLANS


def test_run_plan_refuses_a_missing_or_extra_lse():
    rng = np.random.default_rng(12)
    q, k, v = (rand(rng, (1, 4, 2, 8)) for _ in range(3))  # [B, S, H, D]
    out = np.empty_like(q)
    rt = tessera.runtime()
    plan = rt._plan(q=q, k=k, v=v, out=out)
    rt._run_plan(plan, q, k, v, out)
    check(out.swapaxes(1, 2), sdpa_float64(*(a.swapaxes(1, 2) for a in (q, k, v)))[0],
          np.float32)
    with pytest.raises(ValueError, match="lse: the plan has none, got one"):
        rt._run_plan(plan, q, k, v, out, np.empty((1, 2, 4), np.float32))
    with pytest.raises(TypeError, match="query: expected a data pointer or an array, got str"):
        rt._run_plan(plan, "q", k, v, out)
