// TEI's request options over real HTTP, against the fake model: truncation
// direction, prompt_name (config_sentence_transformers.json's prompts,
// default_prompt_name) on /embed, /embed_all, /similarity, /tokenize and
// /embed_documents, and dimensions (TEI 1.9) on /embed and /embed_documents.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/embedding_output.h"
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

// "w0 w1 ... w{n-1}"
std::string numbered_words(int from, int to) {
  std::string words;
  for (int i = from; i < to; ++i) words += (words.empty() ? "w" : " w") + std::to_string(i);
  return words;
}

// The first `dims` values of `row`, re-normalised when asked (the server's
// own function, pipeline::shorten_rows, applied to the expected row).
std::vector<float> first_values(std::vector<float> row, int dims, bool renormalize) {
  pipeline::shorten_rows(row.data(), 1, static_cast<int>(row.size()), dims, renormalize);
  row.resize(static_cast<size_t>(dims));
  return row;
}

model::Prompts query_and_passage(const std::string& default_name = "") {
  model::Prompts p;
  p.by_name = {{"query", "query: "}, {"passage", "passage: "}};
  p.default_name = default_name;
  return p;
}

class EmbedOptions : public ::testing::Test {
 protected:
  EmbedOptions() { model_.set_prompts(query_and_passage()); }
  json post_ok(const char* path, const json& body) {
    return testing::post_expecting_ok(*http_, path, body.dump());
  }
  httplib::Result post(const char* path, const json& body) {
    return http_->Post(path, body.dump(), "application/json");
  }

  FakeModel model_;
  TrackingAllocator alloc_;
  RunningServer server_{model_, alloc_, small_limits()};
  std::unique_ptr<httplib::Client> http_ = server_.client();
};

TEST_F(EmbedOptions, TruncationDirectionLeftKeepsTheEnd) {
  // 20 words, max_length 16: 14 words fit between [CLS] and [SEP].
  const std::string words = numbered_words(0, 20);
  const json right = post_ok("/embed", {{"inputs", words}, {"truncate", true}});
  expect_row(right[0], model_.expected_row(model_.ids_of(numbered_words(0, 14))));
  for (const char* dir : {"Left", "left"}) {
    const json left =
        post_ok("/embed", {{"inputs", words}, {"truncate", true}, {"truncation_direction", dir}});
    expect_row(left[0], model_.expected_row(model_.ids_of(numbered_words(6, 20))));
  }
  // /embed_all: the states of the kept tokens, [CLS] and [SEP] included.
  const json states = post_ok(
      "/embed_all", {{"inputs", words}, {"truncate", true}, {"truncation_direction", "Left"}});
  const std::vector<float> want =
      model_.expected_token_states(model_.ids_of(numbered_words(6, 20)));
  ASSERT_EQ(states[0].size(), 16u);
  expect_row(states[0][1], std::vector<float>(want.begin() + 8, want.begin() + 16));
  // Without truncate, Left changes nothing: too long is refused.
  expect_error(post("/embed", {{"inputs", words}, {"truncation_direction", "Left"}}), 422,
               "inputs");
  expect_error(post("/embed", {{"inputs", "a"}, {"truncation_direction", "Middle"}}), 422,
               "truncation_direction");
}

