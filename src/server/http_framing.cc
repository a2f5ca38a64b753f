// HTTP/1.1 framing checks (RFC 9112 sections 2.2, 3, 5, 6, 7.1); see
// http_framing.h for what the connection reader does with the verdicts.
#include "server/http_framing.h"

#include <algorithm>
#include <vector>

namespace tessera::server::framing {

namespace {

// A chunk-size line (with its extensions) or a trailer line longer than this
// is refused: it holds no data, only a client that will not stop.
constexpr size_t kMaxChunkLineBytes = 4096;
// 16 hex digits hold any uint64; a 17th is an overflow.
constexpr int kMaxChunkSizeDigits = 16;
// Values quoted in messages are cut after this many bytes.
constexpr size_t kMaxQuotedBytes = 64;
// cpp-httplib parses a body whose Content-Type starts with this as a form
// (and refuses one over 8 KiB); the header is renamed so that it does not.
constexpr std::string_view kFormMediaType = "application/x-www-form-urlencoded";
constexpr std::string_view kRenamedContentType = "X-Tessera-Content-Type";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
// tchar (RFC 9110 5.6.2): the bytes of a token.
bool is_tchar(char c) {
  if (is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}
// CTL (RFC 5234): 0x00-0x1F and DEL.
bool is_ctl(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
// Not allowed in a field value or a chunk extension: a CTL other than HTAB.
bool is_value_ctl(char c) { return is_ctl(c) && c != '\t'; }
bool is_ows(char c) { return c == ' ' || c == '\t'; }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}
bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}
std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// Splits a comma-separated list (RFC 9110 5.6.1), trimming each element;
// empty elements are kept (callers decide what they mean).
std::vector<std::string_view> split_list(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t comma = s.find(',', at);
    out.push_back(trim_ows(s.substr(at, comma == std::string_view::npos ? comma : comma - at)));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

constexpr char kHexDigits[] = "0123456789abcdef";
std::string hex_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return {kHexDigits[u >> 4], kHexDigits[u & 0xf]};
}
// A byte for a message: 'x' when printable ASCII, else 0xNN.
std::string describe_byte(char c) {
  if (!is_ctl(c) && static_cast<unsigned char>(c) < 0x80) return std::string("'") + c + "'";
  return "0x" + hex_byte(c);
}

// `s` in double quotes for a message: bytes outside printable ASCII as \xNN,
// cut after kMaxQuotedBytes.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMaxQuotedBytes; ++i) {
    const char c = s[i];
    if (is_ctl(c) || static_cast<unsigned char>(c) >= 0x80 || c == '"' || c == '\\') {
      out += "\\x" + hex_byte(c);
    } else {
      out += c;
    }
  }
  if (s.size() > kMaxQuotedBytes) out += "...";
  return out + "\"";
}

