"""The requests and the clients of fault_load.py.

Well-behaved clients send the request kinds of KINDS (bodies as
src/server/request_parse.h defines them) closed loop on kept-alive
connections; the hostile ones dribble a request head a byte at a time or
connect and say nothing. Each coroutine adds to a stats object; none prints.
"""
import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from fault_http import Connection, TransportError, error_kind, parse_head, request_bytes

# The word list of load_client.cc: ASCII, accents, CJK, Greek, an emoji.
WORDS = ("the model embeds documents into vectors attention server batch queue latency "
         "memory token sentence quick brown fox jumps over lazy dog search index retrieval "
         "semantic similar meaning question answer paris london numbers 1984 3.14 co-operate "
         "naïve café 東京 données ελληνικά emoji 🙂").split()

BODIES_PER_KIND = 32      # distinct bodies of each small kind, picked at random
LARGE_BODIES = 2          # distinct bodies of each large kind (they take a while to build)
MAX_RETRY_AFTER = 5.0     # seconds a well-behaved client honours of a Retry-After
SLOW_CONNECT_TIMEOUT = 10.0
# What a slow client dribbles: a valid head announcing a body it never sends.
SLOW_HEAD = (b"POST /embed HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"Content-Length: 40\r\n\r\n")


def words_text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def sized_text(rng: random.Random, size: int) -> str:
    """Random words up to about `size` bytes of UTF-8."""
    out, n = [], 0
    while n < size:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w.encode()) + 1
    return " ".join(out)


def json_body(obj) -> bytes:
    # Not ASCII-escaped: a 1.5 MB text must stay under the 2 MB payload limit.
    return json.dumps(obj, ensure_ascii=False).encode()


@dataclass(frozen=True)
class Kind:
    """One kind of well-behaved request: its route, a body maker, its share."""
    name: str
    route: str
    share: float  # of the closed-loop clients' picks; 0: sent by its own client
    make: object  # (rng) -> dict, the JSON body
    bodies: int = BODIES_PER_KIND


KINDS = (
    Kind("embed", "/embed", 0.55,
         lambda r: {"inputs": [words_text(r, 4, 24) for _ in range(r.randint(1, 8))]}),
    Kind("tokenize", "/tokenize", 0.20, lambda r: {"inputs": words_text(r, 8, 48)}),
    Kind("tokenize_100k", "/tokenize", 0.05, lambda r: {"inputs": sized_text(r, 100_000)},
         LARGE_BODIES),
    Kind("documents", "/embed_documents", 0.20,
         lambda r: {"documents": [{"id": f"doc{i}", "text": words_text(r, 50, 400)}
                                  for i in range(r.randint(1, 4))]}),
    # Sent by big_document_client, one at a time, now and then.
    Kind("documents_1m5", "/embed_documents", 0.0,
         lambda r: {"documents": [{"id": "big", "text": sized_text(r, 1_500_000)}]},
         LARGE_BODIES),
)
KIND = {k.name: k for k in KINDS}


def build_requests(seed: int) -> dict[str, list[bytes]]:
    """Whole requests of every kind, built once so that clients only write."""
    rng = random.Random(seed)
    return {k.name: [request_bytes("POST", k.route, json_body(k.make(rng)))
                     for _ in range(k.bodies)] for k in KINDS}


def percentile_ms(seconds: list[float], p: float) -> float | None:
    """Nearest-rank percentile, in milliseconds; None without samples."""
    if not seconds:
        return None
    s = sorted(seconds)
    return round(1000 * s[min(len(s) - 1, int(p * len(s)))], 1)


@dataclass
class KindStats:
    """What the well-behaved requests of one kind got."""
    ok_seconds: list[float] = field(default_factory=list)  # latency of the 200s
    status: Counter = field(default_factory=Counter)
    transport: Counter = field(default_factory=Counter)    # error kind -> count
    timeouts: int = 0
    unfinished: int = 0  # still in flight when the run ended (not timed out)

    def add(self, other: "KindStats") -> None:
        self.ok_seconds += other.ok_seconds
        self.status.update(other.status)
        self.transport.update(other.transport)
        self.timeouts += other.timeouts
        self.unfinished += other.unfinished


@dataclass
class Run:
    """What every client of one run shares: where, until when, and the tallies."""
    host: str
    port: int
    requests: dict[str, list[bytes]]
    request_timeout: float
    deadline: float = 0.0  # time.monotonic() after which no request starts
    stats: dict[str, KindStats] = field(default_factory=lambda: {k.name: KindStats()
                                                                 for k in KINDS})
    stale_retries: int = 0

    def running(self) -> bool:
        return time.monotonic() < self.deadline


async def send_one(run: Run, conn: Connection, kind: str, rng: random.Random,
                   timeout: float) -> None:
    """One request of `kind`, counted; honours Retry-After as a polite client does."""
    stats = run.stats[kind]
    raw = rng.choice(run.requests[kind])
    t0 = time.monotonic()
    before = conn.stale_retries
    try:
        async with asyncio.timeout(timeout):
            answer = await conn.request(raw)
    except TimeoutError:
        conn.close()
        stats.timeouts += 1
        return
    except asyncio.CancelledError:
        stats.unfinished += 1
        raise
    except (OSError, TransportError, asyncio.IncompleteReadError) as e:
        stats.transport[error_kind(e)] += 1
        await asyncio.sleep(0.1)  # no tight reconnect loop against a dead port
        return
    finally:
        run.stale_retries += conn.stale_retries - before
    stats.status[answer.status] += 1
    if answer.status == 200:
        stats.ok_seconds.append(time.monotonic() - t0)
    elif answer.status in (429, 503):
        pause = min(answer.retry_after or 1.0, MAX_RETRY_AFTER)
        await asyncio.sleep(max(0.0, min(pause, run.deadline - time.monotonic())))


