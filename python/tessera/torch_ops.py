"""tessera's attention as a torch custom op, for torch.compile'd models.

    import tessera.torch_ops
    out = torch.ops.tessera.scaled_dot_product_attention(q, k, v, None, True, None, False)
    # or tessera.torch_ops.scaled_dot_product_attention(q, k, v, is_causal=True)

Defined with torch.library (no link against libtorch: the op's kernel is the
Python wrapper, which passes the tensors to C++), with a fake (meta)
implementation, so torch.compile traces it as one opaque node with the right
output shape and dtype. Inference only: the autograd formula raises at
backward. Importing this module imports torch.

Why torch.library.Library and not torch.library.custom_op: custom_op wraps
its kernel in a dynamo-disable frame and an output-aliasing check, Python
layers that cost more per call than tessera's whole Python path on a short
sequence (docs/DECISIONS.md, "Python per-call cost"). The schema, the fake
kernel and the autograd registration are the same ones custom_op would make,
so torch.library.opcheck checks this op as it checked that one.
"""

import torch

from ._attention import scaled_dot_product_attention as _sdpa

_NAME = "tessera::scaled_dot_product_attention"

_lib = torch.library.Library("tessera", "DEF")
_lib.define("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
            "Tensor? attn_mask, bool is_causal, float? scale, bool enable_gqa) -> Tensor")


def _kernel(query, key, value, attn_mask, is_causal, scale, enable_gqa):
    # Positional: torch's own order, dropout_p 0.
    return _sdpa(query, key, value, attn_mask, 0.0, is_causal, scale, enable_gqa)


# Every device tensors come from (CPU; CUDA for the CUDA backends): one kernel.
_lib.impl("scaled_dot_product_attention", _kernel, "CompositeExplicitAutograd")


def _out_shape(query, key, value):
    lead = torch.broadcast_shapes(query.shape[:-3], key.shape[:-3], value.shape[:-3])
    heads = ()
    if query.dim() >= 3 or key.dim() >= 3:
        heads = (max(query.shape[-3] if query.dim() >= 3 else 1,
                     key.shape[-3] if key.dim() >= 3 else 1),)
    return tuple(lead) + heads + (query.shape[-2], value.shape[-1])


@torch.library.register_fake(_NAME, lib=_lib)
def _(query, key, value, attn_mask, is_causal, scale, enable_gqa):
    return query.new_empty(_out_shape(query, key, value))


def _no_backward(ctx, grad):
    raise RuntimeError("tessera::scaled_dot_product_attention is inference-only: it has no "
                       "backward. Run it under torch.no_grad() or torch.inference_mode(); to "
                       "train, use torch's own scaled_dot_product_attention.")


torch.library.register_autograd(_NAME, _no_backward, lib=_lib)

_op = torch.ops.tessera.scaled_dot_product_attention.default


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention's signature, through the op."""
    if dropout_p:
        raise ValueError(f"dropout_p = {dropout_p}: tessera applies no dropout")
    return _op(query, key, value, attn_mask, is_causal, scale, enable_gqa)


__all__ = ["scaled_dot_product_attention"]
