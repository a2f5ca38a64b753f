// The route handlers, free of HTTP plumbing: each takes the request body and
// returns the status and JSON (or Prometheus text) to send. http_server.cc
// wires them to cpp-httplib, adds authentication, limits and metrics.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "pipeline/embedding_model.h"
#include "server/batcher.h"
#include "server/inputs.h"
#include "server/served_model.h"
#include "server/server_metrics.h"
#include "server/server_options.h"

namespace tessera::server {

class ConnectionPool;

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  int retry_after_seconds = 0;  // > 0: a Retry-After header
};

// Appends Prometheus families owned elsewhere (profiler, dispatcher, memory).
using MetricsSource = std::function<void(std::string* out)>;

struct RouteContext {
  pipeline::EmbeddingModel& model;
  const ModelInfo& model_info;
  Batcher& batcher;
  ServerMetrics& metrics;
  const ServerOptions& options;
  const ServingInfo& info;
  MetricsSource extra_metrics;
  const std::atomic<bool>& draining;
  // The HTTP server's connection threads (null before it listens).
  const std::atomic<const ConnectionPool*>& connections;
};

Reply handle_embed(RouteContext& rc, std::string_view body);         // POST /embed
Reply handle_openai_embeddings(RouteContext& rc, std::string_view body);  // POST /v1/embeddings
Reply handle_embed_documents(RouteContext& rc, std::string_view body);  // POST /embed_documents
Reply handle_tokenize(RouteContext& rc, std::string_view body);      // POST /tokenize
Reply handle_health(RouteContext& rc);                               // GET /health
Reply handle_info(RouteContext& rc);                                 // GET /info
Reply handle_metrics(RouteContext& rc);                              // GET /metrics

// Submits the prepared sequences to the batcher and waits for their rows:
// the answer every embedding route gives to a full queue (429), a shutdown
// (503), the memory budget (503), a model failure (424, naming field[i]) or
// non-finite rows (500). `field` names the inputs ("inputs", "documents").
ApiError run_job(RouteContext& rc, PreparedInputs& inputs, const std::string& field,
                 std::shared_ptr<EmbedJob>* job);

}  // namespace tessera::server
