// Over real HTTP against the fake model: concurrent clients get exactly their
// own rows, overload is a 429 at once, a backend failure is a 424 and the
// server stays up, and a stop answers every accepted request.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "support/fake_model.h"
#include "metrics_text.h"
#include "server_fixture.h"

namespace tessera::server {
namespace {

using nlohmann::json;
using tessera::testing::FakeModel;
using testing::metric;
using testing::RunningServer;

ServerOptions limits(size_t max_concurrent) {
  ServerOptions o;
  o.batching.max_batch_tokens = 48;
  o.batching.max_concurrent_requests = max_concurrent;
  o.max_client_batch_size = 8;
  return o;
}

// Empty when the rows of `body` are the fake's rows for `texts`.
std::string check_rows(const FakeModel& model, const std::vector<std::string>& texts,
                       const std::string& body) {
  const json rows = json::parse(body);
  if (rows.size() != texts.size()) return "row count " + std::to_string(rows.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<float> want = model.expected_row(model.ids_of(texts[i]));
    for (size_t k = 0; k < want.size(); ++k) {
      if (rows[i][k].get<float>() != want[k]) {
        return "text '" + texts[i] + "' column " + std::to_string(k);
      }
    }
  }
  return "";
}

// Blocks until the server has admitted `n` embedding requests.
void wait_in_flight(RunningServer& s, size_t n) {
  while (s.server().batcher().in_flight() < n) std::this_thread::yield();
}

TEST(Lifecycle, ConcurrentClientsReceiveExactlyTheirOwnEmbeddings) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, limits(64));
  constexpr int kClients = 8;
  constexpr int kRequests = 30;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto http = server.client();
      std::mt19937 rng(c);
      for (int r = 0; r < kRequests && failures[c].empty(); ++r) {
        std::vector<std::string> texts(1 + rng() % 8);
        for (auto& t : texts) {
          const int words = 1 + static_cast<int>(rng() % 12);
          for (int w = 0; w < words; ++w) t += "c" + std::to_string(c) + "w" + std::to_string(rng() % 50) + " ";
        }
        auto res = http->Post("/embed", json({{"inputs", texts}}).dump(), "application/json");
        if (!res || res->status != 200) {
          failures[c] = res ? res->body : httplib::to_string(res.error());
        } else {
          failures[c] = check_rows(model, texts, res->body);
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  for (int c = 0; c < kClients; ++c) EXPECT_EQ(failures[c], "") << "client " << c;
}

TEST(Lifecycle, PastMaxConcurrentRequestsTheAnswerIs429AtOnce) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, limits(2));
  model.close_gate();
  auto slow = [&](const std::string& text) {
    return std::async(std::launch::async, [&server, text] {
      auto res = server.client()->Post("/embed", json({{"inputs", text}}).dump(),
                                        "application/json");
      return res ? res->status : -1;
    });
  };
  auto a = slow("a");
  auto b = slow("b");
  wait_in_flight(server, 2);
  // The queue is full and the batcher is held: this answer cannot wait on it.
  auto http = server.client();
  auto r = http->Post("/embed", R"({"inputs": "c"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429) << r->body;
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_EQ(json::parse(r->body)["error_type"], "Overloaded");
  r = http->Post("/v1/embeddings", R"({"input": "c"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(json::parse(r->body)["error"]["type"], "rate_limit_error");
  // Routes that do not queue still answer.
  r = http->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  model.open_gate();
  EXPECT_EQ(a.get(), 200);
  EXPECT_EQ(b.get(), 200);
  r = http->Post("/embed", R"({"inputs": "c"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(Lifecycle, ABackendFailureIs424AndTheServerStaysUp) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, limits(8));
  auto http = server.client();
  model.fail_next(unavailable("no attention backend is eligible: cpu.flash rejected (x)"));
  auto r = http->Post("/embed", R"({"inputs": "a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 424) << r->body;
  const json j = json::parse(r->body);
  EXPECT_EQ(j["error_type"], "Backend");
  EXPECT_NE(j["error"].get<std::string>().find("no attention backend is eligible"),
            std::string::npos);
  model.fail_next(internal_error("cpu.flash crashed"));
  r = http->Post("/v1/embeddings", R"({"input": "a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 424);
  EXPECT_EQ(json::parse(r->body)["error"]["type"], "server_error");
  r = http->Post("/embed", R"({"inputs": "a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(check_rows(model, {"a"}, r->body), "");
}

TEST(Lifecycle, OpenKeepAliveConnectionsDoNotHoldBackNewOnes) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, limits(2));
  // Each client keeps its connection after its answer.
  constexpr int kIdle = 40;
  std::vector<std::unique_ptr<httplib::Client>> idle;
  for (int i = 0; i < kIdle; ++i) {
    idle.push_back(server.client());
    idle.back()->set_keep_alive(true);
    auto r = idle.back()->Get("/health");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
  }
  // This connection is served while all 40 are still open, and an idle
  // connection holds no thread: the reactor holds it, a worker serves only
  // a whole request (connection_reactor.h). A worker hands its connection
  // back just after the answer is sent, so on a loaded machine the last
  // idle client's may still be on its way: asked again for up to 10 s (one
  // keep-alive client, so the asking adds no connection).
  auto metrics = server.client();
  metrics->set_keep_alive(true);
  auto r = metrics->Get("/metrics");
  ASSERT_TRUE(r);
  for (int tries = 0; tries < 500 && metric(r->body, "tessera_server_http_connections") != 1;
       ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    r = metrics->Get("/metrics");
    ASSERT_TRUE(r);
  }
  EXPECT_GE(metric(r->body, "tessera_server_open_connections"), kIdle + 1) << r->body;
  EXPECT_EQ(metric(r->body, "tessera_server_http_connections"), 1) << r->body;
  EXPECT_LT(metric(r->body, "tessera_server_http_threads"), kIdle / 2) << r->body;
}

TEST(Lifecycle, StopAnswersEveryAcceptedRequestThenRefusesConnections) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, limits(64));
  model.close_gate();
  constexpr int kRequests = 6;
  std::vector<std::future<std::string>> pending;
  for (int i = 0; i < kRequests; ++i) {
    pending.push_back(std::async(std::launch::async, [&, i] {
      const std::vector<std::string> texts = {"r" + std::to_string(i), "x y"};
      auto res = server.client()->Post("/embed", json({{"inputs", texts}}).dump(),
                                        "application/json");
      if (!res) return "transport: " + httplib::to_string(res.error());
      if (res->status != 200) return std::to_string(res->status) + " " + res->body;
      return check_rows(model, texts, res->body);
    }));
  }
  wait_in_flight(server, kRequests);
  auto stopped = std::async(std::launch::async, [&] { return server.stop_and_join(); });
  // The listening socket closes at once: a new connection is refused while
  // the accepted requests are still held by the model.
  httplib::Error refused = httplib::Error::Success;
  while (refused != httplib::Error::Connection) {
    auto r = server.client()->Get("/health");
    refused = r ? httplib::Error::Success : r.error();
  }
  model.open_gate();
  for (int i = 0; i < kRequests; ++i) EXPECT_EQ(pending[i].get(), "") << "request " << i;
  const Status s = stopped.get();
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(server.server().batcher().in_flight(), 0u);
}

}  // namespace
}  // namespace tessera::server
