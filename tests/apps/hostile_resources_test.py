"""Resource exhaustion through the real binary (issue 35): each case used to
hang the process or grow it without bound; now each ends, within a timeout,
with a clear message naming the file, the limit or the thread count.

Usage: hostile_resources_test.py TESSERA_BINARY MODEL_DIR

- threads: a worker thread the system cannot start (the pool's constructor
  died with running workers), and --threads past what the machine takes;
- inputs: a FIFO or /dev/zero as an input file, stdin that never ends, a
  file or JSONL line over --max-document-bytes (read whole before);
- model files: a FIFO in place of any model file (open() blocked forever).
Limits are set on the child process only (resource / preexec_fn).
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import unittest

BINARY = ""
MODEL = ""
# A case that hangs fails here instead of blocking the suite.
TIMEOUT_SECONDS = 120
# Address space for a child that reads without bound: the unfixed reader
# fails on allocation here instead of taking the machine's memory.
MAX_ADDRESS_SPACE = 8 << 30
SANITIZED = os.environ.get("TESSERA_TEST_SANITIZED") == "1"
MIB = 1 << 20


def limit_address_space():
    # ASan reserves terabytes of shadow address space: no cap under it.
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (MAX_ADDRESS_SPACE, MAX_ADDRESS_SPACE))


def run(args, stdin=subprocess.DEVNULL, preexec_fn=limit_address_space):
    try:
        return subprocess.run([BINARY, *args], capture_output=True, text=True, errors="replace",
                              stdin=stdin, preexec_fn=preexec_fn, timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{args}: still running after {TIMEOUT_SECONDS} s (a hang)") from e


def embed(inputs, out, *extra, **kw):
    return run(["--threads", "1", "embed", *inputs, "-o", out, "--model", MODEL, *extra], **kw)


def ids(path):
    with open(path) as f:
        return [json.loads(line)["id"] for line in f]


class ThreadsTest(unittest.TestCase):
    @unittest.skipIf(SANITIZED, "ASan needs an unlimited address space")
    def test_threads_the_system_cannot_start_are_a_clear_error(self):
        # Root ignores RLIMIT_NPROC, so the address space is the limit: every
        # thread's stack is RLIMIT_STACK (256 MiB) and 64 of them do not fit in
        # 2 GiB. Before: the pool's constructor threw with workers running
        # (std::terminate), or hung.
        def tight():
            resource.setrlimit(resource.RLIMIT_STACK, (256 * MIB, 256 * MIB))
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

        with tempfile.TemporaryDirectory() as d:
            doc = os.path.join(d, "a.txt")
            with open(doc, "w") as f:
                f.write("one short document")
            out = os.path.join(d, "out.jsonl")
            p = run(["--threads", "64", "embed", doc, "-o", out, "--model", MODEL],
                    preexec_fn=tight)
            self.assertEqual(p.returncode, 2, p.stderr[-2000:])
            self.assertRegex(p.stderr, r"--threads = 64: the system started only \d+ of them")
            self.assertFalse(os.path.exists(out))

    def test_threads_beyond_the_machine_are_refused(self):
        # Before: 100000 threads were started, taking every pid of the machine.
        p = run(["--threads", "100000", "embed", "-", "--model", MODEL])
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])
        self.assertRegex(p.stderr, r"--threads = 100000 is more than \d+")


class InputsTest(unittest.TestCase):
    def test_special_files_are_skipped_before_they_are_read(self):
        with tempfile.TemporaryDirectory() as d:
            good = os.path.join(d, "good.txt")
            with open(good, "w") as f:
                f.write("A good document.")
            fifo = os.path.join(d, "pipe.txt")
            os.mkfifo(fifo)
            out = os.path.join(d, "out.jsonl")
            # Before: open() of the FIFO waited for a writer forever, and
            # /dev/zero was read until memory ran out.
            p = embed([fifo, "/dev/zero", good], out)
            self.assertEqual(p.returncode, 3, p.stderr[-2000:])
            self.assertIn(f"skipped {fifo}: is a FIFO (named pipe), not a regular file", p.stderr)
            self.assertIn("skipped /dev/zero: is a character device, not a regular file",
                          p.stderr)
            self.assertEqual(ids(out), [good])

    def test_endless_stdin_stops_at_the_default_limit(self):
        with tempfile.TemporaryDirectory() as d, open("/dev/zero", "rb") as zero:
            out = os.path.join(d, "out.jsonl")
            p = embed(["-"], out, stdin=zero)
            self.assertEqual(p.returncode, 3, p.stderr[-2000:])
            self.assertIn(f"skipped stdin: is over the limit of {64 * MIB} bytes per document",
                          p.stderr)
            self.assertEqual(ids(out), [])

    def test_documents_and_lines_over_the_limit_are_skipped(self):
        with tempfile.TemporaryDirectory() as d:
            big = os.path.join(d, "big.txt")
            with open(big, "w") as f:
                f.write("word " * (MIB // 4))  # 1.25 MiB
            records = os.path.join(d, "records.jsonl")
            with open(records, "w") as f:
                for i, text in enumerate(["first", "x" * (2 * MIB), "third"]):
                    f.write(json.dumps({"id": i, "text": text}) + "\n")
            small = os.path.join(d, "small.txt")
            with open(small, "w") as f:
                f.write("A small document.")
            out = os.path.join(d, "out.jsonl")
            p = embed([big, records, small], out, "--max-document-bytes", "1M")
            self.assertEqual(p.returncode, 3, p.stderr[-2000:])
            self.assertIn(f"skipped {big}: is {5 * (MIB // 4)} bytes, over the limit of {MIB} "
                          "bytes", p.stderr)
            self.assertIn(f"skipped {records}:2: the line is over the limit of {MIB} bytes",
                          p.stderr)
            self.assertEqual(ids(out), [0, 2, small])

    def test_the_option_is_documented_and_checked(self):
        p = run(["embed", "--help"])
        self.assertIn("--max-document-bytes", p.stdout)
        p = run(["embed", "-", "--max-document-bytes", "0", "--model", MODEL])
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])
        self.assertIn("--max-document-bytes = 0", p.stderr)


class ModelFilesTest(unittest.TestCase):
    # Every file the loader reads for this model; vocab.txt is read when
    # there is no tokenizer.json.
    FILES = ["model.safetensors", "config.json", "tokenizer.json", "modules.json",
             "sentence_bert_config.json", "1_Pooling/config.json", "vocab.txt"]

    def model_with_fifo(self, d, name):
        model = os.path.join(d, "model")
        os.makedirs(os.path.join(model, "1_Pooling"))
        for root, _, files in os.walk(os.path.abspath(MODEL)):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), os.path.abspath(MODEL))
                os.symlink(os.path.join(root, f), os.path.join(model, rel))
        os.remove(os.path.join(model, name))
        if name == "vocab.txt":
            os.remove(os.path.join(model, "tokenizer.json"))
        os.mkfifo(os.path.join(model, name))
        return model

    def test_a_fifo_as_any_model_file_is_refused_by_name(self):
        for name in self.FILES:
            with self.subTest(name), tempfile.TemporaryDirectory() as d:
                model = self.model_with_fifo(d, name)
                doc = os.path.join(d, "a.txt")
                with open(doc, "w") as f:
                    f.write("text")
                # Before: open() of the FIFO blocked until the timeout.
                p = run(["--threads", "1", "embed", doc, "-o", os.path.join(d, "o.jsonl"),
                         "--model", model])
                self.assertEqual(p.returncode, 2, p.stderr[-2000:])
                self.assertIn(f"{os.path.join(model, name)}: is a FIFO (named pipe), not a "
                              "regular file", p.stderr)


if __name__ == "__main__":
    BINARY, MODEL = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
