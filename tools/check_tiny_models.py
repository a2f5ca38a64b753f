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
  - long cases: the stored rows of the 8,192-token pass within 1e-5,
    pooled of the text alone cosine >= 0.999999;
  - config_variants: the variant config gives the same states;
  - layout variants (tiny-nomic-bert-hub, tiny-modernbert-layertypes): the
    same weights, tokenizer and expected.json as their base; the Hub-config
    NomicBERT folder is loaded through a transformers-shaped config.json
    (transformers 5.24 cannot read n_embd etc.) and this script's own Hub
    renaming must load the same tensors as transformers' conversion_mapping;
  - sensitivity (long-context models): a wrong window (|i-j| <= 7 or 9 for
    8), global attention everywhere, swapped rope thetas, another global
    layer pattern, another rope theta or scaling each move the long case (or
    the longest case) by more than 1e-3; prints the share of query-key pairs
    a sliding window keeps.
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
import inspect
import json
import pathlib
import shutil
import sys
import tempfile

import numpy as np
import sentence_transformers
import torch
import transformers
from tokenizers import Tokenizer

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "data" / "models"
sys.path.insert(0, str(ROOT / "tools"))
import make_tiny_models as gen  # noqa: E402  (the Hub renaming and config shapes)


def load(folder):
    cfg = json.loads((folder / "config.json").read_text())
    arch = cfg["architectures"][0]
    return getattr(transformers, arch).from_pretrained(str(folder)).eval(), arch


def forward(model, arch, ids, tt=None, mask=None):
    kw = {"input_ids": ids}
    # MPNet, ModernBERT and Qwen3 have no token types
    if tt is not None and "token_type_ids" in inspect.signature(model.forward).parameters \
            and model.config.model_type != "mpnet":
        kw["token_type_ids"] = tt
    if mask is not None:
        kw["attention_mask"] = mask
    with torch.no_grad():
        out = model(**kw, output_hidden_states=True)
    # the base models' output (ModernBERT's and Qwen3's hidden_states[-1] come
    # before the final norm); the task models' encoder output
    last = out.last_hidden_state[0] if "last_hidden_state" in out else out.hidden_states[-1][0]
    extra = None
    if arch.endswith("ForSequenceClassification"):
        extra = out.logits[0]
    elif arch.endswith("ForMaskedLM"):
        extra = torch.log1p(torch.relu(out.logits[0])).max(0).values
    return last, extra


def hub_nomic_as_transformers(folder, tmp):
    """A Hub-layout (remote-code config) NomicBERT folder as transformers 5
    loads it: the same files with config.json in transformers' shape (the
    weights keep the Hub's names; transformers' conversion_mapping renames
    them on load). Also checks that this script's own renaming loads the same
    tensors."""
    hub = json.loads((folder / "config.json").read_text())
    cfg = gen.config_from_hub_nomic(hub)
    shutil.copytree(folder, tmp, dirs_exist_ok=True)
    config = transformers.NomicBertConfig(**cfg, architectures=["NomicBertModel"])
    config.save_pretrained(str(tmp))
    from safetensors.torch import load_file
    mine = transformers.NomicBertModel(config).eval()
    mine.load_state_dict(gen.nomic_from_hub(load_file(str(folder / "model.safetensors"))),
                         strict=True)
    theirs = transformers.NomicBertModel.from_pretrained(str(tmp)).eval()
    a, b = mine.state_dict(), theirs.state_dict()
    same = a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    return tmp, same


def check_folder(folder, mutations):
    errors = []
    note = ""
    cfg = json.loads((folder / "config.json").read_text())
    if "n_embd" in cfg:  # the Hub's remote-code NomicBertConfig
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()  # its load report is long
        try:
            transformers.AutoModel.from_pretrained(str(folder))
            note = "; transformers loads the Hub config directly"
        except Exception as e:  # noqa: BLE001  (5.24: reads n_embd etc. as unknown keys)
            note = f"; transformers cannot load the Hub config itself ({type(e).__name__})"
        transformers.logging.set_verbosity(verbosity)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="tiny-hub-"))
        try:
            tmp_folder, same = hub_nomic_as_transformers(folder, tmp)
            if not same:
                errors.append("own Hub renaming and transformers' conversion_mapping differ")
            note += ", own renaming == transformers' conversion_mapping" if same else ""
            line, more = check_folder_loaded(tmp_folder, folder.name, mutations)
        finally:
            shutil.rmtree(tmp)
    else:
        line, more = check_folder_loaded(folder, folder.name, mutations)
    base = {n: SPECS_BASE[n] for n in SPECS_BASE}.get(folder.name)
    if base:  # a layout variant: the same weights and outputs as its base folder
        b = MODELS / base
        for f in ("expected.json", "model.safetensors", "tokenizer.json", "modules.json",
                  "1_Pooling/config.json"):
            if (b / f).read_bytes() != (folder / f).read_bytes():
                errors.append(f"{f} differs from {base}'s")
        note += f"; weights, tokenizer and expected.json identical to {base}'s"
    return line + note, errors + more


SPECS_BASE = {n: s[8]["base"] for n, s in gen.SPECS.items() if len(s) > 8 and "base" in s[8]}


