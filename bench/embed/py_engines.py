"""One timed embedding run of a Python engine (run with .venv-bench/bin/python).

Usage: py_engines.py st|ort|ov-f32|ov-bf16|ov-int8 MODEL_DIR CORPUS.jsonl OUT.npy
       [--onnx FILE] [--threads 2] [--batch-size 32] [--calibration 300]
  st   sentence-transformers on torch (CPU), its own encode(): length-sorted
       batches padded to the longest member, mean pooling, Normalize.
  ort  ONNX Runtime on the fused graph from export_onnx.py; the same
       length-sorted, padded batches (pad id from config.json); the graph's own
       inputs (token_type_ids only where the model has them); mean pooling and
       L2 normalization in NumPy.
  ov-f32, ov-bf16, ov-int8  OpenVINO's CPU plugin on the plain export
       (model.onnx), the same tokenizer, batches, inputs, pooling and
       normalization as ort; INFERENCE_PRECISION_HINT f32 / bf16 set
       explicitly; int8: NNCF post-training quantization (run_ov).
--max-seq-length defaults to the folder's sentence_bert_config.json (256 for
all-MiniLM-L6-v2, 384 for all-mpnet-base-v2), as sentence-transformers uses.
Prints one JSON line: load_seconds, embed_seconds (tokenization included,
model load and a short warm-up excluded), rows; ov-* add the precision the
compiled model reports and its product nodes' runtime precisions.
"""
import argparse
import json
import os
import time

import numpy as np


def read_texts(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()]


def run_st(args, texts):
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    model = SentenceTransformer(args.model_dir, device="cpu")
    load = time.perf_counter() - t0
    model.encode(texts[:8], batch_size=args.batch_size)  # warm-up
    t0 = time.perf_counter()
    emb = model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)
    return load, time.perf_counter() - t0, emb, {}


