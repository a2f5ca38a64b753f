#!/usr/bin/env bash
# Installs the Python package `tessera` into .venv from the release build
# (scikit-build-core reuses build/release, so only the extension is compiled,
# once), then imports it from outside the source tree to prove the install.
# Idempotent. `pip install .` from a clean checkout builds everything itself
# instead (docs/PYTHON.md).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  -C build-dir=build/release .
(cd / && "$OLDPWD/.venv/bin/python" -c "
import tessera
print('install-python: tessera', tessera.__version__, 'at', tessera.__file__)")
