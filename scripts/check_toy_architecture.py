#!/usr/bin/env python3
"""The toy architecture's output against numpy (scripts/check-architecture-folders.sh).

docs/examples/toy_architecture runs a BERT checkpoint's embeddings alone:
hidden[t] = LayerNorm(word[id] + position[t] + token_type[0]). This serves a
copy of data/models/tiny-bert whose config.json says model_type
"toy_embeddings", asks /tokenize and /embed_all, and computes the same from
model.safetensors with numpy (read by hand: an 8-byte header length, a JSON
header, then the raw little-endian arrays).

Usage: check_toy_architecture.py TESSERA_BINARY MODEL_DIR
"""
import json
import os
import struct
import subprocess
import sys
import urllib.request

import numpy as np

TEXTS = ["The quick brown fox jumps over the lazy dog.", "tiny models, big checks"]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(t["shape"]).astype(np.float64)
    return out


def post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def main():
    binary, model = sys.argv[1], sys.argv[2]
    config = json.load(open(os.path.join(model, "config.json")))
    assert config["model_type"] == "toy_embeddings", config["model_type"]
    w = read_safetensors(os.path.join(model, "model.safetensors"))
    word = w["embeddings.word_embeddings.weight"]
    pos = w["embeddings.position_embeddings.weight"]
    typ = w["embeddings.token_type_embeddings.weight"]
    gamma, beta = w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]
    eps = config.get("layer_norm_eps", 1e-12)

    proc = subprocess.Popen([binary, "serve", "--port", "0", "--model", model],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "listening on http://" in line, (line, proc.stderr.read() if proc.poll() else "")
        url = line.split("listening on ")[1].split()[0]
        worst = 0.0
        for text in TEXTS:
            ids = [t["id"] for t in post(url, "/tokenize", {"inputs": text})[0]]
            got = np.array(post(url, "/embed_all", {"inputs": text})[0], dtype=np.float64)
            x = word[ids] + pos[: len(ids)] + typ[0]
            mean = x.mean(axis=1, keepdims=True)
            var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
            want = (x - mean) / np.sqrt(var + eps) * gamma + beta
            assert got.shape == want.shape, (got.shape, want.shape)
            worst = max(worst, float(np.abs(got - want).max()))
        assert worst <= 1e-5, f"toy architecture vs numpy: max abs error {worst}"
        print(f"toy architecture: {len(TEXTS)} texts, hidden states match numpy "
              f"(max abs error {worst:.2e})")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


if __name__ == "__main__":
    main()
