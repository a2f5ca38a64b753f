// HTTP/1.1 message framing (RFC 9112), checked before cpp-httplib sees a
// request. cpp-httplib 0.11 takes Transfer-Encoding over Content-Length,
// reads the first of two Content-Length headers, and tolerates a malformed
// request line; any of these lets a client frame a request so that the bytes
// left over are served as a second, smuggled request. The server's
// connection reader (connection_reactor.h) collects a request's head, asks
// check_request_head() how its body is framed, reads exactly that body (a
// ChunkedScanner finds the end of a chunked one) and only then hands the
// complete message on. Pure functions over bytes: no sockets, fuzzed by
// tests/fuzz/http_framing_fuzz.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::server::framing {

enum class BodyKind { kNone, kLength, kChunked };

struct HeadVerdict {
  // 0: the head is acceptable. Else the status to answer before closing the
  // connection: 400 (malformed or ambiguous framing), 413 (a declared length
  // over the limit), 501 (a transfer coding other than chunked), 505 (an
  // HTTP version other than 1.0 / 1.1).
  int status = 0;
  std::string message;  // names the header or the request line and the value
  BodyKind body = BodyKind::kNone;
  uint64_t content_length = 0;  // for kLength
  // The client asked the connection to close after this request
  // (Connection: close, or HTTP/1.0 without keep-alive).
  bool close = false;
  // Non-empty when the head must reach cpp-httplib changed: a
  // form-urlencoded Content-Type is renamed so that cpp-httplib's compiled-in
  // 8 KiB form limit does not apply to our JSON bodies (every route parses
  // its body as JSON whatever the Content-Type says).
  std::string rewritten_head;
};

// `head`: the request line and the header fields, through the empty line
// that ends them (CRLF CRLF; a bare LF line end is accepted as RFC 9112 2.2
// allows). `max_body_bytes`: a declared Content-Length above it is 413.
HeadVerdict check_request_head(std::string_view head, uint64_t max_body_bytes);

// Finds where a chunked body ends (after the last chunk, its trailer fields
// and the final CRLF), fed the bytes as they arrive.
class ChunkedScanner {
 public:
  // `max_body_bytes`: the most raw body bytes (chunk framing included)
  // accepted; more is 413. Chunk-size lines and trailer lines are capped too.
  explicit ChunkedScanner(uint64_t max_body_bytes);

  // Consumes bytes of the body. Returns how many belong to it; that is fewer
  // than bytes.size() only once done() or failed() (the rest is the next
  // request, or garbage never read).
  size_t feed(std::string_view bytes);
  bool done() const;
  bool failed() const { return status_ != 0; }
  int status() const { return status_; }            // 400 or 413 when failed()
  const std::string& message() const { return message_; }

 private:
  // Implementation-defined state (a small state machine over the grammar
  // chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF).
  enum class State { kSize, kExt, kSizeLf, kData, kDataCr, kDataLf, kTrailer, kTrailerLf, kDone };
  uint64_t max_body_bytes_;
  uint64_t consumed_ = 0;
  uint64_t chunk_left_ = 0;
  size_t line_bytes_ = 0;
  bool size_has_digit_ = false;
  bool trailer_line_empty_ = true;
  State state_ = State::kSize;
  int status_ = 0;
  std::string message_;
};

}  // namespace tessera::server::framing
