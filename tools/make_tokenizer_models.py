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
  bpe_qwen2    byte-level BPE as Qwen2: NFC, Sequence[Split(Qwen2's regex,
               Isolated), ByteLevel (no regex)], added specials after the
               vocabulary (<|endoftext|>, <|im_start|>, <|im_end|>), ByteLevel
               post-processor (no specials) and decoder.
  bpe_qwen3_embedding   bpe_qwen2 with Qwen3-Embedding's post-processor:
               Sequence[ByteLevel, TemplateProcessing "$A <|endoftext|>"].
  bpe_modernbert   byte-level BPE as ModernBERT (OLMo's): ByteLevel with
               GPT-2's regex, added tokens for runs of spaces (normalized)
               and |||IP_ADDRESS|||, [CLS] $A [SEP] / [CLS] $A [SEP] $B:1 [SEP]:1,
               [MASK] with lstrip.
  bpe_split_steps   bpe_qwen2's model behind Split with every behavior,
               invert and a String pattern (see SPLIT_STEPS).
  wordpiece_bert   goldens only: the default model's tokenizer.json as it
               is (BERT pairs: [CLS] A [SEP] B [SEP], type ids 0 / 1).
  wordpiece_roberta   goldens only: the default model's tokenizer.json with
               all-mpnet-base-v2's RobertaProcessing (see wordpiece_roberta_json).

With names as arguments, only those goldens are rewritten (no training);
with --train first, the named tokenizers are trained (or derived) first.

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
       "bpe_qwen2", "bpe_qwen3_embedding", "bpe_modernbert", "bpe_split_steps",
       "wordpiece_roberta", "wordpiece_bert"]
# Qwen2's pre-tokenizer regex (Oniguruma syntax), as its tokenizer.json has it.
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
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


def qwen2_byte_level():
    return dict(add_prefix_space=False, trim_offsets=False, use_regex=False)


def train_bpe_qwen2():
    """Byte-level BPE shaped as Qwen2's tokenizer.json (the layout
    Qwen3-Embedding uses): NFC, Split(regex, Isolated) + ByteLevel without
    its own regex, specials added after the vocabulary, ByteLevel
    post-processor and decoder."""
    tok = Tokenizer(models.BPE(byte_fallback=False, ignore_merges=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(QWEN2_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(**qwen2_byte_level())])
    tok.decoder = decoders.ByteLevel(**qwen2_byte_level())
    trainer = trainers.BpeTrainer(vocab_size=4000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in QWEN2_SPECIALS])
    tok.post_processor = processors.ByteLevel(**qwen2_byte_level())
    return tok


def qwen3_embedding(qwen2_json):
    """bpe_qwen2 with Qwen3-Embedding-0.6B's post-processor: ByteLevel, then
    <|endoftext|> after each sequence."""
    tok = Tokenizer.from_str(qwen2_json)
    eos = tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(**qwen2_byte_level()),
        processors.TemplateProcessing(single="$A:0 <|endoftext|>:0",
                                      pair="$A:0 <|endoftext|>:0 $B:1 <|endoftext|>:1",
                                      special_tokens=[("<|endoftext|>", eos)])])
    return tok


