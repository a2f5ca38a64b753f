// TEI's other routes for an embedding model over real HTTP, against the fake
// model: POST / and /invocations, /similarity, /embed_all, /decode, the 424
// of /predict, /rerank and /embed_sparse, and GET / and /ping.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "route_checks.h"
#include "server_fixture.h"
#include "support/fake_model.h"

namespace tessera::server {
namespace {

using nlohmann::json;
using tessera::testing::FakeModel;
using testing::expect_error;
using testing::expect_row;
using testing::RunningServer;
using testing::small_limits;

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

std::string error_type(const httplib::Result& r) { return json::parse(r->body)["error_type"]; }

class TeiRoutes : public ::testing::Test {
 protected:
  httplib::Result post(const char* path, const std::string& body) {
    return http_->Post(path, body, "application/json");
  }
  // Safe from several threads: each call has its own client.
  json post_ok(const char* path, const std::string& body) {
    return testing::post_expecting_ok(*server_.client(), path, body);
  }

  FakeModel model_;
  TrackingAllocator alloc_;
  RunningServer server_{model_, alloc_, small_limits()};
  std::unique_ptr<httplib::Client> http_ = server_.client();
};

TEST_F(TeiRoutes, PostRootAndInvocationsAnswerAsEmbed) {
  const std::string body = R"({"inputs": ["a b", "c"]})";
  const json want = post_ok("/embed", body);
  ASSERT_EQ(want.size(), 2u);
  EXPECT_EQ(post_ok("/", body), want);
  EXPECT_EQ(post_ok("/invocations", body), want);
  expect_error(post("/", R"({"inputs": 3})"), 422, "inputs");
  expect_error(post("/", "{not json"), 400, "body");
  // A body of /similarity's shape is answered as /similarity.
  const std::string similarity = R"({"inputs": {"source_sentence": "a", "sentences": ["b"]}})";
  EXPECT_EQ(post_ok("/", similarity), post_ok("/similarity", similarity));
  expect_error(post("/invocations", R"({"inputs": {"sentences": ["b"]}})"), 422,
               "inputs.source_sentence");
}

TEST_F(TeiRoutes, PostEmbeddingsIsOpenAisRoute) {
  const std::string body = R"({"input": ["a b"], "encoding_format": "base64"})";
  EXPECT_EQ(post_ok("/embeddings", body), post_ok("/v1/embeddings", body));
  expect_error(post("/embeddings", R"({"input": 3})"), 400, "input");  // OpenAI's error shape
}

TEST_F(TeiRoutes, GetRootAndPingAreHealth) {
  for (const char* path : {"/", "/ping"}) {
    auto r = http_->Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(json::parse(r->body)["status"], "ok");
  }
}

TEST_F(TeiRoutes, SimilarityIsTheCosineOfEachSentenceWithTheSource) {
  const json got = post_ok("/similarity", R"({"inputs": {"source_sentence": "a b",
      "sentences": ["a b", "c d e", "f"]}})");
  ASSERT_EQ(got.size(), 3u) << got.dump();
  const std::vector<float> source = model_.expected_row(model_.ids_of("a b"));
  EXPECT_NEAR(got[0].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(got[1].get<double>(), cosine(source, model_.expected_row(model_.ids_of("c d e"))),
              1e-6);
  EXPECT_NEAR(got[2].get<double>(), cosine(source, model_.expected_row(model_.ids_of("f"))), 1e-6);
  // One job of n + 1 sequences: one model call for all four texts.
  EXPECT_EQ(model_.batch_sequences().back(), 4u);
}

TEST_F(TeiRoutes, SimilarityErrorsNameTheField) {
  auto r = post("/similarity", R"({"inputs": {"source_sentence": "a", "sentences": []}})");
  expect_error(r, 400, "inputs.sentences");
  EXPECT_EQ(error_type(r), "Empty");
  // Four sentences and the source are five texts; the limit is four.
  r = post("/similarity",
           R"({"inputs": {"source_sentence": "a", "sentences": ["b", "c", "d", "e"]}})");
  expect_error(r, 413, "inputs.sentences");
  EXPECT_EQ(error_type(r), "Validation");
  expect_error(post("/similarity", R"({"inputs": {"source_sentence": "a",
      "sentences": ["b", "c", 3]}})"),
               422, "inputs.sentences[2]");
  expect_error(post("/similarity", R"({"inputs": {"sentences": ["b"]}})"), 422,
               "inputs.source_sentence");
  expect_error(post("/similarity", R"({"inputs": ["a", "b"]})"), 422, "inputs");
  expect_error(post("/similarity", R"({"inputs": {"source_sentence": "a", "sentences": ["b"]},
      "parameters": {"truncate": "yes"}})"),
               422, "parameters.truncate");
  expect_error(post("/similarity", R"({"inputs": {"source_sentence": "a", "sentences": ["b"]},
      "parameters": {"truncation_direction": "Up"}})"),
               422, "parameters.truncation_direction");
  expect_error(post("/similarity", "{not json"), 400, "body");

  // Seventeen words are 19 tokens: over max_length 16 unless truncated.
  const std::string long_text = "w w w w w w w w w w w w w w w w w";
  const std::string body =
      R"({"inputs": {"source_sentence": "a", "sentences": ["b", ")" + long_text + R"("]}})";
  expect_error(post("/similarity", body), 422, "inputs.sentences[1]");
  const std::string truncated = R"({"inputs": {"source_sentence": "a", "sentences": ["b", ")" +
                                long_text + R"("]}, "parameters": {"truncate": true}})";
  EXPECT_EQ(post_ok("/similarity", truncated).size(), 2u);
}

