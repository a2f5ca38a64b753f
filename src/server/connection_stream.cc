#include "server/connection_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "server/json_out.h"

namespace tessera::server {

namespace {

// How often an idle connection checks whether the server is stopping.
constexpr auto kIdlePollSlice = std::chrono::milliseconds(50);
// The most a closing connection keeps reading what the client still sends
// after an error answer (see linger()).
constexpr auto kLingerTime = std::chrono::seconds(2);

thread_local ConnectionStream* tls_current = nullptr;

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

const char* reason_phrase(int status) {
  switch (status) {
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Bad Request";
  }
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

void address_of(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
    port = ntohs(a.sin6_port);
  }
  ip = text;
}

}  // namespace

ConnectionStream::ConnectionStream(int sock, const ConnectionLimits& limits,
                                   const CutObserver& on_cut)
    : sock_(sock), limits_(limits), on_cut_(on_cut) {}

ConnectionStream::~ConnectionStream() {
  if (state_ == State::kCut || (state_ == State::kOpen && close_after_response_)) linger();
  ::shutdown(sock_, SHUT_RDWR);
  ::close(sock_);
}

bool ConnectionStream::wait_for_request(const std::function<bool()>& stopping) {
  if (state_ != State::kOpen) return false;
  const Clock::time_point idle_end = Clock::now() + seconds(limits_.idle_timeout_seconds);
  // A pipelined request may already be buffered.
  while (buffer_begin_ == buffer_end_) {
    if (stopping()) return false;
    const Clock::time_point now = Clock::now();
    if (now >= idle_end) return false;
    const Clock::time_point slice_end = std::min(idle_end, now + kIdlePollSlice);
    if (wait(POLLIN, slice_end)) break;
    if (Clock::now() < slice_end) return false;  // an error, not the slice's end
  }
  phase_ = Phase::kHead;
  read_deadline_ = Clock::now() + seconds(limits_.read_timeout_seconds);
  writing_ = false;
  head_bytes_ = 0;
  line_bytes_ = 0;
  first_line_ = true;
  last_byte_ = 0;
  body_bytes_ = 0;
  return true;
}

bool ConnectionStream::wait(short events, Clock::time_point deadline) const {
  for (;;) {
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    // poll() takes int milliseconds: wait at most a minute per call.
    constexpr double kMaxPollMs = 60e3;
    const int ms = static_cast<int>(
        std::ceil(std::min(kMaxPollMs, std::chrono::duration<double, std::milli>(left).count())));
    pollfd p{sock_, events, 0};
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return true;  // ready, or an error / hang-up the next call reports
    if (r < 0 && errno != EINTR) return false;
  }
}

bool ConnectionStream::is_readable() const {
  if (state_ != State::kOpen) return false;
  return buffer_begin_ < buffer_end_ || wait(POLLIN, read_deadline_);
}

bool ConnectionStream::is_writable() const {
  if (state_ != State::kOpen) return false;
  return wait(POLLOUT,
              writing_ ? write_deadline_ : Clock::now() + seconds(limits_.write_timeout_seconds));
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (state_ != State::kOpen) return -1;
  writing_ = false;
  if (buffer_begin_ == buffer_end_) {
    if (!wait(POLLIN, read_deadline_)) {
      if (Clock::now() >= read_deadline_) {
        cut_with(408, "the request was not received within --read-timeout = " +
                          format_seconds(limits_.read_timeout_seconds) +
                          " s of its first byte; the connection is closed");
      } else {
        state_ = State::kBroken;
      }
      return -1;
    }
    ssize_t n;
    do {
      n = ::recv(sock_, buffer_, kBufferSize, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      state_ = State::kBroken;
      return -1;
    }
    if (n == 0) return 0;  // the client closed its side
    buffer_begin_ = 0;
    buffer_end_ = static_cast<size_t>(n);
  }
  const size_t n = account(std::min(size, buffer_end_ - buffer_begin_));
  if (n == 0) return -1;
  std::memcpy(ptr, buffer_ + buffer_begin_, n);
  buffer_begin_ += n;
  return static_cast<ssize_t>(n);
}

size_t ConnectionStream::account(size_t n) {
  const char* bytes = buffer_ + buffer_begin_;
  size_t i = 0;
  // The head ends at its first empty line (CRLF CRLF); cpp-httplib reads it
  // one byte at a time, so this scan sees each byte once.
  for (; i < n && phase_ == Phase::kHead; ++i) {
    ++head_bytes_;
    ++line_bytes_;
    if (head_bytes_ > limits_.max_header_bytes) {
      cut_with(431, "the request line and headers are longer than --max-header-bytes = " +
                        std::to_string(limits_.max_header_bytes) + " bytes");
      return 0;
    }
    if (line_bytes_ > limits_.max_line_bytes) {
      if (first_line_) {
        cut_with(414, "the request line (method, target, version) is longer than " +
                          std::to_string(limits_.max_line_bytes) + " bytes");
      } else {
        cut_with(431, "a header line is longer than " + std::to_string(limits_.max_line_bytes) +
                          " bytes");
      }
      return 0;
    }
    if (bytes[i] == '\n') {
      if (!first_line_ && line_bytes_ == 2 && last_byte_ == '\r') phase_ = Phase::kBody;
      first_line_ = false;
      line_bytes_ = 0;
    }
    last_byte_ = bytes[i];
  }
  body_bytes_ += n - i;
  if (body_bytes_ > limits_.max_body_bytes) {
    cut_with(413, "the body is larger than --payload-limit = " +
                      std::to_string(limits_.payload_limit_bytes) + " bytes");
    return 0;
  }
  return n;
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (state_ != State::kOpen) return -1;
  if (!writing_) {  // the first write of a response starts its deadline
    writing_ = true;
    write_deadline_ = Clock::now() + seconds(limits_.write_timeout_seconds);
  }
  if (!wait(POLLOUT, write_deadline_)) {
    state_ = State::kBroken;  // the client does not read: no answer can reach it
    return -1;
  }
  ssize_t n;
  do {
    n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) state_ = State::kBroken;
  return n;
}

void ConnectionStream::cut_with(int status, const std::string& message) {
  const ApiError e{status, status == 408 ? "Timeout" : "Validation", "", message};
  const std::string body = tei_error_body(e);
  const std::string answer =
      "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  writing_ = false;
  size_t sent = 0;
  while (sent < answer.size()) {
    const ssize_t n = write(answer.data() + sent, answer.size() - sent);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  if (state_ == State::kOpen) state_ = State::kCut;
  if (on_cut_) on_cut_(status);
}

void ConnectionStream::linger() {
  ::shutdown(sock_, SHUT_WR);  // the answer is complete: the client sees its end
  const Clock::time_point end = Clock::now() + kLingerTime;
  char drop[kBufferSize];
  while (wait(POLLIN, end)) {
    ssize_t n;
    do {
      n = ::recv(sock_, drop, sizeof drop, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return;
  }
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    address_of(addr, ip, port);
  }
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    address_of(addr, ip, port);
  }
}

ConnectionStream* current_connection() { return tls_current; }

CurrentConnectionScope::CurrentConnectionScope(ConnectionStream* stream) { tls_current = stream; }
CurrentConnectionScope::~CurrentConnectionScope() { tls_current = nullptr; }

}  // namespace tessera::server
