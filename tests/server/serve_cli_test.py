"""`tessera serve` end to end: the real binary, the real model, real HTTP.

Usage: serve_cli_test.py TESSERA_BINARY SOURCE_DIR
- concurrent clients mixing /embed and /v1/embeddings (float and base64) get
  exactly their own rows: each matches `tessera embed` on the same text and the
  committed sentence-transformers golden file (data/golden);
- /tokenize ids equal the golden token ids (HF tokenizers);
- --api-key; a model that cannot run (no attention backend) answers 424 and
  the server stays up;
- --served-model-name is the OpenAI `model` and GET /v1/models' id; a bad
  --quantization-ranges file (not (2, dims), wider than the model, missing)
  stops `serve` with a message naming the flag;
- SIGTERM while requests are in flight: every accepted request is answered,
  new connections are refused, exit code 0;
- under a tiny --memory-budget an input whose activations do not fit is a 503
  with Retry-After (never a crash), while a short one is served;
- a client trickling its headers is cut with 408 after --read-timeout, huge
  headers get 431, and the server keeps serving.
"""
import base64
import json
import os
import random
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import numpy as np

COSINE_GOLDEN = 0.9999  # issue 4's bar against sentence-transformers
COSINE_GOLDEN_BF16 = 0.9998  # --weights bf16, as tests/model/golden_test.cc
MAX_DIFF_CLI = 1e-5     # same engine, other batch composition


class Server:
    def __init__(self, binary, serve_args=(), global_args=(), preexec_fn=None):
        cmd = [binary, *global_args, "serve", "--port", "0", *serve_args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, preexec_fn=preexec_fn)
        line = self.proc.stdout.readline()
        if "listening on http://" not in line:
            self.proc.kill()
            raise AssertionError(f"no listening line from {cmd}: {line!r} "
                                 f"{self.proc.stderr.read()}")
        self.url = line.split("listening on ")[1].split()[0]
        self.port = int(self.url.rsplit(":", 1)[1])

    def request(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=300)
        return self.proc.returncode, err


def cli_embeddings(binary, inputs_path):
    out = subprocess.run([binary, "embed", inputs_path], capture_output=True, text=True, check=True)
    rows = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        rows.setdefault(r["id"], []).append(np.array(r["embedding"], dtype=np.float64))
    return rows


