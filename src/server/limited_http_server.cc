#include "server/limited_http_server.h"

#include <sys/socket.h>

#include <cstdio>
#include <exception>

namespace tessera::server {

namespace {

// cpp-httplib hands each accepted socket to a TaskQueue; this one passes it
// to the reactor at once (process_and_close_socket returns immediately), and
// its shutdown, when the accept loop ends, stops the reactor.
class AcceptQueue final : public httplib::TaskQueue {
 public:
  explicit AcceptQueue(ConnectionReactor& reactor) : reactor_(reactor) {}
  ~AcceptQueue() override = default;
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { reactor_.shutdown(); }

 private:
  ConnectionReactor& reactor_;
};

}  // namespace

LimitedHttpServer::LimitedHttpServer(const ConnectionLimits& limits, size_t max_connections,
                                     size_t max_threads, TrackingAllocator& alloc,
                                     ReadBodyFirst read_body_first, CutObserver on_cut,
                                     ConnectionPool::ThreadStarter start_thread)
    : limits_(limits),
      reactor_(limits, max_connections, max_threads, alloc,
               ReactorHooks{std::move(read_body_first),
                            [this](Connection& c) { return serve_one(c); }, std::move(on_cut)},
               std::move(start_thread)) {
  new_task_queue = [this]() -> httplib::TaskQueue* { return new AcceptQueue(reactor_); };
}

bool LimitedHttpServer::raise_backlog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }

bool LimitedHttpServer::process_and_close_socket(socket_t sock) {
  reactor_.add(sock);
  return true;
}

AfterRequest LimitedHttpServer::serve_one(Connection& c) {
  ConnectionStream stream(c, limits_);
  const CurrentConnectionScope scope(&stream);
  const bool last =
      c.verdict.close || svr_sock_ == INVALID_SOCKET || c.requests + 1 >= keep_alive_max_count_;
  bool client_closes = false;
  bool ok = false;
  try {
    ok = process_request(stream, last, client_closes, nullptr);
  } catch (const std::exception& e) {
    // Handlers' exceptions are answered 500 by the exception handler; this
    // is one from writing an answer (e.g. bad_alloc). The connection ends,
    // the process lives.
    std::fprintf(stderr, "tessera serve: connection dropped: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "tessera serve: connection dropped: unknown exception\n");
  }
  c.in.erase(0, stream.consumed());
  if (stream.must_close()) return AfterRequest::kDrainClose;
  if (!ok || client_closes || last) return AfterRequest::kClose;
  return AfterRequest::kKeep;
}

}  // namespace tessera::server
