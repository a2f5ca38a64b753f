"""One timed embedding run of a Python engine (run with .venv-bench/bin/python).

Usage: py_engines.py st|ort MODEL_DIR CORPUS.jsonl OUT.npy [--onnx FILE] [--threads 2]
       [--batch-size 32]
  st   sentence-transformers on torch (CPU), its own encode(): length-sorted
       batches padded to the longest member, mean pooling, Normalize.
  ort  ONNX Runtime on the fused graph from export_onnx.py; the same
       length-sorted, padded batches (pad id from config.json); the graph's own
       inputs (token_type_ids only where the model has them); mean pooling and
       L2 normalization in NumPy.
--max-seq-length defaults to the folder's sentence_bert_config.json (256 for
all-MiniLM-L6-v2, 384 for all-mpnet-base-v2), as sentence-transformers uses.
Prints one JSON line: load_seconds, embed_seconds (tokenization included,
model load and a short warm-up excluded), rows.
"""
import argparse
import json
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
    return load, time.perf_counter() - t0, emb


def run_ort(args, texts):
    import onnxruntime as ort
    from tokenizers import Tokenizer

    t0 = time.perf_counter()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.onnx, opts, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(args.model_dir + "/tokenizer.json")
    tok.enable_truncation(max_length=args.max_seq_length)
    tok.no_padding()
    with open(args.model_dir + "/config.json") as f:
        config = json.load(f)
    hidden_size = config["hidden_size"]
    pad_id = config.get("pad_token_id") or 0
    inputs = {i.name for i in session.get_inputs()}
    load = time.perf_counter() - t0

    def embed(batch_texts):
        encs = tok.encode_batch(batch_texts)
        order = np.argsort([-len(e.ids) for e in encs], kind="stable")
        out = np.empty((len(encs), hidden_size), np.float32)
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
            hidden = session.run(None, {k: v for k, v in feed.items() if k in inputs})[0]
            pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    embed(texts[:8])  # warm-up
    t0 = time.perf_counter()
    emb = embed(texts)
    return load, time.perf_counter() - t0, emb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine", choices=["st", "ort"])
    ap.add_argument("model_dir")
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--onnx")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
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
    load, seconds, emb = (run_st if args.engine == "st" else run_ort)(args, texts)
    np.save(args.out, np.asarray(emb, dtype=np.float32))
    print(json.dumps({"load_seconds": load, "embed_seconds": seconds, "rows": len(texts)}))


if __name__ == "__main__":
    main()
