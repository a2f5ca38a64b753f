#include "server/connection_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace tessera::server {

namespace {

thread_local ConnectionStream* tls_current = nullptr;

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

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

ConnectionStream::ConnectionStream(Connection& conn, const ConnectionLimits& limits)
    : conn_(conn), limits_(limits) {}

bool ConnectionStream::wait(short events, Clock::time_point deadline) const {
  for (;;) {
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    // poll() takes int milliseconds: wait at most a minute per call.
    constexpr double kMaxPollMs = 60e3;
    const int ms = static_cast<int>(
        std::ceil(std::min(kMaxPollMs, std::chrono::duration<double, std::milli>(left).count())));
    pollfd p{conn_.sock, events, 0};
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return true;  // ready, or an error / hang-up the next call reports
    if (r < 0 && errno != EINTR) return false;
  }
}

bool ConnectionStream::is_readable() const {
  if (broken_) return false;
  return pos_ < conn_.in.size() || wait(POLLIN, conn_.deadline);
}

bool ConnectionStream::is_writable() const {
  if (broken_) return false;
  return wait(POLLOUT,
              writing_ ? write_deadline_ : Clock::now() + seconds(limits_.write_timeout_seconds));
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (broken_) return -1;
  writing_ = false;
  if (pos_ == conn_.in.size()) {
    // Past the buffered request: only a body left unread by an early answer
    // gets here. Read what comes within the request's deadline.
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::recv(conn_.sock, chunk, sizeof chunk, 0);
      if (n > 0) {
        conn_.in.append(chunk, static_cast<size_t>(n));
        break;
      }
      if (n == 0) return 0;  // the client closed its side
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait(POLLIN, conn_.deadline)) {
        broken_ = true;
        return -1;
      }
    }
  }
  const size_t n = std::min(size, conn_.in.size() - pos_);
  std::memcpy(ptr, conn_.in.data() + pos_, n);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (broken_) return -1;
  if (!writing_) {  // the first write of a response starts its deadline
    writing_ = true;
    write_deadline_ = Clock::now() + seconds(limits_.write_timeout_seconds);
  }
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(conn_.sock, ptr + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // The socket is non-blocking: wait for room, up to the deadline. A
    // client that does not read cannot be answered.
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait(POLLOUT, write_deadline_)) {
      continue;
    }
    broken_ = true;
    return -1;
  }
  return static_cast<ssize_t>(sent);
}

bool ConnectionStream::peer_gone() const {
  pollfd p{conn_.sock, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLERR | POLLHUP | POLLRDHUP)) != 0) return true;
  char byte = 0;
  return ::recv(conn_.sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(conn_.sock, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    address_of(addr, ip, port);
  }
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(conn_.sock, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    address_of(addr, ip, port);
  }
}

ConnectionStream* current_connection() { return tls_current; }

CurrentConnectionScope::CurrentConnectionScope(ConnectionStream* stream) { tls_current = stream; }
CurrentConnectionScope::~CurrentConnectionScope() { tls_current = nullptr; }

}  // namespace tessera::server
