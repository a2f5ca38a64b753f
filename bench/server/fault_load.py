#!/usr/bin/env python3
"""fault_load.py: `tessera serve` under overload and hostile connections at once.

    python3 bench/server/fault_load.py build/release            # 60 s, defaults
    python3 bench/server/fault_load.py build/release --duration 20 --measure-capacity

What it does (issue 35, "Hostile input II"):
  1. Starts `tessera --threads 2 --memory-budget 1G serve --port 0` from a copy
     of BUILD_DIR/tessera (a rebuild during the run cannot pull it away), with
     RLIMIT_NOFILE raised to its hard limit, and reads the bound port from the
     "listening on http://HOST:PORT" line.
  2. Capacity C: the documented 94 requests/s (docs/BENCHMARKS.md, "tessera
     serve under load"), --capacity, or measured as run_load.sh does
     (--measure-capacity: closed loop, 32 connections, one 8-48 word text).
  3. Opens the hostile connections, spread over --ramp seconds, and holds them
     for the whole run: --slow (1,000) send a valid request head one byte every
     ~--slow-interval seconds and never the body; --silent (100) connect and
     send nothing. When the server ends one, it reconnects at once.
  4. Then, for --duration seconds, round(--factor x C) well-behaved clients
     (closed loop, one kept-alive connection each, Retry-After honoured) pick:
       POST /embed            55%  1-8 texts of 4-24 words
       POST /tokenize         20%  8-48 words;   5%: ~100 KB of text
       POST /embed_documents  20%  1-4 documents of 50-400 words
     and one more client sends a ~1.5 MB document to /embed_documents now and
     then (--big-doc-every). A fresh connection asks GET /health every second;
     /proc/PID/status (VmRSS, VmHWM) is sampled every 100 ms.
  5. Lets the requests in flight finish (each within its timeout; a 1.5 MB
     document still running is cancelled and counted "unfinished"), stops the
     server with SIGTERM, and reports.

Report: a human table on stderr and one JSON object on stdout: per request
kind and per route, answers by status, p50/p99/max latency of the 200s, the
share of 429+503, timeouts, transport errors; /health latency; how the
hostile connections ended and how long the server let them live; the server's
peak RSS (VmHWM) against --memory-budget + model weights + --rss-overhead-mib;
and how late this client's own event loop ran (if that is large, the figures
measure the client, not the server).

Exit status: 0 when every check passes, 1 when one fails, 2 when the server
could not be started. The checks: a well-behaved client got only 200, 413,
429 or 503, with no transport error and no timeout (--request-timeout; the
1.5 MB document: --big-doc-timeout); the server did not die; every /health
answered 200 within --health-max-ms; VmHWM stayed within the bound.

Why asyncio over raw sockets: a slow client must write one byte at a time and
a silent one nothing, which no HTTP library does, and ~1,500 connections are
cheap as coroutines where threads would contend with the server for the same
two cores. Stdlib only (Python 3.11+: asyncio.timeout).
"""
import argparse
import asyncio
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import fault_workload as wl

