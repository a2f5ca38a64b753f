#!/usr/bin/env bash
# Shows that an architecture is one folder, forward included (issue 49), on
# copies of this tree:
#   toy     add docs/examples/toy_architecture as src/model/architectures/toy/
#           and build: `models --explain` style refusals list it, a tiny-bert
#           copy with model_type "toy_embeddings" is served and its hidden
#           states equal numpy's from the same tensors
#           (scripts/check_toy_architecture.py), and `git status` in the copy
#           shows only src/model/architectures/toy/.
#   delete  for each architecture folder: a copy without it configures and
#           builds; the remaining architectures pass their tiny-model suites
#           (model_test TinyModels/*, whose cases each folder's
#           tiny_models.json lists) and the deleted folder's model is refused,
#           naming what is supported.
# Usage: scripts/check-architecture-folders.sh [toy] [delete]  (default: both)
# Env: JOBS (default 2), WORK (copies; default build/architecture-folders-check),
#   KEEP=1 keeps the copies. Slow (a build per step; with ccache, a minute or
#   two each once the cache is warm), so it is a script, not part of ctest.
set -euo pipefail
ROOT=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
WORK=${WORK:-$ROOT/build/architecture-folders-check}
JOBS=${JOBS:-2}
STEPS=("$@")
[ ${#STEPS[@]} -gt 0 ] || STEPS=(toy delete)
PY=$ROOT/.venv/bin/python

# shellcheck source=lib/tree_copies.sh
source "$ROOT/scripts/lib/tree_copies.sh"

# build DIR TARGET...: the release preset without Python, bench or CUDA
# (none of them is what this checks), only the targets named.
build() {
  local dir=$1 t0=$SECONDS
  shift
  (cd "$dir" && cmake --preset release "${LAUNCH[@]}" -DTESSERA_BUILD_BENCH=OFF \
    -DTESSERA_PYTHON=OFF -DTESSERA_CUDA=OFF > "$dir.build.log" 2>&1 &&
    nice -n 5 cmake --build build/release -j "$JOBS" --target "$@" >> "$dir.build.log" 2>&1) ||
    { tail -30 "$dir.build.log"; fail "build in $dir"; }
  log "built $* in $dir in $((SECONDS - t0)) s"
}

# tiny_model DEST MODEL_TYPE: data/models/tiny-bert with another model_type.
tiny_model() {
  rm -rf "$1" && cp -r "$ROOT/data/models/tiny-bert" "$1"
  "$PY" - "$1/config.json" "$2" <<'PYEOF'
import json, sys
path, model_type = sys.argv[1], sys.argv[2]
c = json.load(open(path))
c["model_type"] = model_type
json.dump(c, open(path, "w"), indent=2)
PYEOF
}

check_toy() {
  local dir=$WORK/toy out
  copy_tree "$dir"
  cp -r "$ROOT/docs/examples/toy_architecture" "$dir/src/model/architectures/toy"
  build "$dir" tessera
  tiny_model "$dir.model" toy_embeddings
  "$PY" "$ROOT/scripts/check_toy_architecture.py" "$dir/build/release/tessera" "$dir.model" ||
    fail "the toy architecture against numpy"
  # A model_type nobody runs is refused naming every architecture, the toy too.
  tiny_model "$dir.model" no_such_model
  out=$("$dir/build/release/tessera" embed --model "$dir.model" "$ROOT/data/sample" -o /dev/null 2>&1) &&
    fail "an unknown model_type was accepted"
  grep -qF 'toy (model_type "toy_embeddings")' <<< "$out" || fail "the refusal does not list the toy:"$'\n'"$out"
  out=$(git -C "$dir" status --porcelain)
  [ "$out" = "?? src/model/architectures/toy/" ] ||
    fail "git status in the copy is not just the toy:"$'\n'"$out"
  log "toy: built, registered, matches numpy; git status: $out"
  [ -n "${KEEP:-}" ] || rm -rf "$dir.model"
}

check_delete() {
  local folder name dir model_type models out
  for folder in "$ROOT"/src/model/architectures/*/; do
    name=$(basename "$folder")
    [ -f "$folder/${name}_architecture.h" ] || continue
    dir=$WORK/without-$name
    copy_tree "$dir"
    rm -r "$dir/src/model/architectures/$name"
    build "$dir" tessera model_test
    grep -qF "(&${name}_architecture())" "$dir/build/release/src/model/architectures/builtin_architectures.cc" &&
      fail "$name still registered after deleting its folder"
    "$dir/build/release/tests/model/model_test" --gtest_filter='TinyModels/*' --gtest_brief=1 \
      > "$dir.test.log" 2>&1 || { tail -40 "$dir.test.log"; fail "TinyModels without $name"; }
    # Its first tiny model is now refused, naming the architectures left.
    models=$("$PY" -c "import json,sys; print(next(iter(json.load(open(sys.argv[1]))['models'])))" \
      "$folder/tiny_models.json")
    out=$("$dir/build/release/tessera" embed --model "$ROOT/data/models/$models" \
      "$ROOT/data/sample" -o /dev/null 2>&1) && fail "$models still runs without $name"
    grep -q "not supported" <<< "$out" || fail "$models without $name: $out"
    log "without $name: builds; the rest's tiny-model suites pass" \
      "($(grep -oE 'PASSED +\] [0-9]+ tests?' "$dir.test.log" | grep -oE '[0-9]+ tests?'));" \
      "$models refused"
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
  done
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
