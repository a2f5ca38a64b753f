#!/usr/bin/env bash
# Configures and builds the release preset (idempotent; incremental).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/release/build.ninja ] || cmake --preset release
cmake --build build/release -j "$(nproc)"