std::string to_hex(uint64_t v) {
  std::string out;
  do {
    out.insert(out.begin(), kHexDigits[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  return out;
}

HeadVerdict refuse(int status, std::string message) {
  HeadVerdict v;
  v.status = status;
  v.message = std::move(message);
  v.close = true;
  return v;
}

struct Line {
  std::string_view text;  // without its line end
  bool bare_lf = false;   // ended by LF alone (RFC 9112 2.2 lets us accept it)
};

// Splits `head` into its request line and field lines, skipping empty lines
// before the request line (RFC 9112 2.2). Returns a 400 message, or "".
std::string split_lines(std::string_view head, std::vector<Line>* lines, bool* skipped_empty) {
  size_t at = 0;
  while (at < head.size()) {
    const size_t lf = head.find('\n', at);
    if (lf == std::string_view::npos) break;
    Line line{head.substr(at, lf - at), true};
    if (!line.text.empty() && line.text.back() == '\r') {
      line.text.remove_suffix(1);
      line.bare_lf = false;
    }
    at = lf + 1;
    if (line.text.find('\r') != std::string_view::npos) {
      return "a bare CR (not followed by LF) in the line " + quote(line.text);
    }
    if (line.text.empty()) {
      if (lines->empty()) {
        *skipped_empty = true;
        continue;
      }
      if (at != head.size()) {
        return std::to_string(head.size() - at) + " bytes follow the empty line that ends the head";
      }
      return "";
    }
    lines->push_back(line);
  }
  return lines->empty() ? "no request line" : "the head does not end with an empty line";
}

struct RequestLine {
  std::string_view method;
  std::string_view target;
  bool http10 = false;
};

// request-line = method SP request-target SP HTTP-version (RFC 9112 3),
// single spaces, nothing before or after.
HeadVerdict check_request_line(std::string_view line, RequestLine* out) {
  const std::string where = "request line " + quote(line);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) {
    return refuse(400, where + " is not 'method SP request-target SP HTTP-version'");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return refuse(400, where + ": the method is not a token");
  if (target.empty()) return refuse(400, where + ": the request-target is empty (two spaces?)");
  if (std::any_of(target.begin(), target.end(), is_ctl)) {
    return refuse(400, where + ": a control byte in the request-target");
  }
  // HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive.
  const bool well_formed = version.size() == 8 && version.substr(0, 5) == "HTTP/" &&
                           is_digit(version[5]) && version[6] == '.' && is_digit(version[7]);
  if (!well_formed) return refuse(400, where + ": " + quote(version) + " is not an HTTP version");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return refuse(505, where + ": " + std::string(version) + " is not supported (HTTP/1.1 or 1.0)");
  }
  out->method = method;
  out->target = target;
  out->http10 = version == "HTTP/1.0";
  return {};
}

// The field lines that decide framing, as sent.
struct Fields {
  std::vector<std::string_view> content_length;
  std::vector<std::string_view> transfer_encoding;
  int hosts = 0;
  bool close = false;
  bool keep_alive = false;
  bool expect_continue = false;
  std::vector<size_t> form_content_types;  // indices into the lines
};

// field-line = field-name ":" OWS field-value OWS (RFC 9112 5); no
// whitespace before the colon, no obs-fold, no control bytes but HTAB.
HeadVerdict check_field_line(std::string_view line, size_t index, Fields* fields) {
  if (is_ows(line.front())) {
    return refuse(400,
                  "obs-fold (a header line starting with whitespace) is refused: " + quote(line));
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return refuse(400, "header line without a colon: " + quote(line));
  }
  const std::string_view name = line.substr(0, colon);
  if (!name.empty() && is_ows(name.back())) {
    return refuse(400, "whitespace between the header name and the colon in " + quote(line));
  }
  if (!is_token(name)) return refuse(400, "header name " + quote(name) + " is not a token");
  const std::string_view value = trim_ows(line.substr(colon + 1));
  for (const char c : value) {
    if (is_value_ctl(c)) {
      return refuse(400, "header " + std::string(name) + ": control byte " + describe_byte(c) +
                             (c == '\0' ? " (NUL)" : "") + " in the value " + quote(value));
    }
  }
  if (iequals(name, "Content-Length")) {
    fields->content_length.push_back(value);
  } else if (iequals(name, "Transfer-Encoding")) {
    fields->transfer_encoding.push_back(value);
  } else if (iequals(name, "Host")) {
    ++fields->hosts;
  } else if (iequals(name, "Connection")) {
    for (const std::string_view option : split_list(value)) {
      fields->close = fields->close || iequals(option, "close");
      fields->keep_alive = fields->keep_alive || iequals(option, "keep-alive");
    }
  } else if (iequals(name, "Expect")) {
    fields->expect_continue = fields->expect_continue || iequals(value, "100-continue");
  } else if (iequals(name, "Content-Type") && istarts_with(value, kFormMediaType)) {
    // A prefix, not the media type alone: cpp-httplib tests the prefix.
    fields->form_content_types.push_back(index);
  }
  return {};
}

// Transfer-Encoding (RFC 9112 6.1, 6.3): the codings of all its lines; the
// final one must be chunked (else the length is unknown: 400), and chunked
// alone is implemented (anything before it: 501).
HeadVerdict check_transfer_encoding(const std::vector<std::string_view>& values) {
  std::string all;
  std::vector<std::string_view> codings;
  for (const std::string_view v : values) {
    all += (all.empty() ? "" : ", ") + std::string(v);
    for (const std::string_view c : split_list(v)) {
      if (!c.empty()) codings.push_back(c);
    }
  }
  const std::string where = "Transfer-Encoding " + quote(all);
  if (codings.empty()) return refuse(400, where + " names no transfer coding");
  if (!iequals(codings.back(), "chunked")) {
    return refuse(400, where + ": the final coding is not chunked, so the body length is unknown");
  }
  for (size_t i = 0; i + 1 < codings.size(); ++i) {
    if (istarts_with(codings[i], "chunked") && trim_ows(codings[i].substr(7)).empty()) {
      return refuse(400, where + ": chunked is applied more than once");
    }
  }
  if (codings.size() > 1) {
    return refuse(501,
                  where + ": only chunked alone is implemented, not " + quote(codings.front()));
  }
  return {};
}

// Content-Length = 1*DIGIT (RFC 9112 6.3). One field line with one value:
// repeated lines and lists are refused even when their values agree
// (RFC 9112 6.3 allows either; nginx and llhttp refuse too).
HeadVerdict check_content_length(const std::vector<std::string_view>& values,
                                 uint64_t max_body_bytes, uint64_t* length) {
  if (values.size() > 1) {
    std::string all;
    for (const std::string_view v : values) all += (all.empty() ? "" : " and ") + quote(v);
    const bool same = std::all_of(values.begin(), values.end(),
                                  [&](std::string_view v) { return v == values.front(); });
    return refuse(400, "Content-Length is sent " + std::to_string(values.size()) + " times (" +
                           all + (same ? "): send it once" : "): different values"));
  }
  const std::string_view v = values.front();
  const std::string where = "Content-Length " + quote(v);
  if (v.find(',') != std::string_view::npos) {
    const auto list = split_list(v);
    const bool same = std::all_of(list.begin(), list.end(),
                                  [&](std::string_view e) { return e == list.front(); });
    return refuse(400, where + (same ? " is a list: send one value" : " lists different values"));
  }
  if (v.empty()) return refuse(400, "Content-Length is empty");
  if (v.front() == '-') return refuse(400, where + " is negative");
  if (!std::all_of(v.begin(), v.end(), is_digit)) {
    return refuse(400, where + " is not a decimal number (digits only)");
  }
  const std::string limit = " is over the limit of " + std::to_string(max_body_bytes) + " bytes";
  uint64_t n = 0;
  for (const char c : v) {
    const auto digit = static_cast<uint64_t>(c - '0');
    if (n > (UINT64_MAX - digit) / 10) {
      return refuse(413, "Content-Length: " + std::string(v) + " bytes (over 2^64 - 1)" + limit);
    }
    n = n * 10 + digit;
  }
  if (n > max_body_bytes) {
    return refuse(413, "Content-Length: " + std::string(v) + " bytes" + limit);
  }
  *length = n;
  return {};
}

// The head as cpp-httplib should read it: CRLF line ends, no empty lines
// before the request line, form Content-Types renamed.
std::string canonical_head(const std::vector<Line>& lines, const Fields& fields) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view text = lines[i].text;
    if (std::find(fields.form_content_types.begin(), fields.form_content_types.end(), i) !=
        fields.form_content_types.end()) {
      out += kRenamedContentType;
      text.remove_prefix(text.find(':'));
    }
    out += text;
    out += "\r\n";
  }
  return out + "\r\n";
}

}  // namespace

