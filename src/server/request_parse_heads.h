// Parsing and validation of the bodies of TEI's routes for models with a
// head: POST /rerank, /predict (cross-encoders, classifiers) and
// /embed_sparse (SPLADE). Pure functions over the body text, as
// request_parse.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/text_scoring.h"
#include "server/api_error.h"
#include "server/request_parse.h"

namespace tessera::server {

// POST /rerank: {"query": str, "texts": [str], "truncate": bool =
// auto_truncate, "truncation_direction": "Right", "raw_scores": false,
// "return_text": false}. No texts: 400 (TEI's "Empty"); more than
// max_client_batch_size: 413.
struct RerankRequest {
  std::string query;
  std::vector<std::string> texts;
  bool truncate = false;
  bool raw_scores = false;
  bool return_text = false;
};
ApiError parse_rerank_request(std::string_view body, const ParseLimits& limits,
                              RerankRequest* out);

// POST /predict: {"inputs": str | [str] | [str, str] | [[str] | [str, str], ...],
// "truncate", "truncation_direction", "raw_scores": false}. As TEI: a list
// whose first element is a string is one input (a text, or a pair of two);
// a list of lists is a batch (answered as a list of answers).
struct PredictRequest {
  std::vector<pipeline::ScoreInput> inputs;
  bool batch = false;
  bool truncate = false;
  bool raw_scores = false;
};
ApiError parse_predict_request(std::string_view body, const ParseLimits& limits,
                               PredictRequest* out);

// POST /embed_sparse: {"inputs": str | [str], "truncate", "truncation_direction"}.
struct EmbedSparseRequest {
  std::vector<std::string> inputs;
  bool truncate = false;
};
ApiError parse_embed_sparse_request(std::string_view body, const ParseLimits& limits,
                                    EmbedSparseRequest* out);

}  // namespace tessera::server
