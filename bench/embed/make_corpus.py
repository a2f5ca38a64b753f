"""Writes the embedding benchmark's input: N chunks of mixed length.

Usage: make_corpus.py MODEL_DIR OUT.jsonl [--count 2000] [--min 16] [--max 256] [--seed 1]
Lengths are drawn uniformly from [min, max] tokens ([CLS] and [SEP] included,
as the model's own tokenizer counts them); each text is a run of whole words
cut from the sample corpus (data/sample), so every engine sees the same real
text. Prints the total token count.
"""
import argparse
import glob
import json
import os
import random

from tokenizers import Tokenizer


def source_text(repo):
    parts = []
    for path in sorted(glob.glob(os.path.join(repo, "data/sample/**/*"), recursive=True)):
        if path.endswith((".txt", ".md")):
            with open(path, encoding="utf-8") as f:
                parts.append(" ".join(f.read().split()))
        elif path.endswith(".jsonl"):
            with open(path, encoding="utf-8") as f:
                parts += [json.loads(line)["text"] for line in f if line.strip()]
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--min", type=int, default=16)
    ap.add_argument("--max", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tok = Tokenizer.from_file(os.path.join(args.model_dir, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    text = source_text(repo)
    enc = tok.encode(text, add_special_tokens=False)
    offsets = enc.offsets
    # Word starts: tokens that do not continue a word ("##...").
    starts = [i for i, t in enumerate(enc.tokens) if not t.startswith("##")]
    rng = random.Random(args.seed)
    total = 0
    with open(args.out, "w", encoding="utf-8") as out:
        for n in range(args.count):
            target = rng.randint(args.min, args.max)
            while True:
                s = rng.choice(starts)
                e = s + target - 2  # one past the last token of the chunk
                while e < len(offsets) and enc.tokens[e].startswith("##"):
                    e -= 1  # end on a whole word
                if e <= s or e > len(offsets):
                    continue
                chunk = text[offsets[s][0]:offsets[e - 1][1]]
                length = len(tok.encode(chunk).ids)
                if abs(length - target) <= 2 and args.min <= length <= args.max:
                    break
            total += length
            out.write(json.dumps({"id": n, "text": chunk}, ensure_ascii=False) + "\n")
    print(total)


if __name__ == "__main__":
    main()
