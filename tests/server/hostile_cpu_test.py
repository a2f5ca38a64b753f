"""Hostile input III, class 1 (issue 51): one request must not cost minutes of
server CPU. A run of spaces is one pre-tokenized word in a byte-level BPE
vocabulary (Qwen3, ModernBERT); merging it scanned for the best pair once per
merge, O(n^2): 300 KB of spaces to /embed took 62 s, 1 MB about 45 minutes.

Through the real server on the tiny Qwen3 model (data/models/tiny-qwen3):
- /tokenize of 1 MB of spaces gives HF tokenizers' ids (the oracle, run here);
- /embed of the same body is answered, and /health answers meanwhile;
each within a hang guard far above the O(n log n) cost (well under a second
of tokenization) and far below the quadratic one.

CPU is a budget (item 2): with --request-cpu-limit 0.05 the same bodies are
stopped with a 413 naming the flag while a normal request on the same server
is answered; and a SIGTERM with --drain-timeout 1 stops a request that would
run for a minute (a 1.5 MB document on the default model) within seconds,
answering it 503.

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
    def __init__(self, binary, model, *flags):
        cmd = [binary, "serve", "--port", "0", "--model", model, "--payload-limit", "4M",
               "--max-response-bytes", "256M", *flags]
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

    check_cpu_limit(binary, model, text)
    check_drain_deadline(binary, os.path.join(source, "models", "all-MiniLM-L6-v2"))
    print("ok")


def check_cpu_limit(binary, model, text):
    """A request over --request-cpu-limit is stopped with a 413 naming it."""
    server = Server(binary, model, "--request-cpu-limit", "0.05")
    try:
        for path, body in (("/tokenize", {"inputs": text}),
                           ("/embed", {"inputs": [text[:1 << 18]] * 4, "truncate": True}),
                           ("/v1/embeddings", {"input": text})):
            status, answer = server.request("POST", path, body)
            want = 400 if path.startswith("/v1/") else 413
            assert status == want and b"--request-cpu-limit" in answer, (path, status,
                                                                          answer[:500])
            print(f"ok {path} over the CPU limit: {status} {json.loads(answer)}")
        status, answer = server.request("POST", "/embed", {"inputs": "a normal request"})
        assert status == 200, (status, answer[:500])
        print("ok a normal request on the same server: 200")
        status, answer = server.request("GET", "/metrics")
        assert b'tessera_server_requests_stopped_total{reason="cpu_limit"} 3' in answer, answer
        print("ok /metrics counts the 3 stopped requests")
    finally:
        code, err = server.stop()
    assert code == 0, err[-2000:]


def check_drain_deadline(binary, model):
    """SIGTERM waits for a long request no longer than --drain-timeout."""
    server = Server(binary, model, "--drain-timeout", "1")
    words = "retrieval augmented generation splits long documents into windows "
    document = words * ((3 << 19) // len(words))  # 1.5 MB: about a minute of embedding here
    answer = {}

    def send():
        answer["reply"] = server.request("POST", "/embed_documents", {"documents": [document]})

    client = threading.Thread(target=send)
    client.start()
    time.sleep(2)  # tokenized and in the batcher by now
    assert "reply" not in answer, f"answered before the signal: {answer['reply'][0]}"
    t0 = time.monotonic()
    code, err = server.stop()
    stopped = time.monotonic() - t0
    client.join(GUARD_SECONDS)
    assert code == 0, err[-2000:]
    status, body = answer["reply"]
    assert status == 503 and b"--drain-timeout" in body, (status, body[:500])
    # The deadline (1 s) plus one batch in flight and the exit.
    assert stopped < 15, f"SIGTERM took {stopped:.1f} s with --drain-timeout 1"
    print(f"ok SIGTERM during a long request: stopped in {stopped:.1f} s, the request got 503")


if __name__ == "__main__":
    main()
