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

The long-context architectures (hidden 32, 4 query heads, intermediate 64;
initializer_range 0.3 so attention is far from uniform: mean max attention
probability 0.16-0.51 on a 182-token input against 0.0055 uniform):

| folder | class | layers / heads / kv heads / head_dim | blocks | positions | tokenizer | pooling | safetensors names |
| tiny-nomic-bert | NomicBertModel (model_type nomic_bert) | 2 / 4 / 4 / 8 | post-norm: x = LN(x + attn(x)); x = LN(x + mlp(x)); LayerNorm with bias, eps 1e-12; embeddings = word + token_type (no position table) then LayerNorm; no linear biases; SwiGLU down(silu(gate(x)) * up(x)) | rotary on the full head_dim, theta 1000, rotate_half (non-interleaved: pairs (d, d + 4)), positions 0..n-1, max 8192 | tiny-bert's WordPiece (model_max_length 8192); types all 0 | mean + Normalize, max_seq_length 8192 | the Hub's (transformers 5's save_pretrained writes them, reverting its conversion_mapping): embeddings.word_embeddings [832, 32] (vocab padded to a multiple of 64: rows 800..831 unused), embeddings.token_type_embeddings [2, 32], emb_ln.{weight,bias}, encoder.layers.N.attn.Wqkv [96, 32] (q, k, v stacked along dim 0, each [32, 32], heads contiguous), attn.out_proj, mlp.fc11 (= up_proj), mlp.fc12 (= gate_proj, the one silu applies to), mlp.fc2 (= down_proj), norm1 (after attention), norm2 (after the MLP) |
| tiny-nomic-bert-hub | the same weights, tokenizer and expected.json; config.json as nomic-embed-text-v1.5's (remote-code NomicBertConfig: n_embd, n_head, n_layer, n_inner, n_positions, layer_norm_epsilon, activation_function swiglu, rotary_emb_base, rotary_emb_fraction 1.0, rotary_emb_interleaved false, rotary_scaling_factor null, qkv_proj_bias / mlp_fc1_bias / mlp_fc2_bias false, prenorm false, pad_vocab_size_multiple 64, auto_map) | | | | | | |
| tiny-modernbert | ModernBertModel; config.json in the Hub shape (answerdotai/ModernBERT-base: global_attn_every_n_layers 3, global_rope_theta 160000, local_rope_theta 10000, local_attention 16; no layer_types, no rope_parameters) | 4 / 4 / 4 / 8 | pre-norm: x += attn(attn_norm(x)) (layer 0 has no attn_norm: identity), x += mlp(mlp_norm(x)); final_norm at the end; embeddings = LayerNorm(tok_embeddings) (no position or type table); every LayerNorm without bias (norm_bias false), eps 1e-5; no linear biases; GeGLU: Wi [128, 32] -> (input, gate) = first / second 64 rows, Wo(gelu_erf(input) * gate) | layers 0 and 3 (i % 3 == 0) global: theta 160000; layers 1, 2 sliding: theta 10000 and query i sees key j iff abs(i - j) <= local_attention // 2 = 8 (17 keys; masking_utils' sliding_window_bidirectional_overlay with config.sliding_window = local_attention // 2; the +1 in ModernBertAttention.sliding_window is for flash-attention only); rotate_half; max 8192 | byte-level BPE (ByteLevel pre-tokenizer, add_prefix_space false, no normalizer), TemplateProcessing [CLS] $A [SEP]; [UNK] 800 [CLS] 801 [SEP] 802 [PAD] 803 [MASK] 804 | mean + Normalize, max_seq_length 8192 | embeddings.tok_embeddings, embeddings.norm, layers.N.attn.Wqkv [96, 32] (q, k, v along dim 0), layers.N.attn.Wo, layers.N.attn_norm (N >= 1), layers.N.mlp_norm, layers.N.mlp.Wi, layers.N.mlp.Wo, final_norm (weights only) |
| tiny-modernbert-layertypes | the same weights, tokenizer and expected.json; config.json in transformers 5's shape: layer_types [full, sliding, sliding, full] and rope_parameters {full_attention: {rope_type default, rope_theta 160000}, sliding_attention: {default, 10000}}, local_attention 16 (no global_attn_every_n_layers, no *_rope_theta). 5.24's own save_pretrained writes a mix (layer_types + rope_parameters + global_attn_every_n_layers) | | | | | | |
| tiny-qwen3 | Qwen3Model (decoder) | 3 / 4 / 2 / 16 (q_proj [64, 32], k_proj and v_proj [32, 32], o_proj [32, 64]) | pre-norm: x += attn(input_layernorm(x)), x += mlp(post_attention_layernorm(x)); final norm; RMSNorm x * rsqrt(mean(x^2) + 1e-6) * w everywhere, incl. q_norm / k_norm over each head's 16 dims before rotary; causal; GQA: query head h uses kv head h // 2; scale 1/sqrt(16); SwiGLU, no biases; tie_word_embeddings true (no lm_head stored) | rotary theta 1e6 on the full head_dim, rotate_half, rope_parameters {rope_type linear, factor 2}: position p rotates as p / 2 (inv_freq / 2), no attention scaling; config_variants in expected.json gives the transformers 4 form (rope_theta + rope_scaling) | Qwen2-style byte-level BPE: NFC, Split(Qwen2 regex, Isolated) + ByteLevel(no prefix space, use_regex false), TemplateProcessing $A <|endoftext|>; <|endoftext|> 800 <|im_start|> 801 <|im_end|> 802; padding_side left | last token (pooling_mode_lasttoken, include_prompt true) + Normalize; prompts query "Instruct: ...\nQuery:" / document "" | embed_tokens, layers.N.{input_layernorm, post_attention_layernorm}, layers.N.self_attn.{q,k,v,o}_proj, self_attn.{q,k}_norm [16], layers.N.mlp.{gate,up,down}_proj, norm |

They have cases of ~150 and ~280 tokens besides the common ones, and
nomic / ModernBERT a long case of exactly 8,192 tokens (see long_cases).

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
         Prompted cases (tiny-qwen3) also carry prompt_name and prompt: their
         token ids and states are of prompt + text, and pooled is
         encode(text, prompt_name=...).
  long_cases: (tiny-nomic-bert*, tiny-modernbert*) one document of exactly
         8,192 tokens (specials included), the shortest prefix of
         data/long/*.txt joined by blank lines that makes that many: text,
         token_ids, token_type_ids, rows (sorted: the first and last 70 and
         every 64th token), last_hidden_state [len(rows)][hidden] for those
         rows of the full 8,192-token pass, pooled (SentenceTransformer of the
         text alone, max_seq_length 8192, the mean over all 8,192 rows)
  config_variants: (tiny-qwen3) [{name, drop: [keys], set: {key: value}}]:
         config.json with those keys dropped and set means the same model
         (the transformers 4 form of its rope); the check verifies it
  sparse: (tiny-splade) per text the nonzero entries of the SPLADE vector,
         sorted by index (checked equal to sentence-transformers'
         SparseEncoder(MLMTransformer, SpladePooling("max")) on a padded batch)
"""

import argparse
import collections
import copy
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


# Qwen2's pre-tokenizer regex (tokenizer.json of Qwen2 / Qwen2.5 / Qwen3).
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def train_modernbert_bpe(texts):
    # As answerdotai/ModernBERT-base's tokenizer.json: byte-level BPE (no unk,
    # no normalizer), ByteLevel pre-tokenizer without prefix space,
    # TemplateProcessing [CLS] $A [SEP] / [CLS] $A [SEP] $B [SEP]; the
    # specials [UNK] [CLS] [SEP] [PAD] [MASK] come after the merged vocabulary
    # (ModernBERT: 50280..50284), [MASK] with lstrip.
    tok = Tokenizer(models.BPE(unk_token=None, continuing_subword_prefix="",
                               end_of_word_suffix="", fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                                                 use_regex=True)
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=["|||IP_ADDRESS|||", "<|padding|>", "<|endoftext|>"],
        min_frequency=2, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    for t in ("[UNK]", "[CLS]", "[SEP]", "[PAD]"):
        tok.add_special_tokens([AddedToken(t, lstrip=False, rstrip=False, normalized=False,
                                           special=True)])
    tok.add_special_tokens([AddedToken("[MASK]", lstrip=True, rstrip=False, normalized=False,
                                       special=True)])
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    tok.decoder = decoders.ByteLevel()
    return tok


def train_qwen2_bpe(texts):
    # As Qwen3-Embedding-0.6B's tokenizer.json: NFC, Split(Qwen2 regex,
    # Isolated) then ByteLevel(no prefix space, no regex of its own), byte-level
    # BPE without unk, ByteLevel decoder, <|endoftext|> <|im_start|> <|im_end|>
    # after the merged vocabulary, and a TemplateProcessing that appends
    # <|endoftext|> to each sequence (Qwen3-Embedding's, for last-token pooling).
    tok = Tokenizer(models.BPE(unk_token=None, continuing_subword_prefix="",
                               end_of_word_suffix="", fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=[], min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>"):
        tok.add_special_tokens([AddedToken(t, lstrip=False, rstrip=False, normalized=False,
                                           special=True)])
    eot = tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A:0 <|endoftext|>:0", pair="$A:0 <|endoftext|>:0 $B:1 <|endoftext|>:1",
        special_tokens=[("<|endoftext|>", eot)])
    # decoders.ByteLevel() takes no options; Qwen2's has them all false.
    j = json.loads(tok.to_str())
    j["decoder"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False}
    return Tokenizer.from_str(json.dumps(j))


def save_tokenizer(tok, special, input_names, max_length, folder, **extra):
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=max_length,
                                                model_input_names=input_names, **special, **extra)
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
            elif name.endswith("LayerNorm.weight") or name.endswith("layer_norm.weight") or (
                    name.endswith(".weight") and "norm" in name.split(".")[-2].lower()):
                # LayerNorm / RMSNorm scales (input_layernorm, q_norm, final_norm, ...)
                p.copy_(noise(p, 0.3, 1.0))
            elif name == "cls.predictions.bias":
                p.copy_(noise(p, 0.5, -3.0))
            elif name.endswith("bias"):
                p.copy_(noise(p, 0.2))
            elif "embeddings" in name or "embed_tokens" in name:
                p.add_(noise(p, 0.1))


def write_st_folder(folder, pooling, normalize, dim, max_seq_length=ST_MAX_SEQ_LENGTH,
                    prompts=None):
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
                   "pooling_mode_lasttoken": pooling == "lasttoken",
                   "include_prompt": True}, f, indent=2)
        f.write("\n")
    with open(folder / "sentence_bert_config.json", "w", encoding="utf-8") as f:
        json.dump({"max_seq_length": max_seq_length, "do_lower_case": False}, f, indent=2)
        f.write("\n")
    with open(folder / "config_sentence_transformers.json", "w", encoding="utf-8") as f:
        json.dump({"__version__": {"sentence_transformers": sentence_transformers.__version__,
                                   "transformers": transformers.__version__,
                                   "pytorch": torch.__version__},
                   "prompts": prompts or {}, "default_prompt_name": None,
                   "similarity_fn_name": "cosine"},
                  f, indent=2)
        f.write("\n")


# Each architecture folder holds its tiny models' specs
# (src/model/architectures/<name>/tiny_models.json), so that adding an
# architecture is adding a folder: name -> (tokenizer, config class, model
# class, config fields, config extras, kind, pooling, normalize[, options]).
# Options (the long-context architectures):
#   seed_k: the seed offset (entries without options use their index in the
#     sorted list of such names);
#   max_length: the tokenizer's model_max_length; st_max: sentence-transformers'
#     max_seq_length; long: add an 8,192-token long case; vocab_multiple:
#     pad the embedding table to a multiple (nomic's pad_vocab_size_multiple);
#   base + layout: a folder with the base folder's weights and outputs in
#     another on-disk layout (built from the base folder, not from a seed);
#   config_shape, padding_side, prompts, legacy_rope, drop_config_keys: see build().
ARCHITECTURES = pathlib.Path(__file__).resolve().parent.parent / "src" / "model" / "architectures"


def load_specs():
    specs = {}
    for path in sorted(ARCHITECTURES.glob("*/tiny_models.json")):
        with open(path, encoding="utf-8") as f:
            models = json.load(f)["models"]
        for name, m in models.items():
            extra = dict(m["config_extra"])
            if "id2label" in extra:  # JSON keys are strings; transformers' are ints
                extra["id2label"] = {int(k): v for k, v in extra["id2label"].items()}
            spec = (m["tokenizer"], m["config_class"], m["model_class"], m["config"], extra,
                    m["kind"], m["pooling"], m["normalize"])
            specs[name] = spec + ((m["options"],) if "options" in m else ())
    return specs


SPECS = load_specs()
TOKENIZERS = {"bert": train_bert_wordpiece, "mpnet": train_mpnet_wordpiece,
              "roberta": train_roberta_bpe, "xlmr": train_xlmr_unigram,
              "modernbert": train_modernbert_bpe, "qwen2": train_qwen2_bpe}
# The committed tokenizer of each kind, reused unless --retrain-tokenizers:
# the WordPiece and Unigram trainers break frequency ties in hash-map order,
# so two trainings on the same text can number the vocabulary differently.
TOKENIZER_HOME = {"bert": "tiny-bert", "mpnet": "tiny-mpnet", "roberta": "tiny-roberta",
                  "xlmr": "tiny-xlm-roberta", "modernbert": "tiny-modernbert",
                  "qwen2": "tiny-qwen3"}
ROBERTA_SPECIAL = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>", sep_token="</s>",
                       pad_token="<pad>", cls_token="<s>", mask_token="<mask>")
