#!/usr/bin/env bash
# Puts torch (the SDPA peer of bench/attention_table.py) into .venv-bench, the
# benchmark-only venv that bench/embed/setup-venv.sh also uses. Never run by
# the tests or CI. PyPI has no CPU-only torch wheel for Linux x86-64 (the
# "+cpu" builds live on PyTorch's own index, which these machines cannot
# reach), so this is the default wheel with its CUDA libraries; the benchmark
# never touches them. Same pin as bench/embed so the two share one install.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
if ! .venv-bench/bin/python -c "import torch" 2>/dev/null; then
  .venv-bench/bin/pip install -q --disable-pip-version-check torch==2.15.0 numpy==2.3.5
fi
echo "peers/setup-venv: ok ($(.venv-bench/bin/python -c 'import torch; print("torch", torch.__version__)'))"
