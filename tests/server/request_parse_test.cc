// Body parsing and validation of /embed, /tokenize, /embed_all,
// /similarity, /decode and /embed_documents (OpenAI's and Cohere's bodies:
// request_parse_api_test.cc).
#include "server/request_parse.h"

#include <gtest/gtest.h>

namespace tessera::server {
namespace {

const ParseLimits kLimits{.max_client_batch_size = 3, .auto_truncate = false};

bool mentions(const ApiError& e, const std::string& text) {
  return e.message.find(text) != std::string::npos;
}

TEST(ParseEmbed, StringOrListAndDefaults) {
  EmbedRequest one;
  ASSERT_TRUE(parse_embed_request(R"({"inputs": "hello"})", kLimits, &one).ok());
  EXPECT_EQ(one.inputs, (std::vector<std::string>{"hello"}));
  EXPECT_TRUE(one.normalize);
  EXPECT_FALSE(one.text.truncate);
  EXPECT_FALSE(one.text.truncate_left);
  EXPECT_FALSE(one.text.prompt_name.has_value());
  EXPECT_FALSE(one.dimensions.has_value());

  EmbedRequest many;
  ASSERT_TRUE(parse_embed_request(
                  R"({"inputs": ["a", "", "ü 中"], "normalize": false, "truncate": true,
                      "truncation_direction": "Right", "unknown": 1})",
                  kLimits, &many)
                  .ok());
  EXPECT_EQ(many.inputs, (std::vector<std::string>{"a", "", "ü 中"}));
  EXPECT_FALSE(many.normalize);
  EXPECT_TRUE(many.text.truncate);
}

TEST(ParseEmbed, TruncationDirectionPromptNameAndDimensions) {
  EmbedRequest req;
  ASSERT_TRUE(parse_embed_request(R"({"inputs": "a", "truncate": true, "truncation_direction":
                                      "Left", "prompt_name": "query", "dimensions": 4})",
                                  kLimits, &req)
                  .ok());
  EXPECT_TRUE(req.text.truncate_left);
  EXPECT_EQ(req.text.prompt_name, "query");
  EXPECT_EQ(req.dimensions, 4);
  // TEI's aliases; null is absent.
  for (const char* dir : {"left", "Right", "right"}) {
    EmbedRequest r;
    const std::string body =
        std::string(R"({"inputs": "a", "prompt_name": null, "truncation_direction": ")") + dir +
        "\"}";
    ASSERT_TRUE(parse_embed_request(body, kLimits, &r).ok()) << dir;
    EXPECT_EQ(r.text.truncate_left, dir[0] == 'l') << dir;
    EXPECT_FALSE(r.text.prompt_name.has_value());
  }
  // Range checks (1..dim) are the route's: the parser keeps any integer.
  ASSERT_TRUE(parse_embed_request(R"({"inputs": "a", "dimensions": -5})", kLimits, &req).ok());
  EXPECT_EQ(req.dimensions, -5);
}

TEST(ParseEmbed, AutoTruncateIsTheDefaultOfTruncate) {
  EmbedRequest req;
  ASSERT_TRUE(parse_embed_request(R"({"inputs": "x"})", {3, true}, &req).ok());
  EXPECT_TRUE(req.text.truncate);
  ASSERT_TRUE(parse_embed_request(R"({"inputs": "x", "truncate": false})", {3, true}, &req).ok());
  EXPECT_FALSE(req.text.truncate);
}

