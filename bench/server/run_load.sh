#!/usr/bin/env bash
# The serving benchmark of docs/BENCHMARKS.md ("tessera serve under load").
# Usage: bench/server/run_load.sh BUILD_DIR [SECONDS_PER_LEVEL] [SOAK_REQUESTS]
#        (env: CAPACITY_REQUESTS, default 1000; SERVE_ARGS)
#   1. capacity: closed loop, 32 connections, batching on (default flags);
#   2. open loop at 0.5x, 1x and 2x that capacity (SECONDS_PER_LEVEL each);
#   3. batching off (--max-batch-sequences 1): closed-loop capacity again;
#   4. soak (when SOAK_REQUESTS > 0): that many requests, RSS after a warm-up
#      of 5% and at the end.
# Each line printed is the load client's JSON. The server admits 64 requests
# (SERVE_ARGS overrides): at 2x, the queue holds at most 64 and the rest is
# answered 429 at once; the open-loop client keeps 256 connections so that
# it never runs out of them before the server's limit bites.
# Under overload and slowloris at once: bench/server/fault_load.py.
set -euo pipefail
build=${1:?usage: run_load.sh BUILD_DIR [SECONDS_PER_LEVEL] [SOAK_REQUESTS]}
seconds=${2:-30}
soak=${3:-0}
tessera="$build/tessera"
load="$build/bench/server/tessera_load"
client_args=(--connections 32 --inputs 1 --min-words 8 --max-words 48)

start_server() {  # sets server_pid and port
  local log
  log=$(mktemp)
  # shellcheck disable=SC2086
  "$tessera" serve --port 0 ${SERVE_ARGS:---max-concurrent-requests 64} "$@" >"$log" 2>"$log.err" &
  server_pid=$!
  while ! grep -q "listening on" "$log"; do
    kill -0 "$server_pid" 2>/dev/null || { cat "$log.err" >&2; exit 1; }
    sleep 0.2
  done
  port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$log")
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid"
}

run() { "$load" --port "$port" "${client_args[@]}" "$@"; }
ok_rate() { sed -n 's/.*"ok_per_second":\([0-9.e+-]*\).*/\1/p'; }

echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(date -u +%FT%TZ)"
start_server
run --requests 300 >/dev/null  # warm-up: first batches, allocator, page faults
capacity_line=$(run --requests "${CAPACITY_REQUESTS:-1000}")
echo "capacity $capacity_line"
capacity=$(echo "$capacity_line" | ok_rate)
for factor in 0.5 1 2; do
  rate=$(python3 -c "print($capacity * $factor)")
  n=$(python3 -c "print(int($rate * $seconds))")
  echo "open-loop x$factor $(run --rate "$rate" --requests "$n" --connections 256)"
done
if ((soak > 0)); then
  echo "soak-warmup $(run --requests $((soak / 20)) --min-words 4 --max-words 16)"
  echo "soak $(run --requests "$soak" --min-words 4 --max-words 16)"
fi
stop_server

start_server --max-batch-sequences 1
run --requests 300 >/dev/null
echo "batching-off $(run --requests "${CAPACITY_REQUESTS:-1000}")"
stop_server