SPECIAL = {"bert": dict(unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                        cls_token="[CLS]", mask_token="[MASK]"),
           "mpnet": dict(ROBERTA_SPECIAL, unk_token="[UNK]"),
           "roberta": ROBERTA_SPECIAL, "xlmr": ROBERTA_SPECIAL,
           "modernbert": dict(unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                              cls_token="[CLS]", mask_token="[MASK]"),
           # Qwen3-Embedding: eos <|im_end|>, pad <|endoftext|> (which the
           # post-processor appends); no bos, unk, cls or sep.
           "qwen2": dict(eos_token="<|im_end|>", pad_token="<|endoftext|>")}
INPUT_NAMES = {"bert": ["input_ids", "token_type_ids", "attention_mask"],
               "mpnet": ["input_ids", "attention_mask"],
               "roberta": ["input_ids", "attention_mask"],
               "xlmr": ["input_ids", "attention_mask"],
               "modernbert": ["input_ids", "attention_mask"],
               "qwen2": ["input_ids", "attention_mask"]}
MAX_LENGTH = {"bert": 512, "mpnet": 512, "roberta": 512, "xlmr": 512, "modernbert": 8192,
              "qwen2": 131072}


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
    if len(SPECS[name]) > 8:  # the long-context architectures: rotary positions far apart
        texts.append(long_text(hf_tok, 150, 170, doc="doc05.txt"))
        texts.append(long_text(hf_tok, 280, 300, doc="doc07.txt"))
    return texts


