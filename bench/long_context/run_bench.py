"""Long-context forward passes, tessera vs transformers (issue 31 item 7).

Usage (from the repository root, after a release build of long_context_bench,
bench/embed/setup-venv.sh and bench/long_context/make_models.py):
  cmake --build build/release -j2 --target long_context_bench
  .venv-bench/bin/python bench/long_context/make_models.py
  .venv-bench/bin/python bench/long_context/run_bench.py \
      --model build/bench-long/modernbert-base --lengths 512,2048,8192 --batch 512:4 \
      [--weights f32[,bf16]] [--repeats 3] [--iters 1] [--threads 2] [--out DIR]

Both engines run the same folder on the same random token ids' lengths (one
sequence per call unless --batch S:B), f32 unless --weights bf16 (tessera
--weights bf16; transformers dtype=torch.bfloat16), each in its own process,
interleaved per repeat (tessera, transformers, tessera, ...):
  tessera       build/release/bench/model/long_context_bench (Encoder::embed on
                token ids; its own per-call clock, profiler stages, per-layer
                attention, tracked peak working memory), --threads T.
  transformers  AutoModel.from_pretrained(attn_implementation="sdpa"), eval,
                torch.inference_mode, torch.set_num_threads(T), use_cache off;
                model(input_ids, attention_mask) timed per call.
Each process: --warmup untimed calls, then --iters timed calls per length; a
figure is the median over every timed call of every repeat. Ratios
(transformers ms / tessera ms) are taken per repeat and their median shown.
Load time and RSS after load are each process's own; peak RSS is VmHWM at
the end (it includes the largest length). Writes OUT/results.json and prints
Markdown tables for docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(REPO, "build/release/bench/model/long_context_bench")


def proc_kb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return -1


def hf_worker(args):
    """Runs in a child process: times transformers, prints one JSON line."""
    import torch
    import transformers
    torch.set_num_threads(args.threads)
    dtype = torch.bfloat16 if args.weights == "bf16" else torch.float32
    t0 = time.perf_counter()
    model = transformers.AutoModel.from_pretrained(args.model, attn_implementation="sdpa",
                                                   dtype=dtype).eval()
    load_ms = (time.perf_counter() - t0) * 1e3
    res = {"load_ms": load_ms, "rss_kb_after_load": proc_kb("VmRSS:"),
           "attn_implementation": model.config._attn_implementation,
           "torch": torch.__version__, "transformers": transformers.__version__,
           "threads": torch.get_num_threads(), "lengths": []}
    vocab = min(model.config.vocab_size, 805)
    batch = parse_batch(args.batch)
    kwargs = {"use_cache": False} if model.config.model_type == "qwen3" else {}
    for s in parse_ints(args.lengths):
        b = batch.get(s, 1)
        g = torch.Generator().manual_seed(31 + s)
        ids = torch.randint(0, vocab, (b, s), generator=g)
        mask = torch.ones_like(ids)
        times = []
        with torch.inference_mode():
            for i in range(args.warmup + args.iters):
                t0 = time.perf_counter()
                out = model(input_ids=ids, attention_mask=mask, **kwargs).last_hidden_state
                out.float().sum().item()
                if i >= args.warmup:
                    times.append((time.perf_counter() - t0) * 1e3)
        res["lengths"].append({"s": s, "batch": b, "call_ms": times})
    res["hwm_kb_end"] = proc_kb("VmHWM:")
    print("RESULT " + json.dumps(res), flush=True)


def parse_ints(s):
    return [int(x) for x in s.split(",") if x]


def parse_batch(items):
    out = {}
    for it in items or []:
        s, b = it.split(":")
        out[int(s)] = int(b)
    return out


def cpu_model():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def run_tessera(args, weights, out_dir, rep):
    path = os.path.join(out_dir, f"tessera-{weights}-{rep}.json")
    cmd = [BENCH, "--model", args.model, "--lengths", args.lengths, "--weights", weights,
           "--iters", str(args.iters), "--warmup", str(args.warmup), "--threads",
           str(args.threads), "--json", path]
    for b in args.batch or []:
        cmd += ["--batch", b]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"tessera failed: {p.stderr[-2000:]}")
    with open(os.path.join(out_dir, f"tessera-{weights}-{rep}.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    with open(path) as f:
        return json.load(f)


def run_hf(args, weights, out_dir, rep):
    cmd = [sys.executable, os.path.abspath(__file__), "--hf-worker", "--model", args.model,
           "--lengths", args.lengths, "--weights", weights, "--iters", str(args.iters),
           "--warmup", str(args.warmup), "--threads", str(args.threads)]
    for b in args.batch or []:
        cmd += ["--batch", b]
    p = subprocess.run(cmd, capture_output=True, text=True)
    line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    if p.returncode != 0 or not line:
        sys.exit(f"transformers failed: {p.stderr[-3000:]}")
    res = json.loads(line[0][len("RESULT "):])
    with open(os.path.join(out_dir, f"hf-{weights}-{rep}.json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(args, runs):
    """runs: {(engine, weights): [result per repeat]} -> rows for the tables."""
    rows = []
    for weights in args.weights.split(","):
        ts, hs = runs[("tessera", weights)], runs[("hf", weights)]
        for i, s in enumerate(parse_ints(args.lengths)):
            t_calls = [c for r in ts for c in r["lengths"][i]["call_ms"]]
            h_calls = [c for r in hs for c in r["lengths"][i]["call_ms"]]
            ratios = [med(h["lengths"][i]["call_ms"]) / med(t["lengths"][i]["call_ms"])
                      for t, h in zip(ts, hs)]
            b = ts[0]["lengths"][i]["batch"]
            last = ts[-1]["lengths"][i]
            layers = [x for r in ts for x in r["lengths"][i]["layer_attention"]]
            glob = [x["ms"] for x in layers if "window" not in x["mask"]]
            loc = [x["ms"] for x in layers if "window" in x["mask"]]
            stage = {}
            for r in ts:
                for k, v in r["lengths"][i]["stage_ms"].items():
                    stage.setdefault(k, []).append(v)
            rows.append({
                "weights": weights, "s": s, "batch": b,
                "tessera_ms": med(t_calls), "hf_ms": med(h_calls),
                "tessera_tok_s": s * b / med(t_calls) * 1e3, "hf_tok_s": s * b / med(h_calls) * 1e3,
                "ratio": med(ratios), "ratios": ratios,
                "tessera_runs": t_calls, "hf_runs": h_calls,
                "global_attn_ms": med(glob), "local_attn_ms": med(loc),
                "n_global": len({x["layer"] for x in layers if "window" not in x["mask"]}),
                "n_local": len({x["layer"] for x in layers if "window" in x["mask"]}),
                "local_masks": sorted({x["mask"] for x in layers if "window" in x["mask"]}),
                "stage_ms": {k: med(v) for k, v in stage.items()},
                "peak_working_bytes": last["peak_working_bytes"],
            })
    loads = []
    for (engine, weights), rs in runs.items():
        loads.append({"engine": engine, "weights": weights,
                      "load_ms": med([r["load_ms"] for r in rs]),
                      "rss_mib_after_load": med([r["rss_kb_after_load"] for r in rs]) / 1024,
                      "peak_rss_mib": med([r["hwm_kb_end"] for r in rs]) / 1024})
    return rows, loads


def print_tables(args, rows, loads, meta):
    print(f"\nModel {args.model}; {meta['cpu']}; {args.threads} threads; "
          f"torch {meta.get('torch')}, transformers {meta.get('transformers')} "
          f"({meta.get('attn')}); repeats {args.repeats} x iters {args.iters}\n")
    print("| weights | S x batch | tessera ms | transformers ms | tessera tok/s | transformers tok/s "
          "| transformers / tessera (median of per-repeat ratios) | per-repeat ratios |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['weights']} | {r['s']} x {r['batch']} | {r['tessera_ms']:.1f} | {r['hf_ms']:.1f} "
              f"| {r['tessera_tok_s']:,.0f} | {r['hf_tok_s']:,.0f} | **{r['ratio']:.2f}x** "
              f"| {' / '.join(f'{x:.2f}' for x in r['ratios'])} |")
    if any(r["n_local"] for r in rows):
        print("\n| weights | S | attention ms per global layer | per local layer | local / global "
              "| window / S | (local / global) / (window / S) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            if not r["n_local"]:
                continue
            w = 0
            for m in r["local_masks"]:  # "window(64,64)" -> 129 keys
                a, b = m[m.index("(") + 1:m.index(")")].split(",")
                w = int(a) + int(b) + 1
            ratio = r["local_attn_ms"] / r["global_attn_ms"]
            frac = min(w, r["s"]) / r["s"]
            print(f"| {r['weights']} | {r['s']} | {r['global_attn_ms']:.2f} | {r['local_attn_ms']:.2f} "
                  f"| {ratio:.4f} | {frac:.4f} | {ratio / frac:.2f} |")
    print("\n| weights | S x batch | tessera stages, ms per call (median over repeats) | peak tracked "
          "working memory MiB |")
    print("| --- | --- | --- | ---: |")
    for r in rows:
        st = sorted(r["stage_ms"].items(), key=lambda kv: -kv[1])
        tot = sum(v for _, v in st)
        text = ", ".join(f"{k} {v:.0f} ({100 * v / tot:.0f}%)" for k, v in st if v / tot >= 0.01)
        print(f"| {r['weights']} | {r['s']} x {r['batch']} | {text} | "
              f"{r['peak_working_bytes'] / 2**20:.1f} |")
    print("\n| engine | weights | load s | RSS after load MiB | peak RSS MiB |")
    print("| --- | --- | ---: | ---: | ---: |")
    for l in loads:
        print(f"| {l['engine']} | {l['weights']} | {l['load_ms'] / 1e3:.2f} | "
              f"{l['rss_mib_after_load']:,.0f} | {l['peak_rss_mib']:,.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--lengths", default="512,2048,8192")
    ap.add_argument("--batch", action="append", help="S:B, B sequences of length S per call")
    ap.add_argument("--weights", default="f32")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--iters", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--engines", default="tessera,hf")
    ap.add_argument("--out", default=None)
    ap.add_argument("--hf-worker", action="store_true")
    args = ap.parse_args()
    if args.hf_worker:
        hf_worker(args)
        return
    name = os.path.basename(os.path.normpath(args.model))
    out_dir = args.out or os.path.join(REPO, "build/bench-long/results", name)
    os.makedirs(out_dir, exist_ok=True)
    runs = {}
    for rep in range(args.repeats):
        for weights in args.weights.split(","):
            for engine in args.engines.split(","):
                t0 = time.time()
                if engine == "tessera":
                    r = run_tessera(args, weights, out_dir, rep)
                else:
                    r = run_hf(args, weights, out_dir, rep)
                runs.setdefault((engine, weights), []).append(r)
                print(f"repeat {rep} {engine} {weights}: "
                      + ", ".join(f"S={x['s']}: {med(x['call_ms']):.1f} ms" for x in r["lengths"])
                      + f" ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    rows, loads = summarize(args, runs)
    hf0 = runs[("hf", args.weights.split(",")[0])][0]
    meta = {"cpu": cpu_model(), "torch": hf0.get("torch"), "transformers": hf0.get("transformers"),
            "attn": hf0.get("attn_implementation"), "loadavg": os.getloadavg()}
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"args": vars(args), "meta": meta, "rows": rows, "loads": loads}, f, indent=1)
    print_tables(args, rows, loads, meta)


if __name__ == "__main__":
    main()
