#include "server/inputs.h"

#include <limits>

#include "pipeline/text_embedding.h"

namespace tessera::server {

namespace {

pipeline::TextOptions options_for(bool truncate, const std::string& field,
                                  const char* truncate_hint) {
  pipeline::TextOptions options;
  options.truncate = truncate;
  options.field = field;
  options.truncate_hint = truncate_hint;
  return options;
}

// A framing error names `field`, indexed when the request held several inputs.
ApiError framing_error(const Status& s, const std::string& field, size_t inputs, size_t failed) {
  return validation_error(inputs == 1 ? field : field + "[" + std::to_string(failed) + "]",
                          s.message());
}

}  // namespace

ApiError prepare_inputs(const pipeline::EmbeddingModel& model,
                        const std::vector<std::string>& texts, bool truncate,
                        const std::string& field, const char* truncate_hint, PreparedInputs* out) {
  size_t failed = 0;
  const Status s = pipeline::frame_texts(model, texts, options_for(truncate, field, truncate_hint),
                                         &out->sequences, &out->tokens, &failed);
  return s.ok() ? no_error() : framing_error(s, field, texts.size(), failed);
}

ApiError prepare_score_inputs(const pipeline::EmbeddingModel& model,
                              const std::vector<pipeline::ScoreInput>& inputs, bool truncate,
                              const std::string& field, const char* truncate_hint,
                              PreparedInputs* out) {
  size_t failed = 0;
  const Status s =
      pipeline::frame_score_inputs(model, inputs, options_for(truncate, field, truncate_hint),
                                   &out->sequences, &out->type_ids, &out->tokens, &failed);
  return s.ok() ? no_error() : framing_error(s, field, inputs.size(), failed);
}

ApiError tokenize_text(const pipeline::EmbeddingModel& model, const std::string& text,
                       bool add_special_tokens, const std::string& field,
                       std::vector<model::TokenSpan>* out) {
  out->clear();
  const model::SequenceFrame& frame = model.frame();
  if (add_special_tokens) {
    for (int32_t id : frame.prefix) out->push_back({id, -1, -1});
  }
  std::vector<model::TokenSpan> tokens;
  Status s = model.tokenize(text, &tokens);
  if (!s.ok()) {
    return validation_error(field, field + ": the tokenizer refused this text: " + s.message());
  }
  out->insert(out->end(), tokens.begin(), tokens.end());
  if (add_special_tokens) {
    for (int32_t id : frame.suffix) out->push_back({id, -1, -1});
  }
  return no_error();
}

}  // namespace tessera::server
