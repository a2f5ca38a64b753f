// TEMPORARY (not committed): replaced by the http-framing branch's version.
#include "server/http_framing.h"

#include <charconv>

namespace tessera::server::framing {

namespace {
std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}
}  // namespace

HeadVerdict check_request_head(std::string_view head, uint64_t max_body_bytes) {
  HeadVerdict v;
  size_t pos = head.find('\n');
  bool cl = false, te = false;
  while (pos != std::string_view::npos && pos + 1 < head.size()) {
    const size_t start = pos + 1, end = head.find('\n', start);
    std::string_view line = head.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      const std::string name = lower(line.substr(0, colon));
      std::string_view val = line.substr(colon + 1);
      while (!val.empty() && val.front() == ' ') val.remove_prefix(1);
      if (name == "content-length") {
        uint64_t n = 0;
        auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), n);
        if (ec != std::errc() || p != val.data() + val.size() || cl) return {400, "Content-Length"};
        if (n > max_body_bytes) return {413, "Content-Length too large"};
        cl = true;
        v.content_length = n;
        v.body = BodyKind::kLength;
      } else if (name == "transfer-encoding") {
        if (lower(val) != "chunked") return {501, "Transfer-Encoding"};
        te = true;
        v.body = BodyKind::kChunked;
      } else if (name == "connection" && lower(val) == "close") {
        v.close = true;
      }
    }
    pos = end;
  }
  if (cl && te) return {400, "Content-Length with Transfer-Encoding"};
  return v;
}

ChunkedScanner::ChunkedScanner(uint64_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

bool ChunkedScanner::done() const { return state_ == State::kDone; }

size_t ChunkedScanner::feed(std::string_view bytes) {
  size_t i = 0;
  for (; i < bytes.size() && state_ != State::kDone && status_ == 0; ++i) {
    const char c = bytes[i];
    if (++consumed_ > max_body_bytes_) { status_ = 413; message_ = "chunked body too large"; break; }
    switch (state_) {
      case State::kSize:
        if (std::isxdigit(static_cast<unsigned char>(c))) {
          chunk_left_ = chunk_left_ * 16 + static_cast<uint64_t>(std::isdigit(c) ? c - '0' : (std::tolower(c) - 'a' + 10));
          size_has_digit_ = true;
        } else if (c == '\r') { state_ = State::kSizeLf; }
        else { state_ = State::kExt; }
        break;
      case State::kExt: if (c == '\r') state_ = State::kSizeLf; break;
      case State::kSizeLf:
        if (c != '\n') { status_ = 400; break; }
        state_ = chunk_left_ == 0 ? State::kTrailer : State::kData;
        trailer_line_empty_ = true;
        break;
      case State::kData: if (--chunk_left_ == 0) state_ = State::kDataCr; break;
      case State::kDataCr: if (c != '\r') { status_ = 400; break; } state_ = State::kDataLf; break;
      case State::kDataLf: if (c != '\n') { status_ = 400; break; } state_ = State::kSize; size_has_digit_ = false; break;
      case State::kTrailer:
        if (c == '\r') state_ = State::kTrailerLf; else trailer_line_empty_ = false;
        break;
      case State::kTrailerLf:
        if (c != '\n') { status_ = 400; break; }
        if (trailer_line_empty_) state_ = State::kDone; else { state_ = State::kTrailer; trailer_line_empty_ = true; }
        break;
      case State::kDone: break;
    }
  }
  return i;
}

}  // namespace tessera::server::framing
