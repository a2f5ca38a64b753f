// HTTP/1.1 framing (src/server/http_framing.h): every rule with the request
// shapes used for smuggling and desync, each refusal checked for its status
// and for a message that names the header or line and the value.
#include "server/http_framing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>

namespace tessera::server::framing {
namespace {

constexpr uint64_t kLimit = 1 << 20;

HeadVerdict check(std::string_view head, uint64_t limit = kLimit) {
  return check_request_head(head, limit);
}

// A POST head with Host and the given field lines (each ending in CRLF).
std::string post(const std::string& fields, const std::string& version = "HTTP/1.1") {
  return "POST /embed " + version + "\r\nHost: x\r\n" + fields + "\r\n";
}

::testing::AssertionResult refused(const HeadVerdict& v, int status,
                                   std::initializer_list<std::string_view> named) {
  if (v.status != status) {
    return ::testing::AssertionFailure()
           << "status " << v.status << " (want " << status << "): " << v.message;
  }
  for (const std::string_view n : named) {
    if (v.message.find(n) == std::string::npos) {
      return ::testing::AssertionFailure() << "message does not name " << n << ": " << v.message;
    }
  }
  if (!v.close) return ::testing::AssertionFailure() << "a refusal must close";
  return ::testing::AssertionSuccess();
}

TEST(FramingRequestLine, AcceptsMethodTargetVersion) {
  HeadVerdict v = check("GET /health?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.body, BodyKind::kNone);
  EXPECT_FALSE(v.close);
  EXPECT_TRUE(v.rewritten_head.empty());
  v = check("M-SEARCH * HTTP/1.0\r\n\r\n");  // any token; Host optional in 1.0
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_TRUE(v.close);  // HTTP/1.0 without keep-alive
}

TEST(FramingRequestLine, RefusesExtraMissingOrStraySpacesAndBytes) {
  for (const std::string line : {"GET  / HTTP/1.1", "GET /", "GET / HTTP/1.1 x", " GET / HTTP/1.1",
                                 "GET / HTTP/1.1 ", "GET\t/ HTTP/1.1", "GET /\x01 HTTP/1.1",
                                 "GET / http/1.1", "GET / HTTP/1.10", "GET / HTTP/1"}) {
    EXPECT_TRUE(refused(check(line + "\r\nHost: x\r\n\r\n"), 400, {"request line"})) << line;
  }
  const std::string nul("G\0T / HTTP/1.1", 14);
  EXPECT_TRUE(refused(check(nul + "\r\nHost: x\r\n\r\n"), 400, {"G\\x00T", "method"}));
  EXPECT_TRUE(refused(check("GET  / HTTP/1.1\r\nHost: x\r\n\r\n"), 400,
                      {"\"GET  / HTTP/1.1\"", "request-target is empty"}));
}

TEST(FramingRequestLine, OtherHttpVersionsAre505) {
  EXPECT_TRUE(refused(check("GET / HTTP/2.0\r\nHost: x\r\n\r\n"), 505, {"HTTP/2.0"}));
  EXPECT_TRUE(refused(check("GET / HTTP/1.2\r\nHost: x\r\n\r\n"), 505, {"HTTP/1.2"}));
  EXPECT_TRUE(refused(check("GET / HTTP/0.9\r\nHost: x\r\n\r\n"), 505, {"HTTP/0.9"}));
}

TEST(FramingLines, EmptyLinesBeforeTheRequestLineAreDroppedForCppHttplib) {
  const HeadVerdict v = check("\r\n\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.rewritten_head, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(refused(check("\r\n\r\n"), 400, {"no request line"}));
}

TEST(FramingLines, BareLfLineEndsAreAcceptedAndRewrittenAsCrlf) {
  // cpp-httplib skips a field line without CR: it must not miss this length.
  const HeadVerdict v = check("POST / HTTP/1.1\nHost: x\r\nContent-Length: 2\n\n");
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.body, BodyKind::kLength);
  EXPECT_EQ(v.content_length, 2U);
  EXPECT_EQ(v.rewritten_head, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n");
}

TEST(FramingLines, BareCrIsRefused) {
  EXPECT_TRUE(refused(check("POST / HTTP/1.1\r\nHost: x\rContent-Length: 5\r\n\r\n"), 400,
                      {"bare CR", "Host: x\\x0dContent-Length: 5"}));
  EXPECT_TRUE(refused(check("POST / HTTP/1.1\r\nHost: x\r\r\n\r\n"), 400, {"bare CR", "Host"}));
}

TEST(FramingLines, TheHeadEndsAtItsEmptyLineAndNowhereElse) {
  EXPECT_TRUE(refused(check("GET / HTTP/1.1\r\nHost: x\r\n"), 400, {"does not end"}));
  EXPECT_TRUE(refused(check("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET"), 400, {"3 bytes follow"}));
}

TEST(FramingFields, ObsFoldIsRefused) {
  EXPECT_TRUE(refused(check(post("Content-Length: 0\r\n Transfer-Encoding: chunked\r\n")), 400,
                      {"obs-fold", "Transfer-Encoding: chunked"}));
  EXPECT_TRUE(refused(check(post("X-A: 1\r\n\tmore\r\n")), 400, {"obs-fold", "more"}));
}

TEST(FramingFields, WhitespaceBeforeTheColonIsRefused) {
  EXPECT_TRUE(refused(check(post("Transfer-Encoding : chunked\r\n")), 400,
                      {"between the header name and the colon", "Transfer-Encoding : chunked"}));
  EXPECT_TRUE(refused(check(post("Content-Length\t: 5\r\n")), 400, {"Content-Length"}));
}

TEST(FramingFields, NamesAreTokensAndValuesHaveNoControlBytes) {
  EXPECT_TRUE(refused(check(post(std::string("X-A: a\0b\r\n", 10))), 400, {"NUL", "X-A"}));
  EXPECT_TRUE(refused(check(post("X-A: a\x7f\r\n")), 400, {"0x7f", "X-A"}));
  EXPECT_TRUE(refused(check(post("No colon here\r\n")), 400, {"without a colon", "No colon"}));
  EXPECT_TRUE(refused(check(post(": empty name\r\n")), 400, {"not a token"}));
  EXPECT_TRUE(refused(check(post("X(A): 1\r\n")), 400, {"\"X(A)\" is not a token"}));
  const HeadVerdict v = check(post("X-Tab: a\tb \r\nX-High: caf\xc3\xa9\r\nX-Empty:\r\n"));
  EXPECT_EQ(v.status, 0) << v.message;  // HTAB, obs-text and empty values are fine
}

TEST(FramingHost, Http11NeedsExactlyOneHost) {
  EXPECT_TRUE(refused(check("GET / HTTP/1.1\r\n\r\n"), 400, {"Host is missing"}));
  EXPECT_TRUE(refused(check("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), 400,
                      {"Host is sent 2 times"}));
  EXPECT_TRUE(refused(check("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"), 400, {"Host"}));
  EXPECT_EQ(check("GET / HTTP/1.0\r\n\r\n").status, 0);
}

TEST(FramingSmuggling, TransferEncodingWithContentLengthIsRefusedInEitherOrder) {
  EXPECT_TRUE(refused(check(post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n")), 400,
                      {"Transfer-Encoding and Content-Length \"5\""}));
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n")), 400,
                      {"Transfer-Encoding and Content-Length \"5\""}));
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: chunked\r\nContent-Length: 0\r\n")), 400,
                      {"Transfer-Encoding and Content-Length \"0\""}));
}

TEST(FramingSmuggling, TransferEncodingMustEndInChunked) {
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: xchunked\r\n")), 400,
                      {"Transfer-Encoding \"xchunked\"", "final coding is not chunked"}));
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: chunked, identity\r\n")), 400,
                      {"\"chunked, identity\"", "final coding is not chunked"}));
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: chunked;x=1\r\n")), 400, {"chunked;x=1"}));
  EXPECT_TRUE(
      refused(check(post("Transfer-Encoding: chunked, chunked\r\n")), 400, {"more than once"}));
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: , \r\n")), 400, {"names no transfer coding"}));
}

