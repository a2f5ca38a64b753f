#!/usr/bin/env bash
# PyTorch's own SDPA sample inputs and torch.library.opcheck against tessera
# (tools/torch_sdpa_samples.py), in the benchmark venv: torch is too large for
# CI. Builds a wheel from the release build, installs it into .venv-bench with
# expecttest (torch's test helpers need it), runs, and writes
# build/torch-sdpa-samples.json. Results: docs/CONFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bench/peers/setup-venv.sh
.venv-bench/bin/python -m pip install -q --disable-pip-version-check expecttest==0.3.0 \
  ml-dtypes==0.7.0
rm -rf build/wheels
.venv/bin/pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps \
  -C build-dir=build/release -w build/wheels .
.venv-bench/bin/python -m pip install -q --disable-pip-version-check --force-reinstall \
  --no-deps build/wheels/tessera-*.whl
.venv-bench/bin/python tools/torch_sdpa_samples.py
