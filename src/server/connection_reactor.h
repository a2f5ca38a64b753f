// The connection reader of the HTTP server: one thread and epoll hold every
// connection while it is idle (keep-alive) or while its request is still
// arriving, and hand it to a worker (ConnectionPool) only once the whole
// request is buffered with its framing checked (http_framing.h). So a slow
// or silent client costs a socket and a small buffer, never a thread, and
// ~1,000 clients that send one byte each cannot keep /health from a
// well-behaved client (issue 35; docs/DECISIONS.md, "HTTP: a reactor in
// front of the workers").
//
// Bounds: the request deadline runs from its first byte (408); head and
// body sizes as ConnectionLimits says (414 / 431 / 413); the bytes buffered
// count against the memory budget (503); past max_connections the oldest
// connection that is not being served is shed, so a new client always gets
// in. Every refusal is answered, then the connection drains for a moment
// and closes (a reset would lose the answer).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/connection_pool.h"
#include "server/connection_stream.h"
#include "server/http_framing.h"
#include "tessera/allocator.h"
#include "tessera/status.h"

namespace tessera::server {

// What a worker leaves a connection in after serving one request.
enum class AfterRequest {
  kKeep,        // ready for the next request
  kClose,       // close now
  kDrainClose,  // the client may still be sending (an unread body): drain, then close
};

struct ReactorHooks {
  // False: hand the request on after its head, without reading the body
  // (it is refused before the body, e.g. a 401).
  std::function<bool(const framing::HeadVerdict& verdict, std::string_view head)> read_body_first;
  // Serves the one buffered request of the connection, on a worker thread.
  std::function<AfterRequest(Connection&)> serve;
  CutObserver on_cut;  // a connection cut with this status
};

class ConnectionReactor {
 public:
  ConnectionReactor(const ConnectionLimits& limits, size_t max_connections, size_t max_threads,
                    TrackingAllocator& alloc, ReactorHooks hooks,
                    ConnectionPool::ThreadStarter start_thread = {});
  ConnectionReactor(const ConnectionReactor&) = delete;
  ConnectionReactor& operator=(const ConnectionReactor&) = delete;
  ~ConnectionReactor();

  // Starts the reactor thread.
  Status start();
  // A newly accepted socket (any thread). Takes ownership.
  void add(int sock);
  // Closes what is idle or arriving, lets the requests being served finish,
  // then joins every thread. Idempotent.
  void shutdown();

  size_t open_connections() const { return open_.load(); }
  size_t shed_connections() const { return shed_.load(); }
  size_t max_connections() const { return max_connections_; }
  const ConnectionPool& workers() const { return pool_; }

 private:
  void loop();
  void take_handoffs();
  void accept_new(int sock);
  void on_readable(Connection& c);
  // Moves the connection on as far as its buffered bytes allow.
  void advance(Connection& c);
  bool head_complete(Connection& c);
  bool body_complete(Connection& c);
  void dispatch(Connection& c);
  void returned(Connection& c, AfterRequest after);
  void refuse(Connection& c, int status, const std::string& message, const std::string& field = "");
  // A framing 413's message, naming the option that sets the limit.
  std::string with_limit(int status, const std::string& message) const;
  void drain(Connection& c);
  void close(Connection& c);
  void sweep(Clock::time_point now);
  void watch(Connection& c);
  void unwatch(Connection& c);
  void wake();

  const ConnectionLimits& limits_;
  const size_t max_connections_;
  TrackingAllocator& alloc_;
  const ReactorHooks hooks_;
  ConnectionPool pool_;

  int epoll_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  uint64_t next_id_ = 1;                                             // reactor thread only
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;  // reactor thread only

  // Accepted sockets the reader has not taken yet, at most; see add().
  static constexpr size_t kMaxIncoming = 32;

  std::mutex mu_;                  // guards the hand-offs and stopping_
  std::condition_variable taken_;  // the reader took the incoming sockets
  std::vector<int> incoming_;
  std::vector<std::pair<Connection*, AfterRequest>> back_;
  bool stopping_ = false;
  bool stopped_ = false;

  std::atomic<size_t> open_{0};
  std::atomic<size_t> shed_{0};
};

}  // namespace tessera::server
