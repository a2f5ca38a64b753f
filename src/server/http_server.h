// EmbeddingServer: the HTTP front (cpp-httplib) over the routes and the
// batcher. Lifecycle: bind() -> serve() (blocks) ... stop() from any thread
// (a signal watcher, a test): the listening socket closes at once, requests
// already being handled are answered, then serve() returns.
#pragma once

#include <memory>

#include "server/routes.h"
#include "server/served_model.h"
#include "server/server_options.h"
#include "tessera/allocator.h"
#include "tessera/context.h"

namespace tessera::server {

class EmbeddingServer {
 public:
  // `model`, `ctx` and `alloc` must outlive the server; the model runs on
  // ctx (from the batcher thread only) and result rows come from `alloc`
  // (ctx's allocator in `tessera serve`). `extra_metrics` appends the
  // families of the shared profiler registry to /metrics.
  EmbeddingServer(pipeline::EmbeddingModel& model, ModelInfo model_info, Context& ctx,
                  TrackingAllocator& alloc, ServerOptions options, ServingInfo info,
                  MetricsSource extra_metrics = {});
  EmbeddingServer(const EmbeddingServer&) = delete;
  EmbeddingServer& operator=(const EmbeddingServer&) = delete;
  ~EmbeddingServer();

  // Binds options.host:options.port (0: a free port); *port receives it.
  Status bind(int* port);
  // Serves until stop(); returns once every accepted request is answered and
  // the batcher has drained.
  Status serve();
  // Thread-safe and idempotent; does not wait (serve() does).
  void stop();

  const Batcher& batcher() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::server