// A request's failure is named down to the input when it failed in a batch
// merged with others (alone, it is answered as a whole: the batcher's rule).
TEST_F(TeiRoutes, ModelFailureInAMergedBatchNamesTheInput) {
  model_.fail_on_token(model_.ids_of("poison")[1], internal_error("injected"));
  const struct {
    const char* path;
    const char* body;
    const char* field;
    size_t sequences;  // of the failing request
  } cases[] = {
      {"/similarity", R"({"inputs": {"source_sentence": "a", "sentences": ["b", "poison"]}})",
       "inputs.sentences[1]", 3},
      {"/similarity", R"({"inputs": {"source_sentence": "poison", "sentences": ["b"]}})",
       "inputs.source_sentence", 2},
      {"/embed_all", R"({"inputs": ["a", "poison"]})", "inputs[1]", 2},
  };
  for (const auto& c : cases) {
    model_.close_gate();
    const int64_t calls = model_.calls();
    std::thread holder([&] { (void)post_ok("/embed", R"({"inputs": "x"})"); });
    model_.wait_for_calls(static_cast<size_t>(calls) + 1);
    std::optional<httplib::Result> failed;
    std::thread bad(
        [&] { failed.emplace(server_.client()->Post(c.path, c.body, "application/json")); });
    const char* other = std::string(c.path) == "/embed_all" ? "/embed_all" : "/embed";
    std::thread good([&] { (void)post_ok(other, R"({"inputs": "y"})"); });
    // Both queued (the other request's one sequence too): they share a batch.
    while (server_.server().batcher().queued() < c.sequences + 1) std::this_thread::yield();
    model_.open_gate();
    holder.join();
    bad.join();
    good.join();
    expect_error(*failed, 424, c.field);
  }
}

TEST_F(TeiRoutes, EmbedAllGivesEveryTokenStateAndTheirMeanIsTheEmbedding) {
  const json got = post_ok("/embed_all", R"({"inputs": ["a b", "c"]})");
  ASSERT_EQ(got.size(), 2u);
  const json rows = post_ok("/embed", R"({"inputs": ["a b", "c"]})");
  const int dim = model_.dim();
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<int32_t> ids = model_.ids_of(i == 0 ? "a b" : "c");
    const std::vector<float> states = model_.expected_token_states(ids);
    ASSERT_EQ(got[i].size(), ids.size()) << "[CLS] and [SEP] included";
    std::vector<float> mean(dim, 0.0f);
    for (size_t t = 0; t < ids.size(); ++t) {
      expect_row(got[i][t],
                 std::vector<float>(states.begin() + t * dim, states.begin() + (t + 1) * dim));
      for (int k = 0; k < dim; ++k) mean[k] += got[i][t][k].get<float>() / ids.size();
    }
    double norm = 0;
    for (float v : mean) norm += static_cast<double>(v) * v;
    for (int k = 0; k < dim; ++k) {
      EXPECT_NEAR(mean[k] / std::sqrt(norm), rows[i][k].get<double>(), 1e-5) << i << " " << k;
    }
  }
  EXPECT_EQ(post_ok("/embed_all", R"({"inputs": "a"})").size(), 1u);
}

TEST_F(TeiRoutes, EmbedAllErrorsNameTheField) {
  expect_error(post("/embed_all", R"({"inputs": ["a", 2]})"), 422, "inputs[1]");
  expect_error(post("/embed_all", R"({"inputs": ["a", "b", "c", "d", "e"]})"), 413, "inputs");
  expect_error(post("/embed_all", R"({"input": "a"})"), 422, "inputs");
  expect_error(post("/embed_all", R"({"inputs": "a", "truncate": 1})"), 422, "truncate");
  const std::string long_text = "w w w w w w w w w w w w w w w w w";
  expect_error(post("/embed_all", R"({"inputs": ["a", ")" + long_text + R"("]})"), 422,
               "inputs[1]");
  const json cut = post_ok("/embed_all", R"({"inputs": ")" + long_text + R"(", "truncate": true})");
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].size(), 16u) << "cut to max_length";
}

