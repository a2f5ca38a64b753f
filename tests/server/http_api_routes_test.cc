// The vendor-API routes over real HTTP, against the fake model: OpenAI's
// POST /v1/embeddings (token-id inputs, dimensions, base64, the model name,
// 400 / 404 in its error shape) and GET /v1/models; Cohere's POST /v2/embed
// (every embedding type, input_type prompts, truncate, its error shape).
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/embedding_output.h"
#include "route_checks.h"
#include "server_fixture.h"
#include "support/fake_model.h"
#include "tessera/quantize.h"

namespace tessera::server {
namespace {

using nlohmann::json;
using tessera::testing::FakeModel;
using testing::expect_error;
using testing::expect_row;
using testing::RunningServer;
using testing::small_limits;

// The ids /tokenize gives for `text` with add_special_tokens false.
std::vector<int32_t> content_ids(const FakeModel& model, const std::string& text) {
  std::vector<int32_t> ids = model.ids_of(text);
  return {ids.begin() + 1, ids.end() - 1};
}

std::vector<float> floats_from_base64(const std::string& b64) {
  std::vector<unsigned char> bytes(b64.size());
  const int n = EVP_DecodeBlock(bytes.data(), reinterpret_cast<const unsigned char*>(b64.data()),
                                static_cast<int>(b64.size()));
  const size_t padding = b64.size() - b64.find_last_not_of('=') - 1;
  std::vector<float> out((static_cast<size_t>(n) - padding) / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

std::vector<float> leading_values(std::vector<float> row, int dims) {
  pipeline::shorten_rows(row.data(), 1, static_cast<int>(row.size()), dims, /*renormalize=*/true);
  row.resize(static_cast<size_t>(dims));
  return row;
}

// Cohere's error shape: {"message", "field"}.
void expect_cohere_error(const httplib::Result& r, int status, const std::string& field,
                         const std::string& text) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  const json j = json::parse(r->body);
  ASSERT_TRUE(j.contains("message")) << r->body;
  EXPECT_EQ(j.value("field", ""), field) << r->body;
  EXPECT_NE(j["message"].get<std::string>().find(text), std::string::npos) << r->body;
}

class ApiRoutes : public ::testing::Test {
 protected:
  static ServerOptions options() {
    ServerOptions o = small_limits();
    o.payload_limit_bytes = 16 << 20;  // room for a million token ids
    return o;
  }
  json post_ok(const char* path, const json& body) {
    return testing::post_expecting_ok(*http_, path, body.dump());
  }
  httplib::Result post(const char* path, const json& body) {
    return http_->Post(path, body.dump(), "application/json");
  }

  FakeModel model_;
  TrackingAllocator alloc_;
  RunningServer server_{model_, alloc_, options()};
  std::unique_ptr<httplib::Client> http_ = server_.client();
};

TEST_F(ApiRoutes, OpenAITokenIdsAreFramedAsTheirText) {
  const std::vector<int32_t> ab = content_ids(model_, "a b");
  const std::vector<int32_t> c = content_ids(model_, "c d e");
  json j = post_ok("/v1/embeddings", {{"input", ab}});
  ASSERT_EQ(j["data"].size(), 1u);
  expect_row(j["data"][0]["embedding"], model_.expected_row(model_.ids_of("a b")));
  EXPECT_EQ(j["usage"]["prompt_tokens"], 4);  // [CLS] a b [SEP]
  j = post_ok("/v1/embeddings", {{"input", {ab, c}}, {"user", "u-1"}});
  ASSERT_EQ(j["data"].size(), 2u);
  expect_row(j["data"][1]["embedding"], model_.expected_row(model_.ids_of("c d e")));
  EXPECT_EQ(j["usage"]["total_tokens"], 4 + 5);

  // Ids outside the vocabulary (1100 ids) name the input and the position.
  auto r = post("/v1/embeddings", {{"input", {ab, {101, 5000}}}});
  expect_error(r, 400, "input[1][1]");
  EXPECT_NE(r->body.find("5000"), std::string::npos);
  EXPECT_NE(r->body.find("1100"), std::string::npos) << r->body;
  expect_error(post("/v1/embeddings", {{"input", {101, 1100}}}), 400, "input[1]");
  expect_error(post("/v1/embeddings", {{"input", {101, -3}}}), 400, "input[1]");
  // Over-long: refused as an over-long text is (no truncate without --auto-truncate).
  std::vector<int32_t> long_ids(20, 101);
  r = post("/v1/embeddings", {{"input", long_ids}});
  expect_error(r, 400, "input");
  EXPECT_NE(r->body.find("22 tokens"), std::string::npos) << r->body;
  // A million ids: parsed, refused at once, the server lives.
  r = post("/v1/embeddings", {{"input", std::vector<int32_t>(1000000, 7)}});
  expect_error(r, 400, "input");
  EXPECT_NE(r->body.find("1000002 tokens"), std::string::npos) << r->body.substr(0, 300);
  post_ok("/v1/embeddings", {{"input", "still alive"}});
}

TEST(OpenAIAutoTruncate, CutsTokenIdInputsToo) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = small_limits();
  o.auto_truncate = true;
  RunningServer server(model, alloc, o);
  const std::string words = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16";
  std::vector<int32_t> ids = content_ids(model, words);
  auto r = server.client()->Post("/v1/embeddings", json({{"input", json::array({ids})}}).dump(),
                                 "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_row(json::parse(r->body)["data"][0]["embedding"],
             model.expected_row(model.ids_of(words, /*truncate=*/true)));
}

TEST_F(ApiRoutes, OpenAIDimensionsAndBase64) {
  const std::vector<float> full = model_.expected_row(model_.ids_of("a b"));
  json j = post_ok("/v1/embeddings", {{"input", "a b"}, {"dimensions", 3}});
  expect_row(j["data"][0]["embedding"], leading_values(full, 3));
  j = post_ok("/v1/embeddings",
              {{"input", "a b"}, {"dimensions", 5}, {"encoding_format", "base64"}});
  EXPECT_EQ(floats_from_base64(j["data"][0]["embedding"]), leading_values(full, 5));  // bit-exact
  for (const json& bad : {json(0), json(-7), json(9), json(int64_t{1} << 40), json(3.5), json("3"),
                          json::array({3})}) {
    expect_error(post("/v1/embeddings", {{"input", "a"}, {"dimensions", bad}}), 400, "dimensions");
  }
}

TEST_F(ApiRoutes, OpenAIModelNameAndModelsList) {
  json j = post_ok("/v1/embeddings", {{"input", "a"}, {"model", "fake-model"}});
  EXPECT_EQ(j["model"], "fake-model");
  auto r = post("/v1/embeddings", {{"input", "a"}, {"model", "text-embedding-3-small"}});
  expect_error(r, 404, "model");
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "model_not_found");
  EXPECT_EQ(json::parse(r->body)["error"]["type"], "invalid_request_error");

