"""tessera.scaled_dot_product_attention against torch's semantics written out
in float64 NumPy (sdpa_reference.py), on odd shapes and every dtype."""

import warnings
import zlib

import ml_dtypes
import numpy as np
import pytest

import tessera
from sdpa_reference import sdpa_float64

BF16 = ml_dtypes.bfloat16
# Worst |got - want| allowed, relative to max(1, max|want|): a few units of
# the output dtype's rounding (f32 2^-24, f16 2^-11, bf16 2^-8).
TOL = {np.float32: 2e-5, np.float16: 2e-3, BF16: 1.6e-2}


def rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def check(got, want, dtype):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape
    if want.size == 0:
        return
    err = np.abs(got - want).max()
    assert err <= TOL[dtype] * max(1.0, np.abs(want).max()), f"max error {err}"


CASES = {
    # name: (q shape, k shape, v shape, keyword arguments)
    "4d": ((2, 3, 17, 32), (2, 3, 17, 32), (2, 3, 17, 32), {}),
    "3d": ((5, 9, 16), (5, 11, 16), (5, 11, 16), {}),
    "2d": ((7, 24), (13, 24), (13, 24), {}),
    "gqa_odd_dims": ((2, 6, 13, 59), (2, 2, 29, 59), (2, 2, 29, 37), {"enable_gqa": True}),
    "mqa_broadcast": ((1, 4, 8, 16), (1, 1, 12, 16), (1, 1, 12, 16), {}),
    "causal_sq_lt_sk": ((2, 2, 5, 40), (2, 2, 19, 40), (2, 2, 19, 40), {"is_causal": True}),
    "causal_sq_gt_sk": ((1, 2, 19, 40), (1, 2, 5, 40), (1, 2, 5, 40), {"is_causal": True}),
    "causal_square": ((3, 2, 33, 64), (3, 2, 33, 64), (3, 2, 33, 64), {"is_causal": True}),
    "batch_broadcast": ((3, 2, 6, 16), (1, 2, 10, 16), (1, 2, 10, 16), {}),
    "scale": ((1, 2, 9, 80), (1, 2, 9, 80), (1, 2, 9, 80), {"scale": 0.37}),
    "batch_dims_5d": ((2, 3, 2, 7, 16), (2, 3, 2, 9, 16), (2, 3, 2, 9, 16), {}),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_float64_formula(name, dtype):
    qs, ks, vs, kw = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    q, k, v = rand(rng, qs, dtype), rand(rng, ks, dtype), rand(rng, vs, dtype)
    out = tessera.scaled_dot_product_attention(q, k, v, **kw)
    assert out.dtype == dtype
    want, _ = sdpa_float64(q, k, v, **kw)
    check(out, want, dtype)


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["f32", "bf16"])
def test_bool_and_float_masks(dtype):
    rng = np.random.default_rng(1)
    q, k, v = rand(rng, (2, 3, 11, 32), dtype), rand(rng, (2, 3, 14, 32), dtype), \
        rand(rng, (2, 3, 14, 32), dtype)
    keep = rng.random((11, 14)) < 0.6
    keep[4] = False  # a row that sees no key: zeros, as torch's math path
    out = tessera.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    want, _ = sdpa_float64(q, k, v, attn_mask=keep)
    check(out, want, dtype)
    assert np.all(np.asarray(out, np.float32)[:, :, 4] == 0)
    additive = rng.standard_normal((2, 1, 11, 14)).astype(np.float32)
    out = tessera.scaled_dot_product_attention(q, k, v, attn_mask=additive)
    check(out, sdpa_float64(q, k, v, attn_mask=additive)[0], dtype)


def test_tessera_options_lse_softcap_window_bottom_right():
    rng = np.random.default_rng(2)
    q, k, v = rand(rng, (1, 2, 6, 16)), rand(rng, (1, 2, 10, 16)), rand(rng, (1, 2, 10, 16))
    out, lse = tessera.scaled_dot_product_attention(q, k, v, softcap=5.0, return_lse=True)
    want, want_lse = sdpa_float64(q, k, v, softcap=5.0)
    check(out, want, np.float32)
    assert lse.dtype == np.float32 and lse.shape == (1, 2, 6)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-5)
    # Bottom-right causal: query i sees keys j <= i + S - L.
    br = np.tril(np.ones((6, 10), bool), k=10 - 6)
    out = tessera.scaled_dot_product_attention(q, k, v, causal="bottom_right")
    check(out, sdpa_float64(q, k, v, attn_mask=br)[0], np.float32)
    # window (2, 1) around that diagonal.
    i, j = np.arange(6)[:, None] + 4, np.arange(10)[None, :]
    win = (j >= i - 2) & (j <= i + 1)
    out = tessera.scaled_dot_product_attention(q, k, v, window=(2, 1))
    check(out, sdpa_float64(q, k, v, attn_mask=win)[0], np.float32)


@pytest.mark.parametrize("backend", ["reference", "cpu.flash", "cpu.gemm", "xla"])
def test_each_cpu_backend_when_forced(backend):
    if not any(b["name"] == backend and b["available"] for b in tessera.backends()):
        pytest.fail(f"{backend} is not available on this machine: "
                    f"{[b for b in tessera.backends() if b['name'] == backend]}")
    rng = np.random.default_rng(3)
    q, k, v = rand(rng, (2, 4, 9, 32)), rand(rng, (2, 2, 9, 32)), rand(rng, (2, 2, 9, 32))
    out = tessera.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True,
                                               backend=backend)
    check(out, sdpa_float64(q, k, v, is_causal=True, enable_gqa=True)[0], np.float32)
    assert tessera.runtime().stats()[backend]["calls"] >= 1


