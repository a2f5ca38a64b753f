#!/usr/bin/env python3
"""Writes data/tokenizer/decode_golden.jsonl, checked by
tests/model/tokenizer_decode_test.cc (tessera's decode against HF's).

Reference: the PyPI `tokenizers` library (pinned in scripts/install-deps.sh)
decoding with models/all-MiniLM-L6-v2/tokenizer.json. Run with the project
venv after tools/make_tokenizer_golden.py:

    .venv/bin/python tools/make_decode_golden.py

One row per id list: id, ids, text (decode(ids), special tokens skipped) and
text_with_specials (skip_special_tokens=False). The id lists are those of
data/tokenizer/golden.jsonl (every corpus text: punctuation, contractions,
accents, CJK, unknown words, added tokens) and seeded random lists of
vocabulary ids, which put "##" pieces first, specials in the middle and
punctuation anywhere. Ids HF does not know are left out: HF drops them,
tessera refuses them.
"""
import json
import pathlib
import random

from tokenizers import Tokenizer

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOKENIZER = ROOT / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
CORPUS = ROOT / "data" / "tokenizer" / "golden.jsonl"
OUT = ROOT / "data" / "tokenizer" / "decode_golden.jsonl"
RANDOM_LISTS = 200
RANDOM_SEED = 15


def id_lists(vocab_size):
    # Not splitlines(): texts hold U+2028 and other line breaks.
    for line in CORPUS.read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        row = json.loads(line)
        yield row["id"], row["ids"]
    rng = random.Random(RANDOM_SEED)
    # Punctuation and contraction pieces often, so each cleanup rule is hit.
    frequent = ["'", ".", ",", "?", "!", "n", "t", "s", "m", "ve", "re", "do", "not", "##s"]
    for n in range(RANDOM_LISTS):
        ids = []
        for _ in range(rng.randint(0, 12)):
            if rng.random() < 0.4:
                ids.append(frequent[rng.randrange(len(frequent))])
            else:
                ids.append(rng.randrange(vocab_size))
        yield f"random-{n}", ids


def main():
    tok = Tokenizer.from_file(str(TOKENIZER))
    vocab_size = tok.get_vocab_size()
    with OUT.open("w", encoding="utf-8") as out:
        for name, ids in id_lists(vocab_size):
            ids = [tok.token_to_id(i) if isinstance(i, str) else i for i in ids]
            row = {
                "id": name,
                "ids": ids,
                "text": tok.decode(ids, skip_special_tokens=True),
                "text_with_specials": tok.decode(ids, skip_special_tokens=False),
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
