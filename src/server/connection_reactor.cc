#include "server/connection_reactor.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "server/api_error.h"
#include "server/json_out.h"

namespace tessera::server {

namespace {

constexpr uint64_t kWakeId = 0;
// How often deadlines are checked; a 408 or idle close may be this late.
constexpr auto kSweepInterval = std::chrono::milliseconds(100);
// The most a refused connection keeps reading what the client still sends
// (so that closing does not reset the connection before the answer is read).
constexpr auto kDrainTime = std::chrono::seconds(2);
// One recv() and one reservation step.
constexpr size_t kReadChunk = 16 << 10;
constexpr size_t kBufferStep = 64 << 10;  // a buffer larger than this shrinks after a request
constexpr size_t kPage = 4096;            // reservations grow in pages

const char* reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

ConnectionReactor::ConnectionReactor(const ConnectionLimits& limits, size_t max_connections,
                                     size_t max_threads, TrackingAllocator& alloc,
                                     ReactorHooks hooks, ConnectionPool::ThreadStarter start_thread)
    : limits_(limits),
      max_connections_(std::max<size_t>(max_connections, 2)),
      alloc_(alloc),
      hooks_(std::move(hooks)),
      pool_(max_threads, std::move(start_thread)) {}

ConnectionReactor::~ConnectionReactor() {
  shutdown();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_ >= 0) ::close(epoll_);
}

Status ConnectionReactor::start() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_ < 0 || wake_fd_ < 0) {
    return unavailable(std::string("cannot create the connection reader's epoll: ") +
                       std::strerror(errno));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeId;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    return unavailable(std::string("epoll_ctl: ") + std::strerror(errno));
  }
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (const std::system_error& e) {
    return unavailable(std::string("cannot start the connection reader thread: ") + e.what());
  }
  return Status::Ok();
}

void ConnectionReactor::add(int sock) {
  {
    // Back-pressure on the accept loop: while the reader has not taken the
    // sockets already accepted, new ones wait in the kernel's listen queue,
    // where they hold no descriptor. So descriptors in use stay under
    // max_connections + kMaxIncoming, and the process never runs out of them
    // (past the limit accept() fails, and so does every open()).
    std::unique_lock<std::mutex> lock(mu_);
    taken_.wait(lock, [this] { return stopping_ || incoming_.size() < kMaxIncoming; });
    if (!stopping_) {
      incoming_.push_back(sock);
      sock = -1;
    }
  }
  if (sock >= 0) {
    ::close(sock);
    return;
  }
  wake();
}

void ConnectionReactor::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = stopping_ = true;
  }
  taken_.notify_all();
  wake();
  if (thread_.joinable()) thread_.join();
  pool_.shutdown();
}

void ConnectionReactor::wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
}

void ConnectionReactor::watch(Connection& c) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, c.sock, &ev);
}

void ConnectionReactor::unwatch(Connection& c) {
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, c.sock, nullptr);
}

void ConnectionReactor::loop() {
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  Clock::time_point next_sweep = Clock::now() + kSweepInterval;
  for (;;) {
    const int n =
        ::epoll_wait(epoll_, events, kMaxEvents, static_cast<int>(kSweepInterval.count()));
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kWakeId) {
        uint64_t count = 0;
        (void)!::read(wake_fd_, &count, sizeof count);
        continue;
      }
      const auto it = conns_.find(id);
      if (it != conns_.end() && it->second->phase != Connection::Phase::kWorking) {
        on_readable(*it->second);
      }
    }
    take_handoffs();
    bool stopping = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping = stopping_;
    }
    const Clock::time_point now = Clock::now();
    if (stopping) {
      // Requests being served finish; everything else closes now.
      std::vector<Connection*> idle;
      for (auto& [id, c] : conns_) {
        if (c->phase != Connection::Phase::kWorking) idle.push_back(c.get());
      }
      for (Connection* c : idle) close(*c);
      if (conns_.empty()) return;
    } else if (now >= next_sweep) {
      sweep(now);
      next_sweep = now + kSweepInterval;
    }
  }
}

