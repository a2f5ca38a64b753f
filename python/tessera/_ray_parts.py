"""tessera.ray's commit log: a job's output as idempotent parts, one per
shard, then one file (docs/DECISIONS.md, "tessera.ray: a resumable driver").

    OUTPUT.parts/job.json           the job's fingerprint (inputs, plan, options)
    OUTPUT.parts/part-000012.jsonl  shard 12's rows (.parquet for Parquet output)
    OUTPUT.parts/part-000012.json   its commit: rows, documents, skipped documents

A shard's part is a pure function of the shard (its rows are), so writing it
twice writes the same bytes; each file is written whole or not at all
(_ray_storage.write_atomic), the data before the commit that names it. A
shard is done when its commit exists. A driver that dies loses only the
shards it had not committed: the same command run again finds job.json,
checks that it describes the same job, and embeds only the rest. When every
shard is committed the parts are joined, in shard order, into OUTPUT, which
appears only complete (a local file renamed into place; an object store's
upload, visible when it completes); then OUTPUT.parts is removed."""

import hashlib
import io
import json
import os
import shutil

from . import _ray_storage as storage

_JOB = "job.json"


class ForeignParts(ValueError):
    """OUTPUT.parts holds another job's parts."""


def fingerprint(inputs, batch_size, options):
    """What makes two runs the same job: every input file's location, size
    and modification time (the shard plan follows from them and batch_size),
    batch_size and the row options (a dict of JSON values)."""
    return {"version": 1, "inputs": [[loc, *storage.describe(loc)[1:]] for loc in inputs],
            "batch_size": batch_size, **options}


def digest(array):
    """A short digest of an array's values (quantization ranges)."""
    return None if array is None else hashlib.sha256(array.tobytes()).hexdigest()[:16]


def _first_difference(old, new):
    """(field, old value, new value) of the first field two fingerprints differ in."""
    for key in sorted(set(old) | set(new), key=lambda k: (k != "inputs", k)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key == "inputs" and isinstance(a, list) and isinstance(b, list):
            for x, y in zip(a, b):
                if x != y:
                    return "input", x, y
            return "inputs", f"{len(a)} files", f"{len(b)} files"
        return key, a, b
    return None


class Parts:
    """The parts of one output. `retry` is a _ray_storage.Retrying."""

    def __init__(self, output, fmt, job, retry):
        self.output, self.fmt, self.job, self.retry = output, fmt, job, retry
        self.dir = output + ".parts"
        self.ext = ".parquet" if fmt == "parquet" else ".jsonl"

    def _at(self, name):
        return f"{self.dir}/{name}"

    def open(self):
        """The commits already there, {shard: commit}; starts the log when
        there is none. Raises ForeignParts, naming the first field that
        differs, when the parts are another job's."""
        job_file = self._at(_JOB)
        if not storage.exists(job_file):
            self.retry(f"writing {job_file}", storage.write_atomic, job_file,
                       json.dumps(self.job, sort_keys=True).encode())
            return {}
        old = json.loads(storage.read_all(job_file))
        diff = _first_difference(old, self.job)
        if diff:
            field, was, now = diff
            raise ForeignParts(
                f"{self.dir}: holds the parts of another job ({field} was {json.dumps(was)}, now "
                f"{json.dumps(now)}); remove it to start this job over")
        done = {}
        for name in storage.list_names(self.dir):
            if name.startswith("part-") and name.endswith(".json"):
                commit = json.loads(storage.read_all(self._at(name)))
                done[commit["shard"]] = commit
        return done

    def commit(self, shard, data, rows, documents, skipped):
        """Writes shard's part (`data`: its bytes; None when it has no row),
        then its commit."""
        part = self._at(f"part-{shard:06d}{self.ext}")
        if data is not None:
            self.retry(f"writing {part}", storage.write_atomic, part, data)
        commit = {"shard": shard, "rows": rows, "documents": documents, "skipped": skipped}
        name = self._at(f"part-{shard:06d}.json")
        self.retry(f"writing {name}", storage.write_atomic, name,
                   json.dumps(commit, ensure_ascii=False).encode())
        return commit

    def join(self, commits):
        """Joins the parts of `commits` (every shard's, in shard order) into
        the output, which appears only when complete; retried whole."""
        self.retry(f"writing {self.output}", self._join, [c for c in commits if c["rows"]])
        if not storage.is_uri(self.output):
            storage.sync_directory(os.path.dirname(os.path.abspath(self.output)))

    def _part(self, commit):
        return self._at(f"part-{commit['shard']:06d}{self.ext}")

    def _join(self, commits):
        local = not storage.is_uri(self.output) or self.output.startswith("file://")
        path = self.output[len("file://"):] if self.output.startswith("file://") else self.output
        if local:
            partial = path + ".partial"
            with open(partial, "wb") as out:
                self._write_parts(out, commits)
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, path)
            return
        fs, key = storage.resolve(self.output)
        with fs.open_output_stream(key) as out:  # an object store shows it when closed
            self._write_parts(out, commits)

    def _write_parts(self, out, commits):
        if self.fmt == "jsonl":
            for c in commits:
                with storage.open_input(self._part(c)) as f:
                    shutil.copyfileobj(f, out, 8 << 20)
            return
        import pyarrow.parquet as pq
        writer = None
        for c in commits:
            table = pq.read_table(io.BytesIO(storage.read_all(self._part(c))))
            if writer is None:
                writer = pq.ParquetWriter(out, table.schema)
            writer.write_table(table)
        if writer is not None:
            writer.close()

    def remove(self):
        self.retry(f"removing {self.dir}", storage.remove_tree, self.dir)
