"""scaled_dot_product_attention with torch's signature and semantics, on
tessera's dispatcher.

torch's layout is [..., H, L, E]; tessera's contract is [B, S, H, D] with
any strides, so q, k and v reach the kernels as transposed views, never
copied (except where torch's broadcasting gives a stride of 0, which the
contract does not take for q, k, v). Masks map onto the contract as:

- is_causal=True: torch's top-left causal (query i sees keys j <= i). With
  Sq == Sk that is tessera's causal; with Sq > Sk a bottom-right window
  (-1, Sq - Sk); with Sq < Sk an additive bias of 0 / -inf ([Sq, Sk], one
  copy shared by every batch and head through stride-0 views).
- causal="bottom_right": tessera's own (FlashAttention 2) alignment.
- attn_mask bool (True = attend) becomes a float32 bias of 0 / -inf; a
  float mask is added to the scores as it is (cast to float32).
A row that sees no key is zeros (lse -inf), as torch's math path gives.
"""

import math
import re
import warnings

import numpy as np

from . import _planned
from ._arrays import check_dtype, ops_for
from ._runtime import runtime as _default_runtime


# The contract's names (its [B, S, H, D] layout: q.shape[3] (D), Sq, Dv) in
# this function's (torch's [..., H, L, E]), for the messages of the calls
# below: q, k, v are the transposed views of query, key, value.
_TENSORS = {"q": "query", "k": "key", "v": "value"}
_AXES = {"1": "[-2]", "2": "[-3]", "3": "[-1]"}
_DIMS = {"Sq": "L", "Sk": "S", "D": "E", "Dv": "Ev"}
_FIELD = re.compile(r"\b([qkv])\.(?:shape\[(\d)\]|(dtype|data))")
_DIM = re.compile(r"\b(Sq|Sk|Dv|D)\b")


def _torch_names(message):
    def field(m):
        name = _TENSORS[m.group(1)]
        if m.group(3):
            return f"{name}.{m.group(3)}"
        axis = _AXES.get(m.group(2))
        return f"{name}.shape{axis}" if axis else f"{name}'s batch dimensions"
    message = _FIELD.sub(field, message)
    message = _DIM.sub(lambda m: _DIMS[m.group(1)], message)
    return re.sub(r"^mask window", "window", message)


_warned_grad = False


def _warn_no_grad(ops, tensors):
    """Once per process: a torch input that requires grad, with grad mode on,
    gets a result outside the autograd graph (tessera computes no gradients),
    which would otherwise pass unnoticed until a backward finds no grad."""
    global _warned_grad
    if _warned_grad or ops.name != "torch":
        return
    if not any(t is not None and t.requires_grad for t in tensors):
        return
    import torch
    if not torch.is_grad_enabled():
        return
    _warned_grad = True
    warnings.warn("tessera.scaled_dot_product_attention: an input requires grad, but tessera is "
                  "inference-only: the result is not part of the autograd graph and no gradient "
                  "flows back through it. Call it under torch.no_grad() or "
                  "torch.inference_mode() (or detach the inputs); to train, use torch's own "
                  "scaled_dot_product_attention. (Warned once.)", UserWarning, stacklevel=3)


def _run(method, kwargs):
    """runtime.attention / explain, its messages in this module's names."""
    try:
        result = method(**kwargs)
    except (ValueError, RuntimeError) as e:
        raise type(e)(_torch_names(str(e))) from None
    if isinstance(result, dict):  # explain()
        if result["args_error"] is not None:
            result["args_error"] = _torch_names(result["args_error"])
        for b in result["backends"]:
            b["reasons"] = [_torch_names(r) for r in b["reasons"]]
    return result


def _broadcast(shapes, what):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{what}: batch dimensions {', '.join(map(str, shapes))} "
                         f"do not broadcast") from None


def _strides(a):
    return a.strides if isinstance(a, np.ndarray) else a.stride()


def _as_4d(ops, a, shape4, full_shape):
    """a broadcast to full_shape, viewed as shape4 = (B, H, S, D); copied only
    where broadcasting left a stride of 0 or a reversed view a negative one
    (the contract takes neither for q, k, v)."""
    a = ops.reshape(ops.broadcast_to(a, full_shape), shape4)
    if any(st < 0 or (st == 0 and n > 1) for st, n in zip(_strides(a), shape4)):
        a = ops.contiguous(a)
    return a


