#!/usr/bin/env bash
# The README's main-job command: install, build, then run the default job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
bash scripts/install-python.sh
build/release/tessera backends
# Embed the sample corpus shipped in the repo with the default model; the
# summary (documents, chunks, tokens, time, attention backend) goes to stderr.
build/release/tessera embed data/sample -o build/sample-embeddings.jsonl
build/release/tessera bench attention "$@"
