#!/usr/bin/env python3
"""Writes data/features/expected.json: what sentence-transformers computes for
the encode options of issue 32 (Matryoshka truncate_dim, prompts, quantized
output), the oracle the C++ and Python tests compare tessera against.

sentence-transformers is called, never re-implemented: every number below is
the output of a SentenceTransformer method or of
sentence_transformers.quantize_embeddings. Run it in the benchmark venv
(torch and sentence-transformers never go into CI or the project venv), from
the repository root, after bash scripts/install-deps.sh has put
models/all-MiniLM-L6-v2 in place:

    .venv-bench/bin/python tools/make_feature_oracle.py

Deterministic: CPU, one torch thread, fixed inputs; a rerun with the same
versions (recorded under "generator") writes the same file.

Inputs ("texts", shared by both models): 8 short texts of data/sample (notes,
records.jsonl, one French text), the empty string, and the Gettysburg Address
(data/sample/notes/public-domain-gettysburg.txt, 331 tokens for MiniLM, so it
is cut to 256). Computed, with E = the float32 rows of 1.:

 minilm (models/all-MiniLM-L6-v2: Transformer, mean Pooling, Normalize;
 max_seq_length 256, dim 384):
  1. float32: encode(texts, normalize_embeddings=False, convert_to_numpy=True)
     (the Normalize module makes them unit rows anyway), and token_ids: the ids
     of each text ([CLS] ... [SEP], cut to 256).
  2. truncate_dim: encode(texts, truncate_dim=d, normalize_embeddings=True) for
     d = 32, 128, 383, and encode(texts, truncate_dim=128) without
     normalize_embeddings: sentence-transformers cuts the output of the last
     module (after Normalize) and normalizes only when normalize_embeddings is
     set, so those rows are NOT unit rows (their norms are recorded).
  3. prompt: encode(texts, prompt="query: "); the model sees the string
     prompt + text, tokenized as one text: token_ids are those ids, and the
     long text shows that the prompt's tokens count toward the 256 (the ids
     are [CLS] query : four score ... [SEP], 256 in all). prompt_length is
     what sentence-transformers records for the prompt (its ids minus a
     trailing special token; Pooling uses it only with include_prompt false).
     encode_query / encode_document: all-MiniLM-L6-v2's
     config_sentence_transformers.json has no prompts; sentence-transformers
     6.3 then defaults prompts to {"query": "", "document": ""}, an empty
     prompt is no prompt, and both equal 1. (asserted, recorded as a flag).
 tiny_qwen3 (data/models/tiny-qwen3: last-token pooling, left padding,
 Normalize; prompts {"query": "Instruct: ...\\nQuery:", "document": ""}):
  4. encode_query(texts) (uses the "query" prompt) and encode_document(texts)
     (the first of "document", "passage", "corpus" in prompts: "document",
     the empty prompt), each with the prompt used and the token ids of
     prompt + text; encode(texts, prompt_name="query", truncate_dim=8,
     normalize_embeddings=True).
 quantization (byte-exact cases on the fixed float input E):
  5. quantize_embeddings(E, p) for p = int8, uint8, binary, ubinary (int8 /
     uint8 ranges = per-dimension min and max of E itself);
     quantize_embeddings(E, p, ranges=R) for int8 and uint8, with
     R = [min; max] over a calibration set (40 sentences of data/long: the
     first two of 8-40 words of each document, embedded by encode, recorded as
     calibration.texts; the 40 x 384 rows themselves are not stored);
     quantize_embeddings(E, "int8", calibration_embeddings=C40) is checked
     byte-equal to the ranges=R case (sentence-transformers computes exactly
     R from it) and stored only as a reference to it; a small explicit
     calibration case: quantize_embeddings(E, "int8",
     calibration_embeddings=C6) with C6 = the first 6 calibration rows
     (stored); int8 with degenerate ranges (R with max := min in columns
     0-3: steps == 0 becomes 1); binary / ubinary of the 383-dim truncated
     rows (packbits pads the last byte with zero bits);
     encode(texts, precision=p) for each p (the end-to-end output: ranges from
     the batch itself; asserted equal to quantize_embeddings(E, p)).

Floats: every float is a float32 written as the shortest decimal that reads
back (decimal -> double -> float32, as json / nlohmann do) as the same
float32, so E, R and C6 are exact inputs and the quantized values can be
checked byte for byte. Integer outputs are lists of ints with "dtype" and
"shape". Semantics of quantize_embeddings (sentence-transformers 6.3,
util/quantization.py), in float32 throughout:
    starts = R[0]; steps = (R[1] - R[0]) / 255; steps[steps == 0] = 1
    q = clip(floor((E - starts) / steps), 0, 255)
    uint8 = q, int8 = q - 128
    ubinary = packbits(E > 0, axis=-1) (big-endian bit order: dim 0 is the
              top bit of byte 0; the last byte is zero-padded)
    binary = ubinary - 128 as int8 (= ubinary XOR 0x80 reinterpreted)
(documented() writes these out in numpy; the generator asserts that they give
every stored quantized case, so a change in sentence-transformers'
arithmetic fails here first.)
"""

