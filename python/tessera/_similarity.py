"""sentence-transformers' similarity functions (util/similarity.py in 6.3) on
numpy: the model's similarity_fn_name (config_sentence_transformers.json;
cosine by default) picks one. Rows are float32 in, float32 out, as encode()
gives them; a 1-D input is one row."""
import json
import os

import numpy as np

FUNCTIONS = ("cosine", "dot", "euclidean", "manhattan")
_EPS = 1e-12  # torch.nn.functional.normalize's


def _rows(x, name):
    a = np.asarray(x, dtype=np.float32)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError(f"{name}: expected rows of an embedding (1-D or 2-D), got shape {a.shape}")
    return a


def _normalize(a):
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), _EPS)


def matrix(fn, a, b):
    a, b = _rows(a, "a"), _rows(b, "b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a has {a.shape[1]} dimensions, b {b.shape[1]}")
    if fn == "cosine":
        return _normalize(a) @ _normalize(b).T
    if fn == "dot":
        return a @ b.T
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if fn == "euclidean":
        # |a|^2 + |b|^2 - 2 a.b in float64 (no [len(a), len(b), dim] block)
        sq = (a64 * a64).sum(1)[:, None] + (b64 * b64).sum(1)[None, :] - 2.0 * (a64 @ b64.T)
        return (-np.sqrt(np.maximum(sq, 0.0))).astype(np.float32)
    # manhattan: a row of a at a time, so memory stays len(b) x dim
    return np.stack([-np.abs(row - b64).sum(1) for row in a64]).astype(np.float32)


def pairwise(fn, a, b):
    a, b = _rows(a, "a"), _rows(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"pairwise: a is {a.shape}, b {b.shape}; they must match")
    if fn == "cosine":
        a, b = _normalize(a), _normalize(b)
    if fn in ("cosine", "dot"):
        return (a * b).sum(-1)
    diff = a.astype(np.float64) - b
    if fn == "euclidean":
        return (-np.sqrt((diff * diff).sum(-1))).astype(np.float32)
    return (-np.abs(diff).sum(-1)).astype(np.float32)


def model_function(model_dir):
    """similarity_fn_name of a model folder ("cosine" when it names none)."""
    path = os.path.join(model_dir, "config_sentence_transformers.json")
    try:
        with open(path, encoding="utf-8") as f:
            name = json.load(f).get("similarity_fn_name") or "cosine"
    except (OSError, ValueError):
        return "cosine"
    if name not in FUNCTIONS:
        raise ValueError(f"{path}: similarity_fn_name '{name}' is not one of {FUNCTIONS}")
    return name
