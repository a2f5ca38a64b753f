#!/usr/bin/env python3
"""Re-verifies data/models/tiny-*/expected.json against the folders, with
Hugging Face transformers (so the committed data are self-consistent), and
shows that the tolerances the C++ suite applies catch a wrong weight.

    .venv-bench/bin/python tools/check_tiny_models.py [--mutations] [NAME ...]

Per folder, for every case / pair / sparse row:
  - token ids: AutoTokenizer(folder) and the bare `tokenizers` library on
    tokenizer.json (what CI's project venv and the C++ loader read) both give
    the stored token_ids and token_type_ids;
  - the encoder's last hidden state, reloaded from model.safetensors, is
    within 1e-5 of the stored one (10x tighter than the suite's 1e-4);
  - pooled: SentenceTransformer(folder).encode one text at a time (no
    padding, unlike the generator's batch) has cosine >= 0.999999;
  - scores: the raw logits within 1e-5, single texts and pairs;
  - sparse: the SPLADE vector recomputed, nonzero index sets equal above
    1e-3 and values within 1e-5.
--mutations: for each stored tensor in turn, replaces it (a bias or a
LayerNorm by its neutral value, a one-row table by zeros, any other tensor by its transpose or a
shuffle of its rows) and requires the last hidden state, scores or sparse
values of the longest case to move by more than 1e-3 (10x the suite's
tolerance); for MPNet also a relative-position bucket with its log range cut
at 64 instead of 128, and positions counted from 0 instead of padding_idx+1.
A base model's pooler.* feeds none of the stored outputs and is skipped; so
is each attention key bias, which softmax cancels exactly (q.b_k is the same
for every key of a row), so no output can test it.
Prints the smallest change found per folder.
"""

import argparse
import json
import pathlib
import sys

import numpy as np
import sentence_transformers
import torch
import transformers
from tokenizers import Tokenizer

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "data" / "models"


def load(folder):
    cfg = json.loads((folder / "config.json").read_text())
    arch = cfg["architectures"][0]
    return getattr(transformers, arch).from_pretrained(str(folder)).eval(), arch


def forward(model, arch, ids, tt=None, mask=None):
    kw = {"input_ids": ids}
    if tt is not None and model.config.model_type != "mpnet":  # MPNet has no token types
        kw["token_type_ids"] = tt
    if mask is not None:
        kw["attention_mask"] = mask
    with torch.no_grad():
        out = model(**kw, output_hidden_states=True)
    last = out.hidden_states[-1][0]
    extra = None
    if arch.endswith("ForSequenceClassification"):
        extra = out.logits[0]
    elif arch.endswith("ForMaskedLM"):
        extra = torch.log1p(torch.relu(out.logits[0])).max(0).values
    return last, extra


def check_folder(folder, mutations):
    exp = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    hf_tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    raw = Tokenizer.from_file(str(folder / "tokenizer.json"))
    model, arch = load(folder)
    errors = []
    worst = {"hidden": 0.0, "pooled_cos": 1.0, "scores": 0.0, "sparse": 0.0}

    def ids_of(*texts):
        enc = hf_tok(*texts, truncation=True)
        e = raw.encode(*texts)
        tt = enc.get("token_type_ids", [0] * len(enc["input_ids"]))
        if e.ids != enc["input_ids"]:
            errors.append(f"tokenizers and AutoTokenizer differ on {texts!r}")
        return enc["input_ids"], tt

    for c in exp["cases"]:
        ids, tt = ids_of(c["text"])
        if ids != c["token_ids"] or tt != c["token_type_ids"]:
            errors.append(f"token ids of {c['text'][:30]!r}")
        last, extra = forward(model, arch, torch.tensor([ids]), torch.tensor([tt]))
        d = float(np.abs(last.numpy() - np.asarray(c["last_hidden_state"])).max())
        worst["hidden"] = max(worst["hidden"], d)
        if "scores" in c:
            worst["scores"] = max(worst["scores"],
                                  float(np.abs(extra.numpy() - np.asarray(c["scores"])).max()))
    if any("pooled" in c for c in exp["cases"]):
        st = sentence_transformers.SentenceTransformer(str(folder), device="cpu")
        for c in exp["cases"]:
            v = st.encode([c["text"]], convert_to_numpy=True)[0].astype(np.float64)
            p = np.asarray(c["pooled"])
            worst["pooled_cos"] = min(worst["pooled_cos"],
                                      float(v @ p / np.linalg.norm(v) / np.linalg.norm(p)))
    for pr in exp.get("pairs", []):
        ids, tt = ids_of(pr["query"], pr["text"])
        if ids != pr["token_ids"] or tt != pr["token_type_ids"]:
            errors.append(f"pair token ids of {pr['query']!r}")
        _, logits = forward(model, arch, torch.tensor([ids]), torch.tensor([tt]))
        worst["scores"] = max(worst["scores"],
                              float(np.abs(logits.numpy() - np.asarray(pr["scores"])).max()))
    for s in exp.get("sparse", []):
        _, v = forward(model, arch, torch.tensor([s["token_ids"]]))
        v = v.numpy()
        mine = set(np.nonzero(v > 1e-3)[0].tolist())
        theirs = {i for i, x in zip(s["indices"], s["values"]) if x > 1e-3}
        if mine != theirs:
            errors.append(f"sparse index set of {s['text'][:30]!r}")
        ref = np.zeros_like(v)
        ref[s["indices"]] = s["values"]
        worst["sparse"] = max(worst["sparse"], float(np.abs(v - ref).max()))

    if worst["hidden"] > 1e-5 or worst["scores"] > 1e-5 or worst["sparse"] > 1e-5 or \
            worst["pooled_cos"] < 0.999999:
        errors.append(f"outputs: {worst}")
    line = (f"{folder.name}: {arch}, {len(exp['cases'])} cases, {len(exp.get('pairs', []))} "
            f"pairs, worst hidden {worst['hidden']:.1e}, pooled cos {worst['pooled_cos']:.8f}, "
            f"scores {worst['scores']:.1e}, sparse {worst['sparse']:.1e}")
    if mutations:
        line += "; " + check_mutations(model, arch, exp, errors)
    return line, errors


