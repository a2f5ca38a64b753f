#!/usr/bin/env python3
"""Builds the tiny random test models of data/models/tiny-*/ with Hugging Face
transformers' own classes, and their expected outputs (the oracle the C++
suite compares tessera against).

Run it in the benchmark venv (torch, transformers and sentence-transformers;
torch never goes into CI or the project venv), from the repository root:

    bash bench/embed/setup-venv.sh
    OMP_NUM_THREADS=1 .venv-bench/bin/python tools/make_tiny_models.py
    .venv-bench/bin/python tools/check_tiny_models.py      # re-verifies them

(--only NAME[,NAME] rebuilds some; --seed changes the seed, 20261205 by
default.) The tokenizers were trained with the `tokenizers` library on local
text (data/long/*.txt, data/tokenizer/sentences.txt,
data/golden/inputs.jsonl); a rerun reuses the committed tokenizer.json of
tiny-bert / tiny-mpnet / tiny-roberta / tiny-xlm-roberta, because the
WordPiece and Unigram trainers break frequency ties in hash-map order (two
trainings can number the vocabulary differently); --retrain-tokenizers trains
them afresh. Given the tokenizers, everything is deterministic for a seed and
a set of versions: the models are initialised from torch.manual_seed(seed + k)
and then perturbed, and a rerun reproduces the committed files.

The models (hidden 32, 4 heads, 2 layers, intermediate 64; vocab_size = the
attached tokenizer's size, added tokens included):

| folder             | class                                   | tokenizer                                      | head / pooling                      | safetensors prefix |
| tiny-bert          | BertModel                               | WordPiece, BertNormalizer, BertPreTokenizer, BertProcessing | sentence-transformers: mean pooling | none (embeddings., encoder., pooler.) |
| tiny-mpnet         | MPNetModel                              | WordPiece + RobertaProcessing (<s>=0 <pad>=1 </s>=2 <unk>=3), as all-mpnet-base-v2 | mean pooling + Normalize | none (embeddings., encoder. incl. encoder.relative_attention_bias, pooler.) |
| tiny-roberta       | RobertaModel                            | byte-level BPE + RobertaProcessing             | cls pooling                         | none (embeddings., encoder., pooler.) |
| tiny-xlm-roberta   | XLMRobertaModel                         | Unigram + Metaspace + TemplateProcessing       | mean pooling                        | none (embeddings., encoder., pooler.) |
| tiny-bert-rerank   | BertForSequenceClassification, 1 label | as tiny-bert                                   | pooler (tanh) + classifier          | "bert." + classifier.{weight,bias} |
| tiny-xlmr-rerank   | XLMRobertaForSequenceClassification, 1 label | as tiny-xlm-roberta                       | classifier.dense (tanh) + classifier.out_proj on <s> | "roberta." (no pooler) + classifier.dense.*, classifier.out_proj.* |
| tiny-bert-classify | BertForSequenceClassification, 3 labels, id2label | as tiny-bert                         | pooler + classifier                 | "bert." + classifier.{weight,bias} |
| tiny-splade        | BertForMaskedLM                         | as tiny-bert                                   | MLM head; SPLADE max(log(1+relu(logits))) over unmasked tokens | "bert." (no pooler) + cls.predictions.{bias, transform.dense.*, transform.LayerNorm.*}; the decoder weight is tied to bert.embeddings.word_embeddings.weight and is not stored |

The base models' names carry no prefix, as a sentence-transformers folder's
model.safetensors (saved from AutoModel) does; the task heads' encoders carry
"bert." / "roberta." as HF checkpoints of those classes do. Weights are
written by save_pretrained, which in transformers 5 always writes
model.safetensors (the safe_serialization argument is gone); buffers
(position_ids, token_type_ids) are not stored.

Perturbation after HF's random init, so that a wrong name mapping, a missing
bias, a LayerNorm without its affine part, a wrong padding row or a wrong
position offset cannot pass: initializer_range 0.15 (attention far from
uniform); every LayerNorm weight 1 + N(0, 0.3), every bias N(0, 0.2), every
embedding table + N(0, 0.1) (padding rows too, so position padding_idx must
never be read), MPNet's relative attention bias N(0, 1) per bucket and head,
the MLM output bias N(-3, 0.5) (SPLADE vectors then are sparse).

MPNet: relative_attention_num_buckets 32 (16 per direction, exact up to 8,
log buckets up to 128, clamped beyond); its inputs include ones of ~140 and
~200 tokens so distances above 128 occur. max_position_embeddings 514 with
padding_idx 1 for mpnet / roberta / xlm-roberta (positions start at 2, as HF's
create_position_ids_from_input_ids does); 512 for BERT.

expected.json (floats rounded to 7 significant digits; torch f32, eval mode):
  generator: versions and seed
  cases: per text: token_ids and token_type_ids as the folder's HF tokenizer
         gives them (specials included; no input is truncated), the encoder's
         last_hidden_state [tokens][hidden] for that text alone (no padding);
         for embedding models pooled = SentenceTransformer(folder).encode (a
         padded batch); for sequence-classification models scores = the
         raw logits of the text alone
  pairs: (sequence-classification models) query, text, token ids of
         tokenizer(query, text, truncation=True) as CrossEncoder makes them,
         scores = raw logits [num_labels] (CrossEncoder with activation
         Identity, checked equal to AutoModelForSequenceClassification)
  sparse: (tiny-splade) per text the nonzero entries of the SPLADE vector,
         sorted by index (checked equal to sentence-transformers'
         SparseEncoder(MLMTransformer, SpladePooling("max")) on a padded batch)
"""

