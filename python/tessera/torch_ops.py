"""tessera's attention as a torch custom op, for torch.compile'd models.

    import tessera.torch_ops
    out = torch.ops.tessera.scaled_dot_product_attention(q, k, v, None, True, None, False)
    # or tessera.torch_ops.scaled_dot_product_attention(q, k, v, is_causal=True)

Registered with torch.library.custom_op (no link against libtorch: the op's
body is the Python wrapper, which passes the tensors to C++ through DLPack)
and a fake (meta) implementation, so torch.compile traces it as one opaque
node with the right output shape and dtype. Inference only: no autograd
formula is registered, so a backward through it raises. Importing this
module imports torch.
"""

from typing import Optional

import torch

from ._attention import scaled_dot_product_attention as _sdpa


def _out_shape(query, key, value):
    lead = torch.broadcast_shapes(query.shape[:-3], key.shape[:-3], value.shape[:-3])
    heads = ()
    if query.dim() >= 3 or key.dim() >= 3:
        heads = (max(query.shape[-3] if query.dim() >= 3 else 1,
                     key.shape[-3] if key.dim() >= 3 else 1),)
    return tuple(lead) + heads + (query.shape[-2], value.shape[-1])


@torch.library.custom_op("tessera::scaled_dot_product_attention", mutates_args=())
def _op(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
        attn_mask: Optional[torch.Tensor], is_causal: bool, scale: Optional[float],
        enable_gqa: bool) -> torch.Tensor:
    return _sdpa(query, key, value, attn_mask=attn_mask, is_causal=is_causal, scale=scale,
                 enable_gqa=enable_gqa)


@_op.register_fake
def _(query, key, value, attn_mask, is_causal, scale, enable_gqa):
    return query.new_empty(_out_shape(query, key, value))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention's signature, through the op."""
    if dropout_p:
        raise ValueError(f"dropout_p = {dropout_p}: tessera applies no dropout")
    return torch.ops.tessera.scaled_dot_product_attention(query, key, value, attn_mask,
                                                          is_causal, scale, enable_gqa)


__all__ = ["scaled_dot_product_attention"]
