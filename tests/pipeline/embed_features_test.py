"""`tessera embed`'s row options (issue 32) through the real binary.

Usage: embed_features_test.py TESSERA_BINARY SOURCE_DIR
--dimensions (the first N values re-normalised, --doc-embedding the mean of
those), --prompt (rows equal to those of the prefixed text), --prompt-name
(data/models/tiny-qwen3's prompts), --precision with --quantization-ranges
(.npy dtype and shape, JSONL integers, numpy's quantize_embeddings
arithmetic), the usage errors (exit 2, nothing written), --resume refusing
a change of any of them, and sentence-transformers itself:
data/features/expected.json (tools/make_feature_oracle.py).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

TESSERA = None
SOURCE = None
DIM = 384
PROMPT = "query: "
MIN_COSINE = 0.9999
# A float this close to 0 may take either sign in another implementation.
SIGN_TOLERANCE = 1e-5
PRECISIONS = ("int8", "uint8", "binary", "ubinary")


def run_tessera(args, **kw):
    env = dict(os.environ)
    for name in ("TESSERA_MODEL", "TESSERA_ATTENTION", "TESSERA_WEIGHTS"):
        env.pop(name, None)
    return subprocess.run([TESSERA] + args, capture_output=True, text=True, env=env, timeout=600,
                          **kw)


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def reference_quantize(rows, precision, ranges=None):
    """sentence-transformers 6.3's quantize_embeddings (float32 arithmetic)."""
    rows = np.asarray(rows, dtype=np.float32)
    if precision in ("binary", "ubinary"):
        packed = np.packbits(rows > 0, axis=-1)
        return (packed - 128).astype(np.int8) if precision == "binary" else packed
    starts = ranges[0, :]
    steps = (ranges[1, :] - starts) / 255
    steps = np.where(steps == 0, 1, steps)
    q = np.clip(np.floor((rows - starts) / steps), 0, 255)
    return (q - 128).astype(np.int8) if precision == "int8" else q.astype(np.uint8)


def ranges_of(rows):
    rows = np.asarray(rows, dtype=np.float32)
    return np.vstack((rows.min(axis=0), rows.max(axis=0))).astype(np.float32)


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def cosine(a, b):
    return float(unit(a) @ unit(b))


