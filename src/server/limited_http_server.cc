#include "server/limited_http_server.h"

#include <sys/socket.h>

#include <cstdio>
#include <exception>

namespace tessera::server {

bool LimitedHttpServer::raise_backlog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }

bool LimitedHttpServer::process_and_close_socket(socket_t sock) {
  ConnectionStream stream(sock, limits_, on_cut_);  // closes the socket when done
  const CurrentConnectionScope scope(&stream);
  const auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
  bool ok = false;
  for (size_t left = keep_alive_max_count_; left > 0; --left) {
    if (stopping() || !stream.wait_for_request(stopping)) break;
    bool client_closes = false;
    try {
      ok = process_request(stream, /*close_connection=*/left == 1, client_closes, nullptr);
    } catch (const std::exception& e) {
      // Handlers' exceptions are answered 500 by the exception handler; this
      // is one from writing an answer (e.g. bad_alloc). The connection ends,
      // the process lives.
      std::fprintf(stderr, "tessera serve: connection dropped: %s\n", e.what());
      ok = false;
    } catch (...) {
      std::fprintf(stderr, "tessera serve: connection dropped: unknown exception\n");
      ok = false;
    }
    if (!ok || client_closes || stream.must_close()) break;
  }
  return ok;
}

}  // namespace tessera::server
