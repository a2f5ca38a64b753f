#!/usr/bin/env python3
"""Writes bench/quantization/documents.jsonl and queries.jsonl: the retrieval
set on which recall.py measures how far quantized search (int8, uint8,
binary, ubinary) agrees with float32 search.

Documents (passages) come from the repository's own text:
  - data/sample: every file of docs/, stories/, notes/ and multilingual/, cut
    into paragraphs (blank lines), and the texts of records.jsonl;
  - data/long: the first PER_LONG_DOC passages of each docNN.txt.
A text is split into sentences (after . ! ? ; and the CJK 。！？), and the
sentences are packed in order into passages of at most MAX_CHARS characters
(a paragraph of data/sample is one passage unless it is longer); a passage is
closed once it has MIN_CHARS characters at a paragraph end. A sentence over
MAX_CHARS is cut at the last space before it (at MAX_CHARS where there is
none, as in the Chinese documents). Passages under 40 characters (headings,
list items) are dropped.

Queries: N_QUERIES passages drawn with random.Random(SEED); each query is one
sentence of its passage (the longest of 6+ words, else the longest), lightly
shortened: its first word and trailing punctuation dropped, at most 12 words
kept (CJK text without spaces: 24 characters from its 3rd). The passage it
came from is recorded as doc_id (recall.py reports how often float32 search
finds it; the agreement figures use float32's own top 10 as the truth).

Deterministic: python3 bench/quantization/make_queries.py rewrites the same
files. Rows: documents {"id", "source", "text"}, queries {"id", "doc_id",
"text"}.
"""

import json
import pathlib
import random
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
OUT = pathlib.Path(__file__).resolve().parent
MIN_CHARS = 250
MAX_CHARS = 600
PER_LONG_DOC = 16
N_QUERIES = 100
SEED = 32
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？])")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def sentences(paragraph):
    return [s.strip() for s in SENTENCE_END.split(paragraph) if s.strip()]


def cut(sentence):
    """A sentence over MAX_CHARS as pieces of at most MAX_CHARS."""
    out = []
    while len(sentence) > MAX_CHARS:
        at = sentence.rfind(" ", 0, MAX_CHARS)
        at = at if at > MAX_CHARS // 2 else MAX_CHARS
        out.append(sentence[:at].strip())
        sentence = sentence[at:].strip()
    return out + ([sentence] if sentence else [])


def passages(text):
    out, cur = [], ""
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        for piece in (p for s in sentences(para) for p in cut(s)):
            if cur and len(cur) + 1 + len(piece) > MAX_CHARS:
                out.append(cur)
                cur = ""
            cur = f"{cur} {piece}" if cur else piece
        if len(cur) >= MIN_CHARS:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return [p for p in out if len(p) >= 40]


def documents():
    docs = []
    sample = ROOT / "data" / "sample"
    for sub in ("docs", "stories", "notes", "multilingual"):
        for path in sorted((sample / sub).iterdir()):
            rel = path.relative_to(ROOT / "data").as_posix()
            for i, p in enumerate(passages(path.read_text(encoding="utf-8"))):
                docs.append({"id": f"{rel}#{i}", "source": rel, "text": p})
    with open(sample / "records.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                docs.append({"id": f"sample/records.jsonl#{r['id']}",
                             "source": "sample/records.jsonl", "text": r["text"]})
    for path in sorted((ROOT / "data" / "long").glob("doc*.txt")):
        rel = path.relative_to(ROOT / "data").as_posix()
        for i, p in enumerate(passages(path.read_text(encoding="utf-8"))[:PER_LONG_DOC]):
            docs.append({"id": f"{rel}#{i}", "source": rel, "text": p})
    assert len({d["id"] for d in docs}) == len(docs)
    return docs


def make_query(text):
    ss = sentences(text)
    long_ones = [s for s in ss if len(s.split()) >= 6]
    s = max(long_ones or ss, key=len)
    words = s.split()
    if len(words) < 3 and CJK.search(s):
        return s[2:26]
    words = words[1:13]
    return " ".join(words).rstrip(".,;:!?")


def main():
    docs = documents()
    rng = random.Random(SEED)
    picked = sorted(rng.sample(range(len(docs)), N_QUERIES))
    queries = [{"id": f"q{n:03d}", "doc_id": docs[i]["id"], "text": make_query(docs[i]["text"])}
               for n, i in enumerate(picked)]
    assert all(q["text"] for q in queries)
    for name, rows in (("documents.jsonl", docs), ("queries.jsonl", queries)):
        with open(OUT / name, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    size = sum((OUT / n).stat().st_size for n in ("documents.jsonl", "queries.jsonl"))
    print(f"{len(docs)} documents, {len(queries)} queries, {size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
