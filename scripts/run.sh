#!/usr/bin/env bash
# The README's main-job command: install, build, then run the default job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build/release/tessera backends
build/release/tessera bench attention "$@"
