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
  // over the limit), 501 (a transfer coding before chunked, as in
  // "gzip, chunked"; a final coding other than chunked is 400, RFC 9112
  // 6.3), 505 (an HTTP version other than 1.0 / 1.1).
  int status = 0;
  std::string message;  // names the header or the request line and the value
  BodyKind body = BodyKind::kNone;
  uint64_t content_length = 0;  // for kLength
  // The client asked the connection to close after this request
  // (Connection: close, or HTTP/1.0 without keep-alive). Always true when
  // status != 0.
  bool close = false;
  // Of an acceptable head: the request line's method and target (as sent,
  // query included), and whether the client waits for "100 Continue" before
  // its body (Expect: 100-continue).
  std::string method;
  std::string target;
  bool expect_continue = false;
  // Non-empty when the head must reach cpp-httplib changed (only when
  // status == 0): a form-urlencoded Content-Type is renamed
  // X-Tessera-Content-Type so that cpp-httplib's compiled-in 8 KiB form limit
  // does not apply to our JSON bodies (every route parses its body as JSON
  // whatever the Content-Type says); bare-LF line ends become CRLF (cpp-httplib
  // skips a header line without CR, so it would not see a Content-Length we
  // framed by) and empty lines before the request line are dropped.
  std::string rewritten_head;
};

// `head`: the request line and the header fields, through the empty line
// that ends them (CRLF CRLF; a bare LF line end is accepted as RFC 9112 2.2
// allows), and nothing after it (else 400). Empty lines before the request
// line are skipped (RFC 9112 2.2). `max_body_bytes`: a declared
// Content-Length above it is 413.
HeadVerdict check_request_head(std::string_view head, uint64_t max_body_bytes);

// The value of the first field line named `name` (case-insensitive) in a
// head, without surrounding whitespace; empty when there is none. For heads
// check_request_head accepted (or one it refused, to quote a value).
std::string_view field_value(std::string_view head, std::string_view name);

// Finds where a chunked body ends (after the last chunk, its trailer fields
// and the final CRLF), fed the bytes as they arrive.
class ChunkedScanner {
 public:
  // `max_body_bytes`: the most raw body bytes (chunk framing included)
  // accepted; more is 413. Chunk-size lines and trailer lines are capped too.
  explicit ChunkedScanner(uint64_t max_body_bytes);

  // Consumes bytes of the body. Returns how many belong to it; that is fewer
  // than bytes.size() only once done() or failed() (the rest is the next
  // request, or garbage never read; on failure the byte at fault is not
  // counted). Every line end is CRLF (no bare LF inside a chunked body).
  // After done() or failed() it returns 0. Feeding the bytes in any pieces
  // gives the same results.
  size_t feed(std::string_view bytes);
  bool done() const;
  bool failed() const { return status_ != 0; }
  int status() const { return status_; }  // 400 or 413 when failed()
  const std::string& message() const { return message_; }

 private:
  // The grammar (RFC 9112 7.1), one state per position:
  //   chunked-body = *chunk last-chunk trailer-section CRLF
  //   chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
  //   chunk-ext    = *( BWS ";" ... ) up to the line end
  enum class State {
    kSize,     // hex digits of a chunk-size
    kSizeBws,  // whitespace after them, before ";"
    kExt,      // a chunk-ext, up to CR
    kSizeLf,   // the LF ending the size line
    kData,     // chunk_left_ bytes of chunk-data
    kDataCr,   // the CRLF after chunk-data
    kDataLf,
    kTrailerStart,  // first byte of a trailer line; CR starts the final CRLF
    kTrailerName,
    kTrailerValue,
    kTrailerLf,
    kFinalLf,
    kDone,
  };
  void step(char c);  // one byte outside chunk-data
  // A byte of a chunk-ext or trailer value: CR ends it (-> at_cr).
  void text_byte(char c, State at_cr, const char* what);
  void end_size_line();
  void fail(int status, std::string message);

  uint64_t max_body_bytes_;
  uint64_t consumed_ = 0;    // bytes of the body so far, framing included
  uint64_t chunk_size_ = 0;  // of the size line being read
  uint64_t chunk_left_ = 0;  // chunk-data bytes still to come
  int size_digits_ = 0;
  size_t line_bytes_ = 0;  // of the size or trailer line being read
  State state_ = State::kSize;
  int status_ = 0;
  std::string message_;
};

}  // namespace tessera::server::framing
