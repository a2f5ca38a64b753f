#include "attention/tuning/shipped_rankings.h"

#include <array>
#include <mutex>
#include <string>

namespace tessera {

namespace {

// kAmx is the last CpuKind.
constexpr size_t kCpuKinds = static_cast<size_t>(CpuKind::kAmx) + 1;

Status parse_for(CpuKind kind, std::shared_ptr<const TuningTable>* out) {
  const std::string_view name = cpu_kind_name(kind);
  for (const ShippedRankingFile& f : shipped_ranking_files()) {
    if (f.name != name) continue;
    const std::string source = "default_rankings/" + std::string(f.name) + ".json (shipped)";
    auto table = std::make_shared<TuningTable>();
    TESSERA_RETURN_IF_ERROR(TuningTable::parse(std::string(f.json), source, table.get()));
    if (table->cpu_kind != name) {
      return invalid_argument("shipped ranking '" + source + "' says cpu_kind '" + table->cpu_kind +
                              "', not '" + std::string(name) + "'");
    }
    *out = std::move(table);
    return Status::Ok();
  }
  out->reset();
  return Status::Ok();
}

}  // namespace

Status shipped_ranking(CpuKind kind, std::shared_ptr<const TuningTable>* out) {
  // One slot per kind, filled on first use: the embedded text never changes.
  struct Parsed {
    std::once_flag once;
    Status status;
    std::shared_ptr<const TuningTable> table;
  };
  static std::array<Parsed, kCpuKinds> parsed;
  Parsed& p = parsed.at(static_cast<size_t>(kind));
  std::call_once(p.once, [&] { p.status = parse_for(kind, &p.table); });
  *out = p.table;
  return p.status;
}

}  // namespace tessera
