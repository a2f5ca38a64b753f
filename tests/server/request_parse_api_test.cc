// Body parsing and validation of the vendor-API routes: OpenAI's POST
// /v1/embeddings and Cohere's POST /v2/embed.
#include <gtest/gtest.h>

#include <string>

#include "server/request_parse_openai.h"

namespace tessera::server {
namespace {

const ParseLimits kApiLimits{.max_client_batch_size = 3, .auto_truncate = false};

bool says(const ApiError& e, const std::string& text) {
  return e.message.find(text) != std::string::npos;
}

struct ApiCase {
  std::string body;
  int status;
  std::string field;
  std::string text;  // in the message
};

TEST(ParseOpenAI, FieldsAndEncodingFormat) {
  OpenAIRequest req;
  ASSERT_TRUE(parse_openai_request(
                  R"({"input": ["a", "b"], "model": "m", "encoding_format": "base64",
                      "dimensions": 384, "user": "u"})",
                  kApiLimits, &req)
                  .ok());
  EXPECT_FALSE(req.input.by_ids);
  EXPECT_EQ(req.input.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(req.model, "m");
  EXPECT_TRUE(req.base64);
  EXPECT_EQ(req.dimensions, 384);

  OpenAIRequest plain;
  ASSERT_TRUE(parse_openai_request(R"({"input": "a", "model": null})", kApiLimits, &plain).ok());
  EXPECT_FALSE(plain.base64);
  EXPECT_FALSE(plain.dimensions.has_value());
  EXPECT_FALSE(plain.model.has_value());
}

TEST(ParseOpenAI, TokenIdInputs) {
  OpenAIRequest one;
  ASSERT_TRUE(parse_openai_request(R"({"input": [101, 7, 2147483647]})", kApiLimits, &one).ok());
  EXPECT_TRUE(one.input.by_ids);
  EXPECT_TRUE(one.input.one_id_list);
  EXPECT_EQ(one.input.token_ids, (std::vector<std::vector<int32_t>>{{101, 7, 2147483647}}));
  OpenAIRequest many;
  ASSERT_TRUE(parse_openai_request(R"({"input": [[1, 2], [3]]})", kApiLimits, &many).ok());
  EXPECT_TRUE(many.input.by_ids);
  EXPECT_FALSE(many.input.one_id_list);
  EXPECT_EQ(many.input.size(), 2u);
  EXPECT_EQ(many.input.token_ids[1], (std::vector<int32_t>{3}));
}

TEST(ParseOpenAI, UpTo2048InputsWhateverTheTeiLimit) {
  std::string texts = R"({"input": [)";
  for (size_t i = 0; i < kOpenAIMaxInputs; ++i) texts += i ? ",\"a\"" : "\"a\"";
  OpenAIRequest req;
  ASSERT_TRUE(parse_openai_request(texts + "]}", kApiLimits, &req).ok());
  EXPECT_EQ(req.input.size(), kOpenAIMaxInputs);
  OpenAIRequest over;
  const ApiError e = parse_openai_request(texts + ",\"a\"]}", kApiLimits, &over);
  EXPECT_EQ(e.status, 413);
  EXPECT_EQ(e.field, "input");
  EXPECT_TRUE(says(e, "2048")) << e.message;
  std::string lists = R"({"input": [)";
  for (size_t i = 0; i <= kOpenAIMaxInputs; ++i) lists += i ? ",[1]" : "[1]";
  EXPECT_EQ(parse_openai_request(lists + "]}", kApiLimits, &over).status, 413);
}

TEST(ParseOpenAI, ErrorsNameTheFieldAndTheValue) {
  const ApiCase cases[] = {
      {R"({"inputs": "a"})", 422, "input", "missing"},
      {R"({"input": "a", "model": 3})", 422, "model", "must be a string"},
      {R"({"input": "a", "encoding_format": "int8"})", 422, "encoding_format", "\"int8\""},
      {R"({"input": "a", "dimensions": "384"})", 422, "dimensions", "must be an integer"},
      {R"({"input": "a", "dimensions": 3.5})", 422, "dimensions", "3.5"},
      {R"({"input": "a", "user": 5})", 422, "user", "must be a string"},
      {R"({"input": []})", 422, "input", "empty list"},
      {R"({"input": [1, "a"]})", 422, "input[1]", "must be a token id"},
      {R"({"input": [1, -1]})", 422, "input[1]", "got number -1"},
      {R"({"input": [1, 2147483648]})", 422, "input[1]", "[0, 2^31)"},
      {R"({"input": [1, 1.5]})", 422, "input[1]", "1.5"},
      {R"({"input": [1, 18446744073709551615]})", 422, "input[1]", "must be a token id"},
      {R"({"input": [[101, 102], [3, true]]})", 422, "input[1][1]", "got boolean"},
      {R"({"input": [[101], "a"]})", 422, "input[1]", "list of token lists"},
      {R"({"input": [[101], []]})", 422, "input[1]", "non-empty list"},
      {R"({"input": ["a", [1]]})", 422, "input[1]", "must be a string"},
  };
  for (const ApiCase& c : cases) {
    OpenAIRequest req;
    const ApiError e = parse_openai_request(c.body, kApiLimits, &req);
    EXPECT_EQ(e.status, c.status) << c.body;
    EXPECT_EQ(e.field, c.field) << c.body;
    EXPECT_TRUE(says(e, c.text)) << c.body << " -> " << e.message;
  }
}

TEST(ParseCohere, DefaultsAreCoheres) {
  CohereEmbedRequest req;
  ASSERT_TRUE(parse_cohere_embed_request(R"({"model": "m", "texts": ["a", "b"]})", &req).ok());
  EXPECT_EQ(req.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(req.field, "texts");
  EXPECT_EQ(req.model, "m");
  EXPECT_EQ(req.types, (std::vector<CohereType>{CohereType::kFloat}));
  EXPECT_TRUE(req.truncate);  // "END"
  EXPECT_FALSE(req.truncate_left);
  EXPECT_FALSE(req.input_type.has_value());
  EXPECT_FALSE(req.output_dimension.has_value());
}

TEST(ParseCohere, EveryField) {
  CohereEmbedRequest req;
  ASSERT_TRUE(parse_cohere_embed_request(
                  R"({"model": "m", "inputs": [{"content": [{"type": "text", "text": "x"}]}],
                      "input_type": "search_query", "truncate": "START", "output_dimension": 4,
                      "max_tokens": 10, "priority": 3,
                      "embedding_types": ["ubinary", "float", "int8", "float", "base64"]})",
                  &req)
                  .ok());
  EXPECT_EQ(req.texts, (std::vector<std::string>{"x"}));
  EXPECT_EQ(req.field, "inputs");
  EXPECT_EQ(req.input_type, "search_query");
  EXPECT_TRUE(req.truncate);
  EXPECT_TRUE(req.truncate_left);
  EXPECT_EQ(req.output_dimension, 4);
  EXPECT_EQ(req.max_tokens, 10);
  // Each type once, in the asked order, with its index in the request.
  EXPECT_EQ(req.types, (std::vector<CohereType>{CohereType::kUbinary, CohereType::kFloat,
                                                CohereType::kInt8, CohereType::kBase64}));
  EXPECT_EQ(req.type_index, (std::vector<size_t>{0, 1, 2, 4}));
  CohereEmbedRequest none;
  ASSERT_TRUE(parse_cohere_embed_request(R"({"texts": ["a"], "truncate": "NONE"})", &none).ok());
  EXPECT_FALSE(none.truncate);
}

