#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (sm_80+; tuned for the H200): build the CUDA
# backends for sm_90, run the conformance suite for them, then benchmark
# cuda.flash, cuda.vendor, xla (NVIDIA's PJRT plugin, when installed) and
# PyTorch SDPA side by side and print one table last. Budget: under 5 minutes. Results go to $OUT (default build/gpu-check).
#
# Needs tessera's build dependencies (scripts/install-deps.sh's APT_PACKAGES)
# and python3 with torch. On the device image, which has CUDA, CMake, ninja and
# torch but none of our Debian libraries and no network, run
# scripts/gpu-carry-deps.sh here first and carry .gpu-debs (see its header).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-check}
mkdir -p "$OUT"
if [ -d .gpu-debs ]; then  # unpack carried Debian packages into a private prefix
  mkdir -p /tmp/gpu-prefix
  for f in .gpu-debs/*.deb; do dpkg -x "$f" /tmp/gpu-prefix; done
  export CMAKE_PREFIX_PATH=/tmp/gpu-prefix/usr:/tmp/gpu-prefix/usr/lib/x86_64-linux-gnu/cmake
  export LD_LIBRARY_PATH=/tmp/gpu-prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export CPATH=/tmp/gpu-prefix/usr/include:${CPATH:-}
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTESSERA_BUILD_BENCH=OFF > "$OUT/configure.log"
cmake --build build/gpu -j "$(nproc)" --target tessera conformance_test attention_test \
  > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
build/gpu/tests/attention/attention_test --gtest_filter='BuiltinBackends.*'
# The one conformance suite, restricted to the CUDA backends.
build/gpu/tests/conformance/conformance_test --gtest_filter='*cuda*' --gtest_brief=1 \
  2>&1 | tee "$OUT/conformance.log" | tail -15
SHAPES="B=4,S=4096,H=16,D=128,dtype=bf16;B=4,S=4096,H=16,D=128,dtype=bf16,mask=causal;"
SHAPES+="B=1,S=16384,H=32,D=128,dtype=bf16,mask=causal;B=16,Sq=1,Sk=8192,Hq=32,Hkv=8,D=128,dtype=bf16"
# xla on NVIDIA's PJRT plugin beside the CUDA backends, when python3 has it
# (pip install "jax-cuda13-plugin[with-cuda]"; the backend creates its client
# with preallocate=false). NEVER RUN YET: no device machine has had the plugin.
# xla takes host tensors, so its times include the copies to and from the GPU.
XLA=()
PLUGIN=$(python3 -c "import jax_plugins.xla_cuda13 as p, os; \
print(os.path.join(os.path.dirname(p.__file__), 'xla_cuda_plugin.so'))" 2>/dev/null || true)
if [ -n "$PLUGIN" ]; then
  XLA=(--pjrt-plugin "$PLUGIN")
  build/gpu/tessera "${XLA[@]}" backends | grep '^xla' | tee "$OUT/xla.txt"
  build/gpu/tessera "${XLA[@]}" verify --backends xla 2>&1 | tee -a "$OUT/xla.txt" | tail -3
else
  echo "xla: skipped, python3 has no jax-cuda13-plugin" | tee "$OUT/xla.txt"
fi
build/gpu/tessera "${XLA[@]}" bench attention --shapes "$SHAPES" \
  --backends "cuda.flash,cuda.vendor${PLUGIN:+,xla}" \
  --warmup 3 --iters 20 --json "$OUT/tessera.json"
python3 bench/peers/torch_sdpa_cuda.py "$OUT/torch.json"
python3 scripts/gpu_table.py "$OUT/tessera.json" "$OUT/torch.json" | tee "$OUT/table.md"
