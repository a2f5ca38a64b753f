#!/usr/bin/env bash
# Part of the README's test command (scripts/test.sh), after the release
# suite: the tests whose outcome depends on the CPU kind (ctest label `cpu`)
# again, with the process made a lower kind (TESSERA_CPU_CAP, issue 47), so
# an AVX-512 or AMX machine catches what would fail on an AVX2-only Zen 3
# before it lands. docs/RELIABILITY.md, "The suite on every CPU kind", says
# which tests carry the label and why.
#
# - x86-avx2 where the CPU has AVX-512 (on an AVX2 CPU the release suite
#   already ran as that kind): every labelled test but the MPNet goldens
#   (MiniLM's take the same paths at a quarter of the cost), the tokenizer
#   goldens in model_test (HfGoldens: no CPU-dependent code), and the CLI's and
#   server's end-to-end golden runs (model_test's goldens take the same
#   kernels; the refusals they meet are asserted in the release suite under
#   ONEDNN_MAX_CPU_ISA=AVX2, and explain/front_door check the kind's choices);
# - x86-avx512 (AVX-512 without VNNI or BF16) where the CPU has either: only
#   which paths are offered changes there (no bf16dot, no int8, no shipped
#   ranking), so the capability tests, cpu.flash's, the runtime's and the
#   MiniLM goldens, without the attention grid, the tiny architectures and the
#   end-to-end CLI and server runs the x86-avx2 pass made.
# The xla backend's grid rows are left out (its PJRT plugin is not capped).
# Measured on the Ice Lake Xeon: docs/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() { [[ "$flags" == *" $1 "* ]]; }
run_capped() {
  local cap=$1
  shift
  local start=$SECONDS
  echo "test-cpu-caps: TESSERA_CPU_CAP=$cap"
  TESSERA_CPU_CAP=$cap TESSERA_CONFORMANCE_EXCLUDE=xla \
    ctest --preset release -j "$(nproc)" -L '^cpu$' "$@"
  echo "test-cpu-caps: TESSERA_CPU_CAP=$cap took $((SECONDS - start)) s"
}
if ! has avx512f; then
  echo "test-cpu-caps: no AVX-512 here: the release suite ran as the lowest kind tested (x86-avx2)"
  exit 0
fi
run_capped x86-avx2 -E '^(HfGoldens/|RealModels/.*/MPNet|server\.serve_cli$|cli\.embed$)'
if has avx512_vnni || has avx512_bf16; then
  run_capped x86-avx512 \
    -E '^(HfGoldens/|Cases/|TinyModels/|RealModels/.*/MPNet|server\.serve_cli$|cli\.embed$)'
fi
