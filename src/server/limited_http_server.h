// cpp-httplib's Server with each connection served through ConnectionStream
// (deadlines and size limits per request, see connection_stream.h) and a
// listen backlog fit for bursts. Nothing else of cpp-httplib changes: routing,
// parsing and the handlers are its own.
#pragma once

#include <httplib.h>

#include "server/connection_stream.h"

namespace tessera::server {

class LimitedHttpServer : public httplib::Server {
 public:
  // `limits` and `on_cut` must outlive the server.
  LimitedHttpServer(const ConnectionLimits& limits, const CutObserver& on_cut)
      : limits_(limits), on_cut_(on_cut) {}

  // cpp-httplib listens with a backlog of 5: a burst of new clients would see
  // dropped SYNs and 1 s retransmits. listen() again on the bound socket
  // raises it (Linux allows it on a listening socket).
  bool raise_backlog(int backlog);

 private:
  // Overrides cpp-httplib's (private, virtual) per-connection loop: the same
  // keep-alive loop over process_request(), on our stream. Never throws.
  bool process_and_close_socket(socket_t sock) override;

  const ConnectionLimits& limits_;
  const CutObserver& on_cut_;
};

}  // namespace tessera::server
