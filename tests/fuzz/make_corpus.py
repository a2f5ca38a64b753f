"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/).

Usage: .venv/bin/python tests/fuzz/make_corpus.py [MODEL_DIR]
Small, real-looking inputs, each a few hundred bytes: valid files of every
kind a target reads plus a few near misses. The first byte of an input picks
the file or mode where a target reads several (see each *_fuzz.cc). The
tokenizer and config seeds are cut from the default model (models/
all-MiniLM-L6-v2) when it is installed. Rerun after changing a target's input
format; the outputs are committed.
"""
import io
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_raw(header, data=b"", version=1):
    header = header + " " * (63 - (len(header) + 10) % 64) + "\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data
    return (b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(header)) +
            header.encode() + data)


def npy_seeds():
    rng = np.random.default_rng(0)
    put("npy", "f4_2x3.npy", npy_bytes(rng.standard_normal((2, 3)).astype(np.float32)))
    put("npy", "f2_vector.npy", npy_bytes(rng.standard_normal(5).astype(np.float16)))
    put("npy", "u2_bshd.npy", npy_bytes(np.arange(16, dtype=np.uint16).reshape(1, 2, 2, 4)))
    put("npy", "f4_scalar.npy", npy_bytes(np.float32(1.5)))
    put("npy", "f4_empty.npy", npy_bytes(np.zeros((0, 3), dtype=np.float32)))
    put("npy", "v2_header.npy",
        npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                struct.pack("<2f", 1, 2), version=2))
    put("npy", "py2_long_dims.npy",
        npy_raw("{'descr': '<f2', 'fortran_order': False, 'shape': (1L, 2L), }", b"\0" * 4))
    put("npy", "fortran.npy",
        npy_raw("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", b"\0" * 16))
    put("npy", "int64.npy", npy_bytes(np.arange(3, dtype=np.int64)))


def safetensors_bytes(tensors, metadata=None):
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    f32 = np.arange(4, dtype=np.float32).tobytes()
    bf16 = (np.array([1, -2, 0.5], dtype=np.float32).view(np.uint32) >> 16).astype(
        np.uint16).tobytes()
    f16 = np.array([1, 2], dtype=np.float16).tobytes()
    put("safetensors", "two_tensors.safetensors", safetensors_bytes(
        {"embeddings.weight": ("F32", [2, 2], f32), "pooler.bias": ("BF16", [3], bf16)},
        {"format": "pt"}))
    put("safetensors", "f16_and_empty.safetensors", safetensors_bytes(
        {"a": ("F16", [2], f16), "empty": ("F32", [0, 4], b""),
         "ids": ("I64", [1], struct.pack("<q", 7))}))
    put("safetensors", "header_only.safetensors", safetensors_bytes({}))


def tokenizer_seeds(model_dir):
    path = os.path.join(model_dir, "tokenizer.json")
    if os.path.exists(path):
        with open(path) as f:
            t = json.load(f)
    else:  # the same layout, written out
        t = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
             "normalizer": {"type": "BertNormalizer", "clean_text": True,
                            "handle_chinese_chars": True, "strip_accents": None,
                            "lowercase": True},
             "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": None,
             "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
             "model": {"type": "WordPiece", "unk_token": "[UNK]",
                       "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                       "vocab": {}}}
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "cafe",
             "na", "##ive", "##s", "x", "東", "京", "the", "a", "##ing", "run"]
    vocab = {w: i for i, w in enumerate(words)}
    t["model"]["vocab"] = vocab
    t["added_tokens"] = [
        {"id": vocab[w], "special": True, "content": w, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False} for w in words[:5]]
    if t.get("post_processor"):
        t["post_processor"]["special_tokens"] = {
            w: {"id": w, "ids": [vocab[w]], "tokens": [w]} for w in ("[CLS]", "[SEP]")}
    if t.get("padding"):
        t["padding"]["pad_id"] = vocab["[PAD]"]
    put("tokenizer", "tokenizer.json", b"\x00" + json.dumps(t, ensure_ascii=False).encode())
    t["normalizer"]["lowercase"] = False
    t["normalizer"]["strip_accents"] = True
    put("tokenizer", "tokenizer_cased.json", b"\x00" + json.dumps(t).encode())
    put("tokenizer", "vocab.txt", b"\x01" + "\n".join(words).encode() + b"\n")


def tokenizer_model_seeds():
    """Tiny tokenizer.json files of the other model folders (BPE, Unigram), with
    every shared normalizer, pre-tokenizer, post-processor and decoder step."""
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    added = [{"id": i, "special": True, "content": w, "single_word": False,
              "lstrip": w == "<mask>", "rstrip": False, "normalized": False}
             for i, w in enumerate(specials)]
    pieces = ["h", "e", "l", "o", "\u0120", "w", "r", "d", "he", "ll", "hell", "hello", "\u0120w",
              "or", "\u0120wor", "ld", "\u0120world"]
    bpe = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
           "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                             "use_regex": True},
           "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                              "trim_offsets": True, "add_prefix_space": True},
           "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "dropout": None, "unk_token": None,
                     "continuing_subword_prefix": None, "end_of_word_suffix": None,
                     "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": {w: i for i, w in enumerate(specials + pieces)},
                     "merges": [["h", "e"], ["l", "l"], ["he", "ll"], ["hell", "o"],
                                ["\u0120", "w"], ["o", "r"], ["\u0120w", "or"], ["l", "d"],
                                ["\u0120wor", "ld"]]}}
    put("tokenizer", "bpe.json", b"\x00" + json.dumps(bpe, ensure_ascii=False).encode())
    # Qwen2's layout: NFC, Split with its regex + ByteLevel without one, and
    # Qwen3-Embedding's "$A <|endoftext|>" after a ByteLevel post-processor.
    qwen_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                  "use_regex": False}
    qwen = dict(bpe, normalizer={"type": "NFC"}, decoder=qwen_level,
                added_tokens=[{"id": len(specials) + len(pieces), "content": "<|endoftext|>",
                               "single_word": False, "lstrip": False, "rstrip": False,
                               "normalized": False, "special": True}],
                pre_tokenizer={"type": "Sequence", "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": (
                        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
                        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")},
                     "behavior": "Isolated", "invert": False},
                    {"type": "Split", "pattern": {"String": "o"}, "behavior": "MergedWithNext",
                     "invert": True},
                    qwen_level]},
                post_processor={"type": "Sequence", "processors": [qwen_level, {
                    "type": "TemplateProcessing",
                    "single": [{"Sequence": {"id": "A", "type_id": 0}},
                               {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
                    "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                             {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                             {"Sequence": {"id": "B", "type_id": 1}},
                             {"SpecialToken": {"id": "<|endoftext|>", "type_id": 1}}],
                    "special_tokens": {"<|endoftext|>": {
                        "id": "<|endoftext|>", "ids": [len(specials) + len(pieces)],
                        "tokens": ["<|endoftext|>"]}}}]})
    put("tokenizer", "bpe_split.json", b"\x00" + json.dumps(qwen, ensure_ascii=False).encode())
    # A 4-byte trie (one unit, no key) and the string "a": a charsmap that maps nothing.
    charsmap = "BAAAAAAAAABhAA=="
    vocab = [[w, 0.0] for w in specials] + [
        ["\u2581", -2.0], ["\u2581hello", -3.0], ["h", -4.0], ["e", -4.0], ["l", -4.0],
        ["o", -4.0], ["\u2581w", -5.0], ["orld", -5.0], ["\u6771", -6.0], ["<0x41>", -8.0]]
    unigram = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
               "normalizer": {"type": "Sequence", "normalizers": [
                   {"type": "Precompiled", "precompiled_charsmap": charsmap},
                   {"type": "NFKC"}, {"type": "Lowercase"},
                   {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"},
                   {"type": "Replace", "pattern": {"String": "``"}, "content": "\""},
                   {"type": "Strip", "strip_left": True, "strip_right": True},
                   {"type": "Prepend", "prepend": "\u2581"}, {"type": "NFD"}]},
               "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                   {"type": "WhitespaceSplit"},
                   {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
                    "split": True}]},
               "post_processor": {"type": "TemplateProcessing",
                                  "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                             {"Sequence": {"id": "A", "type_id": 0}},
                                             {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                                  "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                           {"Sequence": {"id": "A", "type_id": 0}},
                                           {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                           {"Sequence": {"id": "B", "type_id": 1}},
                                           {"SpecialToken": {"id": "</s>", "type_id": 1}}],
                                  "special_tokens": {
                                      "<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                                      "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
               "decoder": {"type": "Sequence", "decoders": [
                   {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                   {"type": "ByteFallback"}, {"type": "Fuse"},
                   {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
               "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": True}}
    put("tokenizer", "unigram.json", b"\x00" + json.dumps(unigram, ensure_ascii=False).encode())


def model_config_seeds(model_dir):
    names = ["config.json", "modules.json", "1_Pooling/config.json", "sentence_bert_config.json"]
    for i, name in enumerate(names):
        path = os.path.join(model_dir, name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                put("model_config", name.replace("/", "_"), bytes([i]) + f.read())
    put("model_config", "pooling_cls.json", b"\x02" + json.dumps(
        {"word_embedding_dimension": 384, "pooling_mode_cls_token": True}).encode())
    put("model_config", "modules_plain.json", b"\x01" + json.dumps(
        [{"idx": 0, "path": "", "type": "sentence_transformers.models.Transformer"}]).encode())


def document_reader_seeds():
    put("document_reader", "records.jsonl", b"\x00" + "\n".join([
        json.dumps({"id": "a", "text": "First document. It has two sentences."}),
        json.dumps({"id": 12, "text": "Caf\u00e9 \u6771\u4eac \U0001F600"}, ensure_ascii=False),
        "",
        json.dumps({"text": "no id"}),
        '{"id": "bad", "text": 3}',
        "not json",
        json.dumps({"id": [1], "text": "id is a list"}),
    ]).encode() + b"\n")
    put("document_reader", "text.txt",
        b"\x01A plain text document.\nWith two lines and \xc3\xa9.\n")
    put("document_reader", "invalid_utf8.txt", b"\x01bad \xff\xfe bytes")


def request_parse_seeds():
    bodies = [
        (0, "embed_one", {"inputs": "What is Deep Learning?"}),
        (0, "embed_batch", {"inputs": ["a", "b"], "normalize": False, "truncate": True,
                            "truncation_direction": "Right"}),
        (0, "embed_prompt", {"inputs": "x", "prompt_name": "query"}),
        (1, "openai", {"input": ["hello", "world"], "model": "all-MiniLM-L6-v2",
                       "encoding_format": "base64", "dimensions": 384, "user": "u"}),
        (1, "openai_float", {"input": "hello", "encoding_format": "float"}),
        (2, "tokenize", {"inputs": ["Hello world"], "add_special_tokens": False}),
        (3, "embed_all", {"inputs": ["a", "b"], "truncate": True}),
        (4, "similarity", {"inputs": {"source_sentence": "a", "sentences": ["b", "c"]},
                           "parameters": {"truncate": False, "truncation_direction": "Right"}}),
        (5, "decode", {"ids": [[101, 2023, 102], [7592]], "skip_special_tokens": False}),
        (0, "embed_left_dims", {"inputs": ["a", "b"], "truncate": True,
                                "truncation_direction": "Left", "dimensions": 8,
                                "prompt_name": "query"}),
        (1, "openai_token_ids", {"input": [[101, 2023, 102], [7592]], "dimensions": 128,
                                 "model": "m", "user": "u"}),
        (1, "openai_one_id_list", {"input": [7592, 2088], "encoding_format": "base64"}),
        (6, "cohere", {"model": "m", "texts": ["hello", "world"], "input_type": "search_query",
                       "embedding_types": ["float", "int8", "ubinary", "base64"],
                       "truncate": "START", "output_dimension": 256, "max_tokens": 64}),
        (6, "cohere_inputs", {"inputs": [{"content": [{"type": "text", "text": "hi"}]}],
                              "input_type": "search_document", "truncate": "NONE"}),
        (7, "documents", {"documents": ["a", {"id": 3, "text": "b"}], "prompt_name": "document",
                          "dimensions": 64, "doc_embedding": True}),
    ]
    for selector, name, body in bodies:
        put("request_parse", name + ".json", bytes([selector]) + json.dumps(body).encode())
    put("request_parse", "not_json.txt", b"\x00{\"inputs\": [")
    put("request_parse", "too_many.json",
        b"\x00" + json.dumps({"inputs": ["x"] * 40}).encode())


def http_framing_seeds():
    # First byte: the body limit (index into kLimits of http_framing_fuzz.cc;
    # 5 is 1 MiB). Valid requests, then the shapes of smuggling attempts.
    chunked = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n"
    requests = {
        "get": "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        "post_length": "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Content-Length: 17\r\n\r\n{\"inputs\": \"hi\"}",
        "post_chunked": "POST /embed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                        chunked + "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "http10_keep_alive": "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "form": "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: "
                "application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b",
        "bare_lf": "\r\nPOST / HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}",
        "cl_te": "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "te_cl": "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                 "Content-Length: 0\r\n\r\n",
        "two_lengths": "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                       "Content-Length: 5, 6\r\n\r\nhello",
        "te_obs_fold": "POST / HTTP/1.1\r\nHost: x\r\nX: y\r\n Transfer-Encoding: chunked\r\n\r\n",
        "te_list": "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : gzip, xchunked\r\n\r\n",
        "bad_line": "GET  / HTTP/2.0 x\r\nHost: x\r\n\r\n",
        "chunk_overflow": "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "ffffffffffffffffff\r\nhelloX\r\n0\r\n\r\n",
    }
    for name, request in requests.items():
        put("http_framing", name + ".http", bytes([5]) + request.encode())
    put("http_framing", "small_limit.http", bytes([3]) + requests["post_chunked"].encode())


def shape_policy_seeds():
    shapes = [
        "B=2,S=128,H=8,D=64",
        "B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal",
        "B=1,Sq=1,Sk=4096,Hq=32,Hkv=8,D=128,Dv=64,dtype=f16,lse=1;B=3,S=17,H=2,D=8,varlen=1",
        "B=1,S=64,H=4,D=32,mask=window,window=16:0,layout=bhsd,bias=1,softcap=30",
    ]
    for i, s in enumerate(shapes):
        put("shape_policy", f"shape{i}.txt", b"\x00" + s.encode())
    policies = ["auto", "cpu.flash,reference", "prefer:cpu.flash, cpu.gemm; deny:reference",
                "only:cpu.gemm;allow:experimental"]
    for i, p in enumerate(policies):
        put("shape_policy", f"policy{i}.txt", b"\x01" + p.encode())


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "..", "models", "all-MiniLM-L6-v2")
    npy_seeds()
    safetensors_seeds()
    tokenizer_seeds(model_dir)
    tokenizer_model_seeds()
    model_config_seeds(model_dir)
    document_reader_seeds()
    request_parse_seeds()
    http_framing_seeds()
    shape_policy_seeds()


if __name__ == "__main__":
    main()
