// The server under faults, over real HTTP on loopback against the fake model:
// a model failure inside a merged batch reaches only its own request (424),
// memory budget exhaustion is a 503 with Retry-After, an exception in a
// handler is a JSON 500, and hostile clients (slow, huge headers, bodies over
// the limit) are cut off by the time and size limits while the server serves
// everyone else. Time bounds are generous: only "cut at all, and not before
// the timeout" is asserted, never how fast.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/fake_model.h"
#include "metrics_text.h"
#include "raw_client.h"
#include "server_fixture.h"

namespace tessera::server {
namespace {

using nlohmann::json;
using tessera::testing::FakeModel;
using testing::await_metrics;
using testing::metric;
using testing::RawClient;
using testing::RunningServer;
using Clock = std::chrono::steady_clock;

ServerOptions fault_limits() {
  ServerOptions o;
  o.batching.max_batch_tokens = 64;
  o.batching.max_concurrent_requests = 16;
  o.max_client_batch_size = 8;
  o.payload_limit_bytes = 64 << 10;
  return o;
}

std::string embed_body(const std::vector<std::string>& texts) {
  return json({{"inputs", texts}}).dump();
}

void wait_in_flight(RunningServer& s, size_t n) {
  while (s.server().batcher().in_flight() < n) std::this_thread::yield();
}

TEST(Faults, AModelFailureInAMergedBatchIs424ForItsRequestAloneAndTheOthersSucceed) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, fault_limits());
  const int32_t poison = model.ids_of("POISON")[1];
  model.fail_on_token(poison, internal_error("cpu.flash: injected kernel fault"));
  model.close_gate();
  auto post = [&](const std::string& path, const std::string& body) {
    return std::async(std::launch::async, [&server, path, body] {
      auto r = server.client()->Post(path, body, "application/json");
      return r ? std::make_pair(r->status, r->body)
               : std::make_pair(-1, httplib::to_string(r.error()));
    });
  };
  auto hold = post("/embed", embed_body({"hold"}));  // keeps the batcher busy
  model.wait_for_calls(1);
  const std::vector<std::string> good1 = {"alpha beta", "gamma"}, good2 = {"delta"};
  auto a = post("/embed", embed_body(good1));
  auto bad = post("/embed", embed_body({"fine words", "some POISON here"}));
  auto bad_openai = post("/v1/embeddings", json({{"input", {"POISON"}}}).dump());
  auto b = post("/embed", embed_body(good2));
  wait_in_flight(server, 5);
  model.open_gate();
  EXPECT_EQ(hold.get().first, 200);
  for (auto* ok : {&a, &b}) {
    const auto [status, body] = ok->get();
    ASSERT_EQ(status, 200) << body;
    const std::vector<std::string>& texts = ok == &a ? good1 : good2;
    const json rows = json::parse(body);
    ASSERT_EQ(rows.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      EXPECT_EQ(rows[i].get<std::vector<float>>(), model.expected_row(model.ids_of(texts[i])));
    }
  }
  const auto [status, body] = bad.get();
  ASSERT_EQ(status, 424) << body;
  const json e = json::parse(body);
  EXPECT_EQ(e["error_type"], "Backend");
  EXPECT_EQ(e["field"], "inputs[1]");
  EXPECT_NE(e["error"].get<std::string>().find("injected kernel fault"), std::string::npos) << body;
  const auto [ostatus, obody] = bad_openai.get();
  ASSERT_EQ(ostatus, 424) << obody;
  EXPECT_EQ(json::parse(obody)["error"]["param"], "input[0]");
  // All four requests (six sequences) were queued behind the held batch and
  // ran as one merged batch first.
  ASSERT_GE(model.batch_sequences().size(), 2u);
  EXPECT_EQ(model.batch_sequences()[1], 6u);
  // The answers above can arrive before the batch's report.
  const auto m = await_metrics(*server.client(), [](const std::string& text) {
    return metric(text, "tessera_server_batch_retries_total") > 0;
  });
  ASSERT_TRUE(m);
  EXPECT_GT(metric(m->body, "tessera_server_batch_retries_total"), 0) << m->body;
}