DOCUMENTED_CAPACITY = 94.0  # requests/s: docs/BENCHMARKS.md, "tessera serve under load"
EXPECTED_STATUSES = {200, 413, 429, 503}
SAMPLE_SECONDS = 0.1        # /proc sampling and event-loop lag probe period
HEALTH_PERIOD = 1.0
START_TIMEOUT = 120.0       # seconds for the server to print its port
STOP_TIMEOUT = 30.0         # seconds for SIGTERM to end the server, then SIGKILL
BINARY_WAIT = 120.0         # seconds to wait for a binary being rebuilt
BIG_DOC_GRACE = 5.0         # seconds a 1.5 MB document may run past the end
MIB = 1 << 20


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("build_dir", nargs="?", default="build/release",
                   help="holds the tessera binary")
    p.add_argument("--duration", type=float, default=60, help="seconds of well-behaved load")
    p.add_argument("--capacity", type=float, default=DOCUMENTED_CAPACITY,
                   help="requests/s the load is a multiple of")
    p.add_argument("--measure-capacity", action="store_true",
                   help="measure the capacity first instead of --capacity")
    p.add_argument("--capacity-seconds", type=float, default=10)
    p.add_argument("--factor", type=float, default=4,
                   help="well-behaved clients = factor x capacity")
    p.add_argument("--slow", type=int, default=1000, help="connections dribbling a head")
    p.add_argument("--silent", type=int, default=100, help="connections that send nothing")
    p.add_argument("--slow-interval", type=float, default=3, help="seconds between dribbled bytes")
    p.add_argument("--ramp", type=float, default=5, help="seconds to open the hostile connections")
    p.add_argument("--request-timeout", type=float, default=60)
    p.add_argument("--big-doc-every", type=float, default=30,
                   help="seconds between the 1.5 MB documents (one at a time)")
    p.add_argument("--big-doc-timeout", type=float, default=600)
    p.add_argument("--health-timeout", type=float, default=10)
    p.add_argument("--health-max-ms", type=float, default=1000, help="slowest /health allowed")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--memory-budget", default="1G")
    p.add_argument("--rss-overhead-mib", type=float, default=256,
                   help="RSS allowed beyond budget + weights (code, stacks, allocator)")
    p.add_argument("--serve-arg", action="append", default=[],
                   help="extra argument after `serve` (repeat: --serve-arg=--http-threads=2048)")
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args()


def raise_nofile_limit() -> None:
    """Soft RLIMIT_NOFILE up to the hard one (here and, as preexec_fn, in the server)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def size_bytes(text: str) -> int:
    """'1G', '512M', '64K' or a byte count, as tessera reads --memory-budget."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)i?B?", text.strip(), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text}")
    return int(float(m[1]) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m[2].upper()])


@dataclass
class Server:
    """The tessera process: started from a private copy, sampled, stopped."""
    proc: subprocess.Popen
    port: int
    weights_mib: float
    log: Path
    rss_peak_mib: float = 0.0
    hwm_mib: float = 0.0
    rss_by_second: list[float] = field(default_factory=list)
    died_at: float | None = None  # seconds into the run

    def status_mib(self) -> dict[str, float]:
        out = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0]) / 1024  # kB
        return out


async def start_server(args: argparse.Namespace, workdir: Path) -> Server:
    source = Path(args.build_dir) / "tessera"
    binary = workdir / "tessera"
    for attempt in range(3):
        waited = 0.0
        while not os.access(source, os.X_OK) and waited < BINARY_WAIT:  # being rebuilt
            await asyncio.sleep(1)
            waited += 1
        shutil.copy2(source, binary)
        log = workdir / f"server{attempt}.log"
        cmd = [str(binary), "--threads", str(args.threads), "--memory-budget",
               args.memory_budget, "serve", "--port", "0", *args.serve_arg]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                    preexec_fn=raise_nofile_limit)
        t0 = time.monotonic()
        while proc.poll() is None and time.monotonic() - t0 < START_TIMEOUT:
            text = log.read_text(errors="replace")
            port = re.search(r"listening on http://[^:\s]+:(\d+)", text)
            if port:
                weights = re.search(r"weights \w+, ([\d.]+) MiB", text)
                return Server(proc, int(port[1]), float(weights[1]) if weights else 0.0, log)
            await asyncio.sleep(0.2)
        proc.kill()
        proc.wait()
        print(f"tessera did not start ({' '.join(cmd)}):\n{log.read_text(errors='replace')}",
              file=sys.stderr)
        await asyncio.sleep(5)  # a half-written binary: try a fresh copy
    raise SystemExit(2)


