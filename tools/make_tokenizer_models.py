#!/usr/bin/env python3
"""Trains the small BPE and Unigram tokenizers that tests/model check, and
writes the goldens for them and for the SentencePiece-converted ones.

Reference: the PyPI `tokenizers` library pinned in scripts/install-deps.sh.
Run with the project venv (after tools/make_tokenizer_spm.py, if the
sentencepiece tokenizers are to be rebuilt):

    .venv/bin/python tools/make_tokenizer_models.py

Tokenizers (data/tokenizer/<name>/tokenizer.json, committed):
  bpe          byte-level BPE as RoBERTa: ByteLevel pre-tokenizer (regex,
               no prefix space), RobertaProcessing (trim_offsets), ByteLevel
               decoder, <mask> with lstrip.
  bpe_prefix   the same with add_prefix_space true (pre-tokenizer and
               post-processor).
  unigram      Unigram as XLM-R: normalizer Sequence[NFKC, Replace, Lowercase,
               Strip], Metaspace (always, split), XLM-R TemplateProcessing,
               Metaspace decoder.
  spm_nfkc, spm_nfkc_cf   sentencepiece models converted by transformers
               (Precompiled normalizer), made by tools/make_tokenizer_spm.py.
  bpe_char     character BPE: unk (fused), ## prefix, </w> suffix, NFC,
               WhitespaceSplit, template with type ids, no decoder.
  unigram_steps  unigram's model behind NFKD, Strip, Prepend, WhitespaceSplit
               + Metaspace (first) and the Replace/ByteFallback/Fuse/Strip
               decoders.
  wordpiece_bert   goldens only: the default model's tokenizer.json as it
               is (BERT pairs: [CLS] A [SEP] B [SEP], type ids 0 / 1).
  wordpiece_roberta   goldens only: the default model's tokenizer.json with
               all-mpnet-base-v2's RobertaProcessing (see wordpiece_roberta_json).

With names as arguments, only those goldens are rewritten (no training).

The texts (data/tokenizer/model_texts.jsonl, by id): the WordPiece golden
corpus, the golden inputs, and a few aimed at byte-level / Metaspace rules.
Goldens in each folder (offsets in code points, as the Python API gives,
flattened to [b0, e0, b1, e1, ...]):
  golden.jsonl    per text id: ids and offsets with specials, ids truncated
                  to 16, decode with and without skipping specials.
  pairs.jsonl     pairs of text ids with truncation (longest_first) to
                  several lengths: ids, type ids, offsets (of a or b, as
                  sequence_ids say; -1 for specials).
  long.jsonl      each data/long document: token count and FNV-1a 64 of the
                  ids and offsets (see digest()).
  unicode.json    every code point, in runs of CHUNK code points separated by
                  spaces: the digest of each run's encoding; and the
                  normalizer's output (Prepend steps left out) for every
                  code point it changes.
"""
import json
import pathlib
import sys

import tokenizers
from tokenizers import (AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                        processors, trainers)

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "tokenizer"
MODEL = ROOT / "models" / "all-MiniLM-L6-v2"
ALL = ["bpe", "bpe_prefix", "bpe_char", "unigram", "unigram_steps", "spm_nfkc", "spm_nfkc_cf",
       "wordpiece_roberta", "wordpiece_bert"]
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
TRUNCATED_MAX_LENGTH = 16
PAIR_MAX_LENGTHS = [5, 8, 16, 64]
CHUNK = 256
MAX_CODE_POINT = 0x10FFFF


