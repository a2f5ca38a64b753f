"""The generated corpus of tests/python/test_ray.py and bench/ray/bench.py:
`count` short documents (6 to 24 words from a fixed vocabulary, seeded, so the
same every run) and, every 250th, a long one of several 256-token chunks.
String and numeric ids; one record has no id (its id is then "path:line")."""

import json
import random

WORDS = ("attention kernel embedding document corpus token batch model runtime tensor "
         "shard worker actor cluster retry deterministic chunk offset vector cosine "
         "river mountain garden lighthouse clock music winter summer coffee bread "
         "the a of and to in is was for on with as by at from quickly slowly "
         "bright dark ancient modern small large red blue green silent loud").split()


def documents(count=2000, seed=17):
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        n = rng.randint(300, 600) if i % 250 == 125 else rng.randint(6, 24)
        text = " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."
        record = {"id": i if i % 3 == 0 else f"doc-{i:05d}", "text": text}
        if i == 7:
            del record["id"]
        docs.append(record)
    return docs


def write_jsonl(path, count=2000, seed=17):
    with open(path, "w", encoding="utf-8") as f:
        for record in documents(count, seed):
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


if __name__ == "__main__":
    import sys
    write_jsonl(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
