"""torch's scaled_dot_product_attention semantics in float64 NumPy, written
from torch's documented formula (the math path), to judge tessera by."""

import math

import numpy as np


def sdpa_float64(q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False,
                 bias=None, softcap=0.0):
    """q [..., L, E], k [..., S, E], v [..., S, Ev] (any float dtype; read as float64).
    Returns (out [..., L, Ev], lse [..., L]). A row that sees no key is 0 (lse -inf)."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    L, S = q.shape[-2], k.shape[-2]
    if enable_gqa and q.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k = np.repeat(k, rep, axis=-3)
        v = np.repeat(v, rep, axis=-3)
    s = (q @ np.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    visible = np.ones((L, S), bool)
    if is_causal:
        visible = np.tril(np.ones((L, S), bool))
    if attn_mask is not None:
        m = np.asarray(attn_mask)
        if m.dtype == np.bool_:
            visible = visible & m
        else:
            s = s + m.astype(np.float64)
    if bias is not None:
        s = s + bias
    s = np.where(visible, s, -np.inf)
    mx = s.max(-1, keepdims=True, initial=-np.inf)
    finite = np.isfinite(mx)
    e = np.exp(s - np.where(finite, mx, 0))
    total = e.sum(-1, keepdims=True)
    p = np.where(finite & (total > 0), e / np.where(total > 0, total, 1), 0)
    lse = np.where(finite[..., 0], np.log(np.where(total > 0, total, 1))[..., 0] + mx[..., 0],
                   -np.inf)
    return p @ v, lse
