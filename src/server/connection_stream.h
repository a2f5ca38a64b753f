// One client connection as cpp-httplib reads and writes it. The reactor
// (connection_reactor.h) has already received a whole request into the
// connection's buffer, framing checked, within the request's deadline; so
// reads are served from that buffer and cpp-httplib never waits on a slow
// client. (The one exception is a request refused before its body, a 401:
// the body stays unread and the connection closes after the answer.) Writes
// go to the socket under a deadline per response (--write-timeout).
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "server/http_framing.h"
#include "tessera/allocator.h"

namespace tessera::server {

struct ConnectionLimits {
  double read_timeout_seconds = 30;    // one request, head and body, from its first byte
  double write_timeout_seconds = 30;   // one response, from its first byte
  double idle_timeout_seconds = 5;     // between requests on a kept-alive connection
  size_t max_header_bytes = 32 << 10;  // request line and headers together
  size_t max_line_bytes = 8192;        // one line of them (cpp-httplib's own limit)
  size_t max_body_bytes = 0;           // raw body bytes (chunk framing included)
  size_t payload_limit_bytes = 0;      // for messages: --payload-limit
};

// Called with the status a connection was cut with (400, 408, 413, 414, 431,
// 501, 503, 505).
using CutObserver = std::function<void(int status)>;

using Clock = std::chrono::steady_clock;

// A client connection and what has arrived on it. Owned by the reactor; a
// worker borrows it to serve one request.
struct Connection {
  enum class Phase { kIdle, kHead, kBody, kWorking, kDraining };

  explicit Connection(int fd, uint64_t serial) : sock(fd), id(serial) {}
  const int sock;     // non-blocking
  const uint64_t id;  // accept order: the oldest is shed first
  Phase phase = Phase::kIdle;
  std::string in;         // received, not yet consumed; the request starts at 0
  size_t head_scan = 0;   // when kHead: start of the first line not yet seen whole
  size_t head_bytes = 0;  // when kBody / kWorking: the head's length
  std::optional<framing::ChunkedScanner> chunked;
  size_t scanned = 0;  // body bytes fed to `chunked`
  framing::HeadVerdict verdict;
  Clock::time_point deadline;  // of the phase: idle, request or drain
  size_t requests = 0;         // served on this connection
  Reservation buffered;        // `in`'s bytes, counted against the budget
};

class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(Connection& conn, const ConnectionLimits& limits);

  // The answer being sent leaves the request's body unread (401, 413 before
  // the body): the connection closes after it.
  void close_after_response() { close_after_response_ = true; }
  bool must_close() const { return broken_ || close_after_response_; }
  // Bytes of conn.in that cpp-httplib read (the request), to drop after it.
  size_t consumed() const { return pos_; }
  // The client closed the connection (or it broke) while its request is
  // being served: nobody will read the answer. Bytes it sent after the
  // request (a pipelined one) do not count.
  bool peer_gone() const;
  // Keeps `r` until the answer is sent (the memory of a large answer body).
  void hold(Reservation r) { held_ = std::move(r); }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return conn_.sock; }

 private:
  // Polls for `events` until `deadline`; false on timeout or error.
  bool wait(short events, Clock::time_point deadline) const;

  Connection& conn_;
  const ConnectionLimits& limits_;
  size_t pos_ = 0;
  bool broken_ = false;
  bool close_after_response_ = false;
  bool writing_ = false;
  Clock::time_point write_deadline_;
  Reservation held_;
};

// The connection being served on the calling thread, or null: the server's
// handlers run on the connection's thread and use it to close the
// connection after an answer that leaves the body unread.
ConnectionStream* current_connection();

// Makes `stream` the current connection of this thread for its lifetime.
class CurrentConnectionScope {
 public:
  explicit CurrentConnectionScope(ConnectionStream* stream);
  ~CurrentConnectionScope();
  CurrentConnectionScope(const CurrentConnectionScope&) = delete;
  CurrentConnectionScope& operator=(const CurrentConnectionScope&) = delete;
};

// Seconds as a steady-clock duration.
Clock::duration seconds(double s);

}  // namespace tessera::server
