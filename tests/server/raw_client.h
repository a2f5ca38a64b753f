// A client on a raw socket, for what well-behaved HTTP clients never send
// (the server tests' hostile clients).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace tessera::server::testing {

class RawClient {
 public:
  // A small `receive_buffer` (bytes) makes the server's sends block soon.
  explicit RawClient(int port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    // A stuck test fails after this long instead of hanging.
    timeval tv{120, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawClient() { ::close(fd_); }
  bool connected() const { return connected_; }

  // False once the server has closed (or reset) the connection.
  bool send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Whether the server has sent something (or closed) within `ms`.
  bool readable(int ms) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
  }

  // Everything until the server closes the connection (or the receive
  // timeout passes: then what came so far, and closed_by_server() is false).
  std::string read_to_end() {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_by_server_ = n == 0 || errno == ECONNRESET;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }
  bool closed_by_server() const { return closed_by_server_; }

  void shutdown() { ::shutdown(fd_, SHUT_RDWR); }

  // One recv() of at most `n` bytes: > 0 bytes read, else the end (see
  // closed_by_server()).
  ssize_t read_some(size_t n) {
    std::string buf(n, '\0');
    const ssize_t got = ::recv(fd_, buf.data(), n, 0);
    if (got <= 0) closed_by_server_ = got == 0 || errno == ECONNRESET;
    return got;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_by_server_ = false;
};

}  // namespace tessera::server::testing
