"""Hostile input III, class 1 (issue 51): one request must not cost minutes of
server CPU. A run of spaces is one pre-tokenized word in a byte-level BPE
vocabulary (Qwen3, ModernBERT); merging it scanned for the best pair once per
merge, O(n^2): 300 KB of spaces to /embed took 62 s, 1 MB about 45 minutes.

Through the real server on the tiny Qwen3 model (data/models/tiny-qwen3):
- /tokenize of 1 MB of spaces gives HF tokenizers' ids (the oracle, run here);
- /embed of the same body is answered, and /health answers meanwhile;
each within a hang guard far above the O(n log n) cost (well under a second
of tokenization) and far below the quadratic one.

Usage: hostile_cpu_test.py TESSERA_BINARY SOURCE_DIR
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from tokenizers import Tokenizer

# A hang guard, not a speed test: the quadratic merge needs ~45 minutes here.
GUARD_SECONDS = 120
SPACES = 1 << 20


class Server:
    def __init__(self, binary, model):
        cmd = [binary, "serve", "--port", "0", "--model", model, "--payload-limit", "4M",
               "--max-response-bytes", "256M"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening on http://" not in line:
            self.proc.kill()
            raise AssertionError(f"no listening line from {cmd}: {line!r} {self.proc.stderr.read()}")
        self.url = line.split("listening on ")[1].split()[0]

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=GUARD_SECONDS) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=GUARD_SECONDS)
        return self.proc.returncode, err


def main():
    binary, source = sys.argv[1], sys.argv[2]
    model = os.path.join(source, "data", "models", "tiny-qwen3")
    hf = Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
    text = " " * SPACES
    want = hf.encode(text, add_special_tokens=False).ids
    assert len(want) > 1, "the oracle merged nothing"
    server = Server(binary, model)
    try:
        t0 = time.monotonic()
        status, body = server.request("POST", "/tokenize",
                                      {"inputs": text, "add_special_tokens": False})
        elapsed = time.monotonic() - t0
        assert status == 200, (status, body[:500])
        got = [t["id"] for t in json.loads(body)[0]]
        assert got == want, f"{len(got)} ids vs HF's {len(want)}: {got[:8]} vs {want[:8]}"
        print(f"ok /tokenize of {SPACES} spaces: {len(got)} ids as HF, {elapsed:.2f} s")

        # /embed of the same body while another client polls /health.
        health = []
        stop = threading.Event()

        def poll():
            while not stop.is_set():
                health.append(server.request("GET", "/health")[0])
                time.sleep(0.05)

        poller = threading.Thread(target=poll)
        poller.start()
        t0 = time.monotonic()
        try:
            status, body = server.request("POST", "/embed", {"inputs": text, "truncate": True})
        finally:
            stop.set()
            poller.join()
        elapsed = time.monotonic() - t0
        assert status == 200, (status, body[:500])
        assert health and all(s == 200 for s in health), health
        print(f"ok /embed of {SPACES} spaces: {elapsed:.2f} s, /health answered {len(health)} times")
    finally:
        code, err = server.stop()
    assert code == 0, err[-2000:]
    print("ok")


if __name__ == "__main__":
    main()