class FeatureRun(unittest.TestCase):
    """A temporary directory and the oracle's texts (the empty one left out:
    tessera skips an empty document) as JSONL."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(SOURCE, "data/features/expected.json"), encoding="utf-8") as f:
            cls.oracle = json.load(f)
        cls.texts = [t for t in cls.oracle["texts"] if t["text"]]
        cls.inputs = cls.path("texts.jsonl")
        with open(cls.inputs, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(t) + "\n" for t in cls.texts)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.tmp.name, name)

    def embed(self, name, *args, inputs=None):
        """Runs tessera embed INPUTS -o NAME ARGS; returns (process, output path)."""
        out = self.path(name)
        proc = run_tessera(["embed", inputs or self.inputs, "-o", out, *args])
        return proc, out

    def embed_ok(self, name, *args, inputs=None):
        proc, out = self.embed(name, *args, inputs=inputs)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc, out

    def assert_quantized(self, got, want, floats, precision):
        """Equal but for float noise: a binary bit only where |x| < 1e-5, an
        int8 / uint8 value by one bucket."""
        self.assertEqual(got.dtype, want.dtype)
        self.assertEqual(got.shape, want.shape)
        if precision.endswith("binary"):
            flipped = np.unpackbits(got.view(np.uint8), axis=-1) != np.unpackbits(
                want.view(np.uint8), axis=-1)
            dims = floats.shape[1]
            self.assertFalse(flipped[:, dims:].any())
            near_zero = np.abs(floats) < SIGN_TOLERANCE
            self.assertFalse((flipped[:, :dims] & ~near_zero).any(),
                             "a sign bit differs where the float is not ~0")
        else:
            diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
            self.assertLessEqual(int(diff.max()), 1)

    def save_ranges(self, name, ranges):
        path = self.path(name)
        np.save(path, np.asarray(ranges, dtype=np.float32))
        return path


class EmbedFeatures(FeatureRun):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        out = cls.path("full.jsonl")
        proc = run_tessera(["embed", cls.inputs, "-o", out, "--summary-json",
                            cls.path("full.summary.json")])
        assert proc.returncode == 0, proc.stderr
        cls.full_stderr = proc.stderr
        cls.full = load_jsonl(out)
        cls.full_rows = np.array([r["embedding"] for r in cls.full], dtype=np.float32)
        cls.ranges = cls.save_ranges_of(cls.full_rows, "full-ranges.npy")

    @classmethod
    def save_ranges_of(cls, rows, name):
        path = cls.path(name)
        np.save(path, ranges_of(rows))
        return path

    def test_plain_runs_say_so(self):
        self.assertIn("rows: float32, 384 dimensions, no prompt", self.full_stderr)
        with open(self.path("full.summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
        self.assertEqual((summary["precision"], summary["dimensions"], summary["prompt"],
                          summary["prompt_name"], summary["quantization_ranges"]),
                         ("float32", DIM, None, None, None))
        self.assertNotIn("precision", self.full[0])

    def test_dimensions_are_the_first_values_renormalised(self):
        self.assertGreater(max(r["chunk"] for r in self.full), 0, "a document of several chunks")
        proc, out = self.embed_ok("dims.jsonl", "--dimensions", "100")
        self.assertIn("rows: float32, 100 of 384 dimensions, no prompt", proc.stderr)
        rows = load_jsonl(out)
        self.assertEqual(len(rows), len(self.full))
        for mine, full in zip(rows, self.full):
            self.assertEqual((mine["id"], mine["chunk"], mine["offsets"]),
                             (full["id"], full["chunk"], full["offsets"]))
            self.assertEqual(len(mine["embedding"]), 100)
            np.testing.assert_allclose(mine["embedding"], unit(full["embedding"][:100]),
                                       atol=1e-6)
        # --doc-embedding: the mean of the shortened rows, re-normalised.
        _, out = self.embed_ok("dims-docs.jsonl", "--dimensions", "100", "--doc-embedding")
        shortened = {}
        for r in self.full:
            shortened.setdefault(r["id"], []).append(unit(r["embedding"][:100]))
        docs = load_jsonl(out)
        self.assertEqual([d["id"] for d in docs], list(shortened))
        for d in docs:
            np.testing.assert_allclose(d["embedding"], unit(np.mean(shortened[d["id"]], axis=0)),
                                       atol=1e-6)

    def test_prompt_rows_are_the_rows_of_the_prefixed_text(self):
        one_chunk = {r["id"] for r in self.full} - {r["id"] for r in self.full if r["chunk"] > 0}
        self.assertGreaterEqual(len(one_chunk), 8)
        prefixed = self.path("prefixed.jsonl")
        with open(prefixed, "w", encoding="utf-8") as f:
            for t in self.texts:
                if t["id"] in one_chunk:
                    f.write(json.dumps({"id": t["id"], "text": PROMPT + t["text"]}) + "\n")
        _, out = self.embed_ok("prefixed-rows.jsonl", inputs=prefixed)
        want = {r["id"]: r["embedding"] for r in load_jsonl(out)}
        summary = self.path("prompt.summary.json")
        proc, out = self.embed_ok("prompt.jsonl", "--prompt", PROMPT, "--summary-json", summary)
        self.assertIn('prompt --prompt: "query: "', proc.stderr)
        with open(summary, encoding="utf-8") as f:
            self.assertEqual(json.load(f)["prompt"], PROMPT)
        full_offsets = {(r["id"], r["chunk"]): r["offsets"] for r in self.full}
        for row in load_jsonl(out):
            if row["id"] not in one_chunk:
                continue
            # Offsets still point into the document, not the prompt.
            self.assertEqual(row["offsets"], full_offsets[(row["id"], 0)])
            np.testing.assert_allclose(row["embedding"], want[row["id"]], atol=1e-6)

    def test_prompt_names_of_qwen3(self):
        model = os.path.join(SOURCE, "data/models/tiny-qwen3")
        summary = self.path("qwen.summary.json")
        proc, out = self.embed_ok("qwen-query.jsonl", "--model", model, "--prompt-name", "query",
                                  "--summary-json", summary)
        self.assertIn("prompt --prompt-name query: \"Instruct: Given a web search", proc.stderr)
        with open(summary, encoding="utf-8") as f:
            s = json.load(f)
        self.assertEqual(s["prompt_name"], "query")
        self.assertTrue(s["prompt"].endswith("\nQuery:"), s["prompt"])
        by_name = load_jsonl(out)
        _, out = self.embed_ok("qwen-text.jsonl", "--model", model, "--prompt", s["prompt"])
        self.assertEqual(load_jsonl(out), by_name)
        _, out = self.embed_ok("qwen-none.jsonl", "--model", model)
        plain = load_jsonl(out)
        self.assertEqual(len(plain), len(by_name))
        self.assertLess(cosine(plain[0]["embedding"], by_name[0]["embedding"]), 0.9999)
        # A default_prompt_name applies with neither flag; --prompt '' turns it off.
        with_default = self.path("qwen-default")
        shutil.copytree(model, with_default)
        config = os.path.join(with_default, "config_sentence_transformers.json")
        with open(config, encoding="utf-8") as f:
            st = json.load(f)
        st["default_prompt_name"] = "query"
        with open(config, "w", encoding="utf-8") as f:
            json.dump(st, f)
        proc, out = self.embed_ok("qwen-default.jsonl", "--model", with_default)
        self.assertIn("prompt default_prompt_name query: ", proc.stderr)
        self.assertEqual(load_jsonl(out), by_name)
        _, out = self.embed_ok("qwen-default-off.jsonl", "--model", with_default, "--prompt", "")
        self.assertEqual(load_jsonl(out), plain)
        # Unknown names are refused listing the model's.
        proc, out = self.embed("bad-name.jsonl", "--model", model, "--prompt-name", "passage")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('--prompt-name = "passage"', proc.stderr)
        self.assertIn("its prompts: document, query", proc.stderr)
        self.assertFalse(os.path.exists(out))
        # As in sentence-transformers 6.3 every model has "query" and
        # "document", empty unless its config sets them: on the default model
        # they embed without a prompt.
        summary = self.path("minilm-query.summary.json")
        proc, out = self.embed_ok("minilm-query.jsonl", "--prompt-name", "query",
                                  "--summary-json", summary)
        self.assertIn("no prompt", proc.stderr)
        self.assertEqual(load_jsonl(out), self.full)
        with open(summary, encoding="utf-8") as f:
            s = json.load(f)
        self.assertEqual((s["prompt_name"], s["prompt"]), ("query", None))

    def test_npy_and_jsonl_of_each_precision(self):
        for precision in PRECISIONS:
            with self.subTest(precision=precision):
                extra = ["--quantization-ranges", self.ranges] if "int8" in precision else []
                proc, npy = self.embed_ok(precision + ".npy", "--precision", precision, *extra)
                self.assertIn("rows: " + precision, proc.stderr)
                matrix = np.load(npy)
                signed = precision in ("int8", "binary")
                self.assertEqual(matrix.dtype, np.int8 if signed else np.uint8)
                width = DIM if "int8" in precision else DIM // 8
                self.assertEqual(matrix.shape, (len(self.full), width))
                index = load_jsonl(self.path(precision + ".index.jsonl"))
                self.assertEqual([(e["id"], e["chunk"], e["row"]) for e in index],
                                 [(r["id"], r["chunk"], i) for i, r in enumerate(self.full)])
                want = reference_quantize(self.full_rows, precision, np.load(self.ranges))
                self.assert_quantized(matrix, want, self.full_rows, precision)
                _, jsonl = self.embed_ok(precision + ".jsonl", "--precision", precision, *extra)
                rows = load_jsonl(jsonl)
                for row, values in zip(rows, matrix):
                    self.assertEqual(set(row), {"id", "chunk", "offsets", "precision",
                                                "embedding"})
                    self.assertEqual(row["precision"], precision)
                    self.assertTrue(all(isinstance(v, int) for v in row["embedding"]))
                    self.assertEqual(row["embedding"], values.tolist())

    def test_quantized_document_rows_are_the_mean_then_quantized(self):
        _, out = self.embed_ok("docs-bits.jsonl", "--doc-embedding", "--dimensions", "64",
                               "--precision", "ubinary")
        shortened = {}
        for r in self.full:
            shortened.setdefault(r["id"], []).append(unit(r["embedding"][:64]))
        for d in load_jsonl(out):
            self.assertEqual(d["precision"], "ubinary")
            self.assertEqual(len(d["embedding"]), 8)
            mean = np.mean(shortened[d["id"]], axis=0, keepdims=True).astype(np.float32)
            self.assert_quantized(np.array([d["embedding"]], dtype=np.uint8),
                                  reference_quantize(mean, "ubinary"), mean, "ubinary")

    def test_usage_errors_exit_2_and_write_nothing(self):
        wrong_dims = self.save_ranges("ranges-100.npy", np.zeros((2, 100)))
        cases = [
            (["--precision", "int8"],
             ["--precision int8 needs --quantization-ranges FILE.npy", "np.vstack((e.min(0)",
              "tessera.quantization_ranges"]),
            (["--precision", "uint8"], ["--precision uint8 needs --quantization-ranges"]),
            (["--precision", "int4"], ['--precision = "int4" is not a precision',
                                       "float32, int8, uint8, binary, ubinary"]),
            (["--precision", "binary", "--quantization-ranges", self.ranges],
             ["only --precision int8 and uint8 use ranges"]),
            (["--precision", "int8", "--quantization-ranges", wrong_dims],
             ["ranges for 100 dimensions, but the rows have 384"]),
            (["--precision", "int8", "--quantization-ranges", self.path("missing.npy")],
             ["--quantization-ranges", "missing.npy"]),
            (["--dimensions", "0"], ["--dimensions = 0"]),
            (["--dimensions", "385"], ["--dimensions = 385: must be in [1, 384]"]),
            (["--dimensions", "12x"], ['--dimensions = "12x": not a whole number']),
            (["--prompt", "a", "--prompt-name", "b"], ["give one"]),
            (["--sparse", "--precision", "binary"], ["--sparse"]),
        ]
        with tempfile.TemporaryDirectory() as d:
            for args, needles in cases:
                with self.subTest(args=args):
                    for out in ("rows.jsonl", "rows.npy"):
                        proc = run_tessera(["embed", self.inputs, "-o", os.path.join(d, out),
                                            *args])
                        self.assertEqual(proc.returncode, 2, proc.stderr)
                        for needle in needles:
                            self.assertIn(needle, proc.stderr)
                        self.assertEqual(os.listdir(d), [])

    def test_help_documents_every_flag(self):
        text = run_tessera(["embed", "--help"]).stdout
        for flag in ("--prompt-name", "--prompt ", "--dimensions", "--precision",
                     "--quantization-ranges"):
            self.assertIn(flag, text)

    def test_resume_refuses_other_row_options(self):
        d = tempfile.mkdtemp(dir=self.tmp.name)
        out = os.path.join(d, "rows.npy")
        job = ["embed", "data/sample", "-o", out, "--resume", "--dimensions", "64",
               "--precision", "binary", "--prompt", PROMPT]
        # Room for the weights but not for a batch: the job stops (exit 1)
        # after its checkpoint is written, as a killed one would.
        proc = run_tessera(["--memory-budget", "100M", *job, "--batch-tokens", "8192"],
                           cwd=SOURCE)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertTrue(os.path.exists(out + ".checkpoint.json"))
        changes = [
            (["--dimensions", "128"], "rows.dimensions: is 128, the checkpoint has 64"),
            (["--precision", "ubinary"], 'rows.precision: is "ubinary", the checkpoint has'),
            (["--prompt", "passage: "], 'rows.prompt: is "passage: ", the checkpoint has'),
        ]
        for change, needle in changes:
            with self.subTest(change=change):
                changed = list(job)
                i = changed.index(change[0])
                changed[i + 1] = change[1]
                proc = run_tessera(changed, cwd=SOURCE)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("is for a different job", proc.stderr)
                self.assertIn(needle, proc.stderr)
        proc = run_tessera(job[:-2], cwd=SOURCE)  # no prompt now
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('rows.prompt: none now, the checkpoint has "query: "', proc.stderr)
        ranges = self.save_ranges("resume-ranges.npy", np.zeros((2, 64)))
        int8 = list(job)
        int8[int8.index("binary")] = "int8"
        proc = run_tessera(int8 + ["--quantization-ranges", ranges], cwd=SOURCE)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("rows.precision", proc.stderr)
        proc = run_tessera(job, cwd=SOURCE)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("resuming", proc.stderr)
        matrix = np.load(out)
        self.assertEqual((matrix.dtype, matrix.shape[1]), (np.int8, 8))


class SentenceTransformersOracle(FeatureRun):
    """tessera embed against data/features/expected.json: the rows of the
    documents that are one chunk (sentence-transformers truncates the long
    one; tessera windows it)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        proc = run_tessera(["embed", cls.inputs, "-o", cls.path("plain.jsonl")])
        assert proc.returncode == 0, proc.stderr
        rows = load_jsonl(cls.path("plain.jsonl"))
        several = {r["id"] for r in rows if r["chunk"] > 0}
        cls.index = {t["id"]: i for i, t in enumerate(cls.oracle["texts"])}
        cls.one_chunk = [t["id"] for t in cls.texts if t["id"] not in several]
        assert len(cls.one_chunk) == 8, cls.one_chunk
        cls.e = np.array(cls.oracle["minilm"]["float32"]["rows"], dtype=np.float32)

    def first_rows(self, path, key="embedding"):
        return {r["id"]: r[key] for r in load_jsonl(path) if r.get("chunk", 0) == 0}

    def expect_cosines(self, path, expected, ids, label):
        mine = self.first_rows(path)
        for key in ids:
            want = expected[self.index[key]]
            self.assertEqual(len(mine[key]), len(want), label)
            self.assertGreaterEqual(cosine(mine[key], want), MIN_COSINE, "%s %s" % (label, key))

    def case(self, name):
        return next(c for c in self.oracle["quantization"]["cases"] if c["name"] == name)

    def test_quantized_rows_match(self):
        calibration = np.array(self.oracle["quantization"]["calibration"]["ranges"]["rows"],
                               dtype=np.float32)
        runs = [("int8", "int8", ranges_of(self.e)), ("uint8", "uint8", ranges_of(self.e)),
                ("int8", "int8_ranges", calibration), ("uint8", "uint8_ranges", calibration),
                ("binary", "binary", None), ("ubinary", "ubinary", None)]
        for precision, name, ranges in runs:
            with self.subTest(case=name):
                args = ["--precision", precision]
                if ranges is not None:
                    args += ["--quantization-ranges", self.save_ranges(name + ".npy", ranges)]
                _, out = self.embed_ok("oracle-" + name + ".jsonl", *args)
                mine = self.first_rows(out)
                case = self.case(name)
                rows = [self.index[k] for k in self.one_chunk]
                got = np.array([mine[k] for k in self.one_chunk], dtype=case["dtype"])
                want = np.array(case["values"], dtype=case["dtype"])[rows]
                self.assert_quantized(got, want, self.e[rows], precision)

    def test_dimensions_match_truncate_dim(self):
        for case in self.oracle["minilm"]["truncate_dim"]:
            if not case["normalize_embeddings"]:
                continue  # sentence-transformers does not renormalise then; tessera does
            with self.subTest(dim=case["dim"]):
                _, out = self.embed_ok("oracle-dims-%d.jsonl" % case["dim"], "--dimensions",
                                       str(case["dim"]))
                self.expect_cosines(out, case["rows"], self.one_chunk, "dim %d" % case["dim"])
                for row in self.first_rows(out).values():
                    self.assertAlmostEqual(float(np.linalg.norm(row)), 1.0, delta=1e-5)

    def test_prompt_matches(self):
        prompt = self.oracle["minilm"]["prompt"]
        _, out = self.embed_ok("oracle-prompt.jsonl", "--prompt", prompt["prompt"])
        self.expect_cosines(out, prompt["rows"], self.one_chunk, "prompt")

    def test_qwen3_prompt_names_match(self):
        model = os.path.join(SOURCE, self.oracle["tiny_qwen3"]["model"])
        qwen = self.oracle["tiny_qwen3"]
        every = [t["id"] for t in self.texts]  # one chunk each: 8,192 tokens
        for name, args, expected in (
                ("query", ["--prompt-name", "query"], qwen["encode_query"]["rows"]),
                ("document", ["--prompt-name", "document"], qwen["encode_document"]["rows"]),
                ("query-8", ["--prompt-name", "query", "--dimensions", "8"],
                 qwen["query_truncate_dim_8"]["rows"])):
            with self.subTest(case=name):
                _, out = self.embed_ok("oracle-qwen-%s.jsonl" % name, "--model", model, *args)
                self.expect_cosines(out, expected, every, "qwen3 " + name)


if __name__ == "__main__":
    TESSERA, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
