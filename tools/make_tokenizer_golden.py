#!/usr/bin/env python3
"""Writes the tokenizer golden files that tests/model/tokenizer_test.cc checks.

Reference: the PyPI `tokenizers` library (pinned in scripts/install-deps.sh)
loading models/all-MiniLM-L6-v2/tokenizer.json. Run with the project venv:

    .venv/bin/python tools/make_tokenizer_golden.py

Outputs (both committed):
  data/tokenizer/golden.jsonl   one row per corpus text:
      id, text,
      ids        encode(text) with [CLS]/[SEP], no truncation
      offsets    HF's offsets for those ids, in code points (the Python API
                 converts byte offsets to character offsets)
      ids_max16  encode(text) with truncation to max_length 16
  data/tokenizer/unicode_golden.json   what the normalizer and pre-tokenizer
      do to every single code point (exhaustive; see unicode_classes()).
  data/tokenizer/added_tokens_golden.jsonl   ids and offsets from a variant of
      tokenizer.json whose special tokens use lstrip / rstrip / single_word
      (see ADDED_TOKEN_FLAGS; the test applies the same change).

The corpus is data/tokenizer/sentences.txt (hand-written, one per line), the
model package's README lines, and edge cases built below. The script also
checks that a vocab.txt-only tokenizer (BertWordPieceTokenizer, BERT
defaults) gives the same ids and offsets, since tessera falls back to
vocab.txt with those defaults.
"""
import json
import pathlib
import random
import sys

import tokenizers
from tokenizers import Tokenizer, normalizers, pre_tokenizers
from tokenizers.implementations import BertWordPieceTokenizer

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "all-MiniLM-L6-v2"
OUT = ROOT / "data" / "tokenizer"
TRUNCATED_MAX_LENGTH = 16
MAX_CODE_POINT = 0x10FFFF
# Flags set on the model's own special tokens for the added-token variant.
ADDED_TOKEN_FLAGS = {
    "[MASK]": {"lstrip": True, "rstrip": True},
    "[UNK]": {"single_word": True},
}
ADDED_TOKEN_TEXTS = [
    "a [MASK] b", "a[MASK]b", "  [MASK]  ", "x [MASK][MASK] y", "x [MASK] [MASK] y",
    "\u00a0[MASK]\u2003z", "[SEP] [MASK]\t\u3000z", "[MASK]",
    "word[UNK] [UNK] x[UNK]y", "[UNK]", "\u00e9[UNK]", "1[UNK]2", "_[UNK]", "-[UNK]-",
    "[UNK][UNK]", "\u4e2d[UNK]", "\U0001f600[UNK]", "a\u0301[UNK]",
]