def check_concurrent_clients(server, texts, golden, cli):
    ids = list(texts)
    failures = []

    def client(seed):
        rng = random.Random(seed)
        for _ in range(6):
            pick = rng.sample(ids, rng.randint(1, 8))
            route = rng.choice(["/embed", "/v1/embeddings", "/v1/embeddings-b64"])
            if route == "/embed":
                status, body = server.request("POST", "/embed",
                                              {"inputs": [texts[i] for i in pick], "truncate": True})
                rows = json.loads(body) if status == 200 else None
            else:
                fmt = "base64" if route.endswith("b64") else "float"
                status, body = server.request("POST", "/v1/embeddings", {
                    "input": [texts[i] for i in pick], "model": "all-MiniLM-L6-v2",
                    "encoding_format": fmt})
                rows = None
                if status == 200:
                    data = json.loads(body)["data"]
                    rows = [np.frombuffer(base64.b64decode(d["embedding"]), dtype="<f4")
                            if fmt == "base64" else d["embedding"] for d in data]
            if status != 200:
                failures.append(f"{route}: {status} {body[:300]!r}")
                continue
            for i, row in zip(pick, rows):
                row = np.asarray(row, dtype=np.float64)
                g = golden[i]
                cos = float(row @ g / (np.linalg.norm(row) * np.linalg.norm(g)))
                if cos < COSINE_GOLDEN:
                    failures.append(f"{i} via {route}: cosine {cos:.6f} to the golden row")
                if i in cli and len(cli[i]) == 1:
                    diff = float(np.max(np.abs(row - cli[i][0])))
                    if diff > MAX_DIFF_CLI:
                        failures.append(f"{i} via {route}: max |server - tessera embed| = {diff:.2e}")

    threads = [threading.Thread(target=client, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, "\n".join(failures[:20])


def check_tokenize(server, texts, token_ids):
    for i, text in texts.items():
        status, body = server.request("POST", "/tokenize", {"inputs": text})
        assert status == 200, body
        got = [t["id"] for t in json.loads(body)[0]]
        want = token_ids[i]
        # The golden ids are truncated to max_seq_length; /tokenize is not.
        assert got[:len(want) - 1] == want[:-1], f"{i}: {got[:20]} vs {want[:20]}"


def check_sigterm_answers_accepted_requests(binary):
    server = Server(binary, ["--max-concurrent-requests", "64"])
    long_text = " ".join(["tessera serves embeddings under load"] * 60)  # over 256 tokens
    # Enough work that all clients are in flight when SIGTERM lands; under
    # ASan + UBSan each text costs ~6x more, so fewer texts do the same.
    per_request = 4 if os.environ.get("TESSERA_TEST_SANITIZED") else 16
    results = []
    lock = threading.Lock()

    def client():
        try:
            status, body = server.request("POST", "/embed",
                                          {"inputs": [long_text] * per_request, "truncate": True})
            result = (status, len(json.loads(body)) if status == 200 else body[:200])
        except OSError as e:  # reset, closed without an answer: a dropped request
            result = ("transport", repr(e))
        with lock:
            results.append(result)

    clients = 12
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    while True:  # until every client is admitted (embedding them takes seconds)
        _, body = server.request("GET", "/metrics")
        line = [l for l in body.decode().splitlines()
                if l.startswith("tessera_server_requests_in_flight ")][0]
        if float(line.split()[1]) >= clients:
            break
    server.proc.send_signal(signal.SIGTERM)
    refused = False
    while not refused and server.proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
        except (ConnectionRefusedError, ConnectionResetError):
            # Reset: the handshake landed in the kernel's backlog just as the
            # listening socket closed; the server never accepted it either.
            refused = True
    for t in threads:
        t.join()
    code = server.proc.wait(timeout=300)
    err = server.proc.stderr.read()
    assert code == 0, f"exit code {code}: {err}"
    assert "SIGTERM" in err and "stopped" in err, err
    assert results == [(200, per_request)] * clients, results
    assert refused, "new connections were still accepted after SIGTERM"


def check_bf16_weights(binary, texts, golden):
    try:
        server = Server(binary, ["--weights", "bf16", "--auto-truncate"])
    except AssertionError as e:
        if "no bf16 matrix kernel" in str(e):
            print("skipped --weights bf16: " + str(e))
            return
        raise
    try:
        status, body = server.request("GET", "/info")
        assert status == 200 and json.loads(body)["weights"] == "bf16", body
        ids = sorted(texts)[:8]
        status, body = server.request("POST", "/embed", {"inputs": [texts[i] for i in ids]})
        assert status == 200, body
        for key, row in zip(ids, json.loads(body)):
            v, ref = np.array(row, dtype=np.float64), golden[key]
            cos = float(v @ ref / np.linalg.norm(v) / np.linalg.norm(ref))
            assert cos >= COSINE_GOLDEN_BF16, (key, cos)
    finally:
        code, err = server.stop()
    assert code == 0, err


def metric_value(text, name, labels=""):
    """The value of the sample `name{labels}` in Prometheus text, or None."""
    key = name + ("{" + labels + "}" if labels else "") + " "
    for line in text.splitlines():
        if line.startswith(key):
            return float(line.split()[-1])
    return None


def check_memory_budget(binary, weights_bytes, load_peak_bytes):
    # The least budget the model loads under: the weights plus the largest
    # staging slot (the 384 x 1536 FFN matrix, 2.36 MB). A 256-token input
    # needs 256 x (2 x 384 + 1536) floats of activations, as much again,
    # plus GEMM workspace and its rows: it never fits. A 3-token input does.
    budget = int(load_peak_bytes)
    assert budget - weights_bytes <= 256 * (2 * 384 + 1536) * 4, (budget, weights_bytes)
    server = Server(binary, ["--auto-truncate"], global_args=["--memory-budget", str(budget)])
    try:
        long_text = " ".join(["tessera runs under a tight memory budget"] * 60)
        for _ in range(2):
            status, body = server.request("POST", "/embed", {"inputs": [long_text]})
            assert status == 503, (status, body[:300])
            err = json.loads(body)
            assert err["error_type"] == "Overloaded" and "memory budget" in err["error"], err
        # urllib drops the headers of an error answer: ask on a raw socket.
        with socket.create_connection(("127.0.0.1", server.port), timeout=300) as c:
            data = json.dumps({"inputs": [long_text]}).encode()
            c.sendall(b"POST /embed HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      b"Content-Type: application/json\r\nContent-Length: " +
                      str(len(data)).encode() + b"\r\n\r\n" + data)
            answer = recv_all(c)
        assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
        assert b"\r\nRetry-After: 1\r\n" in answer, answer[:400]
        status, body = server.request("POST", "/embed", {"inputs": ["hello"]})
        assert status == 200 and len(json.loads(body)[0]) == 384, (status, body[:300])
        assert server.request("GET", "/health")[0] == 200
    finally:
        code, err = server.stop()
    assert code == 0, err


def check_served_name_and_quantization_ranges(binary):
    # --served-model-name: what `model` must be and GET /v1/models lists.
    server = Server(binary, ["--served-model-name", "org/minilm"])
    try:
        status, body = server.request("GET", "/v1/models")
        assert status == 200 and json.loads(body)["data"][0]["id"] == "org/minilm", body
        status, body = server.request("POST", "/v1/embeddings", {"input": "a", "model": "org/minilm"})
        assert status == 200 and json.loads(body)["model"] == "org/minilm", body
        status, body = server.request("POST", "/v1/embeddings",
                                      {"input": "a", "model": "all-MiniLM-L6-v2"})
        assert status == 404 and json.loads(body)["error"]["code"] == "model_not_found", body
    finally:
        code, err = server.stop()
    assert code == 0, err
    # --quantization-ranges: a (2, dims) float32 .npy of at most the model's dims.
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"wide.npy": (np.zeros((2, 385), np.float32), "385 dimensions"),
                 "flat.npy": (np.zeros(8, np.float32), "--quantization-ranges")}
        for name, (array, needle) in cases.items():
            path = os.path.join(tmp, name)
            np.save(path, array)
            run = subprocess.run([binary, "serve", "--port", "0", "--quantization-ranges", path],
                                 capture_output=True, text=True, timeout=300)
            assert run.returncode != 0 and needle in run.stderr, (name, run.returncode,
                                                                 run.stderr[-500:])
        run = subprocess.run([binary, "serve", "--quantization-ranges",
                              os.path.join(tmp, "missing.npy")], capture_output=True, text=True)
        assert run.returncode != 0 and "--quantization-ranges" in run.stderr, run.stderr[-500:]


def recv_all(sock):
    out = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return out
        out += chunk


def check_slow_and_oversized_clients(binary):
    server = Server(binary, ["--read-timeout", "1", "--max-header-bytes", "8K"])
    try:
        # Headers trickled one byte per 50 ms: cut with 408 once the request
        # is 1 s old, though no single read ever waits long.
        with socket.create_connection(("127.0.0.1", server.port), timeout=120) as c:
            start = time.monotonic()
            head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 2000 + b"\r\n\r\n"
            c.setblocking(True)
            for i in range(len(head)):
                readable = select.select([c], [], [], 0.05)[0]
                if readable or time.monotonic() - start > 60:
                    break
                c.sendall(head[i:i + 1])
            answer = recv_all(c)
            elapsed = time.monotonic() - start
        assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
        assert b"--read-timeout" in answer, answer
        assert 1.0 <= elapsed < 60, elapsed
        with socket.create_connection(("127.0.0.1", server.port), timeout=120) as c:
            c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n" +
                      b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 500) for i in range(40)) +
                      b"\r\n")
            answer = recv_all(c)
        assert answer.startswith(b"HTTP/1.1 431"), answer[:300]
        assert server.request("GET", "/health")[0] == 200
    finally:
        code, err = server.stop()
    assert code == 0, err
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
    for flag in ("--read-timeout", "--write-timeout", "--keep-alive-timeout", "--max-header-bytes"):
        assert flag in help_text, f"{flag} missing from serve --help"


