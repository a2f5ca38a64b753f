#!/usr/bin/env bash
# The README's test command: install, build, run every test; the tests whose
# outcome depends on the CPU kind again as lower kinds (scripts/test-cpu-caps.sh);
# then the same suite again under ASan + UBSan (scripts/sanitize.sh;
# docs/RELIABILITY.md).
# The fuzz targets' seed and regression inputs replay in both suites.
# Each stage prints its wall time, so a CI log shows where the minutes go.
set -euo pipefail
cd "$(dirname "$0")/.."
stage() {
  local start=$SECONDS
  "$@"
  echo "test.sh: '$*' took $((SECONDS - start)) s"
}
stage bash scripts/install-deps.sh
stage bash scripts/build.sh
stage bash scripts/install-python.sh
# Tests see no registered models of this machine's user (tessera models add):
# the default model is the checkout's, whatever ~/.local/share/tessera holds.
TESSERA_DATA_DIR="$(mktemp -d)"
export TESSERA_DATA_DIR
trap 'rm -rf "$TESSERA_DATA_DIR"' EXIT
stage ctest --preset release -j "$(nproc)" --output-junit junit-release.xml
# The timing report against each test's limit (a report, not a gate).
.venv/bin/python scripts/timeout_margins.py build/release build/release/junit-release.xml
# The CPU-dependent tests again as lower CPU kinds (TESSERA_CPU_CAP).
stage bash scripts/test-cpu-caps.sh
stage bash scripts/sanitize.sh
echo "test.sh: all passed in $SECONDS s"