TEST(Faults, MemoryBudgetExhaustionIs503WithRetryAfterAndTheServerStaysUp) {
  FakeModel model;
  TrackingAllocator alloc(/*budget=*/16 << 10);
  RunningServer server(model, alloc, fault_limits());
  auto http = server.client();
  // The model's activations for more than 6 tokens do not fit.
  model.fail_over_tokens(6);
  auto r = http->Post("/embed", embed_body({"one two three four five six"}), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  const json e = json::parse(r->body);
  EXPECT_EQ(e["error_type"], "Overloaded");
  EXPECT_NE(e["error"].get<std::string>().find("--memory-budget"), std::string::npos) << r->body;
  r = http->Post("/v1/embeddings", R"({"input": "one two three four five six"})",
                 "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_EQ(json::parse(r->body)["error"]["type"], "server_error");
  // Result rows over the allocator's budget: 8 rows x 8 floats fit; a
  // server already holding most of its budget refuses them the same way.
  // Request buffers are counted too (a page per connection): wait until the
  // earlier connections are closed, then leave room for the next one's.
  const auto connection_bytes = [&alloc] {
    const auto owners = alloc.by_owner();
    const auto it = owners.find("server.connections");
    return it == owners.end() ? size_t{0} : it->second.live_bytes;
  };
  while (connection_bytes() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Buffer hog;
  ASSERT_TRUE(
      Buffer::allocate(alloc, (16 << 10) - alloc.live_bytes() - 4096 - 128, "test.hog", &hog).ok());
  r = http->Post("/embed", embed_body({"a", "b", "c", "d", "e", "f", "g", "h"}),
                 "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_NE(r->body.find("result rows"), std::string::npos) << r->body;
  hog.reset();
  r = http->Post("/embed", embed_body({"a", "b"}), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST(Faults, AnExceptionInAHandlerIsAJson500AndTheProcessLives) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, fault_limits());
  auto http = server.client();
  auto r = http->Post("/embed", embed_body({"fine", "then THROW"}), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  json e = json::parse(r->body);
  EXPECT_EQ(e["error_type"], "Internal");
  EXPECT_NE(e["error"].get<std::string>().find("the fake tokenizer throws"), std::string::npos);
  r = http->Post("/v1/embeddings", R"({"input": "THROW"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(json::parse(r->body)["error"]["type"], "server_error");
  r = http->Post("/embed", embed_body({"fine"}), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

std::string status_line(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

json body_of(const std::string& response) {
  const size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? json() : json::parse(response.substr(at + 4), nullptr, false);
}

double connections(RunningServer& server) {
  auto r = server.client()->Get("/metrics");
  return r ? metric(r->body, "tessera_server_http_connections") : -1;
}

// A client that sends its request one byte at a time, slower than the
// server's read timeout allows, is answered 408 and disconnected while it
// is still sending; it holds no connection thread afterwards.
void expect_slow_client_cut(const std::string& head_then_trickle, size_t trickle_from) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = fault_limits();
  o.read_timeout_seconds = 1;
  RunningServer server(model, alloc, o);
  RawClient slow(server.port());
  ASSERT_TRUE(slow.connected());
  const Clock::time_point start = Clock::now();
  ASSERT_TRUE(slow.send(head_then_trickle.substr(0, trickle_from)));
  // One byte every 50 ms: each recv() of the server waits far less than any
  // per-read timeout; only a deadline for the whole request can stop it.
  for (size_t i = trickle_from; i < head_then_trickle.size(); ++i) {
    // Stop once the server has answered (or closed), before the answer could
    // be lost to a reset; give up after a minute (the test then fails).
    if (slow.readable(50) || Clock::now() - start > std::chrono::seconds(60)) break;
    if (!slow.send(head_then_trickle.substr(i, 1))) break;
  }
  const std::string answer = slow.read_to_end();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(status_line(answer), "HTTP/1.1 408 Request Timeout") << answer;
  EXPECT_EQ(body_of(answer)["error_type"], "Timeout") << answer;
  EXPECT_NE(answer.find("--read-timeout"), std::string::npos) << answer;
  EXPECT_GE(elapsed, 1.0);  // not before the timeout
  EXPECT_LT(elapsed, 60.0);
  // Only /metrics' own connection is left.
  double open = connections(server);
  for (int i = 0; i < 600 && open != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    open = connections(server);
  }
  EXPECT_EQ(open, 1);
  auto r = server.client()->Post("/embed", embed_body({"still serving"}), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(Faults, ASlowlorisSendingHeadersByteByByteIsCutAfterTheReadTimeout) {
  const std::string head =
      "POST /embed HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(2000, 'a') + "\r\n\r\n";
  expect_slow_client_cut(head, 10);
}

TEST(Faults, AClientSendingItsBodyByteByByteIsCutAfterTheReadTimeout) {
  const std::string body = embed_body({std::string(2000, 'b')});
  const std::string request =
      "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
      "\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  expect_slow_client_cut(request, request.size() - body.size() + 5);
}

TEST(Faults, AClientReadingTheAnswerSlowerThanTheWriteTimeoutIsDisconnected) {
  // 16 rows of 65536 floats: about 12 MB of JSON, more than the kernel
  // buffers for the socket (tcp_wmem's 4 MB at most by default), so the
  // server's writes must wait for the client.
  FakeModel model(/*dim=*/1 << 16);
  TrackingAllocator alloc;
  ServerOptions o = fault_limits();
  o.max_client_batch_size = 16;
  o.write_timeout_seconds = 1;
  RunningServer server(model, alloc, o);
  RawClient slow(server.port(), /*receive_buffer=*/4096);
  ASSERT_TRUE(slow.connected());
  std::vector<std::string> texts;
  for (int i = 0; i < 16; ++i) texts.push_back("t" + std::to_string(i));
  const std::string body = embed_body(texts);
  constexpr size_t kAnswerBytes = size_t{16} * (1 << 16) * 8;  // at least 8 bytes a float
  ASSERT_TRUE(slow.send("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body));
  // 1 KiB every 20 ms: reading it all would take minutes. (The kernel wakes
  // a blocked writer only once a third of the send buffer is free, so each
  // wait of the server is already long here; the deadline for the whole
  // answer also bounds faster readers of larger answers.)
  std::atomic<bool> stop_reading{false};
  std::atomic<size_t> received{0};
  std::thread reader([&] {
    while (!stop_reading) {
      const ssize_t n = slow.read_some(1024);
      if (n <= 0) return;
      received += static_cast<size_t>(n);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  // The server gives up the connection (its thread is free again) while the
  // client is still reading.
  const Clock::time_point start = Clock::now();
  double open = connections(server);
  while (open != 1 && Clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    open = connections(server);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  stop_reading = true;
  slow.shutdown();  // ends a recv() the reader may be blocked in
  reader.join();
  EXPECT_EQ(open, 1) << "still writing after " << elapsed << " s";
  EXPECT_GT(received.load(), 0u);
  EXPECT_LT(received.load(), kAnswerBytes);
}

class Limits : public ::testing::Test {
 protected:
  static ServerOptions options() {
    ServerOptions o = fault_limits();
    o.max_header_bytes = 16 << 10;
    // Long enough that an answer which waits for the timeout fails the test
    // (RawClient gives up after 120 s; the tests expect answers at once).
    o.read_timeout_seconds = 600;
    return o;
  }
  // Sends `request`, returns all the server sends back, and expects the
  // server to close the connection after it (not to wait for more).
  std::string exchange(const std::string& request) {
    RawClient c(server_.port());
    EXPECT_TRUE(c.connected());
    c.send(request);  // may fail part-way once the server has answered
    std::string answer = c.read_to_end();
    EXPECT_TRUE(c.closed_by_server()) << "the connection is still open after: " << answer;
    return answer;
  }
  FakeModel model_;
  TrackingAllocator alloc_;
  RunningServer server_{model_, alloc_, options()};
};

TEST_F(Limits, HeadersOverMaxHeaderBytesAre431AndTheConnectionCloses) {
  std::string head = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 40; ++i) {
    head += "X-Pad-" + std::to_string(i) + ": " + std::string(500, 'p') + "\r\n";
  }
  const std::string answer = exchange(head + "\r\n");
  EXPECT_EQ(status_line(answer), "HTTP/1.1 431 Request Header Fields Too Large") << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos);
  EXPECT_NE(body_of(answer)["error"].get<std::string>().find("--max-header-bytes = 16384"),
            std::string::npos)
      << answer;
}

TEST_F(Limits, AHeaderLineOver8KIs431AndAnEndlessOneIsNotBuffered) {
  std::string answer =
      exchange("GET /health HTTP/1.1\r\nX-Big: " + std::string(9000, 'h') + "\r\n\r\n");
  EXPECT_EQ(status_line(answer), "HTTP/1.1 431 Request Header Fields Too Large") << answer;
  // A line that never ends: answered once the limit passes, not read on.
  answer = exchange("GET /health HTTP/1.1\r\nX-Endless: " + std::string(20000, 'e'));
  EXPECT_EQ(status_line(answer), "HTTP/1.1 431 Request Header Fields Too Large") << answer;
}

TEST_F(Limits, ARequestLineOver8KIs414EvenIfItNeverEnds) {
  for (const char* end : {" HTTP/1.1\r\nHost: x\r\n\r\n", ""}) {
    const std::string answer = exchange("GET /health?" + std::string(9000, 'q') + end);
    EXPECT_EQ(status_line(answer), "HTTP/1.1 414 URI Too Long") << answer;
    EXPECT_NE(body_of(answer)["error"].get<std::string>().find("longer than 8192 bytes"),
              std::string::npos)
        << answer;
  }
}

TEST_F(Limits, ADeclaredBodyOverThePayloadLimitIs413AtOnceWithoutReadingIt) {
  // Nothing of the body is sent: the answer cannot wait for it.
  std::string answer = exchange(
      "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
      "10000000000\r\n\r\n");
  EXPECT_EQ(status_line(answer), "HTTP/1.1 413 Payload Too Large") << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  EXPECT_NE(answer.find("10000000000 bytes"), std::string::npos) << answer;
  // A client that sends the whole body anyway still reads the 413 (the
  // server drains what it sent before closing; no reset).
  const std::string body(1 << 20, ' ');
  answer =
      exchange("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n\r\n" + body);
  EXPECT_EQ(status_line(answer), "HTTP/1.1 413 Payload Too Large") << answer;
}

TEST_F(Limits, AChunkedBodyOverThePayloadLimitIs413BeforeItIsAllRead) {
  std::string request = "POST /embed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunk = "1000\r\n" + std::string(0x1000, ' ') + "\r\n";
  for (int i = 0; i < 256; ++i) request += chunk;  // 1 MiB, 16 x the limit
  // No last chunk: a server that read on would wait for it, not answer.
  const std::string answer = exchange(request);
  EXPECT_EQ(status_line(answer), "HTTP/1.1 413 Payload Too Large") << answer;
  EXPECT_NE(body_of(answer)["error"].get<std::string>().find("--payload-limit"), std::string::npos)
      << answer;
  // The server kept at most the limit and its framing slack of it.
  auto r = server_.client()->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(Limits, AChunkedBodyUnderTheLimitIsServed) {
  const std::string body = embed_body({"chunked words"});
  const std::string half = body.substr(0, body.size() / 2), rest = body.substr(body.size() / 2);
  auto hex = [](size_t n) {
    char b[16];
    std::snprintf(b, sizeof b, "%zx", n);
    return std::string(b);
  };
  const std::string answer = exchange(
      "POST /embed HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: "
      "chunked\r\n\r\n" +
      hex(half.size()) + "\r\n" + half + "\r\n" + hex(rest.size()) + "\r\n" + rest +
      "\r\n0\r\n\r\n");
  EXPECT_EQ(status_line(answer), "HTTP/1.1 200 OK") << answer;
  EXPECT_EQ(body_of(answer)[0].get<std::vector<float>>(),
            model_.expected_row(model_.ids_of("chunked words")));
}

TEST(Faults, AnAnswerBeforeTheBodyClosesTheConnectionSoTheBodyIsNotReadAsARequest) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = fault_limits();
  o.api_key = "k3y";
  RunningServer server(model, alloc, o);
  // Exactly one answer, then the server closes: it does not read the body
  // (and the CRLF some clients send after it) as the next request.
  RawClient raw(server.port());
  const std::string body = embed_body({"a"});
  ASSERT_TRUE(raw.send("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body + "\r\n"));
  const std::string answer = raw.read_to_end();
  EXPECT_TRUE(raw.closed_by_server()) << answer;
  EXPECT_EQ(status_line(answer), "HTTP/1.1 401 Unauthorized") << answer;
  EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << answer;
  // A keep-alive client sees Connection: close and reconnects.
  auto http = server.client();
  http->set_keep_alive(true);
  auto r = http->Post("/embed", embed_body({"a"}), "application/json");  // no key: 401
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->get_header_value("Connection"), "close");
  r = http->Post("/embed", {{"Authorization", "Bearer k3y"}}, embed_body({"a"}),
                 "application/json");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200) << r->body;
}

}  // namespace
}  // namespace tessera::server
