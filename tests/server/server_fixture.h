// An EmbeddingServer on a free loopback port, serving from a thread, and an
// HTTP client for it. The destructor stops the server and joins.
#pragma once

#include <httplib.h>

#include <memory>
#include <thread>

#include "support/fake_model.h"
#include "server/http_server.h"
#include "tessera/allocator.h"

namespace tessera::server::testing {

class RunningServer {
 public:
  RunningServer(tessera::testing::FakeModel& model, TrackingAllocator& alloc, ServerOptions options,
                MetricsSource extra = {})
      : server_(model, model.info(), model.context(), alloc, with_free_port(std::move(options)),
                {"test", "auto", {"reference", "cpu.flash"}}, std::move(extra)) {
    bind_status_ = server_.bind(&port_);
    if (bind_status_.ok()) thread_ = std::thread([this] { serve_status_ = server_.serve(); });
  }
  ~RunningServer() { (void)stop_and_join(); }

  const Status& bind_status() const { return bind_status_; }
  int port() const { return port_; }
  EmbeddingServer& server() { return server_; }

  std::unique_ptr<httplib::Client> client() const {
    constexpr time_t kReadTimeoutSeconds = 60;
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(kReadTimeoutSeconds, 0);
    return c;
  }

  // Returns serve()'s status.
  Status stop_and_join() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
    return serve_status_;
  }

 private:
  static ServerOptions with_free_port(ServerOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    return o;
  }

  EmbeddingServer server_;
  Status bind_status_;
  Status serve_status_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace tessera::server::testing
