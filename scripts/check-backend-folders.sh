#!/usr/bin/env bash
# Shows that a backend is one folder (issue 20), on copies of this tree:
#   toy     add docs/examples/toy_backend as src/backends/toy/, build; the toy is
#           listed, explained and passes `tessera verify` and its own tests, and
#           `git status` in the copy shows only src/backends/toy/ changed.
#   delete  for each backend folder but reference: a copy without it configures
#           and builds everything (tests and bench); the rest still registers
#           (BuiltinBackends.*) and passes `tessera verify --quick`.
#   cpuonly a TESSERA_CUDA=OFF configure: the CUDA folders leave themselves out.
# Usage: scripts/check-backend-folders.sh [toy] [delete] [cpuonly]  (default: all)
# Env: JOBS (build parallelism, default 2), WORK (copies; default
#   build/backend-folders-check, inside the tree so one CCACHE_BASEDIR covers
#   both), KEEP=1 keeps the copies. Slow (a build per step; minutes each with a
#   warm ccache), so it is a script and not part of the default ctest run.
set -euo pipefail
ROOT=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
WORK=${WORK:-$ROOT/build/backend-folders-check}
JOBS=${JOBS:-2}
STEPS=("$@")
[ ${#STEPS[@]} -gt 0 ] || STEPS=(toy delete cpuonly)

# shellcheck source=lib/tree_copies.sh
source "$ROOT/scripts/lib/tree_copies.sh"

# build DIR [cmake args...]: the release preset (as the normal build, so the
# cache is shared), configured and built; the output goes to DIR.build.log.
build() {
  local dir=$1 t0=$SECONDS
  shift
  (cd "$dir" && cmake --preset release "${LAUNCH[@]}" "$@" > "$dir.build.log" 2>&1 &&
    nice -n 5 cmake --build build/release -j "$JOBS" >> "$dir.build.log" 2>&1) ||
    { tail -30 "$dir.build.log"; fail "build in $dir"; }
  log "built $dir in $((SECONDS - t0)) s"
}

check_toy() {
  local dir=$WORK/toy out
  copy_tree "$dir"
  cp -r "$ROOT/docs/examples/toy_backend" "$dir/src/backends/toy"
  build "$dir" -DTESSERA_BUILD_BENCH=OFF
  local tessera=$dir/build/release/tessera
  out=$("$tessera" backends)
  grep -qE '^toy +cpu' <<< "$out" || fail "toy not listed:"$'\n'"$out"
  out=$("$tessera" backends --explain "B=1,S=64,H=4,D=32")
  grep -qE '^ +toy +(rejected|eligible|chosen) ' <<< "$out" || fail "toy not explained:"$'\n'"$out"
  log "toy explained: $(grep -E '^ +toy ' <<< "$out" | tr -s ' ')"
  "$tessera" verify --quick --backends toy || fail "tessera verify --backends toy"
  ctest --test-dir "$dir/build/release" -R '^Toy\.' --output-on-failure > "$dir.ctest.log" ||
    { cat "$dir.ctest.log"; fail "toy's own tests"; }
  log "toy's own tests: $(grep 'tests passed' "$dir.ctest.log")"
  out=$(git -C "$dir" status --porcelain)
  [ "$out" = "?? src/backends/toy/" ] || fail "git status in the copy is not just the toy:"$'\n'"$out"
  log "toy: listed, explained, verified, own tests pass; git status: $out"
}

check_delete() {
  local folder name dir
  for folder in "$ROOT"/src/backends/*/; do
    name=$(basename "$folder")
    [ -f "$folder/CMakeLists.txt" ] && [ "$name" != reference ] || continue
    dir=$WORK/without-$name
    copy_tree "$dir"
    rm -r "$dir/src/backends/$name"
    build "$dir"
    grep -q "src/backends/$name" "$dir/build/release/src/backends/builtin.cc" &&
      fail "$name still registered after deleting its folder"
    ctest --test-dir "$dir/build/release" -R '^BuiltinBackends\.' --output-on-failure \
      > "$dir.ctest.log" || { cat "$dir.ctest.log"; fail "BuiltinBackends without $name"; }
    "$dir/build/release/tessera" verify --quick > "$dir.verify.log" ||
      { cat "$dir.verify.log"; fail "tessera verify without $name"; }
    log "without $name: builds, registers the rest, verify passes"
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
  done
}

check_cpuonly() {
  local dir=$WORK/cpu-only
  copy_tree "$dir"
  (cd "$dir" && cmake --preset release "${LAUNCH[@]}" -DTESSERA_CUDA=OFF > "$dir.build.log" 2>&1 &&
    nice -n 5 cmake --build build/release -j "$JOBS" --target attention_test \
      >> "$dir.build.log" 2>&1) || { tail -30 "$dir.build.log"; fail "TESSERA_CUDA=OFF build"; }
  # In a build without CUDA, BuiltinBackends asserts no backend is on a CUDA device.
  "$dir/build/release/tests/attention/attention_test" --gtest_filter='BuiltinBackends.*' \
    --gtest_brief=1 || fail "BuiltinBackends with TESSERA_CUDA=OFF"
  log "TESSERA_CUDA=OFF: no CUDA backend registered"
  [ -n "${KEEP:-}" ] || rm -rf "$dir"
}

mkdir -p "$WORK"
log "copies under $WORK, -j$JOBS, ccache ${LAUNCH:+on (base dir $CCACHE_BASEDIR)}"
for step in "${STEPS[@]}"; do
  t0=$SECONDS
  "check_$step"
  log "step $step passed in $((SECONDS - t0)) s"
done
[ -n "${KEEP:-}" ] || rm -rf "$WORK/toy"
log "all passed: ${STEPS[*]}"