TEST(ParseCohere, ErrorsNameTheFieldAndTheValue) {
  std::string many = R"({"texts": [)";
  for (size_t i = 0; i <= kCohereMaxTexts; ++i) many += i ? ",\"a\"" : "\"a\"";
  many += "]}";
  const ApiCase cases[] = {
      {R"({})", 422, "texts", "got neither"},
      {R"({"texts": ["a"], "inputs": []})", 422, "inputs", "not both"},
      {R"({"texts": ["a", 1]})", 422, "texts[1]", "must be a string"},
      {many, 413, "texts", "96"},
      {R"({"images": ["data:image/png;base64,AA=="]})", 422, "images", "text only"},
      {R"({"inputs": [{"content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})", 422,
       "inputs[0].content[0]", "text only"},
      {R"({"inputs": [{"content": []}]})", 422, "inputs[0]", "one text part"},
      {R"({"inputs": "a"})", 422, "inputs", "non-empty list"},
      {R"({"texts": ["a"], "input_type": "image"})", 422, "input_type", "\"image\""},
      {R"({"texts": ["a"], "input_type": 3})", 422, "input_type", "must be a string"},
      {R"({"texts": ["a"], "embedding_types": ["float", "int4"]})", 422, "embedding_types[1]",
       "\"int4\""},
      {R"({"texts": ["a"], "embedding_types": []})", 422, "embedding_types", "non-empty"},
      {R"({"texts": ["a"], "embedding_types": "float"})", 422, "embedding_types", "list"},
      {R"({"texts": ["a"], "truncate": "MIDDLE"})", 422, "truncate", "\"MIDDLE\""},
      {R"({"texts": ["a"], "output_dimension": 1.5})", 422, "output_dimension", "integer"},
      {R"({"texts": ["a"], "max_tokens": 0})", 422, "max_tokens", "at least 1"},
      {R"({"texts": ["a"], "model": ["m"]})", 422, "model", "must be a string"},
      {R"({"texts": ["a"], "priority": "high"})", 422, "priority", "integer"},
  };
  for (const ApiCase& c : cases) {
    CohereEmbedRequest req;
    const ApiError e = parse_cohere_embed_request(c.body, &req);
    EXPECT_EQ(e.status, c.status) << c.body;
    EXPECT_EQ(e.field, c.field) << c.body;
    EXPECT_TRUE(says(e, c.text)) << c.body << " -> " << e.message;
  }
}

TEST(ParseCohere, TypeNamesAndPrecisions) {
  Precision p{};
  EXPECT_FALSE(cohere_precision(CohereType::kFloat, &p));
  EXPECT_FALSE(cohere_precision(CohereType::kBase64, &p));
  ASSERT_TRUE(cohere_precision(CohereType::kBinary, &p));
  EXPECT_EQ(p, Precision::kBinary);
  EXPECT_STREQ(cohere_type_name(CohereType::kUint8), "uint8");
}

}  // namespace
}  // namespace tessera::server
