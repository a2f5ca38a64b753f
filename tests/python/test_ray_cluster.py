"""tessera.ray beyond one machine, on one machine (issue 36): Ray's test
cluster (ray.cluster_utils.Cluster: a head with no CPU for work and two worker
nodes of one CPU, each its own raylet) and a local S3 server (moto, loopback
only, behind a proxy that can fail requests). Against `tessera embed`'s rows
for the same documents (ids, chunks, offsets, order; cosine >= 0.9999):

- a worker node lost mid-job: the job finishes, no row lost or repeated;
- the driver killed (SIGKILL) mid-job: the same command continues from the
  committed shards; another job's command on the same output is refused;
- s3:// inputs, output and model: an upload that fails is retried, and the
  output object appears only when the job is complete.

The 2,000-document run with timings is bench/ray/cluster.py (docs/SCALING.md)."""

import http.client
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPO, cosine_rows

sys.path.insert(0, str(REPO / "bench" / "ray"))
import corpus  # noqa: E402  (bench/ray/corpus.py: the generated corpus)

ray = pytest.importorskip("ray", reason="ray is installed by scripts/install-deps.sh")
pytest.importorskip("moto", reason="moto[server] is installed by scripts/install-deps.sh")
import tessera.ray as tray  # noqa: E402

# 300 documents (one long: 125) in 20 shards of 15: enough shards that a
# node or the driver is lost with work both done and to do.
DOCUMENTS = 300
BATCH = 15
SHARDS = DOCUMENTS // BATCH
BUCKET = "tessera-test"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FaultyS3Proxy(http.server.BaseHTTPRequestHandler):
    """Relays requests to the S3 server, except the first upload of an object
    whose key contains `fail`: every request of that multipart upload (its
    first uploadId, however often pyarrow's S3 client retries it) gets a 503
    SlowDown, as S3 answers when overloaded. The next upload of the object
    passes."""

    protocol_version = "HTTP/1.1"

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0], 16)
            body += self.rfile.read(size)
            self.rfile.readline()
            if size == 0:
                return body

    def _relay(self):
        body = self._body()
        server = self.server
        with server.lock:
            upload = self.path.partition("uploadId=")[2].split("&")[0]
            failing = (self.command == "PUT" and server.fail is not None and
                       server.fail in self.path and upload and
                       server.failed_upload in (None, upload))
            if failing:
                server.failed_upload = upload
                server.failed.append(self.path)
        if failing:
            error = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                     b"<Message>Please reduce your request rate.</Message></Error>")
            self.send_response(503)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error)
            return
        hop = ("transfer-encoding", "connection", "content-length", "expect", "keep-alive")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in hop}
        headers["Content-Length"] = str(len(body))
        upstream = http.client.HTTPConnection("127.0.0.1", server.upstream, timeout=120)
        upstream.request(self.command, self.path, body=body, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status, answer.reason)
        for k, v in answer.getheaders():
            if k.lower() not in hop or (self.command == "HEAD" and k.lower() == "content-length"):
                self.send_header(k, v)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        upstream.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A moto S3 server on loopback and a faulty proxy in front of it, which
    pyarrow (here and in every Ray worker) reaches through AWS_ENDPOINT_URL."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FaultyS3Proxy)
    proxy.upstream, proxy.lock, proxy.fail, proxy.failed = port, threading.Lock(), None, []
    proxy.failed_upload = None
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{proxy.server_address[1]}",
           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
           "TESSERA_MODEL_CACHE": str(tmp_path_factory.mktemp("model-cache"))}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:  # (the server goes whatever fails here)
        deadline = time.monotonic() + 60
        while True:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/")
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, \
                    "moto did not start"
                time.sleep(0.2)
        import pyarrow.fs as pafs
        # (from_uri reads AWS_ENDPOINT_URL; S3FileSystem() does not)
        pafs.FileSystem.from_uri(f"s3://{BUCKET}?allow_bucket_creation=true")[0].create_dir(
            BUCKET)
        yield proxy
    finally:
        proxy.shutdown()
        server.terminate()
        server.wait()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def generated(tmp_path_factory, cli):
    """The generated corpus and `tessera embed`'s rows for it (the CLI runs
    while the cluster starts)."""
    d = tmp_path_factory.mktemp("generated")
    src = corpus.write_jsonl(str(d / "corpus.jsonl"), DOCUMENTS)
    proc = subprocess.Popen([cli, "embed", src, "-o", str(d / "cli.jsonl")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    yield src, proc, d / "cli.jsonl"
    proc.kill()
    proc.wait()


@pytest.fixture(scope="module")
def cluster(s3, generated):
    """A head that runs no work (num_cpus=0) and two worker nodes of one CPU:
    the two actors run one on each worker node."""
    from ray.cluster_utils import Cluster

    import tessera
    here = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH")) if p)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        # Cluster() names itself the machine's "current" Ray cluster, which
        # another process's ray.init() would join: forget it, we connect by address.
        ray._common.utils.reset_ray_address()
        c.workers = [c.add_node(num_cpus=1) for _ in range(2)]
        c.wait_for_nodes()
        ray.init(address=c.address, log_to_driver=False, logging_level="WARNING",
                 configure_logging=False)
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def want(generated):
    src, proc, out = generated
    _, stderr = proc.communicate()
    assert proc.returncode == 0, stderr
    with open(out, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def assert_same_rows(got, want):
    assert [(g["id"], g["chunk"], g["offsets"]) for g in got] == \
        [(w["id"], w["chunk"], w["offsets"]) for w in want]
    assert cosine_rows([g["embedding"] for g in got],
                       [w["embedding"] for w in want]).min() >= 0.9999


def commits(parts_dir):
    """Shards committed in a local OUTPUT.parts."""
    try:
        return sum(n.startswith("part-") and n.endswith(".json") for n in os.listdir(parts_dir))
    except FileNotFoundError:
        return 0


def cluster_state():
    """The actors and nodes as Ray's control store sees them: what a job
    that does not finish waits on."""
    lines = [f"available {ray.available_resources()}"]
    for a in ray._private.state.actors().values():
        lines.append(f"actor {a.get('ActorClassName')} {a.get('State')} on node "
                     f"{str(a.get('Address', {}).get('NodeID'))[:8]} pid {a.get('Pid')}")
    for n in ray.nodes():
        lines.append(f"node {n['NodeID'][:8]} alive={n['Alive']} {n['Resources']}")
    return "\n".join(lines)


def wait_for(condition, what, timeout=300):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# The job must neither hang nor lose a row. Ray declares the removed node dead
# only after missed health checks (10-20 s): until then the rerun's actor may
# be placed there and die while starting; the rerun replaces it
# (tessera/ray.py, _embedding_dataset). If the job does not finish, the
# assertion shows what Ray's actors and nodes are waiting on.
def test_a_lost_worker_node_loses_and_repeats_no_row(cluster, generated, want, tmp_path):
    src = generated[0]
    out = tmp_path / "rows.jsonl"
    result = {}

    def job():
        try:
            result["report"] = tray.embed_corpus([src], out, workers=2, batch_size=BATCH,
                                                 progress=False)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            result["error"] = e

    thread = threading.Thread(target=job)
    thread.start()
    wait_for(lambda: commits(f"{out}.parts") >= 3 or not thread.is_alive(), "3 shards")
    lost = cluster.workers[0]
    done_before = commits(f"{out}.parts")
    cluster.remove_node(lost, allow_graceful=False)  # its raylet, store and actor: killed
    thread.join(timeout=480)
    assert not thread.is_alive(), \
        f"the job did not finish 480 s after losing a node:\n{cluster_state()}"
    cluster.workers[0] = cluster.add_node(num_cpus=1)  # (for the next tests)
    assert "error" not in result, result.get("error")
    report = result["report"]
    assert done_before < SHARDS, "the job was over before the node was lost"
    # Both nodes embedded shards; the survivor finished the job.
    nodes = report["nodes"]
    assert set(nodes) == {lost.node_id, cluster.workers[1].node_id}, nodes
    assert sum(nodes.values()) == SHARDS and nodes[lost.node_id] < SHARDS
    assert report["reruns"] >= 1  # the shards not committed ran again
    assert report["rows"] == len(want) and report["documents"] == DOCUMENTS
    assert_same_rows(read_jsonl(out), want)
    assert not os.path.exists(f"{out}.parts")


def test_a_killed_driver_resumes_from_its_committed_shards(cluster, generated, want, tmp_path):
    src = generated[0]
    out = tmp_path / "rows.jsonl"
    command = [sys.executable, "-m", "tessera.ray", "embed", src, str(out), "--address",
               cluster.address, "--workers", "2", "--batch-size", str(BATCH), "--quiet"]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    try:
        wait_for(lambda: commits(f"{out}.parts") >= 5 or driver.poll() is not None, "5 shards")
    finally:
        driver.send_signal(signal.SIGKILL)
        _, stderr = driver.communicate()
    assert driver.returncode == -signal.SIGKILL, stderr
    committed = commits(f"{out}.parts")
    assert 5 <= committed < SHARDS and not out.exists()

    # Another job (other shards) must not continue these parts.
    other = subprocess.run(command[:-3] + ["--batch-size", str(BATCH + 1), "--quiet"],
                           capture_output=True, text=True)
    assert other.returncode == 2, other.stderr
    assert f"{out}.parts: holds the parts of another job (batch_size was {BATCH}, now " \
        f"{BATCH + 1})" in other.stderr, other.stderr

    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    summary = again.stderr.splitlines()[-1]
    resumed = int(summary.split(" with 2 workers (")[1].split(" of ")[0])
    assert f"of {SHARDS} shards committed by an earlier run) -> {out}" in summary, summary
    assert resumed >= committed, summary
    assert_same_rows(read_jsonl(out), want)
    assert not os.path.exists(f"{out}.parts")


def test_s3_inputs_output_and_model_with_a_failed_upload(cluster, s3, generated, want,
                                                         tmp_path):
    import pyarrow.fs as pafs

    import tessera
    fs = pafs.FileSystem.from_uri(f"s3://{BUCKET}")[0]
    count = 120  # 8 shards
    with open(generated[0], encoding="utf-8") as f:
        lines = [next(f) for _ in range(count)]
    with fs.open_output_stream(f"{BUCKET}/corpus/part.jsonl") as o:
        o.write("".join(lines).encode())
    pafs.copy_files(tessera.Embedder().model_dir, f"{BUCKET}/models/minilm",
                    source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)
    ids = [json.loads(line).get("id", f"s3://{BUCKET}/corpus/part.jsonl:8") for line in lines]
    expected = [dict(w, id=ids[7]) if w["id"] == f"{generated[0]}:8" else w for w in want]
    expected = [w for w in expected if w["id"] in set(ids)]

    out = f"s3://{BUCKET}/out/rows.jsonl"
    # Shard 3's part: its first upload fails, whatever pyarrow's client retries.
    with s3.lock:
        s3.fail = "part-000003.jsonl"
    result = {}

    def job():
        try:
            result["report"] = tray.embed_corpus(
                [f"s3://{BUCKET}/corpus/"], out, workers=2, batch_size=BATCH, progress=False,
                model=f"s3://{BUCKET}/models/minilm/")
        except BaseException as e:  # noqa: BLE001 - re-raised below
            result["error"] = e

    thread = threading.Thread(target=job)
    thread.start()
    seen = []  # (commits, output exists) while the job ran
    while thread.is_alive():
        infos = fs.get_file_info(pafs.FileSelector(f"{BUCKET}/out", recursive=True,
                                                   allow_not_found=True))
        names = [i.path for i in infos if i.type == pafs.FileType.File]
        seen.append((sum(n.endswith(".json") and "/part-" in n for n in names),
                     f"{BUCKET}/out/rows.jsonl" in names))
        time.sleep(0.1)
    thread.join()
    assert "error" not in result, result.get("error")
    report = result["report"]
    assert s3.failed and {p.split("?")[0] for p in s3.failed} == \
        {f"/{BUCKET}/out/rows.jsonl.parts/part-000003.jsonl"}, s3.failed
    assert report["retries"] >= 1 and report["shards"] == count // BATCH
    # Seen mid-job without the output; never the output beside some commits.
    assert any(0 < n < count // BATCH and not there for n, there in seen), seen
    assert all(not there or n in (0, count // BATCH) for n, there in seen), seen
    local = tmp_path / "rows.jsonl"
    pafs.copy_files(f"{BUCKET}/out/rows.jsonl", str(local), source_filesystem=fs,
                    destination_filesystem=pafs.LocalFileSystem())
    assert_same_rows(read_jsonl(local), expected)
    left = fs.get_file_info(pafs.FileSelector(f"{BUCKET}/out", recursive=True))
    assert [i.path for i in left if i.type == pafs.FileType.File] == [f"{BUCKET}/out/rows.jsonl"]
