#include "server/server_metrics.h"

namespace tessera::server {

namespace {

std::vector<double> latency_bounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> powers_of_two(double first, int count) {
  std::vector<double> b;
  b.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) b.push_back(first * (1 << i));
  return b;
}

}  // namespace

HistogramCounts::HistogramCounts(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void HistogramCounts::observe(double value) {
  size_t b = 0;
  while (b < bounds.size() && value > bounds[b]) ++b;
  ++counts[b];
  sum += value;
}

ServerMetrics::ServerMetrics()
    : batch_sequences_(powers_of_two(1, 10)),
      batch_tokens_(powers_of_two(16, 12)),
      batch_seconds_(latency_bounds()),
      queue_wait_seconds_(latency_bounds()) {}

void ServerMetrics::count_response(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++responses_[{route, status}];
  latency_.try_emplace(route, latency_bounds()).first->second.observe(seconds);
}

void ServerMetrics::observe_batch(const BatchReport& report) {
  std::lock_guard<std::mutex> lock(mu_);
  if (report.ok) {
    ++batches_ok_;
  } else {
    ++batches_failed_;
  }
  if (report.model_runs > 1) batch_retries_ += report.model_runs - 1;
  sequences_ += report.embedded_sequences;
  tokens_ += static_cast<uint64_t>(report.embedded_tokens);
  batch_sequences_.observe(static_cast<double>(report.sequences));
  batch_tokens_.observe(static_cast<double>(report.tokens));
  batch_seconds_.observe(report.embed_seconds);
  queue_wait_seconds_.observe(report.max_wait_seconds);
}

void ServerMetrics::count_request_work(double cpu_seconds, const char* stopped_because) {
  std::lock_guard<std::mutex> lock(mu_);
  request_cpu_seconds_ += cpu_seconds;
  if (stopped_because != nullptr) ++stopped_[stopped_because];
}

void ServerMetrics::append(MetricsText* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, n] : responses_) {
    out->counter(
        "tessera_server_requests_total", "HTTP requests answered, by route and status code",
        {{"route", key.first}, {"code", std::to_string(key.second)}}, static_cast<double>(n));
  }
  for (const auto& [route, h] : latency_) {
    out->histogram("tessera_server_request_duration_seconds",
                   "Time from the request read to the response built, by route", {{"route", route}},
                   h.bounds, h.counts, h.sum);
  }
  out->counter("tessera_server_request_cpu_seconds_total",
               "CPU time of POST requests on their HTTP threads (parsing, tokenizing, answers)", {},
               request_cpu_seconds_);
  for (const char* reason : {"cpu_limit", "client_gone", "drain_deadline"}) {
    const auto it = stopped_.find(reason);
    out->counter("tessera_server_requests_stopped_total",
                 "Requests stopped while working: over --request-cpu-limit, client gone, or "
                 "past --drain-timeout",
                 {{"reason", reason}},
                 it == stopped_.end() ? 0.0 : static_cast<double>(it->second));
  }
  const char* batches_help = "Batches run by the batcher, by outcome of their first (merged) run";
  out->counter("tessera_server_batches_total", batches_help, {{"outcome", "ok"}},
               static_cast<double>(batches_ok_));
  out->counter("tessera_server_batches_total", batches_help, {{"outcome", "failed"}},
               static_cast<double>(batches_failed_));
  out->counter("tessera_server_batch_retries_total",
               "Model runs of parts of failed batches, made so that a failure is answered "
               "only to the requests whose sequences fail",
               {}, static_cast<double>(batch_retries_));
  out->counter("tessera_server_embedded_sequences_total", "Sequences embedded", {},
               static_cast<double>(sequences_));
  out->counter("tessera_server_embedded_tokens_total", "Tokens embedded ([CLS] and [SEP] included)",
               {}, static_cast<double>(tokens_));
  const auto hist = [out](const char* name, const char* help, const HistogramCounts& h) {
    out->histogram(name, help, {}, h.bounds, h.counts, h.sum);
  };
  hist("tessera_server_batch_sequences", "Sequences per batch", batch_sequences_);
  hist("tessera_server_batch_tokens", "Tokens per batch", batch_tokens_);
  hist("tessera_server_batch_duration_seconds", "Time to embed one batch", batch_seconds_);
  hist("tessera_server_queue_wait_seconds",
       "Time the oldest sequence of a batch waited in the queue", queue_wait_seconds_);
}

}  // namespace tessera::server