def padded_runner(args, infer, inputs):
    """The ORT-style encode loop shared by ort and ov-*: one tokenizer pass,
    length-sorted batches padded to the longest member (pad id from config.json),
    the graph's own inputs, mean pooling and L2 normalization in NumPy.
    infer(feed) returns the last hidden state."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(args.model_dir + "/tokenizer.json")
    tok.enable_truncation(max_length=args.max_seq_length)
    tok.no_padding()
    with open(args.model_dir + "/config.json") as f:
        config = json.load(f)
    hidden_size = config["hidden_size"]
    pad_id = config.get("pad_token_id") or 0

    def batches(encs, order):
        for b in range(0, len(order), args.batch_size):
            idx = order[b:b + args.batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.full((len(idx), width), pad_id, np.int64)
            mask = np.zeros((len(idx), width), np.int64)
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            feed = {"input_ids": ids, "attention_mask": mask,
                    "token_type_ids": np.zeros_like(ids)}
            yield idx, mask, {k: v for k, v in feed.items() if k in inputs}

    def embed(batch_texts):
        encs = tok.encode_batch(batch_texts)
        order = np.argsort([-len(e.ids) for e in encs], kind="stable")
        out = np.empty((len(encs), hidden_size), np.float32)
        for idx, mask, feed in batches(encs, order):
            hidden = infer(feed)
            pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    def feeds(batch_texts):
        """The padded input batches alone (int8 calibration data)."""
        encs = tok.encode_batch(batch_texts)
        order = np.argsort([-len(e.ids) for e in encs], kind="stable")
        return [feed for _, _, feed in batches(encs, order)]

    return embed, feeds


def timed_embed(embed, texts):
    embed(texts[:8])  # warm-up
    t0 = time.perf_counter()
    emb = embed(texts)
    return time.perf_counter() - t0, emb


def run_ort(args, texts):
    import onnxruntime as ort

    t0 = time.perf_counter()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.onnx, opts, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    embed, _ = padded_runner(args, lambda feed: session.run(None, feed)[0], inputs)
    load = time.perf_counter() - t0
    seconds, emb = timed_embed(embed, texts)
    return load, seconds, emb, {}


def int8_model(args, core, feeds, texts):
    """NNCF post-training quantization of the plain graph (int8 weights and
    activations of the MatMuls, transformer preset), calibrated on the first
    --calibration corpus texts; cached beside the ONNX file as model-int8.xml."""
    import openvino as ov

    xml = os.path.join(os.path.dirname(os.path.abspath(args.onnx)), "model-int8.xml")
    if os.path.exists(xml):
        return core.read_model(xml), xml, False
    import nncf

    batches = feeds(texts[:args.calibration])
    q = nncf.quantize(core.read_model(args.onnx), nncf.Dataset(batches),
                      model_type=nncf.ModelType.TRANSFORMER, subset_size=len(batches))
    ov.save_model(q, xml)
    return core.read_model(xml), xml, True


def run_ov(args, texts):
    """OpenVINO's CPU plugin on the plain export (model.onnx): its own front end
    and fusions (SDPA, MLP) take the standard ONNX ops; the fused graph's
    com.microsoft ops are ONNX Runtime's. ov-f32 / ov-bf16 set
    INFERENCE_PRECISION_HINT explicitly (the plugin defaults to bf16 where the
    CPU has AVX512_BF16 or AMX); ov-int8 runs NNCF's quantized model with the
    f32 hint for what is not quantized. The row reports the precision the
    compiled model says it runs and the runtime precisions of its
    FullyConnected / MatMul nodes."""
    import openvino as ov
    import openvino.properties as props
    import openvino.properties.hint as hints

    precision = args.engine.split("-", 1)[1]
    t0 = time.perf_counter()
    core = ov.Core()
    core.set_property("CPU", {props.inference_num_threads: args.threads,
                              hints.performance_mode: hints.PerformanceMode.LATENCY,
                              hints.num_requests: 1,
                              props.cache_dir: ""})
    model = core.read_model(args.onnx)
    inputs = {i.get_any_name() for i in model.inputs}
    extra = {"openvino": ov.__version__.split("-")[0], "graph": os.path.basename(args.onnx)}
    if precision == "int8":
        _, feeds = padded_runner(args, None, inputs)  # calibration: the same batches
        q0 = time.perf_counter()
        model, path, made = int8_model(args, core, feeds, texts)
        extra.update(graph=os.path.basename(path), calibration_texts=args.calibration,
                     quantize_seconds=time.perf_counter() - q0 if made else None)
    hint = ov.Type.bf16 if precision == "bf16" else ov.Type.f32
    compiled = core.compile_model(model, "CPU", {hints.inference_precision: hint})
    request = compiled.create_infer_request()
    output = compiled.outputs[0]

    def infer(feed):
        return request.infer(feed)[output]

    embed, _ = padded_runner(args, infer, inputs)
    load = time.perf_counter() - t0
    seconds, emb = timed_embed(embed, texts)
    hint_ran = compiled.get_property(hints.inference_precision)
    extra["inference_precision_hint"] = hint_ran.get_type_name()
    # What ran: the executed graph's runtime precision of its product nodes.
    counts = {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        if info["layerType"].astype(str) in ("FullyConnected", "MatMul"):
            p = info["runtimePrecision"].astype(str)
            counts[p] = counts.get(p, 0) + 1
    extra["product_runtime_precision"] = counts
    return load, seconds, emb, extra


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine", choices=["st", "ort", "ov-f32", "ov-bf16", "ov-int8"])
    ap.add_argument("model_dir")
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--onnx")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--calibration", type=int, default=300,
                    help="ov-int8: corpus texts NNCF calibrates on (default: %(default)s)")
    ap.add_argument("--max-seq-length", type=int, default=0,
                    help="0: the folder's sentence_bert_config.json, else 256")
    args = ap.parse_args()
    if not args.max_seq_length:
        try:
            with open(args.model_dir + "/sentence_bert_config.json") as f:
                args.max_seq_length = int(json.load(f)["max_seq_length"])
        except (OSError, KeyError, ValueError):
            args.max_seq_length = 256
    texts = read_texts(args.corpus)
    run = {"st": run_st, "ort": run_ort}.get(args.engine, run_ov)
    load, seconds, emb, extra = run(args, texts)
    np.save(args.out, np.asarray(emb, dtype=np.float32))
    print(json.dumps(dict({"load_seconds": load, "embed_seconds": seconds, "rows": len(texts)},
                          **extra)))


if __name__ == "__main__":
    main()
