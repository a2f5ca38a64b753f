#include "attention/tuning/tuning.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "runtime/json_input.h"
#include "runtime/machine_info.h"
#include "runtime/regular_file.h"

namespace tessera {

namespace {

// Class edges: a value falls in the first class whose edge it does not
// exceed; past the last edge is one more class.
constexpr int64_t kLengthEdges[] = {1, 16, 128, 512, 2048, 8192};
constexpr int64_t kHeadDimEdges[] = {32, 64, 128, 256};
constexpr uint32_t kLengthClasses = std::size(kLengthEdges) + 1;
constexpr uint32_t kHeadDimClasses = std::size(kHeadDimEdges) + 1;
constexpr uint32_t kDTypes = 3, kMasks = 3;

template <size_t N>
uint32_t class_of(int64_t n, const int64_t (&edges)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (n <= edges[i]) return static_cast<uint32_t>(i);
  }
  return N;
}

std::string length_class(uint32_t c) {
  if (c == 0) return "=1";
  if (c < kLengthClasses - 1) return "<=" + std::to_string(kLengthEdges[c]);
  return ">" + std::to_string(kLengthEdges[kLengthClasses - 2]);
}

std::string head_dim_class(uint32_t c) {
  if (c < kHeadDimClasses - 1) return "<=" + std::to_string(kHeadDimEdges[c]);
  return ">" + std::to_string(kHeadDimEdges[kHeadDimClasses - 2]);
}

const char* mask_class(uint32_t k) {
  switch (static_cast<MaskKind>(k)) {
    case MaskKind::kNone:
      return "none";
    case MaskKind::kCausal:
      return "causal";
    case MaskKind::kWindow:
      return "window";
  }
  return "?";
}

// key = (((dtype * kMasks + mask) * kHeadDimClasses + d) * kLengthClasses + sq)
//       * kLengthClasses + sk
uint32_t pack(uint32_t dtype, uint32_t mask, uint32_t d, uint32_t sq, uint32_t sk) {
  return (((dtype * kMasks + mask) * kHeadDimClasses + d) * kLengthClasses + sq) * kLengthClasses +
         sk;
}

}  // namespace

uint32_t tuning_bucket_key(DType dtype, MaskKind mask, const AttentionDims& dims) {
  return pack(static_cast<uint32_t>(dtype), static_cast<uint32_t>(mask),
              class_of(std::max(dims.d, dims.dv), kHeadDimEdges), class_of(dims.sq, kLengthEdges),
              class_of(dims.sk, kLengthEdges));
}

std::string tuning_bucket_name(uint32_t key) {
  const uint32_t sk = key % kLengthClasses;
  key /= kLengthClasses;
  const uint32_t sq = key % kLengthClasses;
  key /= kLengthClasses;
  const uint32_t d = key % kHeadDimClasses;
  key /= kHeadDimClasses;
  const uint32_t mask = key % kMasks;
  const uint32_t dtype = key / kMasks;
  return std::string(dtype_name(static_cast<DType>(dtype))) + ",mask=" + mask_class(mask) + ",D" +
         head_dim_class(d) + ",Sq" + length_class(sq) + ",Sk" + length_class(sk);
}

std::vector<uint32_t> all_tuning_bucket_keys() {
  std::vector<uint32_t> keys;
  const uint32_t n = kDTypes * kMasks * kHeadDimClasses * kLengthClasses * kLengthClasses;
  keys.reserve(n);
  for (uint32_t k = 0; k < n; ++k) keys.push_back(k);
  return keys;
}

std::string tuning_bucket(const AttentionArgs& args) {
  return tuning_bucket_name(tuning_bucket_key(args.q.dtype, args.mask.kind, dims_of(args)));
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

std::string TuningTable::describe() const {
  if (!shipped()) return "tuned table (" + source + ")";
  return "shipped default ranking for " + cpu_kind + ", measured on '" + key.cpu + "' " +
         created.substr(0, created.find('T'));
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
      // To 0.1 us: finer digits are noise, and they clutter a shipped file's diff.
      ranking.push_back(
          {{"backend", m.backend}, {"median_ms", std::round(m.median_ms * 1e4) / 1e4}});
    }
    entries_json.push_back({{"bucket", e.bucket}, {"shape", e.shape}, {"ranking", ranking}});
  }
  nlohmann::json j = {{"format", "tessera.tuning"},
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
  if (!machine_load.empty()) j["load"] = machine_load;
  if (!cpu_kind.empty()) j["cpu_kind"] = cpu_kind;
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
    t.machine_load = j.value("load", "");
    t.cpu_kind = j.value("cpu_kind", "");
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
  std::string text;
  if (Status s = read_regular_file(path, json_input::kMaxFileBytes, &text); !s.ok()) {
    return Status(s.code(), "tuning table: " + s.message());
  }
  TuningTable t;
  TESSERA_RETURN_IF_ERROR(parse(text, path, &t));
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

double load_average() {
  std::ifstream f("/proc/loadavg");
  double one_minute = -1;
  if (!(f >> one_minute)) return -1;
  return one_minute;
}

std::string describe_load(double at_start, double at_end) {
  if (at_start < 0 || at_end < 0) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf,
                "1-minute load average %.2f at start, %.2f at end; %d hardware threads", at_start,
                at_end, machine_info().hardware_threads);
  return buf;
}

}  // namespace tessera
