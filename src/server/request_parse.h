// Parsing and validation of the JSON bodies of the embedding routes. Pure
// functions over the body text: no HTTP, no model, so every rule is unit-tested.
#pragma once

#include <cstddef>
#include <cstdint>
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

// TEI's text options, shared by its embedding routes: "truncate": bool =
// auto_truncate, "truncation_direction": "Right" | "Left" (or lower case, as
// TEI's aliases), "prompt_name": str (a key of the model's prompts).
struct TextRequestOptions {
  bool truncate = false;
  bool truncate_left = false;              // "Left": cut the start of a long input
  std::optional<std::string> prompt_name;  // absent: the model's default prompt, if any
};

// POST /embed (TEI): {"inputs": str | [str], "normalize": bool = true,
// "dimensions": int (TEI 1.9: keep the first N values, re-normalise), and
// the text options}.
struct EmbedRequest {
  std::vector<std::string> inputs;
  bool normalize = true;
  TextRequestOptions text;
  std::optional<int64_t> dimensions;
};
ApiError parse_embed_request(std::string_view body, const ParseLimits& limits, EmbedRequest* out);

// POST /embed_all (TEI): {"inputs": str | [str], and the text options}.
struct EmbedAllRequest {
  std::vector<std::string> inputs;
  TextRequestOptions text;
};
ApiError parse_embed_all_request(std::string_view body, const ParseLimits& limits,
                                 EmbedAllRequest* out);

// POST /similarity (TEI): {"inputs": {"source_sentence": str, "sentences":
// [str]}, "parameters": {the text options}}.
// No sentences: 400 (TEI's "Empty"); more than max_client_batch_size texts,
// the source included: 413.
struct SimilarityRequest {
  std::string source;
  std::vector<std::string> sentences;
  TextRequestOptions text;
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

// POST /tokenize (TEI): {"inputs": str | [str], "add_special_tokens": bool =
// true, "prompt_name": str}.
struct TokenizeRequest {
  std::vector<std::string> inputs;
  bool add_special_tokens = true;
  std::optional<std::string> prompt_name;
};
ApiError parse_tokenize_request(std::string_view body, const ParseLimits& limits,
                                TokenizeRequest* out);

// POST /embed_documents: {"documents": [str | {"id": str | int, "text": str}],
// "doc_embedding": bool = false, "prompt_name": str, "dimensions": int}. A
// plain string's id is its index.
struct DocumentsRequest {
  std::vector<std::string> ids;  // each a JSON value's text: "\"a.txt\"" or "3"
  std::vector<std::string> texts;
  bool doc_embedding = false;
  std::optional<std::string> prompt_name;
  std::optional<int64_t> dimensions;
};
ApiError parse_documents_request(std::string_view body, const ParseLimits& limits,
                                 DocumentsRequest* out);

}  // namespace tessera::server