import argparse
import collections
import json
import math
import os
import pathlib
import shutil
import sys
import unicodedata

import numpy as np
import sentence_transformers
import tokenizers
import torch
import transformers
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "models"
DEFAULT_SEED = 20261205
SIZES = dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2, intermediate_size=64)
ST_MAX_SEQ_LENGTH = 256


# ----------------------------------------------------------------------------- corpus


def corpus():
    texts = []
    for p in sorted((ROOT / "data" / "long").glob("*.txt")):
        texts.extend(p.read_text(encoding="utf-8").split("\n"))
    texts.extend((ROOT / "data" / "tokenizer" / "sentences.txt").read_text(encoding="utf-8")
                 .split("\n"))
    with open(ROOT / "data" / "golden" / "inputs.jsonl", encoding="utf-8") as f:
        texts.extend(json.loads(line)["text"] for line in f if line.strip())
    return [t for t in texts if t.strip()]


def golden(id_):
    with open(ROOT / "data" / "golden" / "inputs.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] == id_:
                return r["text"]
    raise KeyError(id_)


def long_text(tok, lo, hi, doc="doc03.txt", skip=0):
    """A prefix of a data/long document of lo..hi tokens (specials included)."""
    words = (ROOT / "data" / "long" / doc).read_text(encoding="utf-8").split(" ")[skip:]
    for n in range(10, len(words)):
        text = " ".join(words[:n])
        k = len(tok(text)["input_ids"])
        if lo <= k <= hi:
            return text
        if k > hi:
            break
    raise RuntimeError(f"no prefix of {doc} with {lo}..{hi} tokens")


# ----------------------------------------------------------------------------- tokenizers

VOCAB = 800


def train_bert_wordpiece(texts):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="##",
                                     max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=VOCAB, special_tokens=specials, limit_alphabet=200,
        continuing_subword_prefix="##", show_progress=False))
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tok


def train_mpnet_wordpiece(texts):
    # As all-mpnet-base-v2's tokenizer.json: BERT's uncased WordPiece with
    # <s> <pad> </s> <unk> in front, WordPiece's unk "[UNK]", <mask> last,
    # RobertaProcessing (<s> A </s> </s> B </s>).
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="##",
                                     max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "[UNK]"]
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=VOCAB, special_tokens=specials, limit_alphabet=200,
        continuing_subword_prefix="##", show_progress=False))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False,
                                       special=True)])
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0),
                                                      trim_offsets=True, add_prefix_space=False)
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tok