void ConnectionReactor::take_handoffs() {
  std::vector<int> incoming;
  std::vector<std::pair<Connection*, AfterRequest>> back;
  {
    std::lock_guard<std::mutex> lock(mu_);
    incoming.swap(incoming_);
    back.swap(back_);
  }
  taken_.notify_all();
  for (auto& [c, after] : back) returned(*c, after);
  for (int sock : incoming) accept_new(sock);
}

void ConnectionReactor::accept_new(int sock) {
  const int flags = ::fcntl(sock, F_GETFL, 0);
  ::fcntl(sock, F_SETFL, flags | O_NONBLOCK);
  bool full = false;
  if (conns_.size() >= max_connections_) {
    // Shed the oldest connection no worker is serving: idle, slow or silent
    // clients give way to a new one. With every one being served, the new
    // one is refused.
    ++shed_;
    Connection* oldest = nullptr;
    for (auto& [id, c] : conns_) {
      if (c->phase != Connection::Phase::kWorking && (oldest == nullptr || c->id < oldest->id)) {
        oldest = c.get();
      }
    }
    if (oldest != nullptr) {
      close(*oldest);
    } else {
      full = true;
    }
  }
  auto c = std::make_unique<Connection>(sock, next_id_++);
  c->buffered = Reservation(alloc_, "server.connections");
  c->deadline = Clock::now() + seconds(limits_.idle_timeout_seconds);
  Connection& ref = *c;
  conns_.emplace(ref.id, std::move(c));
  ++open_;
  watch(ref);
  if (full) {
    refuse(ref, 503,
           "every connection this server takes (" + std::to_string(max_connections_) +
               ") is being served; retry later");
  }
}

void ConnectionReactor::on_readable(Connection& c) {
  char chunk[kReadChunk];
  for (;;) {
    size_t room = kReadChunk;
    switch (c.phase) {
      case Connection::Phase::kIdle:
      case Connection::Phase::kDraining:
        break;
      case Connection::Phase::kHead:
        // One byte past the limit tells the limit was broken.
        room = std::min(
            room, limits_.max_header_bytes + 1 - std::min(c.in.size(), limits_.max_header_bytes));
        break;
      case Connection::Phase::kBody:
        if (c.verdict.body == framing::BodyKind::kLength) {
          const size_t want = c.head_bytes + static_cast<size_t>(c.verdict.content_length);
          room = std::min(room, want > c.in.size() ? want - c.in.size() : 0);
        }
        break;
      case Connection::Phase::kWorking:
        return;
    }
    if (room == 0) break;
    const ssize_t n = ::recv(c.sock, chunk, room, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
      close(c);  // the client closed or the socket failed: nobody to answer
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // nothing more for now
    }
    if (c.phase == Connection::Phase::kDraining) continue;  // dropped
    const size_t need = c.in.size() + static_cast<size_t>(n);
    if (need > c.buffered.bytes() &&
        !c.buffered.grow((need - c.buffered.bytes() + kPage - 1) / kPage * kPage).ok()) {
      refuse(c, 503,
             "the request does not fit the memory budget now (--memory-budget); retry later");
      return;
    }
    c.in.append(chunk, static_cast<size_t>(n));
    advance(c);
    // Handed to a worker or refused: nothing more to read for the request.
    if (c.phase != Connection::Phase::kHead && c.phase != Connection::Phase::kBody) return;
  }
}

void ConnectionReactor::advance(Connection& c) {
  if (c.phase == Connection::Phase::kIdle && !c.in.empty()) {
    c.phase = Connection::Phase::kHead;
    c.deadline = Clock::now() + seconds(limits_.read_timeout_seconds);
  }
  if (c.phase == Connection::Phase::kHead && !head_complete(c)) return;
  if (c.phase == Connection::Phase::kBody && body_complete(c)) dispatch(c);
}

