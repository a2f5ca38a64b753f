"""Hostile JSON through the real binary: the CLI and the server answer with a
clear error naming the file/line/field and keep running; nothing crashes.

Usage: hostile_json_test.py TESSERA_BINARY MODEL_DIR

The classes of issue 19 this guards (each was a crash before):
- a deeply nested value whose error message rendered it whole (recursive
  json::dump overflowed the stack): a ~600 KB request body to `tessera serve`,
  a crafted modules.json / tokenizer.json / safetensors header;
- a number literal outside the double range (1e400), which nlohmann reports
  as out_of_range, not parse_error: one JSONL line aborted a whole
  `tessera embed` job (exit 134, temp file left behind), and the server
  answered 500 instead of 400;
- a huge string (a tensor name) copied whole into an error message.
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

BINARY = ""
MODEL = ""
DEEP = 300_000  # levels: ~600 KB of brackets, under serve's default payload limit
MAX_MESSAGE = 4096  # an error message about a hostile value stays this short


def run(args, **kw):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300, **kw)


def deep_array(levels):
    return "[" * levels + "]" * levels


class EmbedJsonlTest(unittest.TestCase):
    def test_bad_lines_are_reported_and_the_job_goes_on(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "docs.jsonl")
            lines = [
                '{"id": "first", "text": "A good document."}',
                '{"id": "range", "text": "x", "weight": 1e400}',
                deep_array(DEEP),
                '{"id": ' + deep_array(DEEP) + ', "text": "y"}',
                '{"id": "last", "text": "Another good one."}',
            ]
            with open(src, "w") as f:
                f.write("\n".join(lines) + "\n")
            out_dir = os.path.join(d, "out")
            os.mkdir(out_dir)
            out = os.path.join(out_dir, "emb.jsonl")
            proc = run(["--threads", "1", "embed", src, "-o", out, "--model", MODEL])
            # 3: finished, some documents skipped (embed --help, "Exit codes").
            self.assertEqual(proc.returncode, 3, proc.stderr[-2000:])
            self.assertIn("docs.jsonl:2: malformed JSON", proc.stderr)
            self.assertIn("out of range", proc.stderr)
            self.assertIn("docs.jsonl:3: malformed JSON", proc.stderr)
            self.assertIn("docs.jsonl:4: malformed JSON", proc.stderr)
            self.assertIn("nests deeper than", proc.stderr)
            self.assertLess(len(proc.stderr), 20 * MAX_MESSAGE)
            with open(out) as f:
                ids = [json.loads(line)["id"] for line in f]
            self.assertEqual(ids, ["first", "last"])
            self.assertEqual(os.listdir(out_dir), ["emb.jsonl"])  # no temp file left


class ModelFilesTest(unittest.TestCase):
    """One crafted file at a time in a copy of the default model."""

    def model_with(self, d, name, content):
        model = os.path.join(d, "model")
        shutil.copytree(MODEL, model, symlinks=True,
                        ignore=shutil.ignore_patterns("model.safetensors"))
        os.symlink(os.path.realpath(os.path.join(MODEL, "model.safetensors")),
                   os.path.join(model, "model.safetensors"))
        path = os.path.join(model, name)
        if os.path.lexists(path):
            os.remove(path)
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        return model

    def expect_load_error(self, name, content, *needles):
        with tempfile.TemporaryDirectory() as d:
            model = self.model_with(d, name, content)
            proc = run(["embed", "-", "--model", model], input="some text\n")
            self.assertEqual(proc.returncode, 2, f"{name}: {proc.stderr[-2000:]}")
            for needle in (name.split("/")[-1], *needles):
                self.assertIn(needle, proc.stderr)
            self.assertLess(len(proc.stderr), MAX_MESSAGE, proc.stderr[:500])

    def test_config_json(self):
        with open(os.path.join(MODEL, "config.json")) as f:
            config = f.read()
        self.expect_load_error("config.json", config.replace('"layer_norm_eps": 1e-12',
                                                             '"layer_norm_eps": 1e400'),
                               "out of range")
        self.assertIn('"layer_norm_eps": 1e-12', config)  # the replacement above took
        self.expect_load_error("config.json", '{"model_type": ' + deep_array(DEEP) + "}",
                               "nests deeper than")
        self.expect_load_error("config.json", '{"model_type": "' + "b" * 1_000_000 + '"}',
                               "is not supported")

    def test_modules_json(self):
        self.expect_load_error("modules.json", "[" + deep_array(DEEP) + "]", "nests deeper than")
        # 100 levels pass the nesting limit: the message renders the module bounded.
        self.expect_load_error("modules.json", '[{"type": "x", "k": ' + deep_array(100) + "}]",
                               "is not supported")
        self.expect_load_error("modules.json", '[{"idx": 1e400}]', "out of range")

    def test_pooling_and_sentence_bert_config(self):
        self.expect_load_error("1_Pooling/config.json",
                               '{"word_embedding_dimension": 1e400}', "out of range")
        self.expect_load_error("sentence_bert_config.json", deep_array(DEEP), "nests deeper than")

    def test_tokenizer_json(self):
        self.expect_load_error("tokenizer.json", '{"model": ' + deep_array(DEEP) + "}",
                               "nests deeper than")
        self.expect_load_error("tokenizer.json", '{"version": 1e400}', "out of range")
        self.expect_load_error("tokenizer.json",
                               '{"model": {"type": ' + deep_array(100) + "}}", "model.type")

    def test_safetensors_header(self):
        def safetensors(header):
            raw = header.encode()
            return struct.pack("<Q", len(raw)) + raw + b"\0" * 16

        self.expect_load_error("model.safetensors", safetensors(deep_array(DEEP)),
                               "nests deeper than")
        self.expect_load_error(
            "model.safetensors",
            safetensors('{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 1e400]}}'),
            "out of range")
        self.expect_load_error(
            "model.safetensors",
            safetensors('{"' + "n" * 1_000_000 + '": {"dtype": "F31", "shape": [1], '
                        '"data_offsets": [0, 4]}}'), "unknown dtype")
        self.expect_load_error(
            "model.safetensors",
            safetensors('{"w": {"dtype": "F32", "shape": ' + deep_array(100) +
                        ', "data_offsets": [0, 4]}}'), "must hold non-negative integers")


class ServeTest(unittest.TestCase):
    def test_hostile_bodies_get_400_and_the_server_lives(self):
        proc = subprocess.Popen([BINARY, "--threads", "1", "serve", "--port", "0", "--model",
                                 MODEL], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            line = proc.stdout.readline()
            self.assertIn("listening on http://", line, proc.stderr.read() if not line else "")
            url = line.split("listening on ")[1].split()[0]

            def post(path, body):
                req = urllib.request.Request(url + path, data=body.encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=120) as r:
                        return r.status, r.read().decode()
                except urllib.error.HTTPError as e:
                    return e.code, e.read().decode()

            cases = [
                ("/embed", '{"inputs": ' + deep_array(DEEP) + "}", "nests deeper than"),
                ("/embed", '{"inputs": ["a"], "normalize": 1e400}', "out of range"),
                ("/embed", '{"inputs": "a", "truncate": -1e999}', "out of range"),
                ("/v1/embeddings", '{"input": ' + deep_array(DEEP) + "}", "nests deeper than"),
                ("/v1/embeddings", '{"input": "a", "dimensions": 1e400}', "out of range"),
                ("/tokenize", '{"inputs": ' + deep_array(DEEP) + "}", "nests deeper than"),
                # Under the nesting limit: the "must be a string" message is bounded.
                ("/embed", '{"inputs": [' + deep_array(100) + "]}", "inputs[0] must be a string"),
            ]
            for path, body, needle in cases:
                with self.subTest(path=path, body=body[:40]):
                    status, text = post(path, body)
                    self.assertEqual(status, 400 if "string" not in needle else 422, text[:300])
                    self.assertIn(needle, text)
                    self.assertLess(len(text), MAX_MESSAGE)
                    self.assertIsNone(proc.poll(), "the server died")
            status, text = post("/embed", '{"inputs": "still alive"}')
            self.assertEqual(status, 200, text[:300])
            self.assertEqual(len(json.loads(text)[0]), 384)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0)


if __name__ == "__main__":
    BINARY, MODEL = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