TEST_F(EmbedOptions, PromptNameIsPrependedToEveryInput) {
  const json rows = post_ok("/embed", {{"inputs", {"a b", "c"}}, {"prompt_name", "query"}});
  expect_row(rows[0], model_.expected_row(model_.ids_of("query: a b")));
  expect_row(rows[1], model_.expected_row(model_.ids_of("query: c")));
  const json passage = post_ok("/", {{"inputs", "a b"}, {"prompt_name", "passage"}});
  expect_row(passage[0], model_.expected_row(model_.ids_of("passage: a b")));
  // No prompt_name and no default_prompt_name: no prompt.
  expect_row(post_ok("/embed", {{"inputs", "a b"}})[0], model_.expected_row(model_.ids_of("a b")));

  auto r = post("/embed", {{"inputs", "a"}, {"prompt_name", "document"}});
  expect_error(r, 422, "prompt_name");
  EXPECT_NE(r->body.find("passage, query"), std::string::npos) << r->body;
  // The prompt's tokens count toward max_length: 14 words fit alone, not after "query:".
  const std::string fourteen = numbered_words(0, 14);
  post_ok("/embed", {{"inputs", fourteen}});
  r = post("/embed", {{"inputs", fourteen}, {"prompt_name", "query"}});
  expect_error(r, 422, "inputs");
  EXPECT_NE(r->body.find("the prompt included"), std::string::npos) << r->body;
  // Cut from the start (Left), the prompt goes first.
  const json left = post_ok("/embed", {{"inputs", fourteen},
                                       {"prompt_name", "query"},
                                       {"truncate", true},
                                       {"truncation_direction", "Left"}});
  expect_row(left[0], model_.expected_row(model_.ids_of(numbered_words(0, 14))));
}

TEST_F(EmbedOptions, PromptNameOnTheOtherRoutes) {
  // /similarity: parameters.prompt_name for the source and the sentences.
  const json sims =
      post_ok("/similarity", {{"inputs", {{"source_sentence", "a b"}, {"sentences", {"a c", "d"}}}},
                              {"parameters", {{"prompt_name", "query"}}}});
  const json rows = post_ok("/embed", {{"inputs", {"a b", "a c", "d"}}, {"prompt_name", "query"}});
  ASSERT_EQ(sims.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    double dot = 0;
    for (size_t k = 0; k < 8; ++k) dot += rows[0][k].get<double>() * rows[i + 1][k].get<double>();
    EXPECT_NEAR(sims[i].get<double>(), dot, 1e-5) << i;
  }
  expect_error(post("/similarity",
                    {{"inputs", {{"source_sentence", "a"}, {"sentences", json::array({"b"})}}},
                     {"parameters", {{"prompt_name", "nope"}}}}),
               422, "parameters.prompt_name");
  // /embed_all: the prompt's token states come first.
  const json states = post_ok("/embed_all", {{"inputs", "a"}, {"prompt_name", "query"}});
  EXPECT_EQ(states[0].size(), 4u);  // [CLS] query: a [SEP]
  // /tokenize: as TEI, offsets are bytes of prompt + input.
  const json tokens = post_ok("/tokenize", {{"inputs", "ab"}, {"prompt_name", "query"}});
  ASSERT_EQ(tokens[0].size(), 4u);
  EXPECT_EQ(tokens[0][1], json({{"id", model_.ids_of("query:")[1]},
                                {"text", "query:"},
                                {"special", false},
                                {"start", 0},
                                {"stop", 6}}));
  EXPECT_EQ(tokens[0][2]["text"], "ab");
  EXPECT_EQ(tokens[0][2]["start"], 7);
  EXPECT_EQ(tokens[0][2]["stop"], 9);
  expect_error(post("/tokenize", {{"inputs", "a"}, {"prompt_name", "x"}}), 422, "prompt_name");
  // /embed_documents: the prompt in every window; offsets stay the document's.
  const json docs =
      post_ok("/embed_documents", {{"documents", json::array({"a b"})}, {"prompt_name", "query"}});
  ASSERT_EQ(docs.size(), 1u);
  expect_row(docs[0]["embedding"], model_.expected_row(model_.ids_of("query: a b")));
  EXPECT_EQ(docs[0]["offsets"], json({0, 3}));
  expect_error(post("/embed_documents", {{"documents", json::array({"a"})}, {"prompt_name", "x"}}),
               422, "prompt_name");
}

