// Parsing and validation of the JSON bodies of the embedding routes. Pure
// functions over the body text: no HTTP, no model, so every rule is unit-tested.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_error.h"

namespace tessera::server {

struct ParseLimits {
  size_t max_client_batch_size = 32;  // more texts in one request: 413
  bool auto_truncate = false;         // default of `truncate` when the body has none
};

// POST /embed (TEI): {"inputs": str | [str], "normalize": bool = true,
// "truncate": bool = auto_truncate, "truncation_direction": "Right"}.
struct EmbedRequest {
  std::vector<std::string> inputs;
  bool normalize = true;
  bool truncate = false;
};
ApiError parse_embed_request(std::string_view body, const ParseLimits& limits, EmbedRequest* out);

// POST /embed_all (TEI): {"inputs": str | [str], "truncate": bool =
// auto_truncate, "truncation_direction": "Right"}.
struct EmbedAllRequest {
  std::vector<std::string> inputs;
  bool truncate = false;
};
ApiError parse_embed_all_request(std::string_view body, const ParseLimits& limits,
                                 EmbedAllRequest* out);

// POST /similarity (TEI): {"inputs": {"source_sentence": str, "sentences":
// [str]}, "parameters": {"truncate", "truncation_direction", "prompt_name"}}.
// No sentences: 400 (TEI's "Empty"); more than max_client_batch_size texts,
// the source included: 413.
struct SimilarityRequest {
  std::string source;
  std::vector<std::string> sentences;
  bool truncate = false;
};
ApiError parse_similarity_request(std::string_view body, const ParseLimits& limits,
                                  SimilarityRequest* out);

// POST /decode (TEI): {"ids": [int] | [[int]], "skip_special_tokens": bool =
// true}. Ids are integers in [0, 2^32) (TEI's u32); whether the tokenizer
// knows them is the route's question.
struct DecodeRequest {
  std::vector<std::vector<int64_t>> ids;
  bool batch = false;  // [[int]]: errors name ids[i][j], else ids[j]
  bool skip_special_tokens = true;
};
ApiError parse_decode_request(std::string_view body, const ParseLimits& limits, DecodeRequest* out);

// POST /v1/embeddings (OpenAI): {"input": str | [str], "model": str,
// "encoding_format": "float" | "base64", "dimensions": int, "user": str}.
struct OpenAIRequest {
  std::vector<std::string> inputs;
  std::string model;
  bool base64 = false;
  std::optional<int64_t> dimensions;
  bool truncate = false;  // from ParseLimits::auto_truncate
};
ApiError parse_openai_request(std::string_view body, const ParseLimits& limits,
                              OpenAIRequest* out);

// POST /tokenize (TEI): {"inputs": str | [str], "add_special_tokens": bool = true}.
struct TokenizeRequest {
  std::vector<std::string> inputs;
  bool add_special_tokens = true;
};
ApiError parse_tokenize_request(std::string_view body, const ParseLimits& limits,
                                TokenizeRequest* out);

// POST /embed_documents: {"documents": [str | {"id": str | int, "text": str}],
// "doc_embedding": bool = false}. A plain string's id is its index.
struct DocumentsRequest {
  std::vector<std::string> ids;  // each a JSON value's text: "\"a.txt\"" or "3"
  std::vector<std::string> texts;
  bool doc_embedding = false;
};
ApiError parse_documents_request(std::string_view body, const ParseLimits& limits,
                                 DocumentsRequest* out);

}  // namespace tessera::server