def train_roberta_bpe(texts):
    tok = Tokenizer(models.BPE(unk_token=None, continuing_subword_prefix="",
                               end_of_word_suffix="", fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                                                 use_regex=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=specials, min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False,
                                       special=True)])
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0),
                                                      trim_offsets=True, add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def train_xlmr_unigram(texts):
    # XLM-R's tokenizer.json has a Precompiled (SentencePiece charsmap)
    # normalizer; without sentencepiece here, NFKC and the same collapse of
    # space runs stand in for it.
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always",
                                                 split=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    # The Unigram trainer keeps every character it sees; as SentencePiece's
    # character_coverage does, characters seen fewer than 3 times are left out
    # of training (they become <unk>), and the vocabulary is 1000.
    counts = collections.Counter(ch for t in texts for ch in unicodedata.normalize("NFKC", t))
    rare = {ch for ch, n in counts.items() if n < 3}
    kept = ["".join(" " if ch in rare else ch for ch in unicodedata.normalize("NFKC", t))
            for t in texts]
    tok.train_from_iterator(kept, trainers.UnigramTrainer(
        vocab_size=1000, special_tokens=specials, unk_token="<unk>", max_piece_length=16,
        show_progress=False))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False,
                                       special=True)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)])
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    return tok


def save_tokenizer(tok, special, input_names, max_length, folder):
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=max_length,
                                                model_input_names=input_names, **special)
    fast.save_pretrained(str(folder))
    with open(folder / "special_tokens_map.json", "w", encoding="utf-8") as f:
        json.dump(special, f, indent=2)
        f.write("\n")
    # Keep the trained pipeline exactly (save_pretrained may add the padding
    # or truncation it was given; the C++ loader reads tokenizer.json).
    tok.save(str(folder / "tokenizer.json"))


# ----------------------------------------------------------------------------- models


def perturb(model, seed):
    g = torch.Generator().manual_seed(seed)

    def noise(p, std, mean=0.0):
        return torch.randn(p.shape, generator=g, dtype=p.dtype) * std + mean

    with torch.no_grad():
        for name, p in model.named_parameters():
            if "relative_attention_bias" in name:
                p.copy_(noise(p, 1.0))
            elif name.endswith("LayerNorm.weight") or name.endswith("layer_norm.weight"):
                p.copy_(noise(p, 0.3, 1.0))
            elif name == "cls.predictions.bias":
                p.copy_(noise(p, 0.5, -3.0))
            elif name.endswith("bias"):
                p.copy_(noise(p, 0.2))
            elif "embeddings" in name:
                p.add_(noise(p, 0.1))


def write_st_folder(folder, pooling, normalize, dim):
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        # As all-mpnet-base-v2: the Normalize module has no folder of its own.
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    with open(folder / "modules.json", "w", encoding="utf-8") as f:
        json.dump(modules, f, indent=2)
        f.write("\n")
    (folder / "1_Pooling").mkdir(exist_ok=True)
    with open(folder / "1_Pooling" / "config.json", "w", encoding="utf-8") as f:
        json.dump({"word_embedding_dimension": dim,
                   "pooling_mode_cls_token": pooling == "cls",
                   "pooling_mode_mean_tokens": pooling == "mean",
                   "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False,
                   "pooling_mode_weightedmean_tokens": False,
                   "pooling_mode_lasttoken": False,
                   "include_prompt": True}, f, indent=2)
        f.write("\n")
    with open(folder / "sentence_bert_config.json", "w", encoding="utf-8") as f:
        json.dump({"max_seq_length": ST_MAX_SEQ_LENGTH, "do_lower_case": False}, f, indent=2)
        f.write("\n")
    with open(folder / "config_sentence_transformers.json", "w", encoding="utf-8") as f:
        json.dump({"__version__": {"sentence_transformers": sentence_transformers.__version__,
                                   "transformers": transformers.__version__,
                                   "pytorch": torch.__version__},
                   "prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"},
                  f, indent=2)
        f.write("\n")


# name: (tokenizer, config class, model class, config extras, kind, pooling, normalize)
BERT_CFG = dict(max_position_embeddings=512, type_vocab_size=2, hidden_act="gelu",
                layer_norm_eps=1e-12, pad_token_id=0, initializer_range=0.15)
