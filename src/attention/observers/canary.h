// Canary records on disk: what `--canary NAME` learned about a candidate
// backend, merged across runs into one JSON file that `tessera backends`
// shows. Format ("format": "tessera.canary", "version": 1):
//   {"format": "tessera.canary", "version": 1, "backends": {"cpu.flash":
//     {"f32,mask=none,D<=64,Sq<=512,Sk<=512": {"runs": 10, "agreements": 10,
//      "failures": 0, "max_abs_error": 3e-7, "serving_seconds": 0.4,
//      "canary_seconds": 0.1, "serving": "cpu.gemm"}}}}
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tessera/observers.h"

namespace tessera {

// A missing file is an empty record, not an error.
Status load_canary_records(const std::string& path, CanaryRecords* out);
Status save_canary_records(const std::string& path, const CanaryRecords& records);
// One backend's buckets as the file stores them ({"BUCKET": {"runs": ...}}).
nlohmann::json canary_buckets_to_json(const std::map<std::string, CanaryBucketRecord>& buckets);
// Adds `more` into `into` (counts and times add, errors take the max).
void merge_canary_records(const CanaryRecords& more, CanaryRecords* into);
// "12 runs in 2 buckets, 12 agree (100%), 3.1x the serving backend's speed"
std::string canary_summary(const std::map<std::string, CanaryBucketRecord>& buckets);

}  // namespace tessera
