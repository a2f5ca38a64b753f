// Every route over real HTTP on loopback, against the fake model: answers,
// every error code, limits, authentication.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <nlohmann/json.hpp>

#include "route_checks.h"
#include "runtime/metrics.h"
#include "metrics_text.h"
#include "server_fixture.h"
#include "support/fake_model.h"

namespace tessera::server {
namespace {

using nlohmann::json;
using tessera::testing::FakeModel;
using testing::await_metrics;
using testing::expect_error;
using testing::expect_row;
using testing::RunningServer;
using testing::small_limits;

class Routes : public ::testing::Test {
 protected:
  FakeModel model_;
  TrackingAllocator alloc_;
  RunningServer server_{model_, alloc_, small_limits()};
  std::unique_ptr<httplib::Client> http_ = server_.client();
};

TEST_F(Routes, HealthAndInfo) {
  ASSERT_TRUE(server_.bind_status().ok()) << server_.bind_status().to_string();
  auto r = http_->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["status"], "ok");

  r = http_->Get("/info");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const json info = json::parse(r->body);
  EXPECT_EQ(info["model_id"], "fake-model");
  EXPECT_EQ(info["dim"], 8);
  EXPECT_EQ(info["max_input_length"], 16);
  EXPECT_EQ(info["max_batch_tokens"], 64);
  EXPECT_EQ(info["max_concurrent_requests"], 8);
  EXPECT_EQ(info["max_client_batch_size"], 4);
  EXPECT_EQ(info["payload_limit_bytes"], 4096);
  EXPECT_EQ(info["backends"], json({"reference", "cpu.flash"}));
  EXPECT_EQ(info["model_type"]["embedding"]["pooling"], "mean");
}

TEST_F(Routes, EmbedAStringOrAListGivesOneRowPerText) {
  auto r = http_->Post("/embed", R"({"inputs": "the quick fox"})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json rows = json::parse(r->body);
  ASSERT_EQ(rows.size(), 1u);
  expect_row(rows[0], model_.expected_row(model_.ids_of("the quick fox")));

  r = http_->Post("/embed", R"({"inputs": ["a b", "", "c d e"]})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  rows = json::parse(r->body);
  ASSERT_EQ(rows.size(), 3u);
  expect_row(rows[0], model_.expected_row(model_.ids_of("a b")));
  expect_row(rows[1], model_.expected_row(model_.ids_of("")));
  expect_row(rows[2], model_.expected_row(model_.ids_of("c d e")));
}

TEST_F(Routes, TooLongInputIsRefusedUnlessTruncated) {
  std::string words;
  for (int i = 0; i < 20; ++i) words += "w" + std::to_string(i) + " ";
  const std::string body = json({{"inputs", {"short", words}}}).dump();
  auto r = http_->Post("/embed", body, "application/json");
  expect_error(r, 422, "inputs[1]");
  EXPECT_NE(r->body.find("22 tokens"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("at most 16"), std::string::npos) << r->body;

  r = http_->Post("/embed", json({{"inputs", {"short", words}}, {"truncate", true}}).dump(),
                  "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json rows = json::parse(r->body);
  const auto ids = model_.ids_of(words, /*truncate=*/true);
  ASSERT_EQ(ids.size(), 16u);
  expect_row(rows[1], model_.expected_row(ids));
}

TEST_F(Routes, ValidationErrorsAre422NamingTheField) {
  expect_error(http_->Post("/embed", R"({"input": "a"})", "application/json"), 422, "inputs");
  expect_error(http_->Post("/embed", R"({"inputs": ["a", 2]})", "application/json"), 422,
               "inputs[1]");
  expect_error(http_->Post("/embed", R"({"inputs": "a", "normalize": "no"})", "application/json"),
               422, "normalize");
  // The fake normalizes like all-MiniLM-L6-v2: raw rows cannot be given back.
  expect_error(http_->Post("/embed", R"({"inputs": "a", "normalize": false})", "application/json"),
               422, "normalize");
  expect_error(http_->Post("/embed", R"({"inputs": ["a", "x REFUSE"]})", "application/json"), 422,
               "inputs[1]");
  expect_error(http_->Post("/embed", R"({"inputs": [)", "application/json"), 400, "body");
}

TEST_F(Routes, LimitsAre413) {
  auto r = http_->Post("/embed", R"({"inputs": ["a", "b", "c", "d", "e"]})", "application/json");
  expect_error(r, 413, "inputs");
  EXPECT_NE(r->body.find("--max-client-batch-size"), std::string::npos);

  const std::string big = json({{"inputs", std::string(5000, 'x')}}).dump();
  r = http_->Post("/embed", big, "application/json");
  expect_error(r, 413, "body");
  EXPECT_NE(r->body.find("at most 4096"), std::string::npos) << r->body;
  // The connection and the server are still fine.
  r = http_->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(Routes, UnknownRouteIs404Json) {
  auto r = http_->Get("/nope");
  expect_error(r, 404, "");
  EXPECT_NE(r->body.find("POST /embed"), std::string::npos);
  r = http_->Get("/embed");  // wrong method
  expect_error(r, 404, "");
}

std::vector<float> decode_floats(const std::string& b64) {
  std::vector<unsigned char> bytes(b64.size());
  const int n = EVP_DecodeBlock(bytes.data(), reinterpret_cast<const unsigned char*>(b64.data()),
                                static_cast<int>(b64.size()));
  const size_t padding = std::count(b64.end() - 2, b64.end(), '=');
  std::vector<float> out((static_cast<size_t>(n) - padding) / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

TEST_F(Routes, OpenAIEmbeddingsFloatAndBase64WithUsage) {
  auto r = http_->Post("/v1/embeddings", R"({"input": ["a b", "c"], "model": "fake-model"})",
                       "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "fake-model");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 4 + 3);
  EXPECT_EQ(j["usage"]["total_tokens"], 7);
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][1]["object"], "embedding");
  EXPECT_EQ(j["data"][1]["index"], 1);
  expect_row(j["data"][0]["embedding"], model_.expected_row(model_.ids_of("a b")));
  expect_row(j["data"][1]["embedding"], model_.expected_row(model_.ids_of("c")));

  r = http_->Post("/v1/embeddings", R"({"input": "a b", "encoding_format": "base64"})",
                  "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = json::parse(r->body);
  const std::vector<float> got = decode_floats(j["data"][0]["embedding"].get<std::string>());
  EXPECT_EQ(got, model_.expected_row(model_.ids_of("a b")));  // bit-exact
}

TEST_F(Routes, OpenAIErrorsUseItsShapeAnd400) {
  expect_error(
      http_->Post("/v1/embeddings", R"({"input": "a", "dimensions": 9})", "application/json"), 400,
      "dimensions");
  expect_error(http_->Post("/v1/embeddings", R"({"input": "a", "encoding_format": "hex"})",
                           "application/json"),
               400, "encoding_format");
  // More texts than --max-client-batch-size (4): /v1 takes OpenAI's 2048.
  auto r = http_->Post("/v1/embeddings", R"({"input": ["a","b","c","d","e"]})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = http_->Post("/v1/embeddings", R"({"input": "a", "dimensions": 8})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST_F(Routes, TokenizeGivesIdsOffsetsAndSpecialTokens) {
  auto r = http_->Post("/tokenize", R"({"inputs": ["ab  cd", "x"]})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  ASSERT_EQ(j.size(), 2u);
  const auto ids = model_.ids_of("ab  cd");
  ASSERT_EQ(j[0].size(), 4u);
  EXPECT_EQ(j[0][0], json({{"id", 1}, {"text", "[CLS]"}, {"special", true}, {"start", nullptr},
                           {"stop", nullptr}}));
  EXPECT_EQ(j[0][1], json({{"id", ids[1]}, {"text", "ab"}, {"special", false}, {"start", 0},
                           {"stop", 2}}));
  EXPECT_EQ(j[0][2]["text"], "cd");
  EXPECT_EQ(j[0][2]["start"], 4);
  EXPECT_EQ(j[0][3]["text"], "[SEP]");

  r = http_->Post("/tokenize", R"({"inputs": "x", "add_special_tokens": false})",
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)[0].size(), 1u);
  expect_error(http_->Post("/tokenize", R"({"inputs": "REFUSE"})", "application/json"), 422,
               "inputs[0]");
}

TEST_F(Routes, MetricsCountResponsesAndIncludeTheExtraFamilies) {
  ASSERT_TRUE(http_->Post("/embed", R"({"inputs": "a"})", "application/json"));
  ASSERT_TRUE(http_->Post("/embed", R"({"inputs": []})", "application/json"));
  // The answers above can arrive before the batch's report.
  const std::string ok_batch = "tessera_server_batches_total{outcome=\"ok\"} 1\n";
  const auto r = await_metrics(
      *http_, [&](const std::string& text) { return text.find(ok_batch) != std::string::npos; });
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& m = r->body;
  EXPECT_NE(m.find("tessera_server_requests_total{route=\"/embed\",code=\"200\"} 1\n"),
            std::string::npos) << m;
  EXPECT_NE(m.find("tessera_server_requests_total{route=\"/embed\",code=\"422\"} 1\n"),
            std::string::npos) << m;
  EXPECT_NE(m.find(ok_batch), std::string::npos) << m;
  EXPECT_NE(m.find("tessera_server_requests_in_flight 0\n"), std::string::npos);
  EXPECT_NE(m.find("# TYPE tessera_server_batch_tokens histogram"), std::string::npos);
  EXPECT_NE(m.find("process_resident_memory_bytes "), std::string::npos);
}

TEST(RoutesWithExtraMetrics, TheProfilerRegistryIsServedToo) {
  FakeModel model;
  TrackingAllocator alloc;
  RunningServer server(model, alloc, small_limits(), [](std::string* out) {
    MetricsText m;
    m.counter("tessera_attention_calls_total", "from the shared registry", {{"backend", "x"}}, 3);
    *out += m.render();
  });
  auto r = server.client()->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("tessera_attention_calls_total{backend=\"x\"} 3\n"), std::string::npos);
}

TEST(RoutesUnnormalized, NormalizeChoosesRawOrUnitRows) {
  FakeModel model(/*dim=*/8, /*max_length=*/16, /*normalizes=*/false);
  TrackingAllocator alloc;
  RunningServer server(model, alloc, small_limits());
  auto http = server.client();
  auto r = http->Post("/embed", R"({"inputs": "a b c", "normalize": false})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::vector<float> raw = model.expected_row(model.ids_of("a b c"));
  expect_row(json::parse(r->body)[0], raw);
  r = http->Post("/embed", R"({"inputs": "a b c"})", "application/json");
  ASSERT_TRUE(r);
  const json unit = json::parse(r->body)[0];
  double norm = 0;
  for (const auto& v : unit) norm += v.get<double>() * v.get<double>();
  EXPECT_NEAR(norm, 1.0, 1e-6);
  EXPECT_NEAR(unit[0].get<double>() / raw[0], unit[1].get<double>() / raw[1], 1e-5);
}

class Auth : public ::testing::Test {
 protected:
  static ServerOptions with_key() {
    ServerOptions o = small_limits();
    o.api_key = "k3y";
    return o;
  }
  FakeModel model_;
  TrackingAllocator alloc_;
  RunningServer server_{model_, alloc_, with_key()};
  std::unique_ptr<httplib::Client> http_ = server_.client();
};

TEST_F(Auth, EveryRouteButHealthNeedsTheBearerKey) {
  for (const char* path : {"/info", "/metrics"}) {
    auto r = http_->Get(path);
    expect_error(r, 401, "Authorization");
    EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  }
  expect_error(http_->Post("/embed", R"({"inputs": "a"})", "application/json"), 401,
               "Authorization");
  expect_error(http_->Post("/v1/embeddings", {{"Authorization", "Bearer wrong"}},
                           R"({"input": "a"})", "application/json"),
               401, "Authorization");
  auto r = http_->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);

  const httplib::Headers ok = {{"Authorization", "Bearer k3y"}};
  r = http_->Post("/embed", ok, R"({"inputs": "a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = http_->Get("/info", ok);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["auth"], true);
}

}  // namespace
}  // namespace tessera::server