async def sample_server(server: Server, started: float, stop: asyncio.Event) -> None:
    """RSS every SAMPLE_SECONDS; notes when the process is gone."""
    while not stop.is_set():
        if server.proc.poll() is not None:
            server.died_at = time.monotonic() - started
            stop.set()
            return
        try:
            mib = server.status_mib()
        except OSError:  # exiting between poll() and open()
            mib = {}
        server.rss_peak_mib = max(server.rss_peak_mib, mib.get("VmRSS", 0))
        server.hwm_mib = max(server.hwm_mib, mib.get("VmHWM", 0))
        second = int(time.monotonic() - started)
        while len(server.rss_by_second) <= second:
            server.rss_by_second.append(0.0)
        server.rss_by_second[second] = max(server.rss_by_second[second], mib.get("VmRSS", 0))
        await asyncio.sleep(SAMPLE_SECONDS)


async def watch_loop_lag(lags: list[float], stop: asyncio.Event) -> None:
    """How late this process's event loop wakes up: the client's own saturation."""
    while not stop.is_set():
        t0 = time.monotonic()
        await asyncio.sleep(SAMPLE_SECONDS)
        lags.append(time.monotonic() - t0 - SAMPLE_SECONDS)


async def probe_health(stats: wl.HealthStats, load: wl.Run, timeout: float) -> None:
    """GET /health on a fresh connection every HEALTH_PERIOD while the load runs."""
    started = time.monotonic()
    probes = []
    while load.running():
        probes.append(asyncio.create_task(
            wl.health_probe(stats, load.host, load.port, timeout, started)))
        await asyncio.sleep(HEALTH_PERIOD)
    await asyncio.gather(*probes)


async def hostile_connections(args, port: int, stats: wl.HostileStats) -> list[asyncio.Task]:
    """The slow and silent connections, opened evenly over --ramp seconds."""
    total = args.slow + args.silent
    tasks = []
    for i in range(total):
        interval = args.slow_interval if i < args.slow else None
        rng = random.Random(args.seed * 1_000_003 + i)
        tasks.append(asyncio.create_task(
            wl.hold_connection(stats, "127.0.0.1", port, rng, interval)))
        await asyncio.sleep(args.ramp / max(total, 1))
    return tasks


async def run(args: argparse.Namespace, workdir: Path) -> dict:
    requests = wl.build_requests(args.seed)
    server = await start_server(args, workdir)
    port = server.port
    stop = asyncio.Event()
    started = time.monotonic()
    sampler = asyncio.create_task(sample_server(server, started, stop))

    # Warm-up (first batches, allocator, page faults), then the capacity.
    await wl.closed_loop_capacity("127.0.0.1", port, 8, 3.0, args.seed)
    capacity = args.capacity
    if args.measure_capacity:
        capacity = await wl.closed_loop_capacity("127.0.0.1", port, 32,
                                                 args.capacity_seconds, args.seed)
    clients = max(1, round(args.factor * capacity))

    hostile = wl.HostileStats()
    hostile_tasks = await hostile_connections(args, port, hostile)
    hostile_by_second = []
    lags: list[float] = []
    lag_task = asyncio.create_task(watch_loop_lag(lags, stop))

    load = wl.Run("127.0.0.1", port, requests, args.request_timeout)
    load.deadline = time.monotonic() + args.duration
    window_start = time.monotonic()
    health = wl.HealthStats()
    health_task = asyncio.create_task(probe_health(health, load, args.health_timeout))
    closed = [asyncio.create_task(wl.well_behaved_client(load, args.seed * 7919 + c))
              for c in range(clients)]
    first_big = min(args.big_doc_every / 2, args.duration / 4)
    big = asyncio.create_task(_after(first_big, wl.big_document_client(
        load, args.seed, args.big_doc_every, args.big_doc_timeout)))

    while load.running() and not stop.is_set():
        hostile_by_second.append(hostile.open_now)
        await asyncio.sleep(1.0)
    load.deadline = min(load.deadline, time.monotonic())  # the server may have died
    # Requests in flight finish or time out; a 1.5 MB document is cut short.
    await asyncio.wait(closed, timeout=args.request_timeout + 1)
    await asyncio.wait([big], timeout=BIG_DOC_GRACE)
    for t in [*closed, big, *hostile_tasks]:
        t.cancel()
    await asyncio.gather(*closed, big, *hostile_tasks, return_exceptions=True)
    await health_task
    stop.set()
    await asyncio.gather(sampler, lag_task)
    shutdown = stop_server(server)
    return summarize(args, capacity, clients, server, shutdown, load, health, hostile,
                     hostile_by_second, lags, window_start - started)


