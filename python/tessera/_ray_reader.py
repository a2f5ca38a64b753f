"""tessera.ray's reader: the shard plan and the documents of a shard, with
`tessera embed`'s input rules, over local paths and pyarrow.fs URIs.

A Python reading of the CLI's rules (src/pipeline/document_reader.h): the C++
DocumentReader reads whole local files and directories in one stream; Ray's
shards are byte ranges of JSONL files and row groups of Parquet files, on
any pyarrow filesystem, which it does not offer (docs/SCALING.md)."""

import json
import os

import numpy as np

from . import _ray_storage as storage

_TEXT_EXTENSIONS = (".txt", ".md")
_KINDS = {".jsonl": "jsonl", ".parquet": "parquet"}


class InputError(ValueError):
    """An input that cannot be planned (missing, unreadable, no documents)."""


# ---------------------------------------------------------------- planning


def _kind(path):
    ext = os.path.splitext(path)[1]
    if ext in _TEXT_EXTENSIONS:
        return "text"
    return _KINDS.get(ext)


def list_inputs(inputs):
    """The input files in reading order, as (path, kind): `tessera embed`'s
    order (a directory expands recursively, sorted by path, to its *.txt, *.md
    and *.jsonl files; here also *.parquet). A file named explicitly is JSONL
    when it ends in .jsonl, Parquet in .parquet, else one text document.
    Raises InputError naming the input that does not exist or holds nothing."""
    if not inputs:
        raise InputError("no inputs: give files or directories")
    files = []
    for given in inputs:
        given = os.fspath(given)
        if given == "-":
            raise InputError("-: standard input cannot be read by Ray workers; give a file")
        if storage.is_uri(given):
            try:
                what = storage.describe(given)[0]
            except OSError as e:
                raise InputError(f"{given}: cannot read: {e}") from e
            if what == "directory":
                found = [p for p in storage.list_files(given) if _kind(p) is not None]
                if not found:
                    raise InputError(f"{given}: directory has no .txt, .md, .jsonl or .parquet "
                                     "files")
                files.extend((p, _kind(p)) for p in found)
            elif what == "file":
                files.append((given, _kind(given) or "text"))
            else:
                raise InputError(f"{given}: no such file or directory")
        elif os.path.isdir(given):
            found = []
            for root, _dirs, names in os.walk(given):
                for name in names:
                    path = os.path.join(root, name)
                    if _kind(path) is not None and os.path.isfile(path):
                        found.append(path)
            if not found:
                raise InputError(f"{given}: directory has no .txt, .md, .jsonl or .parquet files")
            files.extend((p, _kind(p)) for p in sorted(found))
        elif os.path.isfile(given):
            files.append((given, _kind(given) or "text"))
        else:
            raise InputError(f"{given}: no such file or directory")
    return files


def _jsonl_pieces(path, batch_size):
    """(begin byte, end byte, first line number) of runs of at most batch_size
    lines, found with one read of the file."""
    pieces = []
    begin, first, lines_in_piece, offset = 0, 1, 0, 0
    with storage.open_input(path) as f:
        while True:
            block = f.read(16 << 20)
            if not block:
                break
            newlines = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
            # A piece ends after the newline that completes its batch_size-th line.
            k = batch_size - lines_in_piece - 1
            while k < len(newlines):
                end = offset + int(newlines[k]) + 1
                pieces.append((begin, end, first))
                begin, first = end, first + batch_size
                k += batch_size
            lines_in_piece = (lines_in_piece + len(newlines)) % batch_size
            offset += len(block)
    if offset > begin:  # the last piece, or a last line with no newline
        pieces.append((begin, offset, first))
    return pieces


