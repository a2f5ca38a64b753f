// One client connection of the HTTP server, read and written under the limits
// cpp-httplib 0.11 leaves open: its read and write timeouts bound each
// recv()/send() only, so a client that sends (or reads) one byte every few
// seconds holds a connection thread forever (slowloris); a header line or a
// chunked body grows without bound in memory; and an over-long body is read
// to its end before the 413. This stream gives every request a deadline from
// its first byte, caps the bytes of its head and body, and answers a client
// that breaks a limit itself (408, 413, 414, 431) before closing.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

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

// Called with the status a connection was cut with (408, 413, 414, 431).
using CutObserver = std::function<void(int status)>;

class ConnectionStream final : public httplib::Stream {
 public:
  // Takes ownership of `sock`; the destructor closes it.
  ConnectionStream(int sock, const ConnectionLimits& limits, const CutObserver& on_cut);
  ~ConnectionStream() override;
  ConnectionStream(const ConnectionStream&) = delete;
  ConnectionStream& operator=(const ConnectionStream&) = delete;

  // Waits up to the idle timeout for the next request's first byte and starts
  // its deadline. False: idle timeout, an error, or `stopping()` turned true
  // (polled every few milliseconds so a stopping server does not wait).
  bool wait_for_request(const std::function<bool()>& stopping);

  // The answer being sent leaves the request's body unread (401, 413 before
  // the body): the connection closes after it instead of reading the body as
  // the next request.
  void close_after_response() { close_after_response_ = true; }
  // The connection must not serve another request.
  bool must_close() const { return state_ != State::kOpen || close_after_response_; }
  // A limit was broken and answered by this stream (httplib's own answer to
  // the failed read is not sent).
  bool cut() const { return state_ == State::kCut; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

 private:
  using Clock = std::chrono::steady_clock;
  enum class State { kOpen, kCut, kBroken };  // kBroken: the socket failed, no answer
  enum class Phase { kHead, kBody };

  // Polls for `events` until `deadline`; false on timeout or error.
  bool wait(short events, Clock::time_point deadline) const;
  // Accounts the next n buffered bytes to the head or the body. Returns how
  // many may be handed out (all of them), or 0 after cutting the connection.
  size_t account(size_t n);
  // Sends a JSON error answer with Connection: close, then refuses all I/O.
  void cut_with(int status, const std::string& message);
  // After an answer the client may still be sending: read and drop what
  // comes for a short while, so that closing does not reset the connection
  // before the client has read the answer.
  void linger();

  const int sock_;
  const ConnectionLimits& limits_;
  const CutObserver& on_cut_;
  State state_ = State::kOpen;
  bool close_after_response_ = false;

  // The request being read.
  Phase phase_ = Phase::kHead;
  Clock::time_point read_deadline_;
  Clock::time_point write_deadline_;
  bool writing_ = false;  // a response is being written (its deadline runs)
  size_t head_bytes_ = 0;
  size_t line_bytes_ = 0;
  bool first_line_ = true;
  char last_byte_ = 0;
  size_t body_bytes_ = 0;

  static constexpr size_t kBufferSize = 4096;
  char buffer_[kBufferSize];
  size_t buffer_begin_ = 0;
  size_t buffer_end_ = 0;
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

}  // namespace tessera::server