HeadVerdict check_request_head(std::string_view head, uint64_t max_body_bytes) {
  std::vector<Line> lines;
  bool skipped_empty = false;
  if (std::string e = split_lines(head, &lines, &skipped_empty); !e.empty()) {
    return refuse(400, std::move(e));
  }
  RequestLine request;
  if (HeadVerdict v = check_request_line(lines.front().text, &request); v.status != 0) return v;
  Fields fields;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (HeadVerdict v = check_field_line(lines[i].text, i, &fields); v.status != 0) return v;
  }
  // RFC 9112 3.2: exactly one Host in HTTP/1.1, never two.
  if (fields.hosts > 1) {
    return refuse(400, "Host is sent " + std::to_string(fields.hosts) + " times");
  }
  if (fields.hosts == 0 && !request.http10) return refuse(400, "Host is missing (HTTP/1.1)");

  HeadVerdict verdict;
  if (!fields.transfer_encoding.empty()) {
    if (request.http10) return refuse(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (!fields.content_length.empty()) {
      return refuse(400, "Transfer-Encoding and Content-Length " +
                             quote(fields.content_length.front()) + " together");
    }
    if (HeadVerdict v = check_transfer_encoding(fields.transfer_encoding); v.status != 0) return v;
    verdict.body = BodyKind::kChunked;
  } else if (!fields.content_length.empty()) {
    HeadVerdict v =
        check_content_length(fields.content_length, max_body_bytes, &verdict.content_length);
    if (v.status != 0) return v;
    verdict.body = BodyKind::kLength;
  }
  verdict.close = fields.close || (request.http10 && !fields.keep_alive);
  verdict.method = request.method;
  verdict.target = request.target;
  verdict.expect_continue = fields.expect_continue;
  const bool bare_lf =
      std::any_of(lines.begin(), lines.end(), [](const Line& l) { return l.bare_lf; });
  if (skipped_empty || bare_lf || !fields.form_content_types.empty()) {
    verdict.rewritten_head = canonical_head(lines, fields);
  }
  return verdict;
}