  r = http_->Get("/v1/models");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  j = json::parse(r->body);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "fake-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_EQ(j["data"][0]["owned_by"], "tessera");
  EXPECT_GT(j["data"][0]["created"].get<int64_t>(), 1700000000);
  r = http_->Get("/v1/models/fake-model");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body), j["data"][0]);
  r = http_->Get("/v1/models/other");
  expect_error(r, 404, "model");
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "model_not_found");
  // An unknown /v1 route answers in OpenAI's shape too.
  r = http_->Get("/v1/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json::parse(r->body)["error"]["type"], "invalid_request_error") << r->body;
}

TEST(OpenAIServedModelName, IsTheNameClientsUse) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = small_limits();
  o.served_model_name = "org/my-embedder";
  RunningServer server(model, alloc, o);
  auto http = server.client();
  auto r = http->Post("/v1/embeddings", R"({"input": "a", "model": "org/my-embedder"})",
                      "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["model"], "org/my-embedder");
  expect_error(
      http->Post("/v1/embeddings", R"({"input": "a", "model": "fake-model"})", "application/json"),
      404, "model");
  r = http->Get("/v1/models/org/my-embedder");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = http->Get("/info");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["served_model_name"], "org/my-embedder");
}

TEST_F(ApiRoutes, CohereFloatBase64AndBinaryTypes) {
  const json j =
      post_ok("/v2/embed", {{"model", "fake-model"},
                            {"texts", {"a b", "c"}},
                            {"input_type", "search_document"},
                            {"embedding_types", {"float", "base64", "binary", "ubinary"}}});
  EXPECT_EQ(j["response_type"], "embeddings_by_type");
  EXPECT_EQ(j["id"].get<std::string>().rfind("embd-", 0), 0u);
  EXPECT_EQ(j["texts"], json({"a b", "c"}));
  EXPECT_EQ(j["meta"]["api_version"]["version"], "2");
  EXPECT_EQ(j["meta"]["billed_units"]["input_tokens"], 4 + 3);
  std::vector<float> rows = model_.expected_row(model_.ids_of("a b"));
  const std::vector<float> c = model_.expected_row(model_.ids_of("c"));
  rows.insert(rows.end(), c.begin(), c.end());
  expect_row(j["embeddings"]["float"][1], c);
  EXPECT_EQ(floats_from_base64(j["embeddings"]["base64"][0]),
            std::vector<float>(rows.begin(), rows.begin() + 8));
  for (const auto& [type, precision] :
       {std::pair{"binary", Precision::kBinary}, std::pair{"ubinary", Precision::kUbinary}}) {
    std::vector<uint8_t> want;
    ASSERT_TRUE(quantize_embeddings(rows.data(), 2, 8, precision, {}, &want).ok());
    for (int r = 0; r < 2; ++r) {
      const int got = j["embeddings"][type][r][0];
      EXPECT_EQ(got, precision == Precision::kBinary ? static_cast<int8_t>(want[r])
                                                     : static_cast<int>(want[r]))
          << type << " " << r;
      EXPECT_EQ(j["embeddings"][type][r].size(), 1u);  // 8 sign bits in one byte
    }
  }
  EXPECT_FALSE(j["embeddings"].contains("int8"));
}

