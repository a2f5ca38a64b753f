"""SIGTERM / SIGINT during `tessera embed` (issue 35): the unfinished output
("OUT.tmp-PID") is removed and the exit code is 128 + the signal's number;
with --resume the committed rows (OUT.partial, the checkpoint) are kept, as
after any kill, and the next --resume run completes the job.

Usage: embed_signal_test.py TESSERA_BINARY MODEL_DIR

Before: the signal's default action ended the process at once and left
OUT.tmp-PID behind. The signal is sent once the job is under way (its
temporary output, or its first checkpoint, exists), on a corpus large enough
to be still running then.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = ""
MODEL = ""
DOCUMENTS = 3000  # at --threads 1, minutes of work: still running when signalled
# A job that neither starts nor stops fails here instead of hanging the suite:
# starting and stopping take seconds, so this is far from a normal run's time.
TIMEOUT_SECONDS = 120
# The resumed job runs to its end: 105 s alone at --threads 1 on a Zen 3, more
# on a loaded machine, so it waits for the process's exit with only a hang
# guard below ctest's limit (600 s, tests/apps/CMakeLists.txt).
COMPLETION_SECONDS = 540


def write_corpus(path, documents=DOCUMENTS):
    with open(path, "w") as f:
        for i in range(documents):
            text = f"Document {i} about signals. " + "Words to embed in a sentence. " * 30
            f.write(json.dumps({"id": i, "text": text}) + "\n")


def wait_for(predicate, proc, what):
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"tessera exited ({proc.returncode}) before {what}: "
                                 f"{proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no {what} after {TIMEOUT_SECONDS} s")
        time.sleep(0.05)


def start(args):
    return subprocess.Popen([BINARY, "--threads", "1", "embed", *args, "--model", MODEL,
                             "--round-bytes", "16K"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(proc, seconds=TIMEOUT_SECONDS, what="after the signal"):
    try:
        _, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired as e:
        proc.kill()
        raise AssertionError(f"still running {seconds} s {what}") from e
    return proc.returncode, err


class SignalTest(unittest.TestCase):
    def test_a_signal_removes_the_unfinished_output(self):
        for signo, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
            with self.subTest(name), tempfile.TemporaryDirectory() as d:
                corpus = os.path.join(d, "corpus.jsonl")
                write_corpus(corpus)
                out = os.path.join(d, "out.jsonl")
                proc = start([corpus, "-o", out])
                temp = f"{out}.tmp-{proc.pid}"
                wait_for(lambda: os.path.exists(temp) and os.path.getsize(temp) > 0, proc,
                         "rows in " + temp)
                proc.send_signal(signo)
                rc, err = finish(proc)
                self.assertEqual(rc, 128 + signo, err[-2000:])
                self.assertIn(f"tessera: {name}: stopped; the unfinished output was removed", err)
                self.assertEqual(sorted(os.listdir(d)), ["corpus.jsonl"])

    def test_resume_keeps_the_committed_rows_and_completes(self):
        with tempfile.TemporaryDirectory() as d:
            documents = 200  # the rerun embeds what is left: keep it short
            corpus = os.path.join(d, "corpus.jsonl")
            write_corpus(corpus, documents)
            out = os.path.join(d, "out.jsonl")
            proc = start([corpus, "-o", out, "--resume"])
            wait_for(lambda: os.path.exists(out + ".checkpoint.json"), proc, "checkpoint")
            proc.send_signal(signal.SIGTERM)
            rc, err = finish(proc)
            self.assertEqual(rc, 128 + signal.SIGTERM, err[-2000:])
            self.assertIn(f"the committed rows are kept in {out}.partial", err)
            self.assertTrue(os.path.exists(out + ".partial"))
            self.assertEqual(glob.glob(os.path.join(d, "*.tmp*")), [])
            rc, err = finish(start([corpus, "-o", out, "--resume"]), COMPLETION_SECONDS,
                             "into the resumed job")
            self.assertEqual(rc, 0, err[-2000:])
            with open(out) as f:
                self.assertEqual([json.loads(line)["id"] for line in f], list(range(documents)))


if __name__ == "__main__":
    BINARY, MODEL = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
