"""PyTorch's own sample inputs for nn.functional.scaled_dot_product_attention
(its OpInfo entry in torch.testing._internal.common_methods_invocations, as
shipped in the installed torch wheel) run through tessera, each compared with
torch's math path on the same inputs upcast to float64. Samples tessera does
not take (dropout, float64) are counted and named, not hidden. Then the torch
custom op (tessera.torch_ops) is checked with torch.library.opcheck and called
from a torch.compile'd function.

Run by scripts/torch-sdpa-samples.sh from .venv-bench (torch is too large for
CI); it prints a table and writes build/torch-sdpa-samples.json.
"""

import collections
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.testing._internal.common_methods_invocations import op_db

import tessera
import tessera.torch_ops

TOL = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64]


def math_float64(q, k, v, kwargs):
    mask = kwargs.get("attn_mask")
    if mask is not None and mask.dtype != torch.bool:
        kwargs = dict(kwargs, attn_mask=mask.double())
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), **kwargs)


def main():
    ops = [o for o in op_db if o.name == "nn.functional.scaled_dot_product_attention"]
    others = [o.name for o in op_db if "scaled_dot_product" in o.name and o not in ops]
    counts = collections.Counter()
    skipped = collections.Counter()
    failures = []
    worst = {}
    samples_for_opcheck = []
    for dtype in DTYPES:
        for i, s in enumerate(ops[0].sample_inputs("cpu", dtype)):
            q, (k, v), kw = s.input, s.args, dict(s.kwargs)
            counts["total"] += 1
            if kw.get("dropout_p", 0.0) > 0:
                skipped["dropout_p > 0 (tessera is inference only: ValueError)"] += 1
                continue
            if dtype == torch.float64:
                skipped["float64 (tessera takes f32, bf16, f16: ValueError)"] += 1
                continue
            counts["run"] += 1
            label = f"{dtype} #{i} q{tuple(q.shape)} k{tuple(k.shape)} {kw}"
            try:
                got = tessera.scaled_dot_product_attention(q, k, v, **kw)
            except Exception as e:  # counted as a failure, with its message
                failures.append(f"{label}: {type(e).__name__}: {e}")
                continue
            want = math_float64(q, k, v, kw)
            err = (got.double() - want).abs().max().item()
            bound = TOL[dtype] * max(1.0, want.abs().max().item())
            worst[str(dtype)] = max(worst.get(str(dtype), 0.0), err / bound)
            if got.shape != want.shape or got.dtype != dtype or not err <= bound:
                failures.append(f"{label}: max error {err:.3g} > {bound:.3g} "
                                f"(shape {tuple(got.shape)} vs {tuple(want.shape)})")
            else:
                counts["passed"] += 1
                if dtype == torch.float32:
                    samples_for_opcheck.append((q, k, v, kw))

    # The custom op: opcheck's schema, fake-tensor, autograd-registration and
    # AOT-dispatch tests on each f32 sample it accepts, then a compiled call.
    op = torch.ops.tessera.scaled_dot_product_attention.default
    opcheck = collections.Counter()
    for q, k, v, kw in samples_for_opcheck:
        args = (q, k, v, kw.get("attn_mask"), kw.get("is_causal", False), None,
                kw.get("enable_gqa", False))
        result = torch.library.opcheck(op, args)
        for test, outcome in result.items():
            opcheck[f"{test}: {outcome}"] += 1

    @torch.compile(fullgraph=True)
    def compiled(q, k, v):
        return tessera.torch_ops.scaled_dot_product_attention(q, k, v, is_causal=True) * 2

    q = torch.randn(2, 4, 33, 64)
    with sdpa_kernel(SDPBackend.MATH):
        want = F.scaled_dot_product_attention(q, q, q, is_causal=True) * 2
    compiled_err = (compiled(q, q, q) - want).abs().max().item()

    # torch tensors as users hold them: transposed (non-contiguous) views,
    # tensors that require grad, bf16, GQA, top-left causal with L < S.
    torch.manual_seed(0)
    layouts = 0
    layout_failures = []
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        q = torch.randn(2, 8, 17, 64, dtype=dtype).transpose(1, 2).contiguous().transpose(1, 2)
        k = torch.randn(2, 2, 33, 64, dtype=dtype)
        v = torch.randn(2, 2, 33, 48, dtype=dtype).requires_grad_(dtype == torch.float32)
        kw = {"enable_gqa": True, "is_causal": True}
        got = tessera.scaled_dot_product_attention(q, k, v, **kw)
        want = math_float64(q, k, v.detach(), kw)
        err = (got.double() - want).abs().max().item()
        layouts += 1
        if not err <= TOL[dtype] * max(1.0, want.abs().max().item()) or got.dtype != dtype:
            layout_failures.append(f"{dtype}: max error {err:.3g}")

    report = {"torch": torch.__version__, "tessera": tessera.__version__,
              "samples": counts["total"], "run": counts["run"], "passed": counts["passed"],
              "failed": len(failures), "skipped": dict(skipped), "failures": failures,
              "worst_error_over_bound": worst, "ops_not_run": others,
              "opcheck": dict(opcheck), "compiled_max_error": compiled_err,
              "strided_grad_gqa_cases": layouts, "strided_grad_gqa_failures": layout_failures}
    print(json.dumps(report, indent=2))
    with open("build/torch-sdpa-samples.json", "w") as f:
        json.dump(report, f, indent=2)
    ok = (not failures and not layout_failures and compiled_err < 1e-4
          and all("SUCCESS" in t for t in opcheck))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
