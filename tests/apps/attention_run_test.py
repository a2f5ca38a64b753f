"""`tessera attention run` against an independent NumPy formula.

Usage: attention_run_test.py TESSERA_BINARY
Runs f32 and f16 inputs, causal / window / GQA / scale variants and the lse
output, each with the reference backend forced and with the default policy.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def numpy_attention(q, k, v, causal=False, window=None, scale=None):
    # q [B,Sq,Hq,D], k/v [B,Sk,Hkv,D]; float64 throughout.
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    if q.ndim == 3:  # [S, H, D]: one batch entry
        out, lse = numpy_attention(q[None], k[None], v[None], causal, window, scale)
        return out[0], lse[0]
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    group = hq // hkv
    k = np.repeat(k, group, axis=2)
    v = np.repeat(v, group, axis=2)
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    s = np.einsum("bihd,bjhd->bhij", q, k) * scale
    i = np.arange(sq)[:, None] + sk - sq  # bottom-right aligned positions
    j = np.arange(sk)[None, :]
    visible = np.ones((sq, sk), dtype=bool)
    if causal:
        visible &= j <= i
    if window is not None:
        left, right = window
        if left >= 0:
            visible &= j >= i - left
        if right >= 0:
            visible &= j <= i + right
    s = np.where(visible, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m_safe)
    denom = p.sum(axis=-1, keepdims=True)
    out = np.einsum("bhij,bjhd->bihd", p / np.where(denom > 0, denom, 1.0), v)
    with np.errstate(divide="ignore"):
        lse = (np.log(denom) + m_safe)[..., 0]
    return out, lse


def run_case(binary, tmp, name, dtype, shape_q, shape_kv, extra, backend, **formula):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    q = rng.standard_normal(shape_q).astype(dtype)
    k = rng.standard_normal(shape_kv).astype(dtype)
    v = rng.standard_normal(shape_kv).astype(dtype)
    paths = {n: os.path.join(tmp, f"{name}_{n}.npy") for n in ("q", "k", "v", "out", "lse")}
    for n, x in (("q", q), ("k", k), ("v", v)):
        np.save(paths[n], x)
    cmd = [binary, "attention", "run", "--q", paths["q"], "--k", paths["k"], "--v", paths["v"],
           "--out", paths["out"], "--lse", paths["lse"]] + extra
    if backend:
        cmd += ["--backend", backend]
    subprocess.run(cmd, check=True, capture_output=True)
    out = np.load(paths["out"])
    lse = np.load(paths["lse"])
    want_out, want_lse = numpy_attention(q, k, v, **formula)
    assert out.dtype == dtype, (name, out.dtype)
    tol = 2e-5 if dtype == np.float32 else 4e-3
    err = np.abs(out.astype(np.float64) - want_out).max()
    assert err <= tol, f"{name} [{backend or 'auto'}]: max |out - numpy| = {err} > {tol}"
    finite = np.isfinite(want_lse)
    assert np.array_equal(finite, np.isfinite(lse)), f"{name}: lse -inf pattern differs"
    lerr = np.abs(lse[finite] - want_lse[finite]).max() if finite.any() else 0.0
    assert lerr <= 1e-4, f"{name}: max |lse - numpy| = {lerr}"
    print(f"ok {name} [{backend or 'auto'}] max err {err:.2e}")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for backend in ("reference", ""):
            run_case(binary, tmp, "plain", np.float32, (2, 9, 4, 16), (2, 9, 4, 16), [], backend)
            run_case(binary, tmp, "causal_sq_lt_sk", np.float32, (1, 5, 2, 8), (1, 11, 2, 8),
                     ["--mask", "causal"], backend, causal=True)
            run_case(binary, tmp, "causal_sq_gt_sk", np.float32, (1, 7, 2, 8), (1, 3, 2, 8),
                     ["--mask", "causal"], backend, causal=True)
            run_case(binary, tmp, "window_gqa", np.float32, (1, 13, 6, 24), (1, 13, 2, 24),
                     ["--window", "3,1"], backend, window=(3, 1))
            run_case(binary, tmp, "scale_f16", np.float16, (1, 10, 2, 32), (1, 10, 2, 32),
                     ["--scale", "0.05"], backend, scale=0.05)
            run_case(binary, tmp, "no_batch_dim", np.float32, (6, 2, 8), (6, 2, 8), [], backend)
        # Bad input: a clear error naming the file, non-zero exit, no crash.
        bad = os.path.join(tmp, "bad.npy")
        with open(bad, "wb") as f:
            f.write(b"not numpy")
        r = subprocess.run([binary, "attention", "run", "--q", bad, "--k", bad, "--v", bad,
                            "--out", os.path.join(tmp, "o.npy")], capture_output=True, text=True)
        assert r.returncode != 0 and "bad.npy" in r.stderr and "magic" in r.stderr, r.stderr
        print("ok bad input:", r.stderr.strip())


if __name__ == "__main__":
    main()