def vm_hwm_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def check_hostile_connections_and_framing(binary):
    """Issue 35 through the real binary: silent connections past the
    descriptor limit, request smuggling, a 2 MB /tokenize."""
    low_fds = 256  # set for the child only: the cap is this less 64 descriptors
    server = Server(binary, ["--read-timeout", "30"],
                    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                          (low_fds, low_fds)))
    silent = []
    try:
        hwm_before = vm_hwm_bytes(server.proc.pid)
        # More silent connections than the server may hold: the oldest are shed
        # and a well-behaved client is still served at once (before: every
        # thread held for --read-timeout, then accept() failed on EMFILE).
        for _ in range(2 * low_fds):
            silent.append(socket.create_connection(("127.0.0.1", server.port), timeout=30))
        start = time.monotonic()
        assert server.request("GET", "/health")[0] == 200
        assert time.monotonic() - start < 10, "a well-behaved client waited on silent ones"
        metrics = server.request("GET", "/metrics")[1].decode()
        assert metric_value(metrics, "tessera_server_connections_shed_total") >= low_fds, metrics
        # Content-Length with Transfer-Encoding: 400 and closed; the bytes after
        # the ambiguous body are never served as a second request.
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as c:
            c.sendall(b"POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                      b"GET /info HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = recv_all(c)
        assert answer.startswith(b"HTTP/1.1 400"), answer[:300]
        assert b"model_id" not in answer, answer
        # A 2 MB text to /tokenize: 413 at the answer cap, without the ~700 MB
        # of the JSON tree it used to build.
        status, body = server.request("POST", "/tokenize", {"inputs": "hello world " * 170000})
        assert status == 413 and b"--max-response-bytes" in body, (status, body[:300])
        # (ASan keeps freed memory in quarantine: the figure means nothing there.)
        if not os.environ.get("TESSERA_TEST_SANITIZED"):
            grown = vm_hwm_bytes(server.proc.pid) - hwm_before
            assert grown < 200 << 20, f"peak RSS grew {grown >> 20} MiB for one /tokenize"
    except BaseException:
        metrics_now = ""
        try:
            metrics_now = server.request("GET", "/metrics")[1].decode()
        except OSError as e:
            metrics_now = f"(no /metrics: {e})"
        print("server state at the failure:\n" + metrics_now[-3000:], file=sys.stderr)
        raise
    finally:
        for c in silent:
            c.close()
        code, err = server.stop()
        print(f"server exit {code}; stderr:\n{err[-4000:]}", file=sys.stderr)
    assert code == 0, err


def main():
    binary, source = sys.argv[1], sys.argv[2]
    golden_dir = os.path.join(source, "data", "golden")
    texts, golden, token_ids = {}, {}, {}
    with open(os.path.join(golden_dir, "inputs.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            texts[r["id"]] = r["text"]
    with open(os.path.join(golden_dir, "embeddings.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            golden[r["id"]] = np.array(r["embedding"], dtype=np.float64)
            token_ids[r["id"]] = r["token_ids"]
    cli = cli_embeddings(binary, os.path.join(golden_dir, "inputs.jsonl"))

    # --auto-truncate: /v1/embeddings has no truncate field (as in TEI).
    server = Server(binary, ["--max-concurrent-requests", "64", "--auto-truncate"])
    try:
        status, body = server.request("GET", "/info")
        info = json.loads(body)
        assert status == 200 and info["dim"] == 384 and info["max_input_length"] == 256, info
        assert info["weights"] == "f32", info
        # Before any request: the tracked memory of the loaded model alone.
        metrics = server.request("GET", "/metrics")[1].decode()
        weights_bytes = metric_value(metrics, "tessera_memory_total_live_bytes")
        load_peak_bytes = metric_value(metrics, "tessera_memory_total_peak_bytes")
        check_concurrent_clients(server, texts, golden, cli)
        check_tokenize(server, texts, token_ids)
        status, body = server.request("GET", "/metrics")
        assert status == 200 and b"tessera_server_requests_total" in body
        assert b"tessera_memory_live_bytes" in body, "the runtime registry is missing from /metrics"
    finally:
        code, err = server.stop()
    assert code == 0, err

    keyed = Server(binary, ["--api-key", "s3cret"])
    try:
        assert keyed.request("POST", "/embed", {"inputs": "a"})[0] == 401
        assert keyed.request("POST", "/embed", {"inputs": "a"},
                             {"Authorization": "Bearer nope"})[0] == 401
        assert keyed.request("POST", "/embed", {"inputs": "a"},
                             {"Authorization": "Bearer s3cret"})[0] == 200
        assert keyed.request("GET", "/health")[0] == 200
    finally:
        keyed.stop()

    check_bf16_weights(binary, texts, golden)

    # A policy that names no backend able to run is refused at start-up
    # (tests/apps/front_door_test.py); one whose only backend fails every run
    # (the policy's fault-injection clause: the same on every CPU) starts, and
    # each request then fails with TEI's 424 while the server stays healthy.
    broken = Server(binary, global_args=["--attention", "only:cpu.flash;fail:cpu.flash"])
    try:
        for _ in range(2):
            status, body = broken.request("POST", "/embed", {"inputs": "hello"})
            assert status == 424, (status, body)
            assert json.loads(body)["error_type"] == "Backend", body
            assert "fault injected" in json.loads(body)["error"], body
        assert broken.request("GET", "/health")[0] == 200
    finally:
        code, err = broken.stop()
    assert code == 0, err

    check_served_name_and_quantization_ranges(binary)
    check_sigterm_answers_accepted_requests(binary)
    check_memory_budget(binary, weights_bytes, load_peak_bytes)
    check_slow_and_oversized_clients(binary)
    check_hostile_connections_and_framing(binary)
    print("ok")


if __name__ == "__main__":
    main()