def plan_shards(inputs, batch_size):
    """The job's shards: dicts {"shard", "path", "kind", "begin", "end",
    "first"}: bytes [begin, end) of a JSONL file whose first line is number
    `first` (1-based), row groups [begin, end) of a Parquet file whose first
    row is number `first`, or a whole text file. Small text files are one
    shard each. Deterministic: the same inputs give the same plan."""
    if batch_size < 1:
        raise InputError(f"--batch-size: {batch_size} must be at least 1")
    shards = []
    for path, kind in list_inputs(inputs):
        if kind == "jsonl":
            try:
                pieces = _jsonl_pieces(path, batch_size)
            except OSError as e:
                raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
            shards.extend({"path": path, "kind": kind, "begin": b, "end": e, "first": first}
                          for b, e, first in pieces)
        elif kind == "parquet":
            import pyarrow.parquet as pq
            try:
                meta = pq.ParquetFile(storage.open_input(path)).metadata
            except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds
                raise InputError(f"{path}: not a readable Parquet file: {e}") from e
            group, first = 0, 1
            while group < meta.num_row_groups:
                end, rows = group, 0
                while end < meta.num_row_groups and (rows == 0 or rows +
                                                     meta.row_group(end).num_rows <= batch_size):
                    rows += meta.row_group(end).num_rows
                    end += 1
                shards.append({"path": path, "kind": kind, "begin": group, "end": end,
                               "first": first})
                group, first = end, first + rows
        else:
            shards.append({"path": path, "kind": "text", "begin": 0, "end": -1, "first": 1})
    for i, s in enumerate(shards):
        s["shard"] = i
    return shards


# ---------------------------------------------------------------- reading


def _is_blank(line):
    return line.strip(b" \t\r\n") == b""


def _check_record(record):
    """(text, id or None, problem or None) of one parsed JSONL record, with
    the CLI's rules and messages; the id is None when there is none (or it is
    not a string or a number)."""
    if not isinstance(record, dict):
        kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
            type(record), "number")
        return None, None, f'expected a JSON object {{"id": ..., "text": ...}}, got {kind}'
    doc_id = record.get("id")
    id_ok = not isinstance(doc_id, bool) and isinstance(doc_id, (str, int, float))
    if "text" not in record:
        return None, doc_id if id_ok else None, 'missing "text"'
    text = record["text"]
    if not isinstance(text, str):
        return None, doc_id if id_ok else None, \
            f'"text" must be a string, got {_json_type(text)}'
    if "id" in record and not id_ok:
        return None, None, f'"id" must be a string or a number, got {_json_type(doc_id)}'
    return text, doc_id, None


def _json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(v), type(v).__name__)


def read_shard(shard):
    """The documents of one shard, in order: a list of
    (seq, origin, id, text, problem) where problem is None for a good one."""
    path, kind = shard["path"], shard["kind"]
    docs = []
    if kind == "text":
        try:
            raw = storage.read_all(path)
        except OSError as e:
            return [(0, path, path, None, f"cannot open: {e.strerror or e}")]
        try:
            return [(0, path, path, raw.decode("utf-8"), None)]
        except UnicodeDecodeError as e:
            return [(0, path, path, None, f"invalid UTF-8 at byte {e.start}")]
    if kind == "parquet":
        import pyarrow.parquet as pq
        table = pq.ParquetFile(storage.open_input(path)).read_row_groups(
            range(shard["begin"], shard["end"]))
        if "text" not in table.column_names:
            return [(0, path, path, None, 'no "text" column')]
        texts = table.column("text").to_pylist()
        ids = table.column("id").to_pylist() if "id" in table.column_names else None
        for i, text in enumerate(texts):
            origin = f"{path}:{shard['first'] + i}"
            doc_id = ids[i] if ids is not None and ids[i] is not None else origin
            if not isinstance(text, str):
                docs.append((i, origin, doc_id, None,
                             f'"text" must be a string, got {_json_type(text)}'))
            else:
                docs.append((i, origin, doc_id, text, None))
        return docs
    with storage.open_input(path) as f:
        f.seek(shard["begin"])
        data = f.read(shard["end"] - shard["begin"])
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, raw in enumerate(lines):
        if _is_blank(raw):
            continue
        origin = f"{path}:{shard['first'] + i}"
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            docs.append((i, origin, origin, None, f"invalid UTF-8 at byte {e.start}"))
            continue
        except ValueError as e:
            docs.append((i, origin, origin, None, f"malformed JSON: {e}"))
            continue
        text, doc_id, problem = _check_record(record)
        docs.append((i, origin, origin if doc_id is None else doc_id, text, problem))
    return docs