TEST_F(ApiRoutes, CohereInt8NeedsRangesAndErrorsUseItsShape) {
  auto r =
      post("/v2/embed", {{"texts", json::array({"a"})}, {"embedding_types", {"float", "uint8"}}});
  expect_cohere_error(r, 400, "embedding_types[1]", "--quantization-ranges");
  expect_cohere_error(post("/v2/embed", {{"texts", json::array({"a"})}, {"model", "other"}}), 404,
                      "model", "other");
  expect_cohere_error(post("/v2/embed", {{"texts", json::array({"a"})}, {"output_dimension", 9}}),
                      400, "output_dimension", "[1, 8]");
  expect_cohere_error(post("/v2/embed", {{"texts", json::array({"a"})},
                                         {"embedding_types", json::array({"int4"})}}),
                      400, "embedding_types[0]", "int4");
  expect_cohere_error(post("/v2/embed", {{"texts", json::array({"a"})}, {"max_tokens", 2}}), 400,
                      "max_tokens", "special tokens");
  expect_cohere_error(http_->Get("/v2/nope"), 404, "", "no route");
}

TEST_F(ApiRoutes, CohereTruncateAndMaxTokens) {
  const std::string words = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17";
  // END (the default) keeps the start, START the end, NONE refuses.
  json j = post_ok("/v2/embed", {{"texts", json::array({words})}});
  expect_row(j["embeddings"]["float"][0], model_.expected_row(model_.ids_of(words, true)));
  j = post_ok("/v2/embed", {{"texts", json::array({words})}, {"truncate", "START"}});
  expect_row(
      j["embeddings"]["float"][0],
      model_.expected_row(model_.ids_of("w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17")));
  expect_cohere_error(post("/v2/embed", {{"texts", {"a", words}}, {"truncate", "NONE"}}), 400,
                      "texts[1]", "20 tokens");
  j = post_ok("/v2/embed", {{"texts", json::array({words})}, {"max_tokens", 5}});
  expect_row(j["embeddings"]["float"][0], model_.expected_row(model_.ids_of("w0 w1 w2")));
  json part = json::object();
  part["type"] = "text";
  part["text"] = "a b";
  json input = json::object();
  input["content"] = json::array({part});
  j = post_ok("/v2/embed", {{"inputs", json::array({input})}});
  expect_row(j["embeddings"]["float"][0], model_.expected_row(model_.ids_of("a b")));
}