def check_folder_loaded(folder, name, mutations):
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
        ids, tt = ids_of(c.get("prompt", "") + c["text"])
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
        for c in exp["cases"] + exp.get("long_cases", []):
            kw = {"prompt_name": c["prompt_name"]} if "prompt_name" in c else {}
            v = st.encode([c["text"]], convert_to_numpy=True, **kw)[0].astype(np.float64)
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

    for c in exp.get("long_cases", []):
        ids, tt = ids_of(c["text"])
        if ids != c["token_ids"] or tt != c["token_type_ids"]:
            errors.append("token ids of the long case")
        last, _ = forward(model, arch, torch.tensor([c["token_ids"]]),
                          torch.tensor([c["token_type_ids"]]))
        d = float(np.abs(last[c["rows"]].numpy() - np.asarray(c["last_hidden_state"])).max())
        worst["hidden"] = max(worst["hidden"], d)
    for var in exp.get("config_variants", []):
        cfg = json.loads((folder / "config.json").read_text())
        cfg = {k: v for k, v in cfg.items() if k not in var["drop"]}
        cfg.update(var["set"])
        other = getattr(transformers, arch).from_pretrained(
            str(folder), config=transformers.AutoConfig.for_model(**cfg)).eval()
        for c in exp["cases"]:
            last, _ = forward(other, arch, torch.tensor([c["token_ids"]]))
            d = float(np.abs(last.numpy() - np.asarray(c["last_hidden_state"])).max())
            worst["hidden"] = max(worst["hidden"], d)

    if worst["hidden"] > 1e-5 or worst["scores"] > 1e-5 or worst["sparse"] > 1e-5 or \
            worst["pooled_cos"] < 0.999999:
        errors.append(f"outputs: {worst}")
    line = (f"{name}: {arch}, {len(exp['cases'])} cases, {len(exp.get('pairs', []))} "
            f"pairs, worst hidden {worst['hidden']:.1e}, pooled cos {worst['pooled_cos']:.8f}, "
            f"scores {worst['scores']:.1e}, sparse {worst['sparse']:.1e}")
    if exp.get("long_cases") or exp.get("config_variants"):
        line += "; " + check_sensitivity(folder, model, arch, exp, errors)
    if mutations:
        line += "; " + check_mutations(model, arch, exp, errors)
    return line, errors


def check_sensitivity(folder, model, arch, exp, errors):
    """The stored outputs tell apart the config readings a C++ port could get
    wrong: each variant must move them by more than 1e-3 (10x the suite's
    tolerance)."""
    cfg = model.config
    long = exp.get("long_cases", [])
    c = long[0] if long else max(exp["cases"], key=lambda c: len(c["token_ids"]))
    ids = torch.tensor([c["token_ids"]])
    rows = c.get("rows", list(range(len(c["token_ids"]))))
    base, _ = forward(model, arch, ids)
    base = base[rows]
    variants = []
    figures = []
    if cfg.model_type == "modernbert":
        w = cfg.sliding_window  # local_attention // 2: keys with |i - j| <= w
        n = len(c["token_ids"])
        kept = sum(min(n - 1, i + w) - max(0, i - w) + 1 for i in range(n))
        figures.append(f"window |i-j| <= {w}: a sliding layer keeps {kept / n / n:.2%} of the "
                       f"{n}x{n} query-key pairs of the long case")
        short = [len(x["token_ids"]) for x in exp["cases"]]
        figures.append(f"cases longer than a window ({2 * w + 1}): "
                       f"{sum(k > 2 * w + 1 for k in short)}/{len(short)}")
        rope = cfg.rope_parameters
        variants += [
            ("global attention everywhere", dict(layer_types=["full_attention"] * len(cfg.layer_types))),
            (f"window |i-j| <= {w + 1}", dict(local_attention=cfg.local_attention + 2)),
            (f"window |i-j| <= {w - 1}", dict(local_attention=cfg.local_attention - 2)),
            ("rope thetas swapped", dict(rope_parameters={
                "full_attention": dict(rope["sliding_attention"]),
                "sliding_attention": dict(rope["full_attention"])})),
            ("global layers 0,2 (every 2nd)", dict(layer_types=[
                "full_attention" if i % 2 == 0 else "sliding_attention"
                for i in range(len(cfg.layer_types))]))]
    if cfg.model_type == "nomic_bert":
        variants += [("rope theta 10000", dict(rope_parameters={"rope_type": "default",
                                                                "rope_theta": 10000.0}))]
    if cfg.model_type == "qwen3":
        rp = dict(cfg.rope_parameters)
        variants += [("no rope scaling", dict(rope_parameters=dict(rp, rope_type="default"))),
                     ("linear factor 4", dict(rope_parameters=dict(rp, factor=4.0)))]
    out = []
    for what, over in variants:
        conf = transformers.AutoConfig.from_pretrained(str(folder))
        for k, v in over.items():
            setattr(conf, k, v)
        other = getattr(transformers, arch).from_pretrained(str(folder), config=conf).eval()
        last, _ = forward(other, arch, ids)
        d = float((last[rows] - base).abs().max())
        out.append(f"{what}: {d:.2g}")
        if d <= 1e-3:
            errors.append(f"{what} moves the outputs by only {d:.1e}")
    if long:
        tail = ids[:, -1024:]
        last, _ = forward(model, arch, tail)
        d = float((last[-70:] - base[-70:]).abs().max())
        out.append(f"last 70 rows from the last 1024 tokens alone: {d:.2g}")
    return "; ".join(figures + [f"{'long case' if long else 'longest case'} moves by " +
                                ", ".join(out)])


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
