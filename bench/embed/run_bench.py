"""The embedding benchmark: tessera vs sentence-transformers (torch, CPU) vs
ONNX Runtime (fused attention) vs OpenVINO, same corpus, same threads, one run.

Usage (from the repository root, after bench/embed/setup-venv.sh and a
release build):
  .venv-bench/bin/python bench/embed/run_bench.py [--repeats 3] [--threads 2] [--boost] [--bf16]
      [--int8] [--model DIR] [--count N]
--model DIR: the sentence-transformers folder every engine runs (default
models/all-MiniLM-L6-v2; e.g. models/all-mpnet-base-v2 from
scripts/install-mpnet.sh). tessera gets it as `embed --model DIR`, the Python
engines load it, the ONNX export is made from it. The corpus, the ONNX files
and the results of a model other than the default live in
build/bench-embed-NAME (NAME: the folder's name), so models never share a
cached corpus or graph. --count: documents in the corpus (default 2000; a
small count makes a quick check; a corpus already made is reused whatever
its count, so give a fresh --out for another).
--bf16 adds the engine tessera-bf16 (tessera --weights bf16) after tessera,
--int8 tessera-int8 (--weights int8) after those: other precisions than their
f32 peers, labelled so in the table.
--engines ov (ov-f32,ov-bf16) / ov-int8 add OpenVINO's CPU plugin on the plain
ONNX export (model.onnx) with the ORT engine's tokenizer and batches, at an
explicit INFERENCE_PRECISION_HINT; ov-int8 is NNCF's post-training
quantization of it (py_engines.py). The table's "tessera at equal precision"
divides a peer's time by tessera's at its precision (f32: tessera, bf16:
tessera-bf16, int8: tessera-int8).
Each engine runs in its own process, interleaved (tessera, st, ort, tessera,
...); figures are medians over the repeats. Embedding time excludes model
loading (each engine's load is reported apart): for tessera it is the
pipeline's own clock (read, tokenize, embed, write .npy), for the Python
engines encode() with tokenization. Peak RSS is the whole process's
(os.wait4). Every engine's embeddings are checked against the first engine's
(cosine), and against sentence-transformers' where st runs.
Writes OUT/results.json and prints the Markdown table for docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(REPO, "models/all-MiniLM-L6-v2")


def cpu_model():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def timed(cmd, env=None):
    """Runs cmd under GNU time-like accounting via os.wait4: (stdout, stderr, peak MiB)."""
    r, w = os.pipe()
    re, we = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 1)
        os.dup2(we, 2)
        os.close(r)
        os.close(re)
        os.execvpe(cmd[0], cmd, env or os.environ)
    os.close(w)
    os.close(we)
    with os.fdopen(r) as fo, os.fdopen(re) as fe:
        import threading
        err_chunks = []
        t = threading.Thread(target=lambda: err_chunks.append(fe.read()))
        t.start()
        out = fo.read()
        t.join()
    _, status, usage = os.wait4(pid, 0)
    err = "".join(err_chunks)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), err[-3000:]))
    return out, err, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tessera", default=os.path.join(REPO, "build/release/tessera"))
    ap.add_argument("--model", default=DEFAULT_MODEL,
                    help="sentence-transformers folder all engines run (default: %(default)s)")
    ap.add_argument("--out", default=None,
                    help="work folder (default: build/bench-embed for the default model, "
                         "build/bench-embed-NAME for another)")
    ap.add_argument("--count", type=int, default=2000, help="documents in a new corpus")
    ap.add_argument("--batch-tokens", type=int, default=0, help="tessera --batch-tokens (0: default)")
    ap.add_argument("--engines", default="tessera,st,ort",
                    help="of tessera, tessera-bf16 (--weights bf16), st, ort, ov-f32, ov-bf16, "
                         "ov-int8 (OpenVINO; ov = ov-f32,ov-bf16); the first is the reference "
                         "of the cosine check")
    ap.add_argument("--bf16", action="store_true", help="also run tessera-bf16, after tessera")
    ap.add_argument("--int8", action="store_true",
                    help="also run tessera-int8 (--weights int8), after tessera / tessera-bf16")
    ap.add_argument("--boost", action="store_true",
                    help="own scheduler autogroup at nice -20 (root), as bench/attention_table.py")
    args = ap.parse_args()
    args.model = os.path.abspath(args.model)
    model_name = os.path.basename(os.path.normpath(args.model))
    if not os.path.isfile(os.path.join(args.model, "config.json")):
        sys.exit("--model %s: no config.json there (scripts/install-mpnet.sh installs "
                 "models/all-mpnet-base-v2)" % args.model)
    if args.out is None:
        same = os.path.realpath(args.model) == os.path.realpath(DEFAULT_MODEL)
        args.out = os.path.join(REPO, "build",
                                "bench-embed" if same else "bench-embed-" + model_name)
    if args.boost:
        sys.path.insert(0, os.path.dirname(HERE))
        from attention_table import boost  # noqa: E402 (shared with the attention table)
        boost()
    os.makedirs(args.out, exist_ok=True)
    py = sys.executable
    corpus = os.path.join(args.out, "corpus.jsonl")
    if not os.path.exists(corpus):
        subprocess.run([py, os.path.join(HERE, "make_corpus.py"), args.model, corpus,
                        "--count", str(args.count)], check=True)
    onnx_dir = os.path.join(args.out, "onnx")
    fused = os.path.join(onnx_dir, "model-fused.onnx")
    plain = os.path.join(onnx_dir, "model.onnx")
    engines = []
    for e in args.engines.split(","):
        engines += ["ov-f32", "ov-bf16"] if e == "ov" else [e]
    if args.bf16 and "tessera-bf16" not in engines:
        engines.insert(engines.index("tessera") + 1 if "tessera" in engines else 0, "tessera-bf16")
    if args.int8 and "tessera-int8" not in engines:
        after = [e for e in ("tessera-bf16", "tessera") if e in engines]
        engines.insert(engines.index(after[0]) + 1 if after else 0, "tessera-int8")
    if any(e == "ort" or e.startswith("ov-") for e in engines) and not os.path.exists(fused):
        subprocess.run([py, os.path.join(HERE, "export_onnx.py"), args.model, onnx_dir], check=True)
    with open(corpus, encoding="utf-8") as f:
        n_docs = sum(1 for line in f if line.strip())

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    results = {e: [] for e in engines}
    tokens = None
    for rep in range(args.repeats):
        for engine in engines:
            out_npy = os.path.join(args.out, "%s.npy" % engine)
            if engine.startswith("tessera"):
                summary = os.path.join(args.out, "%s-summary.json" % engine)
                weights = {"tessera-bf16": "bf16", "tessera-int8": "int8"}.get(engine, "f32")
                cmd = [args.tessera, "--threads", str(args.threads), "embed", corpus, "-o", out_npy,
                       "--summary-json", summary, "--weights", weights, "--model", args.model]
                if args.batch_tokens:
                    cmd += ["--batch-tokens", str(args.batch_tokens)]
                _, _, rss = timed(cmd, env)
                with open(summary) as f:
                    s = json.load(f)
                tokens = s["tokens"]
                run = {"weights": s["weights"],
                       "load_seconds": s["load_seconds"], "embed_seconds": s["seconds"],
                       "attention_seconds": s["attention_seconds"],
                       "attention": list(s["attention"]), "stage_seconds": s["stage_seconds"],
                       "peak_tracked_mib": s["peak_tracked_bytes"] / 2**20}
            else:
                cmd = [py, os.path.join(HERE, "py_engines.py"), engine, args.model, corpus,
                       out_npy, "--threads", str(args.threads)]
                if engine == "ort":
                    cmd += ["--onnx", fused]
                elif engine.startswith("ov-"):
                    cmd += ["--onnx", plain]  # OpenVINO's own fusions: docs/DECISIONS.md
                stdout, _, rss = timed(cmd, env)
                run = json.loads(stdout.strip().splitlines()[-1])
            run["peak_rss_mib"] = rss
            results[engine].append(run)
            print("repeat %d %-8s embed %.2f s  load %.2f s  peak RSS %.0f MiB" %
                  (rep, engine, run["embed_seconds"], run["load_seconds"], rss), flush=True)

    base = np.load(os.path.join(args.out, "%s.npy" % engines[0]))
    def min_cosine(a, b):
        return float((np.sum(a * b, axis=1) /
                      (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))).min())

    agreement = {e: min_cosine(base, np.load(os.path.join(args.out, "%s.npy" % e)))
                 for e in engines[1:]}
    vs_st = {}
    if "st" in engines[1:]:  # and against sentence-transformers, the reference implementation
        st_emb = np.load(os.path.join(args.out, "st.npy"))
        vs_st = {e: min_cosine(st_emb, np.load(os.path.join(args.out, "%s.npy" % e)))
                 for e in engines if e != "st"}

    model_mib = os.path.getsize(os.path.join(args.model, "model.safetensors")) / 2**20
    summary = {"model": model_name, "model_dir": args.model,
               "cpu": cpu_model(), "threads": args.threads, "repeats": args.repeats,
               "documents": n_docs, "tokens": tokens, "model_mib": model_mib,
               "min_cosine_vs_" + engines[0]: agreement, "engines": {}}
    if vs_st:
        summary["min_cosine_vs_st"] = vs_st
    for engine, runs in results.items():
        secs = statistics.median(r["embed_seconds"] for r in runs)
        summary["engines"][engine] = {
            "embed_seconds_median": secs,
            "embed_seconds_all": [r["embed_seconds"] for r in runs],
            "load_seconds_median": statistics.median(r["load_seconds"] for r in runs),
            "docs_per_second": n_docs / secs,
            "tokens_per_second": tokens / secs if tokens else None,
            "peak_rss_mib_median": statistics.median(r["peak_rss_mib"] for r in runs),
            "runs": runs}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(summary, f, indent=2)

    print("\nModel: %s; CPU: %s, %d threads, %d documents, %s tokens, medians of %d runs\n" %
          (model_name, summary["cpu"], args.threads, n_docs, tokens, args.repeats))
    # Every engine runs f32 but tessera-bf16 and ov-bf16 / ov-int8, whose rows say so;
    # "tessera at equal precision" is this engine's time over tessera's of its precision.
    print("| engine | precision | embed s | docs/s | tokens/s | peak RSS MiB | load s "
          "| tessera f32 speed-up | tessera at equal precision | st / this |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    med = {e: s["embed_seconds_median"] for e, s in summary["engines"].items()}
    t_secs, st_secs = med.get("tessera"), med.get("st")
    for engine, e in summary["engines"].items():
        secs = e["embed_seconds_median"]
        ratio = "%.2fx" % (secs / t_secs) if t_secs else "-"
        st_ratio = "%.2fx" % (st_secs / secs) if st_secs else "-"
        precision = ("bf16" if engine.endswith("bf16") else
                     "int8" if engine.endswith("int8") else "f32")
        same = med.get({"bf16": "tessera-bf16", "int8": "tessera-int8"}.get(precision, "tessera"))
        equal = "%.2fx" % (secs / same) if same and not engine.startswith("tessera") else "-"
        print("| %s | %s | %.2f | %.1f | %.0f | %.0f | %.2f | %s | %s | %s |" %
              (engine, precision, secs, e["docs_per_second"], e["tokens_per_second"] or 0,
               e["peak_rss_mib_median"], e["load_seconds_median"], ratio, equal, st_ratio))
    print("\nmodel.safetensors: %.1f MiB; min cosine vs %s: %s" %
          (model_mib, engines[0], json.dumps(agreement)))
    if vs_st:
        print("min cosine vs st: %s" % json.dumps(vs_st))
    for engine in engines:
        run = results[engine][-1]
        if "inference_precision_hint" in run:
            print("%s: OpenVINO %s, %s, INFERENCE_PRECISION_HINT %s, product nodes ran %s" %
                  (engine, run["openvino"], run["graph"], run["inference_precision_hint"],
                   json.dumps(run["product_runtime_precision"])))


if __name__ == "__main__":
    main()
