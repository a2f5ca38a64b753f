#!/usr/bin/env bash
# The README's test command: install, build, run every test; then the same
# suite again under ASan + UBSan (scripts/sanitize.sh; docs/RELIABILITY.md).
# The fuzz targets' seed and regression inputs replay in both suites.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --preset release -j "$(nproc)"
bash scripts/sanitize.sh
