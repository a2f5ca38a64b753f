"""tessera.CrossEncoder: sentence-transformers' CrossEncoder (predict, rank)
over tessera's C++ Embedder API (Embedder::score), which returns raw logits.

The activation follows sentence-transformers 6 (CrossEncoder.get_default_activation_fn):
config.json's ``sentence_transformers.activation_fn`` (or the pre-v4
``sbert_ce_default_activation_function``) when the model names one, else a
sigmoid for one label and the identity for several. So ms-marco-MiniLM (whose
config names Identity) gives raw logits, and a model without that key gives
sigmoid(logit) in [0, 1]; activation_fn=tessera._cross_encoder.Identity() asks for
logits.
"""

import json
import os
import re
import sys

import numpy as np

from . import _tessera
from ._embedder import _texts
from ._errors import LOAD_NAMES, batch_call, python_names
from ._runtime import runtime as _default_runtime

# The torch module paths sentence-transformers writes into config.json.
_IDENTITY_PATHS = ("torch.nn.modules.linear.Identity", "torch.nn.Identity")
_SIGMOID_PATHS = ("torch.nn.modules.activation.Sigmoid", "torch.nn.Sigmoid")


class Identity:
    """Raw logits (torch.nn.Identity's role in sentence-transformers)."""

    def __call__(self, x):
        return x

    def __repr__(self):
        return "Identity()"


class Sigmoid:
    """1 / (1 + exp(-x)) (torch.nn.Sigmoid's role)."""

    def __call__(self, x):
        return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)

    def __repr__(self):
        return "Sigmoid()"


def _default_activation(model_dir, num_labels):
    path = None
    try:
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        st = config.get("sentence_transformers") or {}
        path = st.get("activation_fn") or config.get("sbert_ce_default_activation_function")
    except (OSError, ValueError):
        pass
    if path in _IDENTITY_PATHS:
        return Identity()
    if path in _SIGMOID_PATHS:
        return Sigmoid()
    return Sigmoid() if num_labels == 1 else Identity()


def _is_single_pair(x):
    return (isinstance(x, (list, tuple)) and len(x) == 2
            and all(isinstance(s, str) for s in x))


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


class CrossEncoder:
    """A cross-encoder (*ForSequenceClassification: rerankers such as
    ms-marco-MiniLM and bge-reranker, or classifiers) loaded from a directory.

    weights: "f32", "bf16" or "int8" (None: $TESSERA_WEIGHTS, else f32).
    activation_fn: applied to the logits by predict and rank (None: the
        model's default, see the module doc).
    batch_tokens: encoder tokens per batch (0: 8192, or the model's limit
        when larger).
    """

    def __init__(self, model_dir, *, weights=None, activation_fn=None, batch_tokens=0,
                 runtime=None):
        self.runtime = runtime or _default_runtime()
        with python_names(LOAD_NAMES):
            self._c = _tessera.Embedder(self.runtime, model_dir=os.fspath(model_dir),
                                        weights=weights or "", batch_tokens=batch_tokens)
        kind = self._c.kind
        if kind not in ("reranker", "classifier"):
            article = "an" if kind == "embedding" else "a"
            raise ValueError(f"{model_dir}: a CrossEncoder needs a sequence-classification model "
                             f"(a reranker or classifier); this one is {article} {kind} model")
        self.activation_fn = activation_fn or _default_activation(self._c.model_dir,
                                                                  self.num_labels)

    def __repr__(self):
        return (f"CrossEncoder(model_dir={self._c.model_dir!r}, num_labels={self.num_labels}, "
                f"kind={self._c.kind!r}, activation_fn={self.activation_fn!r})")

    @property
    def num_labels(self):
        return len(self._c.labels)

    @property
    def labels(self):
        """config.json's id2label, in order."""
        return list(self._c.labels)

    @property
    def max_length(self):
        return self._c.max_tokens

    def predict(self, sentences, batch_size=32, show_progress_bar=None, activation_fn=None,
                apply_softmax=False, convert_to_numpy=True, convert_to_tensor=False,
                truncate=True):
        """Scores of (text, text) pairs (or single texts, for classifiers), as
        CrossEncoder.predict: [n] for one label, [n, num_labels] for several;
        one pair alone gives a scalar (or [num_labels]). Pairs longer than
        max_length are cut longest-first (truncate=False: an error naming
        the pair)."""
        if batch_size < 1:
            raise ValueError(f"batch_size: {batch_size} must be at least 1")
        if isinstance(sentences, (bytes, bytearray, memoryview)):
            raise TypeError(f"sentences: expected pairs [str, str] or str, got "
                            f"{type(sentences).__name__}: decode it first (.decode('utf-8'))")
        single = isinstance(sentences, str) or _is_single_pair(sentences)
        # A dict or a set is refused (list() of a dict gives its keys).
        items = [sentences] if single else _texts(sentences, "sentences")
        inputs = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                inputs.append((item, None))
            elif _is_single_pair(item):
                inputs.append((item[0], item[1]))
            else:
                raise TypeError(f"sentences[{i}]: expected a pair [str, str] or a str, got "
                                f"{item!r:.80}")
        parts = []
        for start in range(0, len(inputs), batch_size):
            batch = inputs[start:start + batch_size]
            with batch_call("sentences", batch, start, single):
                parts.append(self._c.score(batch, truncate))
            if show_progress_bar:
                print(f"\rtessera: scored {min(start + batch_size, len(inputs))}/{len(inputs)}",
                      end="", file=sys.stderr, flush=True)
        if show_progress_bar and inputs:
            print(file=sys.stderr)
        scores = (np.concatenate(parts) if parts
                  else np.zeros((0, self.num_labels), np.float32))
        scores = (activation_fn or self.activation_fn)(scores)
        if self.num_labels == 1:
            scores = scores[:, 0]
        elif apply_softmax:
            scores = _softmax(scores)
        if single:
            scores = scores[0]
        if convert_to_tensor:
            import torch
            return torch.as_tensor(scores)
        return scores if convert_to_numpy else list(scores)

    def rank(self, query, documents, top_k=None, return_documents=False, batch_size=32,
             show_progress_bar=None, activation_fn=None, truncate=True):
        """[{"corpus_id", "score", "text"?}] best first, as CrossEncoder.rank
        (one-label models only)."""
        if self.num_labels != 1:
            raise ValueError("CrossEncoder.rank() only works for models with num_labels=1. "
                             "Consider using CrossEncoder.predict() with input pairs instead.")
        if not isinstance(query, str):
            raise TypeError(f"query: expected a str, got {type(query).__name__}")
        documents = _texts(documents, "documents")  # a dict's keys are not its documents
        try:
            scores = self.predict([[query, d] for d in documents], batch_size=batch_size,
                                  show_progress_bar=show_progress_bar,
                                  activation_fn=activation_fn, truncate=truncate)
        except (TypeError, ValueError) as e:  # predict's pair i is (query, documents[i])
            message = re.sub(r"^sentences\[\d+\]\[0\]", "query", str(e))
            message = re.sub(r"^sentences\[(\d+)\](\[1\])?", r"documents[\1]", message)
            if message == str(e):
                raise
            raise type(e)(message) from None
        results = []
        for i, s in enumerate(np.atleast_1d(scores).tolist()):
            row = {"corpus_id": i, "score": s}
            if return_documents:
                row["text"] = documents[i]
            results.append(row)
        results.sort(key=lambda r: r["score"], reverse=True)
        return results[:top_k]