TEST(ParseEmbed, ErrorsNameTheFieldAndTheValue) {
  struct Case {
    const char* body;
    int status;
    const char* field;
    const char* text;
  };
  const Case cases[] = {
      {R"({"inputs": )", 400, "body", "not valid JSON"},
      {R"(["a"])", 422, "body", "JSON object, got array"},
      {R"({})", 422, "inputs", "inputs is missing"},
      {R"({"inputs": null})", 422, "inputs", "inputs is missing"},
      {R"({"inputs": 7})", 422, "inputs", "got number 7"},
      {R"({"inputs": []})", 422, "inputs", "empty list"},
      {R"({"inputs": ["a", 3]})", 422, "inputs[1]", "inputs[1] must be a string, got number 3"},
      {R"({"inputs": ["a", "b", "c", "d"]})", 413, "inputs", "has 4 texts"},
      {R"({"inputs": "a", "normalize": "yes"})", 422, "normalize", "got string \"yes\""},
      {R"({"inputs": "a", "truncate": 1})", 422, "truncate", "true or false"},
      {R"({"inputs": "a", "truncation_direction": "Up"})", 422, "truncation_direction",
       "\"Left\" or \"Right\", got string \"Up\""},
      {R"({"inputs": "a", "truncation_direction": 1})", 422, "truncation_direction", "got number"},
      {R"({"inputs": "a", "prompt_name": 3})", 422, "prompt_name", "must be a string"},
      {R"({"inputs": "a", "dimensions": 1.5})", 422, "dimensions", "must be an integer"},
      {R"({"inputs": "a", "dimensions": "8"})", 422, "dimensions", "got string"},
      {R"({"inputs": "a", "dimensions": 1e30})", 422, "dimensions", "must be an integer"},
      {R"({"inputs": "a", "dimensions": 18446744073709551615})", 422, "dimensions",
       "must be an integer"},
  };
  for (const Case& c : cases) {
    EmbedRequest req;
    const ApiError e = parse_embed_request(c.body, kLimits, &req);
    EXPECT_EQ(e.status, c.status) << c.body;
    EXPECT_EQ(e.field, c.field) << c.body;
    EXPECT_TRUE(mentions(e, c.text)) << c.body << " -> " << e.message;
  }
}

TEST(ParseEmbed, TooLargeNamesTheLimitFlag) {
  EmbedRequest req;
  const ApiError e = parse_embed_request(R"({"inputs": ["a","b","c","d"]})", kLimits, &req);
  EXPECT_TRUE(mentions(e, "at most 3")) << e.message;
  EXPECT_TRUE(mentions(e, "--max-client-batch-size")) << e.message;
}

TEST(ParseEmbed, InvalidUtf8IsRefusedAsBadJson) {
  EmbedRequest req;
  const ApiError e = parse_embed_request("{\"inputs\": \"\xff\xfe\"}", kLimits, &req);
  EXPECT_EQ(e.status, 400);
  EXPECT_TRUE(mentions(e, "UTF-8")) << e.message;
}

TEST(ParseEmbed, LongValuesAreCutInMessagesWithoutBreakingUtf8) {
  EmbedRequest req;
  const std::string body = R"({"inputs": "a", "normalize": ")" + std::string(100, 'x') +
                           std::string("é中") + R"("})";
  const ApiError e = parse_embed_request(body, kLimits, &req);
  EXPECT_EQ(e.status, 422);
  EXPECT_TRUE(mentions(e, "...")) << e.message;
  EXPECT_LT(e.message.size(), 150u);
}

TEST(ParseTokenize, Fields) {
  TokenizeRequest req;
  ASSERT_TRUE(
      parse_tokenize_request(R"({"inputs": "a b", "add_special_tokens": false})", kLimits, &req)
          .ok());
  EXPECT_FALSE(req.add_special_tokens);
  EXPECT_FALSE(req.prompt_name.has_value());
  ASSERT_TRUE(
      parse_tokenize_request(R"({"inputs": "a", "prompt_name": "query"})", kLimits, &req).ok());
  EXPECT_EQ(req.prompt_name, "query");
  EXPECT_EQ(parse_tokenize_request(R"({"inputs": "a", "prompt_name": []})", kLimits, &req).field,
            "prompt_name");
  const ApiError e =
      parse_tokenize_request(R"({"inputs": "a", "add_special_tokens": 0})", kLimits, &req);
  EXPECT_EQ(e.status, 422);
  EXPECT_EQ(e.field, "add_special_tokens");
}

