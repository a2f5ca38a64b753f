#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, ASan + UBSan) and fuzzes
# each for a fixed time on a copy of its seed corpus. Fails on any crash,
# leak, timeout (1 s per input) or out-of-memory (2 GiB).
#   scripts/fuzz-smoke.sh                 every target, 30 s each
#   FUZZ_SECONDS=600 scripts/fuzz-smoke.sh npy safetensors
# Crash inputs land in build/fuzz/findings/<target>/; a fixed one belongs in
# tests/fuzz/regressions/<target>/, where ctest replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-30}
# FUZZ_CI=1 (the README's test command): a fixed seed and a fixed number of
# runs per target (about 20 s each on these 2-core machines, from the rates of
# the 10-minute runs in docs/RELIABILITY.md) instead of a time limit, so CI
# explores the same inputs on every machine and a green run stays green.
declare -A ci_runs=([npy]=200000 [shape_policy]=80000 [safetensors]=8000 [tokenizer]=12000
                    [model_config]=8000 [document_reader]=70000 [request_parse]=200000
                    [http_framing]=600000)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(npy shape_policy safetensors tokenizer model_config document_reader request_parse
           http_framing)
fi

cmake --preset fuzz >/dev/null
cmake --build build/fuzz --target fuzz_targets

work=build/fuzz/smoke
status=0
for t in "${targets[@]}"; do
  corpus=$work/$t/corpus
  findings=build/fuzz/findings/$t
  rm -rf "$work/$t" "$findings"  # findings of an earlier run would read as this run's
  mkdir -p "$corpus" "$findings"
  cp tests/fuzz/corpus/"$t"/* "$corpus"/  # the fuzzer adds to its corpus: never the repo's
  dict=tests/fuzz/dict/$t.dict
  [ -f "$dict" ] || dict=tests/fuzz/dict/json.dict
  echo "== $t"
  limit=(-max_total_time="$seconds")
  [ "${FUZZ_CI:-0}" = 1 ] && limit=(-runs="${ci_runs[$t]}" -seed=1)
  if ! build/fuzz/tests/fuzz/"${t}"_fuzz "$corpus" -dict="$dict" "${limit[@]}" \
      -timeout=1 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$findings/" 2>"$work/$t.log"; then
    echo "FAIL $t (log: $work/$t.log; inputs: $findings)"
    tail -n 40 "$work/$t.log"
    status=1
  else
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|cov: .*ft:" "$work/$t.log" | tail -n 3
  fi
done
exit $status
