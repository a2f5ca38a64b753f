#include "attention/observers/canary.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/json_input.h"
#include "runtime/regular_file.h"

namespace tessera {

Status load_canary_records(const std::string& path, CanaryRecords* out) {
  out->clear();
  std::string text;
  if (Status s = read_regular_file(path, json_input::kMaxFileBytes, &text); !s.ok()) {
    // No record yet is the normal first run; anything else is the file's fault.
    return s.code() == StatusCode::kNotFound ? Status::Ok()
                                             : Status(s.code(), "canary record: " + s.message());
  }
  nlohmann::json j;
  TESSERA_RETURN_IF_ERROR(json_input::parse(text, "canary record '" + path + "'", &j));
  try {
    if (j.value("format", "") != "tessera.canary" || j.value("version", 0) != 1) {
      return invalid_argument("canary record '" + path +
                              "': not a version-1 \"tessera.canary\" file");
    }
    for (const auto& [backend, buckets] : j.at("backends").items()) {
      for (const auto& [bucket, r] : buckets.items()) {
        CanaryBucketRecord& rec = (*out)[backend][bucket];
        rec.runs = r.at("runs").get<uint64_t>();
        rec.agreements = r.at("agreements").get<uint64_t>();
        rec.failures = r.value("failures", uint64_t{0});
        rec.max_abs_error = r.value("max_abs_error", 0.0);
        rec.serving_seconds = r.value("serving_seconds", 0.0);
        rec.canary_seconds = r.value("canary_seconds", 0.0);
        rec.serving = r.value("serving", "");
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument("canary record '" + path + "': " + e.what());
  }
  return Status::Ok();
}

nlohmann::json canary_buckets_to_json(const std::map<std::string, CanaryBucketRecord>& buckets) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [bucket, r] : buckets) {
    out[bucket] = {{"runs", r.runs},
                   {"agreements", r.agreements},
                   {"failures", r.failures},
                   {"max_abs_error", r.max_abs_error},
                   {"serving_seconds", r.serving_seconds},
                   {"canary_seconds", r.canary_seconds},
                   {"serving", r.serving}};
  }
  return out;
}

Status save_canary_records(const std::string& path, const CanaryRecords& records) {
  nlohmann::json backends = nlohmann::json::object();
  for (const auto& [backend, buckets] : records) {
    if (!buckets.empty()) backends[backend] = canary_buckets_to_json(buckets);
  }
  const nlohmann::json j = {{"format", "tessera.canary"}, {"version", 1}, {"backends", backends}};
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return not_found("canary record: cannot write '" + tmp + "'");
    f << j.dump(2) << "\n";
    if (!f) return internal_error("canary record: writing '" + tmp + "' failed");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return internal_error("canary record: rename to '" + path + "' failed: " + ec.message());
  return Status::Ok();
}

void merge_canary_records(const CanaryRecords& more, CanaryRecords* into) {
  for (const auto& [backend, buckets] : more) {
    for (const auto& [bucket, r] : buckets) {
      CanaryBucketRecord& t = (*into)[backend][bucket];
      t.runs += r.runs;
      t.agreements += r.agreements;
      t.failures += r.failures;
      t.max_abs_error = std::max(t.max_abs_error, r.max_abs_error);
      t.serving_seconds += r.serving_seconds;
      t.canary_seconds += r.canary_seconds;
      if (!r.serving.empty()) t.serving = r.serving;
    }
  }
}

std::string canary_summary(const std::map<std::string, CanaryBucketRecord>& buckets) {
  uint64_t runs = 0, agree = 0, failures = 0;
  double serving = 0, canary = 0;
  for (const auto& [bucket, r] : buckets) {
    runs += r.runs;
    agree += r.agreements;
    failures += r.failures;
    serving += r.serving_seconds;
    canary += r.canary_seconds;
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "%llu runs in %zu bucket%s, %llu agree (%.1f%%)",
                static_cast<unsigned long long>(runs), buckets.size(),
                buckets.size() == 1 ? "" : "s", static_cast<unsigned long long>(agree),
                runs ? 100.0 * static_cast<double>(agree) / static_cast<double>(runs) : 0.0);
  std::string s = buf;
  if (failures > 0) s += ", " + std::to_string(failures) + " failed";
  if (canary > 0 && serving > 0) {
    std::snprintf(buf, sizeof buf, ", %.2fx the serving backend's speed", serving / canary);
    s += buf;
  }
  return s;
}

}  // namespace tessera
