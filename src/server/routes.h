// The route handlers, free of HTTP plumbing: each takes the request body and
// returns the status and JSON (or Prometheus text) to send. http_server.cc
// wires them to cpp-httplib, adds authentication, limits and metrics.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "server/batcher.h"
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
  ServedModel& model;
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
Reply handle_tokenize(RouteContext& rc, std::string_view body);      // POST /tokenize
Reply handle_health(RouteContext& rc);                               // GET /health
Reply handle_info(RouteContext& rc);                                 // GET /info
Reply handle_metrics(RouteContext& rc);                              // GET /metrics

}  // namespace tessera::server