async def well_behaved_client(run: Run, seed: int) -> None:
    """Closed loop over the shared kinds on one kept-alive connection."""
    rng = random.Random(seed)
    mixed = [k for k in KINDS if k.share > 0]
    shares = [k.share for k in mixed]
    conn = Connection(run.host, run.port)
    try:
        while run.running():
            kind = rng.choices(mixed, shares)[0]
            await send_one(run, conn, kind.name, rng, run.request_timeout)
    finally:
        conn.close()


async def big_document_client(run: Run, seed: int, every: float, timeout: float) -> None:
    """A ~1.5 MB document, then `every` seconds of quiet, and again."""
    rng = random.Random(seed)
    conn = Connection(run.host, run.port)
    try:
        while run.running():
            await send_one(run, conn, "documents_1m5", rng, timeout)
            await asyncio.sleep(max(0.0, min(every, run.deadline - time.monotonic())))
    finally:
        conn.close()


async def closed_loop_capacity(host: str, port: int, connections: int, seconds: float,
                               seed: int) -> float:
    """Answered-200 requests per second of run_load.sh's capacity step: one
    text of 8-48 words to /embed, `connections` clients back to back."""
    rng = random.Random(seed)
    bodies = [request_bytes("POST", "/embed", json_body({"inputs": words_text(rng, 8, 48)}))
              for _ in range(BODIES_PER_KIND)]
    run = Run(host, port, {"embed": bodies}, request_timeout=60.0)
    run.stats = {"embed": KindStats()}
    run.deadline = time.monotonic() + seconds
    t0 = time.monotonic()

    async def client(i: int) -> None:
        conn, r = Connection(host, port), random.Random(seed + i)
        while run.running():
            await send_one(run, conn, "embed", r, run.request_timeout)
        conn.close()

    await asyncio.gather(*(client(i) for i in range(connections)))
    return len(run.stats["embed"].ok_seconds) / (time.monotonic() - t0)


@dataclass
class HostileStats:
    """Slow and silent connections: how many were held and how they ended."""
    open_now: int = 0
    connects: int = 0
    connect_failures: Counter = field(default_factory=Counter)
    ended: Counter = field(default_factory=Counter)  # "408", "closed", "reset", ...
    held_seconds: list[float] = field(default_factory=list)  # until the server ended it


async def hold_connection(stats: HostileStats, host: str, port: int, rng: random.Random,
                          interval: float | None) -> None:
    """Connects, then dribbles SLOW_HEAD a byte every ~interval seconds
    (interval None: sends nothing) until the server answers or closes.
    Reconnects at once after, as an attacker would."""
    while True:
        try:
            async with asyncio.timeout(SLOW_CONNECT_TIMEOUT):
                reader, writer = await asyncio.open_connection(host, port)
        except (OSError, TimeoutError) as e:
            stats.connect_failures["timeout" if isinstance(e, TimeoutError) else
                                   error_kind(e)] += 1
            await asyncio.sleep(1.0)
            continue
        stats.connects += 1
        stats.open_now += 1
        t0 = time.monotonic()
        try:
            ended = await dribble(reader, writer, rng, interval)
        except (OSError, TransportError) as e:
            ended = error_kind(e)
        finally:
            stats.open_now -= 1
            writer.transport.abort()
        stats.ended[ended] += 1
        stats.held_seconds.append(time.monotonic() - t0)


async def dribble(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                  rng: random.Random, interval: float | None) -> str:
    """How the server ended the connection: its answer's status, or "closed"."""
    sent = 0
    wait = rng.uniform(0, interval) if interval else None  # spread the first bytes
    while True:
        try:
            async with asyncio.timeout(wait):
                data = await reader.read(4096)
        except TimeoutError:
            if sent < len(SLOW_HEAD):
                writer.write(SLOW_HEAD[sent:sent + 1])
                sent += 1
            wait = rng.uniform(0.5, 1.5) * interval
            continue
        if not data:
            return "closed"
        try:
            return str(parse_head(data.split(b"\r\n\r\n")[0])[0])
        except TransportError:
            return "garbage"


@dataclass
class HealthStats:
    seconds: list[float] = field(default_factory=list)  # answered 200
    status: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)  # "timeout", "refused", ...
    slowest_at: float = 0.0  # seconds into the run of the slowest 200
    timeline: list[tuple[float, float | None]] = field(default_factory=list)  # (start, ms)


async def health_probe(stats: HealthStats, host: str, port: int, timeout: float,
                       started: float) -> None:
    """GET /health on a fresh connection; latency includes the connect."""
    conn = Connection(host, port)
    t0 = time.monotonic()
    took = None
    try:
        async with asyncio.timeout(timeout):
            answer = await conn.request(request_bytes("GET", "/health", close=True))
        stats.status[answer.status] += 1
        if answer.status == 200:
            took = time.monotonic() - t0
            if not stats.seconds or took > max(stats.seconds):
                stats.slowest_at = t0 - started
            stats.seconds.append(took)
    except TimeoutError:
        stats.failures["timeout"] += 1
    except (OSError, TransportError, asyncio.IncompleteReadError) as e:
        stats.failures[error_kind(e)] += 1
    finally:
        conn.close()
        ms = None if took is None else round(1000 * took)
        stats.timeline.append((round(t0 - started, 1), ms))
