// Fuzz target: HTTP/1.1 framing (src/server/http_framing.h). The first byte
// picks the body limit; the rest is a request: its head (through the first
// empty line) goes to check_request_head, the bytes after it to a
// ChunkedScanner, whatever the head said. Aborts when
// - a status is outside {0, 400, 413, 501, 505}, or a refusal keeps the
//   connection open or rewrites the head;
// - an accepted head's body kind disagrees with its header names, or a
//   Content-Length exceeds the limit;
// - a rewritten head is not itself accepted, unchanged, with the same framing;
// - feed() returns more than it was given, stops early without being done or
//   failed, or fed byte by byte ends differently from fed in one piece.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scratch_dir.h"
#include "server/http_framing.h"

namespace {

using tessera::server::framing::BodyKind;
using tessera::server::framing::ChunkedScanner;
using tessera::server::framing::HeadVerdict;

constexpr uint64_t kLimits[] = {0, 1, 5, 64, 4096, 1 << 20, UINT64_MAX, 100};

// Whether a field line of `head` is named `name` (lower case), however its
// lines end. An independent reading of the head for the body-kind check.
bool has_field(std::string_view head, std::string_view name) {
  std::string lower(head);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower.find("\n" + std::string(name) + ":") != std::string::npos;
}

void check_head(std::string_view head, uint64_t limit) {
  const HeadVerdict v = tessera::server::framing::check_request_head(head, limit);
  if (v.status != 0) {
    const bool known = v.status == 400 || v.status == 413 || v.status == 501 || v.status == 505;
    if (!known || v.message.empty() || !v.close || !v.rewritten_head.empty()) std::abort();
    return;
  }
  const bool te = has_field(head, "transfer-encoding");
  const bool cl = has_field(head, "content-length");
  switch (v.body) {
    case BodyKind::kNone:
      if (te || cl) std::abort();
      break;
    case BodyKind::kLength:
      if (te || !cl || v.content_length > limit) std::abort();
      break;
    case BodyKind::kChunked:
      if (!te || cl) std::abort();
      break;
  }
  if (!v.rewritten_head.empty()) {
    const HeadVerdict again = tessera::server::framing::check_request_head(v.rewritten_head, limit);
    if (again.status != 0 || !again.rewritten_head.empty() || again.body != v.body ||
        again.content_length != v.content_length || again.close != v.close) {
      std::abort();
    }
  }
}

struct Scan {
  size_t used = 0;
  bool done = false;
  int status = 0;
  std::string message;
};

Scan scan(std::string_view body, uint64_t limit, size_t piece) {
  ChunkedScanner s(limit);
  Scan out;
  for (size_t at = 0; at < body.size(); at += piece) {
    const std::string_view part = body.substr(at, piece);
    const size_t n = s.feed(part);
    if (n > part.size()) std::abort();
    if (n < part.size() && !s.done() && !s.failed()) std::abort();
    out.used += n;
  }
  out.done = s.done();
  out.status = s.status();
  out.message = s.message();
  if (out.done && out.status != 0) std::abort();
  if (out.status != 0 && out.status != 400 && out.status != 413) std::abort();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint64_t limit = kLimits[data[0] % (sizeof kLimits / sizeof kLimits[0])];
  const std::string_view request = tessera::fuzz::as_text(data + 1, size - 1);
  // The head ends at the first empty line (CRLF or bare LF).
  const size_t crlf = request.find("\r\n\r\n");
  const size_t lf = request.find("\n\n");
  const size_t end = std::min(crlf == std::string_view::npos ? crlf : crlf + 4,
                              lf == std::string_view::npos ? lf : lf + 2);
  const std::string_view head = request.substr(0, end);
  check_head(head, limit);

  const std::string_view body = end == std::string_view::npos ? "" : request.substr(end);
  if (body.empty()) return 0;
  const Scan whole = scan(body, limit, body.size());
  const Scan bytewise = scan(body, limit, 1);
  if (whole.used != bytewise.used || whole.done != bytewise.done ||
      whole.status != bytewise.status || whole.message != bytewise.message) {
    std::abort();
  }
  if (whole.used > body.size()) std::abort();
  return 0;
}
