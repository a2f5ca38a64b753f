#!/usr/bin/env bash
# The installed C++ package, as a user gets it: `cmake --install` of a build
# into a temporary prefix, then examples/ configured with find_package(tessera)
# from that prefix only (not the build or source tree), built and run.
#   scripts/check-install.sh [BUILD_DIR]     (default build/release)
# Also refuses an installed header that includes an internal one (src/).
# The ctest package.examples runs it (tests/api/CMakeLists.txt).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build/release}" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
echo "installed: $(cd "$tmp/prefix" && find . -type f | sort | tr '\n' ' ')"

# Public headers include only the standard library and each other.
if grep -rnE '#include +"(runtime|attention|backends|model|pipeline|server|api|apps|verify)/' \
     "$tmp/prefix/include"; then
  echo "check-install: an installed header includes an internal (src/) header" >&2
  exit 1
fi

# A clean configure that can only see the prefix. The compiler is the one the
# build used; nothing else is taken from it.
cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
cmake -S "$src/examples" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$tmp/configure.log" \
  || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/build" > "$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }

# The programs must have linked the installed library, not one in the tree.
lib="$(ldd "$tmp/build/attention_three_arrays" | awk '/libtessera\.so/ {print $3}')"
case "$lib" in
  "$tmp/prefix/"*) echo "linked: $lib" ;;
  *) echo "check-install: attention_three_arrays uses '$lib', not the installed library" >&2
     exit 1 ;;
esac

"$tmp/build/attention_three_arrays"
"$tmp/build/embed_documents" "${TESSERA_MODEL:-$src/models/all-MiniLM-L6-v2}"
echo "check-install: OK"
