// Texts -> token id sequences ready for the batcher, framed by the pipeline
// (pipeline/text_embedding.h) as `tessera embed` frames a one-chunk
// document: truncated to the model's max_length when asked, else refused
// with a 422 naming the input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "pipeline/embedding_model.h"
#include "pipeline/text_scoring.h"
#include "server/api_error.h"

namespace tessera::server {

struct PreparedInputs {
  std::vector<std::vector<int32_t>> sequences;
  std::vector<std::vector<int32_t>> type_ids;  // cross-encoder inputs only; else empty
  int64_t tokens = 0;  // all sequences, special tokens included (OpenAI usage)
};

// `field` names the request field ("inputs", "input") in error messages;
// `truncate_hint` says how the client gets over-long inputs cut.
ApiError prepare_inputs(const pipeline::EmbeddingModel& model, const std::vector<std::string>& texts,
                        bool truncate, const std::string& field, const char* truncate_hint,
                        PreparedInputs* out);

// Texts and pairs of a sequence-classification model, framed by the
// pipeline (pipeline/text_scoring.h) with their type ids; errors as above,
// input i named field[i].
ApiError prepare_score_inputs(const pipeline::EmbeddingModel& model,
                              const std::vector<pipeline::ScoreInput>& inputs, bool truncate,
                              const std::string& field, const char* truncate_hint,
                              PreparedInputs* out);

// One text's tokens with or without the model's specials (model.frame(); for
// /tokenize): offsets of
// special tokens are -1. Over-long texts are not truncated.
ApiError tokenize_text(const pipeline::EmbeddingModel& model, const std::string& text,
                       bool add_special_tokens, const std::string& field,
                       std::vector<model::TokenSpan>* out);

}  // namespace tessera::server
