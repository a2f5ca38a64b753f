#include "attention/tuning.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime/json_input.h"
#include "runtime/machine_info.h"

namespace tessera {

namespace {

std::string length_class(int64_t n) {
  if (n <= 1) return "=1";
  for (int64_t edge : {16, 128, 512, 2048, 8192}) {
    if (n <= edge) return "<=" + std::to_string(edge);
  }
  return ">8192";
}

std::string head_dim_class(int64_t d) {
  for (int64_t edge : {32, 64, 128, 256}) {
    if (d <= edge) return "<=" + std::to_string(edge);
  }
  return ">256";
}

const char* mask_class(MaskKind k) {
  switch (k) {
    case MaskKind::kNone:
      return "none";
    case MaskKind::kCausal:
      return "causal";
    case MaskKind::kWindow:
      return "window";
  }
  return "?";
}

}  // namespace

std::string tuning_bucket(const AttentionArgs& args) {
  const AttentionDims d = dims_of(args);
  return std::string(dtype_name(args.q.dtype)) + ",mask=" + mask_class(args.mask.kind) + ",D" +
         head_dim_class(std::max(d.d, d.dv)) + ",Sq" + length_class(d.sq) + ",Sk" +
         length_class(d.sk);
}

std::string TuningKey::describe() const {
  std::string s = "cpu '" + cpu + "'";
  if (!gpu.empty()) s += ", gpu '" + gpu + "'";
  s += ", tessera " + tessera + ", " + gemm;
  if (!simd.empty()) s += ", " + simd;
  return s;
}

TuningKey current_tuning_key() {
  const MachineInfo m = machine_info();
  return {m.cpu_model, "", m.tessera_version, m.gemm_library, m.simd_library};
}

const TuningEntry* TuningTable::find(const std::string& bucket) const {
  for (const auto& e : entries) {
    if (e.bucket == bucket) return &e;
  }
  return nullptr;
}

std::string TuningTable::to_json() const {
  nlohmann::json entries_json = nlohmann::json::array();
  for (const auto& e : entries) {
    nlohmann::json ranking = nlohmann::json::array();
    for (const auto& m : e.ranking) {
      ranking.push_back({{"backend", m.backend}, {"median_ms", m.median_ms}});
    }
    entries_json.push_back({{"bucket", e.bucket}, {"shape", e.shape}, {"ranking", ranking}});
  }
  const nlohmann::json j = {{"format", "tessera.tuning"},
                            {"version", kVersion},
                            {"key",
                             {{"cpu", key.cpu},
                              {"gpu", key.gpu},
                              {"tessera", key.tessera},
                              {"gemm", key.gemm},
                              {"simd", key.simd}}},
                            {"threads", threads},
                            {"created", created},
                            {"command", command},
                            {"entries", entries_json}};
  return j.dump(2) + "\n";
}

Status TuningTable::parse(const std::string& text, const std::string& source, TuningTable* out) {
  const auto bad = [&](const std::string& what) {
    return invalid_argument("tuning table '" + source + "': " + what);
  };
  nlohmann::json j;
  if (Status s = json_input::parse(text, "not JSON", &j); !s.ok()) return bad(s.message());
  try {
    if (!j.is_object() || j.value("format", "") != "tessera.tuning") {
      return bad("\"format\" is not \"tessera.tuning\"");
    }
    const int version = j.at("version").get<int>();
    if (version != kVersion) {
      return bad("version " + std::to_string(version) + " but this build reads version " +
                 std::to_string(kVersion) + "; run `tessera tune` again");
    }
    TuningTable t;
    const auto& k = j.at("key");
    t.key = {k.at("cpu").get<std::string>(), k.value("gpu", ""), k.at("tessera").get<std::string>(),
             k.at("gemm").get<std::string>(), k.value("simd", "")};
    t.threads = j.value("threads", 0);
    t.created = j.value("created", "");
    t.command = j.value("command", "");
    for (const auto& e : j.at("entries")) {
      TuningEntry entry;
      entry.bucket = e.at("bucket").get<std::string>();
      entry.shape = e.value("shape", "");
      for (const auto& m : e.at("ranking")) {
        entry.ranking.push_back({m.at("backend").get<std::string>(), m.value("median_ms", 0.0)});
      }
      if (entry.ranking.empty()) return bad("entry '" + entry.bucket + "' has an empty ranking");
      t.entries.push_back(std::move(entry));
    }
    t.source = source;
    *out = std::move(t);
  } catch (const nlohmann::json::exception& e) {
    return bad(std::string("missing or mistyped field: ") + e.what());
  }
  return Status::Ok();
}

Status TuningTable::load(const std::string& path, const TuningKey& expected, TuningTable* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("tuning table '" + path + "' cannot be read");
  std::stringstream ss;
  ss << f.rdbuf();
  TuningTable t;
  TESSERA_RETURN_IF_ERROR(parse(ss.str(), path, &t));
  if (!(t.key == expected)) {
    return unavailable("tuning table '" + path + "' was measured on " + t.key.describe() +
                       "; this process is " + expected.describe() +
                       "; run `tessera tune` here to use a tuned order");
  }
  *out = std::move(t);
  return Status::Ok();
}

Status TuningTable::save(const std::string& path) const {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  // Write beside the target and rename, so a reader never sees half a table.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return not_found("tuning table: cannot write '" + tmp + "'");
    f << to_json();
    if (!f) return internal_error("tuning table: writing '" + tmp + "' failed");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return internal_error("tuning table: rename to '" + path + "' failed: " + ec.message());
  return Status::Ok();
}

std::string default_tuning_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/tessera/tuning.json";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/tessera/tuning.json";
  }
  return "";
}

}  // namespace tessera
