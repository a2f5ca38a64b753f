"""`tessera embed --resume` end to end: a real job killed with SIGKILL and continued.

Usage: embed_resume_test.py TESSERA_BINARY SOURCE_DIR
On a generated corpus (a few seconds of work on one thread) an uninterrupted
run is the reference; the same job started with --resume is killed (-9) twice
once its checkpoint shows committed rows, a torn tail is appended to its
partial file, and it is resumed to the end. The rows must be the same, in the
same order, with the same ids, chunks and offsets. Embeddings are compared
with a tolerance (cosine >= 0.99999): after a resume the rounds, and so the
batches, start at a different document, and a GEMM's rounding may depend on
how many rows it is given; the test reports how many rows are bitwise equal.
Also: a changed input or option is refused naming the field, a finished job is
a no-op, stdin and stdout are refused, and the .npy output resumes the same.
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

TESSERA = None
MIN_COSINE = 0.99999
# Small rounds, so that the job commits often and a kill loses little.
COMMON = ["--round-bytes", "2K"]
WORDS = ("resume checkpoint partial row round kill signal document chunk token window batch "
         "embedding attention model output input corpus offset byte fsync rename torn tail "
         "the of and a to in is it that was for on are with as by this be at from").split()


def run(args, **kw):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TESSERA_MODEL", "TESSERA_ATTENTION", "TESSERA_WEIGHTS")}
    return subprocess.run([TESSERA, "--threads", "1"] + args, capture_output=True, text=True,
                          env=env, timeout=300, **kw)


def start(args):
    return subprocess.Popen([TESSERA, "--threads", "1"] + args, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def write_corpus(path, documents, seed):
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for d in range(documents):
            # Mostly one window, some long ones (several windows), one empty.
            n = rng.choice([10, 30, 60, 100, 300]) if d != 7 else 0
            text = " ".join(rng.choice(WORDS) for _ in range(n)) + (" café" if d % 5 == 0 else "")
            f.write(json.dumps({"id": "doc-%d" % d if d % 3 else d, "text": text.strip()}) + "\n")


def committed_rows(checkpoint):
    try:
        with open(checkpoint, encoding="utf-8") as f:
            return json.load(f)["done"]["rows"]
    except (OSError, ValueError, KeyError):
        return 0  # not there yet, or being replaced


def kill_when_committed(args, checkpoint, at_least, timeout=120):
    """Starts `tessera embed ARGS`, kills it with SIGKILL once the checkpoint
    records more than `at_least` rows; returns the rows committed then."""
    proc = start(args)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            rows = committed_rows(checkpoint)
            if rows > at_least:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                return rows
            if proc.poll() is not None:
                raise AssertionError("the job ended (exit %d) before it could be killed: %s"
                                     % (proc.returncode, proc.stderr.read()))
            time.sleep(0.02)
        raise AssertionError("no rows committed in %d s" % timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def key(row):
    """What places a row: its document, chunk and offsets."""
    return row["id"], row["chunk"], row["offsets"]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class EmbedResume(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.corpus = os.path.join(cls.tmp.name, "corpus.jsonl")
        write_corpus(cls.corpus, 40, seed=19)
        cls.reference = os.path.join(cls.tmp.name, "reference.jsonl")
        t = time.monotonic()
        cls.ref_proc = run(["embed", cls.corpus, "-o", cls.reference] + COMMON)
        cls.ref_seconds = time.monotonic() - t
        cls.ref_rows = read_jsonl(cls.reference) if cls.ref_proc.returncode == 3 else []

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assert_same_rows(self, rows, label):
        ref = self.ref_rows
        self.assertEqual(len(rows), len(ref), label)
        for a, b in zip(rows, ref):
            self.assertEqual(key(a), key(b), label)
        mine = np.array([r["embedding"] for r in rows], dtype=np.float64)
        theirs = np.array([r["embedding"] for r in ref], dtype=np.float64)
        self.assert_close(mine, theirs, label)

    def assert_close(self, mine, theirs, label):
        cos = np.sum(mine * theirs, axis=1) / np.linalg.norm(mine, axis=1) / np.linalg.norm(
            theirs, axis=1)
        bitwise = int(np.sum(np.all(mine == theirs, axis=1)))
        print("%s: %d rows, %d bitwise equal, worst cosine %.9f, max |diff| %.2e"
              % (label, len(mine), bitwise, cos.min(), np.abs(mine - theirs).max()),
              file=sys.stderr)
        self.assertGreaterEqual(float(cos.min()), MIN_COSINE, label)

    def leftovers(self, directory):
        return sorted(n for n in os.listdir(directory) if ".partial" in n or ".checkpoint" in n
                      or ".tmp" in n)

    def test_killed_twice_torn_and_resumed_equals_an_uninterrupted_run(self):
        self.assertEqual(self.ref_proc.returncode, 3, self.ref_proc.stderr)  # doc 7 is empty
        print("uninterrupted run: %.2f s, %d rows" % (self.ref_seconds, len(self.ref_rows)),
              file=sys.stderr)
        d = os.path.join(self.tmp.name, "killed")
        os.mkdir(d)
        out = os.path.join(d, "emb.jsonl")
        checkpoint = out + ".checkpoint.json"
        args = ["embed", self.corpus, "-o", out, "--resume"] + COMMON
        first = kill_when_committed(args, checkpoint, 0)
        self.assertFalse(os.path.exists(out), "the output appears only at the end")
        second = kill_when_committed(args, checkpoint, first)
        self.assertLess(second, len(self.ref_rows), "killed before the end")
        # A kill in the middle of writing a round leaves part of a row.
        with open(out + ".partial", "a", encoding="utf-8") as f:
            f.write('{"id": "doc-99", "chunk": 0, "offsets": [0, 1')
        t = time.monotonic()
        proc = run(args)
        resume_seconds = time.monotonic() - t
        self.assertEqual(proc.returncode, 3, proc.stderr)  # the empty document, from run 1
        skipped_line = [l for l in proc.stderr.splitlines() if l.startswith("tessera: resuming")]
        self.assertEqual(len(skipped_line), 1, proc.stderr)
        self.assertIn("rows written", skipped_line[0])
        self.assertIn("the whole job: 39 documents (1 skipped), %d rows" % len(self.ref_rows),
                      proc.stderr)
        print("killed at %d and %d committed rows; resume ran %.2f s" % (first, second,
                                                                         resume_seconds),
              file=sys.stderr)
        self.assertEqual(self.leftovers(d), [])
        self.assert_same_rows(read_jsonl(out), "jsonl resumed after two kills")

        # Once finished, --resume has nothing to do and changes nothing.
        before = os.stat(out)
        proc = run(args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("nothing to resume", proc.stderr)
        self.assertEqual(os.stat(out).st_mtime_ns, before.st_mtime_ns)
        self.assertEqual(self.leftovers(d), [])

    def test_npy_output_resumes(self):
        d = os.path.join(self.tmp.name, "npy")
        os.mkdir(d)
        out = os.path.join(d, "emb.npy")
        args = ["embed", self.corpus, "-o", out, "--resume"] + COMMON
        kill_when_committed(args, out + ".checkpoint.json", 0)
        # The partial .npy's header counts the committed rows: it loads as is.
        self.assertGreater(np.load(out + ".partial").shape[0], 0)
        with open(out + ".partial", "ab") as f:
            f.write(b"\x01" * 100)  # a torn row
        proc = run(args)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertEqual(self.leftovers(d), [])
        index = read_jsonl(os.path.join(d, "emb.index.jsonl"))
        self.assertEqual([e["row"] for e in index], list(range(len(self.ref_rows))))
        for e, r in zip(index, self.ref_rows):
            self.assertEqual(key(e), key(r))
        # JSONL floats are the float32 values' shortest decimal form.
        ref = np.array([r["embedding"] for r in self.ref_rows], dtype=np.float32)
        self.assert_close(np.load(out).astype(np.float64), ref.astype(np.float64),
                          "npy resumed after a kill")

    def test_changed_input_or_options_are_refused(self):
        d = os.path.join(self.tmp.name, "changed")
        os.mkdir(d)
        corpus = os.path.join(d, "corpus.jsonl")
        write_corpus(corpus, 16, seed=19)
        out = os.path.join(d, "emb.jsonl")
        args = ["embed", corpus, "-o", out, "--resume"] + COMMON
        kill_when_committed(args, out + ".checkpoint.json", 0)
        with open(out + ".checkpoint.json", encoding="utf-8") as f:
            saved = f.read()
        proc = run(args + ["--max-tokens", "128"])
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("is for a different job: rows.max_tokens: is 128, the checkpoint has 256",
                      proc.stderr)
        with open(corpus, "a", encoding="utf-8") as f:
            f.write(json.dumps({"id": "late", "text": "added after the kill"}) + "\n")
        proc = run(args)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("is for a different job: inputs[0] (%s).size: is " % corpus, proc.stderr)
        self.assertIn("tessera: InvalidArgument: --resume: cannot continue ", proc.stderr)
        self.assertIn("or start over without it", proc.stderr)
        with open(out + ".checkpoint.json", encoding="utf-8") as f:
            self.assertEqual(f.read(), saved, "a refused resume changes nothing")
        # --batch-tokens and --threads may change (a job killed for memory
        # continues with smaller batches); the input must be restored first.
        write_corpus(corpus, 16, seed=19)
        os.utime(corpus, ns=(json.loads(saved)["job"]["inputs"][0]["mtime_ns"],) * 2)
        proc = run(args + ["--batch-tokens", "1024"])
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn("tessera: resuming", proc.stderr)

    def test_stdin_and_stdout_are_refused(self):
        proc = run(["embed", "-", "-o", os.path.join(self.tmp.name, "x.jsonl"), "--resume"],
                   input="text")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--resume cannot continue stdin ('-')", proc.stderr)
        proc = run(["embed", self.corpus, "--resume"])
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--resume needs an output file (-o FILE)", proc.stderr)
        self.assertIn("--resume", run(["embed", "--help"]).stdout)


if __name__ == "__main__":
    TESSERA = os.path.abspath(sys.argv[1])
    unittest.main(argv=sys.argv[:1], verbosity=2)
