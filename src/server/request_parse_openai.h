// Parsing and validation of the bodies of the routes that follow other
// vendors' embedding APIs: OpenAI's POST /v1/embeddings and Cohere's POST
// /v2/embed. Pure functions over the body text, as request_parse.h; errors
// are 422 / 413 here, and the routes answer them as those APIs do (400).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_error.h"
#include "server/request_parse.h"
#include "tessera/quantize.h"

namespace tessera::server {

// OpenAI's per-request maximum of `input` entries (TEI's routes keep
// --max-client-batch-size).
inline constexpr size_t kOpenAIMaxInputs = 2048;
// Cohere's per-call maximum of texts.
inline constexpr size_t kCohereMaxTexts = 96;

// OpenAI's `input`: texts, or token-id lists (the content of a sequence; the
// route checks the ids against the vocabulary and frames them).
struct EmbeddingInputs {
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> token_ids;
  bool by_ids = false;       // token_ids holds the inputs, texts is empty
  bool one_id_list = false;  // input was one flat list: errors name input[j]
  size_t size() const { return by_ids ? token_ids.size() : texts.size(); }
};

// POST /v1/embeddings (OpenAI): {"input": str | [str] | [int] | [[int]],
// "model": str, "encoding_format": "float" | "base64", "dimensions": int,
// "user": str}. At most kOpenAIMaxInputs inputs (413 past it).
struct OpenAIRequest {
  EmbeddingInputs input;
  std::optional<std::string> model;
  bool base64 = false;
  std::optional<int64_t> dimensions;
  bool truncate = false;  // from ParseLimits::auto_truncate
};
ApiError parse_openai_request(std::string_view body, const ParseLimits& limits, OpenAIRequest* out);

// Cohere's embedding_types. "float" and "base64" are the f32 rows (as JSON
// numbers, or base64 of their little-endian bytes); the others are
// include/tessera/quantize.h's precisions of the same name.
enum class CohereType { kFloat, kInt8, kUint8, kBinary, kUbinary, kBase64 };
const char* cohere_type_name(CohereType t);
// The quantized precision of t; false for float and base64.
bool cohere_precision(CohereType t, Precision* p);

// POST /v2/embed (Cohere v2): {"model": str, "texts": [str] (or "inputs":
// [{"content": [{"type": "text", "text": str}]}]), "input_type":
// "search_query" | "search_document" | "classification" | "clustering",
// "embedding_types": [type] = ["float"], "truncate": "NONE" | "START" |
// "END" = "END", "output_dimension": int, "max_tokens": int, "priority":
// int}. At most kCohereMaxTexts texts; "images" and image content are refused.
struct CohereEmbedRequest {
  std::vector<std::string> texts;
  std::string field = "texts";  // the list the texts came from: "texts" or "inputs"
  std::optional<std::string> model;
  std::optional<std::string> input_type;
  // Each type asked for once, in the request's order, with its index there
  // (for messages naming embedding_types[i]).
  std::vector<CohereType> types;
  std::vector<size_t> type_index;
  bool truncate = true;        // "END" and "START"; "NONE": refuse a long input
  bool truncate_left = false;  // "START"
  std::optional<int64_t> output_dimension;
  std::optional<int64_t> max_tokens;
};
ApiError parse_cohere_embed_request(std::string_view body, CohereEmbedRequest* out);

}  // namespace tessera::server