# One document of exactly LONG_TOKENS tokens (specials included).
LONG_TOKENS = 8192


def long_document(tok, n=LONG_TOKENS):
    """The shortest prefix of data/long/*.txt (in name order, joined by blank
    lines, repeated if needed) that the tokenizer makes exactly n tokens."""
    docs = [p.read_text(encoding="utf-8").strip() for p in sorted((ROOT / "data" / "long")
                                                                  .glob("*.txt"))]
    full = "\n\n".join(docs)
    while len(tok(full)["input_ids"]) < n:
        full = full + "\n\n" + "\n\n".join(docs)

    def count(k):
        return len(tok(full[:k])["input_ids"])

    lo, hi = 1, len(full)  # smallest prefix with >= n tokens
    while lo < hi:
        mid = (lo + hi) // 2
        if count(mid) >= n:
            hi = mid
        else:
            lo = mid + 1
    for k in range(lo, lo + 200):
        if count(k) == n and not full[k - 1].isspace():
            return full[:k]
    raise RuntimeError(f"no prefix of exactly {n} tokens")


def long_rows(n):
    """The stored rows of a long case: the first and last 70 (the windows'
    edges at both ends) and every 64th (far positions), sorted."""
    return sorted(set(range(70)) | set(range(n - 70, n)) | set(range(0, n, 64)))


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
        for key in ("cases", "pairs", "sparse", "long_cases", "config_variants"):
            if key in expected:
                f.write(',\n"' + key + '": [\n')
                f.write(",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":"))
                                   for c in expected[key]))
                f.write("\n]")
        f.write("}\n")