TEST(FramingSmuggling, CodingsBeforeChunkedAre501) {
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: gzip, chunked\r\n")), 501,
                      {"\"gzip, chunked\"", "\"gzip\""}));
  // Two lines make one list.
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n")), 501,
                      {"\"gzip, chunked\""}));
}

TEST(FramingSmuggling, ChunkedAloneInAnyCaseIsAChunkedBody) {
  const HeadVerdict v = check(post("Transfer-Encoding:  CHUNKED \r\n"));
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.body, BodyKind::kChunked);
  EXPECT_TRUE(refused(check(post("Transfer-Encoding: chunked\r\n", "HTTP/1.0")), 400,
                      {"Transfer-Encoding in an HTTP/1.0 request"}));
}

TEST(FramingContentLength, RepeatedOrListedIsRefusedEvenWithEqualValues) {
  EXPECT_TRUE(refused(check(post("Content-Length: 5\r\nContent-Length: 6\r\n")), 400,
                      {"Content-Length is sent 2 times", "\"5\" and \"6\"", "different"}));
  EXPECT_TRUE(refused(check(post("Content-Length: 5\r\ncontent-length: 5\r\n")), 400,
                      {"Content-Length is sent 2 times", "send it once"}));
  EXPECT_TRUE(refused(check(post("Content-Length: 5, 6\r\n")), 400,
                      {"Content-Length \"5, 6\" lists different values"}));
  EXPECT_TRUE(
      refused(check(post("Content-Length: 5, 5\r\n")), 400, {"Content-Length \"5, 5\" is a list"}));
}