TEST_F(TeiRoutes, EmbedAndEmbedAllQueuedTogetherEachGetTheirOwnKind) {
  model_.close_gate();
  json pooled, states;
  std::thread first([&] { pooled = post_ok("/embed", R"({"inputs": ["a b", "c"]})"); });
  model_.wait_for_calls(1);  // the first batch holds the gate; the rest queue
  std::thread second([&] { states = post_ok("/embed_all", R"({"inputs": ["d e f", "g"]})"); });
  std::thread third([&] { (void)post_ok("/embed", R"({"inputs": "h"})"); });
  while (server_.server().batcher().queued() < 3) std::this_thread::yield();
  model_.open_gate();
  first.join();
  second.join();
  third.join();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].size(), 5u);
  EXPECT_EQ(states[1].size(), 3u);
  expect_row(pooled[1], model_.expected_row(model_.ids_of("c")));
}

TEST_F(TeiRoutes, DecodeGluesPiecesAndSkipsSpecialTokens) {
  EXPECT_EQ(post_ok("/decode", R"({"ids": [1, 100, 3, 4, 101, 2]})"), json({"w100s. w101"}));
  EXPECT_EQ(post_ok("/decode", R"({"ids": [1, 100, 3, 4, 2], "skip_special_tokens": false})"),
            json({"[CLS] w100s. [SEP]"}));
  EXPECT_EQ(post_ok("/decode", R"({"ids": [[100], [101, 102], []]})"),
            json({"w100", "w101 w102", ""}));
  // No ids is not an error in TEI: its `InputIds` is a serde untagged enum
  // tried Single(Vec<u32>) first, so [] is one empty list and [[]] a batch of
  // one; both decode to "". Its "`ids` cannot be empty" (400) is for an empty
  // Batch, which [] never becomes.
  EXPECT_EQ(post_ok("/decode", R"({"ids": []})"), json({""}));
  EXPECT_EQ(post_ok("/decode", R"({"ids": [[]]})"), json({""}));
}

TEST_F(TeiRoutes, DecodeErrorsNameTheId) {
  auto r = post("/decode", R"({"ids": [[100], [101, 102, 5]]})");
  expect_error(r, 422, "ids[1][2]");
  EXPECT_EQ(error_type(r), "Tokenizer");
  EXPECT_NE(r->body.find("token id 5"), std::string::npos) << r->body;
  r = post("/decode", R"({"ids": [100, 99999999]})");
  expect_error(r, 422, "ids[1]");
  EXPECT_EQ(error_type(r), "Tokenizer");
  r = post("/decode", R"({"ids": [100, -1]})");
  expect_error(r, 422, "ids[1]");
  EXPECT_EQ(error_type(r), "Validation");
  expect_error(post("/decode", R"({"ids": [100, 4294967296]})"), 422, "ids[1]");
  expect_error(post("/decode", R"({"ids": [100, 1.5]})"), 422, "ids[1]");
  expect_error(post("/decode", R"({"ids": [[100], 101]})"), 422, "ids[1]");
  expect_error(post("/decode", R"({"ids": [[100], ["a"]]})"), 422, "ids[1][0]");
  expect_error(post("/decode", R"({"ids": [[1], [2], [3], [4], [5]]})"), 413, "ids");
  expect_error(post("/decode", R"({"ids": "100"})"), 422, "ids");
  expect_error(post("/decode", R"({"ids": [1], "skip_special_tokens": "no"})"), 422,
               "skip_special_tokens");
  expect_error(post("/decode", "[1, 2]"), 422, "body");
}

TEST_F(TeiRoutes, OtherModelKindsRoutesAnswerTeisBackendError) {
  for (const char* path : {"/predict", "/rerank", "/embed_sparse"}) {
    auto r = post(path, R"({"inputs": "a", "query": "q", "texts": ["t"]})");
    expect_error(r, 424, "");
    EXPECT_EQ(error_type(r), "Backend") << path;
    EXPECT_NE(r->body.find("is an embedding model"), std::string::npos) << r->body;
  }
}

TEST_F(TeiRoutes, UnknownRouteListsEveryRoute) {
  auto r = post("/nope", "{}");
  expect_error(r, 404, "");
  for (const char* route : {"POST /similarity", "POST /embed_all", "POST /decode", "GET /ping"}) {
    EXPECT_NE(r->body.find(route), std::string::npos) << route << " in " << r->body;
  }
}

TEST(TeiRoutesAuth, HealthAliasesArePublicButPostRootIsNot) {
  FakeModel model;
  TrackingAllocator alloc;
  ServerOptions o = small_limits();
  o.api_key = "k3y";
  RunningServer server(model, alloc, o);
  auto http = server.client();
  for (const char* path : {"/", "/ping"}) {
    auto r = http->Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
  }
  expect_error(http->Post("/", R"({"inputs": "a"})", "application/json"), 401, "Authorization");
  expect_error(http->Post("/similarity", "{}", "application/json"), 401, "Authorization");
}

}  // namespace
}  // namespace tessera::server