def cosine(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def seed_index(name):
    opt = SPECS[name][8] if len(SPECS[name]) > 8 else {}
    if "seed_k" in opt:
        return opt["seed_k"]
    return sorted(n for n in SPECS if len(SPECS[n]) == 8).index(name)


def hub_modernbert_config(cfg):
    """config.json as answerdotai/ModernBERT-base has it: the layer pattern as
    global_attn_every_n_layers and the two thetas as global_rope_theta /
    local_rope_theta (no layer_types, no rope_parameters)."""
    cfg = dict(cfg)
    types, rope = cfg.pop("layer_types"), cfg.pop("rope_parameters")
    n = SPECS["tiny-modernbert"][3]["global_attn_every_n_layers"]
    assert types == ["sliding_attention" if i % n else "full_attention" for i in range(len(types))]
    assert all(r["rope_type"] == "default" for r in rope.values())
    cfg["global_attn_every_n_layers"] = n
    cfg["global_rope_theta"] = rope["full_attention"]["rope_theta"]
    cfg["local_rope_theta"] = rope["sliding_attention"]["rope_theta"]
    return dict(sorted(cfg.items()))


def layertypes_modernbert_config(cfg):
    """config.json in transformers 5's shape: layer_types and rope_parameters
    per layer type (no global_attn_every_n_layers, no *_rope_theta)."""
    cfg = dict(cfg)
    n = cfg.pop("global_attn_every_n_layers")
    cfg["layer_types"] = ["sliding_attention" if i % n else "full_attention"
                          for i in range(cfg["num_hidden_layers"])]
    cfg["rope_parameters"] = {
        "full_attention": {"rope_type": "default", "rope_theta": cfg.pop("global_rope_theta")},
        "sliding_attention": {"rope_type": "default", "rope_theta": cfg.pop("local_rope_theta")}}
    return dict(sorted(cfg.items()))


# transformers' NomicBertModel names -> the Hub checkpoint's (remote code
# nomic-ai/nomic-bert-2048, as nomic-embed-text-v1.5's model.safetensors).
NOMIC_HUB_RENAMES = [("embeddings.LayerNorm.", "emb_ln."), ("layers.", "encoder.layers."),
                     (".self_attn.o_proj.", ".attn.out_proj."), (".mlp.up_proj.", ".mlp.fc11."),
                     (".mlp.gate_proj.", ".mlp.fc12."), (".mlp.down_proj.", ".mlp.fc2."),
                     (".post_attention_layernorm.", ".norm1."),
                     (".post_mlp_layernorm.", ".norm2.")]


def nomic_to_hub(state):
    """transformers' tensors -> the Hub names, q/k/v fused into Wqkv along dim 0."""
    out = {}
    for k, v in state.items():
        if ".self_attn.k_proj." in k or ".self_attn.v_proj." in k:
            continue
        if ".self_attn.q_proj." in k:
            v = torch.cat([v, state[k.replace("q_proj", "k_proj")],
                           state[k.replace("q_proj", "v_proj")]], dim=0)
            k = k.replace(".self_attn.q_proj.", ".attn.Wqkv.")
        for a, b in NOMIC_HUB_RENAMES:
            if k.startswith(a) or (a.startswith(".") and a in k):
                k = b + k[len(a):] if k.startswith(a) else k.replace(a, b)
        out[k] = v.contiguous()
    return out


def nomic_from_hub(state):
    """The inverse of nomic_to_hub (the check's own renaming, independent of
    transformers' conversion_mapping)."""
    out = {}
    for k, v in state.items():
        for a, b in reversed(NOMIC_HUB_RENAMES):
            if k.startswith(b) or (b.startswith(".") and b in k):
                k = a + k[len(b):] if k.startswith(b) else k.replace(b, a)
        if ".attn.Wqkv." in k:
            for part, name in zip(v.chunk(3, dim=0), ("q_proj", "k_proj", "v_proj")):
                out[k.replace(".attn.Wqkv.", f".self_attn.{name}.")] = part.contiguous()
            continue
        out[k] = v
    return out


def hub_nomic_config(cfg):
    """config.json as nomic-ai/nomic-embed-text-v1.5 has it (remote-code
    NomicBertConfig, GPT-2 style names), for the sizes of cfg (transformers')."""
    rope = cfg["rope_parameters"]
    assert rope["rope_type"] == "default" and cfg["hidden_act"] == "silu"
    return {
        "_name_or_path": "tiny-nomic-bert-hub",
        "activation_function": "swiglu",
        "architectures": ["NomicBertModel"],
        "attn_pdrop": 0.0,
        "auto_map": {
            "AutoConfig": "nomic-ai/nomic-bert-2048--configuration_hf_nomic_bert.NomicBertConfig",
            "AutoModel": "nomic-ai/nomic-bert-2048--modeling_hf_nomic_bert.NomicBertModel",
            "AutoModelForMaskedLM":
                "nomic-ai/nomic-bert-2048--modeling_hf_nomic_bert.NomicBertForPreTraining"},
        "bos_token_id": None,
        "causal": False,
        "dense_seq_output": True,
        "embd_pdrop": 0.0,
        "eos_token_id": None,
        "fused_bias_fc": True,
        "fused_dropout_add_ln": True,
        "initializer_range": cfg["initializer_range"],
        "layer_norm_epsilon": cfg["layer_norm_eps"],
        "max_trained_positions": 2048,
        "mlp_fc1_bias": False,
        "mlp_fc2_bias": False,
        "model_type": "nomic_bert",
        "n_embd": cfg["hidden_size"],
        "n_head": cfg["num_attention_heads"],
        "n_inner": cfg["intermediate_size"],
        "n_layer": cfg["num_hidden_layers"],
        "n_positions": cfg["max_position_embeddings"],
        "pad_vocab_size_multiple": 64,
        "parallel_block": False,
        "parallel_block_tied_norm": False,
        "prenorm": False,
        "qkv_proj_bias": False,
        "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.0,
        "rotary_emb_base": rope["rope_theta"],
        "rotary_emb_fraction": 1.0,
        "rotary_emb_interleaved": False,
        "rotary_emb_scale_base": None,
        "rotary_scaling_factor": None,
        "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True,
        "summary_activation": None,
        "summary_first_dropout": 0.0,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "torch_dtype": "float32",
        "transformers_version": "4.37.2",
        "type_vocab_size": cfg["type_vocab_size"],
        "use_cache": True,
        "use_flash_attn": True,
        "use_rms_norm": False,
        "use_xentropy": True,
        "vocab_size": cfg["vocab_size"],
    }


def config_from_hub_nomic(hub):
    """transformers' NomicBertConfig fields from a Hub (remote-code) config."""
    assert hub["activation_function"] == "swiglu" and not hub["prenorm"]
    assert hub["rotary_emb_fraction"] == 1.0 and not hub["rotary_emb_interleaved"]
    assert hub["rotary_scaling_factor"] is None
    assert not (hub["qkv_proj_bias"] or hub["mlp_fc1_bias"] or hub["mlp_fc2_bias"])
    m = hub["pad_vocab_size_multiple"]
    return dict(vocab_size=(hub["vocab_size"] + m - 1) // m * m, hidden_size=hub["n_embd"],
                num_attention_heads=hub["n_head"], num_hidden_layers=hub["n_layer"],
                intermediate_size=hub["n_inner"], max_position_embeddings=hub["n_positions"],
                layer_norm_eps=hub["layer_norm_epsilon"], type_vocab_size=hub["type_vocab_size"],
                hidden_act="silu", pad_token_id=0,
                rope_parameters={"rope_type": "default", "rope_theta": hub["rotary_emb_base"]})


def build_layout(name):
    """A folder with its base folder's weights and outputs in another layout."""
    opt = SPECS[name][8]
    base = OUT / opt["base"]
    if not (base / "expected.json").exists():
        sys.exit(f"{name}: build {opt['base']} first")
    folder = OUT / name
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(base, folder)
    cfg = json.loads((base / "config.json").read_text())
    from safetensors.torch import load_file
    if opt["layout"] == "nomic-hub":
        # transformers 5's save_pretrained already wrote the Hub's tensor names
        # (it reverts conversion_mapping's "nomic_bert" renaming on save): only
        # config.json differs.
        new_cfg = hub_nomic_config(cfg)
        assert all(k.startswith(("embeddings.", "emb_ln.", "encoder.layers."))
                   for k in load_file(str(folder / "model.safetensors")))
    else:
        new_cfg = layertypes_modernbert_config(cfg)
    with open(folder / "config.json", "w", encoding="utf-8") as f:
        json.dump(new_cfg, f, indent=2)
        f.write("\n")
    print(f"{name}: {opt['layout']} layout of {opt['base']}")


def reference_model(folder, model_cls, **overrides):
    """The folder's model with config overrides (for the sensitivity figures)."""
    cfg = transformers.AutoConfig.from_pretrained(str(folder), **overrides)
    return getattr(transformers, model_cls).from_pretrained(str(folder), config=cfg).eval()


def build(name, seed, tok_cache):
    spec = SPECS[name]
    tok_kind, cfg_cls, model_cls, cfg_extra, task_extra, kind, pooling, normalize = spec[:8]
    opt = spec[8] if len(spec) > 8 else {}
    if kind == "layout":
        return build_layout(name)
    folder = OUT / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)

    tok = Tokenizer.from_str(tok_cache[tok_kind].to_str())  # a copy per folder
    special, input_names = SPECIAL[tok_kind], INPUT_NAMES[tok_kind]
    vocab = tok.get_vocab_size(with_added_tokens=True)
    tok_extra = {"padding_side": opt["padding_side"]} if "padding_side" in opt else {}
    save_tokenizer(tok, special, input_names, opt.get("max_length", MAX_LENGTH[tok_kind]), folder,
                   **tok_extra)
    if "vocab_multiple" in opt:  # nomic: the table is padded, rows past the tokenizer unused
        m = opt["vocab_multiple"]
        vocab = (vocab + m - 1) // m * m
    ids = {}
    if tok_kind == "modernbert":
        ids = dict(pad_token_id=tok.token_to_id("[PAD]"), bos_token_id=tok.token_to_id("[CLS]"),
                   cls_token_id=tok.token_to_id("[CLS]"), eos_token_id=tok.token_to_id("[SEP]"),
                   sep_token_id=tok.token_to_id("[SEP]"))
    if tok_kind == "qwen2":
        ids = dict(bos_token_id=tok.token_to_id("<|endoftext|>"),
                   eos_token_id=tok.token_to_id("<|endoftext|>"))

    config = getattr(transformers, cfg_cls)(vocab_size=vocab, **{**SIZES, **cfg_extra}, **ids,
                                            **task_extra)
    k = seed_index(name)
    torch.manual_seed(seed + k)
    model = getattr(transformers, model_cls)(config).eval()
    perturb(model, seed + 1000 + k)
    model.save_pretrained(str(folder))
    assert (folder / "model.safetensors").exists()
    if cfg_cls == "NomicBertConfig":
        # save_pretrained writes the Hub checkpoint's names and fused Wqkv:
        # exactly this script's own renaming of the module's state.
        from safetensors.torch import load_file
        saved, mine = load_file(str(folder / "model.safetensors")), nomic_to_hub(model.state_dict())
        assert saved.keys() == mine.keys(), sorted(saved.keys() ^ mine.keys())
        assert all(torch.equal(saved[k2], mine[k2]) for k2 in saved)
    if opt.get("drop_config_keys"):
        # SIZES' generic names that a checkpoint of this config class never
        # writes (DistilBERT's config has hidden_dim, not intermediate_size).
        cfg = json.loads((folder / "config.json").read_text())
        for key in opt["drop_config_keys"]:
            cfg.pop(key, None)
        with open(folder / "config.json", "w", encoding="utf-8") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
            f.write("\n")
    if opt.get("config_shape") == "hub":
        cfg = hub_modernbert_config(json.loads((folder / "config.json").read_text()))
        with open(folder / "config.json", "w", encoding="utf-8") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
    if kind == "embed":
        write_st_folder(folder, pooling, normalize, config.hidden_size,
                        max_seq_length=opt.get("st_max", ST_MAX_SEQ_LENGTH),
                        prompts=opt.get("prompts"))
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
    if cfg_cls == "ModernBertConfig":  # the hub-shaped config.json means the same
        assert model.config.layer_types == ["full_attention", "sliding_attention",
                                            "sliding_attention", "full_attention"]
        assert model.config.rope_parameters == {
            "full_attention": {"rope_type": "default", "rope_theta": 160000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}, \
            model.config.rope_parameters
        assert model.config.sliding_window == 8

    inputs = case_texts(name, hf_tok)
    prompts = {k: v for k, v in (opt.get("prompts") or {}).items() if v}
    # (prompt name, text): every text alone, then the short ones with each prompt
    runs = [(None, t) for t in inputs] + [(pn, t) for pn in sorted(prompts)
                                          for t in inputs[:4] + inputs[-2:-1]]
    with torch.no_grad():
        for pn, text in runs:
            full = prompts[pn] + text if pn else text
            enc = hf_tok(full, truncation=True, return_tensors="pt")
            ids = enc["input_ids"]
            tt = enc.get("token_type_ids", torch.zeros_like(ids))
            out = model(**enc, output_hidden_states=True)
            last = out.last_hidden_state if kind == "embed" else out.hidden_states[-1]
            case = {"text": text}
            if pn:
                case.update(prompt_name=pn, prompt=prompts[pn])
            case.update({"token_ids": ids[0].tolist(), "token_type_ids": tt[0].tolist(),
                         "last_hidden_state": rows(last[0])})
            if kind == "classify":
                case["scores"] = [r7(v) for v in out.logits[0].tolist()]
            if kind == "splade":
                case["_logits"] = out.logits[0]
            expected["cases"].append(case)

    def pool_by_hand(h):
        h = np.asarray(h, np.float64)
        mine = h[0] if pooling == "cls" else h[-1] if pooling == "lasttoken" else h.mean(0)
        return mine / np.linalg.norm(mine) if normalize else mine

    if kind == "embed":
        st = sentence_transformers.SentenceTransformer(str(folder), device="cpu")
        pooled = []
        for pn in [None] + sorted(prompts):
            texts = [t for p, t in runs if p == pn]
            pooled += list(st.encode(texts, batch_size=4, convert_to_numpy=True,
                                     **({"prompt_name": pn} if pn else {})))
        for case, v in zip(expected["cases"], pooled):
            mine = pool_by_hand(case["last_hidden_state"])
            assert cosine(mine, v) > 0.99999, (name, case["text"][:30], cosine(mine, v))
            case["pooled"] = [r7(x) for x in v]
            st_ids = st.tokenize([case.get("prompt", "") + case["text"]])["input_ids"][0].tolist()
            assert st_ids == case["token_ids"], (name, case["text"][:30])

    if opt.get("long"):
        text = long_document(hf_tok)
        enc = hf_tok(text, truncation=True, return_tensors="pt")
        n = enc["input_ids"].shape[1]
        assert n == LONG_TOKENS, n
        with torch.no_grad():
            last = model(**enc).last_hidden_state[0]
        keep = long_rows(n)
        v = st.encode([text], convert_to_numpy=True)[0]
        assert cosine(pool_by_hand(last.numpy()), v) > 0.99999
        tt = enc.get("token_type_ids", torch.zeros_like(enc["input_ids"]))
        expected["long_cases"] = [{
            "text": text, "token_ids": enc["input_ids"][0].tolist(),
            "token_type_ids": tt[0].tolist(), "rows": keep,
            "last_hidden_state": rows(last[keep]), "pooled": [r7(x) for x in v]}]
        print(f"{name}: long case {n} tokens ({len(text)} chars), {len(keep)} rows stored")
        with torch.no_grad():
            if cfg_cls == "ModernBertConfig":
                for what, over in (("global attention everywhere",
                                    dict(layer_types=["full_attention"] * 4)),
                                   ("window 18 (|i-j| <= 9)", dict(local_attention=18))):
                    other = reference_model(folder, model_cls, **over)
                    d = float((other(**enc).last_hidden_state[0] - last).abs().max())
                    print(f"  long case vs {what}: max |diff| {d:.3g}")
                    assert d > 1e-2, (what, d)
            # the far context matters: the last 70 rows from the last 1024 tokens alone
            tail = {k2: v2[:, -1024:] for k2, v2 in enc.items()}
            d = float((model(**tail).last_hidden_state[0, -70:] - last[-70:]).abs().max())
            print(f"  long case: last 70 rows from the last 1024 tokens alone: max |diff| {d:.3g}")

    if opt.get("legacy_rope"):
        # The transformers 4 form of the rope (rope_theta + rope_scaling) means the same.
        cfg = json.loads((folder / "config.json").read_text())
        variant = {"name": "rope_scaling (transformers 4 form)", "drop": ["rope_parameters"],
                   "set": opt["legacy_rope"]}
        legacy = {k2: v2 for k2, v2 in cfg.items() if k2 not in variant["drop"]}
        legacy.update(copy.deepcopy(variant["set"]))  # from_dict edits rope_scaling in place
        lc = getattr(transformers, cfg_cls).from_dict(legacy)
        assert lc.rope_parameters == cfg["rope_parameters"], lc.rope_parameters
        expected["config_variants"] = [variant]

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