TEST(FramingContentLength, DigitsOnly) {
  EXPECT_TRUE(refused(check(post("Content-Length: -1\r\n")), 400, {"\"-1\" is negative"}));
  for (const std::string v : {"+5", "0x10", "5 5", "1e3", "５"}) {
    EXPECT_TRUE(refused(check(post("Content-Length: " + v + "\r\n")), 400,
                        {"Content-Length", "not a decimal number"}))
        << v;
  }
  EXPECT_TRUE(refused(check(post("Content-Length:\r\n")), 400, {"Content-Length is empty"}));
  const HeadVerdict v = check(post("Content-Length:  007 \r\n"));  // OWS around, leading zeros
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.body, BodyKind::kLength);
  EXPECT_EQ(v.content_length, 7U);
}

TEST(FramingContentLength, OverTheLimitOrUint64Is413NamingValueAndLimit) {
  EXPECT_TRUE(refused(check(post("Content-Length: 99999999999999999999999\r\n")), 413,
                      {"99999999999999999999999 bytes", "limit of 1048576 bytes"}));
  EXPECT_TRUE(refused(check(post("Content-Length: 18446744073709551616\r\n"), UINT64_MAX), 413,
                      {"18446744073709551616", "2^64"}));
  EXPECT_TRUE(refused(check(post("Content-Length: 1048577\r\n")), 413,
                      {"1048577 bytes", "limit of 1048576 bytes"}));
  const HeadVerdict v = check(post("Content-Length: 1048576\r\n"));
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.content_length, kLimit);
  EXPECT_EQ(check(post("Content-Length: 18446744073709551615\r\n"), UINT64_MAX).status, 0);
}

TEST(FramingConnection, CloseTokenOrHttp10WithoutKeepAlive) {
  EXPECT_TRUE(check(post("Connection: keep-alive, Close\r\n")).close);
  EXPECT_FALSE(check(post("Connection: keep-alive\r\n")).close);
  EXPECT_FALSE(check(post("Connection: closed\r\n")).close);
  EXPECT_FALSE(check(post("Connection: Keep-Alive\r\n", "HTTP/1.0")).close);
  EXPECT_TRUE(check(post("", "HTTP/1.0")).close);
}

// What the connection reader takes from an accepted head: the request line's
// parts, Expect: 100-continue, and any field's value.
TEST(FramingHead, ReportsMethodTargetExpectAndFieldValues) {
  const std::string head = post("Expect: 100-Continue\r\nAuthorization:  Bearer k \r\n");
  const HeadVerdict v = check(head);
  ASSERT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.method, "POST");
  EXPECT_EQ(v.target, "/embed");
  EXPECT_TRUE(v.expect_continue);
  EXPECT_FALSE(check(post("Expect: something\r\n")).expect_continue);
  EXPECT_EQ(field_value(head, "authorization"), "Bearer k");
  EXPECT_EQ(field_value(head, "Host"), "x");
  EXPECT_EQ(field_value(head, "X-Missing"), "");
}