def edge_cases():
    """(id, text) pairs that stress one rule each."""
    cases = [
        ("empty", ""),
        ("space", " "),
        ("whitespace-only", " \t\n \r\n  "),
        ("unicode-whitespace-only", "\u00a0\u2003\u3000\u2028\u2029\u202f"),
        ("zero-width-only", "\u200b\u200c\u200d\u2060\ufeff"),
        ("zero-width-inside", "zero\u200bwidth join\u200der non\u200cjoiner wo\u2060rd\ufeffbom"),
        ("soft-hyphen", "hyphen\u00adation co\u00adop\u00aderation"),
        ("controls", "\x00abc\x01def\x7fghi \x1b[31mred\x1b[0m"),
        ("controls-whitespace-like", "a\x0bb\x0cc\x85d\x1ce\x1df\x1eg\x1fh"),
        ("replacement-char", "bad\ufffdbyte \ufffd"),
        ("crlf", "line one\r\nline two\rline three\nline four"),
        ("nul-only", "\x00\x00"),
        ("combining-acute", "e\u0301 cafe\u0301 re\u0301sume\u0301"),
        ("combining-stack", "a\u0308\u0304 o\u0323\u0302 u\u031b\u0309"),
        ("combining-leading", "\u0301\u0302start with marks"),
        ("zalgo", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319a\u0337l\u0338g\u0335o\u0336"),
        ("precomposed-vs-decomposed", "\u00e9\u00e8\u00ea\u00eb vs e\u0301e\u0300e\u0302e\u0308"),
        ("hangul-jamo", "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u116e\u11a8"),
        ("devanagari-conjuncts", "\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f \u0936\u094d\u0930\u0940"),
        ("thai-marks", "\u0e19\u0e49\u0e33 \u0e01\u0e34\u0e19\u0e02\u0e49\u0e32\u0e27"),
        ("arabic-harakat", "\u0628\u0650\u0633\u0652\u0645\u0650 \u0671\u0644\u0644\u0651\u064e\u0647\u0650"),
        ("special-cases", "\u0130stanbul \u0130 \u0131 \u00df \u1e9e \u03c2 \u03a3 \u2126 \u212a \u212b"),
        ("titlecase-ligatures", "\u01c5 \u01c8 \u01cb \ufb01 \ufb02 \ufb00 \u0133"),
        ("greek-question-mark", "what\u037e \u1fef \u0344 \u0387"),
        ("cjk-compat", "\uf900\ufa0e\ufa10 \u2f00\u2f01 \U0002f800"),
        ("cjk-ext-b", "\U00020000\U0002a6d6\U0002b740\U0002ceaf"),
        ("cjk-range-edges", "\u4e00\u9fff\u3400\u4dbf\u33ff\u4dc0\ua000\U00030000"),
        ("halfwidth-fullwidth", "\uff76\uff80\uff76\uff85 \uff21\uff22\uff23\uff11\uff12\uff13\uff01\uff1f"),
        ("emoji-zwj", "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \U0001f3f3\ufe0f\u200d\U0001f308"),
        ("emoji-skin-tone", "\U0001f44d\U0001f3fd \U0001f44b\U0001f3ff"),
        ("emoji-tag-flag", "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"),
        ("emoji-new", "\U0001f970\U0001f929\U0001fae0\U0001fa75 newer emoji"),
        ("variation-selectors", "\u2764\ufe0f \u263a\ufe0e \u0030\ufe0f\u20e3"),
        ("private-use", "\ue000\uf8ff \U000f0000 \U0010fffd"),
        ("noncharacters", "\ufffe\uffff \U0001fffe \U0010ffff"),
        ("unassigned", "\u0378\u0379 \U000e0080 \U0003ffff"),
        ("unicode8-punctuation", "\u166d \U000111c9 \u2e42 \u2e43 \u061d \u2e5d"),
        ("unicode8-marks", "a\u1734b a\u1885b a\u1886b a\ua9bdb a\u0301b"),
        ("format-chars-new", "a\u0890b a\u08e2b a\U00013430b a\u180eb"),
        ("math-alnum", "\U0001d400\U0001d41a\U0001d7ce \u2102\u210d\u2115"),
        ("superscripts", "x\u00b2 H\u2082O \u00bd \u2153 \u2460\u2461"),
        ("ascii-punctuation", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
        ("unicode-punctuation", "\u00a1\u00bf\u00ab\u00bb\u2018\u2019\u201c\u201d\u2026\u2013\u2014\u3001\u3002\u300c\u300d\uff0c"),
        ("symbols-not-punct", "\u00a9\u00ae\u2122\u00b0\u20ac\u00a3\u00a5\u2190\u2192\u2211\u221e"),
        ("special-tokens", "[CLS] hello [SEP] world [MASK] [PAD] [UNK]"),
        ("special-tokens-glued", "a[SEP]b[SEP][SEP]c[MASK]ed"),
        ("special-tokens-lowercase", "[cls] [sep] [Mask] [ SEP ]"),
        ("special-tokens-nested", "[[SEP]] [[CLS] ] [SEP"),
        ("digits", "0 1 12 123 1234 12345 123456 1234567 3.14 -2.5e10 1/2 50%"),
        ("url", "https://example.com/path/to/page.html?query=1&b=two#frag"),
        ("url-long", "https://" + "averyveryverylongsubdomain" * 3 + ".example.com/" + "segment/" * 8),
        ("email", "first.last+tag@sub.example.co.uk"),
        ("word-99", "a" * 99),
        ("word-100", "b" * 100),
        ("word-101", "c" * 101),
        ("word-100-accented", "\u00e9" * 100),
        ("word-101-accented", "\u00e9" * 101),
        ("word-100-decomposed", "e\u0301" * 100),
        ("word-long-mixed", "word " + "xy" * 60 + " tail"),
        ("word-long-with-punct", "q" * 120 + "." + "r" * 50),
        ("word-long-cjk", "\u4e2d" * 150),
        ("word-unknown-char", "hello\U0001f9ea world qqq\u0e01qqq"),
        ("word-unknown-middle", "abc\u2603def"),
        ("repeated-punct", "!!!???...---___===***"),
        ("mixed-scripts", "Tokyo\u6771\u4eac\u0422\u043e\u043a\u0438\u043e\u03a4\u03cc\u03ba\u03b9\u03bf \u0637\u0648\u0643\u064a\u0648"),
        ("rtl-marks", "\u200fhello\u200e \u202aembedded\u202c \u2066isolate\u2069"),
        ("single-letters", "a b c d e f g h i j k l m n o p q r s t u v w x y z"),
    ]
    return cases


def soup_cases(count, rng):
    """Random strings from mixed character classes (fixed seed)."""
    pools = [
        [chr(c) for c in range(0x20, 0x7F)],
        [chr(c) for c in range(0xC0, 0x250)],
        [chr(c) for c in range(0x300, 0x370)],
        [chr(c) for c in range(0x370, 0x400)],
        [chr(c) for c in range(0x400, 0x530)],
        [chr(c) for c in range(0x2000, 0x2070)],
        [chr(c) for c in range(0x3040, 0x3100)],
        [chr(c) for c in range(0x4E00, 0x4F00)],
        [chr(c) for c in range(0xAC00, 0xAD00)],
        [chr(c) for c in range(0x1F300, 0x1F650)],
        [chr(c) for c in range(0x00, 0x20)] + ["\x7f", "\x85", "\u00a0"],
        list("aeiou eeeetttaaa  .,"),
    ]
    cases = []
    for i in range(count):
        length = rng.randint(1, 60)
        chosen = rng.sample(pools, rng.randint(1, 4))
        text = "".join(rng.choice(rng.choice(chosen)) for _ in range(length))
        cases.append((f"soup-{i:03d}", text))
    return cases


def corpus():
    cases = []
    lines = (OUT / "sentences.txt").read_text(encoding="utf-8").split("\n")
    sentences = [line for line in lines if line]
    cases += [(f"sentence-{i:03d}", s) for i, s in enumerate(sentences)]
    readme = (MODEL / "README.md").read_text(encoding="utf-8").split("\n")
    cases += [(f"readme-{i:03d}", s) for i, s in enumerate(readme) if s.strip()]
    cases += edge_cases()
    rng = random.Random(4)
    cases += soup_cases(120, rng)
    # Long documents (several hundred tokens) for truncation.
    for i in range(6):
        picked = rng.sample(sentences, 18)
        cases.append((f"document-{i}", (" " if i % 2 else "\n\n").join(picked)))
    return cases


def reference_tokenizer():
    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def vocab_only_tokenizer():
    tok = BertWordPieceTokenizer(str(MODEL / "vocab.txt"), lowercase=True)
    tok.no_truncation()
    tok.no_padding()
    return tok


def golden_rows(cases):
    tok = reference_tokenizer()
    trunc = reference_tokenizer()
    trunc.enable_truncation(TRUNCATED_MAX_LENGTH)
    vocab_tok = vocab_only_tokenizer()
    rows = []
    for case_id, text in cases:
        enc = tok.encode(text)
        other = vocab_tok.encode(text)
        if other.ids != enc.ids or other.offsets != enc.offsets:
            sys.exit(f"vocab.txt tokenizer differs from tokenizer.json on {case_id!r}")
        rows.append({
            "id": case_id,
            "text": text,
            "ids": enc.ids,
            "offsets": [list(o) for o in enc.offsets],
            "ids_max16": trunc.encode(text).ids,
        })
    return rows


def added_token_rows():
    data = json.loads((MODEL / "tokenizer.json").read_text(encoding="utf-8"))
    for token in data["added_tokens"]:
        token.update(ADDED_TOKEN_FLAGS.get(token["content"], {}))
    tok = Tokenizer.from_str(json.dumps(data))
    tok.no_truncation()
    tok.no_padding()
    rows = []
    for i, text in enumerate(ADDED_TOKEN_TEXTS):
        enc = tok.encode(text)
        rows.append({"id": f"added-{i:02d}", "text": text, "ids": enc.ids,
                     "offsets": [list(o) for o in enc.offsets]})
    return rows


def ranges(code_points):
    """Sorted code points -> [[first, last], ...] runs."""
    out = []
    for c in code_points:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def unicode_classes(tok_json):
    """What the model's normalizer and the pre-tokenizer do to each code point.

    `normalized` holds every code point whose normalized form is not itself,
    not empty, not " " and not " c " (the CJK spacing), keyed by decimal code
    point. Hangul syllables (U+AC00..U+D7A3) decompose algorithmically and are
    left to the test, to keep the file small.
    """
    opts = tok_json["normalizer"]
    norm = normalizers.BertNormalizer(
        clean_text=opts["clean_text"], handle_chinese_chars=opts["handle_chinese_chars"],
        strip_accents=opts["strip_accents"], lowercase=opts["lowercase"])
    pre = pre_tokenizers.BertPreTokenizer()
    removed, spaced, cjk, whitespace, punct = [], [], [], [], []
    normalized = {}
    for c in range(MAX_CODE_POINT + 1):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        out = norm.normalize_str(ch)
        if out == "":
            removed.append(c)
        elif out == " " and ch != " ":
            spaced.append(c)
        elif out == " " + ch + " ":
            cjk.append(c)
        elif out != ch and not 0xAC00 <= c <= 0xD7A3:
            normalized[str(c)] = out
        pieces = len(pre.pre_tokenize_str("a" + ch + "b"))
        if pieces == 2:
            whitespace.append(c)
        elif pieces == 3:
            punct.append(c)
    return {
        "tokenizers_version": tokenizers.__version__,
        "normalizer": opts,
        "removed": ranges(removed),
        "to_space": ranges(spaced),
        "cjk_spaced": ranges(cjk),
        "normalized": normalized,
        "pretokenizer_whitespace": ranges(whitespace),
        "pretokenizer_punctuation": ranges(punct),
    }


def main():
    rows = golden_rows(corpus())
    with open(OUT / "golden.jsonl", "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(OUT / "added_tokens_golden.jsonl", "w", encoding="utf-8") as f:
        for row in added_token_rows():
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    tok_json = json.loads((MODEL / "tokenizer.json").read_text(encoding="utf-8"))
    with open(OUT / "unicode_golden.json", "w", encoding="utf-8") as f:
        json.dump(unicode_classes(tok_json), f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(rows)} rows to {OUT / 'golden.jsonl'} and {OUT / 'unicode_golden.json'}"
          f" (tokenizers {tokenizers.__version__})")


if __name__ == "__main__":
    main()
