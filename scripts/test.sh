#!/usr/bin/env bash
# The README's test command: install, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --preset release -j "$(nproc)"
