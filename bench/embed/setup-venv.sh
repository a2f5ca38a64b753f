#!/usr/bin/env bash
# Creates .venv-bench: the comparison engines of the embedding benchmark
# (sentence-transformers on torch, ONNX Runtime, OpenVINO and NNCF for its int8
# model). Never run by the tests: the set-up (scripts/install-deps.sh) and CI
# do not need torch. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

BENCH_PACKAGES=(
  torch==2.15.0 sentence-transformers==6.3.0 transformers==5.24.0
  onnxruntime==1.31.1 onnx==1.23.2 onnxscript==0.7.2 numpy==2.3.5 tokenizers==0.23.3
  openvino==2026.4.1 nncf==3.4.0
)
[ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
IMPORTS="import torch, sentence_transformers, onnxruntime, onnx, openvino, nncf"
if ! .venv-bench/bin/python -c "$IMPORTS" 2>/dev/null; then
  .venv-bench/bin/pip install -q --disable-pip-version-check "${BENCH_PACKAGES[@]}"
fi
echo "setup-venv: ok (.venv-bench)"