TEST(FramingContentType, FormUrlencodedIsRenamedSoCppHttplibDoesNotParseAForm) {
  const HeadVerdict v =
      check(post("content-type: Application/X-WWW-Form-Urlencoded; charset=utf-8\r\n"
                 "Content-Length: 2\r\n"));
  EXPECT_EQ(v.status, 0) << v.message;
  EXPECT_EQ(v.rewritten_head,
            "POST /embed HTTP/1.1\r\nHost: x\r\n"
            "X-Tessera-Content-Type: Application/X-WWW-Form-Urlencoded; charset=utf-8\r\n"
            "Content-Length: 2\r\n\r\n");
  EXPECT_TRUE(check(post("Content-Type: application/json\r\n")).rewritten_head.empty());
}

// The outcome of scanning a chunked body.
struct Scan {
  size_t used = 0;
  bool done = false;
  int status = 0;
  std::string message;
  bool operator==(const Scan&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Scan& s) {
  return os << "{used " << s.used << ", done " << s.done << ", " << s.status << " " << s.message
            << "}";
}

// Feeds `bytes` in pieces of `piece` bytes (0: one piece).
Scan scan(std::string_view bytes, size_t piece = 0, uint64_t limit = kLimit) {
  ChunkedScanner s(limit);
  Scan out;
  const size_t step = piece == 0 ? std::max<size_t>(bytes.size(), 1) : piece;
  for (size_t at = 0; at < bytes.size(); at += step) {
    const std::string_view part = bytes.substr(at, step);
    const size_t n = s.feed(part);
    EXPECT_LE(n, part.size());
    if (n < part.size()) {
      EXPECT_TRUE(s.done() || s.failed());
    }
    out.used += n;
  }
  out.done = s.done();
  out.status = s.status();
  out.message = s.message();
  return out;
}

// Scans `bytes` in one piece, byte by byte and split in two at every
// position; all must agree. Returns the one-piece result.
Scan scan_every_way(std::string_view bytes, uint64_t limit = kLimit) {
  Scan whole = scan(bytes, 0, limit);
  EXPECT_EQ(scan(bytes, 1, limit), whole);
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    ChunkedScanner s(limit);
    Scan two;
    two.used = s.feed(bytes.substr(0, cut));
    if (two.used == cut) two.used += s.feed(bytes.substr(cut));
    two.done = s.done();
    two.status = s.status();
    two.message = s.message();
    EXPECT_EQ(two, whole) << "cut at " << cut;
  }
  return whole;
}

