// The tuned decision table written by `tessera tune` and read by `auto`:
// for each shape bucket, the backends measured on this machine, fastest
// first. A table is keyed by the machine and library versions it was
// measured with; a table from another machine is refused, not used.
// A shipped default ranking (attention/tuning/shipped_rankings.h) is the same
// format with "cpu_kind" set: it applies to every CPU of that kind, and its
// key only records where it was measured.
//
// File format (JSON, "format": "tessera.tuning", "version": 1):
//   {"format": "tessera.tuning", "version": 1,
//    "key": {"cpu": "...", "gpu": "", "tessera": "0.1.0", "gemm": "oneDNN 2.6.3",
//            "simd": "Highway 1.0.3"},
//    "threads": 2, "created": "2026-12-02T10:00:00Z", "command": "tessera tune",
//    "load": "1-minute load average 0.10 at start, 0.85 at end; 2 hardware threads",
//    "cpu_kind": "x86-avx2",   (shipped default rankings only)
//    "entries": [{"bucket": "f32,mask=none,D<=64,Sq<=512,Sk<=512",
//                 "shape": "B=2,S=512,H=8,D=64,dtype=f32",
//                 "ranking": [{"backend": "cpu.flash", "median_ms": 1.2}, ...]}]}
#pragma once

#include <string>
#include <vector>

#include "tessera/attention.h"
#include "tessera/status.h"

namespace tessera {

// dtype, mask kind, head dim and query/key length classes:
//   "bf16,mask=causal,D<=128,Sq=1,Sk<=2048"
// Lengths: =1, <=16, <=128, <=512, <=2048, <=8192, >8192.
// Head dims: <=32, <=64, <=128, <=256, >256.
std::string tuning_bucket(const AttentionArgs& args);
// The same bucket as a small number, for lookups on the dispatch path that
// build no text; tuning_bucket_name turns it back into the text above.
uint32_t tuning_bucket_key(DType dtype, MaskKind mask, const AttentionDims& dims);
std::string tuning_bucket_name(uint32_t key);
// Every key there is (a few thousand): how a table's text buckets are mapped
// to keys once, when the dispatcher takes the table.
std::vector<uint32_t> all_tuning_bucket_keys();

struct TuningKey {
  std::string cpu, gpu, tessera, gemm, simd;
  bool operator==(const TuningKey&) const = default;
  std::string describe() const;  // "cpu 'AMD EPYC', tessera 0.1.0, oneDNN 2.6.3, ..."
};
// This process's key (gpu "" on CPU-only builds).
TuningKey current_tuning_key();

struct TuningMeasurement {
  std::string backend;
  double median_ms = 0;
};
struct TuningEntry {
  std::string bucket;
  std::string shape;                       // the shape measured for it
  std::vector<TuningMeasurement> ranking;  // fastest first
};

class TuningTable {
 public:
  static constexpr int kVersion = 1;

  TuningKey key;
  int threads = 0;
  std::string created;  // UTC, ISO 8601
  std::string command;
  std::string machine_load;  // how busy the machine was while measuring
  std::string cpu_kind;      // a shipped default ranking's CpuKind name; "" for a user's table
  std::vector<TuningEntry> entries;
  std::string source;  // where it was loaded from (not stored)

  bool shipped() const { return !cpu_kind.empty(); }
  // What explain and the runtime's note call it: "tuned table (PATH)" or
  // "shipped default ranking for x86-avx2, measured on 'AMD EPYC' 2026-12-03".
  std::string describe() const;
  const TuningEntry* find(const std::string& bucket) const;
  std::string to_json() const;
  // Parses and checks the format, version and fields (not the key).
  static Status parse(const std::string& text, const std::string& source, TuningTable* out);
  // Reads `path`, parses, and refuses a table whose key is not `expected`.
  static Status load(const std::string& path, const TuningKey& expected, TuningTable* out);
  Status save(const std::string& path) const;
};

// "1-minute load average 2.10 at start, 2.40 at end; 2 hardware threads"
// from two readings of /proc/loadavg (negative: unreadable).
double load_average();
std::string describe_load(double at_start, double at_end);

}  // namespace tessera