TEST(CohereQuantizationRanges, Int8AndUint8OfTheRequestedDimensions) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = small_limits();
  o.quantization_dims = 4;
  o.quantization_ranges = {-0.5F, -0.4F, -0.3F, -0.2F, 0.5F, 0.4F, 0.3F, 0.2F};
  RunningServer server(model, alloc, o);
  auto http = server.client();
  const std::string body =
      R"({"texts": ["a b"], "embedding_types": ["int8", "uint8"], "output_dimension": )";
  auto r = http->Post("/v2/embed", body + "4}", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  const std::vector<float> row = leading_values(model.expected_row(model.ids_of("a b")), 4);
  for (const auto& [type, precision] :
       {std::pair{"int8", Precision::kInt8}, std::pair{"uint8", Precision::kUint8}}) {
    std::vector<uint8_t> want;
    ASSERT_TRUE(
        quantize_embeddings(row.data(), 1, 4, precision, o.quantization_ranges, &want).ok());
    ASSERT_EQ(j["embeddings"][type][0].size(), 4u) << type;
    for (int d = 0; d < 4; ++d) {
      const int v = j["embeddings"][type][0][d];
      EXPECT_EQ(v, precision == Precision::kInt8 ? static_cast<int8_t>(want[d])
                                                 : static_cast<int>(want[d]))
          << type << " " << d;
    }
  }
  // The ranges hold 4 dimensions: the model's 8 (no output_dimension) are refused.
  r = http->Post("/v2/embed", R"({"texts": ["a"], "embedding_types": ["int8"]})",
                 "application/json");
  expect_cohere_error(r, 400, "output_dimension", "output_dimension = 4");
  r = http->Get("/info");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["quantization_ranges_dims"], 4);
}

TEST(CohereInputType, MapsToTheModelsPrompts) {
  FakeModel model;
  model::Prompts prompts;
  // As an e5 model's: "document" exists but is empty (every model has it).
  prompts.by_name = {{"query", "query: "}, {"document", ""}, {"passage", "passage: "}};
  prompts.default_name = "query";
  model.set_prompts(prompts);
  TrackingAllocator alloc;
  RunningServer server(model, alloc, small_limits());
  auto http = server.client();
  auto embed = [&](const std::string& extra) {
    auto r = http->Post("/v2/embed", R"({"texts": ["a b"])" + extra + "}", "application/json");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return json::parse(r->body)["embeddings"]["float"][0];
  };
  expect_row(embed(R"(, "input_type": "search_query")"),
             model.expected_row(model.ids_of("query: a b")));
  expect_row(embed(R"(, "input_type": "search_document")"),
             model.expected_row(model.ids_of("passage: a b")));
  // No prompt for it: none (not the default); no input_type: the default.
  expect_row(embed(R"(, "input_type": "clustering")"), model.expected_row(model.ids_of("a b")));
  expect_row(embed(""), model.expected_row(model.ids_of("query: a b")));
}

}  // namespace
}  // namespace tessera::server
