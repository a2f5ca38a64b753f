"""Random-weight models for the long-context benchmark (issue 31 item 7).

Usage (from the repository root; .venv-bench from bench/embed/setup-venv.sh):
  .venv-bench/bin/python bench/long_context/make_models.py [--out build/bench-long] \
      [--only modernbert-base,nomic-bert-base,qwen3-0.6b] [--qwen3-layers 28]

Writes sentence-transformers folders under OUT (build/ is gitignored: never
commit them), each built with transformers' own classes and save_pretrained,
random weights (timing only: the outputs mean nothing):
  modernbert-base  ModernBertModel in ModernBERT-base's shape: hidden 768, 22
                   layers, 12 heads, intermediate 1152 (GeGLU), local_attention
                   128, global every 3rd layer, thetas 160000 / 10000, vocab
                   50368, max 8192; mean pooling.
  nomic-bert-base  NomicBertModel in nomic-embed-text-v1.5's shape: hidden 768,
                   12 layers, 12 heads, intermediate 3072 (SwiGLU), rotary theta
                   1000, post-norm, vocab 30528, max 8192; mean pooling;
                   tiny-nomic-bert's WordPiece tokenizer files.
  qwen3-0.6b       Qwen3Model in Qwen3-Embedding-0.6B's shape: hidden 1024, 28
                   layers (--qwen3-layers), 16 q / 8 kv heads, head_dim 128,
                   intermediate 3072, rope theta 1e6, tie_word_embeddings,
                   vocab 151669, max 32768; last-token pooling.
The tokenizer files (but NomicBERT's) are data/models/tiny-modernbert's (byte-level BPE, 805
tokens: ids stay below every vocab here). The benchmarks feed token ids, so the
tokenizer only has to load; tiny-qwen3's own tokenizer needs the Split
pre-tokenizer. The folder's name and config are what the C++ bench and the
transformers side both load.
"""
import argparse
import json
import os
import shutil

import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOKENIZER_FROM = os.path.join(REPO, "data/models/tiny-modernbert")
NOMIC_TOKENIZER_FROM = os.path.join(REPO, "data/models/tiny-nomic-bert")
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]


def modernbert_base():
    return transformers.ModernBertConfig(
        vocab_size=50368, hidden_size=768, num_hidden_layers=22, num_attention_heads=12,
        intermediate_size=1152, hidden_activation="gelu", max_position_embeddings=8192,
        global_attn_every_n_layers=3, local_attention=128, global_rope_theta=160000.0,
        local_rope_theta=10000.0, norm_eps=1e-5, norm_bias=False, attention_bias=False,
        mlp_bias=False, pad_token_id=803, bos_token_id=801, eos_token_id=802, cls_token_id=801,
        sep_token_id=802, tie_word_embeddings=True), transformers.ModernBertModel, "mean", 8192


def nomic_bert_base():
    return transformers.NomicBertConfig(
        vocab_size=30528, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, hidden_act="silu", max_position_embeddings=8192,
        type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0,
        rope_parameters={"rope_type": "default", "rope_theta": 1000.0}), \
        transformers.NomicBertModel, "mean", 8192


def qwen3(layers):
    return transformers.Qwen3Config(
        vocab_size=151669, hidden_size=1024, num_hidden_layers=layers, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, intermediate_size=3072, hidden_act="silu",
        max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000.0,
        attention_bias=False, use_sliding_window=False, tie_word_embeddings=True,
        bos_token_id=800, eos_token_id=800), transformers.Qwen3Model, "lasttoken", 32768


def write_folder(folder, cfg, cls, pooling, max_len, seed, tokenizer_from=TOKENIZER_FROM):
    torch.manual_seed(seed)
    model = cls(cfg).eval()
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    model.save_pretrained(folder, safe_serialization=True)
    for f in TOKENIZER_FILES:
        shutil.copy(os.path.join(tokenizer_from, f), folder)
    # The tokenizer's own limit would cap max_seq_length: lift it to the model's.
    tc_path = os.path.join(folder, "tokenizer_config.json")
    with open(tc_path) as f:
        tc = json.load(f)
    tc["model_max_length"] = max_len
    with open(tc_path, "w") as f:
        json.dump(tc, f, indent=2)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    with open(os.path.join(folder, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    with open(os.path.join(folder, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": max_len, "do_lower_case": False}, f, indent=2)
    os.makedirs(os.path.join(folder, "1_Pooling"))
    os.makedirs(os.path.join(folder, "2_Normalize"))
    pool = {"word_embedding_dimension": cfg.hidden_size, "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
            "pooling_mode_lasttoken": pooling == "lasttoken", "include_prompt": True}
    with open(os.path.join(folder, "1_Pooling", "config.json"), "w") as f:
        json.dump(pool, f, indent=2)
    params = sum(p.numel() for p in model.parameters())
    print(f"{folder}: {params / 1e6:.1f} M parameters")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "build/bench-long"))
    ap.add_argument("--only", default="modernbert-base,nomic-bert-base,qwen3-0.6b")
    ap.add_argument("--qwen3-layers", type=int, default=28)
    args = ap.parse_args()
    makers = {"modernbert-base": lambda: modernbert_base(),
              "nomic-bert-base": lambda: nomic_bert_base(),
              "qwen3-0.6b": lambda: qwen3(args.qwen3_layers)}
    for i, name in enumerate(args.only.split(",")):
        cfg, cls, pooling, max_len = makers[name]()
        tok = NOMIC_TOKENIZER_FROM if name.startswith("nomic") else TOKENIZER_FROM
        write_folder(os.path.join(args.out, name), cfg, cls, pooling, max_len, seed=31 + i,
                     tokenizer_from=tok)


if __name__ == "__main__":
    main()