import argparse
import json
import os
import pathlib
import platform
import re

import numpy as np
import sentence_transformers
import tokenizers
import torch
import transformers
from sentence_transformers import SentenceTransformer
from sentence_transformers import quantize_embeddings

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "features" / "expected.json"
MINILM = "models/all-MiniLM-L6-v2"
QWEN = "data/models/tiny-qwen3"
PRECISIONS = ["int8", "uint8", "binary", "ubinary"]


# ----------------------------------------------------------------------------- inputs


def read(rel):
    return (ROOT / rel).read_text(encoding="utf-8")


def record(id_):
    for line in read("data/sample/records.jsonl").splitlines():
        if line.strip():
            r = json.loads(line)
            if r["id"] == id_:
                return r["text"]
    raise KeyError(id_)


def texts():
    """(id, text): 8 short texts, the empty string, one text over 256 tokens."""
    return [
        ("notes/one-liner", read("data/sample/notes/one-liner.txt").strip()),
        ("notes/grocery", read("data/sample/notes/grocery.txt").strip()),
        ("notes/weather", read("data/sample/notes/weather.txt").strip()),
        ("notes/numbers", read("data/sample/notes/numbers.txt").strip()),
        ("records/faq-1", record("faq-1")),
        ("records/103", record(103)),
        ("records/tweet", record("tweet")),
        ("multilingual/french", read("data/sample/multilingual/french.txt").strip()),
        ("empty", ""),
        ("notes/public-domain-gettysburg",
         read("data/sample/notes/public-domain-gettysburg.txt").strip()),
    ]


def calibration_texts():
    """Two sentences of 8-40 words from each data/long document (40 in all):
    the first two, in file order, split at . ! ? ; followed by a space."""
    out = []
    for p in sorted((ROOT / "data" / "long").glob("*.txt")):
        picked = []
        for para in p.read_text(encoding="utf-8").split("\n\n"):
            for s in re.split(r"(?<=[.!?;])\s+", para.strip()):
                if 8 <= len(s.split()) <= 40:
                    picked.append(s)
                if len(picked) == 2:
                    break
            if len(picked) == 2:
                break
        assert len(picked) == 2, p
        out.extend(picked)
    return out


# ----------------------------------------------------------------------------- output


def f32(x):
    """The shortest decimal that reads back (via double) as the same float32."""
    x = np.float32(x)
    s = np.format_float_positional(x, unique=True, trim="-") if x != 0 else "0"
    if abs(x) != 0 and (abs(x) < 1e-4 or abs(x) >= 1e7):
        s = np.format_float_scientific(x, unique=True, trim="-")
    v = float(s)
    assert np.float32(v) == x, (x, s)
    return v


def frows(a):
    a = np.asarray(a)
    assert a.dtype == np.float32, a.dtype
    return [[f32(v) for v in row] for row in a]


def fblock(a, **extra):
    a = np.asarray(a)
    return dict(extra, dtype="float32", shape=list(a.shape), rows=frows(a))


