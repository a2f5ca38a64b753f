"""tessera.ray's commit log: a job's output as idempotent parts, one per
shard, then one file (docs/DECISIONS.md, "tessera.ray: a resumable driver").

    OUTPUT.parts/job.json           the job's fingerprint (inputs, plan, options)
    OUTPUT.parts/part-000012.jsonl  shard 12's rows (.parquet for Parquet output)
    OUTPUT.parts/part-000012.json   its commit: rows, documents, skipped documents,
                                    and the part's size and sha256

A shard's part is a pure function of the shard (its rows are), so writing it
twice writes the same bytes; each file is written whole or not at all
(_ray_storage.write_atomic), the data before the commit that names it. A
shard is done when its commit exists. A driver that dies loses only the
shards it had not committed: the same command run again finds job.json,
checks that it describes the same job, checks every commit against the plan
and every part against its commit's size and digest (a part damaged since,
or a commit that cannot be read, makes its shard run again; a commit naming
a shard the plan does not have is refused, naming it), and embeds only the
rest. When every
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
    """OUTPUT.parts holds another job's parts, or parts no job could have made."""


_COMMIT_FIELDS = {"shard": int, "rows": int, "documents": int, "skipped": list, "bytes": int,
                  "sha256": (str, type(None))}


def fingerprint(inputs, batch_size, options):
    """What makes two runs the same job: every input file's location, size
    and modification time (the shard plan follows from them and batch_size),
    batch_size and the row options (a dict of JSON values)."""
    return {"version": 2, "inputs": [[loc, *storage.describe(loc)[1:]] for loc in inputs],
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


def _commit_problem(commit, name):
    """Why `commit` (read from file `name`) cannot be a commit, or None."""
    if not isinstance(commit, dict):
        return "not a JSON object"
    for field, kind in _COMMIT_FIELDS.items():
        if field not in commit:
            return f"no field '{field}'"
        value = commit[field]
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"field '{field}' = {json.dumps(value)[:40]} has the wrong type"
    if name != f"part-{commit['shard']:06d}.json":
        return f"names shard {commit['shard']}"
    if commit["rows"] < 0 or commit["documents"] < 0 or commit["bytes"] < 0:
        return "a negative count"
    if commit["rows"] > 0 and commit["sha256"] is None:
        return "rows but no sha256"
    return None


class Parts:
    """The parts of one output. `retry` is a _ray_storage.Retrying."""

    def __init__(self, output, fmt, job, retry, warn=None):
        self.output, self.fmt, self.job, self.retry = output, fmt, job, retry
        self.warn = warn or (lambda line: None)
        self.dir = output + ".parts"
        self.ext = ".parquet" if fmt == "parquet" else ".jsonl"

    def _at(self, name):
        return f"{self.dir}/{name}"

    def open(self, shards):
        """The commits already there that hold, {shard: commit}, for a plan of
        `shards` shards; starts the log when there is none. Raises
        ForeignParts, naming the first field that differs, when the parts
        are another job's, or naming the file, when job.json cannot be read
        or a commit names a shard the plan does not have. A commit that
        cannot be read, or whose part is missing or not the size and digest
        it recorded, is left out (its shard runs again) and told to warn."""
        job_file = self._at(_JOB)
        if not storage.exists(job_file):
            self.retry(f"writing {job_file}", storage.write_atomic, job_file,
                       json.dumps(self.job, sort_keys=True).encode())
            return {}
        try:
            old = json.loads(storage.read_all(job_file))
        except (ValueError, UnicodeDecodeError) as e:
            raise ForeignParts(f"{job_file}: damaged ({e}); remove {self.dir} to start this job "
                               "over") from None
        if not isinstance(old, dict):
            raise ForeignParts(f"{job_file}: damaged (not a JSON object); remove {self.dir} to "
                               "start this job over")
        diff = _first_difference(old, self.job)
        if diff:
            field, was, now = diff
            raise ForeignParts(
                f"{self.dir}: holds the parts of another job ({field} was {json.dumps(was)}, now "
                f"{json.dumps(now)}); remove it to start this job over")
        done = {}
        for name in storage.list_names(self.dir):
            if name.startswith("part-") and name.endswith(".json"):
                commit = self._checked_commit(name, shards)
                if commit is not None:
                    done[commit["shard"]] = commit
        return done

    def _checked_commit(self, name, shards):
        """The commit in `name` when it and its part hold; None (warned) when
        its shard must run again."""
        location = self._at(name)
        try:
            commit = json.loads(storage.read_all(location))
            problem = _commit_problem(commit, name)
        except (ValueError, UnicodeDecodeError) as e:
            problem = f"not JSON ({e})"
        if problem:
            self.warn(f"{location}: damaged commit ({problem}); its shard runs again")
            return None
        if not 0 <= commit["shard"] < shards:
            raise ForeignParts(f"{location}: names shard {commit['shard']}, but this job has "
                               f"{shards} shards (0..{shards - 1}); no run of it wrote this "
                               f"file: remove it, or {self.dir} to start this job over")
        if commit["rows"] == 0:
            return commit
        part = self._part(commit)
        try:
            data = storage.read_all(part)
        except (OSError, FileNotFoundError):
            data = None
        if data is None:
            problem = "missing"
        elif len(data) != commit["bytes"]:
            problem = f"{len(data)} bytes, its commit says {commit['bytes']}"
        elif hashlib.sha256(data).hexdigest() != commit["sha256"]:
            problem = "its sha256 differs from its commit's"
        if problem:
            self.warn(f"{part}: damaged part ({problem}); shard {commit['shard']} runs again")
            return None
        return commit

    def commit(self, shard, data, rows, documents, skipped):
        """Writes shard's part (`data`: its bytes; None when it has no row),
        then its commit."""
        part = self._at(f"part-{shard:06d}{self.ext}")
        if data is not None:
            self.retry(f"writing {part}", storage.write_atomic, part, data)
        commit = {"shard": shard, "rows": rows, "documents": documents, "skipped": skipped,
                  "bytes": 0 if data is None else len(data),
                  "sha256": None if data is None else hashlib.sha256(data).hexdigest()}
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