ROBERTA_CFG = dict(max_position_embeddings=514, type_vocab_size=1, hidden_act="gelu",
                   layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                   initializer_range=0.15)
MPNET_CFG = dict(max_position_embeddings=514, relative_attention_num_buckets=32, hidden_act="gelu",
                 layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                 initializer_range=0.15)

SPECS = {
    "tiny-bert": ("bert", "BertConfig", "BertModel", BERT_CFG, {}, "embed", "mean", False),
    "tiny-mpnet": ("mpnet", "MPNetConfig", "MPNetModel", MPNET_CFG, {}, "embed", "mean", True),
    "tiny-roberta": ("roberta", "RobertaConfig", "RobertaModel", ROBERTA_CFG, {}, "embed", "cls",
                     False),
    "tiny-xlm-roberta": ("xlmr", "XLMRobertaConfig", "XLMRobertaModel", ROBERTA_CFG, {}, "embed",
                         "mean", False),
    "tiny-camembert": ("xlmr", "CamembertConfig", "CamembertModel", ROBERTA_CFG, {}, "embed",
                       "mean", False),
    "tiny-bert-rerank": ("bert", "BertConfig", "BertForSequenceClassification", BERT_CFG,
                         dict(num_labels=1), "classify", None, False),
    "tiny-xlmr-rerank": ("xlmr", "XLMRobertaConfig", "XLMRobertaForSequenceClassification",
                         ROBERTA_CFG, dict(num_labels=1), "classify", None, False),
    "tiny-bert-classify": ("bert", "BertConfig", "BertForSequenceClassification", BERT_CFG,
                           dict(num_labels=3, id2label={0: "negative", 1: "neutral",
                                                        2: "positive"},
                                label2id={"negative": 0, "neutral": 1, "positive": 2}),
                           "classify", None, False),
    "tiny-splade": ("bert", "BertConfig", "BertForMaskedLM", BERT_CFG, {}, "splade", None, False),
}
TOKENIZERS = {"bert": train_bert_wordpiece, "mpnet": train_mpnet_wordpiece,
              "roberta": train_roberta_bpe, "xlmr": train_xlmr_unigram}
# The committed tokenizer of each kind, reused unless --retrain-tokenizers:
# the WordPiece and Unigram trainers break frequency ties in hash-map order,
# so two trainings on the same text can number the vocabulary differently.
TOKENIZER_HOME = {"bert": "tiny-bert", "mpnet": "tiny-mpnet", "roberta": "tiny-roberta",
                  "xlmr": "tiny-xlm-roberta"}
ROBERTA_SPECIAL = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>", sep_token="</s>",
                       pad_token="<pad>", cls_token="<s>", mask_token="<mask>")
SPECIAL = {"bert": dict(unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                        cls_token="[CLS]", mask_token="[MASK]"),
           "mpnet": dict(ROBERTA_SPECIAL, unk_token="[UNK]"),
           "roberta": ROBERTA_SPECIAL, "xlmr": ROBERTA_SPECIAL}
INPUT_NAMES = {"bert": ["input_ids", "token_type_ids", "attention_mask"],
               "mpnet": ["input_ids", "attention_mask"],
               "roberta": ["input_ids", "attention_mask"],
               "xlmr": ["input_ids", "attention_mask"]}
MAX_LENGTH = {"bert": 512, "mpnet": 512, "roberta": 512, "xlmr": 512}


# ----------------------------------------------------------------------------- inputs


def case_texts(name, hf_tok):
    texts = [
        "Hello",
        "The quick brown fox jumps over the lazy dog.",
        golden("accents-fr"),
        golden("mixed-script") + " " + golden("emoji"),
        "  Leading spaces,\ttabs\tand   runs of  spaces.\n\nA new paragraph ends here.  ",
        golden("numbers"),
        long_text(hf_tok, 180, 200),
    ]
    if name == "tiny-mpnet":
        texts.append(long_text(hf_tok, 135, 145, doc="doc07.txt"))
    if name in ("tiny-xlm-roberta", "tiny-xlmr-rerank", "tiny-camembert"):
        texts.append(golden("cjk-ja"))
    return texts


