// The server when resources run short or framing is hostile (issue 35), over
// real HTTP on loopback against the fake model: idle and silent connections
// hold no thread and are shed past the connection cap, a worker thread that
// cannot be started is counted and never fatal, large answers are capped
// and counted against the memory budget, ambiguous framing is 400 and the
// connection closes, and a long request cannot hold short ones behind it.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "metrics_text.h"
#include "raw_client.h"
#include "server_fixture.h"
#include "support/fake_model.h"

namespace tessera::server {
namespace {

using nlohmann::json;
using tessera::testing::FakeModel;
using testing::metric;
using testing::RawClient;
using testing::RunningServer;

ServerOptions resource_limits() {
  ServerOptions o;
  o.batching.max_batch_tokens = 64;
  o.max_client_batch_size = 8;
  o.payload_limit_bytes = 64 << 10;
  return o;
}

std::string head_of(const std::string& answer) { return answer.substr(0, answer.find("\r\n")); }

// Connection exhaustion: clients that connect and send one byte each (or
// nothing) used to hold a thread each for the read timeout; now the reactor
// holds them, and past the cap the oldest is shed, so /health from a new
// client is answered at once.
TEST(Resources, SlowAndSilentConnectionsDoNotStarveAWellBehavedClient) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = resource_limits();
  o.max_connections = 200;
  o.http_threads = 8;
  RunningServer server(model, alloc, o);
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 300; ++i) {  // more than the cap and the worker threads
    slow.push_back(std::make_unique<RawClient>(server.port()));
    ASSERT_TRUE(slow.back()->connected());
    if (i % 2 == 0) {
      ASSERT_TRUE(slow.back()->send("P"));
    }
  }
  auto http = server.client();
  http->set_read_timeout(5, 0);  // the read timeout is 30 s: an answer within 5 s was not starved
  auto r = http->Get("/health");
  ASSERT_TRUE(r) << "a well-behaved client was starved by slow connections";
  EXPECT_EQ(r->status, 200);
  r = http->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_LE(metric(r->body, "tessera_server_open_connections"), 200);
  EXPECT_GE(metric(r->body, "tessera_server_connections_shed_total"), 100);
  EXPECT_LE(metric(r->body, "tessera_server_http_threads"), 8);
  // The first connections were shed: the server closed them.
  EXPECT_TRUE(slow.front()->readable(5000));
}

// A worker thread that cannot be started (EAGAIN under a pids or memory
// limit) used to leave the accept path and end the process (exit 70).
TEST(Resources, AWorkerThreadThatCannotStartIsCountedAndNeverFatal) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = resource_limits();
  auto started = std::make_shared<std::atomic<int>>(0);
  o.start_thread = [started](std::function<void()> fn) {
    if (started->fetch_add(1) >= 1) {  // one thread, then the limit
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    }
    return std::thread(std::move(fn));
  };
  RunningServer server(model, alloc, o);
  model.close_gate();  // requests pile up on the one worker
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&] {
      auto r = server.client()->Post("/embed", R"({"inputs": "a b"})", "application/json");
      if (r && r->status == 200) ++ok;
    });
  }
  while (*started < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  model.open_gate();
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 6);  // queued for the one worker, all answered
  auto r = server.client()->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_GE(metric(r->body, "tessera_server_thread_start_failures_total"), 1);
  EXPECT_EQ(metric(r->body, "tessera_server_http_threads"), 1);
}

TEST(Resources, NoWorkerThreadAtAllIs503AndTheServerLives) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = resource_limits();
  o.start_thread = [](const std::function<void()>& /*fn*/) -> std::thread {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
  };
  RunningServer server(model, alloc, o);
  RawClient c(server.port());
  ASSERT_TRUE(c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string answer = c.read_to_end();
  EXPECT_EQ(head_of(answer), "HTTP/1.1 503 Service Unavailable") << answer;
  EXPECT_NE(answer.find("Retry-After: 1"), std::string::npos);
  EXPECT_NE(answer.find("thread"), std::string::npos);
  EXPECT_TRUE(server.stop_and_join().ok());
}

// Request smuggling: each of these used to keep the connection open and
// serve the bytes after the ambiguous body as a second request.
TEST(Resources, AmbiguousFramingIs400AndTheRestIsNeverServed) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, resource_limits());
  const std::string smuggled = "GET /info HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::vector<std::string> attacks = {
      // Content-Length and Transfer-Encoding together.
      "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\n\r\n" +
          smuggled,
      // Two different Content-Lengths.
      "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 16\r\n\r\n" +
          smuggled,
      // A malformed request line.
      "GET  /health HTTP/1.1\r\nHost: x\r\n\r\n" + smuggled,
  };
  for (const std::string& attack : attacks) {
    RawClient c(server.port());
    ASSERT_TRUE(c.send(attack));
    const std::string answer = c.read_to_end();
    EXPECT_EQ(head_of(answer), "HTTP/1.1 400 Bad Request") << attack << "\n---\n" << answer;
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_EQ(answer.find("model_id"), std::string::npos) << "the smuggled /info was served";
  }
  auto r = server.client()->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// A framing refusal on an OpenAI route is in OpenAI's error shape.
