#!/usr/bin/env bash
# The whole ctest suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (the `asan` preset: clang with line tables, -O0 but -O1 for the compute kernels
# (cmake/TesseraOptimization.cmake), no benchmarks). Part of the README's test
# command; run alone after scripts/install-deps.sh. Idempotent; incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/asan/build.ninja ] || cmake --preset asan
cmake --build build/asan -j "$(nproc)"
# Leaks fail the run (LeakSanitizer at exit); the first UB report aborts
# (-fno-sanitize-recover in the preset) with a stack. Suppressions name only
# third-party code, each with its reason: tests/sanitizers/lsan.supp.
# Tests whose cost is a model forward repeated many times (the golden checks,
# `tessera serve` under load) run a representative subset under sanitizers;
# the release suite runs them whole.
export TESSERA_TEST_SANITIZED=1
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tests/sanitizers/ubsan.supp"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
# The xla backend's conformance grid (253 cases, each compiling its programs
# in the uninstrumented PJRT plugin) runs in the release suite; here its own
# tests (xla_unit_test, xla_plugin_test) cover tessera's side of it. The
# conformance test says on stderr which backends it left out.
export TESSERA_CONFORMANCE_EXCLUDE=xla
# Tests see no registered models of this machine's user (tessera models add):
# the default model is the checkout's, whatever ~/.local/share/tessera holds.
TESSERA_DATA_DIR="$(mktemp -d)"
export TESSERA_DATA_DIR
trap 'rm -rf "$TESSERA_DATA_DIR"' EXIT
ctest --preset asan -j "$(nproc)" --output-junit junit-asan.xml
# Sanitized tests run several times slower: the same report against the limits.
.venv/bin/python scripts/timeout_margins.py build/asan build/asan/junit-asan.xml
