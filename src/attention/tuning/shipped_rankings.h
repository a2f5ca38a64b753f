// Shipped default rankings: for each CPU kind (runtime/cpu_kind.h) that has
// been measured, a tuning table (attention/tuning/tuning.h, "cpu_kind" set) that
// `auto` follows when the user has no tuned table of their own. The files
// live in src/attention/tuning/default_rankings/<kind>.json and are embedded in the
// library at build time (cmake/TesseraEmbedRankings.cmake), so nothing is
// looked up at run time. `tessera tune --shipped-defaults FILE` writes them.
// See docs/DECISIONS.md ("Shipped default rankings per CPU kind").
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "attention/tuning/tuning.h"
#include "runtime/cpu_kind.h"

namespace tessera {

struct ShippedRankingFile {
  std::string_view name;  // the file's stem: the CPU kind it is for
  std::string_view json;  // its text
};
// Every embedded file (generated source).
std::span<const ShippedRankingFile> shipped_ranking_files();

// The parsed table for `kind`: null in *out (and OK) when none ships; an
// error when the embedded file does not parse or names another kind (the
// tests keep that from shipping). Parsed once per kind.
Status shipped_ranking(CpuKind kind, std::shared_ptr<const TuningTable>* out);

}  // namespace tessera