::testing::AssertionResult scan_refused(const Scan& s, int status,
                                        std::initializer_list<std::string_view> named) {
  if (s.status != status || s.done) {
    return ::testing::AssertionFailure() << "got " << s << ", want status " << status;
  }
  for (const std::string_view n : named) {
    if (s.message.find(n) == std::string::npos) {
      return ::testing::AssertionFailure() << "message does not name " << n << ": " << s.message;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(FramingChunked, EndsExactlyAfterTheFinalCrlfLeavingPipelinedBytes) {
  const std::string body =
      "5\r\nhello\r\n6;name=\"v\" ; x\r\n world\r\n00 ;last\r\nX-Sum: 1\r\n\r\n";
  const std::string next = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  const Scan s = scan_every_way(body + next);
  EXPECT_TRUE(s.done) << s;
  EXPECT_EQ(s.status, 0) << s;
  EXPECT_EQ(s.used, body.size());
  ChunkedScanner after(kLimit);
  EXPECT_EQ(after.feed(body), body.size());
  EXPECT_EQ(after.feed(next), 0U);  // done: nothing more is the body's
}

TEST(FramingChunked, AnEmptyBodyAndTheLimitIncludesFraming) {
  EXPECT_TRUE(scan_every_way("0\r\n\r\n", 5).done);
  EXPECT_TRUE(scan_refused(scan_every_way("0\r\n\r\n", 4), 413, {"limit of 4 bytes"}));
  // Chunks that add up past the limit: refused before the data is read.
  EXPECT_TRUE(scan_refused(scan_every_way("8\r\n12345678\r\n8\r\n", 20), 413,
                           {"a chunk of 8 bytes", "limit of 20 bytes"}));
}

TEST(FramingChunked, ChunkSizeOverflowAndHugeSizes) {
  EXPECT_TRUE(scan_refused(scan_every_way("ffffffffffffffffff\r\n"), 400,
                           {"ffffffffffffffff", "more than 16 hex digits"}));
  EXPECT_TRUE(scan_refused(scan_every_way("ffffffffffffffff\r\n"), 413,
                           {"0xffffffffffffffff", "limit of 1048576 bytes"}));
}

TEST(FramingChunked, ChunkSizeIsHexDigitsOnly) {
  EXPECT_TRUE(scan_refused(scan_every_way("\r\n"), 400, {"start with a hex digit", "0x0d"}));
  EXPECT_TRUE(scan_refused(scan_every_way("+5\r\nhello\r\n"), 400, {"'+'"}));
  EXPECT_TRUE(scan_refused(scan_every_way("-5\r\n"), 400, {"'-'"}));
  EXPECT_TRUE(scan_refused(scan_every_way(" 5\r\n"), 400, {"' '"}));
  EXPECT_TRUE(
      scan_refused(scan_every_way("0x5\r\nhello\r\n"), 400, {"'x' after the chunk size 0"}));
  EXPECT_TRUE(scan_refused(scan_every_way("5 \r\nhello\r\n"), 400, {"not followed by ';'"}));
}

TEST(FramingChunked, CrlfIsRequiredAfterChunkData) {
  // The classic desync: data one byte longer than its size.
  EXPECT_TRUE(scan_refused(scan_every_way("5\r\nhelloX\r\n0\r\n\r\n"), 400,
                           {"not followed by CRLF", "'X'"}));
  EXPECT_TRUE(scan_refused(scan_every_way("5\r\nhello0\r\n\r\n"), 400, {"not followed by CRLF"}));
  EXPECT_TRUE(scan_refused(scan_every_way("5\r\nhello\n0\r\n\r\n"), 400, {"0x0a"}));
  EXPECT_TRUE(scan_refused(scan_every_way("5\nhello\r\n"), 400, {"0x0a after the chunk size 5"}));
  EXPECT_TRUE(scan_refused(scan_every_way("0\r\n\n"), 400, {"trailer line starts with 0x0a"}));
  EXPECT_TRUE(scan_refused(scan_every_way("0\r\n\rX"), 400, {"CR not followed by LF"}));
}

TEST(FramingChunked, LinesAreCappedAt4096Bytes) {
  const std::string ext = "5;" + std::string(4094, 'e');  // 4096 bytes: fine
  EXPECT_TRUE(scan_every_way(ext + "\r\nhello\r\n0\r\n\r\n").done);
  EXPECT_TRUE(scan_refused(scan_every_way(ext + "e\r\n"), 400,
                           {"a chunk-size line is longer than 4096 bytes"}));
  EXPECT_TRUE(scan_refused(scan(std::string(5000, '0')), 400, {"more than 16 hex digits"}));
  const std::string trailer = "0\r\nX:" + std::string(4094, 't');
  EXPECT_TRUE(scan_every_way(trailer + "\r\n\r\n").done);
  EXPECT_TRUE(scan_refused(scan_every_way(trailer + "t\r\n\r\n"), 400,
                           {"a trailer line is longer than 4096 bytes"}));
}

TEST(FramingChunked, TrailerFieldsAreFieldLines) {
  EXPECT_TRUE(scan_refused(scan_every_way("0\r\nX-A: 1\r\n folded\r\n\r\n"), 400, {"obs-fold"}));
  EXPECT_TRUE(
      scan_refused(scan_every_way("0\r\nX-A : 1\r\n\r\n"), 400, {"whitespace before the colon"}));
  EXPECT_TRUE(scan_refused(scan_every_way(std::string("0\r\nX-A: \0\r\n\r\n", 12)), 400,
                           {"0x00 in a trailer field value"}));
  EXPECT_TRUE(scan_refused(scan_every_way("1;a\x01\r\n"), 400, {"0x01 in a chunk extension"}));
}

}  // namespace
}  // namespace tessera::server::framing
