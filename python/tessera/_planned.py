"""The hot path of scaled_dot_product_attention: one plan per call signature.

A signature is what decides everything a call checks and derives: each
array's type, shape, strides, dtype (and, for torch, device) plus the
options. Its first call runs the full path (_attention._Call: torch's
checks, the layout and mask mapping) and asks the C++ side for a plan
(Runtime._plan: the contract's args checked and validated once, kept without
their data). When that call fed the kernels views of the caller's own
memory, later calls of the signature skip all of it: allocate the output,
hand five data pointers to Runtime._run_plan. A call that needed copies (a
broadcast stride of 0, a bool mask turned into a bias) is not planned: its
copies depend on the data, so it takes the full path every time.

Why the pointers are right: a view (transpose, reshape without copy, expand)
starts at the element its base starts at, and which views the full path
makes is a function of the signature alone. So for an input the full path
passed uncopied (same address as the caller's array), the caller's array's
address under the same signature is the address of the same view.
"""

import numpy as np

# Plans kept at most (a process that calls with ever new shapes gets a fresh
# cache rather than an ever larger one).
MAX_PLANS = 256

_plans = {}


def _numpy_signature(a):
    return (np.ndarray, a.shape, a.strides, a.dtype)


def _torch_signature(a):
    return (type(a), a.shape, a.stride(), a.dtype, a.device)


# Exact types only: a subclass (torch's FakeTensor, DTensor, a numpy matrix)
# may redefine what its shape or data pointer means, so it takes the full
# path. torch's types join when the full path first sees a torch tensor.
_signers = {np.ndarray: _numpy_signature}


def note_torch(torch):
    for t in (torch.Tensor, torch.nn.Parameter):
        _signers[t] = _torch_signature


def find(query, key, value, attn_mask, options):
    """(the call's plan key, its plan or None); the key is None when the call
    has none (an array type the plans do not know, an unhashable option such
    as a list window), so it is never planned."""
    try:
        sig = (_signers[type(query)](query), _signers[type(key)](key),
               _signers[type(value)](value),
               None if attn_mask is None else _signers[type(attn_mask)](attn_mask), options)
        return sig, _plans.get(sig)
    except Exception:  # noqa: BLE001 (an unknown type, an unhashable option, a sparse
        return None, None  # tensor's stride(): the full path says what is wrong, if anything)


def remember(sig, planned):
    if sig is None or planned is None:
        return
    if len(_plans) >= MAX_PLANS:
        _plans.clear()
    _plans[sig] = planned


def clear():
    """Forgets every plan (tests; a process that wants the memory back)."""
    _plans.clear()


class _TorchData:
    """What crosses into C++ for torch: data pointers (DLPack's export is
    Python and costs ~3 us a tensor) and new outputs like the full path's."""

    def __init__(self, torch, like):
        self.empty = torch.empty
        self.dtype = like.dtype
        self.device = like.device

    @staticmethod
    def data(a):
        return a.data_ptr()

    @staticmethod
    def requires_grad(query, key, value, attn_mask):
        return (query.requires_grad or key.requires_grad or value.requires_grad or
                (attn_mask is not None and attn_mask.requires_grad))

    def new(self, shape, float32=False):
        import torch
        return self.empty(*shape, dtype=torch.float32 if float32 else self.dtype,
                          device=self.device)


class _NumpyData:
    """numpy arrays cross as themselves (nanobind reads their buffer), bf16
    as a uint16 view (numpy's buffer and DLPack know no bfloat16)."""

    def __init__(self, like):
        self.dtype = like.dtype
        self.as_u16 = like.dtype.name == "bfloat16"

    @staticmethod
    def requires_grad(query, key, value, attn_mask):
        return False

    def data(self, a):
        return a.view(np.uint16) if self.as_u16 and a.dtype == self.dtype else a

    def new(self, shape, float32=False):
        return np.empty(shape, np.float32 if float32 else self.dtype)


def _address(ops, a):
    return a.data_ptr() if ops.name == "torch" else a.__array_interface__["data"][0]


class PlannedCall:
    """A signature's plan and how to feed it: the caller's q, k, v (and
    attn_mask, or a bias made once, such as top-left causal's), new out and
    lse. Built by make() from a full call, or None when that call copied."""

    __slots__ = ("plan", "ops", "io", "out_shape", "lse_shape", "bias_is_mask", "bias_data",
                 "bias_keep")

    @staticmethod
    def make(call, plan, query, key, value, attn_mask):
        ops = call.ops
        if ops.name == "torch" and query.device.type != "cpu":
            return None  # DLPack's import orders CUDA streams; a bare pointer would not
        for given, passed in zip((query, key, value), call.inputs):
            if _address(ops, given) != _address(ops, passed):
                return None  # copied: broadcast stride 0 or a reversed view
        bias = call.kwargs["bias"]
        bias_is_mask = False
        if bias is not None:
            if attn_mask is not None:
                if _address(ops, attn_mask) != _address(ops, bias):
                    return None  # converted (bool, float16): data-dependent
                bias_is_mask, bias = True, None
            # else: made from the signature alone (top-left causal): kept.
        p = PlannedCall()
        p.plan = plan
        p.ops = ops
        if ops.name == "torch":
            import torch
            note_torch(torch)
            p.io = _TorchData(torch, query)
        else:
            p.io = _NumpyData(query)
        p.bias_is_mask = bias_is_mask
        p.bias_keep = bias  # a bias of the plan's own lives as long as the plan
        p.bias_data = None if bias is None else p.io.data(bias)
        p.out_shape = tuple(call.result_shape) + tuple(call.out.shape[2:])
        p.lse_shape = None if call.lse is None else tuple(call.result_shape) + (call.out.shape[2],)
        return p

    def run(self, runtime, query, key, value, attn_mask):
        io = self.io
        data = io.data
        out = io.new(self.out_shape)
        lse = None if self.lse_shape is None else io.new(self.lse_shape, float32=True)
        bias = data(attn_mask) if self.bias_is_mask else self.bias_data
        runtime._run_plan(self.plan, data(query), data(key), data(value), data(out),
                          None if lse is None else data(lse), bias)
        return out if lse is None else (out, lse)
