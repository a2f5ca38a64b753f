#include "server/inputs.h"

#include "pipeline/prompts.h"
#include "pipeline/text_embedding.h"
#include "server/request_budget.h"

namespace tessera::server {

namespace {

pipeline::TextOptions options_for(const Framing& framing, const std::string& field,
                                  const char* truncate_hint) {
  pipeline::TextOptions options;
  options.truncate = framing.truncate;
  options.truncate_left = framing.truncate_left;
  options.prompt = framing.prompt;
  options.max_tokens = framing.max_tokens;
  options.field = field;
  options.truncate_hint = truncate_hint;
  options.limit = current_request_budget();
  return options;
}

// A framing error names `field`, indexed when the request held several inputs;
// a request its budget stopped gets the budget's answer.
ApiError framing_error(const Status& s, const std::string& field, size_t inputs, size_t failed) {
  if (const RequestBudget* budget = current_request_budget(); budget && budget->stopped()) {
    return budget->refusal();
  }
  return validation_error(inputs == 1 ? field : field + "[" + std::to_string(failed) + "]",
                          s.message());
}

}  // namespace

ApiError resolve_prompt_text(const pipeline::EmbeddingModel& model,
                             const std::optional<std::string>& name, const std::string& field,
                             std::string* text) {
  pipeline::PromptChoice choice;
  choice.name = name;
  const Status s = pipeline::resolve_prompt(model.prompts(), choice, field, text);
  return s.ok() ? no_error() : validation_error(field, s.message());
}

ApiError prepare_inputs(const pipeline::EmbeddingModel& model,
                        const std::vector<std::string>& texts, const Framing& framing,
                        const std::string& field, const char* truncate_hint, PreparedInputs* out) {
  size_t failed = 0;
  const Status s = pipeline::frame_texts(model, texts, options_for(framing, field, truncate_hint),
                                         &out->sequences, &out->tokens, &failed);
  return s.ok() ? no_error() : framing_error(s, field, texts.size(), failed);
}

ApiError prepare_id_inputs(const pipeline::EmbeddingModel& model,
                           const std::vector<std::vector<int32_t>>& ids, bool one_list,
                           int64_t vocab_size, const Framing& framing, const std::string& field,
                           const char* truncate_hint, PreparedInputs* out) {
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = 0; j < ids[i].size(); ++j) {
      if (ids[i][j] < vocab_size) continue;
      const std::string list = one_list ? field : field + "[" + std::to_string(i) + "]";
      const std::string at = list + "[" + std::to_string(j) + "]";
      return validation_error(at, at + " = " + std::to_string(ids[i][j]) +
                                      " is not a token id of this model (its vocabulary has " +
                                      std::to_string(vocab_size) + " ids: 0.." +
                                      std::to_string(vocab_size - 1) + ")");
    }
  }
  size_t failed = 0;
  const Status s = pipeline::frame_token_ids(model, ids, options_for(framing, field, truncate_hint),
                                             &out->sequences, &out->tokens, &failed);
  return s.ok() ? no_error() : framing_error(s, field, ids.size(), failed);
}

ApiError prepare_score_inputs(const pipeline::EmbeddingModel& model,
                              const std::vector<pipeline::ScoreInput>& inputs, bool truncate,
                              const std::string& field, const char* truncate_hint,
                              PreparedInputs* out) {
  size_t failed = 0;
  const Status s = pipeline::frame_score_inputs(
      model, inputs, options_for(Framing{truncate}, field, truncate_hint), &out->sequences,
      &out->type_ids, &out->tokens, &failed);
  return s.ok() ? no_error() : framing_error(s, field, inputs.size(), failed);
}

ApiError tokenize_text(const pipeline::EmbeddingModel& model, const std::string& prompted_text,
                       bool add_special_tokens, const std::string& field,
                       std::vector<model::TokenSpan>* out) {
  out->clear();
  const model::SequenceFrame& frame = model.frame();
  if (add_special_tokens) {
    for (int32_t id : frame.prefix) out->push_back({id, -1, -1});
  }
  std::vector<model::TokenSpan> tokens;
  RequestBudget* budget = current_request_budget();
  Status s = model.tokenize(prompted_text, &tokens, budget);
  if (!s.ok() && budget != nullptr && budget->stopped()) return budget->refusal();
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