std::string_view field_value(std::string_view head, std::string_view name) {
  size_t at = head.find('\n');  // past the request line
  while (at != std::string_view::npos && at + 1 < head.size()) {
    const size_t start = at + 1;
    at = head.find('\n', start);
    std::string_view line = head.substr(start, at == std::string_view::npos ? at : at - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequals(line.substr(0, colon), name)) {
      return trim_ows(line.substr(colon + 1));
    }
  }
  return {};
}

ChunkedScanner::ChunkedScanner(uint64_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

bool ChunkedScanner::done() const { return state_ == State::kDone; }

void ChunkedScanner::fail(int status, std::string message) {
  status_ = status;
  message_ = "chunked body: " + std::move(message);
}

size_t ChunkedScanner::feed(std::string_view bytes) {
  size_t used = 0;
  while (used < bytes.size() && !done() && !failed()) {
    if (state_ == State::kData) {
      // The size line's check keeps consumed_ + chunk_left_ within the limit.
      const uint64_t n = std::min<uint64_t>(chunk_left_, bytes.size() - used);
      used += n;
      consumed_ += n;
      chunk_left_ -= n;
      if (chunk_left_ == 0) state_ = State::kDataCr;
      continue;
    }
    if (consumed_ == max_body_bytes_) {
      fail(413, "over the limit of " + std::to_string(max_body_bytes_) +
                    " bytes (chunk framing included)");
      break;
    }
    ++consumed_;
    step(bytes[used]);
    if (!failed()) ++used;
  }
  return used;
}

void ChunkedScanner::step(char c) {
  const bool in_line = state_ == State::kSize || state_ == State::kSizeBws ||
                       state_ == State::kExt || state_ == State::kTrailerName ||
                       state_ == State::kTrailerValue;
  if (in_line && c != '\r' && ++line_bytes_ > kMaxChunkLineBytes) {  // CRLF not counted
    const bool trailer = state_ == State::kTrailerName || state_ == State::kTrailerValue;
    return fail(400, std::string(trailer ? "a trailer line" : "a chunk-size line") +
                         " is longer than " + std::to_string(kMaxChunkLineBytes) + " bytes");
  }
  switch (state_) {
    case State::kSize:
      if (const int v = hex_value(c); v >= 0) {
        if (++size_digits_ > kMaxChunkSizeDigits) {
          return fail(400, "chunk size " + to_hex(chunk_size_) + c +
                               "... has more than 16 hex digits (over 2^64 - 1)");
        }
        chunk_size_ = chunk_size_ * 16 + static_cast<uint64_t>(v);
      } else if (size_digits_ == 0) {
        return fail(400, "a chunk size must start with a hex digit, got " + describe_byte(c));
      } else if (c == ';') {
        state_ = State::kExt;
      } else if (is_ows(c)) {
        state_ = State::kSizeBws;
      } else if (c == '\r') {
        state_ = State::kSizeLf;
      } else {
        return fail(400, describe_byte(c) + " after the chunk size " + to_hex(chunk_size_));
      }
      return;
    case State::kSizeBws:  // chunk-ext = *( BWS ";" ... )
      if (c == ';') {
        state_ = State::kExt;
      } else if (!is_ows(c)) {
        return fail(400, "whitespace after the chunk size " + to_hex(chunk_size_) +
                             " is not followed by ';' but by " + describe_byte(c));
      }
      return;
    case State::kExt:
      return text_byte(c, State::kSizeLf, "a chunk extension");
    case State::kSizeLf:
      if (c != '\n') return fail(400, "CR not followed by LF after the chunk size");
      return end_size_line();
    case State::kDataCr:
    case State::kDataLf:
      if (c != (state_ == State::kDataCr ? '\r' : '\n')) {
        return fail(400, "chunk data is not followed by CRLF: " + describe_byte(c) +
                             " after the chunk's declared size");
      }
      state_ = state_ == State::kDataCr ? State::kDataLf : State::kSize;
      return;
    case State::kTrailerStart:
      if (c == '\r') {
        state_ = State::kFinalLf;
      } else if (is_tchar(c)) {
        line_bytes_ = 1;
        state_ = State::kTrailerName;
      } else {
        return fail(400, "a trailer line starts with " + describe_byte(c) +
                             (is_ows(c) ? " (obs-fold)" : ""));
      }
      return;
    case State::kTrailerName:
      if (c == ':') {
        state_ = State::kTrailerValue;
      } else if (!is_tchar(c)) {
        return fail(400, describe_byte(c) + " in a trailer field name" +
                             (is_ows(c) ? " (whitespace before the colon)" : ""));
      }
      return;
    case State::kTrailerValue:
      return text_byte(c, State::kTrailerLf, "a trailer field value");
    case State::kTrailerLf:
    case State::kFinalLf:
      if (c != '\n') return fail(400, "CR not followed by LF in the trailer section");
      state_ = state_ == State::kTrailerLf ? State::kTrailerStart : State::kDone;
      return;
    case State::kData:
    case State::kDone:
      return;  // feed() handles these
  }
}

void ChunkedScanner::text_byte(char c, State at_cr, const char* what) {
  if (c == '\r') {
    state_ = at_cr;
  } else if (is_value_ctl(c)) {
    fail(400, "control byte " + describe_byte(c) + " in " + what);
  }
}

void ChunkedScanner::end_size_line() {
  if (chunk_size_ > max_body_bytes_ - consumed_) {
    return fail(413, "a chunk of " + std::to_string(chunk_size_) + " bytes (0x" +
                         to_hex(chunk_size_) + ") takes the body over the limit of " +
                         std::to_string(max_body_bytes_) + " bytes");
  }
  chunk_left_ = chunk_size_;
  state_ = chunk_size_ == 0 ? State::kTrailerStart : State::kData;
  chunk_size_ = 0;
  size_digits_ = 0;
  line_bytes_ = 0;
}

}  // namespace tessera::server::framing
