"""Model folders as users bring them (issue 48), through `tessera embed`:
the same tiny BERT (data/models/tiny-bert, checked against transformers by
model_test) saved three ways must give the same rows as the original, byte
for byte:
- as sentence-transformers 6 saves it: modules.json types by their 6.x paths
  (base.modules.transformer.Transformer, sentence_transformer.modules.pooling
  .Pooling; base.modules.normalize.Normalize checked apart), Pooling's {"pooling_mode",
  "embedding_dimension"}, the length in tokenizer_config.json's
  model_max_length instead of sentence_bert_config.json;
- with LayerNorms named gamma / beta (TF-converted checkpoints), with and
  without the "bert." prefix;
- sharded: model.safetensors split in two by model.safetensors.index.json;
- found by its Hub id in a Hugging Face cache laid out as `hf download`
  leaves it ($HF_HUB_CACHE; refs/main names the snapshot), and an id not in
  the cache refused with the command that fetches it;
and an unknown module is refused naming its whole type.

Usage: model_folders_test.py TESSERA_BINARY SOURCE_DIR
"""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

TEXTS = ["a short text", "another one, a little longer than the first, with punctuation!",
         "x " * 200]


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)


def embed(binary, model, workdir, env=None):
    docs = pathlib.Path(workdir, "docs.jsonl")
    docs.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    out = pathlib.Path(workdir, "out.jsonl")
    p = subprocess.run([binary, "embed", str(docs), "-o", str(out), "--model", str(model)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, f"{model}: rc {p.returncode}\n{p.stderr[-2000:]}"
    return [json.loads(line)["embedding"] for line in out.read_text().splitlines()]


def write_json(path, value):
    pathlib.Path(path).write_text(json.dumps(value, indent=2))


def as_sentence_transformers_6(folder):
    write_json(folder / "modules.json", [
        {"idx": 0, "name": "0", "path": "",
         "type": "sentence_transformers.base.modules.transformer.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling"},
    ])
    old = json.loads((folder / "1_Pooling" / "config.json").read_text())
    write_json(folder / "1_Pooling" / "config.json",
               {"embedding_dimension": old["word_embedding_dimension"], "pooling_mode": "mean",
                "include_prompt": True})
    sbert = json.loads((folder / "sentence_bert_config.json").read_text())
    write_json(folder / "sentence_bert_config.json", {"transformer_task": "feature-extraction"})
    tok = json.loads((folder / "tokenizer_config.json").read_text())
    tok["model_max_length"] = sbert["max_seq_length"]
    write_json(folder / "tokenizer_config.json", tok)


def rename_tensors(path, rename):
    """Rewrites a safetensors file's header with renamed tensors (data kept)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    renamed = {(k if k == "__metadata__" else rename(k)): v for k, v in header.items()}
    text = json.dumps(renamed).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n:])
    return sum(1 for k in header if k != "__metadata__" and ".LayerNorm." in k)


def legacy_norms(name):
    if ".LayerNorm." not in name:
        return name
    head, leaf = name.rsplit(".", 1)
    return head + "." + {"weight": "gamma", "bias": "beta"}[leaf]


def shard(folder):
    """Splits model.safetensors in two shards and writes their index."""
    raw = (folder / "model.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    names = sorted(k for k in header if k != "__metadata__")
    weight_map = {}
    for i, part in enumerate((names[:len(names) // 2], names[len(names) // 2:])):
        file = f"model-0000{i + 1}-of-00002.safetensors"
        sub, blob = {}, b""
        for name in part:
            b, e = header[name]["data_offsets"]
            sub[name] = dict(header[name], data_offsets=[len(blob), len(blob) + e - b])
            blob += data[b:e]
            weight_map[name] = file
        text = json.dumps(sub).encode()
        text += b" " * (-len(text) % 8)
        (folder / file).write_bytes(struct.pack("<Q", len(text)) + text + blob)
    (folder / "model.safetensors").unlink()
    write_json(folder / "model.safetensors.index.json",
               {"metadata": {"total_size": len(data)}, "weight_map": weight_map})


def hub_cache(root, original):
    """root/models--org--tiny-bert as huggingface_hub lays it out: blobs,
    a snapshot of links to them, refs/main naming the snapshot."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = root / "models--org--tiny-bert"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    for path in sorted(original.rglob("*")):
        if path.is_dir():
            continue
        blob = repo / "blobs" / f"{abs(hash(str(path))):x}"
        blob.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, blob)
        link = snapshot / path.relative_to(original)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(blob)


def main():
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    original = source / "data" / "models" / "tiny-bert"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        want = embed(binary, original, tmp)

        six = tmp / "st6"
        shutil.copytree(original, six)
        as_sentence_transformers_6(six)
        assert embed(binary, six, tmp) == want, "the sentence-transformers 6 folder differs"
        # With 6.x's Normalize: the same rows scaled to unit length.
        modules = json.loads((six / "modules.json").read_text())
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.base.modules.normalize.Normalize"})
        write_json(six / "modules.json", modules)
        for got, row in zip(embed(binary, six, tmp), want):
            norm = sum(x * x for x in row) ** 0.5
            assert max(abs(g - x / norm) for g, x in zip(got, row)) < 1e-6, "Normalize differs"
        print("ok sentence-transformers 6 folder")

        for prefix in ("", "bert."):
            legacy = tmp / f"legacy{prefix or '-'}"
            shutil.copytree(original, legacy)
            count = rename_tensors(legacy / "model.safetensors",
                                   lambda k, p=prefix: legacy_norms(p + k))
            assert count >= 3, count
            assert embed(binary, legacy, tmp) == want, f"gamma/beta names ({prefix!r}) differ"
            print(f"ok gamma/beta names, prefix {prefix!r} ({count} renamed)")

        sharded = tmp / "sharded"
        shutil.copytree(original, sharded)
        shard(sharded)
        assert embed(binary, sharded, tmp) == want, "the sharded folder differs"
        print("ok sharded weights (model.safetensors.index.json)")

        env = dict(os.environ, HF_HUB_CACHE=str(tmp / "hub"))
        hub_cache(tmp / "hub", original)
        assert embed(binary, "org/tiny-bert", tmp, env=env) == want, "the Hub id differs"
        p = subprocess.run([binary, "embed", str(tmp / "docs.jsonl"), "--model", "org/other"],
                           capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode != 0 and "hf download org/other" in p.stderr, (p.returncode, p.stderr)
        env["TESSERA_DATA_DIR"] = str(tmp / "data")
        p = subprocess.run([binary, "models", "add", "org/tiny-bert"], capture_output=True,
                           text=True, timeout=300, env=env)
        assert p.returncode == 0 and "registered tiny-bert:" in p.stdout, (p.stdout, p.stderr)
        assert embed(binary, "tiny-bert", tmp, env=env) == want, "the registered Hub model differs"
        print("ok a Hub id from the local cache (embed, models add); one not there names "
              "`hf download`")

        router = tmp / "router"
        shutil.copytree(original, router)
        modules = json.loads((router / "modules.json").read_text())
        kind = "sentence_transformers.base.modules.router.Router"
        modules.append({"idx": 2, "name": "2", "path": "2_Router", "type": kind})
        write_json(router / "modules.json", modules)
        docs = tmp / "one.txt"
        docs.write_text("hello\n")
        p = run(binary, "embed", str(docs), "-o", str(tmp / "r.jsonl"), "--model", str(router))
        assert p.returncode == 2 and f"'{kind}'" in p.stderr and "supported:" in p.stderr, \
            (p.returncode, p.stderr)
        print("ok an unknown module is named whole")
    print("ok")


if __name__ == "__main__":
    main()
