// cpp-httplib's Server behind our connection reader: cpp-httplib accepts
// connections (its listen loop) and parses and routes requests (its
// process_request and handlers); every connection in between is held by a
// ConnectionReactor, which hands a worker one whole, framing-checked request
// at a time (connection_reactor.h). Also raises the listen backlog.
#pragma once

#include <httplib.h>

#include <memory>

#include "server/connection_reactor.h"

namespace tessera::server {

class LimitedHttpServer : public httplib::Server {
 public:
  using ReadBodyFirst = decltype(ReactorHooks::read_body_first);
  // `limits` must outlive the server. `read_body_first` and `on_cut` as in
  // ReactorHooks.
  LimitedHttpServer(const ConnectionLimits& limits, size_t max_connections, size_t max_threads,
                    TrackingAllocator& alloc, ReadBodyFirst read_body_first, CutObserver on_cut,
                    ConnectionPool::ThreadStarter start_thread = {});

  // cpp-httplib listens with a backlog of 5: a burst of new clients would see
  // dropped SYNs and 1 s retransmits. listen() again on the bound socket
  // raises it (Linux allows it on a listening socket).
  bool raise_backlog(int backlog);
  // Starts the connection reader; before listen_after_bind().
  Status start() { return reactor_.start(); }
  const ConnectionReactor& reactor() const { return reactor_; }

 private:
  // Called by cpp-httplib's accept loop (through AcceptQueue, on that
  // thread) for each new connection: the reactor takes it.
  bool process_and_close_socket(socket_t sock) override;
  // One buffered request on a worker thread.
  AfterRequest serve_one(Connection& c);

  const ConnectionLimits& limits_;
  ConnectionReactor reactor_;
};

}  // namespace tessera::server