def pair_inputs(hf_tok):
    return [
        ("how do I bake bread?", "Mix flour, water, salt and yeast; let it rise, then bake."),
        ("what is the capital of France?", "Paris is the capital and largest city of France."),
        ("what is the capital of France?", "The quick brown fox jumps over the lazy dog."),
        ("Café crème?", golden("accents-fr")),
        ("budget review", long_text(hf_tok, 150, 170, doc="doc05.txt")),
    ]


# ----------------------------------------------------------------------------- oracle


def r7(x):
    return float(f"{float(x):.7g}")


def rows(t):
    return [[r7(v) for v in row] for row in t.tolist()]


def write_expected(path, expected):
    """One case / pair / sparse row per line: a changed case is a one-line diff."""
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"generator": ' + json.dumps(expected["generator"]))
        for key in ("cases", "pairs", "sparse"):
            if key in expected:
                f.write(',\n"' + key + '": [\n')
                f.write(",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":"))
                                   for c in expected[key]))
                f.write("\n]")
        f.write("}\n")


def cosine(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def build(name, seed, tok_cache):
    tok_kind, cfg_cls, model_cls, cfg_extra, task_extra, kind, pooling, normalize = SPECS[name]
    folder = OUT / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)

    tok = Tokenizer.from_str(tok_cache[tok_kind].to_str())  # a copy per folder
    special, input_names = SPECIAL[tok_kind], INPUT_NAMES[tok_kind]
    vocab = tok.get_vocab_size(with_added_tokens=True)
    save_tokenizer(tok, special, input_names, MAX_LENGTH[tok_kind], folder)

    config = getattr(transformers, cfg_cls)(vocab_size=vocab, **SIZES, **cfg_extra, **task_extra)
    k = sorted(SPECS).index(name)
    torch.manual_seed(seed + k)
    model = getattr(transformers, model_cls)(config).eval()
    perturb(model, seed + 1000 + k)
    model.save_pretrained(str(folder))
    assert (folder / "model.safetensors").exists()
    if kind == "embed":
        write_st_folder(folder, pooling, normalize, SIZES["hidden_size"])
    del model

    # Everything below reloads the folder, as a user of it would.
    hf_tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    generator = {"transformers": transformers.__version__, "torch": torch.__version__,
                 "sentence_transformers": sentence_transformers.__version__,
                 "tokenizers": tokenizers.__version__, "seed": seed}
    expected = {"generator": generator, "cases": []}
    if kind == "embed":
        model = transformers.AutoModel.from_pretrained(str(folder)).eval()
    elif kind == "classify":
        model = transformers.AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    else:
        model = transformers.AutoModelForMaskedLM.from_pretrained(str(folder)).eval()
    assert type(model).__name__ == model_cls, type(model)

    inputs = case_texts(name, hf_tok)
    with torch.no_grad():
        for text in inputs:
            enc = hf_tok(text, truncation=True, return_tensors="pt")
            ids = enc["input_ids"]
            tt = enc.get("token_type_ids", torch.zeros_like(ids))
            out = model(**enc, output_hidden_states=True)
            last = out.last_hidden_state if kind == "embed" else out.hidden_states[-1]
            case = {"text": text, "token_ids": ids[0].tolist(), "token_type_ids": tt[0].tolist(),
                    "last_hidden_state": rows(last[0])}
            if kind == "classify":
                case["scores"] = [r7(v) for v in out.logits[0].tolist()]
            if kind == "splade":
                case["_logits"] = out.logits[0]
            expected["cases"].append(case)

    if kind == "embed":
        st = sentence_transformers.SentenceTransformer(str(folder), device="cpu")
        pooled = st.encode(inputs, batch_size=4, convert_to_numpy=True)
        for case, v in zip(expected["cases"], pooled):
            h = np.asarray(case["last_hidden_state"], np.float64)
            mine = h[0] if pooling == "cls" else h.mean(0)
            if normalize:
                mine = mine / np.linalg.norm(mine)
            assert cosine(mine, v) > 0.99999, (name, case["text"][:30], cosine(mine, v))
            case["pooled"] = [r7(x) for x in v]
            st_ids = st.tokenize([case["text"]])["input_ids"][0].tolist()
            assert st_ids == case["token_ids"], (name, case["text"][:30])

    if kind == "classify":
        pairs = pair_inputs(hf_tok)
        ce = sentence_transformers.CrossEncoder(str(folder), device="cpu",
                                                activation_fn=torch.nn.Identity())
        ce_scores = np.asarray(ce.predict(pairs, batch_size=2, activation_fn=torch.nn.Identity()),
                               np.float64).reshape(len(pairs), -1)
        expected["pairs"] = []
        with torch.no_grad():
            for (q, t), s in zip(pairs, ce_scores):
                enc = hf_tok(q, t, truncation=True, return_tensors="pt")
                logits = model(**enc).logits[0].double().numpy()
                assert np.abs(logits - s).max() < 1e-5, (name, q, logits, s)
                tt = enc.get("token_type_ids", torch.zeros_like(enc["input_ids"]))
                expected["pairs"].append({
                    "query": q, "text": t, "token_ids": enc["input_ids"][0].tolist(),
                    "token_type_ids": tt[0].tolist(), "scores": [r7(v) for v in logits]})

    if kind == "splade":
        expected["sparse"] = []
        dense = []
        for case in expected["cases"]:
            logits = case.pop("_logits")
            v = torch.log1p(torch.relu(logits)).max(dim=0).values  # one text: no mask needed
            dense.append(v.numpy())
            idx = torch.nonzero(v > 0).flatten().tolist()
            expected["sparse"].append({"text": case["text"], "token_ids": case["token_ids"],
                                       "indices": idx, "values": [r7(v[i]) for i in idx]})
        from sentence_transformers.sparse_encoder import SparseEncoder
        from sentence_transformers.sparse_encoder.modules import MLMTransformer, SpladePooling
        mlm = MLMTransformer(str(folder))
        se = SparseEncoder(modules=[mlm, SpladePooling("max", word_embedding_dimension=vocab)],
                           device="cpu")
        theirs = se.encode(inputs, batch_size=4, convert_to_tensor=True).to_dense().numpy()
        for t, mine, ref in zip(inputs, dense, theirs):
            assert np.abs(mine - ref).max() < 1e-5, (name, t[:30], np.abs(mine - ref).max())

    write_expected(folder / "expected.json", expected)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    lens = [len(c["token_ids"]) for c in expected["cases"]]
    extra = ""
    if "sparse" in expected:
        nnz = [len(s["indices"]) for s in expected["sparse"]]
        near = sum(1 for s in expected["sparse"] for x in s["values"] if 5e-4 < x < 2e-3)
        extra = f", sparse nnz {nnz} of {vocab} ({near} values in (5e-4, 2e-3))"
    print(f"{name}: vocab {vocab}, case lengths {lens}, {size / 1024:.0f} KiB{extra}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--only", default="", help="comma-separated folder names")
    ap.add_argument("--retrain-tokenizers", action="store_true",
                    help="train the tokenizers afresh instead of reusing the committed ones")
    args = ap.parse_args()
    names = [n for n in SPECS if not args.only or n in args.only.split(",")]
    unknown = set(filter(None, args.only.split(","))) - set(SPECS)
    if unknown:
        sys.exit(f"unknown model(s) {sorted(unknown)}; known: {sorted(SPECS)}")
    torch.set_num_threads(1)
    tok_cache = {}
    texts = None
    for kind in sorted({SPECS[n][0] for n in names}):
        home = OUT / TOKENIZER_HOME[kind] / "tokenizer.json"
        if home.exists() and not args.retrain_tokenizers:
            tok_cache[kind] = Tokenizer.from_file(str(home))
            print(f"tokenizer {kind}: reusing {home.relative_to(ROOT)}")
        else:
            texts = texts or corpus()
            tok_cache[kind] = TOKENIZERS[kind](texts)
            print(f"tokenizer {kind}: trained")
    for name in names:
        build(name, args.seed, tok_cache)


if __name__ == "__main__":
    main()