def train_bpe_modernbert():
    """Byte-level BPE shaped as ModernBERT's (OLMo's) tokenizer.json: no
    normalizer, ByteLevel with GPT-2's regex and no prefix space, added
    tokens for runs of spaces (normalized, not special) as GPT-NeoX's,
    BERT-style template with type ids, [MASK] with lstrip."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                                                 use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=4000, special_tokens=["<|endoftext|>", "<|padding|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    tok.add_tokens([AddedToken(" " * n, normalized=True) for n in (4, 3, 2)] +
                   [AddedToken("|||IP_ADDRESS|||", normalized=True)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False, lstrip=(t == "[MASK]"))
                            for t in ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]])
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return tok


# Split with every behavior, invert and a String pattern, in front of
# bpe_qwen2's model (its ByteLevel last). "b*" matches empty strings too.
SPLIT_STEPS = [
    pre_tokenizers.Split(tokenizers.Regex(r"\s+"), behavior="merged_with_next"),
    pre_tokenizers.Split(tokenizers.Regex(r"\p{P}"), behavior="merged_with_previous"),
    pre_tokenizers.Split("-", behavior="contiguous"),
    pre_tokenizers.Split("x", behavior="removed"),
    pre_tokenizers.Split(tokenizers.Regex(r"[^0-9]"), behavior="removed", invert=True),
    pre_tokenizers.Split(tokenizers.Regex(r"(?i:[aeiou])"), behavior="isolated", invert=True),
    pre_tokenizers.Split(tokenizers.Regex(r"[A-Z]"), behavior="merged_with_previous", invert=True),
    pre_tokenizers.Split(tokenizers.Regex(r"b*"), behavior="merged_with_next"),
    pre_tokenizers.Split(tokenizers.Regex(r"\h"), behavior="isolated"),
]


def bpe_split_steps(qwen2_json):
    tok = Tokenizer.from_str(qwen2_json)
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        SPLIT_STEPS + [pre_tokenizers.ByteLevel(**qwen2_byte_level())])
    return tok


# How each tokenizer is made: trained, or derived from one made before it.
MAKERS = {
    "bpe": lambda made: train_bpe(False),
    "bpe_prefix": lambda made: train_bpe(True),
    "bpe_char": lambda made: train_bpe_char(),
    "unigram": lambda made: train_unigram(),
    "unigram_steps": lambda made: unigram_steps(made("unigram")),
    "bpe_qwen2": lambda made: train_bpe_qwen2(),
    "bpe_qwen3_embedding": lambda made: qwen3_embedding(made("bpe_qwen2")),
    "bpe_modernbert": lambda made: train_bpe_modernbert(),
    "bpe_split_steps": lambda made: bpe_split_steps(made("bpe_qwen2")),
}


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
        # Qwen2's regex: contractions in any case (and U+017F, which folds to s),
        "DON'T Stop, it's fine; I'M sure YOU'LL see THEY'RE WE'VE she'D it'S we'Re it\u017f",
        "rock'n'roll 'tis o'clock '' ' s x'  'll",
        # digits one by one (Nd, No, Nl),
        "2024-12-05 1,234,567.89 ABC123def456 \u0663\u0664\u0665 \u00bd \u00b2 \u216b",
        # newlines and \r\n runs, spaces before words, \s+(?!\S),
        "line1\nline2\r\nline3\r\n\r\n\n  indented\n\n\n", "text\n   \nmore\r\r\n \n",
        "a   b    \n   c\t\t d  \u3000 e    ", "    four spaces before", "\tTabbed\t\tword",
        "\u000b vertical tab \u0085 NEL \u00a0 nbsp \u2028 line sep \u000c ff x\u000by",
        # punctuation runs, with newlines after them,
        "Hello!!! What?!... (yes) [no] {maybe} --- *** ;;;\n !!\n\n$100 @user #tag",
        "email@example.com https://x.y/z?q=1&r=2 a--b---c 0xDEADbeef",
        # CJK, emoji, combining marks (NFC composes some; Devanagari keeps its marks),
        "\u4e2d\u6587\u5206\u8bcd\u6d4b\u8bd5\uff0c\u5305\u62ec\u6807\u70b9\u3002"
        "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3001\ud55c\uad6d\uc5b4",
        "emoji \U0001f600\U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f1ef\U0001f1f5!",
        "e\u0301 a\u0308 n\u0303o Z\u0327\u030c cafe\u0301 q\u0307 \u0939\u093f\u0928\u094d\u0926\u0940",
        # added tokens of the Qwen2 and ModernBERT shapes.
        "<|endoftext|>hello<|im_start|>user\nhi<|im_end|>\n x <|endoftext|>",
        "[CLS] a [MASK] b  [MASK]|||IP_ADDRESS|||c [SEP]", "\r\n", "\n", "   ",
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


def train(names):
    """Makes and saves `names` (MAKERS order), deriving from saved ones."""
    def made(name):
        return (OUT / name / "tokenizer.json").read_text(encoding="utf-8")
    for name in MAKERS:
        if name in names:
            (OUT / name).mkdir(parents=True, exist_ok=True)
            MAKERS[name](made).save(str(OUT / name / "tokenizer.json"))


def main(args):
    names = args
    if not args:
        train(list(MAKERS))
    elif args[0] == "--train":
        names = args[1:]
        train(names)
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
