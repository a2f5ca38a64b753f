#!/usr/bin/env bash
# The installed C++ package, as a user gets it: `cmake --install` of a build
# into a temporary prefix, moved elsewhere afterwards (the install must not
# need its path, nor the checkout), then examples/ configured with
# find_package(tessera) from that prefix only (not the build or source tree),
# built and run, and the installed bin/tessera run.
#   scripts/check-install.sh [BUILD_DIR]     (default build/release)
# Checks:
# - the prefix holds bin/tessera, lib/ (libtessera.so, the CMake config) and
#   include/ only: no Python extension (it belongs to the wheel);
# - no installed header includes an internal one (src/);
# - the programs link the installed library;
# - the model story of a new user, whose checkout is gone: with no model
#   named and none registered, the installed CLI and a find_package consumer
#   find none (although this checkout's models/ is right there) and say what
#   to do; after `tessera models add DIR` (a copy, whose source is then
#   deleted) both embed with the data directory's model.
# The ctest package.examples runs it (tests/api/CMakeLists.txt).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build/release}" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/staged" > "$tmp/install.log"
# Moved after installing: nothing may remember where it was installed.
mv "$tmp/staged" "$tmp/prefix"
prefix="$tmp/prefix"
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

[ -x "$prefix/bin/tessera" ] || fail "no bin/tessera in the prefix"
[ -f "$prefix/lib/cmake/tessera/tesseraConfig.cmake" ] || fail "no CMake config in lib/cmake/tessera"
extra="$(cd "$prefix" && find . -mindepth 1 -maxdepth 1 ! -name bin ! -name lib ! -name include)"
[ -z "$extra" ] || fail "the prefix holds more than bin/, lib/, include/: $extra"
if find "$prefix" -name '_tessera*' -o -name '*.py' | grep .; then
  fail "the C++ prefix holds the Python package's files (they belong to the wheel)"
fi

# Public headers include only the standard library and each other.
if grep -rnE '#include +"(runtime|attention|backends|model|pipeline|server|api|apps|verify)/' \
     "$prefix/include"; then
  fail "an installed header includes an internal (src/) header"
fi

# A clean configure that can only see the prefix. The compiler is the one the
# build used; nothing else is taken from it.
cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
cmake -S "$src/examples" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$tmp/configure.log" \
  || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/build" > "$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }

# The programs must have linked the installed library, not one in the tree.
lib="$(ldd "$tmp/build/attention_three_arrays" | awk '/libtessera\.so/ {print $3}')"
case "$lib" in
  "$prefix/"*) echo "linked: $lib" ;;
  *) fail "attention_three_arrays uses '$lib', not the installed library" ;;
esac
# Nor may the installed files load anything from the build or source tree.
for f in "$prefix/bin/tessera" "$prefix"/lib/libtessera.so.*.*.*; do
  if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -F -e "$build" -e "$src"; then
    fail "$f searches the build tree for libraries"
  fi
done

"$tmp/build/attention_three_arrays"

# A new user's environment: no model named, a data directory of their own.
# The model to register: $TESSERA_MODEL, else this checkout's default.
model_src="${TESSERA_MODEL:-$src/models/all-MiniLM-L6-v2}"
[ -d "$model_src" ] || fail "no model at $model_src (scripts/install-deps.sh installs it)"
unset TESSERA_MODEL XDG_DATA_HOME
export TESSERA_DATA_DIR="$tmp/data"
tessera="$prefix/bin/tessera"
cd "$tmp"  # not the checkout

# Nothing registered: no model, although the checkout's models/ exists. An
# install that still used the checkout would embed here.
if echo "a sentence" | "$tessera" embed - -o "$tmp/none.jsonl" 2> "$tmp/cli-error.txt"; then
  fail "bin/tessera embedded with no model registered: the install still uses the checkout"
fi
for part in "tessera models add DIR" "--model DIR" "TESSERA_MODEL" "$TESSERA_DATA_DIR"; do
  grep -qF -- "$part" "$tmp/cli-error.txt" || {
    cat "$tmp/cli-error.txt" >&2; fail "bin/tessera's no-model error does not say '$part'"; }
done
if "$tmp/build/embed_documents" > /dev/null 2> "$tmp/api-error.txt"; then
  fail "embed_documents found a model with none registered: libtessera.so still uses the checkout"
fi
for part in "tessera models add DIR" "EmbedderOptions.model_dir" "TESSERA_MODEL"; do
  grep -qF -- "$part" "$tmp/api-error.txt" || {
    cat "$tmp/api-error.txt" >&2; fail "the C++ API's no-model error does not say '$part'"; }
done
echo "no model registered: both say so ($(head -c 160 "$tmp/cli-error.txt")...)"

# Register a copy of the model, then delete what it was copied from: the
# data directory's copy is all the install needs.
cp -rL "$model_src" "$tmp/downloaded-model"
"$tessera" models add "$tmp/downloaded-model" --name minilm
rm -rf "$tmp/downloaded-model"
"$tessera" models list | tee "$tmp/list.txt"
grep -q "minilm (default)" "$tmp/list.txt" || fail "models list does not show minilm as the default"

echo "a sentence about attention kernels" | "$tessera" embed - -o "$tmp/rows.jsonl"
[ "$(wc -l < "$tmp/rows.jsonl")" = 1 ] || fail "bin/tessera embed wrote no row"
"$tmp/build/embed_documents" | tee "$tmp/api.txt"
grep -qF "model $TESSERA_DATA_DIR/models/minilm:" "$tmp/api.txt" \
  || fail "embed_documents did not load the data directory's model"
echo "check-install: OK"
