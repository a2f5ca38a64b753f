"""Where tessera.ray reads and writes: local paths, and URIs (s3://, gs://,
hdfs://, file://...) through pyarrow's filesystem layer (pyarrow.fs).

A location is a string: a local path, used as it is, or a URI, opened with
pyarrow.fs.FileSystem.from_uri (credentials and endpoints are pyarrow's: the
usual AWS_* / GOOGLE_* environment variables, AWS_ENDPOINT_URL for an
S3-compatible server). Writes that must not be seen half done go through
write_atomic (a local temporary file renamed into place; one object PUT on
an object store, which no reader sees until it is complete) and are retried
on I/O errors (retrying)."""

import os
import time

_FILESYSTEMS = {}  # (scheme, authority) -> the pyarrow filesystem, one per process


def is_uri(location):
    return "://" in str(location)


def resolve(location):
    """(pyarrow filesystem, path in it) of a URI; (LocalFileSystem, path) of a path.
    One filesystem per scheme and authority (bucket, host) per process: an S3
    client is made once, not per file."""
    import pyarrow.fs as pafs
    location = str(location)
    if not is_uri(location):
        return pafs.LocalFileSystem(), os.path.abspath(location)
    scheme, rest = location.split("://", 1)
    rest = rest.split("?", 1)[0]
    authority = rest.split("/", 1)[0]
    cached = _FILESYSTEMS.get((scheme, authority))
    if cached is None:
        fs, path = pafs.FileSystem.from_uri(location)
        # s3://b/k and file:///x name their path whole (b/k, /x); hdfs://h:1/x
        # keeps the authority out of it (/x).
        cached = _FILESYSTEMS[(scheme, authority)] = (fs, rest.startswith(path))
    fs, whole = cached
    path = rest if whole else "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    return fs, path.rstrip("/") or "/"


def _prefix(uri):
    """What goes before a filesystem path to make it a URI like `uri`."""
    scheme, rest = uri.split("://", 1)
    resolve(uri)
    whole = _FILESYSTEMS[(scheme, rest.split("?", 1)[0].split("/", 1)[0])][1]
    return f"{scheme}://" if whole else f"{scheme}://{rest.split('/', 1)[0]}"


def describe(location):
    """("file" | "directory" | None, size, mtime in ns or None) of a location."""
    import pyarrow.fs as pafs
    fs, path = resolve(location)
    info = fs.get_file_info(path)
    kind = {pafs.FileType.File: "file", pafs.FileType.Directory: "directory"}.get(info.type)
    mtime = info.mtime_ns if kind == "file" else None
    return kind, info.size if kind == "file" else None, mtime


def list_files(uri):
    """The files under a directory URI, recursively, as URIs, sorted."""
    import pyarrow.fs as pafs
    fs, path = resolve(uri)
    infos = fs.get_file_info(pafs.FileSelector(path, recursive=True))
    prefix = _prefix(uri)
    return sorted(prefix + i.path for i in infos if i.type == pafs.FileType.File)


def open_input(location):
    """A seekable binary file of a location (read_at / seek / read)."""
    if not is_uri(location):
        return open(location, "rb")
    fs, path = resolve(location)
    return fs.open_input_file(path)


def read_all(location):
    with open_input(location) as f:
        return f.read()


def exists(location):
    return describe(location)[0] is not None


def list_names(directory):
    """The names of the files directly in a directory ([] when it does not exist)."""
    import pyarrow.fs as pafs
    fs, path = resolve(directory)
    infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    return sorted(os.path.basename(i.path) for i in infos if i.type == pafs.FileType.File)


def write_atomic(location, data):
    """Writes `data` (bytes) to a location so that no reader sees part of it:
    locally a temporary file beside it, fsynced and renamed; on an object
    store one upload, which becomes visible only when complete."""
    if is_uri(location) and not location.startswith("file://"):
        fs, path = resolve(location)
        with fs.open_output_stream(path) as out:
            out.write(data)
        return
    path = location[len("file://"):] if location.startswith("file://") else location
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def sync_directory(directory):
    """Makes a local directory's renames durable (nothing to do on a store)."""
    if is_uri(directory) and not directory.startswith("file://"):
        return
    path = directory[len("file://"):] if directory.startswith("file://") else directory
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_tree(directory):
    import shutil
    if is_uri(directory) and not directory.startswith("file://"):
        fs, path = resolve(directory)
        fs.delete_dir(path)
        return
    shutil.rmtree(directory[len("file://"):] if directory.startswith("file://") else directory,
                  ignore_errors=True)


class Retrying:
    """Runs writes again when they fail with an I/O error: `attempts` tries in
    all, `backoff` seconds before the first retry, doubling after. Each retry
    is told to `log` (one line naming the location and the error) and
    counted in `retries`. pyarrow's S3 client retries a request on its own
    first (AWS standard retry: 3 attempts); this covers what it gives up on,
    such as an object store that stays unavailable for a few seconds."""

    def __init__(self, attempts=4, backoff=0.5, log=None):
        self.attempts, self.backoff, self.log = max(1, attempts), backoff, log
        self.retries = 0

    def __call__(self, what, fn, *args):
        delay = self.backoff
        for attempt in range(1, self.attempts + 1):
            try:
                return fn(*args)
            except OSError as e:
                if attempt == self.attempts:
                    raise OSError(f"{what}: failed {attempt} times; the last error: {e}") from e
                self.retries += 1
                if self.log is not None:
                    self.log(f"{what} failed ({type(e).__name__}: {e}); retry {attempt} of "
                             f"{self.attempts - 1} in {delay:g} s")
                time.sleep(delay)
                delay *= 2
        return None