TEST(ParseSimilarity, SourceSentencesAndParameters) {
  SimilarityRequest req;
  ASSERT_TRUE(parse_similarity_request(
                  R"({"inputs": {"source_sentence": "s", "sentences": ["a", "b"]},
                      "parameters": null})",
                  {3, true}, &req)
                  .ok());
  EXPECT_EQ(req.source, "s");
  EXPECT_EQ(req.sentences, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(req.text.truncate) << "auto_truncate is the default without parameters";
  SimilarityRequest cut;
  ASSERT_TRUE(parse_similarity_request(
                  R"({"inputs": {"source_sentence": "s", "sentences": ["a"]},
                      "parameters": {"truncate": false, "truncation_direction": "right"}})",
                  {3, true}, &cut)
                  .ok());
  EXPECT_FALSE(cut.text.truncate);
  // Three sentences and the source are four texts: over a limit of 3.
  SimilarityRequest over;
  const ApiError e = parse_similarity_request(
      R"({"inputs": {"source_sentence": "s", "sentences": ["a", "b", "c"]}})", kLimits, &over);
  EXPECT_EQ(e.status, 413);
  EXPECT_TRUE(mentions(e, "4 texts")) << e.message;
  SimilarityRequest prompt;
  ASSERT_TRUE(parse_similarity_request(
                  R"({"inputs": {"source_sentence": "s", "sentences": ["a"]},
                      "parameters": {"prompt_name": "query", "truncation_direction": "Left"}})",
                  kLimits, &prompt)
                  .ok());
  EXPECT_EQ(prompt.text.prompt_name, "query");
  EXPECT_TRUE(prompt.text.truncate_left);
  EXPECT_EQ(parse_similarity_request(
                R"({"inputs": {"source_sentence": "s", "sentences": ["a"]},
                    "parameters": {"prompt_name": 1}})",
                kLimits, &prompt)
                .field,
            "parameters.prompt_name");
}

TEST(ParseDecode, OneListOrABatchOfIdsUpToU32Max) {
  DecodeRequest one;
  ASSERT_TRUE(parse_decode_request(R"({"ids": [0, 4294967295]})", kLimits, &one).ok());
  EXPECT_FALSE(one.batch);
  EXPECT_TRUE(one.skip_special_tokens);
  ASSERT_EQ(one.ids.size(), 1u);
  EXPECT_EQ(one.ids[0], (std::vector<int64_t>{0, 4294967295LL}));
  DecodeRequest many;
  ASSERT_TRUE(
      parse_decode_request(R"({"ids": [[1], []], "skip_special_tokens": false})", kLimits, &many)
          .ok());
  EXPECT_TRUE(many.batch);
  EXPECT_FALSE(many.skip_special_tokens);
  EXPECT_EQ(many.ids, (std::vector<std::vector<int64_t>>{{1}, {}}));
  DecodeRequest bad;
  EXPECT_EQ(parse_decode_request(R"({"ids": [[1], [2, true]]})", kLimits, &bad).field, "ids[1][1]");
  EXPECT_EQ(parse_decode_request(R"({"ids": [1e3]})", kLimits, &bad).field, "ids[0]");
  EXPECT_EQ(parse_decode_request(R"({"ids": null})", kLimits, &bad).field, "ids");
}

TEST(ParseEmbedAll, InputsAndTruncate) {
  EmbedAllRequest req;
  ASSERT_TRUE(
      parse_embed_all_request(R"({"inputs": ["a", "b"], "truncate": true})", kLimits, &req).ok());
  EXPECT_EQ(req.inputs.size(), 2u);
  EXPECT_TRUE(req.text.truncate);
  ASSERT_TRUE(
      parse_embed_all_request(
          R"({"inputs": "a", "truncation_direction": "Left", "prompt_name": "q"})", kLimits, &req)
          .ok());
  EXPECT_TRUE(req.text.truncate_left);
  EXPECT_EQ(req.text.prompt_name, "q");
}

TEST(ParseDocuments, PromptNameAndDimensions) {
  DocumentsRequest req;
  ASSERT_TRUE(
      parse_documents_request(R"({"documents": ["a"], "prompt_name": "document", "dimensions": 4})",
                              kLimits, &req)
          .ok());
  EXPECT_EQ(req.prompt_name, "document");
  EXPECT_EQ(req.dimensions, 4);
  EXPECT_EQ(
      parse_documents_request(R"({"documents": ["a"], "dimensions": 2.5})", kLimits, &req).field,
      "dimensions");
}

}  // namespace
}  // namespace tessera::server