async def _after(delay: float, coro) -> None:
    await asyncio.sleep(delay)
    await coro


def stop_server(server: Server) -> dict:
    """SIGTERM (SIGKILL after STOP_TIMEOUT); the log's tail when it did not end well."""
    t0 = time.monotonic()
    killed = False
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()
            killed = True
    out = {"exit_code": server.proc.returncode, "seconds": round(time.monotonic() - t0, 2),
           "killed": killed}
    if killed or server.proc.returncode != 0 or server.died_at is not None:
        out["log_tail"] = server.log.read_text(errors="replace").splitlines()[-20:]
    return out


def requests_summary(route: str, st: wl.KindStats) -> dict:
    answered = sum(st.status.values())
    return {
        "route": route,
        "answered": answered,
        "status": {str(k): v for k, v in sorted(st.status.items())},
        "other_status": sum(v for k, v in st.status.items() if k not in EXPECTED_STATUSES),
        "p50_ms": wl.percentile_ms(st.ok_seconds, 0.50),
        "p99_ms": wl.percentile_ms(st.ok_seconds, 0.99),
        "max_ms": wl.percentile_ms(st.ok_seconds, 1.0),
        "refused_share": (round((st.status[429] + st.status[503]) / answered, 4)
                          if answered else None),
        "timeouts": st.timeouts,
        "transport_errors": dict(st.transport),
        "unfinished": st.unfinished,
    }


def summarize(args, capacity, clients, server, shutdown, load, health, hostile,
              hostile_by_second, lags, window_offset) -> dict:
    kinds = {k.name: requests_summary(k.route, load.stats[k.name]) for k in wl.KINDS}
    by_route: dict[str, wl.KindStats] = {}
    for k in wl.KINDS:
        by_route.setdefault(k.route, wl.KindStats()).add(load.stats[k.name])
    routes = {r: requests_summary(r, st) for r, st in by_route.items()}
    bound = size_bytes(args.memory_budget) / MIB + server.weights_mib + args.rss_overhead_mib
    health_max = wl.percentile_ms(health.seconds, 1.0)
    health_failed = sum(health.failures.values()) + sum(
        v for k, v in health.status.items() if k != 200)
    total = wl.KindStats()
    for st in by_route.values():
        total.add(st)
    checks = {
        "only_expected_statuses": all(r["other_status"] == 0 for r in routes.values()),
        "no_transport_errors": not total.transport,
        "no_timeouts": total.timeouts == 0,
        "server_alive": server.died_at is None,
        "health_fast": health_failed == 0 and (health_max or 0) <= args.health_max_ms,
        "rss_within_bound": server.hwm_mib <= bound,
    }
    held = hostile.held_seconds
    window = slice(int(window_offset), None)
    return {
        "config": {"duration_s": args.duration, "capacity_rps": round(capacity, 1),
                   "capacity_measured": args.measure_capacity, "clients": clients,
                   "slow": args.slow, "silent": args.silent, "slow_interval_s": args.slow_interval,
                   "threads": args.threads, "memory_budget": args.memory_budget,
                   "serve_args": args.serve_arg, "cpus": os.cpu_count(),
                   "load_average": os.getloadavg()[0]},
        "kinds": kinds,
        "routes": routes,
        "stale_keepalive_retries": load.stale_retries,
        "health": {"probes": len(health.seconds) + health_failed,
                   "p50_ms": wl.percentile_ms(health.seconds, 0.5),
                   "p99_ms": wl.percentile_ms(health.seconds, 0.99), "max_ms": health_max,
                   "slowest_at_s": round(health.slowest_at, 1),
                   "status": {str(k): v for k, v in health.status.items()},
                   "failures": dict(health.failures),
                   "ms_by_probe": [ms for _, ms in sorted(health.timeline)]},
        "hostile": {"open_by_second": hostile_by_second, "connects": hostile.connects,
                    "connect_failures": dict(hostile.connect_failures),
                    "ended": dict(hostile.ended),
                    "held_p50_s": _seconds(held, 0.5), "held_max_s": _seconds(held, 1.0)},
        "server": {"died_at_s": server.died_at, "shutdown": shutdown,
                   "vmhwm_mib": round(server.hwm_mib, 1),
                   "rss_peak_mib": round(server.rss_peak_mib, 1),
                   "rss_bound_mib": round(bound, 1), "weights_mib": server.weights_mib,
                   "rss_mib_by_second": [round(m, 1) for m in server.rss_by_second[window]]},
        "client_loop_lag_ms": {"p99": wl.percentile_ms(lags, 0.99),
                               "max": wl.percentile_ms(lags, 1.0)},
        "checks": checks,
        "passed": all(checks.values()),
    }