def test_strided_views_cross_without_a_copy():
    """The arrays tessera reads and writes are the caller's memory: the
    TensorView the bindings build points at the numpy view's first element
    with its strides, and the result is a view of the buffer the kernel wrote."""
    rng = np.random.default_rng(4)
    big = rand(rng, (2, 6, 20, 48))
    q = big[:, ::2, 3:15, :32]  # every stride differs from a contiguous array's
    k = big[:, 1::2, :, 8:40]
    v = big[:, 1::2, :, 16:48]
    q.flags.writeable = False  # read-only inputs are fine
    assert not q.flags.c_contiguous
    from tessera import _tessera
    ptr, strides = _tessera._input_view_info(np.swapaxes(q, 1, 2))
    assert ptr == q.__array_interface__["data"][0]
    assert strides == [s // 4 for s in np.swapaxes(q, 1, 2).strides]
    out = tessera.scaled_dot_product_attention(q, k, v)
    check(out, sdpa_float64(q, k, v)[0], np.float32)
    assert out.base is not None  # a view of the output buffer, not a copy of it


def test_runs_concurrently_from_threads():
    import concurrent.futures
    rng = np.random.default_rng(5)
    cases = [(rand(rng, (1, 2, 40, 32)), rand(rng, (1, 2, 40, 32)), rand(rng, (1, 2, 40, 32)))
             for _ in range(8)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda c: tessera.scaled_dot_product_attention(*c), cases))
    for (q, k, v), out in zip(cases, outs):
        check(out, sdpa_float64(q, k, v)[0], np.float32)


def test_explain_names_the_choice_and_the_rejections():
    q = np.zeros((1, 2, 8, 16), np.float32)
    e = tessera.explain(q, q, q, is_causal=True)
    assert e["chosen"] and e["args_error"] is None
    names = [b["name"] for b in e["backends"]]
    assert e["chosen"] in names and "reference" in names
    assert any(b["verdict"] == "rejected" and b["reasons"] for b in e["backends"])


@pytest.mark.parametrize("backend", ["reference", "cpu.flash", "cpu.gemm", "xla"])
def test_empty_dimensions(backend):
    """A zero-sized batch, head count, query or value width gives an empty
    result of torch's shape; no keys (S = 0) gives zeros, as torch's math path."""
    one = np.ones((1, 2, 4, 8), np.float32)
    for q, k, v in [((0, 2, 4, 8),) * 3, ((1, 0, 4, 8),) * 3, ((1, 2, 0, 8), (1, 2, 4, 8),
                    (1, 2, 4, 8)), ((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 0))]:
        out = tessera.scaled_dot_product_attention(np.ones(q, np.float32), np.ones(k, np.float32),
                                                   np.ones(v, np.float32), backend=backend)
        assert out.shape == q[:-1] + (v[-1],)
    no_keys = np.ones((1, 2, 0, 8), np.float32)
    out, lse = tessera.scaled_dot_product_attention(one, no_keys, no_keys, backend=backend,
                                                    return_lse=True)
    assert out.shape == (1, 2, 4, 8) and np.all(out == 0) and np.all(lse == -np.inf)


def test_random_shapes_layouts_and_dtypes():
    """Seeded random calls: sizes from 0, GQA, reversed and transposed views,
    every dtype and CPU backend, masks; each against the float64 formula."""
    rng = np.random.default_rng(20261203)
    backends = ["reference", "cpu.flash", "cpu.gemm"]

    def make(shape, dtype):
        a = rng.standard_normal(shape).astype(np.float32).astype(dtype)
        layout = rng.integers(0, 3)
        if layout == 1 and shape[-2] > 0:
            a = np.ascontiguousarray(a[..., ::-1, :])[..., ::-1, :]  # negative strides
        elif layout == 2:
            a = np.swapaxes(np.ascontiguousarray(np.swapaxes(a, 1, 2)), 1, 2)
        return a

    for i in range(80):
        B, hk, group = int(rng.integers(0, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
        L, S = int(rng.integers(0, 40)), int(rng.integers(0, 40))
        E, Ev = int(rng.integers(1, 70)), int(rng.integers(1, 70))
        dtype = (np.float32, np.float16, BF16)[i % 3]
        q, k, v = (make(s, dtype) for s in ((B, hk * group, L, E), (B, hk, S, E), (B, hk, S, Ev)))
        kw = {"enable_gqa": group > 1}
        if i % 4 == 1:
            kw["is_causal"] = True
        elif i % 4 == 2:
            kw["attn_mask"] = rng.random((L, S)) < 0.7
        out = tessera.scaled_dot_product_attention(q, k, v, backend=backends[i % 3], **kw)
        check(out, sdpa_float64(q, k, v, **kw)[0], dtype)


def test_an_input_that_requires_grad_is_warned_once(monkeypatch):
    # tessera is inference-only: the result has no autograd graph, which a
    # caller with grad mode on would otherwise find out only at backward()
    # (issue 34 item 4). torch is not in CI's venv: run from .venv-bench.
    torch = pytest.importorskip("torch")
    import tessera._attention as attention
    monkeypatch.setattr(attention, "_warned_grad", False)
    q = torch.ones(1, 2, 4, 8, requires_grad=True)
    with torch.no_grad():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tessera.scaled_dot_product_attention(q, q, q)  # no graph asked for: no warning
    with pytest.warns(UserWarning, match=r"an input requires grad, but tessera is "
                                         r"inference-only.*torch.no_grad\(\)"):
        out = tessera.scaled_dot_product_attention(q, q, q)
    assert not out.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tessera.scaled_dot_product_attention(q, q, q)  # once per process