def check_mutations(model, arch, exp, errors):
    longest = max(exp["cases"], key=lambda c: len(c["token_ids"]))
    ids = torch.tensor([longest["token_ids"]])
    tt = torch.tensor([longest["token_type_ids"]])
    base_last, base_extra = forward(model, arch, ids, tt)

    def moved():
        last, extra = forward(model, arch, ids, tt)
        d = float((last - base_last).abs().max())
        if extra is not None:
            d = max(d, float((extra - base_extra).abs().max()))
        return d

    g = torch.Generator().manual_seed(0)
    smallest = (float("inf"), "")
    state = {k: v.clone() for k, v in model.state_dict().items()}
    for name, p in model.named_parameters():
        if name.startswith("pooler."):
            continue  # a base model's pooler feeds none of the stored outputs
        if name.endswith("attention.self.key.bias") or name.endswith("attention.attn.k.bias"):
            continue  # q.b_k is the same for every key of a row: softmax cancels it
        saved = p.detach().clone()
        with torch.no_grad():
            if p.shape[0] == 1:
                p.zero_()
            elif name.endswith("LayerNorm.weight"):
                p.fill_(1.0)
            elif name.endswith("bias") and "relative_attention_bias" not in name:
                p.zero_()
            elif p.dim() == 2 and p.shape[0] == p.shape[1]:
                p.copy_(saved.t())
            else:
                p.copy_(saved[torch.randperm(saved.shape[0], generator=g)])
        d = moved()
        with torch.no_grad():
            p.copy_(saved)
        if d < smallest[0]:
            smallest = (d, name)
        if d <= 1e-3:
            errors.append(f"mutating {name} moves the outputs by only {d:.1e}")
    extra = ""
    if arch.startswith("MPNet"):
        mp = sys.modules[type(model).__module__]
        enc = mp.MPNetEncoder
        orig = enc.relative_position_bucket
        enc.relative_position_bucket = staticmethod(
            lambda rp, num_buckets=32, max_distance=128: orig(rp, num_buckets, 64))
        d_clamp = moved()
        enc.relative_position_bucket = staticmethod(orig)
        orig_pos = mp.create_position_ids_from_input_ids
        mp.create_position_ids_from_input_ids = lambda input_ids, padding_idx: orig_pos(
            input_ids, padding_idx) - padding_idx - 1
        d_pos = moved()
        mp.create_position_ids_from_input_ids = orig_pos
        extra = f", bucket clamp 64: {d_clamp:.1e}, positions from 0: {d_pos:.1e}"
        for what, d in (("bucket clamp", d_clamp), ("positions", d_pos)):
            if d <= 1e-3:
                errors.append(f"MPNet {what} mutation moves the outputs by only {d:.1e}")
    model.load_state_dict(state)
    return f"smallest mutation effect {smallest[0]:.1e} ({smallest[1]}){extra}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutations", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    torch.set_num_threads(1)
    folders = sorted(p for p in MODELS.glob("tiny-*") if p.is_dir()
                     and (not args.names or p.name in args.names))
    if not folders:
        sys.exit(f"no tiny-* folders under {MODELS}")
    failed = 0
    for folder in folders:
        line, errors = check_folder(folder, args.mutations)
        print(line)
        for e in errors:
            print(f"  FAIL {folder.name}: {e}")
        failed += bool(errors)
    print(f"check_tiny_models: {len(folders) - failed}/{len(folders)} ok "
          f"(transformers {transformers.__version__}, torch {torch.__version__})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