class _Call:
    """One prepared call: the keyword arguments of Runtime.attention/explain
    and how to shape the results back into torch's layout."""

    def __init__(self, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa,
                 causal, window, softcap, return_lse, backend, policy):
        if dropout_p:
            raise ValueError(f"dropout_p = {dropout_p}: tessera is an inference engine and "
                             "applies no dropout; pass dropout_p=0.0")
        ops = ops_for(query, key, value, attn_mask)
        for field, a in (("query", query), ("key", key), ("value", value)):
            if len(a.shape) < 2:
                raise ValueError(f"{field}: shape {tuple(a.shape)} needs at least 2 dimensions "
                                 "([..., L, E])")
        names = [check_dtype(ops, a, f) for f, a in (("query", query), ("key", key),
                                                      ("value", value))]
        if len(set(names)) != 1:
            raise ValueError(f"query, key and value must share a dtype: query {names[0]}, "
                             f"key {names[1]}, value {names[2]}")
        L, E = query.shape[-2:]
        S, Ek = key.shape[-2:]
        Sv, Ev = value.shape[-2:]
        if Ek != E:
            raise ValueError(f"key's last dimension ({Ek}) must equal query's (E = {E})")
        if Sv != S:
            raise ValueError(f"value's sequence length ({Sv}) must equal key's (S = {S})")
        q_lead, k_lead, v_lead = (tuple(a.shape[:-2]) for a in (query, key, value))
        hq, hk, hv = (lead[-1] if lead else 1 for lead in (q_lead, k_lead, v_lead))
        if hk != hv:
            raise ValueError(f"key has {hk} heads and value {hv} (dimension -3 must match)")
        batch = _broadcast([q_lead[:-1], k_lead[:-1], v_lead[:-1]], "query, key, value")
        heads = max(hq, hk)
        if hq == hk or hk == 1 or (enable_gqa and hq % hk == 0):
            hkv = hk  # native: equal heads, MQA, or GQA
        elif hq == 1:
            hkv = hk  # query broadcast over key's heads
        else:
            raise ValueError(f"query has {hq} heads and key {hk}: they must be equal, one of "
                             "them 1, or (with enable_gqa=True) query's a multiple of key's")
        B = math.prod(batch)
        has_heads = len(q_lead) > 0 or len(k_lead) > 0
        q4 = _as_4d(ops, query, (B, heads, L, E), batch + (heads, L, E))
        k4 = _as_4d(ops, key, (B, hkv, S, E), batch + (hkv, S, E))
        v4 = _as_4d(ops, value, (B, hkv, S, Ev), batch + (hkv, S, Ev))

        self.ops = ops
        self.inputs = (q4, k4, v4)
        self.out = ops.empty((B, heads, L, Ev), query)
        self.lse = ops.empty((B, heads, L), query, dtype="float32") if return_lse else None
        self.result_shape = batch + ((heads,) if has_heads else ())

        if scale is not None:
            try:
                scale = float(scale)
            except (TypeError, ValueError):
                raise ValueError(f"scale: {scale!r} is not a number") from None
        try:
            softcap = float(softcap)
        except (TypeError, ValueError):
            raise ValueError(f"softcap: {softcap!r} is not a number") from None
        mask, wl, wr, bias = self._masks(ops, query, attn_mask, is_causal, causal, window,
                                         batch, B, heads, L, S)
        # Nothing to compute (B, H, L or Ev is 0): the shapes were checked above,
        # and torch returns an empty result where the contract refuses zero
        # heads or a zero value width, so no call is made.
        self.empty = math.prod(self.out.shape) == 0
        qc, as_u16 = ops.for_call(ops.swap(q4, 1, 2))
        kc, _ = ops.for_call(ops.swap(k4, 1, 2))
        vc, _ = ops.for_call(ops.swap(v4, 1, 2))
        oc, _ = ops.for_call(ops.swap(self.out, 1, 2))
        self.kwargs = dict(q=qc, k=kc, v=vc, out=oc, lse=self.lse, bias=bias, scale=scale,
                           mask=mask, window_left=wl, window_right=wr, softcap=softcap,
                           uint16_is_bf16=as_u16,
                           policy=f"only:{backend}" if backend else (policy or ""))

    @staticmethod
    def _masks(ops, query, attn_mask, is_causal, causal, window, batch, B, heads, L, S):
        if causal is None and is_causal:
            causal = "top_left"
        if causal not in (None, "top_left", "bottom_right"):
            raise ValueError(f"causal: '{causal}' is not 'top_left' (torch's is_causal) or "
                             "'bottom_right' (FlashAttention 2's)")
        if attn_mask is not None and causal == "top_left":
            raise ValueError("attn_mask and is_causal=True together: give one (torch refuses "
                             "both too)")
        if window is not None and causal is not None:
            raise ValueError("window and causal together: a causal window is window=(left, 0)")
        mask, wl, wr, bias = "none", -1, -1, None
        if window is not None:
            try:
                wl, wr = (int(w) for w in window)
            except (TypeError, ValueError):
                raise ValueError(f"window: {window!r} is not a pair of ints (left, right); "
                                 "-1 = unbounded") from None
            mask = "window"
        elif causal == "bottom_right" or (causal == "top_left" and L == S):
            mask = "causal"
        elif causal == "top_left" and L > S:
            mask, wr = "window", L - S  # j <= i is j <= (i + S - L) + (L - S)
        elif causal == "top_left":
            attn_mask = ops.causal_top_left_bias(L, S, query)
        if attn_mask is not None:
            if not ops.is_bool(attn_mask) and not ops.is_float(attn_mask):
                raise ValueError(f"attn_mask: dtype {ops.dtype_name(attn_mask)} is neither bool "
                                 "(True = attend) nor floating (added to the scores)")
            m = ops.mask_to_bias(attn_mask) if ops.is_bool(attn_mask) else ops.float32(attn_mask)
            if len(m.shape) < 2 or tuple(m.shape[-2:]) not in ((L, S), (1, S), (L, 1), (1, 1)):
                raise ValueError(f"attn_mask: shape {tuple(m.shape)} does not broadcast to "
                                 f"[..., L = {L}, S = {S}]")
            full = batch + (heads, L, S)
            try:
                m = ops.broadcast_to(m, full)
            except (ValueError, RuntimeError):
                raise ValueError(f"attn_mask: shape {tuple(attn_mask.shape)} does not broadcast "
                                 f"to {full}") from None
            bias = ops.reshape(m, (B, heads, L, S))
        return mask, wl, wr, bias

    def result(self):
        ops = self.ops
        B, heads, L, Ev = self.out.shape
        out = ops.reshape(self.out, self.result_shape + (L, Ev))
        if self.lse is None:
            return out
        return out, ops.reshape(self.lse, self.result_shape + (L,))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False, *, causal=None,
                                 window=None, softcap=0.0, return_lse=False, backend=None,
                                 policy=None, runtime=None):
    """torch.nn.functional.scaled_dot_product_attention, computed by tessera.

    query [..., L, E], key [..., S, E], value [..., S, Ev]: numpy arrays (float32,
    float16, ml_dtypes.bfloat16) or torch tensors (float32, float16, bfloat16),
    all of one kind; the result is the same kind, [..., L, Ev].

    torch's arguments keep torch's meaning (is_causal is top-left aligned; a bool
    attn_mask means True = attend; a float one is added to the scores). dropout_p
    must be 0. tessera's own:
      causal="bottom_right"  FlashAttention 2's alignment (query i at key i + S - L)
      window=(left, right)   a sliding window around that diagonal, -1 = unbounded
      softcap=F              scores become F * tanh(scores / F)
      return_lse=True        also return the log-sum-exp, float32 [..., L]
      backend="cpu.flash"    run on this backend only (policy "only:cpu.flash")
      policy="prefer:cpu.gemm;deny:xla"   a dispatcher policy for this call
      runtime=               a tessera.Runtime (default: tessera.runtime())
    Errors: ValueError for bad shapes, dtypes or options; RuntimeError when no
    backend can run the call or a backend fails (the message says which and why).
    Inference only: the result carries no autograd graph (a torch input that
    requires grad, with grad mode on, gets a warning, once).
    """
    options = (dropout_p, is_causal, scale, enable_gqa, causal, window, softcap, return_lse,
               backend, policy)
    sig, planned = _planned.find(query, key, value, attn_mask, options)
    if planned is not None:
        if not _warned_grad and planned.io.requires_grad(query, key, value, attn_mask):
            _warn_no_grad(planned.ops, (query, key, value, attn_mask))
        try:
            return planned.run(runtime or _default_runtime(), query, key, value, attn_mask)
        except (ValueError, RuntimeError) as e:
            raise type(e)(_torch_names(str(e))) from None
    call = _Call(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, causal,
                 window, softcap, return_lse, backend, policy)
    # (torch.ops.tessera runs this with grad mode off; its backward raises)
    _warn_no_grad(call.ops, (query, key, value, attn_mask))
    if call.empty:
        return call.result()
    runtime = runtime or _default_runtime()
    plan = _run(runtime._plan, call.kwargs)
    kw = call.kwargs
    _run(runtime._run_plan, dict(plan=plan, q=kw["q"], k=kw["k"], v=kw["v"], out=kw["out"],
                                 lse=kw["lse"], bias=kw["bias"]))
    planned = _planned.PlannedCall.make(call, plan, query, key, value, attn_mask)
    if sig is None:  # torch's tensor types are known from now on
        sig, _ = _planned.find(query, key, value, attn_mask, options)
    _planned.remember(sig, planned)
    return call.result()


def explain(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
            enable_gqa=False, *, causal=None, window=None, softcap=0.0, return_lse=False,
            backend=None, policy=None, runtime=None):
    """Which backend scaled_dot_product_attention would run these arguments on,
    and why each other one would not: {"chosen", "args_error", "backends": [
    {"name", "verdict" (chosen|eligible|rejected), "reasons"}]}. Reads no data."""
    call = _Call(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, causal,
                 window, softcap, return_lse, backend, policy)
    return _run((runtime or _default_runtime()).explain, call.kwargs)
