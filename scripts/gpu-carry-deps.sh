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
  libgtest-dev googletest libcpp-httplib-dev libicu-dev libicu72 \
  libgomp1 libbrotli1 libssl3 \
  libplplot-dev libplplot17 libltdl7 libshp2 libfreetype6 libcsirocsa0 libcsironn0 libqsastime0 \
  libqhull-r8.0 libpng16-16
ls -la