def _seconds(values: list[float], p: float) -> float | None:
    ms = wl.percentile_ms(values, p)
    return None if ms is None else round(ms / 1000, 1)


def print_table(s: dict) -> None:
    out = sys.stderr
    c = s["config"]
    print(f"\n{c['clients']} well-behaved clients (capacity {c['capacity_rps']} req/s x factor), "
          f"{c['slow']} slow + {c['silent']} silent connections, {c['duration_s']:.0f} s; "
          f"{c['cpus']} CPUs, load {c['load_average']:.1f}", file=out)
    cols = ("answered", "200", "413", "429", "503", "other", "timeout", "transport", "unfinished",
            "p50 ms", "p99 ms", "max ms", "refused")
    print(f"{'':30}" + "".join(f"{h:>11}" for h in cols), file=out)
    rows = [(f"{v['route']} [{k}]", v) for k, v in s["kinds"].items()]
    rows += [(f"{r} (all)", v) for r, v in s["routes"].items()]
    for name, v in rows:
        st = v["status"]
        cells = (v["answered"], st.get("200", 0), st.get("413", 0), st.get("429", 0),
                 st.get("503", 0), v["other_status"], v["timeouts"],
                 sum(v["transport_errors"].values()), v["unfinished"], v["p50_ms"], v["p99_ms"],
                 v["max_ms"], "-" if v["refused_share"] is None else f"{v['refused_share']:.1%}")
        print(f"{name:30}" + "".join(f"{'-' if x is None else x:>11}" for x in cells), file=out)
    h, ho, sv = s["health"], s["hostile"], s["server"]
    print(f"GET /health: {h['probes']} probes, p50 {h['p50_ms']} ms, p99 {h['p99_ms']} ms, "
          f"max {h['max_ms']} ms (at {h['slowest_at_s']} s), failures {h['failures']}", file=out)
    opened = ho["open_by_second"]
    print(f"hostile: open {min(opened, default=0)}..{max(opened, default=0)}, "
          f"{ho['connects']} connects, ended {ho['ended']}, held p50 {ho['held_p50_s']} s "
          f"max {ho['held_max_s']} s, connect failures {ho['connect_failures']}", file=out)
    print(f"server: VmHWM {sv['vmhwm_mib']} MiB (bound {sv['rss_bound_mib']}), "
          f"died at {sv['died_at_s']}, shutdown {sv['shutdown']}", file=out)
    print(f"client loop lag: {s['client_loop_lag_ms']}; "
          f"stale keep-alive retries {s['stale_keepalive_retries']}", file=out)
    failed = [k for k, ok in s["checks"].items() if not ok]
    print("PASS" if s["passed"] else f"FAIL: {', '.join(failed)}", file=out)


def main() -> int:
    args = parse_args()
    raise_nofile_limit()
    needed = args.slow + args.silent + round(args.factor * max(args.capacity, 100)) + 256
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        print(f"warning: RLIMIT_NOFILE {soft} < ~{needed} connections", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="fault_load.") as workdir:
        summary = asyncio.run(run(args, Path(workdir)))
    print_table(summary)
    print(json.dumps(summary))
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
