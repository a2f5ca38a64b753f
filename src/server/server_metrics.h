// The server's own Prometheus series: responses per route and status, request
// latency, batches (size, tokens, time, queue wait). Written through the
// runtime's MetricsText, the builder every tessera exporter uses. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/metrics.h"
#include "server/batcher.h"

namespace tessera::server {

// Observations under fixed upper bounds (the last slot counts the rest).
struct HistogramCounts {
  explicit HistogramCounts(std::vector<double> upper_bounds);
  void observe(double value);
  std::vector<double> bounds;
  std::vector<uint64_t> counts;
  double sum = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();
  // One answered HTTP request.
  void count_response(const std::string& route, int status, double seconds);
  void observe_batch(const BatchReport& report);
  // A POST request's CPU time on its HTTP thread (parsing, tokenizing,
  // writing the answer), and why its RequestBudget stopped it (null: it
  // was not stopped).
  void count_request_work(double cpu_seconds, const char* stopped_because);
  // tessera_server_* families.
  void append(MetricsText* out) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> responses_;  // (route, status)
  std::map<std::string, HistogramCounts> latency_;             // per route
  double request_cpu_seconds_ = 0;
  std::map<std::string, uint64_t> stopped_;  // by reason
  uint64_t batches_ok_ = 0;
  uint64_t batches_failed_ = 0;
  uint64_t batch_retries_ = 0;
  uint64_t sequences_ = 0;
  uint64_t tokens_ = 0;
  HistogramCounts batch_sequences_;
  HistogramCounts batch_tokens_;
  HistogramCounts batch_seconds_;
  HistogramCounts queue_wait_seconds_;
};

}  // namespace tessera::server
