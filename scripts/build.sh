#!/usr/bin/env bash
# Configures and builds the release preset (idempotent; incremental).
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python extension (python/) is part of the build; it needs the project
# venv's interpreter and nanobind (scripts/install-deps.sh).
py_flags=(-DTESSERA_PYTHON=ON "-DPython_EXECUTABLE=$PWD/.venv/bin/python")
if [ ! -f build/release/build.ninja ]; then
  cmake --preset release "${py_flags[@]}"
elif ! grep -q "^TESSERA_PYTHON:BOOL=ON" build/release/CMakeCache.txt; then
  cmake -S . -B build/release "${py_flags[@]}"
fi
cmake --build build/release -j "$(nproc)"
