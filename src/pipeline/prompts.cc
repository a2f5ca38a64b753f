#include "pipeline/prompts.h"

namespace tessera::pipeline {

std::string prompt_names(const model::Prompts& prompts) {
  std::string names;
  for (const auto& [name, text] : prompts.by_name) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

Status resolve_prompt(const model::Prompts& prompts, const PromptChoice& choice,
                      const std::string& field, std::string* text) {
  text->clear();
  if (choice.text) {
    *text = *choice.text;
  } else if (choice.name) {
    auto it = prompts.by_name.find(*choice.name);
    if (it == prompts.by_name.end()) {
      return invalid_argument(field + " = \"" + *choice.name +
                              "\": the model defines no such prompt (its prompts: " +
                              prompt_names(prompts) + "; config_sentence_transformers.json)");
    }
    *text = it->second;
  } else if (!prompts.default_name.empty()) {
    *text = prompts.by_name.at(prompts.default_name);
  }
  if (!text->empty() && !prompts.pooled) {
    return unsupported(field +
                       ": this model pools without its prompt's tokens (1_Pooling "
                       "include_prompt: false), which tessera does not support; embed without a "
                       "prompt");
  }
  return Status::Ok();
}

Status prompt_tokens(const EmbeddingModel& model, const std::string& prompt,
                     std::vector<model::TokenSpan>* out) {
  out->clear();
  if (prompt.empty()) return Status::Ok();
  const Status s = model.tokenize(prompt, out);
  if (!s.ok()) return invalid_argument("the prompt: the tokenizer refused it: " + s.message());
  return Status::Ok();
}

}  // namespace tessera::pipeline
