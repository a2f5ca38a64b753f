"""tessera: a modular attention runtime and document-embedding engine.

The C++ core (tessera._tessera) is reached through:

- ``scaled_dot_product_attention``: torch's SDPA signature and semantics on
  numpy arrays or torch tensors (f32, bf16, f16), no copies of q, k, v;
- ``Embedder``: sentence-transformers' ``encode`` (``output="sparse"`` for
  SPLADE models) and tessera's chunked ``embed_documents``;
  ``default_model_dir()`` says which model it loads when none is named;
- ``CrossEncoder``: sentence-transformers' ``predict`` and ``rank`` for
  rerankers and classifiers;
- ``quantize_embeddings`` / ``quantization_ranges``: sentence-transformers'
  int8, uint8, binary and ubinary embeddings, computed by the C++ core;
- ``Runtime`` / ``runtime()`` / ``configure()``: the dispatcher's policy,
  threads, memory budget, and what it recorded (``stats``, ``memory``,
  ``profile``, ``spans``); ``backends()`` and ``explain()``;
- ``tessera.torch_ops``: a torch custom op for ``torch.compile``d models.

docs/PYTHON.md has the whole guide.
"""

from ._tessera import Runtime, __version__
from ._runtime import configure, runtime
from ._attention import explain, scaled_dot_product_attention
from ._embedder import Embedder, default_model_dir
from ._cross_encoder import CrossEncoder, Identity, Sigmoid
from ._quantize import quantization_ranges, quantize_embeddings


def backends(rt=None):
    """Every attention backend of this build: name, device, dtypes, head dims,
    features, maturity, priority, and whether it can run here (and why not)."""
    return (rt or runtime()).backends()


__all__ = [
    "CrossEncoder",
    "Embedder",
    "Identity",
    "Runtime",
    "Sigmoid",
    "__version__",
    "backends",
    "configure",
    "default_model_dir",
    "explain",
    "quantization_ranges",
    "quantize_embeddings",
    "runtime",
    "scaled_dot_product_attention",
]
