// Options of `tessera serve` and what /info reports besides the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "server/batcher.h"

namespace tessera::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless asked
  int port = 3000;                 // 0: any free port
  std::string api_key;             // empty: no authentication
  BatcherOptions batching;
  size_t max_client_batch_size = 32;     // texts per request; more: 413
  size_t payload_limit_bytes = 2 << 20;  // request body; more: 413
  // One answer's body (/tokenize, /embed_all can answer 30x their request);
  // more: 413. Answers in flight also count against --memory-budget.
  size_t max_response_bytes = 16 << 20;
  bool auto_truncate = false;  // default of `truncate`
  // The model's name on the OpenAI and Cohere routes (`model`, GET
  // /v1/models) and /info's served_model_name; empty: the model's id (its
  // folder's name).
  std::string served_model_name;
  // --quantization-ranges: 2 x quantization_dims floats (per-dimension
  // minimum, then maximum) for int8 / uint8 output (include/tessera/quantize.h);
  // empty: int8 / uint8 are refused.
  std::vector<float> quantization_ranges;
  int64_t quantization_dims = 0;
  int http_threads = 0;  // cap on worker threads; 0: http_thread_cap()'s default
  // Connections held at once (idle, arriving, served); past it the oldest
  // not being served is shed. 0: what the descriptor limit allows.
  size_t max_connections = 0;
  // Starts an HTTP worker thread (std::thread when empty); tests inject a
  // failing one, as a pids or memory limit would.
  std::function<std::thread(std::function<void()>)> start_thread;
  // Per connection (see connection_stream.h). A client must send a whole
  // request within read_timeout of its first byte (else 408) and take a whole
  // response within write_timeout; an idle kept-alive connection closes after
  // keep_alive_timeout. A request line and headers over max_header_bytes: 431.
  double read_timeout_seconds = 30;
  double write_timeout_seconds = 30;
  double keep_alive_timeout_seconds = 5;
  size_t max_header_bytes = 32 << 10;
  // CPU seconds one request may spend on its HTTP thread (tokenizing its
  // texts) before it is stopped with a 413; <= 0: no bound. 2 MB of text
  // takes well under a second on every tokenizer family (BENCHMARKS.md).
  double request_cpu_seconds = 10;
  // After stop() (SIGTERM), requests still working this long after it are
  // stopped with a 503 so that the process exits in time.
  double drain_timeout_seconds = 20;
};

// Connection threads start on demand up to the cap. Past the admitted
// requests, connections still need a thread to be told 429 at once (and to
// serve /health, /metrics) while the queue is full.
constexpr size_t kSpareHttpThreads = 16;
constexpr size_t kDefaultHttpThreads = 1024;
inline size_t http_thread_cap(const ServerOptions& o) {
  if (o.http_threads > 0) return static_cast<size_t>(o.http_threads);
  const size_t needed = o.batching.max_concurrent_requests + kSpareHttpThreads;
  return needed > kDefaultHttpThreads ? needed : kDefaultHttpThreads;
}

struct ServingInfo {
  std::string version;
  std::string attention_policy;       // as given (--attention / TESSERA_ATTENTION)
  std::vector<std::string> backends;  // attention backends registered
  int64_t started_at = 0;  // unix seconds (GET /v1/models' "created"); 0: set by the server
};

}  // namespace tessera::server