TEST(Resources, AFramingRefusalOnAnOpenAiRouteIsInOpenAisShape) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, resource_limits());
  RawClient c(server.port());
  ASSERT_TRUE(
      c.send("POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
             "Content-Length: 3\r\n\r\n{}"));
  const std::string answer = c.read_to_end();
  ASSERT_EQ(head_of(answer), "HTTP/1.1 400 Bad Request") << answer;
  const json e = json::parse(answer.substr(answer.find("\r\n\r\n") + 4));
  EXPECT_EQ(e["error"]["type"], "invalid_request_error") << answer;
}

// curl -d sends application/x-www-form-urlencoded; cpp-httplib's built-in
// 8 KiB form limit answered a JSON body over it 413 "exceeds 2 MiB".
TEST(Resources, AJsonBodySentAsAFormIsServedWhateverItsSize) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, resource_limits());
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "word ";
  const std::string body = json({{"inputs", text}, {"truncate", true}}).dump();
  ASSERT_GT(body.size(), 8192u);
  auto r = server.client()->Post("/embed", body, "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

// Memory amplification: /tokenize wrote a JSON tree of every token (a 2 MB
// text took ~700 MB); the answer is now written as text, capped by
// max_response_bytes (413) and counted against the budget while it is held.
TEST(Resources, ALargeTokenizeAnswerIsCappedAndCounted) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = resource_limits();
  o.max_response_bytes = 64 << 10;
  RunningServer server(model, alloc, o);
  std::string text;
  for (int i = 0; i < 6000; ++i) text += "w ";
  auto r = server.client()->Post("/tokenize", json({{"inputs", text}}).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body.substr(0, 200);
  EXPECT_NE(r->body.find("--max-response-bytes"), std::string::npos) << r->body;
  // Under the cap it is answered, in TEI's shape.
  r = server.client()->Post("/tokenize", R"({"inputs": "w w"})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json tokens = json::parse(r->body);
  ASSERT_EQ(tokens.size(), 1u);
  ASSERT_EQ(tokens[0].size(), 4u);  // [CLS] w w [SEP]
  EXPECT_EQ(tokens[0][1]["text"], "w");
  EXPECT_EQ(tokens[0][1]["start"], 0);
  EXPECT_EQ(tokens[0][1]["special"], false);
  EXPECT_TRUE(tokens[0][0]["start"].is_null());
  EXPECT_EQ(alloc.by_owner().count("server.answers"), 1u);  // it was counted
  while (alloc.live_bytes() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(Resources, AnEmbedDocumentsAnswerOverTheCapIs413) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = resource_limits();
  o.max_response_bytes = 512;
  RunningServer server(model, alloc, o);
  json docs = json::array();
  for (int i = 0; i < 8; ++i) docs.push_back({{"id", i}, {"text", "a b c"}});
  auto r = server.client()->Post("/embed_documents", json({{"documents", docs}}).dump(),
                                 "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body.substr(0, 200);
  EXPECT_NE(r->body.find("--max-response-bytes"), std::string::npos) << r->body;
  docs = json::array({docs[0]});
  r = server.client()->Post("/embed_documents", json({{"documents", docs}}).dump(),
                            "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST(Resources, AnAnswerOverTheMemoryBudgetIs503WithRetryAfter) {
  FakeModel model;
  TrackingAllocator alloc(/*budget=*/512 << 10);
  RunningServer server(model, alloc, resource_limits());
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "w ";
  // ~10,000 tokens x ~50 bytes = 500 KB of answer: over what is left once the
  // first MiB step is asked for.
  auto r = server.client()->Post("/tokenize", json({{"inputs", text}}).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body.substr(0, 200);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_NE(r->body.find("--memory-budget"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace tessera::server

namespace tessera::server {
namespace {

// A request whose client has gone is not run (a 2 MB document used to run
// to its end, and a stopping server waited for it).
TEST(Resources, ARequestWhoseClientHasGoneIsDropped) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, resource_limits());
  model.close_gate();
  std::thread holder([&] {  // the first batch, held at the gate
    auto r = server.client()->Post("/embed", R"({"inputs": "a"})", "application/json");
    EXPECT_TRUE(r && r->status == 200);
  });
  model.wait_for_calls(1);
  {
    RawClient gone(server.port());
    const std::string body = R"({"inputs": ["b c", "d e"]})";
    ASSERT_TRUE(
        gone.send("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: " +
                  std::to_string(body.size()) + "\r\n\r\n" + body));
    while (server.server().batcher().queued() < 2) std::this_thread::yield();
  }  // closed before its request runs
  // The worker looks at its client every 100 ms; give it several looks.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  model.open_gate();
  holder.join();
  while (server.server().batcher().in_flight() != 0) std::this_thread::yield();
  EXPECT_EQ(model.calls(), 1) << "the abandoned request was run";
  EXPECT_EQ(server.server().batcher().queued(), 0u);
}

}  // namespace
}  // namespace tessera::server