def corpus_lines():
    """The local corpus: data/long, data/tokenizer/sentences.txt, golden inputs."""
    lines = []
    for path in sorted((ROOT / "data" / "long").glob("*.txt")):
        lines += path.read_text(encoding="utf-8").split("\n")
    lines += (OUT / "sentences.txt").read_text(encoding="utf-8").split("\n")
    for line in (ROOT / "data" / "golden" / "inputs.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            lines.append(json.loads(line)["text"])
    return [line for line in lines if line.strip()]


def special_tokens():
    return [AddedToken(t, special=True, normalized=False, lstrip=(t == "<mask>")) for t in SPECIALS]


def train_bpe(add_prefix_space):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=4000, special_tokens=special_tokens(),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    tok.post_processor = processors.RobertaProcessing(
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")),
        trim_offsets=True, add_prefix_space=add_prefix_space)
    return tok


def train_unigram():
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([
        normalizers.NFKC(), normalizers.Replace("``", '"'), normalizers.Lowercase(),
        normalizers.Strip(left=False, right=True)])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always",
                                                 split=True)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(vocab_size=3000, special_tokens=special_tokens(),
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    # A user token HF matches in the normalized text (lowercased here).
    tok.add_tokens([AddedToken("<extra>", normalized=True)])
    s, e = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", s), ("</s>", e)])
    return tok


def unigram_steps(unigram_json):
    """The trained Unigram behind the shared steps the XLM-R layout does not
    use: NFKD, Strip both sides, Prepend, WhitespaceSplit + Metaspace
    (prepend_scheme first), and the Replace / ByteFallback / Fuse / Strip
    decoders."""
    data = json.loads(unigram_json)
    data["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
        {"type": "NFKD"}, {"type": "Lowercase"},
        {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Prepend", "prepend": "\u2581"}]}
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}]}
    data["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    return Tokenizer.from_str(json.dumps(data))


def train_bpe_char():
    """Character BPE with the options byte-level BPE leaves off: an unknown
    token (fused), continuing_subword_prefix, end_of_word_suffix; NFC,
    WhitespaceSplit, a BERT-like template with type ids, no decoder."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True,
                               continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=3000, special_tokens=special_tokens(),
                                  limit_alphabet=80, continuing_subword_prefix="##",
                                  end_of_word_suffix="</w>", show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    s, e = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
        special_tokens=[("<s>", s), ("</s>", e)])
    return tok


def golden_texts():
    """(id, text): the WordPiece golden corpus, the golden inputs, and a few
    texts aimed at byte-level / Metaspace rules."""
    rows = []
    for line in (OUT / "golden.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            row = json.loads(line)
            rows.append((row["id"], row["text"]))
    for line in (ROOT / "data" / "golden" / "inputs.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            row = json.loads(line)
            rows.append(("input-" + row["id"], row["text"]))
    extra = [
        "  leading spaces", "trailing spaces   ", "a  b   c    d", "tab\tand\nnewline \n x",
        "I'm you're it's we've they'll he'd don't 'quoted'", "'S 'T 'RE upper contractions",
        "numbers 1234567 and 3.14159, 2nd 3rd", "\u2581already has the marker \u2581\u2581",
        "<s>inside</s> and <mask> and<mask>x <pad><unk>", "x <mask>", "caf\u00e9 na\u00efve \u00c5ngstr\u00f6m",
        "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8", "emoji \U0001f600\U0001f44d\U0001f3fd end",
        "``quotes`` and ''more''", "\uff21\uff22\uff23 fullwidth \ufb01ne", " ", "",
        "<UNK> and <Unk> \u226eunk> x<unk>y [UNK] <mask>", "an <EXTRA> token,<extra>here \uff1cextra>",
    ]
    rows += [(f"extra-{i:02d}", t) for i, t in enumerate(extra)]
    return rows


def offsets(enc):
    return [list(o) for o in enc.offsets]


def digest(enc):
    """FNV-1a 64 over "id,begin,end;" for every token (offsets in code points)."""
    h = 0xcbf29ce484222325
    for i, (b, e) in zip(enc.ids, enc.offsets):
        for byte in f"{i},{b},{e};".encode():
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def plain(tok):
    tok.no_truncation()
    tok.no_padding()
    return tok


def flat(offsets_list):
    return [x for pair in offsets_list for x in pair]


def write_texts():
    with open(OUT / "model_texts.jsonl", "w", encoding="utf-8") as f:
        for case_id, text in golden_texts():
            f.write(json.dumps({"id": case_id, "text": text}, ensure_ascii=False) + "\n")


def without_prepend(tok_json):
    """The tokenizer with Prepend steps dropped from its normalizer: Prepend
    changes every code point, and the per-code-point map is for the Unicode
    steps (the goldens cover Prepend). The test drops them the same way."""
    data = json.loads(tok_json)
    n = data["normalizer"]
    if n.get("type") == "Sequence":
        n["normalizers"] = [x for x in n["normalizers"] if x.get("type") != "Prepend"]
    return Tokenizer.from_str(json.dumps(data))


def write_goldens(name, tok_json):
    folder = OUT / name
    tok = plain(Tokenizer.from_str(tok_json))
    trunc = plain(Tokenizer.from_str(tok_json))
    trunc.enable_truncation(TRUNCATED_MAX_LENGTH)
    texts = golden_texts()
    with open(folder / "golden.jsonl", "w", encoding="utf-8") as f:
        for case_id, text in texts:
            enc = tok.encode(text)
            f.write(json.dumps({
                "id": case_id, "ids": enc.ids, "offsets": flat(enc.offsets),
                "ids_max16": trunc.encode(text).ids,
                "decoded": tok.decode(enc.ids, skip_special_tokens=False),
                "decoded_skip": tok.decode(enc.ids, skip_special_tokens=True),
            }, ensure_ascii=False) + "\n")
    with open(folder / "pairs.jsonl", "w", encoding="utf-8") as f:
        for i in range(0, len(texts) - 1, 3):
            for n in PAIR_MAX_LENGTHS:
                t = plain(Tokenizer.from_str(tok_json))
                t.enable_truncation(n)
                enc = t.encode(texts[i][1], texts[i + 1][1])
                f.write(json.dumps({"a": texts[i][0], "b": texts[i + 1][0], "max_length": n,
                                    "ids": enc.ids, "type_ids": enc.type_ids,
                                    "offsets": flat(enc.offsets),
                                    "sequence_ids": [-1 if s is None else s
                                                     for s in enc.sequence_ids]}) + "\n")
    with open(folder / "long.jsonl", "w", encoding="utf-8") as f:
        for path in sorted((ROOT / "data" / "long").glob("*.txt")):
            enc = tok.encode(path.read_text(encoding="utf-8"))
            f.write(json.dumps({"file": f"data/long/{path.name}", "count": len(enc.ids),
                                "digest": digest(enc)}) + "\n")
    code_points = [c for c in range(MAX_CODE_POINT + 1) if not 0xD800 <= c <= 0xDFFF]
    chunks = [code_points[i:i + CHUNK] for i in range(0, len(code_points), CHUNK)]
    encs = tok.encode_batch([" ".join(chr(c) for c in chunk) for chunk in chunks])
    normalized = {}
    # The shared normalizer steps only: WordPiece's BertNormalizer has its own
    # exhaustive golden (unicode_golden.json).
    if tok.normalizer is not None and "BertNormalizer" not in json.dumps(
            json.loads(tok_json).get("normalizer")):
        norm = without_prepend(tok_json).normalizer
        for c in code_points:
            out = norm.normalize_str(chr(c))
            if out != chr(c):
                normalized[str(c)] = out
    with open(folder / "unicode.json", "w", encoding="utf-8") as f:
        json.dump({"tokenizers_version": tokenizers.__version__, "chunk": CHUNK,
                   "first": [chunk[0] for chunk in chunks],
                   "digests": [digest(e) for e in encs], "normalized": normalized},
                  f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    print(f"wrote goldens for {name}: {len(texts)} texts, {len(chunks)} code point runs")


# all-mpnet-base-v2's added tokens, as its tokenizer.json has them ("<unk>"
# is matched in the normalized text).
MPNET_ADDED_TOKENS = [
    {"id": i, "content": c, "single_word": False, "lstrip": c == "<mask>", "rstrip": False,
     "normalized": c == "<unk>", "special": True}
    for i, c in [(0, "<s>"), (1, "<pad>"), (2, "</s>"), (3, "<unk>"), (104, "[UNK]"),
                 (30526, "<mask>")]]


def wordpiece_roberta_json():
    """all-mpnet-base-v2's combination, WordPiece + BertNormalizer +
    BertPreTokenizer with RobertaProcessing (<s> = 0, </s> = 2), made from
    the default model's tokenizer.json (the test derives the same)."""
    data = json.loads((MODEL / "tokenizer.json").read_text(encoding="utf-8"))
    data["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                              "trim_offsets": True, "add_prefix_space": False}
    data["added_tokens"] = MPNET_ADDED_TOKENS
    return json.dumps(data)


def main(names):
    if not names:
        unigram = train_unigram()
        for name, tok in [("bpe", train_bpe(False)), ("bpe_prefix", train_bpe(True)),
                          ("bpe_char", train_bpe_char()), ("unigram", unigram),
                          ("unigram_steps", unigram_steps(unigram.to_str()))]:
            (OUT / name).mkdir(parents=True, exist_ok=True)
            tok.save(str(OUT / name / "tokenizer.json"))
    write_texts()
    for name in names or ALL:
        if name.startswith("wordpiece_"):
            (OUT / name).mkdir(parents=True, exist_ok=True)
            write_goldens(name, wordpiece_roberta_json() if name == "wordpiece_roberta"
                          else (MODEL / "tokenizer.json").read_text(encoding="utf-8"))
            continue
        path = OUT / name / "tokenizer.json"
        if not path.exists():
            sys.exit(f"{path} is missing: run tools/make_tokenizer_spm.py (see its docstring)")
        write_goldens(name, path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main(sys.argv[1:])