bool ConnectionReactor::head_complete(Connection& c) {
  const std::string_view in(c.in);
  // Each line is looked at once, when its LF arrives (a head trickled a byte
  // at a time must not be rescanned per byte). Line limits first: a huge
  // request line is 414 even before the head ends.
  const auto too_long = [&](size_t line_start, size_t len) {
    if (len <= limits_.max_line_bytes) return false;
    refuse(c, line_start == 0 ? 414 : 431,
           line_start == 0 ? "the request line (method, target, version) is longer than " +
                                 std::to_string(limits_.max_line_bytes) + " bytes"
                           : "a header line is longer than " +
                                 std::to_string(limits_.max_line_bytes) + " bytes");
    return true;
  };
  size_t end = 0;  // just past the empty line that ends the head; 0: not yet
  while (end == 0) {
    const size_t nl = in.find('\n', c.head_scan);
    if (nl == std::string_view::npos) break;
    const size_t start = c.head_scan;
    if (too_long(start, nl + 1 - start)) return false;
    c.head_scan = nl + 1;
    const bool empty = nl == start || (nl == start + 1 && in[start] == '\r');
    if (empty && start > 0) end = nl + 1;
  }
  if (end == 0 && too_long(c.head_scan, in.size() - c.head_scan)) return false;
  if ((end == 0 ? in.size() : end) > limits_.max_header_bytes) {
    refuse(c, 431,
           "the request line and headers are longer than --max-header-bytes = " +
               std::to_string(limits_.max_header_bytes) + " bytes");
    return false;
  }
  if (end == 0) return false;
  const std::string_view head = in.substr(0, end);
  c.verdict = framing::check_request_head(head, limits_.payload_limit_bytes);
  if (c.verdict.status == 413) {
    refuse(c, 413,
           "the body has " + std::string(framing::field_value(head, "Content-Length")) +
               " bytes; this server takes at most " + std::to_string(limits_.payload_limit_bytes) +
               " (--payload-limit)",
           "body");
    return false;
  }
  if (c.verdict.status != 0) {
    refuse(c, c.verdict.status, c.verdict.message);
    return false;
  }
  c.head_bytes = end;
  if (!c.verdict.rewritten_head.empty()) {
    c.in.replace(0, end, c.verdict.rewritten_head);
    c.head_bytes = c.verdict.rewritten_head.size();
  }
  if (c.verdict.body == framing::BodyKind::kNone || !hooks_.read_body_first(c.verdict, head)) {
    dispatch(c);
    return false;
  }
  c.phase = Connection::Phase::kBody;
  if (c.verdict.body == framing::BodyKind::kChunked) c.chunked.emplace(limits_.max_body_bytes);
  // A client that waits for "100 Continue" before its body is told to send it.
  if (c.verdict.expect_continue) {
    static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    (void)!::send(c.sock, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL);
  }
  return true;
}

bool ConnectionReactor::body_complete(Connection& c) {
  if (c.verdict.body == framing::BodyKind::kLength) {
    return c.in.size() >= c.head_bytes + c.verdict.content_length;
  }
  framing::ChunkedScanner& scanner = *c.chunked;
  const size_t from = c.head_bytes + c.scanned;
  if (from < c.in.size()) {
    c.scanned += scanner.feed(std::string_view(c.in).substr(from));
  }
  if (scanner.failed()) {
    refuse(c, scanner.status(), with_limit(scanner.status(), scanner.message()),
           scanner.status() == 413 ? "body" : "");
    return false;
  }
  return scanner.done();
}

std::string ConnectionReactor::with_limit(int status, const std::string& message) const {
  if (status != 413) return message;
  return "the body is larger than --payload-limit = " +
         std::to_string(limits_.payload_limit_bytes) + " bytes (" + message + ")";
}

