#!/usr/bin/env python3
"""Builds the SentencePiece-converted tokenizers that tests/model check.

A Precompiled normalizer (sentencepiece's precompiled_charsmap) only appears
in tokenizer.json files converted from sentencepiece models, so this script
makes two: it trains tiny sentencepiece Unigram models on the local corpus
with normalization_rule_name nmt_nfkc and nmt_nfkc_cf, and converts each the
way transformers does for XLM-RoBERTa (its slow->fast XLMRobertaConverter): Precompiled normalizer (+ Replace), Metaspace
pre-tokenizer, XLM-R TemplateProcessing, Metaspace decoder.

Needs sentencepiece and transformers, which the project venv does not have
(torch is not needed):

    python3 -m venv .venv-spm
    .venv-spm/bin/pip install sentencepiece==0.2.1 transformers==5.24.0 tokenizers protobuf
    .venv-spm/bin/python tools/make_tokenizer_spm.py

Writes data/tokenizer/spm_nfkc/tokenizer.json and
data/tokenizer/spm_nfkc_cf/tokenizer.json (committed); the goldens for them
come from tools/make_tokenizer_models.py, run in the project venv.
"""
import io
import pathlib
import tempfile

import sentencepiece as spm
from transformers.convert_slow_tokenizer import XLMRobertaConverter

from make_tokenizer_models import corpus_lines

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "tokenizer"
VOCAB_SIZE = 2000


class SlowTokenizer:
    """What the converter reads of XLMRobertaTokenizer (the sentencepiece
    one, which transformers 5 no longer ships): its model file and the ids of
    <s> and </s> in the converted layout (fairseq's: <s> <pad> </s> <unk>)."""
    add_prefix_space = True

    def __init__(self, path):
        self.vocab_file = str(path)

    def convert_tokens_to_ids(self, token):
        return {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}[token]


def train(rule):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus_lines()), model_writer=model, vocab_size=VOCAB_SIZE,
        model_type="unigram", normalization_rule_name=rule, character_coverage=1.0,
        # XLM-R's sentencepiece layout (<unk> <s> </s>), which the converter
        # turns into fairseq's (<s> <pad> </s> <unk>, pieces shifted by one).
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1,
        minloglevel=2)
    return model.getvalue()


def main():
    for rule in ("nmt_nfkc", "nmt_nfkc_cf"):
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "spm.model"
            path.write_bytes(train(rule))
            tok = XLMRobertaConverter(SlowTokenizer(path)).converted()
            dest = OUT / f"spm_{rule[4:]}"  # spm_nfkc, spm_nfkc_cf
            dest.mkdir(parents=True, exist_ok=True)
            tok.save(str(dest / "tokenizer.json"))
            print(f"wrote {dest / 'tokenizer.json'}")


if __name__ == "__main__":
    main()