TEST(EmbedDefaultPrompt, AppliesWhenNoPromptIsNamed) {
  FakeModel model;
  model.set_prompts(query_and_passage("query"));
  TrackingAllocator alloc;
  RunningServer server(model, alloc, small_limits());
  auto http = server.client();
  auto r = http->Post("/embed", R"({"inputs": "a b"})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_row(json::parse(r->body)[0], model.expected_row(model.ids_of("query: a b")));
  r = http->Post("/embed", R"({"inputs": "a b", "prompt_name": "passage"})", "application/json");
  ASSERT_TRUE(r);
  expect_row(json::parse(r->body)[0], model.expected_row(model.ids_of("passage: a b")));
  // The OpenAI route has no prompt_name: the default applies there too.
  r = http->Post("/v1/embeddings", R"({"input": "a b"})", "application/json");
  ASSERT_TRUE(r);
  expect_row(json::parse(r->body)["data"][0]["embedding"],
             model.expected_row(model.ids_of("query: a b")));
  r = http->Get("/info");
  ASSERT_TRUE(r);
  const json info = json::parse(r->body);
  EXPECT_EQ(info["prompts"], json({{"passage", "passage: "}, {"query", "query: "}}));
  EXPECT_EQ(info["default_prompt_name"], "query");
}

TEST_F(EmbedOptions, DimensionsKeepTheFirstValuesRenormalised) {
  const std::vector<float> full = model_.expected_row(model_.ids_of("a b"));
  const json rows = post_ok("/embed", {{"inputs", json::array({"a b"})}, {"dimensions", 3}});
  expect_row(rows[0], first_values(full, 3, /*renormalize=*/true));
  expect_row(post_ok("/embed", {{"inputs", "a b"}, {"dimensions", 8}})[0], full);
  for (const json& bad : {json(0), json(-1), json(9), json(1000000000000LL)}) {
    auto r = post("/embed", {{"inputs", "a"}, {"dimensions", bad}});
    expect_error(r, 422, "dimensions");
    EXPECT_NE(r->body.find("[1, 8]"), std::string::npos) << r->body;
  }
  expect_error(post("/embed", {{"inputs", "a"}, {"dimensions", 2.5}}), 422, "dimensions");
  expect_error(post("/embed", {{"inputs", "a"}, {"dimensions", "4"}}), 422, "dimensions");
  // /embed_documents: each chunk's row, and a document's mean of those rows.
  const json docs =
      post_ok("/embed_documents", {{"documents", json::array({"a b"})}, {"dimensions", 3}});
  expect_row(docs[0]["embedding"], first_values(full, 3, true));
  const json mean =
      post_ok("/embed_documents",
              {{"documents", json::array({"a b"})}, {"dimensions", 3}, {"doc_embedding", true}});
  EXPECT_EQ(mean[0]["embedding"].size(), 3u);
  expect_error(post("/embed_documents", {{"documents", json::array({"a"})}, {"dimensions", 0}}),
               422, "dimensions");
}

TEST(EmbedDimensionsUnnormalized, NormalizeDecidesTheRenormalisation) {
  FakeModel model(/*dim=*/8, /*max_length=*/16, /*normalizes=*/false);
  TrackingAllocator alloc;
  RunningServer server(model, alloc, small_limits());
  auto http = server.client();
  const std::vector<float> raw = model.expected_row(model.ids_of("a b c"));
  auto r = http->Post("/embed", R"({"inputs": "a b c", "dimensions": 4, "normalize": false})",
                      "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_row(json::parse(r->body)[0], first_values(raw, 4, /*renormalize=*/false));
  r = http->Post("/embed", R"({"inputs": "a b c", "dimensions": 4})", "application/json");
  ASSERT_TRUE(r);
  const json unit = json::parse(r->body)[0];
  expect_row(unit, first_values(raw, 4, /*renormalize=*/true));
  double norm = 0;
  for (const auto& v : unit) norm += v.get<double>() * v.get<double>();
  EXPECT_NEAR(norm, 1.0, 1e-6);
}

}  // namespace
}  // namespace tessera::server
