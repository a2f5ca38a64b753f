#include "server/inputs.h"

#include <limits>

#include "pipeline/text_embedding.h"

namespace tessera::server {

ApiError prepare_inputs(const pipeline::EmbeddingModel& model,
                        const std::vector<std::string>& texts, bool truncate,
                        const std::string& field, const char* truncate_hint,
                        PreparedInputs* out) {
  pipeline::TextOptions options;
  options.truncate = truncate;
  options.field = field;
  options.truncate_hint = truncate_hint;
  size_t failed = 0;
  const Status s =
      pipeline::frame_texts(model, texts, options, &out->sequences, &out->tokens, &failed);
  if (s.ok()) return no_error();
  return validation_error(texts.size() == 1 ? field : field + "[" + std::to_string(failed) + "]",
                          s.message());
}

ApiError prepare_score_inputs(const pipeline::EmbeddingModel& model,
                              const std::vector<pipeline::ScoreInput>& inputs, bool truncate,
                              const std::string& field, const char* truncate_hint,
                              PreparedInputs* out) {
  pipeline::TextOptions options;
  options.truncate = truncate;
  options.field = field;
  options.truncate_hint = truncate_hint;
  size_t failed = 0;
  const Status s = pipeline::frame_score_inputs(model, inputs, options, &out->sequences,
                                                &out->type_ids, &out->tokens, &failed);
  if (s.ok()) return no_error();
  return validation_error(inputs.size() == 1 ? field : field + "[" + std::to_string(failed) + "]",
                          s.message());
}

ApiError tokenize_text(const pipeline::EmbeddingModel& model, const std::string& text,
                       bool add_special_tokens, const std::string& field,
                       std::vector<model::TokenSpan>* out) {
  out->clear();
  if (add_special_tokens) out->push_back({model.cls_id(), -1, -1});
  std::vector<model::TokenSpan> tokens;
  Status s = model.tokenize(text, &tokens);
  if (!s.ok()) {
    return validation_error(field, field + ": the tokenizer refused this text: " + s.message());
  }
  out->insert(out->end(), tokens.begin(), tokens.end());
  if (add_special_tokens) out->push_back({model.sep_id(), -1, -1});
  return no_error();
}

}  // namespace tessera::server
