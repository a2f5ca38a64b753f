# Writes OUTPUT, a C++ source defining tessera::shipped_ranking_files(): the
# text of every DIR/*.json (src/attention/tuning/default_rankings/<kind>.json),
# named by its stem. Run at build time (cmake -P) by src/attention's
# CMakeLists, so editing a ranking file rebuilds the library; the embedded
# text is what `auto` reads, with no file lookup at run time.
#   cmake -DOUTPUT=<file.cc> -DDIR=<folder> -P TesseraEmbedRankings.cmake
file(GLOB FILES LIST_DIRECTORIES false "${DIR}/*.json")
list(SORT FILES)
set(delimiter "tessera_ranking")
set(rows "")
foreach(file IN LISTS FILES)
  get_filename_component(stem "${file}" NAME_WE)
  file(READ "${file}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND rows "    {\"${stem}\", R\"${delimiter}(${text})${delimiter}\"},\n")
endforeach()
if(rows STREQUAL "")
  set(body "  return {};")
else()
  set(body "  static constexpr ShippedRankingFile kFiles[] = {\n${rows}  };\n  return kFiles;")
endif()
set(source "// Generated from src/attention/tuning/default_rankings/*.json by
// cmake/TesseraEmbedRankings.cmake: edit those files, not this one.
#include \"attention/tuning/shipped_rankings.h\"

namespace tessera {

std::span<const ShippedRankingFile> shipped_ranking_files() {
${body}
}

}  // namespace tessera
")
file(WRITE "${OUTPUT}" "${source}")
