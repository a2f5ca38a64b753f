"""numpy arrays and torch tensors behind one small interface, so the
attention wrapper is written once. torch is never imported here unless the
caller passed a torch tensor (it is not a dependency of the package)."""

import numpy as np

_DTYPES = ("float32", "float16", "bfloat16")


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


class NumpyOps:
    name = "numpy"

    @staticmethod
    def dtype_name(a):
        return a.dtype.name  # ml_dtypes' bfloat16 says "bfloat16"

    @staticmethod
    def empty(shape, like, dtype=None):
        return np.empty(shape, dtype=like.dtype if dtype is None else dtype)

    @staticmethod
    def float32(a):
        return a.astype(np.float32, copy=False)

    @staticmethod
    def swap(a, i, j):
        return np.swapaxes(a, i, j)

    @staticmethod
    def broadcast_to(a, shape):
        return np.broadcast_to(a, shape)

    @staticmethod
    def reshape(a, shape):
        return a.reshape(shape)

    @staticmethod
    def contiguous(a):
        return np.ascontiguousarray(a)

    @staticmethod
    def mask_to_bias(mask):
        return np.where(mask, np.float32(0), np.float32(-np.inf))

    @staticmethod
    def is_bool(a):
        return a.dtype == np.bool_

    @staticmethod
    def is_float(a):
        return a.dtype.kind == "f" or a.dtype.name == "bfloat16"

    @staticmethod
    def causal_top_left_bias(sq, sk, like):
        keep = np.tril(np.ones((sq, sk), dtype=np.bool_))
        return NumpyOps.mask_to_bias(keep)

    @staticmethod
    def for_call(a):
        """What crosses into C++: bf16 as a uint16 view (numpy's DLPack
        export knows no bfloat16), read-only arrays as they are."""
        if a.dtype.name == "bfloat16":
            return a.view(np.uint16), True
        return a, False


class TorchOps:
    name = "torch"

    @staticmethod
    def dtype_name(a):
        return str(a.dtype).replace("torch.", "")

    @staticmethod
    def empty(shape, like, dtype=None):
        import torch
        return torch.empty(shape, dtype=like.dtype if dtype is None else getattr(torch, dtype),
                           device=like.device)

    @staticmethod
    def float32(a):
        import torch
        return a.to(torch.float32)

    @staticmethod
    def swap(a, i, j):
        return a.transpose(i, j)

    @staticmethod
    def broadcast_to(a, shape):
        return a.expand(shape)

    @staticmethod
    def reshape(a, shape):
        return a.reshape(shape)

    @staticmethod
    def contiguous(a):
        return a.contiguous()

    @staticmethod
    def mask_to_bias(mask):
        import torch
        zero = torch.zeros((), dtype=torch.float32, device=mask.device)
        return torch.where(mask, zero, torch.full_like(zero, float("-inf")))

    @staticmethod
    def is_bool(a):
        import torch
        return a.dtype == torch.bool

    @staticmethod
    def is_float(a):
        return a.is_floating_point()

    @staticmethod
    def causal_top_left_bias(sq, sk, like):
        import torch
        keep = torch.ones((sq, sk), dtype=torch.bool, device=like.device).tril()
        return TorchOps.mask_to_bias(keep)

    @staticmethod
    def for_call(a):
        # DLPack refuses tensors that require grad; tessera computes no grad.
        return a.detach(), False


def ops_for(*arrays):
    """The ops of the arrays' kind; they must all be of one kind."""
    kinds = {_is_torch(a) for a in arrays if a is not None}
    if len(kinds) != 1:
        raise TypeError("query, key, value (and attn_mask) must all be numpy arrays or all "
                        "torch tensors, not a mix")
    if kinds.pop():
        return TorchOps
    for a in arrays:
        if a is not None and not isinstance(a, np.ndarray):
            raise TypeError(f"expected a numpy array or a torch tensor, got {type(a).__name__}")
    return NumpyOps


def check_dtype(ops, a, field):
    name = ops.dtype_name(a)
    if name not in _DTYPES:
        raise ValueError(f"{field}: dtype {name} is not supported (float32, float16, bfloat16); "
                         f"cast it first, e.g. .astype(np.float32) or .float()")
    return name
