"""A minimal HTTP/1.1 client over asyncio streams, for fault_load.py.

Only what a load test against `tessera serve` needs: one request at a time
on a kept-alive connection, bodies read and dropped (Content-Length, chunked,
or up to EOF), and every way an exchange can fail named, so that the report
can count each. Pure stdlib.
"""
import asyncio
import errno
from dataclasses import dataclass

READ_CHUNK = 1 << 20  # bytes read at once when dropping a response body


@dataclass
class Answer:
    status: int
    retry_after: float  # seconds, 0 when the header is absent
    close: bool         # the server closes the connection after this answer


class TransportError(Exception):
    """An exchange that ended without a complete answer.

    kind: a short name for the report ("reset", "eof_before_answer", ...).
    before_answer: no byte of an answer had arrived (a kept-alive connection
    that the server closed as we reused it fails this way).
    """

    def __init__(self, kind: str, before_answer: bool):
        super().__init__(kind)
        self.kind = kind
        self.before_answer = before_answer


def error_kind(e: BaseException) -> str:
    """A short name of a transport failure, for counting."""
    if isinstance(e, TransportError):
        return e.kind
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if isinstance(e, ConnectionResetError):
        return "reset"
    if isinstance(e, BrokenPipeError):
        return "broken_pipe"
    if isinstance(e, OSError) and e.errno is not None:
        return errno.errorcode.get(e.errno, f"errno_{e.errno}").lower()
    return type(e).__name__


def request_bytes(method: str, path: str, body: bytes = b"", close: bool = False) -> bytes:
    """One whole request, head and body, ready to write at once."""
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if body or method == "POST":
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    if close:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """Status and lower-cased headers of a response head (ends with CRLFCRLF)."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise TransportError("bad_status_line", before_answer=False)
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def drop_bytes(reader: asyncio.StreamReader, n: int) -> None:
    while n > 0:
        chunk = await reader.read(min(n, READ_CHUNK))
        if not chunk:
            raise TransportError("eof_in_body", before_answer=False)
        n -= len(chunk)


async def drop_chunked(reader: asyncio.StreamReader) -> None:
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                pass
            return
        await drop_bytes(reader, size + 2)  # the chunk and its CRLF


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    """Reads one response whole and drops its body."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        raise TransportError("eof_before_answer" if not e.partial else "eof_in_head",
                             before_answer=not e.partial) from None
    except asyncio.LimitOverrunError:
        raise TransportError("head_too_long", before_answer=False) from None
    except ConnectionResetError:
        raise TransportError("reset_before_answer", before_answer=True) from None
    status, headers = parse_head(head)
    close = headers.get("connection", "").lower() == "close"
    try:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            await drop_chunked(reader)
        elif "content-length" in headers:
            await drop_bytes(reader, int(headers["content-length"]))
        else:  # delimited by EOF
            while await reader.read(READ_CHUNK):
                pass
            close = True
    except asyncio.IncompleteReadError:
        raise TransportError("eof_in_body", before_answer=False) from None
    except ConnectionResetError:
        raise TransportError("reset_in_body", before_answer=False) from None
    retry_after = headers.get("retry-after", "")
    return Answer(status, float(retry_after) if retry_after.isdigit() else 0.0, close)


class Connection:
    """A kept-alive connection to the server, opened on first use.

    request() retries once, on a fresh connection, a request whose reused
    connection closed before any byte of an answer: the server may close an
    idle kept-alive connection just as we reuse it (what browsers and HTTP
    libraries retry too). Those retries are counted in `stale_retries`.
    """

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.answered = 0  # answers on the current connection
        self.stale_retries = 0

    async def request(self, raw: bytes) -> Answer:
        for attempt in range(2):
            reused = self.writer is not None
            if not reused:
                # asyncio sets TCP_NODELAY on its sockets: a request written
                # at once leaves at once.
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
                self.answered = 0
            try:
                answer = await self._exchange(raw)
            except TransportError as e:
                self.close()
                if e.before_answer and reused and attempt == 0:
                    self.stale_retries += 1
                    continue
                raise
            except BaseException:
                self.close()
                raise
            self.answered += 1
            if answer.close:
                self.close()
            return answer
        raise AssertionError("unreachable")

    async def _exchange(self, raw: bytes) -> Answer:
        try:
            self.writer.write(raw)
            await self.writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            # The server may have answered early (413 before the body) and
            # closed: its answer, if any, is still in our receive buffer.
            # If none is, the server had closed this connection before the
            # request (an idle kept-alive one): no byte of an answer came.
            try:
                return await read_answer(self.reader)
            except (ConnectionResetError, BrokenPipeError) as e:
                raise TransportError("closed_before_request", before_answer=True) from e
        return await read_answer(self.reader)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.transport.abort()
        self.reader = self.writer = None