void ConnectionReactor::dispatch(Connection& c) {
  c.phase = Connection::Phase::kWorking;
  unwatch(c);
  Connection* conn = &c;
  const bool queued = pool_.try_enqueue([this, conn] {
    AfterRequest after = AfterRequest::kClose;
    try {
      after = hooks_.serve(*conn);
    } catch (...) {
      after = AfterRequest::kClose;  // the hook answers what it can; never lose the connection
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      back_.emplace_back(conn, after);
    }
    wake();
  });
  if (!queued) {
    c.phase = Connection::Phase::kHead;
    watch(c);
    refuse(c, 503,
           "no HTTP worker thread is free or can be started (a thread or memory limit); "
           "retry later");
  }
}

void ConnectionReactor::returned(Connection& c, AfterRequest after) {
  bool stopping = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
  }
  if (after == AfterRequest::kClose || (stopping && after == AfterRequest::kKeep)) {
    close(c);
    return;
  }
  ++c.requests;
  c.head_bytes = 0;
  c.head_scan = 0;
  c.scanned = 0;
  c.chunked.reset();
  c.verdict = {};
  if (c.in.capacity() > kBufferStep && c.in.size() < kBufferStep) c.in.shrink_to_fit();
  watch(c);
  if (after == AfterRequest::kDrainClose) {
    drain(c);
    return;
  }
  c.phase = Connection::Phase::kIdle;
  c.deadline = Clock::now() + seconds(limits_.idle_timeout_seconds);
  advance(c);  // a pipelined request may be buffered already
}

void ConnectionReactor::refuse(Connection& c, int status, const std::string& message,
                               const std::string& field) {
  const ApiError e{status,
                   status == 408   ? "Timeout"
                   : status == 503 ? "Overloaded"
                                   : "Validation",
                   field, message};
  // OpenAI's clients read OpenAI's error shape: answer in the shape of the
  // route the request line names, when it got that far.
  const std::string_view line = std::string_view(c.in).substr(0, c.in.find('\n'));
  const size_t sp = line.find(' ');
  const std::string_view target = sp == std::string_view::npos ? "" : line.substr(sp + 1);
  const bool openai = target.rfind("/v1/", 0) == 0 || target.rfind("/embeddings", 0) == 0;
  const std::string body = openai ? openai_error_body(e) : tei_error_body(e);
  std::string answer =
      "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n";
  if (status == 503) answer += "Retry-After: 1\r\n";
  answer += "\r\n" + body;
  // Small enough for the socket's buffer; a client that does not read it
  // loses it, and the server loses nothing.
  (void)!::send(c.sock, answer.data(), answer.size(), MSG_NOSIGNAL);
  if (hooks_.on_cut) hooks_.on_cut(status);
  drain(c);
}

void ConnectionReactor::drain(Connection& c) {
  ::shutdown(c.sock, SHUT_WR);  // the answer is complete: the client sees its end
  c.phase = Connection::Phase::kDraining;
  c.deadline = Clock::now() + kDrainTime;
  c.in = std::string();
  c.buffered.reset();
}

void ConnectionReactor::close(Connection& c) {
  unwatch(c);
  ::close(c.sock);
  --open_;
  conns_.erase(c.id);  // destroys c
}

void ConnectionReactor::sweep(Clock::time_point now) {
  std::vector<Connection*> due;
  for (auto& [id, c] : conns_) {
    if (c->phase != Connection::Phase::kWorking && now >= c->deadline) due.push_back(c.get());
  }
  for (Connection* c : due) {
    switch (c->phase) {
      case Connection::Phase::kHead:
      case Connection::Phase::kBody:
        refuse(*c, 408,
               "the request was not received within --read-timeout = " +
                   format_seconds(limits_.read_timeout_seconds) +
                   " s of its first byte; the connection is closed");
        break;
      default:
        close(*c);  // idle past the keep-alive timeout, or drained
    }
  }
}

}  // namespace tessera::server
