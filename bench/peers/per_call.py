#!/usr/bin/env python3
"""Per-call cost from Python, side by side in one run: torch's
scaled_dot_product_attention against tessera's (called directly and through
its torch op), and SentenceTransformer.encode against tessera's
Embedder.encode on one short sentence. Torch tensors in and out, causal.

  PYTHONPATH=build/release/python .venv-bench/bin/python bench/peers/per_call.py \
      --threads 2 --calls 200 --json build/per-call.json

Interleaved: the contenders take turns in short blocks of calls, the order
rotating, so load from other processes falls on all of them alike; the
table gives medians over each contender's calls. tessera's C++ time is the
median span (dispatcher + kernel) of the same calls (Runtime.spans()); its
overhead is the call minus that: the Python layer, the bridge, the GIL.
"full path" is every call as before issue 37 (checks, mapping and DLPack
each time), for a before/after in the same run.

First (unless --skip-compile) it checks that torch.compile(fullgraph=True) of
a small attention block calling tessera's op compiles with no graph break
and matches the block run eagerly, then that planned calls on torch tensors
(layouts, masks, GQA, dtypes; the pytest suite has numpy only) match
torch's math; it exits 1 if either fails. Runs in .venv-bench
(torch, sentence-transformers), never in the tests.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

import tessera
import tessera.torch_ops

# The shapes (B, H, S, D, dtype), all causal.
SHAPES = [(1, 8, 16, 64, "f32"), (1, 8, 16, 64, "bf16"), (1, 8, 128, 64, "f32"),
          (1, 8, 128, 64, "bf16"), (4, 12, 512, 64, "bf16")]
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
SENTENCE = "A man is eating food."


def interleaved(contenders, rounds, block=20, settle=4):
    """{name: median seconds}: the contenders take turns in blocks of `block`
    calls, the order rotating from turn to turn, until each has `rounds`
    timed calls; a block's first `settle` calls are not timed. Blocks rather
    than single calls: torch's OpenMP workers and tessera's pool both spin a
    while after a call, and a peer's spinning workers would slow the call
    right after it (on 2 cores that made torch's 25 us call take ms)."""
    names = list(contenders)
    times = {name: [] for name in names}
    turn = 0
    while len(times[names[0]]) < rounds:
        for i in range(len(names)):
            name = names[(turn + i) % len(names)]
            fn = contenders[name]
            for _ in range(settle):
                fn()
            for _ in range(min(block, rounds - len(times[name]))):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        turn += 1
    return {name: statistics.median(t) for name, t in times.items()}


class Block(torch.nn.Module):
    """x [B, L, dim] -> qkv projection, attention, output projection."""

    def __init__(self, attention, dim=64, heads=4):
        super().__init__()
        self.attention, self.heads = attention, heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, length, dim = x.shape
        qkv = self.qkv(x).view(b, length, 3, self.heads, dim // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each [B, H, L, E]
        a = self.attention(q, k, v, is_causal=True)
        return self.proj(a.transpose(1, 2).reshape(b, length, dim))


def check_compile():
    """torch.compile(fullgraph=True) over a block calling tessera's op: one
    graph, no break, the eager block's output. Returns the report's dict."""
    torch.manual_seed(0)
    block = Block(tessera.torch_ops.scaled_dot_product_attention).eval()
    x = torch.randn(2, 33, 64)
    with torch.no_grad():
        explained = torch._dynamo.explain(block)(x)
        eager = block(x)
        compiled = torch.compile(block, fullgraph=True)(x)
        want = Block(F.scaled_dot_product_attention).eval()
        want.load_state_dict(block.state_dict())
        torch_out = want(x)
    result = {"graphs": explained.graph_count, "graph_breaks": explained.graph_break_count,
              "max_abs_compiled_vs_eager": (compiled - eager).abs().max().item(),
              "max_abs_vs_torch_sdpa": (eager - torch_out).abs().max().item()}
    result["ok"] = (result["graphs"] == 1 and result["graph_breaks"] == 0 and
                    result["max_abs_compiled_vs_eager"] <= 1e-5 and
                    result["max_abs_vs_torch_sdpa"] <= 1e-4)
    return result


def full_path(rt, q, k, v):
    """Every call as before issue 37: torch's checks and the layout mapping
    (tessera._attention._Call), then Runtime.attention, which imports each
    tensor through DLPack; the planned path's first call of a signature."""
    call = tessera._attention._Call(q, k, v, None, 0.0, True, None, False, None, None, 0.0,
                                    False, None, None)
    rt.attention(**call.kwargs)
    return call.result()


def check_planned_torch():
    """The planned path on torch tensors (the pytest suite has numpy only):
    each case called three times with new data of one signature, so the
    second and third calls take the plan; every result against torch's math
    in float64. Returns the failures."""
    gen = torch.Generator().manual_seed(1)

    def rand(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=gen).to(dtype)

    def bshd(b, h, s, d, dtype=torch.float32):  # [B, H, S, D] view of [B, S, H, D] memory
        return rand(b, s, h, d, dtype=dtype).transpose(1, 2)

    cases = {
        "contiguous": lambda: ((rand(2, 4, 9, 32),) * 3, {"is_causal": True}),
        "bshd_views": lambda: ((bshd(2, 4, 9, 32), bshd(2, 4, 9, 32), bshd(2, 4, 9, 32)), {}),
        "strided_rows": lambda: ((rand(1, 2, 18, 16)[:, :, ::2], rand(1, 2, 9, 16),
                                  rand(1, 2, 9, 16)), {}),
        "gqa": lambda: ((rand(1, 8, 7, 16), rand(1, 2, 11, 16), rand(1, 2, 11, 24)),
                        {"enable_gqa": True}),
        "float_mask": lambda: ((rand(2, 2, 5, 8), rand(2, 2, 6, 8), rand(2, 2, 6, 8)),
                               {"attn_mask": rand(5, 6)}),
        "bool_mask": lambda: ((rand(2, 2, 5, 8), rand(2, 2, 6, 8), rand(2, 2, 6, 8)),
                              {"attn_mask": rand(5, 6) > -0.5}),
        "top_left_l_lt_s": lambda: ((rand(1, 2, 4, 8), rand(1, 2, 9, 8), rand(1, 2, 9, 8)),
                                    {"is_causal": True}),
        "3d": lambda: ((rand(3, 6, 16), rand(3, 7, 16), rand(3, 7, 16)), {}),
        "broadcast_batch": lambda: ((rand(3, 2, 4, 8), rand(1, 2, 4, 8), rand(1, 2, 4, 8)), {}),
        "bf16": lambda: ((bshd(1, 4, 13, 64, torch.bfloat16),) * 3, {"is_causal": True}),
        "f16": lambda: ((rand(1, 4, 13, 64, dtype=torch.float16),) * 3, {}),
        "requires_grad": lambda: ((rand(1, 2, 5, 8).requires_grad_(), rand(1, 2, 5, 8),
                                   rand(1, 2, 5, 8)), {}),
    }
    tolerance = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
    failures = []
    with torch.no_grad():
        for name, make in cases.items():
            for call in range(3):
                (q, k, v), kw = make()
                got = tessera.scaled_dot_product_attention(q, k, v, **kw)
                want = F.scaled_dot_product_attention(
                    q.double(), k.double(), v.double(),
                    **{key: val.double() if key == "attn_mask" and val.is_floating_point()
                       else val for key, val in kw.items()})
                err = (got.double() - want).abs().max().item()
                bound = tolerance[q.dtype] * max(1.0, want.abs().max().item())
                if got.dtype != q.dtype or not err <= bound:
                    failures.append(f"{name} call {call}: max error {err:.3g}")
    return failures


def bench_sdpa(shape, threads, rounds):
    b, h, s, d, dtype = shape
    rt = tessera.configure(threads=threads)  # a fresh runtime: its spans are this shape's
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(b, h, s, d, generator=gen).to(DTYPES[dtype]) for _ in range(3))
    with torch.no_grad():
        medians = interleaved({
            "torch": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
            "tessera": lambda: tessera.scaled_dot_product_attention(q, k, v, is_causal=True),
            "tessera_op": lambda: tessera.torch_ops.scaled_dot_product_attention(
                q, k, v, is_causal=True),
            "tessera_full_path": lambda: full_path(rt, q, k, v),
        }, rounds)
        want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
        err = (tessera.scaled_dot_product_attention(q, k, v, is_causal=True).float() -
               want).abs().max().item()
    spans = [sp["duration_ns"] for sp in rt.spans() if sp["name"] == "attention"]
    row = {"shape": f"B={b},H={h},S={s},D={d},{dtype},causal",
           "torch_us": medians["torch"] * 1e6, "tessera_us": medians["tessera"] * 1e6,
           "tessera_op_us": medians["tessera_op"] * 1e6,
           "tessera_full_path_us": medians["tessera_full_path"] * 1e6,
           "tessera_cxx_us": statistics.median(spans) / 1e3, "max_abs_err_vs_f32": err}
    row["tessera_overhead_us"] = row["tessera_us"] - row["tessera_cxx_us"]
    row["ratio"] = row["tessera_us"] / row["torch_us"]
    row["op_ratio"] = row["tessera_op_us"] / row["torch_us"]
    return row


def bench_encode(model_dir, threads, rounds):
    from sentence_transformers import SentenceTransformer
    tessera.configure(threads=threads)
    ours = tessera.Embedder(model_dir)
    peer = SentenceTransformer(model_dir, device="cpu")
    medians = interleaved({
        "sentence_transformers": lambda: peer.encode(SENTENCE),
        "tessera": lambda: ours.encode(SENTENCE),
        # The C++ call under encode(): what is left is the Python layer.
        "tessera_cxx": lambda: ours._c.embed([SENTENCE], True, prompt="", dimensions=0),
    }, rounds)
    a, b = ours.encode(SENTENCE), peer.encode(SENTENCE)
    cosine = float(a @ b / ((a @ a) ** 0.5 * (b @ b) ** 0.5))
    row = {name + "_us": m * 1e6 for name, m in medians.items()}
    row["tessera_overhead_us"] = row["tessera_us"] - row["tessera_cxx_us"]
    row["ratio"] = row["tessera_us"] / row["sentence_transformers_us"]
    row["cosine"] = cosine
    return row


def cpu_model():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--calls", type=int, default=200,
                    help="timed calls per contender and SDPA shape")
    ap.add_argument("--encode-calls", type=int, default=100,
                    help="timed encode calls per contender")
    ap.add_argument("--model", default="models/all-MiniLM-L6-v2")
    ap.add_argument("--skip-compile", action="store_true")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    # Other processes' load skews both sides (torch's OpenMP barrier the
    # most): it is printed so a reader can tell a quiet run from a busy one.
    load = os.getloadavg()
    report = {"cpu": cpu_model(), "threads": args.threads, "torch": torch.__version__,
              "tessera": tessera.__file__, "load_average_1_5_15": load}
    print(f"{report['cpu']}, {args.threads} threads, torch {torch.__version__}, "
          f"tessera from {tessera.__file__}, load average {load[0]:.1f} {load[1]:.1f}")
    ok = True
    if not args.skip_compile:
        report["compile"] = check_compile()
        ok = report["compile"]["ok"]
        print("torch.compile(fullgraph=True) over tessera's op:", report["compile"])
    report["planned_torch_failures"] = check_planned_torch()
    ok = ok and not report["planned_torch_failures"]
    print("planned path on torch tensors against torch's math:",
          report["planned_torch_failures"] or "all equal within tolerance")
    rows = [bench_sdpa(shape, args.threads, args.calls) for shape in SHAPES]
    report["sdpa"] = rows
    print(f"\n{'shape':32s} {'torch':>9s} {'tessera':>9s} {'ratio':>6s} {'op':>9s} "
          f"{'ratio':>6s} {'C++':>9s} {'overhead':>9s} {'full path':>9s}  "
          f"(us, medians of {args.calls})")
    for r in rows:
        print(f"{r['shape']:32s} {r['torch_us']:9.1f} {r['tessera_us']:9.1f} {r['ratio']:6.2f} "
              f"{r['tessera_op_us']:9.1f} {r['op_ratio']:6.2f} {r['tessera_cxx_us']:9.1f} "
              f"{r['tessera_overhead_us']:9.1f} {r['tessera_full_path_us']:9.1f}")
    enc = bench_encode(args.model, args.threads, args.encode_calls)
    report["encode"] = enc
    print(f"\nencode({SENTENCE!r}): sentence-transformers "
          f"{enc['sentence_transformers_us']:.0f} us, "
          f"tessera {enc['tessera_us']:.0f} us ({enc['ratio']:.2f}x), of which C++ "
          f"{enc['tessera_cxx_us']:.0f} us, Python {enc['tessera_overhead_us']:.0f} us; "
          f"cosine {enc['cosine']:.6f} (medians of {args.encode_calls})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
