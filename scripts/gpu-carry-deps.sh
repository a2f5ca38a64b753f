#!/usr/bin/env bash
# Downloads (does not install) the Debian packages tessera builds against into
# .gpu-debs/, for a device machine that has CUDA but none of them and no
# network: carry .gpu-debs with the device tool (it is git-ignored), and
# scripts/gpu-check.sh unpacks them into a private prefix there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-debs
cd .gpu-debs
apt-get download libdnnl-dev libdnnl2 libhwy-dev libhwy1 nlohmann-json3-dev libcli11-dev \
  libgtest-dev googletest libcpp-httplib-dev libutf8proc-dev libutf8proc2 libicu-dev libicu72 \
  libgomp1 libbrotli1 libssl3
ls -la