def iblock(a, **extra):
    a = np.asarray(a)
    assert a.dtype in (np.int8, np.uint8), a.dtype
    return dict(extra, dtype=str(a.dtype), shape=list(a.shape),
                values=[[int(v) for v in row] for row in a])


def norms(a):
    return [f32(v) for v in np.linalg.norm(np.asarray(a, np.float32), axis=1)]


def dump(obj, indent=0):
    """JSON with objects indented and any list of scalars on one line."""
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f'{pad} {json.dumps(k)}: {dump(v, indent + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj):
            return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        items = [pad + " " + dump(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def unpadded_ids(features):
    ids, mask = features["input_ids"], features["attention_mask"]
    return [[int(t) for t, m in zip(row, mrow) if m] for row, mrow in zip(ids, mask)]


# ----------------------------------------------------------------------------- oracle


def minilm_section(model, ts):
    ids = unpadded_ids(model.preprocess(ts))
    E = model.encode(ts, normalize_embeddings=False, convert_to_numpy=True)
    out = {
        "model": MINILM,
        "modules": [type(m).__name__ for m in model],
        "max_seq_length": model.max_seq_length,
        "dim": int(E.shape[1]),
        "prompts": dict(model.prompts),
        "default_prompt_name": model.default_prompt_name,
        "token_ids": ids,
        "float32": fblock(E, call="encode(texts, normalize_embeddings=False, "
                                  "convert_to_numpy=True)", norms=norms(E)),
    }
    trunc = []
    for d in (32, 128, 383):
        T = model.encode(ts, truncate_dim=d, normalize_embeddings=True)
        assert T.shape == (len(ts), d)
        trunc.append(fblock(T, dim=d, normalize_embeddings=True,
                            call=f"encode(texts, truncate_dim={d}, normalize_embeddings=True)",
                            norms=norms(T)))
    T = model.encode(ts, truncate_dim=128)
    assert np.array_equal(T, E[:, :128]), "truncate_dim without normalize: E[:, :d]"
    n = np.linalg.norm(T, axis=1)
    assert n.max() < 0.95, n  # not renormalized
    trunc.append(fblock(T, dim=128, normalize_embeddings=False,
                        call="encode(texts, truncate_dim=128)",
                        note="not renormalized: the first 128 values of the unit rows "
                             "(equal to float32.rows[:, :128]); normalize_embeddings "
                             "normalizes after the cut",
                        norms=norms(T)))
    out["truncate_dim"] = trunc

    prompt = "query: "
    P = model.encode(ts, prompt=prompt)
    joint = model.encode([prompt + t for t in ts])
    assert np.array_equal(P, joint), "prompt = string concatenation"
    pfeat = model.preprocess(ts, prompt=prompt)
    pids = unpadded_ids(pfeat)
    prompt_ids = [int(t) for t in model.preprocess([prompt])["input_ids"][0]]
    cls_, sep = prompt_ids[0], prompt_ids[-1]
    prompt_tokens = prompt_ids[1:-1]
    long_i = len(ts) - 1
    long_ids = pids[long_i]
    assert len(ids[long_i]) == model.max_seq_length
    assert len(long_ids) == model.max_seq_length
    assert long_ids[:1 + len(prompt_tokens)] == [cls_] + prompt_tokens and long_ids[-1] == sep
    assert long_ids[1 + len(prompt_tokens):-1] == ids[long_i][1:-1 - len(prompt_tokens)]
    assert pids[len(ts) - 2] == prompt_ids  # the empty text
    out["prompt"] = fblock(
        P, prompt=prompt, call='encode(texts, prompt="query: ")',
        token_ids=pids,
        prompt_token_ids=prompt_ids,
        prompt_length=int(pfeat["prompt_length"]),
        long_case={
            "text_index": long_i,
            "token_count": len(long_ids),
            "untruncated_token_count": len(model.tokenizer(ts[long_i])["input_ids"]),
            "note": "prompt + text is tokenized as one text and cut to max_seq_length: "
                    "[CLS], the prompt's tokens, the text's first 256 - 2 - "
                    f"{len(prompt_tokens)} tokens, [SEP]",
        })

    Q = model.encode_query(ts)
    D = model.encode_document(ts)
    out["encode_query_equals_encode"] = bool(np.array_equal(Q, E))
    out["encode_document_equals_encode"] = bool(np.array_equal(D, E))
    assert out["encode_query_equals_encode"] and out["encode_document_equals_encode"]
    return E, out


def qwen_section(model, ts):
    out = {
        "model": QWEN,
        "modules": [type(m).__name__ for m in model],
        "max_seq_length": model.max_seq_length,
        "prompts": dict(model.prompts),
        "default_prompt_name": model.default_prompt_name,
    }
    for method, name in (("encode_query", "query"), ("encode_document", "document")):
        rows = getattr(model, method)(ts)
        prompt = model.prompts[name]
        same = model.encode(ts, prompt_name=name)
        assert np.array_equal(rows, same), (method, name)
        ids = unpadded_ids(model.preprocess(ts, prompt=prompt or None))
        out[method] = fblock(rows, call=f"{method}(texts)", prompt_name=name, prompt=prompt,
                             token_ids=ids)
    T = model.encode(ts, prompt_name="query", truncate_dim=8, normalize_embeddings=True)
    out["query_truncate_dim_8"] = fblock(
        T, call='encode(texts, prompt_name="query", truncate_dim=8, normalize_embeddings=True)')
    return out


def documented(x, p, ranges=None):
    """The "semantics" strings, written out: asserted equal to sentence-transformers
    on every case, so a change of its arithmetic fails here, not in C++."""
    x = np.asarray(x, np.float32)
    if p.endswith("binary"):
        bits = np.zeros((x.shape[0], (x.shape[1] + 7) // 8), np.uint8)
        for j in range(x.shape[1]):
            bits[:, j // 8] |= (x[:, j] > 0).astype(np.uint8) << np.uint8(7 - j % 8)
        return bits if p == "ubinary" else (bits ^ np.uint8(0x80)).view(np.int8)
    r = np.vstack((x.min(axis=0), x.max(axis=0))) if ranges is None else ranges
    r = np.asarray(r, np.float32)
    steps = (r[1] - r[0]) / np.float32(255)
    steps[steps == 0] = np.float32(1)
    q = np.clip(np.floor((x - r[0]) / steps), 0, 255)
    return q.astype(np.uint8) if p == "uint8" else (q - 128).astype(np.int8)


def quantization_section(minilm, E, E383, ts):
    cal = calibration_texts()
    C = minilm.encode(cal, normalize_embeddings=False, convert_to_numpy=True)
    R = np.vstack((C.min(axis=0), C.max(axis=0))).astype(np.float32)
    C6 = C[:6]
    Rdeg = R.copy()
    Rdeg[1, :4] = Rdeg[0, :4]
    cases = []
    for p in PRECISIONS:
        cases.append(iblock(quantize_embeddings(E, p), name=p,
                            call=f'quantize_embeddings(E, "{p}")',
                            **({"ranges_from": "E (per-dimension min and max of its rows)"}
                               if p.endswith("int8") else {})))
    for p in ("int8", "uint8"):
        q = quantize_embeddings(E, p, ranges=R)
        cases.append(iblock(q, name=f"{p}_ranges", call=f'quantize_embeddings(E, "{p}", ranges=R)',
                            outside_ranges=int(((E < R[0]) | (E > R[1])).sum())))
    q_cal = quantize_embeddings(E, "int8", calibration_embeddings=C)
    assert np.array_equal(q_cal, quantize_embeddings(E, "int8", ranges=R))
    cases.append({"name": "int8_calibration", "same_as": "int8_ranges",
                  "call": 'quantize_embeddings(E, "int8", calibration_embeddings=C40)',
                  "note": "C40 = the 40 calibration rows (not stored); its per-dimension "
                          "min and max are R, so the bytes equal int8_ranges (asserted)"})
    cases.append(iblock(quantize_embeddings(E, "int8", calibration_embeddings=C6),
                        name="int8_calibration_c6",
                        call='quantize_embeddings(E, "int8", calibration_embeddings=C6)',
                        calibration_embeddings=fblock(C6, note="C6 = the first 6 calibration "
                                                               "rows")))
    cases.append(iblock(quantize_embeddings(E, "int8", ranges=Rdeg), name="int8_ranges_degenerate",
                        call='quantize_embeddings(E, "int8", ranges=Rdeg)',
                        ranges=fblock(Rdeg, note="R with max := min in columns 0-3 "
                                                 "(steps 0 -> 1)")))
    for p in ("binary", "ubinary"):
        cases.append(iblock(quantize_embeddings(E383, p), name=f"{p}_dim383",
                            call=f'quantize_embeddings(E383, "{p}")',
                            input="minilm.truncate_dim[dim 383].rows (normalized)"))
    for p in PRECISIONS:
        q = minilm.encode(ts, precision=p)
        ref = quantize_embeddings(E, p)
        assert q.dtype == ref.dtype and np.array_equal(q, ref), p
        cases.append(iblock(q, name=f"encode_{p}", call=f'encode(texts, precision="{p}")',
                            equals=p))
    for c in cases:
        if "values" not in c:
            continue
        p = c["call"].split('"')[1]
        x = E383 if "E383" in c["call"] else E
        ranges = {"int8_ranges": R, "uint8_ranges": R, "int8_ranges_degenerate": Rdeg,
                  "int8_calibration_c6": np.vstack((C6.min(axis=0), C6.max(axis=0)))}.get(c["name"])
        assert np.array_equal(documented(x, p, ranges).astype(np.int64), c["values"]), c["name"]
    return {
        "input": "E = minilm.float32.rows",
        "semantics": [
            "all in float32: starts = ranges[0]; steps = (ranges[1] - ranges[0]) / 255; "
            "steps[steps == 0] = 1; q = clip(floor((E - starts) / steps), 0, 255)",
            "uint8 = q; int8 = q - 128",
            "ranges default: [min; max] over calibration_embeddings if given, else over E",
            "ubinary = packbits(E > 0, axis=-1): dim 8k+j is bit 7-j of byte k; "
            "the last byte is zero-padded",
            "binary = int8(ubinary - 128), i.e. ubinary XOR 0x80 as int8",
            "encode(texts, precision=p) quantizes the whole encoded batch with ranges from "
            "that batch",
        ],
        "calibration": {
            "texts": cal,
            "source": "two sentences of 8-40 words from each data/long/docNN.txt, in order",
            "ranges": fblock(R, call="R = vstack((C40.min(axis=0), C40.max(axis=0))), "
                                     "C40 = encode(calibration.texts)"),
        },
        "cases": cases,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", default=str(OUT))
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    ts = texts()
    strings = [t for _, t in ts]

    minilm = SentenceTransformer(str(ROOT / MINILM), device="cpu")
    qwen = SentenceTransformer(str(ROOT / QWEN), device="cpu")
    E, mini = minilm_section(minilm, strings)
    E383 = np.asarray(mini["truncate_dim"][2]["rows"], np.float32)
    assert mini["truncate_dim"][2]["dim"] == 383
    # what a reader of the file gets back is exactly E
    assert np.array_equal(np.asarray(mini["float32"]["rows"], np.float32), E)

    expected = {
        "generator": {
            "script": "tools/make_feature_oracle.py",
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "tokenizers": tokenizers.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
            "device": "cpu",
            "torch_threads": 1,
            "floats": "float32, shortest decimal that reads back (via double) as the same float32",
        },
        "texts": [{"id": i, "text": t} for i, t in ts],
        "minilm": mini,
        "tiny_qwen3": qwen_section(qwen, strings),
        "quantization": quantization_section(minilm, E, E383, strings),
    }
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    text = dump(expected) + "\n"
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    assert json.loads(text) == json.loads(json.dumps(expected))
    print(f"wrote {args.output} ({len(text.encode()) / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
