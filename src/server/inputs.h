// Texts -> token id sequences ready for the batcher, framed by the pipeline
// (pipeline/text_embedding.h) as `tessera embed` frames a one-chunk
// document: the prompt first, cut to the model's max_length (from the end,
// or from the start for TEI's truncation_direction "Left") when asked, else
// refused with a 422 naming the input.
#pragma once

#include <cstdint>
#include <optional>
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

// How a request's inputs are framed.
struct Framing {
  bool truncate = false;
  bool truncate_left = false;  // cut the start of a long input instead of its end
  std::string prompt;          // prepended to every input (resolve_prompt_text)
  int max_tokens = 0;          // per input, the specials included; 0: the model's max_length
};

// The prompt of a request's prompt_name (pipeline/prompts.h): the named one,
// or with no name the model's default_prompt_name's (none: ""). An unknown
// name is a 422 naming `field` and the model's prompts.
ApiError resolve_prompt_text(const pipeline::EmbeddingModel& model,
                             const std::optional<std::string>& name, const std::string& field,
                             std::string* text);

// `field` names the request field ("inputs", "input") in error messages;
// `truncate_hint` says how the client gets over-long inputs cut.
ApiError prepare_inputs(const pipeline::EmbeddingModel& model,
                        const std::vector<std::string>& texts, const Framing& framing,
                        const std::string& field, const char* truncate_hint, PreparedInputs* out);
inline ApiError prepare_inputs(const pipeline::EmbeddingModel& model,
                               const std::vector<std::string>& texts, bool truncate,
                               const std::string& field, const char* truncate_hint,
                               PreparedInputs* out) {
  return prepare_inputs(model, texts, Framing{truncate}, field, truncate_hint, out);
}

// Token-id inputs (OpenAI's input: [int] | [[int]]): each id must be below
// `vocab_size` (else 422 naming field[i][j], or field[j] for `one_list`);
// each list is then framed as a text's tokens are (pipeline::frame_token_ids).
ApiError prepare_id_inputs(const pipeline::EmbeddingModel& model,
                           const std::vector<std::vector<int32_t>>& ids, bool one_list,
                           int64_t vocab_size, const Framing& framing, const std::string& field,
                           const char* truncate_hint, PreparedInputs* out);

// Texts and pairs of a sequence-classification model, framed by the
// pipeline (pipeline/text_scoring.h) with their type ids; errors as above,
// input i named field[i].
ApiError prepare_score_inputs(const pipeline::EmbeddingModel& model,
                              const std::vector<pipeline::ScoreInput>& inputs, bool truncate,
                              const std::string& field, const char* truncate_hint,
                              PreparedInputs* out);

// One text's tokens with or without the model's specials (model.frame(); for
// /tokenize), the prompt's tokens first as TEI: their offsets are byte
// offsets into prompt + text, and those of special tokens are -1. Over-long
// texts are not truncated.
ApiError tokenize_text(const pipeline::EmbeddingModel& model, const std::string& prompted_text,
                       bool add_special_tokens, const std::string& field,
                       std::vector<model::TokenSpan>* out);

}  // namespace tessera::server
